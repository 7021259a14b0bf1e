import type { Interner } from '../core/frozen.js'
import type { Signed } from '../core/signed.js'
import type { DealerSide, SeatSide } from './contracts.js'
import { isAlsoForSeat, isForDealer } from './route.js'
import { MachineFailure, type Effect } from './types.js'
import { decodeFrame, encodeFrame } from './wire.js'

/** Which machine of a node produced an effects list (a dealer's node runs both). */
export type MachineRole = 'dealer' | 'seat'

export interface InMemoryTableInit {
  /** The dealer node's peer id (it may also hold a seat: both machines live behind it). */
  dealerId: string
  /** The dealer machine, of any hand family (read at each delivery: a restarted one may take its place). */
  dealer: DealerSide
  /** Seat machines by peer id. */
  seats: ReadonlyMap<string, SeatSide>
  /** Every effect other than a send, in the order the machines ask for them, with the role that asked when it is known. */
  onEffect?: (from: string, effect: Exclude<Effect, { kind: 'send' }>, role: MachineRole | undefined) => void
  /** Rewrites a document before delivery, or drops it (undefined). Read at each send. */
  intercept?: () => ((from: string, to: string, doc: Signed<unknown>) => Signed<unknown> | undefined) | undefined
  /** The bytes of each frame delivered, as they would cross the wire. */
  onFrame?: (to: string, frame: Uint8Array) => void
  /** Each document as the receiving node decoded it from its frame. */
  onDeliver?: (to: string, doc: Signed<unknown>) => void
  /** Pairs that cannot reach each other: a send between them fails (its fallback, if any, goes to the dealer). */
  unreachable?: (from: string, to: string) => boolean
  /** A document a machine refused (a Rejection, or a wire error). */
  onRejection?: (to: string, err: Error) => void
  /** The receiving node's held documents, for decodeFrame (a daemon's verify memo: VerifyMemo.intern). */
  intern?: (to: string) => Interner | undefined
}

/**
 * The dealer and seat machines of any hand family wired together without a network, for tests and
 * benchmarks: every document goes through the real wire encoding and schema check, and the effects
 * lists run in order, breadth first, as a node's host runs them. Returns the function that feeds
 * one list in; `role` says which machine of `from` produced it (needed only for a dealer node's
 * documents to itself, which go to its other machine, as src/daemon/table-host.ts routes them).
 */
export function inMemoryTable (init: InMemoryTableInit): (from: string, effects: Effect[], role?: MachineRole) => void {
  const queue: Array<{ from: string, effects: Effect[], role: MachineRole | undefined }> = []
  let running = false
  const deliver = (to: string, role: MachineRole, receive: () => Effect[]): void => {
    try {
      queue.push({ from: to, effects: receive(), role })
    } catch (err) {
      // A machine that failed on a step has ended the hand: its record still goes out.
      if (err instanceof MachineFailure) queue.push({ from: to, effects: err.effects, role })
      init.onRejection?.(to, err as Error)
    }
  }
  return (from, effects, role) => {
    queue.push({ from, effects, role })
    if (running) return
    running = true
    try {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        for (const e of next.effects) {
          if (e.kind !== 'send') { init.onEffect?.(next.from, e, next.role); continue }
          if (init.unreachable?.(next.from, e.to) === true) {
            if (e.fallback !== undefined) queue.push({ from: next.from, effects: [{ kind: 'send', to: init.dealerId, doc: e.fallback() }], role: next.role })
            continue
          }
          const intercept = init.intercept?.()
          const doc = intercept === undefined ? e.doc : intercept(next.from, e.to, e.doc)
          if (doc === undefined) continue
          const frame = encodeFrame(doc)
          init.onFrame?.(e.to, frame)
          try {
            const decoded = decodeFrame(frame, init.intern?.(e.to))
            init.onDeliver?.(e.to, decoded)
            // To itself, a dealer node's document goes to its other machine (the sender's role says which).
            const toSelf = e.to === next.from && next.role !== undefined
            const toDealer = e.to === init.dealerId && (toSelf ? next.role === 'seat' : isForDealer(decoded.type, next.from, init.dealerId, e.to))
            deliver(e.to, toDealer ? 'dealer' : 'seat', () => toDealer ? init.dealer.receive(next.from, decoded) : (init.seats.get(e.to) as SeatSide).receive(next.from, decoded))
            const ownSeat = init.seats.get(e.to)
            if (toDealer && ownSeat !== undefined && isAlsoForSeat(decoded.type, next.from, init.dealerId, e.to)) deliver(e.to, 'seat', () => ownSeat.receive(next.from, decoded))
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
