/**
 * The robots' heuristics for the 32-card games (docs/games.md, "Robots"): a hand's strength for a
 * trump suit, and a card choice: lead an ace or the master trump, win a trick as cheaply as
 * possible when the partner is not winning it, give points to a winning partner, else discard low.
 * `random(n)` only breaks ties between equally good cards.
 */
import { SUITS, cardPoints, strength, suitOf, winningPlay, type Played, type Suit } from './cards32.js'

/** An estimate, in contract points, of what `hand` makes with `trump`: trump points, 10 per trump, 11 per side ace. */
export function handStrength(hand: readonly string[], trump: Suit): number {
  let est = 0
  for (const c of hand) {
    if (suitOf(c) === trump) est += cardPoints(c, trump) + 10
    else if (c[0] === 'A') est += 11
  }
  return est
}

export function bestSuit(hand: readonly string[], exclude: Suit | null = null): { suit: Suit, est: number } {
  let best = { suit: 'S' as Suit, est: -1 }
  for (const suit of SUITS) {
    if (suit === exclude) continue
    const est = handStrength(hand, suit)
    if (est > best.est) best = { suit, est }
  }
  return best
}

function pick(cards: string[], key: (c: string) => number, random: (n: number) => number): string {
  const top = Math.min(...cards.map(key))
  const ties = cards.filter((c) => key(c) === top)
  return ties.length === 1 ? ties[0] : ties[random(ties.length)]
}

const weight = (c: string, trump: Suit) => cardPoints(c, trump) * 10 + strength(c, trump) + (suitOf(c) === trump ? 100 : 0)

export function robotCard(legal: string[], trick: readonly Played[], trump: Suit, partner: number | null, random: (n: number) => number): string {
  if (trick.length === 0) {
    const aces = legal.filter((c) => c[0] === 'A' && suitOf(c) !== trump)
    if (aces.length > 0) return pick(aces, () => 0, random)
    if (legal.includes(`J${trump}`)) return `J${trump}`
    return pick(legal, (c) => weight(c, trump), random)
  }
  const best = winningPlay(trick, trump)
  if (partner !== null && best.seat === partner) {
    const plain = legal.filter((c) => suitOf(c) !== trump)
    return pick(plain.length > 0 ? plain : legal, (c) => (plain.length > 0 ? -cardPoints(c, trump) : weight(c, trump)), random)
  }
  const winners = legal.filter((c) => winningPlay([...trick, { seat: -1, card: c }], trump).seat === -1)
  if (winners.length > 0) return pick(winners, (c) => weight(c, trump), random)
  return pick(legal, (c) => weight(c, trump), random)
}
