// Real receipts for benchmarks: the dealer and seat state machines wired together in memory
// (src/protocol/in-memory.ts, as the tests' memory table does), every document going through the
// real wire encoding and schema check, signing and checking with Node's native Ed25519 and one verification
// memo per node, as the daemon does (without the memo each seat re-checks every signature it has
// already seen, several times over, and making a hand costs about five times as much).
// Lives in lib/ so the bench runner, which runs every module directly under scripts/bench/, skips it.
import { randomBytes } from 'node:crypto'
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import { signerFromSeed, type Signer } from '../../../src/core/identity.js'
import type { BeaconEntry, Receipt } from '../../../src/core/hand/messages.js'
import { nativeSigner } from '../../../src/crypto/native-crypto.js'
import { verifyMemo } from '../../../src/daemon/verify-memo.js'
import { DealerMachine } from '../../../src/protocol/dealer.js'
import { inMemoryTable } from '../../../src/protocol/in-memory.js'
import { SeatMachine } from '../../../src/protocol/seat.js'
import type { BeaconBindingConfig, TableSpec, TimelockConfig, Timeouts } from '../../../src/protocol/types.js'

export interface MemoryHands {
  table: TableSpec
  timeouts: Timeouts
  /** The table's clock (ms): hands commit at this time; move it to choose the bound beacon round. */
  clock: { now: number }
  /** Plays one whole hand and returns the receipt the dealer machine logs. */
  play: (beacon?: (round: number) => BeaconEntry) => Receipt
}

export function memoryHands (options: { game?: string, scheme?: string, seats?: number, beacon?: BeaconBindingConfig | null, now?: number, timelock?: TimelockConfig | null } = {}): MemoryHands {
  const game = options.game ?? 'coinche'
  const nSeats = options.seats ?? (game === 'duo' ? 2 : 4)
  const signers: Signer[] = Array.from({ length: nSeats }, () => {
    const seed = randomBytes(32)
    return nativeSigner(seed, signerFromSeed(seed).peerId)
  })
  const table: TableSpec = {
    id: 'bench-table',
    game,
    scheme: options.scheme ?? (game === 'tarot' ? 'tarot-v1' : 'atout-v1'),
    seats: signers.map(s => s.peerId),
    dealer: signers[0].peerId
  }
  const timeouts: Timeouts = { contributeMs: 5_000, ackMs: 5_000, revealMs: 60_000 }
  const clock = { now: options.now ?? 1_700_000_000_000 }
  const beacon = options.beacon ?? null
  const common = { table, timeouts, beacon, now: () => clock.now, random: (n: number) => randomBytes(n), timelock: options.timelock ?? null }
  // Seat 0 is the dealer node: its dealer and seat machines share that node's memo.
  const memos = signers.map(() => verifyMemo())
  const dealer = new DealerMachine({ ...common, signer: memos[0].signer(signers[0]), verifyDoc: memos[0].verify })
  const seats = new Map(signers.map((s, i) => [s.peerId, new SeatMachine({ ...common, signer: memos[i].signer(s), verifyDoc: memos[i].verify })]))

  let receipts: Receipt[] = []
  let fetches: Array<{ hand: number, round: number }> = []
  const run = inMemoryTable({
    dealerId: table.dealer,
    dealer,
    seats,
    onEffect: (from, e) => {
      if (e.kind === 'append' && e.entry === 'receipt' && from === table.dealer && (e.payload as Receipt).v === 1) {
        // The dealer node logs the receipt twice (dealer machine, its own seat): keep one.
        if (!receipts.some(r => r.commit.body.hand === e.hand)) receipts.push(e.payload as Receipt)
      } else if (e.kind === 'fetchBeacon') {
        fetches.push({ hand: e.hand, round: e.round })
      }
    },
    onRejection: (to, err) => { throw new Error(`${to} refused a document: ${err.message}`) },
    intern: to => memos[table.seats.indexOf(to)]?.intern
  })

  const play = (entryFor?: (round: number) => BeaconEntry): Receipt => {
    receipts = []
    fetches = []
    const { hand, effects } = dealer.startHand({ dealer: 0 })
    run(table.dealer, effects)
    for (const f of fetches) {
      if (entryFor === undefined) throw new Error(`hand ${hand} waits for beacon round ${f.round}: pass its entry`)
      run(table.dealer, dealer.beaconResult(f.hand, { entry: entryFor(f.round) }))
    }
    run(table.dealer, dealer.end(hand))
    const receipt = receipts.find(r => r.commit.body.hand === hand)
    if (receipt === undefined) throw new Error(`hand ${hand} ended without a receipt (phase ${String(dealer.status().find(h => h.hand === hand)?.phase)})`)
    return receipt
  }
  return { table, timeouts, clock, play }
}

/** Signed documents in a value, at any depth (a receipt's own, and those nested in its bodies). */
export function countSignatures (value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + countSignatures(v), 0)
  if (value === null || typeof value !== 'object') return 0
  const o = value as Record<string, unknown>
  const own = typeof o.type === 'string' && typeof o.signer === 'string' && typeof o.sig === 'string' && 'body' in o ? 1 : 0
  return own + Object.values(o).reduce((n: number, v) => n + countSignatures(v), 0)
}

/**
 * `count` coinche receipts (atout-v1, no beacon), made on `threads` worker threads, each playing
 * its own table: making a hand costs several times what verifying its receipt does.
 */
export async function generateReceipts (count: number, threads: number): Promise<Receipt[]> {
  const shares = Array.from({ length: threads }, (_, i) => Math.floor(count / threads) + (i < count % threads ? 1 : 0)).filter(n => n > 0)
  const parts = await Promise.all(shares.map(async hands => await new Promise<Receipt[]>((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { memoryHands: hands } })
    worker.once('message', resolve)
    worker.once('error', reject)
    worker.once('exit', code => { reject(new Error(`receipt generator thread exited with code ${code}`)) })
  })))
  return parts.flat()
}

if (!isMainThread && typeof (workerData as { memoryHands?: unknown })?.memoryHands === 'number') {
  const table = memoryHands()
  const receipts = Array.from({ length: (workerData as { memoryHands: number }).memoryHands }, () => table.play())
  parentPort?.postMessage(receipts)
}
