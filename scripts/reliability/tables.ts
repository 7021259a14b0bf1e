import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { verifyLogPayload } from '../../src/core/receipt.js'
import type { Receipt } from '../../src/core/hand/messages.js'
import { Daemon } from '../../src/daemon/daemon.js'
import { parseNodeConfig, type NodeConfig } from '../../src/daemon/config.js'
import { EventWatcher, type NodeEvent } from '../../src/daemon/events.js'
import { isPortFree } from '../../src/daemon/local-table.js'
import { verifyDataDir } from '../../src/daemon/verify-data.js'
import { loadOrCreateIdentity } from '../../src/net/identity.js'
import { logDbPath, openLog } from '../../src/store/log.js'

/**
 * ONE dealer node serving N tables at once, for the load test (test/load.test.ts, a few tables)
 * and the load and soak scripts (scripts/load.ts, scripts/soak.ts, the full sizes). Three nodes in
 * this process over TCP on 127.0.0.1: the dealer node (config `tables`, one block per table; it holds
 * no seat) and two seat nodes, each a member of every table (seat 0 and seat 1 of a duo table). So
 * every hand crosses the network between three nodes (COMMIT, PLEDGE, PLEDGES, VIEW, NONCE, CARDS,
 * REVEAL, ACK, FINAL), all N tables share the dealer's libp2p node, store, log and event loop, and
 * each seat node plays N tables at once too.
 *
 * Afterwards every node's log is re-verified offline, and a hand counts as done only if every
 * member's log (the dealer's and both seats') holds its receipt and every log verifies entry by entry.
 */
export interface TablesRun {
  tables: number
  handsPerTable: number
  /** Hands whose receipt every member logged and announced, summed over the tables. */
  handsDone: number
  aborted: number
  /** Hands that neither ended nor aborted within the per-hand timeout. */
  lost: number
  /** Log entries that verified offline, and those that did not, over every node. */
  verified: number
  unverified: number
  /** Receipts found in the logs, over every node (each hand once per member). */
  receiptsLogged: number
  failures: string[]
  seconds: number
  /** CPU time of this process while the hands were played (user + system), in seconds: every node's work. */
  cpuSeconds: number
  memory: { start: MemorySample, end: MemorySample, samples: Array<{ hands: number } & MemorySample> }
}

/** Nodes of a run: the dealer and the two seats; every hand's receipt is in each of their logs. */
export const MEMBERS_PER_HAND = 3

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
  /** Per hand: deal to receipt on every node. */
  handTimeoutMs?: number
  /** Called every `sampleEvery` hands done (over all tables) with a memory sample. */
  sampleEvery?: number
  onSample?: (hands: number, sample: MemorySample) => void
  /** Called once every hand is over, before the nodes stop (the test drives the control endpoint then). */
  whenPlayed?: (nodes: { dealer: Daemon, seats: Daemon[] }) => Promise<void>
}

/**
 * The three nodes' configs: one dealer node serving `tables` duo tables (`tables` in its config),
 * two seat nodes each holding one seat at every table. Written as files too (ROOT/NAME.json).
 */
export async function prepareTables (root: string, tables: number): Promise<NodeConfig[]> {
  const names = ['dealer', 'seat0', 'seat1']
  const ids = []
  for (const name of names) ids.push(await loadOrCreateIdentity(join(root, name)))
  const listens: string[] = []
  for (let i = 0; i < names.length; i++) listens.push(`/ip4/127.0.0.1/tcp/${await freePort()}`)
  const [dealer, ...seats] = ids.map(id => id.peerId)
  const configs: NodeConfig[] = []
  for (let i = 0; i < names.length; i++) {
    const peers = Object.fromEntries(ids.flatMap((id, j) => j === i ? [] : [[id.peerId, [listens[j]]]]))
    const raw = {
      data: names[i],
      listen: [listens[i]],
      web: { enabled: false },
      tables: [...Array(tables).keys()].map(k => ({
        id: `load-${k}`,
        game: 'duo',
        scheme: 'atout-v1',
        dealer,
        seats,
        peers,
        timeouts: { contributeMs: 30_000, ackMs: 30_000, revealMs: 600_000 }
      }))
    }
    const file = join(root, `${names[i]}.json`)
    await writeFile(file, JSON.stringify(raw, null, 2) + '\n')
    configs.push(await parseNodeConfig(raw, file))
  }
  return configs
}

