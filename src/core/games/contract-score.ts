/**
 * Scoring of a coinche or duo contract (docs/games.md, "Coinche: scoring"): made or failed, points
 * made plus the contract; a failed or coinched contract gives the winning side the hand's 162 plus
 * the contract, that sum doubled by coinche and quadrupled by surcoinche; belote stays with its side.
 */
import { HAND_POINTS } from './cards32.js'
import { bidPoints, type AuctionState, type Contract } from './auction.js'
import { beloteOf, count, playOver, sideOf, type Counted, type PlayState } from './trick-play.js'
import type { GameScore } from './types.js'

export function contractMade(c: Contract, counted: Counted): boolean {
  const side = sideOf(c.seat)
  if (c.value === 'generale') return counted.allBySeat === c.seat
  if (c.value === 'capot') return counted.tricks[1 - side] === 0
  const mine = counted.points[side] + beloteOf(counted, side)
  const theirs = counted.points[1 - side] + beloteOf(counted, 1 - side)
  return mine >= c.value && mine > theirs
}

export function scoreContract(c: Contract, multiplier: 1 | 2 | 4, counted: Counted, seats: number): GameScore {
  const side = sideOf(c.seat)
  const made = contractMade(c, counted)
  const value = bidPoints(c.value)
  const sides: [number, number] = [beloteOf(counted, 0), beloteOf(counted, 1)]
  if (multiplier === 1 && made) {
    sides[side] += value + counted.points[side]
    sides[1 - side] += counted.points[1 - side]
  } else {
    sides[made ? side : 1 - side] += (HAND_POINTS + value) * multiplier
  }
  const name = c.value === 'generale' ? 'générale' : String(c.value)
  const mult = multiplier === 4 ? ' surcoinched' : multiplier === 2 ? ' coinched' : ''
  return {
    points: Array.from({ length: seats }, (_, s) => sides[sideOf(s)]),
    summary: `seat ${c.seat} bid ${name} ${c.suit}${mult}: ${made ? 'made' : 'down'} with ${counted.points[side]} of ${HAND_POINTS}`,
    detail: { contract: c, multiplier, made, cardPoints: counted.points, tricks: counted.tricks, beloteSide: counted.beloteSide }
  }
}

export function thrownIn(seats: number): GameScore {
  return { points: new Array<number>(seats).fill(0), summary: 'everyone passed: the hand is thrown in', detail: { thrownIn: true } }
}

/** An auction game's hand (coinche, duo) is over when everyone passed or the last trick is taken. */
export function auctionHandOver(a: AuctionState, play: PlayState | null): boolean {
  return (a.done && a.best === null) || (play !== null && playOver(play))
}

export function scoreAuctionHand(game: string, a: AuctionState, play: PlayState | null): GameScore {
  if (!auctionHandOver(a, play)) throw new Error(`${game}: the hand is not over`)
  if (play === null || a.best === null) return thrownIn(a.seats)
  return scoreContract(a.best, a.multiplier, count(play), a.seats)
}
