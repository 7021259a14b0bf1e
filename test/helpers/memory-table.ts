import { createHash, randomBytes } from 'node:crypto'
import { signerFromSeed, type Signer } from '../../src/core/identity.js'
import { nativeSigner } from '../../src/crypto/native-crypto.js'
import { verifyMemo } from '../../src/daemon/verify-memo.js'
import type { Signed } from '../../src/core/signed.js'
import { DealerMachine, dealerHandKey, dealerMetaKey, type DealerHandSnapshot, type DealerMeta } from '../../src/protocol/dealer.js'
import { SeatMachine, seatHandKey, seatMetaKey, type SeatHandSnapshot, type SeatMeta } from '../../src/protocol/seat.js'
import type { BeaconBindingConfig, Effect, HandEvent, MachineInit, TableSpec, TimelockConfig, Timeouts } from '../../src/protocol/types.js'
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
  /** Every event effect, by the peer whose machine raised it (the dealer node's seat and dealer alike). */
  events: Map<string, Array<{ hand: number, event: HandEvent }>>
  clock: { now: number }
  run: (from: string, effects: Effect[]) => void
  /** Intercepts a frame before delivery: return undefined to drop it, or a replacement document. */
  intercept?: (from: string, to: string, doc: Signed<unknown>) => Signed<unknown> | undefined
  /** Pairs of peers that cannot reach each other (a seat's view then goes through the dealer). */
  unreachable?: (from: string, to: string) => boolean
  /**
   * A crash and restart of the dealer machine: a new one, restored from nothing but what the old
   * one had persisted. Returns the effects its restore asks for (not run).
   */
  restartDealer: () => Effect[]
  /** The same for one seat's machine. Returns the effects its restore asks for (its ASKs; not run). */
  restartSeat: (peer: string) => Effect[]
}

export interface MemoryTableOptions {
  game?: string
  scheme?: string
  robots?: number[]
  seats?: number
  dealerSeat?: boolean
  timeouts?: Partial<Timeouts>
  beacon?: BeaconBindingConfig | null
  timelock?: TimelockConfig | null
  /**
   * 'native' (the default) signs and checks like a Daemon: OpenSSL Ed25519 behind one verify memo
   * per node, several times faster; 'pure' uses the core's @noble signer and verifier.
   */
  crypto?: 'native' | 'pure'
  /** The dealer machine's signature check, in place of the usual one (a test makes it fail). */
  dealerVerifyDoc?: MachineInit['verifyDoc']
  /**
   * Makes the keys, the dealer's secrets and the seats' nonces a function of this string, so two
   * tables built with the same seed and fed the same inputs end with byte-identical receipts.
   */
  seed?: string
}

/** n bytes from sha256(seed | label | counter): deterministic, for tests only. */
function seededBytes (seed: string, label: string): (n: number) => Uint8Array {
  let counter = 0
  return (n) => {
    const out = new Uint8Array(n)
    for (let off = 0; off < n; off += 32) {
      out.set(createHash('sha256').update(`${seed}|${label}|${counter++}`).digest().subarray(0, Math.min(32, n - off)), off)
    }
    return out
  }
}

