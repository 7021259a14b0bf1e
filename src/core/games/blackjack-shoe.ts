import { BITJACK_CARDS, BITJACK_MAX_CARDS, BitjackStream, checkAscii, checkShoeSize, shuffleShoe } from '../schemes/bitjack21.js'

/**
 * The draws of a blackjack hand: bitjack21's shoe for the hand's key (r1 ‖ r2), dealt from its
 * first card on, exactly as the scheme's `deck` lists it. Draw n (n = 0, 1, …) is shoe[n] of the
 * n-card shoe; the shoe's size is part of the shuffle (the swaps run from its last card down), so a
 * 416-card shoe's first cards are not a 52-card shoe's.
 */

/** The whole shoe as card codes, rank then suit (`TS`, `AH`). */
export function shoeCards (key: string, size = BITJACK_MAX_CARDS): string[] {
  const shoe = shuffleShoe(checkShoeSize(size), new BitjackStream(checkAscii(key, 'bitjack21 key (r1 ‖ r2)')))
  return Array.from(shoe, v => BITJACK_CARDS[v])
}

/** Draw n of a hand's shoe. */
export function shoeDraw (key: string, n: number, size = BITJACK_MAX_CARDS): string {
  if (!Number.isSafeInteger(n) || n < 0 || n >= checkShoeSize(size)) throw new RangeError(`draw ${n} is outside a ${size}-card shoe`)
  return shoeCards(key, size)[n]
}
