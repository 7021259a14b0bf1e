import type { Signed } from '../core/signed.js'
import type { DealerSide, SeatSide } from './contracts.js'
import { isAlsoForSeat, isForDealer } from './route.js'
import { MachineFailure, type Effect } from './types.js'
import { decodeFrame, encodeFrame } from './wire.js'

export interface InMemoryTableInit {
  /** The dealer node's peer id (it may also hold a seat: both machines live behind it). */
  dealerId: string
  dealer: DealerSide
  /** Seat machines by peer id. */
  seats: ReadonlyMap<string, SeatSide>
  /** Every effect other than a send, in the order the machines ask for them. */
  onEffect?: (from: string, effect: Exclude<Effect, { kind: 'send' }>) => void
  /** Rewrites a document before delivery, or drops it (undefined). Read at each send. */
  intercept?: () => ((from: string, to: string, doc: Signed<unknown>) => Signed<unknown> | undefined) | undefined
  /** The bytes of each frame delivered, as they would cross the wire. */
  onFrame?: (to: string, frame: Uint8Array) => void
  /** Pairs that cannot reach each other: a send between them fails (its fallback, if any, goes to the dealer). */
  unreachable?: (from: string, to: string) => boolean
  /** A document a machine refused (a Rejection, or a wire error). */
  onRejection?: (to: string, err: Error) => void
}

/**
 * The dealer and seat machines wired together without a network, for tests and benchmarks: every
 * document goes through the real wire encoding and schema check, and the effects lists run in
 * order, breadth first, as a node's host runs them. Returns the function that feeds one list in.
 */
export function inMemoryTable (init: InMemoryTableInit): (from: string, effects: Effect[]) => void {
  const queue: Array<{ from: string, effects: Effect[] }> = []
  let running = false
  const deliver = (to: string, receive: () => Effect[]): void => {
    try {
      queue.push({ from: to, effects: receive() })
    } catch (err) {
      // A machine that failed on a step has ended the hand: its record still goes out.
      if (err instanceof MachineFailure) queue.push({ from: to, effects: err.effects })
      init.onRejection?.(to, err as Error)
    }
  }
  return (from, effects) => {
    queue.push({ from, effects })
    if (running) return
    running = true
    try {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        for (const e of next.effects) {
          if (e.kind !== 'send') { init.onEffect?.(next.from, e); continue }
          if (init.unreachable?.(next.from, e.to) === true) {
            if (e.fallback !== undefined) queue.push({ from: next.from, effects: [{ kind: 'send', to: init.dealerId, doc: e.fallback }] })
            continue
          }
          const intercept = init.intercept?.()
          const doc = intercept === undefined ? e.doc : intercept(next.from, e.to, e.doc)
          if (doc === undefined) continue
          const frame = encodeFrame(doc)
          init.onFrame?.(e.to, frame)
          try {
            const decoded = decodeFrame(frame)
            const toDealer = e.to === init.dealerId && isForDealer(decoded.type, next.from, init.dealerId, e.to)
            deliver(e.to, () => toDealer ? init.dealer.receive(next.from, decoded) : (init.seats.get(e.to) as SeatSide).receive(next.from, decoded))
            const ownSeat = init.seats.get(e.to)
            if (toDealer && ownSeat !== undefined && isAlsoForSeat(decoded.type, next.from, init.dealerId, e.to)) deliver(e.to, () => ownSeat.receive(next.from, decoded))
          } catch (err) {
            init.onRejection?.(e.to, err as Error)
          }
        }
      }
    } finally {
      running = false
    }
  }
}
