/**
 * The 32-card deck of belote, coinche and duo (docs/games.md, "Cards"): card codes are rank then suit
 * (`TC` the ten of clubs), ranks 7 8 9 T J Q K A, suits S H D C. Order and points at trump and at a
 * plain suit, the winner of a trick, and which cards the obligations leave legal.
 */

export type Suit = 'S' | 'H' | 'D' | 'C'
export const SUITS: readonly Suit[] = ['S', 'H', 'D', 'C']
const RANKS = '789TJQKA'

/** Strongest first. */
const TRUMP_ORDER = 'J9ATKQ87'
const PLAIN_ORDER = 'ATKQJ987'
const TRUMP_POINTS: Record<string, number> = { J: 20, '9': 14, A: 11, T: 10, K: 4, Q: 3, '8': 0, '7': 0 }
const PLAIN_POINTS: Record<string, number> = { A: 11, T: 10, K: 4, Q: 3, J: 2, '9': 0, '8': 0, '7': 0 }

/** The points of the hand's tricks (152) plus dix de der (10). */
export const HAND_POINTS = 162
export const DIX_DE_DER = 10
export const BELOTE_POINTS = 20

export function isCard32(c: unknown): c is string {
  return typeof c === 'string' && c.length === 2 && RANKS.includes(c[0]) && (SUITS as readonly string[]).includes(c[1])
}

export const suitOf = (card: string): Suit => card[1] as Suit
export const rankOf = (card: string): string => card[0]
export const isSuit = (s: unknown): s is Suit => typeof s === 'string' && (SUITS as readonly string[]).includes(s)

export function cardPoints(card: string, trump: Suit): number {
  return suitOf(card) === trump ? TRUMP_POINTS[rankOf(card)] : PLAIN_POINTS[rankOf(card)]
}

/** Higher is stronger within the card's suit (0…7), by the trump or plain order. */
export function strength(card: string, trump: Suit): number {
  const order = suitOf(card) === trump ? TRUMP_ORDER : PLAIN_ORDER
  return 7 - order.indexOf(rankOf(card))
}

export interface Played { seat: number, card: string }

/** The card now winning a trick (non-empty): the highest trump if any was played, else the highest card of the suit led. */
export function winningPlay(trick: readonly Played[], trump: Suit): Played {
  const led = suitOf(trick[0].card)
  let best = trick[0]
  for (const p of trick.slice(1)) {
    const s = suitOf(p.card)
    const b = suitOf(best.card)
    if (s === trump && b !== trump) best = p
    else if (s === b && (s === trump || s === led) && strength(p.card, trump) > strength(best.card, trump)) best = p
  }
  return best
}

/** Why a card is not legal here, or null when it is (docs/games.md, "Trick play"). */
export type CardFault = 'must-follow' | 'must-trump' | 'must-over-trump'

/**
 * Checks `card` (one of `available`, the cards the seat may play from) against the obligations:
 * follow the suit led; on a trump lead, play a higher trump than the trick's best whenever one is
 * held; void in the suit led, trump (over-trumping a trump already played when possible, else any
 * trump), unless the partner is winning the trick (the partner exception: then any card).
 * `partner` is null in a two-player game.
 */
export function cardFault(card: string, available: readonly string[], trick: readonly Played[], trump: Suit, seat: number, partner: number | null): CardFault | null {
  if (trick.length === 0) return null
  const led = suitOf(trick[0].card)
  const best = winningPlay(trick, trump)
  const bestTrump = suitOf(best.card) === trump ? strength(best.card, trump) : -1
  const higherTrumps = available.filter((c) => suitOf(c) === trump && strength(c, trump) > bestTrump)
  const plays = (c: string) => suitOf(c) === trump && strength(c, trump) > bestTrump
  if (available.some((c) => suitOf(c) === led)) {
    if (suitOf(card) !== led) return 'must-follow'
    if (led === trump && higherTrumps.length > 0 && !plays(card)) return 'must-over-trump'
    return null
  }
  if (partner !== null && best.seat === partner) return null
  if (!available.some((c) => suitOf(c) === trump)) return null
  if (suitOf(card) !== trump) return 'must-trump'
  if (higherTrumps.length > 0 && !plays(card)) return 'must-over-trump'
  return null
}

export function legalCards(available: readonly string[], trick: readonly Played[], trump: Suit, seat: number, partner: number | null): string[] {
  return available.filter((c) => cardFault(c, available, trick, trump, seat, partner) === null)
}