export async function runTables (options: TablesOptions): Promise<TablesRun> {
  const root = await mkdtemp(join(tmpdir(), 'fairdeal-tables-'))
  const logger = pino({ level: 'error' })
  const daemons: Daemon[] = []
  const run: TablesRun = {
    tables: options.tables, handsPerTable: options.hands, handsDone: 0, aborted: 0, lost: 0, verified: 0, unverified: 0, receiptsLogged: 0,
    failures: [], seconds: 0, cpuSeconds: 0, memory: { start: memorySample(), end: memorySample(), samples: [] }
  }
  const handTimeoutMs = options.handTimeoutMs ?? 60_000
  try {
    const configs = await prepareTables(root, options.tables)
    for (const config of configs) daemons.push(await Daemon.start({ config, logger, tickMs: 100 }))
    const [dealer, ...seats] = daemons
    run.memory.start = memorySample()
    const started = performance.now()
    const cpuStart = process.cpuUsage()
    let done = 0
    const sampleEvery = options.sampleEvery ?? Number.MAX_SAFE_INTEGER
    await Promise.all(dealer.tables.map(async ({ id }) => {
      for (let h = 0; h < options.hands; h++) {
        const outcome = await playOne(id, dealer, seats, h % 2, handTimeoutMs)
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
    const cpu = process.cpuUsage(cpuStart)
    run.cpuSeconds = (cpu.user + cpu.system) / 1e6
    run.memory.end = memorySample()
    await options.whenPlayed?.({ dealer, seats })
    for (const d of daemons.splice(0).reverse()) await d.stop({ graceMs: 0 })
    for (const config of configs) {
      const verdict = await verifyDataDir(config.dataDir, verifyLogPayload)
      run.verified += verdict.passed
      run.unverified += verdict.failed + verdict.incomplete
      run.failures.push(...verdict.failures.slice(0, 5).map(f => `${config.dataDir}: ${f}`))
      // Nothing lost: every hand of every table is a receipt in this member's log.
      const receipts = await receiptsIn(config.dataDir)
      run.receiptsLogged += receipts.size
      for (const { table } of config.tables) {
        for (let hand = 1; hand <= options.hands; hand++) {
          if (!receipts.has(`${table.id}/${hand}`)) run.failures.push(`${config.dataDir}: no receipt of table ${table.id} hand ${hand}`)
        }
      }
    }
    return run
  } finally {
    for (const d of daemons.reverse()) await d.stop({ graceMs: 0 }).catch(() => {})
    await rm(root, { recursive: true, force: true })
  }
}

/** `table/hand` of every receipt in a stopped node's log. */
async function receiptsIn (dataDir: string): Promise<Set<string>> {
  const log = await openLog({ path: logDbPath(dataDir), create: false, signer: null })
  const found = new Set<string>()
  try {
    for await (const e of log.read()) {
      if (e.body.kind !== 'receipt') continue
      const { table, hand } = (e.body.payload as Receipt).commit.body
      found.add(`${table}/${hand}`)
    }
  } finally {
    await log.close()
  }
  return found
}

/** A watcher of one node's events from the feed's present on, so a long run neither rescans nor keeps old events. */
function watchFrom (d: Daemon): EventWatcher {
  const start = d.events.last
  return new EventWatcher(async (after, waitMs) => await d.events.wait(Math.max(after, start), waitMs))
}

/** One hand at one table, deal to every member's receipt; 'lost' if neither receipts nor an abort came in time. */
async function playOne (table: string, dealer: Daemon, seats: Daemon[], dealerSeat: number, timeoutMs: number): Promise<'done' | 'aborted' | 'lost'> {
  const watchDealer = watchFrom(dealer)
  const watchSeats = seats.map(watchFrom)
  const hand = await dealer.deal({ table, dealer: dealerSeat })
  const at = (e: NodeEvent, role: 'dealer' | 'seat'): boolean => e.table === table && e.hand === hand && e.role === role
  const ended = (role: 'dealer' | 'seat') => (e: NodeEvent): boolean => at(e, role) && (e.event.type === 'receipt' || e.event.type === 'aborted')
  const dealt = (e: NodeEvent): boolean => at(e, 'seat') && (e.event.type === 'cards' || e.event.type === 'aborted')
  try {
    const cards = await Promise.all(watchSeats.map(async w => await w.until(dealt, `table ${table} hand ${hand} dealt`, timeoutMs)))
    if (cards.some(c => c.event.type === 'aborted')) return 'aborted'
    await dealer.end(hand, table)
    const outcomes = await Promise.all([
      watchDealer.until(ended('dealer'), `table ${table} hand ${hand} receipt`, timeoutMs),
      ...watchSeats.map(async w => await w.until(ended('seat'), `table ${table} hand ${hand} receipt`, timeoutMs))
    ])
    return outcomes.every(o => o.event.type === 'receipt') ? 'done' : 'aborted'
  } catch {
    return 'lost'
  }
}
