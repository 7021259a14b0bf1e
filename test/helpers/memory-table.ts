import { randomBytes } from 'node:crypto'
import { signerFromSeed, type Signer } from '../../src/core/identity.js'
import type { Signed } from '../../src/core/signed.js'
import { DealerMachine } from '../../src/protocol/dealer.js'
import { SeatMachine } from '../../src/protocol/seat.js'
import type { BeaconBindingConfig, Effect, TableSpec, Timeouts } from '../../src/protocol/types.js'
import { inMemoryTable } from '../../src/protocol/in-memory.js'

/**
 * The pure state machines wired together in memory, every message going through the real wire
 * encoding and schema check. For protocol tests that need no network; the libp2p tests run the
 * same machines over real nodes.
 */
export interface MemoryTable {
  table: TableSpec
  signers: Signer[]
  dealer: DealerMachine
  seats: Map<string, SeatMachine>
  /** Every frame delivered to a peer, in order (bytes as they would cross the wire). */
  frames: Map<string, Uint8Array[]>
  appended: Map<string, Array<{ entry: string, hand: number, payload: unknown }>>
  persisted: Map<string, Map<string, unknown>>
  rejections: Array<{ to: string, reason: string }>
  clock: { now: number }
  run: (from: string, effects: Effect[]) => void
  /** Intercepts a frame before delivery: return undefined to drop it, or a replacement document. */
  intercept?: (from: string, to: string, doc: Signed<unknown>) => Signed<unknown> | undefined
}

export function memoryTable (options: { game?: string, scheme?: string, robots?: number[], seats?: number, dealerSeat?: boolean, timeouts?: Partial<Timeouts>, beacon?: BeaconBindingConfig | null } = {}): MemoryTable {
  const game = options.game ?? 'coinche'
  const nSeats = options.seats ?? (game === 'duo' ? 2 : game === 'tarot' ? 4 : 4)
  const signers = Array.from({ length: nSeats + 1 }, () => signerFromSeed(randomBytes(32)))
  const dealerSigner = options.dealerSeat === false ? signers[nSeats] : signers[0]
  const seatsList = Array.from({ length: nSeats }, (_, i) => (options.robots ?? []).includes(i) ? 'robot' : signers[i].peerId)
  const table: TableSpec = { id: 'test-table', game, scheme: options.scheme ?? (game === 'tarot' ? 'tarot-v1' : 'atout-v1'), seats: seatsList, dealer: dealerSigner.peerId }
  const timeouts: Timeouts = { contributeMs: 5_000, ackMs: 5_000, revealMs: 60_000, ...options.timeouts }
  const clock = { now: 1_700_000_000_000 }
  const now = (): number => clock.now
  const random = (n: number): Uint8Array => randomBytes(n)
  const beacon = options.beacon ?? null
  const dealer = new DealerMachine({ table, signer: dealerSigner, timeouts, beacon, now, random })
  const seats = new Map<string, SeatMachine>()
  for (let i = 0; i < nSeats; i++) {
    if (seatsList[i] === 'robot') continue
    seats.set(signers[i].peerId, new SeatMachine({ table, signer: signers[i], timeouts, beacon, now, random }))
  }
  const t: MemoryTable = {
    table, signers, dealer, seats, clock,
    frames: new Map(), appended: new Map(), persisted: new Map(), rejections: [],
    run: () => {}
  }
  t.run = inMemoryTable({
    dealerId: table.dealer,
    dealer,
    seats,
    intercept: () => t.intercept,
    onEffect: (who, e) => {
      if (e.kind === 'persist') {
        const m = t.persisted.get(who) ?? new Map()
        if (e.value === null) m.delete(e.key); else m.set(e.key, structuredClone(e.value))
        t.persisted.set(who, m)
      } else if (e.kind === 'append') {
        const list = t.appended.get(who) ?? []
        list.push({ entry: e.entry, hand: e.hand, payload: e.payload })
        t.appended.set(who, list)
      }
    },
    onFrame: (to, frame) => {
      const list = t.frames.get(to) ?? []
      list.push(frame)
      t.frames.set(to, list)
    },
    onRejection: (to, err) => { t.rejections.push({ to, reason: err.message }) }
  })
  return t
}
