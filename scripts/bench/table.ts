// The table end to end (issue 3): a 4-node coinche table (atout-v1, no beacon) of in-process
// daemons on loopback TCP. Figures: the time from the deal() call to every seat holding its cards
// (p50, p99, hands one at a time), and hands per second with hands pipelined (K in flight: deal →
// cards on every seat → end → receipt on every node), each beside the goal.
//
// The bounds they are set against are measured in the same run: the messenger's round trip
// between two of the same nodes (5 one-way legs from COMMIT to CARDS), a synced LevelDB batch
// (3 on that path), and Ed25519 sign and verify on OpenSSL times the signatures the protocol makes
// and checks (each node checks every signature by another party once: see verify-memo.ts). All
// four nodes share this process's one JavaScript thread, so every node's work adds up on it; the
// core-per-node bound is what the same path costs when each node works on its own core.
// FAIRDEAL_BENCH_HANDS changes the number of hands per figure.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import pino from 'pino'
import { signerFromSeed } from '../../src/core/identity.js'
import { signDocument } from '../../src/core/signed.js'
import { Daemon } from '../../src/daemon/daemon.js'
import { prepareLocalTable } from '../../src/daemon/local-table.js'
import { nativeSigner, nativeVerifyDocument } from '../../src/daemon/native-crypto.js'
import { createMessenger } from '../../src/net/messenger.js'
import type { NodeEvent } from '../../src/daemon/events.js'

const HANDS = Number(process.env.FAIRDEAL_BENCH_HANDS ?? 500)
const WARMUP_HANDS = 20
const PIPELINE_DEPTHS = [4, 16]
const RTT_SAMPLES = 1000
const SYNC_SAMPLES = 200
const CRYPTO_SAMPLES = 2000
const SEATS = 4
/** One-way legs from COMMIT to CARDS: COMMIT, PLEDGE, PLEDGES, NONCE, CARDS. */
const LEGS = 5
/** Synced writes one after the other on that path: the dealer's before COMMIT, the seat's before PLEDGE, the dealer's before CARDS. */
const SYNCED_WRITES = 3
const GOALS = { p50: 5, p99: 25, handsPerSecond: 200 }

/**
 * Ed25519 operations of one hand, for h human seats, the dealer's node holding seat 0. A node checks
 * each signature made by another node once, and none of its own (verify-memo.ts).
 */
function cryptoCounts (h: number): Record<'pathVerify' | 'pathSign' | 'coreVerify' | 'coreSign' | 'handVerify' | 'handSign', number> {
  return {
    // Commit → cards, all nodes on one thread: the commit at h-1 seats, h-1 pledges at the dealer,
    // at each of h-1 seats the PLEDGES and the h-1 pledges not its own, h-1 nonces, h-1 cards.
    pathVerify: (h - 1) * (h + 4),
    // The commit, h pledges, the PLEDGES, h nonces, h cards messages.
    pathSign: 3 * h + 2,
    // The same path with a core per node: only the last pledge and nonce to arrive wait at the
    // dealer; a seat checks the commit, then the PLEDGES and h-1 pledges, then its cards.
    coreVerify: h + 4,
    coreSign: h + 4,
    // The whole hand: the above, plus every nonce and countersignature (3 per pair of nodes), the
    // reveal and the final receipt at each seat node.
    handVerify: (h - 1) * (3 * h + 5),
    // commit, pledges, reveal, final; per seat pledge, nonce, cards, ack; per node a log entry and head.
    handSign: 4 + 6 * h
  }
}

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

/** Per hand, when each node saw what: filled from every node's event feed as events arrive. */
class HandWatch {
  readonly #nodes: Daemon[]
  readonly #cards = new Map<number, Map<number, number>>()
  readonly #receipts = new Map<number, Set<number>>()
  readonly #waiters = new Map<number, Array<() => void>>()
  readonly aborted: string[] = []
  #running = true

