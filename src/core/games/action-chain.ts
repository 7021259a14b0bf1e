/**
 * A hand's action chain (docs/games.md, "The action chain"): each bid, card or other action is a
 * document signed by its seat, numbered in the hand (n = 1, 2, …) and naming the digest of the
 * previous action, so the chain fixes the order and nobody can drop, insert or reorder an action
 * without breaking a signature. `replayChain` checks a chain link by link and applies it to a game
 * engine, returning the final state or the first broken rule with its reason code. Pure.
 */
import { canonicalJson } from '../canonical.js'
import { isHex, sha256Hex } from '../bytes.js'
import type { Signer } from '../identity.js'
import { signDocument, verifyDocument, type Signed } from '../signed.js'
import type { GameEngine, GameSetup, StageRequest } from './types.js'

/** `type` of an action document; its signature's domain tag is `fairdeal/v1/game-action`. */
export const ACTION_TYPE = 'game-action'
/** `prev` of the first action of a hand. */
export const CHAIN_START = '0'.repeat(64)

export interface ActionBody {
  /** The hand's id (as the receipt names it). */
  hand: string
  /** Position in the hand's chain, from 1. */
  n: number
  /** Digest of the previous action document ({@link actionDigest}), or {@link CHAIN_START} for n = 1. */
  prev: string
  seat: number
  action: unknown
  /**
   * A card played at a blind-v1 table: the card's opening (docs/dealer-blind.md §15), which shows
   * that the card came from the player's hand. Absent everywhere else.
   */
  opening?: unknown
}

export type ActionDoc = Signed<ActionBody>

/** SHA-256 (hex) of the document's canonical JSON: what the next action names as `prev`. */
export function actionDigest(doc: ActionDoc): string {
  return sha256Hex(canonicalJson(doc))
}

/** Signs the next action of a chain (`last` the previous document, or null for the first). */
export function signAction(signer: Signer, hand: string, last: ActionDoc | null, seat: number, action: unknown, opening?: unknown): ActionDoc {
  const n = last === null ? 1 : last.body.n + 1
  const prev = last === null ? CHAIN_START : actionDigest(last)
  return signDocument(ACTION_TYPE, { hand, n, prev, seat, action, ...(opening === undefined ? {} : { opening }) }, signer)
}

/** The reason codes of a broken chain (docs/games.md, "The action chain"). */
export type ChainCode =
  | 'chain-bad-document' | 'chain-signature' | 'chain-wrong-hand' | 'chain-number' | 'chain-prev'
  | 'chain-wrong-signer' | 'chain-stage-missing' | 'chain-stage-refused' | 'chain-illegal-action' | 'chain-not-over' | 'chain-draw'
  | 'chain-opening'

export type ChainResult<S> =
  | { ok: true, state: S, head: string | null }
  | { ok: false, index: number, code: ChainCode, rule?: string, reason: string }

export interface ChainContext {
  hand: string
  /** The peer id that signs for each seat. */
  seatSigners: readonly string[]
  /** The cards of a stage the hand asks for (the deal's deliveries), or null when they are not known. */
  stage: (request: StageRequest) => Record<string, string[]> | null
  /** Require the hand to be over at the end of the chain (a receipt's chain). */
  complete?: boolean
  /** The peer id that signs the dealer's stage actions (seat DEALER_SEAT): draws, rolls, the key. */
  dealer?: string
  /** The signature check (default verifyDocument; a node passes its faster native one). */
  verify?: (doc: ActionDoc) => boolean
  /**
   * The check of a dealer's stage action against what the caller can compute (a draw from the
   * revealed key): null when the cards are right, else why not. Absent: not checked (a seat that
   * does not know the key yet).
   */
  checkStage?: (request: StageRequest, cards: Record<string, string[]>, state: unknown) => string | null
  /**
   * A blind-v1 table's rule for a seat's action (docs/dealer-blind.md §15): a card played carries
   * its opening, anything else none, and the opening holds given the actions before it. Null when
   * it does, else its code (a card-opening code) and why. Absent: an action carrying an opening is
   * refused (only a blind table opens cards).
   */
  checkOpening?: (body: ActionBody, earlier: readonly ActionDoc[]) => { rule: string, reason: string } | null
}

