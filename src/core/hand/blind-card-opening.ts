/**
 * A card opened when it is played, on a blind-v1 table (docs/dealer-blind.md, "A card opened when
 * it is played"). The player holds every other seat's decryption share for its own positions (they
 * reached it privately, each with its Chaum–Pedersen proof); to play the card at position p it
 * publishes, for p only, every seat's share (d, c, s) including its own, newly proven. Anyone
 * holding the hand's public keys and the dealt deck then checks each share against its seat's key
 * and p's ciphertext and opens the card: M = a − Σ dₖ. Nothing else is learnt: the shares are for p
 * alone, and a share for one position verifies for no other (its proof's context names p).
 *
 * One rule, decided here, for the seats that check a card as it is played and for the verifier
 * that replays a receipt's play: reason codes `card-opening-form`, `card-opening-not-held`,
 * `card-opening-share`, `card-opening-card`.
 */
import { CoreInputError } from '../errors.js'
import { type Ciphertext, type Point, type RandomBytes, proveShare, verifyShare } from '../blind/index.js'
import { blindCards } from '../schemes/blind.js'
import { blindContext, openPosition, proverOf, shareStep } from './blind.js'
import type { CommitBody } from './messages.js'

/** One seat's decryption share for the opened position, with its proof (docs/dealer-blind.md §6). */
export interface OpeningShare { seat: number, d: string, c: string, s: string }

/** What a blind-v1 card action carries beside the card: its position in the dealt deck and every seat's share for it. */
export interface CardOpening {
  pos: number
  card: string
  /** One share per seat, seat order. */
  shares: OpeningShare[]
}

export type CardOpeningCode = 'card-opening-form' | 'card-opening-not-held' | 'card-opening-share' | 'card-opening-card'

export type CardOpeningResult =
  | { ok: true, card: string }
  | { ok: false, code: CardOpeningCode, reason: string, seat?: number }

export interface OpeningHand {
  commit: CommitBody
  /** docDigest of the COMMIT. */
  commitDigest: string
  /** Every seat's public hand key, seat order (from the hand's BKEYs). */
  keys: readonly Point[]
  /** The dealt deck (the last shuffle's output under the beacon's permutation). */
  dealt: readonly Ciphertext[]
}

const isHex = (v: unknown): v is string => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v)

function wellFormed (v: unknown, seats: number, deckSize: number): v is CardOpening {
  if (typeof v !== 'object' || v === null) return false
  const o = v as Record<string, unknown>
  if (Object.keys(o).sort().join() !== 'card,pos,shares') return false
  if (!Number.isSafeInteger(o.pos) || (o.pos as number) < 0 || (o.pos as number) >= deckSize || typeof o.card !== 'string') return false
  if (!Array.isArray(o.shares) || o.shares.length !== seats) return false
  return o.shares.every((s: unknown, i) => {
    if (typeof s !== 'object' || s === null) return false
    const r = s as Record<string, unknown>
    return Object.keys(r).sort().join() === 'c,d,s,seat' && r.seat === i && isHex(r.d) && isHex(r.c) && isHex(r.s)
  })
}

/**
 * Checks `opening` for a card `seat` plays: well formed (one share per seat, in seat order; else
 * `card-opening-form`), at a position dealt to `seat` (`held`, its held positions: docs/dealer-blind.md
 * §15.1; else `card-opening-not-held`), every share's proof valid for its seat's key
 * and that position (`card-opening-share`, naming the seat whose share fails), and the opened point
 * the card the action names (`card-opening-card`).
 */
export function checkCardOpening (hand: OpeningHand, seat: number, held: readonly number[], opening: unknown): CardOpeningResult {
  const { commit, commitDigest, keys, dealt } = hand
  if (!wellFormed(opening, commit.seats.length, dealt.length)) return { ok: false, code: 'card-opening-form', reason: 'not a card opening: {pos, card, shares: one {seat, d, c, s} per seat, seat order}' }
  if (!held.includes(opening.pos)) return { ok: false, code: 'card-opening-not-held', reason: `position ${opening.pos} was not dealt to seat ${seat}` }
  const points: Point[] = []
  for (const share of opening.shares) {
    const ctx = blindContext(commit, commitDigest, shareStep(opening.pos, share.seat), proverOf(commit, share.seat))
    const d = verifyShare(ctx, keys[share.seat], dealt[opening.pos].b, share)
    if (d === undefined) return { ok: false, code: 'card-opening-share', reason: `seat ${share.seat}'s decryption share for position ${opening.pos} does not verify`, seat: share.seat }
    points.push(d)
  }
  let card: string
  try { card = openPosition(commit.game, dealt[opening.pos], points) } catch (e) {
    if (!(e instanceof CoreInputError)) throw e
    return { ok: false, code: 'card-opening-card', reason: `position ${opening.pos} opens to no card of ${commit.game}` }
  }
  if (card !== opening.card) return { ok: false, code: 'card-opening-card', reason: `position ${opening.pos} opens to ${card}, not ${opening.card}` }
  return { ok: true, card }
}

/**
 * The opening a player makes for its card at `pos`: its own share, newly proven with its hand key
 * `x`, and the other seats' shares it received for that position (already checked when they came).
 */
export function makeCardOpening (
  hand: OpeningHand, seat: number, x: bigint, pos: number, card: string, others: ReadonlyMap<number, Omit<OpeningShare, 'seat'>>, random: RandomBytes
): CardOpening {
  const { commit, commitDigest, dealt } = hand
  if (!blindCards(commit.game).includes(card)) throw new CoreInputError(`${card} is no card of ${commit.game}`)
  const shares: OpeningShare[] = commit.seats.map((_, k) => {
    if (k === seat) {
      const ctx = blindContext(commit, commitDigest, shareStep(pos, seat), proverOf(commit, seat))
      return { seat, ...proveShare(ctx, x, dealt[pos].b, random) }
    }
    const share = others.get(k)
    if (share === undefined) throw new CoreInputError(`no share of seat ${k} for position ${pos}: the card is not open to its owner yet`)
    return { seat: k, d: share.d, c: share.c, s: share.s }
  })
  return { pos, card, shares }
}
