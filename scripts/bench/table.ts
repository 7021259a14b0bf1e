// The table end to end (issue 3): a 4-node coinche table (atout-v1, no beacon) of in-process
// daemons on loopback. Figures: the time from the deal() call to every seat holding its cards
// (p50, p99, hands one at a time), and hands per second with hands pipelined (K in flight: deal →
// cards on every seat → end → receipt on every node). Each is printed beside the goal and
// against a floor measured in the same run: the messenger's raw round trip between two of the
// same nodes times the 2.5 round trips (5 one-way legs: COMMIT, PLEDGE, PLEDGES, NONCE, CARDS) a
// deal needs, and that plus the synced LevelDB writes on the same path.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import pino from 'pino'
import { Daemon } from '../../src/daemon/daemon.js'
import { prepareLocalTable } from '../../src/daemon/local-table.js'
import { createMessenger } from '../../src/net/messenger.js'
import type { NodeEvent } from '../../src/daemon/events.js'

const HANDS = Number(process.env.FAIRDEAL_BENCH_HANDS ?? 500)
const WARMUP_HANDS = 20
const PIPELINE_DEPTHS = [4, 16]
const RTT_SAMPLES = 1000
const SYNC_SAMPLES = 200
/** One-way legs from COMMIT to CARDS: COMMIT, PLEDGE, PLEDGES, NONCE, CARDS. */
const LEGS = 5
/**
 * Synced writes one after the other on that path: the dealer's hand and meta before COMMIT, the
 * seat's hand and meta before PLEDGE, the dealer's hand after the last NONCE and after the deal.
 */
const SYNCED_WRITES = 6
const GOALS = { p50: 5, p99: 25, handsPerSecond: 200 }

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

/** A synced LevelDB put of a hand-snapshot-sized value, as the daemon's persist effect does. */
async function syncedPut (dir: string): Promise<{ p50: number, p99: number }> {
  const db = new Level<string, unknown>(join(dir, 'sync-db'), { valueEncoding: 'json' })
  await db.open()
  const value = { blob: 'x'.repeat(3000) }
  const samples: number[] = []
  try {
    for (let i = 0; i < SYNC_SAMPLES + 20; i++) {
      const t0 = performance.now()
      await db.put(`k${i % 8}`, value, { sync: true } as never)
      if (i >= 20) samples.push(performance.now() - t0)
    }
  } finally {
    await db.close()
  }
  samples.sort((x, y) => x - y)
  return { p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) }
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
    const netFloor = rtt.p50 * LEGS / 2
    const floor = netFloor + sync.p50 * SYNCED_WRITES
    console.log(`4-node coinche table (atout-v1, no beacon), in-process daemons over loopback TCP; ${HANDS} hands per figure`)
    console.log(`floor: messenger rtt p50 ${f2(rtt.p50)} ms (p99 ${f2(rtt.p99)}) × ${LEGS / 2} = ${f2(netFloor)} ms;` +
      ` synced LevelDB put p50 ${f2(sync.p50)} ms (p99 ${f2(sync.p99)}) × ${SYNCED_WRITES}; together ${f2(floor)} ms`)

    const latencies: number[] = []
    let cpu = process.cpuUsage()
    for (let i = 0; i < HANDS; i++) latencies.push(await playHand(dealer, watch))
    cpu = process.cpuUsage(cpu)
    console.log(`cpu per hand (all 4 nodes, one process): ${((cpu.user + cpu.system) / 1000 / HANDS).toFixed(2)} ms`)
    latencies.sort((a, b) => a - b)
    const p50 = percentile(latencies, 0.5)
    const p99 = percentile(latencies, 0.99)
    console.log(`commit → every seat holds its cards (one hand at a time):`)
    console.log(`  p50 ${f2(p50).padStart(6)} ms  goal < ${GOALS.p50} ms   ${verdict(p50 < GOALS.p50).padEnd(7)}  ×${f2(p50 / netFloor)} the network legs, ×${f2(p50 / floor)} network + synced writes`)
    console.log(`  p99 ${f2(p99).padStart(6)} ms  goal < ${GOALS.p99} ms  ${verdict(p99 < GOALS.p99).padEnd(7)}  ×${f2(p99 / netFloor)} the network legs, ×${f2(p99 / floor)} network + synced writes`)

    for (const depth of PIPELINE_DEPTHS) {
      let next = 0
      const inFlight: number[] = []
      const t0 = performance.now()
      const cpu0 = process.cpuUsage()
      await Promise.all(Array.from({ length: depth }, async () => {
        while (next < HANDS) { next++; inFlight.push(await playHand(dealer, watch)) }
      }))
      const seconds = (performance.now() - t0) / 1000
      const cpuUsed = process.cpuUsage(cpu0)
      console.log(`  cpu ${((cpuUsed.user + cpuUsed.system) / 1000 / HANDS).toFixed(2)} ms per hand, ${((cpuUsed.user + cpuUsed.system) / 1e4 / seconds).toFixed(0)}% of one core`)
      const rate = HANDS / seconds
      inFlight.sort((a, b) => a - b)
      // What one hand at a time would give if each took only the floor: the pipelining gain over it.
      const sequentialFloor = 1000 / floor
      console.log(`pipelined, ${String(depth).padStart(2)} hands in flight: ${rate.toFixed(0).padStart(5)} hands/s  goal > ${GOALS.handsPerSecond}  ${verdict(rate > GOALS.handsPerSecond).padEnd(7)}` +
        `  ×${f2(rate / sequentialFloor)} one-at-a-time at the floor (${sequentialFloor.toFixed(0)}/s);` +
        ` deal latency under load p50 ${f2(percentile(inFlight, 0.5))} ms p99 ${f2(percentile(inFlight, 0.99))} ms`)
    }
    if (watch.aborted.length > 0) console.log(`aborted hands: ${watch.aborted.length} (first: ${watch.aborted[0]})`)
    const rejected = daemons.reduce((n, d) => n + d.rejections, 0)
    if (rejected > 0) console.log(`rejected messages: ${rejected}`)
    watch.stop()
  } finally {
    for (const d of daemons.reverse()) await d.stop({ graceMs: 0 }).catch(() => {})
    await rm(root, { recursive: true, force: true })
  }
}
