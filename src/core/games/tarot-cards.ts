/**
 * Tarot's cards as the rules see them (FFT, Règlement officiel, "Les cartes"): suits, ranks, card
 * points in half-points, the oudlers. Card codes are tarot-v1's (docs/schemes.md): rank then suit
 * for the suit cards (rank A 2 … 9 T J C Q K, suit C D H S), `T01`…`T21` for the trumps, `EXC`.
 */

export const EXCUSE = 'EXC'
export const PETIT = 'T01'
export const VINGT_ET_UN = 'T21'
export const OUDLERS: readonly string[] = Object.freeze([PETIT, VINGT_ET_UN, EXCUSE])

const RANKS = 'A23456789TJCQK'
const SUITS = 'CDHS'

export function isTrump (card: string): boolean {
  return /^T(0[1-9]|1[0-9]|2[01])$/.test(card)
}

export function isTarotCard (card: unknown): card is string {
  return typeof card === 'string' && (card === EXCUSE || isTrump(card) ||
    (card.length === 2 && RANKS.includes(card[0]) && SUITS.includes(card[1])))
}

/** 'T' for a trump, the suit letter for a suit card, '' for the excuse (it has no suit). */
export function suitOf (card: string): string {
  if (card === EXCUSE) return ''
  return isTrump(card) ? 'T' : card[1]
}

/** Order within the card's suit: the ace lowest (1) to the king (14); a trump's number; the excuse 0. */
export function rankOf (card: string): number {
  if (card === EXCUSE) return 0
  if (isTrump(card)) return Number(card.slice(1))
  return RANKS.indexOf(card[0]) + 1
}

export function isKing (card: string): boolean {
  return card.length === 2 && card[0] === 'K'
}

export function isOudler (card: string): boolean {
  return OUDLERS.includes(card)
}

/**
 * A card's value in half-points ("Valeur de chaque carte"): oudler and king 4.5, queen 3.5,
 * cavalier 2.5, jack 1.5, any other card 0.5. The 78 cards total 182 half-points (91 points).
 */
export function halfPoints (card: string): number {
  if (isOudler(card)) return 9
  if (isTrump(card)) return 1
  switch (card[0]) {
    case 'K': return 9
    case 'Q': return 7
    case 'C': return 5
    case 'J': return 3
    default: return 1
  }
}

export function sumHalfPoints (cards: readonly string[]): number {
  let s = 0
  for (const c of cards) s += halfPoints(c)
  return s
}

/** A fixed order for showing and sorting: suits C D H S ace to king, then trumps 1–21, then the excuse. */
export function cardOrder (card: string): number {
  if (card === EXCUSE) return 78
  if (isTrump(card)) return 55 + rankOf(card)
  return SUITS.indexOf(card[1]) * 14 + rankOf(card) - 1
}

export function sortCards (cards: readonly string[]): string[] {
  return [...cards].sort((a, b) => cardOrder(a) - cardOrder(b))
}
