// Seats in the browser (issue 20): COMMIT → cards for a 4-seat coinche table (atout-v1, no beacon)
// whose three seats are seat pages in headless Chromium, joined from the links `table new` printed,
// beside the same table with three seat nodes (the bound, measured in the same run), and the same
// node table with its dealer behind NAT too, everyone reaching everyone through a relay. The dealers
// run in this process; every seat listens nowhere and dials the dealer (the pages over WebSockets,
// the nodes over TCP), so the only difference is the seat itself: js-libp2p and the seat machine in
// a page, IndexedDB for its saves. Figure: from the dealer's 'committed' event to the last seat's
// own cards (the node seats' 'cards' events; a page's `data-cards-at`, the high-resolution wall
// clock when its cards came), p50 and p99. FAIRDEAL_BENCH_HANDS sets the hands (default 200; at
// most 40 here for the pages, which take a second or so a hand to end and log). Needs Debian's
// Chromium at /usr/bin/chromium (skipped without).
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import pino from 'pino'
import { Daemon } from '../../src/daemon/daemon.js'
import type { EventWatcher, NodeEvent } from '../../src/daemon/events.js'
import { loadNodeConfig } from '../../src/daemon/config.js'
import { gatherSeats, readDraft, type Draft } from '../../src/daemon/table-join.js'
import { loadIdentity } from '../../src/net/identity.js'
import { signerFromSeed } from '../../src/core/identity.js'
import { freeLoopbackPort } from '../../src/net/ports.js'
import { localTable } from './table.js'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { createRelay } from '../../src/net/relay.js'

const CHROMIUM = process.env.FAIRDEAL_CHROMIUM ?? '/usr/bin/chromium'
const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const WARMUP_HANDS = 3
const HANDS = Math.min(40, Number(process.env.FAIRDEAL_BENCH_HANDS ?? 200))

interface Figures { p50: number, p99: number, hands: number }

function percentile (xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]
}

/** Deals, times and ends `HANDS` hands (after the warm-up) on a dealer; `cardsAt` says when every seat held its cards. */
async function play (dealer: Daemon, cardsAt: (hand: number) => Promise<number>, ended: (hand: number) => Promise<void>): Promise<Figures> {
  const watcher: EventWatcher = dealer.events.watch()
  const times: number[] = []
  for (let h = 0; h < WARMUP_HANDS + HANDS; h++) {
    const hand = await dealer.deal()
    const is = (type: NodeEvent['event']['type']) => (e: NodeEvent) => e.hand === hand && e.role === 'dealer' && (e.event.type === type || e.event.type === 'aborted')
    const committed = await watcher.until(is('committed'), `hand ${hand} committed`, 60_000)
    const last = await cardsAt(hand)
    if (h >= WARMUP_HANDS) times.push(last - committed.time)
    await dealer.end(hand)
    await ended(hand)
  }
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99), hands: times.length }
}

/**
 * The node seats' table; `relayed`: its dealer listens nowhere too and everyone reaches everyone
 * through a `fairdeal relay` (in this process), as a table whose dealer is behind NAT.
 */