/** The `seat` of the dealer's own actions: the stages a game draws during the hand (docs/games.md "Draws on the chain"). */
export const DEALER_SEAT = -1

/** A stage dealt as an action of the chain, signed by the dealer: `inputs` are the engine's request's, exactly. */
export interface StageAction { type: 'stage', stage: string, inputs: Record<string, number> | null, cards: Record<string, string[]> }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function wellFormed(doc: unknown): doc is ActionDoc {
  if (!isObject(doc) || doc.type !== ACTION_TYPE || typeof doc.signer !== 'string' || typeof doc.sig !== 'string') return false
  const b = doc.body
  const keys = Object.keys(b ?? {}).sort().join()
  if (!isObject(b) || (keys !== 'action,hand,n,prev,seat' && keys !== 'action,hand,n,opening,prev,seat')) return false
  return typeof b.hand === 'string' && Number.isSafeInteger(b.n) && isHex(b.prev, 32) && Number.isInteger(b.seat) && isObject(b.action) && (b.opening === undefined || isObject(b.opening))
}

/**
 * The link rules of action `index` (from 0) of a chain whose previous document's digest is `prev`
 * (CHAIN_START for the first): well-formed, signature, hand, number, prev, signer, in that order.
 * Null when the link holds; the engine's rules are checked apart (replayChain, PlayHand).
 */
export function checkLink (doc: unknown, index: number, prev: string, ctx: Pick<ChainContext, 'hand' | 'seatSigners' | 'dealer'>, verify: (doc: ActionDoc) => boolean = verifyDocument): { code: ChainCode, reason: string } | null {
  if (!wellFormed(doc)) return { code: 'chain-bad-document', reason: 'not an action document' }
  if (!verify(doc)) return { code: 'chain-signature', reason: 'the signature does not verify' }
  const b = doc.body
  if (b.hand !== ctx.hand) return { code: 'chain-wrong-hand', reason: `action of hand ${b.hand}` }
  if (b.n !== index + 1) return { code: 'chain-number', reason: `numbered ${b.n}, expected ${index + 1}` }
  if (b.prev !== prev) return { code: 'chain-prev', reason: 'prev is not the digest of the previous action' }
  const signer = b.seat === DEALER_SEAT ? ctx.dealer : ctx.seatSigners[b.seat]
  if (signer === undefined || signer !== doc.signer) return { code: 'chain-wrong-signer', reason: b.seat === DEALER_SEAT ? 'a stage action not signed by the dealer' : `not signed by seat ${b.seat}'s key` }
  return null
}

/**
 * Replays `chain` from `setup`: each document, in order, must be a well-formed action document
 * (`chain-bad-document`) whose signature verifies (`chain-signature`), of this hand
 * (`chain-wrong-hand`), numbered i + 1 (`chain-number`), naming the previous document's digest
 * (`chain-prev`), signed by the key of the seat it acts for (`chain-wrong-signer`), and accepted by
 * the engine (`chain-illegal-action`, with the engine's refusal code as `rule`). Stages the hand
 * asks for are delivered from `ctx.stage` before the next action (`chain-stage-missing`,
 * `chain-stage-refused`). With `ctx.complete`, the hand must be over at the end (`chain-not-over`).
 */
export function replayChain<S, A>(engine: GameEngine<S, A>, setup: GameSetup, chain: readonly unknown[], ctx: ChainContext): ChainResult<S> {
  let state = engine.start(setup)
  let prev = CHAIN_START
  const fail = (index: number, code: ChainCode, reason: string, rule?: string): ChainResult<S> => ({ ok: false, index, code, reason, ...(rule === undefined ? {} : { rule }) })
  // The stages the deal supplies (card games); a stage it does not (a draw) must be the next action.
  const settle = (index: number): ChainResult<S> | null => {
    for (let request = engine.pendingStage(state); request !== null; request = engine.pendingStage(state)) {
      const cards = ctx.stage(request)
      if (cards === null) return null
      const r = engine.deliver(state, request.stage, cards)
      if (!r.ok) return fail(index, 'chain-stage-refused', `stage ${request.stage}: ${r.message}`, r.code)
      state = r.state
    }
    return null
  }
  for (let i = 0; i < chain.length; i++) {
    const doc = chain[i]
    const stuck = settle(i)
    if (stuck !== null) return stuck
    const broken = checkLink(doc, i, prev, ctx, ctx.verify)
    if (broken !== null) return fail(i, broken.code, broken.reason)
    const r = applyAction(engine, state, (doc as ActionDoc).body, ctx, chain.slice(0, i) as ActionDoc[])
    if (!r.ok) return fail(i, r.code, r.reason, r.rule)
    state = r.state
    prev = actionDigest(doc as ActionDoc)
  }
  const stuck = settle(chain.length)
  if (stuck !== null) return stuck
  const waiting = engine.pendingStage(state)
  if (ctx.complete === true && waiting !== null) return fail(chain.length, 'chain-stage-missing', `the hand waits for stage ${waiting.stage}`)
  if (ctx.complete === true && !engine.isOver(state)) return fail(chain.length, 'chain-not-over', 'the chain ends before the hand does')
  return { ok: true, state, head: chain.length === 0 ? null : prev }
}

