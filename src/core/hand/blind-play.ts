/**
 * A played blind-v1 hand (docs/dealer-blind.md §15, docs/games.md "Playing a dealt hand"): the rule
 * that every card played carries its opening, and the hand's outcome once every hand key is out.
 *
 * Nobody knows a seat's hand while it is played, so the rules that depend on it (follow suit,
 * trump, over-trump) cannot be checked when a card is played: each card's opening only shows it
 * came from the player's hand. Once the hand keys are published the whole deal opens and every node
 * replays the chain on it; the first action the rules refuse ends the hand there, as a refused
 * action naming its seat (the actions after it were played in good faith and are not part of it).
 * The dealer computes that outcome when it builds the BREVEAL, which names it; each seat computes
 * it again from its own chain and the revealed deal, and the verifier checks it (play-verify.ts). Pure.
 */
import type { Ciphertext, Point } from '../blind/index.js'
import { canonicalJson } from '../canonical.js'
import { actionDigest, replayChain, CHAIN_START, type ActionBody, type ActionDoc, type ChainContext } from '../games/action-chain.js'
import { engines } from '../games/index.js'
import type { GameScore } from '../games/types.js'
import { setupFromDeliveries, stageCards } from '../games/play-setup.js'
import type { PositionDelivery } from '../schemes/blind.js'
import type { Delivery } from '../schemes/types.js'
import { checkCardOpening } from './blind-card-opening.js'
import { actionSigners } from './play-verify.js'
import type { CommitBody, ReceiptPlay } from './messages.js'

/**
 * The games a blind-v1 table plays card by card: coinche; belote (its take dealt after the bid; the
 * turned-up card is public and the taker's take delivery holds its position); duo (its face-up
 * packets, public, each a seat's); tarot (the dog, public, held by the taker of a petite or a garde).
 */
export const BLIND_PLAYED_GAMES: ReadonlySet<string> = new Set(['coinche', 'belote', 'duo', 'tarot'])

/** What the opening rule needs: the hand's public keys, the dealt deck, and its layout. */
export interface BlindPlayHand {
  commit: CommitBody
  commitDigest: string
  keys: readonly Point[]
  dealt: readonly Ciphertext[]
  layout: readonly PositionDelivery[]
  /** The stages dealt: a seat holds the positions of its private deliveries of these. */
  stages: readonly string[]
}

/** A card played: `{type: "card", card}` (coinche, belote, duo) or tarot's `{type: "play", card}`. */
export const isCardAction = (action: unknown): action is { type: 'card' | 'play', card: unknown } =>
  typeof action === 'object' && action !== null && ['card', 'play'].includes((action as { type?: unknown }).type as string)

/** The card an action plays, if it plays one (what its opening opens). */
export function playedCard (action: unknown): string | undefined {
  return isCardAction(action) && typeof action.card === 'string' ? action.card : undefined
}

/**
 * Tarot: the seat that holds the dog's positions, from the chain so far: the taker (the last seat
 * that bid) of a petite or a garde, once the dog is dealt; nobody for a garde sans or contre (the
 * dog is never in the taker's hand).
 */
function tarotDogHolder (earlier: readonly ActionDoc[]): number | undefined {
  const bids = earlier.filter(a => (a.body.action as { type?: unknown, bid?: unknown }).type === 'bid' && (a.body.action as { bid?: unknown }).bid !== 'pass')
  const last = bids.at(-1)
  if (last === undefined) return undefined
  const bid = (last.body.action as { bid?: unknown }).bid
  return bid === 'petite' || bid === 'garde' ? last.body.seat : undefined
}

/** The position an earlier action opened, if it carries an opening. */
function openedPosition (doc: ActionDoc): number | undefined {
  const pos = (doc.body.opening as { pos?: unknown } | undefined)?.pos
  return typeof pos === 'number' ? pos : undefined
}

/**
 * The opening rule of a blind-v1 table (ChainContext.checkOpening), in order: a card played carries
 * an opening and nothing else does (`card-opening-form`); the opening names the card the action
 * plays (`card-opening-card`); then checkCardOpening, the held positions being the positions of the
 * seat's deliveries (private, or public and its own) of the stages dealt, less those an earlier
 * action of the chain opened.
 */
export function blindOpeningRule (hand: BlindPlayHand): NonNullable<ChainContext['checkOpening']> {
  return (body: ActionBody, earlier: readonly ActionDoc[]) => {
    const card = isCardAction(body.action)
    if (!card && body.opening !== undefined) return { rule: 'card-opening-form', reason: 'only a card played carries an opening' }
    if (!card) return null
    if (body.opening === undefined) return { rule: 'card-opening-form', reason: 'a card played at a blind table carries its opening' }
    const named = (body.opening as { card?: unknown }).card
    if (named !== (body.action as { card: unknown }).card) return { rule: 'card-opening-card', reason: `the opening is for ${String(named)}, the action plays ${String((body.action as { card: unknown }).card)}` }
    const opened = new Set(earlier.map(openedPosition).filter((p): p is number => p !== undefined))
    // A seat holds the positions of its deliveries, private or public (duo's face-up packet is its
    // own), and tarot's taker of a petite or a garde the dog's.
    const dogHolder = hand.commit.game === 'tarot' ? tarotDogHolder(earlier) : undefined
    const held = hand.layout
      .filter(d => (d.seat === body.seat || (d.stage === 'dog' && dogHolder === body.seat)) && hand.stages.includes(d.stage))
      .flatMap(d => d.positions)
      .filter(p => !opened.has(p))
    const r = checkCardOpening({ commit: hand.commit, commitDigest: hand.commitDigest, keys: hand.keys, dealt: hand.dealt }, body.seat, held, body.opening)
    return r.ok ? null : { rule: r.code, reason: r.reason }
  }
}