async function nodeSeats (root: string, relayed = false): Promise<Figures> {
  const table = await localTable(root, { seatsListenNowhere: true })
  const logger = pino({ level: 'silent' })
  const daemons: Daemon[] = []
  const relay = relayed ? await createRelay({ privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'], members: new Set(table.peerIds), logger }) : undefined
  const configs = relay === undefined
    ? table.configs
    : table.configs.map(c => {
      const address = relay.getMultiaddrs()[0].toString()
      const tables = c.tables.map(t => ({ ...t, peers: {}, relay: address }))
      return { ...c, ...tables[0], tables, listen: [] }
    })
  try {
    for (const config of configs) daemons.push(await Daemon.start({ config, logger }))
    const dealer = daemons[0]
    const deadline = Date.now() + 15_000
    while (dealer.node.getConnections().length < 3) {
      if (Date.now() > deadline) throw new Error('the seats did not dial in')
      await new Promise(resolve => setTimeout(resolve, 20))
    }
    const watchers = daemons.map(d => d.events.watch())
    const seatEvent = (i: number, hand: number, type: string) => (x: NodeEvent): boolean => x.hand === hand && x.role === 'seat' &&
      (x.event.type === 'aborted' || (x.event.type === type && (type !== 'cards' || (x.event.type === 'cards' && !x.event.public && x.event.seat === daemons[i].seat?.seat))))
    return await play(dealer, async hand => {
      let last = 0
      for (const [i, w] of watchers.entries()) last = Math.max(last, (await w.until(seatEvent(i, hand, 'cards'), `hand ${hand} cards`, 60_000)).time)
      return last
    }, async hand => { for (const [i, w] of watchers.entries()) await w.until(seatEvent(i, hand, 'receipt'), `hand ${hand} receipt`, 60_000) })
  } finally {
    for (const d of [...daemons].reverse()) await d.stop({ graceMs: 0 }).catch(() => {})
    await relay?.stop()
  }
}

async function pageSeats (root: string): Promise<Figures> {
  const data = join(root, 'dealer')
  const [tcp, ws, web] = [await freeLoopbackPort(), await freeLoopbackPort(), await freeLoopbackPort()]
  const out = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, [join(ROOT, 'bin', 'fairdeal.js'), 'table', 'new', '--game', 'coinche', '--seats', '4', '--scheme', 'atout-v1', '--data', data,
      '--listen', `/ip4/127.0.0.1/tcp/${tcp}`, '--listen', `/ip4/127.0.0.1/tcp/${ws}/ws`, '--web-port', String(web)], (err, stdout) => { if (err !== null) reject(err); else resolve(stdout) })
  })
  const links = [1, 2, 3].map(i => new RegExp(`^seat ${i}: (\\S+)$`, 'm').exec(out)?.[1] as string)
  const logger = pino({ level: 'silent' })
  const identity = await loadIdentity(data)
  const stop = new AbortController()
  const gathering = gatherSeats({ dir: data, draft: await readDraft(data) as Draft, privateKey: identity.privateKey, signer: signerFromSeed(identity.seed), logger, signal: stop.signal })
  const { chromium } = await import('playwright-core')
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] })
  let dealer: Daemon | undefined
  try {
    const context = await browser.newContext()
    // The page is served while the seats join (it is static: it keeps running once loaded).
    for (let i = 0; (await fetch(`http://127.0.0.1:${web}/seat`).catch(() => undefined))?.status !== 200; i++) {
      if (i > 200) throw new Error('the seat page was not served')
      await new Promise(resolve => setTimeout(resolve, 25))
    }
    const pages = await Promise.all(links.map(async link => { const p = await context.newPage(); await p.goto(link); return p }))
    if (await gathering === undefined) throw new Error('the seats did not join')
    dealer = await Daemon.start({ config: await loadNodeConfig(join(data, 'node.json')), logger })
    const d = dealer
    const deadline = Date.now() + 15_000
    while (d.node.getConnections().length < 3) {
      if (Date.now() > deadline) throw new Error('the pages did not dial in')
      await new Promise(resolve => setTimeout(resolve, 20))
    }
    const receipts = d.events.watch()
    return await play(d, async hand => {
      let last = 0
      for (const p of pages) {
        const at = await p.locator(`section[data-hand="${hand}"][data-cards-at]`).getAttribute('data-cards-at', { timeout: 60_000 })
        last = Math.max(last, Number(at))
      }
      return last
    }, async hand => {
      for (const p of pages) await p.locator(`section[data-hand="${hand}"] [data-testid=shield]`).waitFor({ timeout: 60_000 })
      // The dealer's receipt (every page's ack in it) before the next hand, as for the node seats.
      await receipts.until(e => e.hand === hand && e.role === 'dealer' && (e.event.type === 'receipt' || e.event.type === 'aborted'), `hand ${hand} receipt`, 60_000)
    })
  } finally {
    stop.abort()
    await dealer?.stop({ graceMs: 0 }).catch(() => {})
    await browser.close()
  }
}

export async function run (): Promise<void> {
  if (!existsSync(CHROMIUM)) {
    console.log(`skipped: ${CHROMIUM} is absent (apt-get install -y chromium)`)
    return
  }
  if (!existsSync(join(ROOT, 'dist', 'web', 'seat.html'))) throw new Error('dist/web/seat.html is missing: npm run build')
  const root = await mkdtemp(join(tmpdir(), 'fairdeal-bench-seat-page-'))
  const alive = setInterval(() => {}, 1_000)
  try {
    const nodes = await nodeSeats(join(root, 'nodes'))
    const relayed = await nodeSeats(join(root, 'relayed'), true)
    const pages = await pageSeats(join(root, 'pages'))
    const f2 = (x: number): string => x.toFixed(2)
    console.log(`commit → cards, coinche atout-v1, 4 seats (3 of them dial the dealer), ${nodes.hands} hands each, one at a time:`)
    console.log(`  seat nodes (in this process, TCP): p50 ${f2(nodes.p50)} ms, p99 ${f2(nodes.p99)} ms  (the bound)`)
    console.log(`  seat nodes through a relay (the dealer listens nowhere either; in this process): p50 ${f2(relayed.p50)} ms, p99 ${f2(relayed.p99)} ms  ×${f2(relayed.p50 / nodes.p50)} the nodes' p50`)
    console.log(`  seat pages (headless Chromium, WebSockets, IndexedDB): p50 ${f2(pages.p50)} ms, p99 ${f2(pages.p99)} ms  ×${f2(pages.p50 / nodes.p50)} the nodes' p50`)
  } finally {
    clearInterval(alive)
    await rm(root, { recursive: true, force: true })
  }
}