export function memoryTable (options: MemoryTableOptions = {}): MemoryTable {
  const game = options.game ?? 'coinche'
  const nSeats = options.seats ?? (game === 'duo' ? 2 : game === 'tarot' ? 4 : 4)
  const native = (options.crypto ?? 'native') === 'native'
  const keySeed = options.seed === undefined ? undefined : seededBytes(options.seed, 'keys')
  const signers = Array.from({ length: nSeats + 1 }, () => {
    const seed = keySeed?.(32) ?? randomBytes(32)
    const pure = signerFromSeed(seed)
    return native ? nativeSigner(seed, pure.peerId) : pure
  })
  // One memo per node, shared by the dealer's and the seat's machine of the dealer's node (as in a Daemon).
  const memos = new Map(signers.map(s => [s.peerId, verifyMemo()]))
  const crypto = (signer: Signer): { signer: Signer, verifyDoc?: (doc: Signed<unknown>) => boolean } => {
    const memo = memos.get(signer.peerId)
    return native && memo !== undefined ? { signer: memo.signer(signer), verifyDoc: memo.verify } : { signer }
  }
  const dealerSigner = options.dealerSeat === false ? signers[nSeats] : signers[0]
  const seatsList = Array.from({ length: nSeats }, (_, i) => (options.robots ?? []).includes(i) ? 'robot' : signers[i].peerId)
  const table: TableSpec = { id: 'test-table', game, scheme: options.scheme ?? (game === 'tarot' ? 'tarot-v1' : 'atout-v1'), seats: seatsList, dealer: dealerSigner.peerId }
  const timeouts: Timeouts = { contributeMs: 5_000, ackMs: 5_000, revealMs: 60_000, ...options.timeouts }
  const clock = { now: 1_700_000_000_000 }
  const now = (): number => clock.now
  const beacon = options.beacon ?? null
  // Each machine its own stream, so one machine's draws do not shift another's.
  const randomFor = (signer: Signer, role: string): ((n: number) => Uint8Array) =>
    options.seed === undefined ? (n) => randomBytes(n) : seededBytes(options.seed, `${role}|${signer.peerId}`)
  const init = (signer: Signer, role: 'dealer' | 'seat' = 'dealer'): MachineInit => ({ table, ...crypto(signer), timeouts, beacon, now, random: randomFor(signer, role), timelock: options.timelock ?? null })
  const dealerInit = (): MachineInit => options.dealerVerifyDoc === undefined ? init(dealerSigner) : { ...init(dealerSigner), verifyDoc: options.dealerVerifyDoc }
  const dealer = new DealerMachine(dealerInit())
  const seats = new Map<string, SeatMachine>()
  for (let i = 0; i < nSeats; i++) {
    if (seatsList[i] === 'robot') continue
    seats.set(signers[i].peerId, new SeatMachine(init(signers[i], 'seat')))
  }
  /** What a machine had persisted under `prefix`, in key order, as a restarted node reads it back. */
  const saved = <T>(peer: string, prefix: string): T[] =>
    [...(t.persisted.get(peer) ?? new Map<string, unknown>())].filter(([k]) => k.startsWith(prefix)).sort(([a], [b]) => a < b ? -1 : 1).map(([, v]) => structuredClone(v) as T)
  const t: MemoryTable = {
    table, signers, dealer, seats, clock,
    frames: new Map(), appended: new Map(), persisted: new Map(), rejections: [], events: new Map(),
    run: () => {},
    restartDealer: () => {
      t.dealer = new DealerMachine(dealerInit())
      const meta = t.persisted.get(table.dealer)?.get(dealerMetaKey(table.id)) as DealerMeta | undefined
      const logged = (t.appended.get(table.dealer) ?? []).map(e => ({ kind: e.entry, payload: structuredClone(e.payload) }))
      return t.dealer.restore(meta === undefined ? undefined : structuredClone(meta), saved<DealerHandSnapshot>(table.dealer, dealerHandKey(table.id, 0).slice(0, -16)), logged)
    },
    restartSeat: (peer) => {
      const machine = new SeatMachine(init(signers.find(s => s.peerId === peer) as Signer, 'seat'))
      const meta = t.persisted.get(peer)?.get(seatMetaKey(table.id)) as SeatMeta | undefined
      seats.set(peer, machine)
      return machine.restore(meta === undefined ? undefined : structuredClone(meta), saved<SeatHandSnapshot>(peer, seatHandKey(table.id, 0).slice(0, -16)))
    }
  }
  t.run = inMemoryTable({
    dealerId: table.dealer,
    // Read at each delivery: a restarted dealer machine takes the place of the old one.
    get dealer () { return t.dealer },
    seats,
    intercept: () => t.intercept,
    unreachable: (from, to) => t.unreachable?.(from, to) ?? false,
    onEffect: (who, e) => {
      if (e.kind === 'persist') {
        const m = t.persisted.get(who) ?? new Map()
        if (e.value === null) m.delete(e.key); else m.set(e.key, structuredClone(e.value))
        t.persisted.set(who, m)
      } else if (e.kind === 'append') {
        const list = t.appended.get(who) ?? []
        list.push({ entry: e.entry, hand: e.hand, payload: e.payload })
        t.appended.set(who, list)
      } else if (e.kind === 'event') {
        const list = t.events.get(who) ?? []
        list.push({ hand: e.hand, event: e.event })
        t.events.set(who, list)
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