/** How the dealer says a played hand ended before its game did (the BREVEAL's `play`). */
export interface BlindPlayEnd {
  /** The next link, signed by its seat, which the dealer refused when it came (its opening or the public rules). */
  refused?: ActionDoc
  /** The human seat whose turn ran out. */
  waiting?: number
}

/** What a played blind hand's BREVEAL names: the chain (its length and last digest) and how the hand ended. */
export interface BlindRevealPlay {
  actions: number
  head: string
  score: ReceiptPlay['score']
  refused?: ReceiptPlay['refused']
  waiting?: ReceiptPlay['waiting']
}

/**
 * A played blind hand's outcome on the revealed deal (`deliveries`, every stage): `chain` replayed
 * with the rules and the openings. The first action they refuse ends the hand (`refused`, no score);
 * else the dealer's end (`end`) stands; else the hand's score if the game is over (null if not).
 */
export function blindPlayOutcome (
  hand: BlindPlayHand, chain: readonly ActionDoc[], deliveries: readonly Delivery[], end: BlindPlayEnd,
  verify?: (doc: ActionDoc) => boolean
): { play: ReceiptPlay, final?: { tricks: number, score: GameScore } } {
  const commit = hand.commit
  const engine = engines[commit.game]
  const setup = setupFromDeliveries(commit.game, commit.seats.length, commit.params.dealer, deliveries.filter(d => hand.stages.includes(d.stage)))
  const r = replayChain(engine, setup, chain, {
    hand: hand.commitDigest,
    seatSigners: actionSigners(commit.seats, commit.dealer),
    dealer: commit.dealer,
    stage: request => (hand.stages.includes(request.stage) ? stageCards(deliveries, request) : null),
    checkOpening: blindOpeningRule(hand),
    ...(verify === undefined ? {} : { verify })
  })
  const actions = [...chain] as ReceiptPlay['actions']
  if (!r.ok && (r.code === 'chain-illegal-action' || r.code === 'chain-opening')) {
    return { play: { actions: actions.slice(0, r.index), score: null, refused: actions[r.index] } }
  }
  if (end.refused !== undefined) return { play: { actions, score: null, refused: end.refused as ReceiptPlay['actions'][number] } }
  if (end.waiting !== undefined) return { play: { actions, score: null, waiting: { seat: end.waiting } } }
  if (!r.ok || !engine.isOver(r.state)) return { play: { actions, score: null } }
  const score = engine.score(r.state)
  const tricks = (r.state as { tricks?: unknown[], play?: { tricks?: unknown[] } | null })
  return { play: { actions, score: { points: score.points, summary: score.summary } }, final: { tricks: tricks.tricks?.length ?? tricks.play?.tricks?.length ?? 0, score } }
}

/** What the BREVEAL names of an outcome. */
export function revealPlayOf (play: ReceiptPlay): BlindRevealPlay {
  const last = play.actions.at(-1)
  return {
    actions: play.actions.length,
    head: last === undefined ? CHAIN_START : actionDigest(last as ActionDoc),
    score: play.score,
    ...(play.refused === undefined ? {} : { refused: play.refused }),
    ...(play.waiting === undefined ? {} : { waiting: play.waiting })
  }
}

/**
 * The receipt's play a seat builds from the BREVEAL's `named` play and its own chain: the first
 * `named.actions` actions of its chain (an Error when it holds fewer, or others), and the named end.
 */
export function receiptPlayFrom (named: BlindRevealPlay, chain: readonly ActionDoc[]): ReceiptPlay {
  if (chain.length < named.actions) throw new Error(`the reveal names ${named.actions} actions and this seat holds ${chain.length}`)
  const actions = chain.slice(0, named.actions)
  const last = actions.at(-1)
  if ((last === undefined ? CHAIN_START : actionDigest(last)) !== named.head) throw new Error(`the reveal names another chain of ${named.actions} actions than the one this seat played`)
  return {
    actions: actions as ReceiptPlay['actions'],
    score: named.score,
    ...(named.refused === undefined ? {} : { refused: named.refused }),
    ...(named.waiting === undefined ? {} : { waiting: named.waiting })
  }
}

/** Whether a receipt's play is the one its BREVEAL names (same chain head, score and end). */
export function samePlay (named: BlindRevealPlay, play: ReceiptPlay): boolean {
  return canonicalJson(revealPlayOf(play)) === canonicalJson(named)
}
