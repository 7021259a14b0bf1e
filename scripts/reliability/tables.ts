import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { verifyLogPayload } from '../../src/core/receipt.js'
import { Daemon } from '../../src/daemon/daemon.js'
import { EventWatcher, type NodeEvent } from '../../src/daemon/events.js'
import { isPortFree, prepareLocalTable } from '../../src/daemon/local-table.js'
import { verifyDataDir } from '../../src/daemon/verify-data.js'

/**
 * Many tables at once in one process, for the load test (test/load.test.ts, a few tables) and the
 * load and soak scripts (scripts/load.ts, scripts/soak.ts, the full sizes). A fairdeal node serves
 * ONE table (its config names one `table`), so "one dealer serving N tables" is N dealer nodes, each
 * with its table's seat node, all in this process over TCP on 127.0.0.1: the same code paths, and
 * every node shares this process's CPU and event loop, which is the load.
 *
 * Each table is a duo table (two seats: the dealer's node holds seat 0, a seat node seat 1), so a
 * hand crosses the network both ways (COMMIT, PLEDGE, PLEDGES, NONCE, CARDS, REVEAL, ACK, FINAL).
 * Afterwards every node's log is re-verified offline: a hand counts as done only if both logs hold
 * its receipt and both logs verify entry by entry.
 */
export interface TablesRun {
  tables: number
  handsPerTable: number
  /** Receipts both nodes of a table logged, summed over the tables. */
  handsDone: number
  aborted: number
  /** Hands that neither ended nor aborted within the per-hand timeout. */
  lost: number
  /** Log entries that verified offline, and those that did not, over every node. */
  verified: number
  unverified: number
  failures: string[]
  seconds: number
  memory: { start: MemorySample, end: MemorySample, samples: Array<{ hands: number } & MemorySample> }
}

export interface MemorySample { rssMB: number, heapUsedMB: number }

export function memorySample (): MemorySample {
  const m = process.memoryUsage()
  return { rssMB: Math.round(m.rss / 1048576), heapUsedMB: Math.round(m.heapUsed / 1048576) }
}

let nextPort = 30_000 + Math.floor(Math.random() * 10_000)
async function freePort (): Promise<number> {
  for (;;) {
    const port = nextPort++
    if (nextPort > 45_000) nextPort = 30_000
    if (await isPortFree(port)) return port
  }
}

export interface TablesOptions {
  tables: number
  hands: number
  /** Per hand: deal to receipt on both nodes. */
  handTimeoutMs?: number
  /** Called every `sampleEvery` hands done (over all tables) with a memory sample. */
  sampleEvery?: number
  onSample?: (hands: number, sample: MemorySample) => void
}

export async function runTables (options: TablesOptions): Promise<TablesRun> {
  const root = await mkdtemp(join(tmpdir(), 'fairdeal-tables-'))
  const logger = pino({ level: 'error' })
  const daemons: Daemon[] = []
  const run: TablesRun = {
    tables: options.tables, handsPerTable: options.hands, handsDone: 0, aborted: 0, lost: 0, verified: 0, unverified: 0,
    failures: [], seconds: 0, memory: { start: memorySample(), end: memorySample(), samples: [] }
  }
  const handTimeoutMs = options.handTimeoutMs ?? 60_000
  try {
    const tables = []
    for (let k = 0; k < options.tables; k++) {
      const local = await prepareLocalTable({
        root: join(root, `table-${k}`), game: 'duo', scheme: 'atout-v1', seats: 2, transport: 'tcp', tableId: `load-${k}`,
        timeouts: { contributeMs: 30_000, ackMs: 30_000, revealMs: 600_000 }, freePort
      })
      const nodes: Daemon[] = []
      for (const config of local.configs) {
        const d = await Daemon.start({ config, logger, tickMs: 100 })
        daemons.push(d)
        nodes.push(d)
      }
      tables.push({ local, nodes })
    }
    run.memory.start = memorySample()
    const started = performance.now()
    let done = 0
    const sampleEvery = options.sampleEvery ?? Number.MAX_SAFE_INTEGER
    await Promise.all(tables.map(async ({ nodes }) => {
      const [dealer, seat] = nodes
      for (let h = 0; h < options.hands; h++) {
        const outcome = await playOne(dealer, seat, h % 2, handTimeoutMs)
        if (outcome === 'done') run.handsDone++
        else if (outcome === 'aborted') run.aborted++
        else run.lost++
        done++
        if (done % sampleEvery === 0) {
          const s = memorySample()
          run.memory.samples.push({ hands: done, ...s })
          options.onSample?.(done, s)
        }
      }
    }))
    run.seconds = (performance.now() - started) / 1000
    run.memory.end = memorySample()
    for (const d of daemons.splice(0).reverse()) await d.stop({ graceMs: 0 })
    for (const { local } of tables) {
      for (const config of local.configs) {
        const verdict = await verifyDataDir(config.dataDir, verifyLogPayload)
        run.verified += verdict.passed
        run.unverified += verdict.failed
        run.failures.push(...verdict.failures.slice(0, 5).map(f => `${config.table.id}: ${f}`))
      }
    }
    return run
  } finally {
    for (const d of daemons.reverse()) await d.stop({ graceMs: 0 }).catch(() => {})
    await rm(root, { recursive: true, force: true })
  }
}

/** One hand, deal to both receipts; 'lost' if neither a receipt nor an abort came in time. */
async function playOne (dealer: Daemon, seat: Daemon, dealerSeat: number, timeoutMs: number): Promise<'done' | 'aborted' | 'lost'> {
  // Watchers that start at the feed's present, so a long run does not rescan (or keep) old events.
  const from = (d: Daemon): EventWatcher => {
    const start = d.events.last
    return new EventWatcher(async (after, waitMs) => await d.events.wait(Math.max(after, start), waitMs))
  }
  const watchDealer = from(dealer)
  const watchSeat = from(seat)
  const hand = await dealer.deal({ dealer: dealerSeat })
  const ended = (role: 'dealer' | 'seat') => (e: NodeEvent): boolean => e.hand === hand && e.role === role && (e.event.type === 'receipt' || e.event.type === 'aborted')
  const dealt = (e: NodeEvent): boolean => e.hand === hand && e.role === 'seat' && (e.event.type === 'cards' || e.event.type === 'aborted')
  try {
    const cards = await watchSeat.until(dealt, `hand ${hand} dealt`, timeoutMs)
    if (cards.event.type === 'aborted') return 'aborted'
    await dealer.end(hand)
    const [a, b] = await Promise.all([watchDealer.until(ended('dealer'), `hand ${hand} receipt`, timeoutMs), watchSeat.until(ended('seat'), `hand ${hand} receipt`, timeoutMs)])
    return a.event.type === 'receipt' && b.event.type === 'receipt' ? 'done' : 'aborted'
  } catch {
    return 'lost'
  }
}
