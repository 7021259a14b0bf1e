/**
 * One hand in play, action by action (docs/games.md, "Playing a dealt hand"): the engine's state,
 * the action chain so far, and the checks every node runs on the next action. A node that knows
 * the deal (the dealer's, the verifier) runs it on the whole deal; a seat runs it on its view
 * (SeatView): the same chain rules, the engine's rules as far as the public state allows. Pure.
 */
import { actionDigest, applyAction, checkLink, CHAIN_START, DEALER_SEAT, signAction, type ActionDoc, type ChainCode, type ChainContext, type StageAction } from './action-chain.js'
import { SeatView } from './play-view.js'
import type { Signer } from '../identity.js'
import type { GameEngine, GameRefusal, GameScore, GameSetup, StageRequest } from './types.js'

/**
 * What happened to a hand in play, in order: each stage delivered (with the cards as passed in)
 * and each action taken. Replayed on a new PlayHand from the same init, it gives the same state:
 * what a node saves so that a restart resumes the hand where it was (src/protocol/play-save.ts).
 */
export type PlayStep = { deliver: { stage: string, cards: Record<string, string[]> } } | { accept: ActionDoc }

/** Why an action was not taken: a broken chain link, or the engine's refusal (`rule` its code). */
export interface PlayRefusal { code: ChainCode, rule?: string, reason: string }

export interface PlayHandInit {
  engine: GameEngine<unknown, unknown>
  setup: GameSetup
  /** The hand's id in its actions: the digest of the hand's COMMIT. */
  hand: string
  /** The peer id that signs for each seat (a robot seat: the dealer's). */
  seatSigners: readonly string[]
  /** A seat's view (it knows only its own cards), or absent for a node that knows the deal. */
  view?: { seat: number }
  verify?: (doc: ActionDoc) => boolean
  /** The peer id that signs the dealer's stage actions (games that draw during the hand). */
  dealer?: string
  /** The check of a dealer's stage action, by a node that knows the hand's key (ChainContext.checkStage). */
  checkStage?: ChainContext['checkStage']
  /** A blind-v1 table's opening rule (ChainContext.checkOpening). */
  checkOpening?: ChainContext['checkOpening']
}

export class PlayHand {
  readonly engine: GameEngine<unknown, unknown>
  readonly chain: ActionDoc[] = []
  /** Every stage delivered and action taken, in order (see PlayStep). */
  readonly history: PlayStep[] = []
  readonly #init: PlayHandInit
  readonly #view: SeatView | undefined
  #state: unknown
  #prev = CHAIN_START

  constructor (init: PlayHandInit) {
    this.#init = init
    this.engine = init.engine
    this.#view = init.view === undefined ? undefined : new SeatView(init.setup.game, init.view.seat)
    this.#state = this.#view === undefined ? init.engine.start(init.setup) : this.#view.start(init.engine, init.setup)
  }

  get state (): unknown { return this.#state }
  get head (): ActionDoc | null { return this.chain.at(-1) ?? null }
  pending (): StageRequest | null { return this.engine.pendingStage(this.#state) }
  toAct (): number | null { return this.engine.toAct(this.#state) }
  over (): boolean { return this.engine.isOver(this.#state) }
  legal (seat: number): unknown[] { return this.engine.legal(this.#state, seat) }
  score (): GameScore { return this.engine.score(this.#state) }

  /** Tricks played so far. */
  tricks (): number {
    const s = this.#state as { tricks?: unknown[], play?: { tricks?: unknown[] } | null }
    return s.tricks?.length ?? s.play?.tricks?.length ?? 0
  }

  /** The cards of a stage the hand asked for (a seat passes what it received of it). */
  deliver (stage: string, cards: Record<string, string[]>): GameRefusal | null {
    const r = this.#view === undefined
      ? this.engine.deliver(this.#state, stage, cards)
      : this.#view.deliver(this.engine, this.#state, stage, cards, this.#init.setup.seats)
    if (!r.ok) return r
    this.#state = r.state
    this.history.push({ deliver: { stage, cards } })
    return null
  }

  /**
   * A hand rebuilt from its saved history on the same init: every step taken again, checked as the
   * first time (a saved step that no longer applies throws: the save does not belong to this hand).
   */
  static replay (init: PlayHandInit, history: readonly PlayStep[]): PlayHand {
    const play = new PlayHand(init)
    for (const [i, step] of history.entries()) {
      const bad = 'deliver' in step ? play.deliver(step.deliver.stage, step.deliver.cards) : play.accept(step.accept)
      if (bad !== null) throw new Error(`step ${i + 1} of the saved play does not apply: ${'message' in bad ? bad.message : bad.reason}`)
    }
    return play
  }

  /** Whether `seat` may take `action` now; null when it may. */
  refusal (seat: number, action: unknown): GameRefusal | null {
    const r = this.engine.apply(this.#admitted(seat, action), seat, action)
    return r.ok ? null : r
  }

  /**
   * Signs the next action of `seat` (a node signs for its own seat, or the dealer's for a robot):
   * refused, and nothing signed, when the action is not legal now.
   */
  sign (signer: Signer, seat: number, action: unknown, opening?: unknown): { ok: true, doc: ActionDoc } | { ok: false, refusal: PlayRefusal } {
    const bad = this.refusal(seat, action)
    if (bad !== null) return { ok: false, refusal: { code: 'chain-illegal-action', rule: bad.code, reason: bad.message } }
    const doc = signAction(signer, this.#init.hand, this.head, seat, action, opening)
    const taken = this.accept(doc)
    return taken === null ? { ok: true, doc } : { ok: false, refusal: taken }
  }

  /**
   * The dealer's stage action for the stage the hand asks for now (a draw, a roll, the key), signed
   * and taken; the cards are the caller's (computed from the hand's key).
   */
  signStage (signer: Signer, cards: Record<string, string[]>): { ok: true, doc: ActionDoc } | { ok: false, refusal: PlayRefusal } {
    const request = this.pending()
    if (request === null) return { ok: false, refusal: { code: 'chain-illegal-action', rule: 'stage-not-asked', reason: 'the hand asks for no stage' } }
    const action: StageAction = { type: 'stage', stage: request.stage, inputs: request.inputs ?? null, cards }
    const doc = signAction(signer, this.#init.hand, this.head, DEALER_SEAT, action)
    const taken = this.accept(doc)
    return taken === null ? { ok: true, doc } : { ok: false, refusal: taken }
  }

  /** The next action of the chain, checked (its link, then the engine) and applied; null when taken. */
  accept (doc: unknown): PlayRefusal | null {
    const broken = checkLink(doc, this.chain.length, this.#prev, this.#init, this.#init.verify)
    if (broken !== null) return broken
    const d = doc as ActionDoc
    const r = applyAction(this.engine, this.#admitted(d.body.seat, d.body.action), d.body, this.#init, this.chain)
    if (!r.ok) return { code: r.code, reason: r.reason, ...(r.rule === undefined ? {} : { rule: r.rule }) }
    this.#state = r.state
    this.chain.push(d)
    this.history.push({ accept: d })
    this.#prev = actionDigest(d)
    return null
  }

  /** A robot's choice for `seat` (legal by the engine's heuristics). */
  robot (seat: number, random: (n: number) => number): unknown {
    return this.engine.robot(this.#state, seat, random)
  }

  #admitted (seat: number, action: unknown): unknown {
    return this.#view === undefined ? this.#state : this.#view.admit(this.#state, seat, action)
  }
}
