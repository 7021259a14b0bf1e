/**
 * Trick play shared by coinche, belote and duo (docs/games.md, "Trick play" and "Counting"): the
 * trick on the table, the tricks taken, belote–rebelote, and the points each side made. Sides are
 * seat % 2 (partners 0/2 and 1/3 at four seats; each seat its own side at two).
 */
import { BELOTE_POINTS, DIX_DE_DER, cardPoints, rankOf, suitOf, winningPlay, type Played, type Suit } from './cards32.js'
import type { GameRefusal } from './types.js'

export interface TrickRecord {
  leader: number
  cards: Played[]
  winner: number
  /** Card points of the trick, plus dix de der on the last one. */
  points: number
}

export interface PlayState {
  trump: Suit
  seats: number
  /** Tricks in the hand: 8 at four seats, 16 in duo. */
  total: number
  turn: number
  trick: Played[]
  tricks: TrickRecord[]
  /** The seat that held the king and queen of trump when play began (belote–rebelote), or null. */
  beloteSeat: number | null
}

export const sideOf = (seat: number): number => seat % 2
export const partnerOf = (seat: number, seats: number): number | null => (seats === 4 ? (seat + 2) % 4 : null)

export function refuse(code: string, message: string): GameRefusal {
  return { ok: false, code, message }
}

export function startPlay(trump: Suit, seats: number, total: number, leader: number, holdings: readonly (readonly string[])[]): PlayState {
  const k = `K${trump}`
  const q = `Q${trump}`
  const beloteSeat = holdings.findIndex((h) => h.includes(k) && h.includes(q))
  return { trump, seats, total, turn: leader, trick: [], tricks: [], beloteSeat: beloteSeat < 0 ? null : beloteSeat }
}

/** The play after `seat` lays `card` (already checked legal): the trick closes after `seats` cards, and its winner leads. */
export function playCard(p: PlayState, seat: number, card: string): PlayState {
  const trick = [...p.trick, { seat, card }]
  if (trick.length < p.seats) return { ...p, trick, turn: (seat + 1) % p.seats }
  const winner = winningPlay(trick, p.trump).seat
  const last = p.tricks.length + 1 === p.total
  const points = trick.reduce((a, t) => a + cardPoints(t.card, p.trump), 0) + (last ? DIX_DE_DER : 0)
  return { ...p, trick: [], turn: winner, tricks: [...p.tricks, { leader: trick[0].seat, cards: trick, winner, points }] }
}

export const playOver = (p: PlayState): boolean => p.tricks.length === p.total

/** What the two sides made: card points with dix de der, belote, tricks won. */
export interface Counted {
  points: [number, number]
  /** The side credited with belote–rebelote (both cards played by the holder), or null. */
  beloteSide: number | null
  tricks: [number, number]
  /** The seat that won every trick, if one did. */
  allBySeat: number | null
}

export function count(p: PlayState): Counted {
  const points: [number, number] = [0, 0]
  const tricks: [number, number] = [0, 0]
  for (const t of p.tricks) {
    points[sideOf(t.winner)] += t.points
    tricks[sideOf(t.winner)]++
  }
  const winners = new Set(p.tricks.map((t) => t.winner))
  const allBySeat = winners.size === 1 ? [...winners][0] : null
  return { points, beloteSide: p.beloteSeat === null ? null : sideOf(p.beloteSeat), tricks, allBySeat }
}

export const beloteOf = (c: Counted, side: number): number => (c.beloteSide === side ? BELOTE_POINTS : 0)

/** Whether `card` is the king or queen of trump played by the belote holder (for the summary and the page). */
export const isBeloteCard = (p: PlayState, seat: number, card: string): boolean =>
  seat === p.beloteSeat && suitOf(card) === p.trump && (rankOf(card) === 'K' || rankOf(card) === 'Q')
