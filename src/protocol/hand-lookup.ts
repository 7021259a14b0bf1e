import type { Signed } from '../core/signed.js'
import { docDigest } from '../core/hand/digest.js'
import type { SignedCommit } from '../core/hand/messages.js'
import { Rejection } from './types.js'
import type { AskBody } from './wire.js'

/** What both dealer machines (commit–reveal and blind) know of a hand in play, for the checks below. */
export interface HandInPlay<P extends string> {
  hand: number
  phase: P
  /** Digest of the hand's COMMIT: every seat document must answer exactly it. */
  digest: string
  commit: SignedCommit
}

/** The dealer's side of the table these checks need. */
export interface SeatDocContext {
  tableId: string
  now: () => number
  verify: (doc: Signed<unknown>) => boolean
}

/**
 * Whether `doc` is, byte for byte (its docDigest), a document its signer `from` already sent and the
 * dealer holds among `held` (a hand's pledges, nonces, keys, shuffles, acks; undefined: no hand in
 * play): a seat sending its part again, answering a document sent again (docs/protocol.md §7, "A
 * connection that came back"), which changes nothing in whatever phase the hand is now and is not
 * a replay to refuse. One rule for both dealer machines. Digests are computed only against what
 * that signer sent, so a document's first arrival costs none (a shuffle's bytes are tens of KB).
 */
export function sentBefore (held: Iterable<Signed<unknown>> | undefined, from: string, doc: Signed<unknown>): boolean {
  if (held === undefined || doc.signer !== from) return false
  for (const d of held) if (d.signer === from && docDigest(d) === docDigest(doc)) return true
  return false
}

/**
 * A seat's document to a dealer, checked before use (docs/protocol.md §8): this table, a hand in
 * play, signed by the seat that sent it (no relaying), from that seat, for this hand's COMMIT, in
 * the phase that expects it, before the contribution deadline when `contribution` is set, and
 * signature last. One rule for both dealer machines.
 */
export function checkSeatDoc<P extends string, H extends HandInPlay<P>> (
  hands: { get: (hand: number) => H | undefined }, ctx: SeatDocContext, from: string,
  doc: Signed<{ table: string, hand: number, commit: string, seat: number }>, phase: P, contribution: boolean
): H {
  const body = doc.body
  if (body.table !== ctx.tableId) throw new Rejection(`${doc.type} for another table (${body.table})`)
  const hand = hands.get(body.hand)
  if (hand === undefined) throw new Rejection(`${doc.type} for hand ${body.hand}, which is not in play (replayed or late)`)
  if (doc.signer !== from) throw new Rejection(`${doc.type} relayed: signed by ${doc.signer} but sent by ${from}`)
  if (hand.commit.body.seats[body.seat] !== from) throw new Rejection(`${doc.type} for seat ${body.seat}, which is not ${from}'s seat`)
  if (body.commit !== hand.digest) throw new Rejection(`${doc.type} of seat ${body.seat} answers another commit`)
  if (hand.phase !== phase) throw new Rejection(`${doc.type} of seat ${body.seat} for hand ${hand.hand} arrived in phase ${hand.phase}`)
  if (contribution && ctx.now() > hand.commit.body.deadline) {
    throw new Rejection(`${doc.type} of seat ${body.seat} for hand ${hand.hand} came after the contribution deadline`)
  }
  if (!ctx.verify(doc)) throw new Rejection(`${doc.type} of seat ${body.seat}: bad signature`)
  return hand
}

/** A hand in play in one of `phases`, for a host's command (deal a stage, end the hand). */
export function handIn<P extends string, H extends HandInPlay<P>> (hands: Map<number, H>, handNo: number, phases: P[]): H {
  const hand = hands.get(handNo)
  if (hand === undefined) throw new Rejection(`hand ${handNo} is not in play`)
  if (!phases.includes(hand.phase)) throw new Rejection(`hand ${handNo} is ${hand.phase}, not ${phases.join(' or ')}`)
  return hand
}

/**
 * A seat's ASK (docs/protocol.md §7), checked for both dealer machines: this table, from the seat
 * it names, signed, about a hand this dealer committed that is in play or remembered (`digestOf`),
 * for that hand's COMMIT when it names one. False for a hand not committed yet (nothing to tell: a
 * seat back from a restart asks about the next hand); a Rejection for anything else amiss.
 */
export function checkAsk (
  ctx: { tableId: string, seats: readonly string[], verify: (doc: Signed<unknown>) => boolean },
  from: string, doc: Signed<AskBody>, nextHand: number, digestOf: (hand: number) => string | undefined
): boolean {
  const body = doc.body
  if (body.table !== ctx.tableId) throw new Rejection(`ask for another table (${body.table})`)
  if (doc.signer !== from || ctx.seats[body.seat] !== from) throw new Rejection(`ask for seat ${body.seat}, which is not ${from}'s seat`)
  if (!ctx.verify(doc)) throw new Rejection('ask: bad signature')
  if (body.hand >= nextHand) return false
  const digest = digestOf(body.hand)
  if (digest === undefined) throw new Rejection(`ask for hand ${body.hand}, which is neither in play nor among the last ended`)
  if (body.commit !== null && body.commit !== digest) throw new Rejection(`ask for hand ${body.hand} names another commit`)
  return true
}
