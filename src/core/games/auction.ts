/**
 * The coinche auction, also duo's (docs/games.md, "Coinche: the auction"): bids 80…160 by tens,
 * then capot (250) and générale (500, four seats only), each naming a trump suit; pass; coinche by
 * a defender; surcoinche by the contract side. Turn order is seat + 1.
 */
import { isSuit, type Suit } from './cards32.js'
import { refuse, sideOf } from './trick-play.js'
import type { GameRefusal } from './types.js'

export type BidValue = number | 'capot' | 'generale'
export type AuctionAction =
  | { type: 'bid', value: BidValue, suit: Suit }
  | { type: 'pass' }
  | { type: 'coinche' }
  | { type: 'surcoinche' }

export interface Contract { seat: number, value: BidValue, suit: Suit }

export interface AuctionState {
  seats: number
  turn: number
  best: Contract | null
  /** 1, 2 after coinche, 4 after surcoinche. */
  multiplier: 1 | 2 | 4
  /** Passes since the last bid (or since the start). */
  passes: number
  /** After a coinche: the contract side's seats still to choose between surcoinche and pass, in turn order. */
  toAnswer: number[]
  done: boolean
  history: { seat: number, action: AuctionAction }[]
}

export const bidPoints = (v: BidValue): number => (v === 'capot' ? 250 : v === 'generale' ? 500 : v)

export function startAuction(seats: number, opener: number): AuctionState {
  return { seats, turn: opener, best: null, multiplier: 1, passes: 0, toAnswer: [], done: false, history: [] }
}

function validValue(v: unknown, seats: number): v is BidValue {
  if (v === 'capot') return true
  if (v === 'generale') return seats === 4
  return typeof v === 'number' && Number.isInteger(v) && v >= 80 && v <= 160 && v % 10 === 0
}

/** Applies an auction action of the seat whose turn it is; the caller checked the turn. */
export function auctionStep(a: AuctionState, seat: number, action: AuctionAction): AuctionState | GameRefusal {
  const next = (s: number) => (s + 1) % a.seats
  const history = [...a.history, { seat, action }]
  if (a.toAnswer.length > 0) {
    if (action.type === 'pass') {
      const toAnswer = a.toAnswer.slice(1)
      return { ...a, history, toAnswer, turn: toAnswer[0] ?? a.turn, done: toAnswer.length === 0 }
    }
    if (action.type === 'surcoinche') return { ...a, history, multiplier: 4, toAnswer: [], done: true }
    return refuse('after-coinche', 'after a coinche the contract side may only surcoinche or pass')
  }
  switch (action.type) {
    case 'pass': {
      const passes = a.passes + 1
      const done = a.best === null ? passes === a.seats : passes === a.seats - 1
      return { ...a, history, passes, done, turn: next(seat) }
    }
    case 'bid': {
      if (!validValue(action.value, a.seats) || !isSuit(action.suit)) return refuse('bad-bid', 'a bid is 80…160 by tens, capot or générale (four seats), with a suit S H D C')
      if (a.best !== null && bidPoints(action.value) <= bidPoints(a.best.value)) return refuse('bid-too-low', `a bid must be above ${String(a.best.value)}`)
      return { ...a, history, best: { seat, value: action.value, suit: action.suit }, passes: 0, turn: next(seat) }
    }
    case 'coinche': {
      if (a.best === null || sideOf(a.best.seat) === sideOf(seat)) return refuse('coinche-not-allowed', 'only a defender may coinche, and only a bid')
      const side = sideOf(a.best.seat)
      const toAnswer: number[] = []
      for (let k = 1; k <= a.seats; k++) if (sideOf((seat + k) % a.seats) === side) toAnswer.push((seat + k) % a.seats)
      return { ...a, history, multiplier: 2, toAnswer, turn: toAnswer[0] }
    }
    case 'surcoinche':
      return refuse('surcoinche-not-allowed', 'surcoinche answers a coinche of the contract')
    default:
      return refuse('bad-action', 'unknown action')
  }
}

export function auctionLegal(a: AuctionState, seat: number): AuctionAction[] {
  if (a.done || seat !== a.turn) return []
  if (a.toAnswer.length > 0) return [{ type: 'pass' }, { type: 'surcoinche' }]
  const out: AuctionAction[] = [{ type: 'pass' }]
  const floor = a.best === null ? 0 : bidPoints(a.best.value)
  const values: BidValue[] = [80, 90, 100, 110, 120, 130, 140, 150, 160, 'capot']
  if (a.seats === 4) values.push('generale')
  for (const value of values) if (bidPoints(value) > floor) for (const suit of ['S', 'H', 'D', 'C'] as Suit[]) out.push({ type: 'bid', value, suit })
  if (a.best !== null && sideOf(a.best.seat) !== sideOf(seat)) out.push({ type: 'coinche' })
  return out
}