  constructor (nodes: Daemon[]) {
    this.#nodes = nodes
    nodes.forEach((d, i) => { void this.#follow(d, i) })
  }

  async #follow (daemon: Daemon, index: number): Promise<void> {
    let cursor = daemon.events.last
    while (this.#running) {
      const events = await daemon.events.wait(cursor, 200)
      const now = performance.now()
      for (const e of events) { cursor = e.seq; this.#see(index, e, now) }
    }
  }

  #see (node: number, e: NodeEvent, now: number): void {
    if (e.role !== 'seat') return
    const ev = e.event
    if (ev.type === 'cards' && ev.stage === 'deal' && !ev.public) {
      let m = this.#cards.get(e.hand)
      if (m === undefined) this.#cards.set(e.hand, m = new Map())
      m.set(node, now)
    } else if (ev.type === 'receipt') {
      let s = this.#receipts.get(e.hand)
      if (s === undefined) this.#receipts.set(e.hand, s = new Set())
      s.add(node)
    } else if (ev.type === 'aborted') {
      this.aborted.push(`hand ${e.hand}: ${ev.reason} (${ev.detail})`)
    } else return
    const waiters = this.#waiters.get(e.hand)
    if (waiters !== undefined) { this.#waiters.delete(e.hand); for (const w of waiters) w() }
  }

  async #until (hand: number, done: () => boolean): Promise<void> {
    const deadline = Date.now() + 30_000
    while (!done()) {
      if (this.aborted.length > 0) throw new Error(`aborted: ${this.aborted[0]}`)
      if (Date.now() > deadline) throw new Error(`hand ${hand} stalled`)
      await new Promise<void>(resolve => {
        const list = this.#waiters.get(hand) ?? []
        list.push(resolve)
        this.#waiters.set(hand, list)
        setTimeout(resolve, 1_000).unref()
      })
    }
  }

  /** Resolves with the time the last seat got its cards. */
  async cards (hand: number): Promise<number> {
    await this.#until(hand, () => (this.#cards.get(hand)?.size ?? 0) === this.#nodes.length)
    const at = Math.max(...(this.#cards.get(hand) as Map<number, number>).values())
    this.#cards.delete(hand)
    return at
  }

  async receipts (hand: number): Promise<void> {
    await this.#until(hand, () => (this.#receipts.get(hand)?.size ?? 0) === this.#nodes.length)
    this.#receipts.delete(hand)
  }

  stop (): void { this.#running = false }
}

/** One whole hand; returns ms from the deal() call to the last seat holding its cards. */
async function playHand (dealer: Daemon, watch: HandWatch): Promise<number> {
  const t0 = performance.now()
  const hand = await dealer.deal()
  const dealt = await watch.cards(hand)
  await dealer.end(hand)
  await watch.receipts(hand)
  return dealt - t0
}

/** Raw messenger round trip between the dealer's node and a seat's, on their existing connection. */
async function messengerRtt (a: Daemon, b: Daemon): Promise<{ p50: number, p99: number }> {
  const logger = pino({ level: 'silent' })
  const protocol = '/fairdeal-bench/echo/1'
  const ma = await createMessenger(a.node, { protocol, maxFrameBytes: 4096, logger })
  const mb = await createMessenger(b.node, { protocol, maxFrameBytes: 4096, logger })
  try {
    mb.onFrame(async (from, frame) => { await mb.send(from, frame) })
    let pending: (() => void) | undefined
    ma.onFrame(() => { const p = pending; pending = undefined; p?.() })
    // About the size of a COMMIT frame.
    const frame = new Uint8Array(1200).fill(0x61)
    const samples: number[] = []
    for (let i = 0; i < RTT_SAMPLES + 100; i++) {
      const t0 = performance.now()
      const back = new Promise<void>(resolve => { pending = resolve })
      await ma.send(b.peerId, frame)
      await back
      if (i >= 100) samples.push(performance.now() - t0)
    }
    samples.sort((x, y) => x - y)
    return { p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) }
  } finally {
    await ma.close()
    await mb.close()
  }
}

/** A synced LevelDB batch of a hand snapshot and the meta record, as the daemon's persist effects do. */
async function syncedPut (dir: string): Promise<{ p50: number, p99: number }> {
  const db = new Level<string, unknown>(join(dir, 'sync-db'), { valueEncoding: 'json' })
  await db.open()
  const value = { blob: 'x'.repeat(3000) }
  const samples: number[] = []
  try {
    for (let i = 0; i < SYNC_SAMPLES + 20; i++) {
      const t0 = performance.now()
      const ops: Array<{ type: 'put', key: string, value: unknown }> = [{ type: 'put', key: `k${i % 8}`, value }, { type: 'put', key: 'meta', value: { n: i } }]
      await db.batch(ops, { sync: true } as never)
      if (i >= 20) samples.push(performance.now() - t0)
    }
  } finally {
    await db.close()
  }
  samples.sort((x, y) => x - y)
  return { p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) }
}

/** Mean ms of one native Ed25519 signature and one check, on a pledge-sized document. */
function ed25519Costs (): { sign: number, verify: number } {
  const seed = new Uint8Array(32).fill(7)
  const signer = nativeSigner(seed, signerFromSeed(seed).peerId)
  const body = { table: 'demo-table', hand: 1, commit: 'ab'.repeat(32), seat: 1, nonceHash: 'cd'.repeat(32) }
  const doc = signDocument('pledge', body, signer)
  const time = (fn: () => unknown): number => {
    for (let i = 0; i < 200; i++) fn()
    const t0 = performance.now()
    for (let i = 0; i < CRYPTO_SAMPLES; i++) fn()
    return (performance.now() - t0) / CRYPTO_SAMPLES
  }
  const sign = time(() => signDocument('pledge', body, signer))
  const verify = time(() => { if (!nativeVerifyDocument(doc)) throw new Error('the bench document does not verify') })
  return { sign, verify }
}

const f2 = (x: number): string => x.toFixed(2)
const verdict = (ok: boolean): string => ok ? 'met' : 'NOT met'

export async function run (): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'fairdeal-bench-table-'))
  const logger = pino({ level: 'silent' })
  const daemons: Daemon[] = []
  try {
    const table = await prepareLocalTable({
      root,
      game: 'coinche',
      scheme: 'atout-v1',
      seats: 4,
      beacon: 'none',
      transport: 'tcp',
      // Generous: a slow machine must not turn the benchmark into a test of the deadlines.
      timeouts: { contributeMs: 60_000, ackMs: 60_000, revealMs: 600_000 }
    })
    for (const config of table.configs) daemons.push(await Daemon.start({ config, logger }))
    const dealer = daemons[0]
    const watch = new HandWatch(daemons)

    // Connections up, code warm.
    for (let i = 0; i < WARMUP_HANDS; i++) await playHand(dealer, watch)

    const rtt = await messengerRtt(dealer, daemons[1])
    const sync = await syncedPut(root)
    const ed = ed25519Costs()
    const n = cryptoCounts(SEATS)
    const network = rtt.p50 * LEGS / 2
    const disk = sync.p50 * SYNCED_WRITES
    const onePath = network + disk + n.pathVerify * ed.verify + n.pathSign * ed.sign
    const corePath = network + disk + n.coreVerify * ed.verify + n.coreSign * ed.sign
    const handCrypto = n.handVerify * ed.verify + n.handSign * ed.sign
    console.log(`${SEATS}-node coinche table (atout-v1, no beacon), in-process daemons over loopback TCP; ${HANDS} hands per figure`)
    console.log(`measured: messenger rtt p50 ${f2(rtt.p50)} ms (p99 ${f2(rtt.p99)}); synced LevelDB batch p50 ${f2(sync.p50)} ms (p99 ${f2(sync.p99)});` +
      ` Ed25519 sign ${(ed.sign * 1000).toFixed(0)} µs, verify ${(ed.verify * 1000).toFixed(0)} µs`)
    console.log(`bounds, commit → cards: network ${LEGS} legs ${f2(network)} ms; + ${SYNCED_WRITES} synced writes + ${n.pathVerify} verifications and ${n.pathSign} signatures` +
      ` on one thread = ${f2(onePath)} ms; with a core per node (${n.coreVerify} + ${n.coreSign} on the path) = ${f2(corePath)} ms`)
    console.log(`bounds, throughput: ${n.handVerify} verifications + ${n.handSign} signatures per hand = ${f2(handCrypto)} ms of one thread, at most ${(1000 / handCrypto).toFixed(0)} hands/s in one process`)

    const latencies: number[] = []
    let cpu = process.cpuUsage()
    for (let i = 0; i < HANDS; i++) latencies.push(await playHand(dealer, watch))
    cpu = process.cpuUsage(cpu)
    latencies.sort((a, b) => a - b)
    const p50 = percentile(latencies, 0.5)
    const p99 = percentile(latencies, 0.99)
    console.log(`commit → every seat holds its cards (one hand at a time; cpu ${((cpu.user + cpu.system) / 1000 / HANDS).toFixed(1)} ms per hand, all nodes):`)
    for (const [name, value, goal] of [['p50', p50, GOALS.p50], ['p99', p99, GOALS.p99]] as const) {
      console.log(`  ${name} ${f2(value).padStart(6)} ms  goal < ${String(goal).padEnd(2)} ms ${verdict(value < goal).padEnd(7)}` +
        `  ×${f2(value / network)} the network legs, ×${f2(value / onePath)} the one-thread bound, ×${f2(value / corePath)} the core-per-node bound`)
    }

    for (const depth of PIPELINE_DEPTHS) {
      let next = 0
      const inFlight: number[] = []
      const t0 = performance.now()
      const cpu0 = process.cpuUsage()
      await Promise.all(Array.from({ length: depth }, async () => {
        while (next < HANDS) { next++; inFlight.push(await playHand(dealer, watch)) }
      }))
      const seconds = (performance.now() - t0) / 1000
      const used = process.cpuUsage(cpu0)
      const cpuMs = (used.user + used.system) / 1000
      const rate = HANDS / seconds
      inFlight.sort((a, b) => a - b)
      console.log(`pipelined, ${String(depth).padStart(2)} in flight: ${rate.toFixed(0).padStart(4)} hands/s  goal > ${GOALS.handsPerSecond}  ${verdict(rate > GOALS.handsPerSecond).padEnd(7)}` +
        `  ${(100 * rate * handCrypto / 1000).toFixed(0)}% of the one-process signature bound;` +
        ` cpu ${(cpuMs / HANDS).toFixed(1)} ms per hand (${(cpuMs / 10 / seconds).toFixed(0)}% of a core);` +
        ` commit → cards under load p50 ${f2(percentile(inFlight, 0.5))} ms, p99 ${f2(percentile(inFlight, 0.99))} ms`)
    }
    if (watch.aborted.length > 0) console.log(`aborted hands: ${watch.aborted.length} (first: ${watch.aborted[0]})`)
    const rejected = daemons.reduce((sum, d) => sum + d.rejections, 0)
    if (rejected > 0) console.log(`rejected messages: ${rejected}`)
    watch.stop()
  } finally {
    for (const d of daemons.reverse()) await d.stop({ graceMs: 0 }).catch(() => {})
    await rm(root, { recursive: true, force: true })
  }
}