/**
 * One action whose link holds, applied: a seat's action to the engine (`chain-illegal-action`, or
 * `chain-stage-missing` while the hand waits for a stage), or the dealer's stage action
 * ({@link StageAction}, seat {@link DEALER_SEAT}) to the stage the hand asks for: the same stage
 * and inputs (`chain-draw`, rule `draw-skipped`, `draw-repeated` or `draw-other`), the cards the
 * caller's `checkStage` computes (`chain-draw`, rule `draw-mismatch`), accepted by the engine
 * (`chain-stage-refused`).
 */
export function applyAction<S, A>(engine: GameEngine<S, A>, state: S, body: ActionBody, ctx: Pick<ChainContext, 'checkStage' | 'checkOpening'>, earlier: readonly ActionDoc[] = []): { ok: true, state: S } | { ok: false, code: ChainCode, rule?: string, reason: string } {
  const request = engine.pendingStage(state)
  if (body.seat !== DEALER_SEAT) {
    if (request !== null) return { ok: false, code: 'chain-stage-missing', reason: `the hand waits for stage ${request.stage}` }
    if (ctx.checkOpening === undefined && body.opening !== undefined) return { ok: false, code: 'chain-opening', rule: 'card-opening-form', reason: 'an opening on an action of a table that opens no card (only blind-v1 tables do)' }
    const opened = ctx.checkOpening?.(body, earlier) ?? null
    if (opened !== null) return { ok: false, code: 'chain-opening', rule: opened.rule, reason: opened.reason }
    const r = engine.apply(state, body.seat, body.action as A)
    return r.ok ? r : { ok: false, code: 'chain-illegal-action', rule: r.code, reason: r.message }
  }
  const a = body.action as Partial<StageAction>
  if (body.opening !== undefined) return { ok: false, code: 'chain-opening', rule: 'card-opening-form', reason: 'the dealer\'s stage action carries an opening' }
  if (a.type !== 'stage' || typeof a.stage !== 'string' || !isObject(a.cards)) return { ok: false, code: 'chain-illegal-action', rule: 'bad-action', reason: 'the dealer\'s actions are stage actions' }
  if (request === null) return { ok: false, code: 'chain-illegal-action', rule: 'stage-not-asked', reason: `stage ${a.stage} comes when the hand asks for none` }
  const asked = canonicalJson(request.inputs ?? null)
  if (a.stage !== request.stage || canonicalJson(a.inputs ?? null) !== asked) {
    const n = request.inputs?.n
    const got = (a.inputs as Record<string, unknown> | null | undefined)?.n
    const rule = a.stage === request.stage && typeof n === 'number' && typeof got === 'number' && got !== n ? (got < n ? 'draw-repeated' : 'draw-skipped') : 'draw-other'
    return { ok: false, code: 'chain-draw', rule, reason: `the hand asks for ${request.stage} ${asked}, not ${String(a.stage)} ${canonicalJson(a.inputs ?? null)}` }
  }
  const wrong = ctx.checkStage?.(request, a.cards as Record<string, string[]>, state) ?? null
  if (wrong !== null) return { ok: false, code: 'chain-draw', rule: 'draw-mismatch', reason: wrong }
  const r = engine.deliver(state, request.stage, a.cards as Record<string, string[]>)
  return r.ok ? r : { ok: false, code: 'chain-stage-refused', rule: r.code, reason: `stage ${request.stage}: ${r.message}` }
}
