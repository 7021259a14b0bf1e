// Seats behind NAT (issue 12): the same 4-node coinche table (atout-v1, no beacon, loopback TCP,
// four daemons in this process) run twice in one process, hands one at a time:
// - direct: every node listens and every node knows every address; seats send VIEWs to each other;
// - NAT: only the dealer listens; each seat dials it and is reached on that connection, and a seat's
//   VIEW for another seat goes through the dealer (RELAY);
// - relayed (issue 20): nobody listens at all; the dealer holds a reservation on a circuit relay
//   (src/net/relay.ts, `fairdeal relay`) in the same process and every seat reaches it through it.
// Figure: the time from the dealer's 'committed' event to the last seat's own 'cards' event (p50,
// p99, from the events' high-resolution wall-clock times), for NAT beside the direct table measured
// in the same run, which is its bound: relaying adds one network leg and the dealer's check of the
// RELAY to the view step, nothing else. FAIRDEAL_BENCH_HANDS sets the hands per table (default 200).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { Daemon } from '../../src/daemon/daemon.js'
import type { EventWatcher, NodeEvent } from '../../src/daemon/events.js'
import { generateKeyPair } from '@libp2p/crypto/keys'
import type { Libp2p } from '@libp2p/interface'
import { createRelay } from '../../src/net/relay.js'
import type { NodeConfig } from '../../src/daemon/config.js'
import { localTable } from './table.js'

const SEATS = 4
const WARMUP_HANDS = 5
const HANDS = Number(process.env.FAIRDEAL_BENCH_HANDS ?? 200)

interface Figures { p50: number, p99: number, hands: number }

function percentile (xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]
}

/** The config with no listen address, no peer addresses, and the table's relay. */
function relayed (c: NodeConfig, relay: string): NodeConfig {
  const tables = c.tables.map(t => ({ ...t, peers: {}, relay }))
  return { ...c, ...tables[0], tables, listen: [] }
}

async function runTable (root: string, nat: boolean, relay = false): Promise<Figures> {
  const table = await localTable(root, { seatsListenNowhere: nat })
  const logger = pino({ level: 'silent' })
  const daemons: Daemon[] = []
  let relayNode: Libp2p | undefined
  try {
    let configs = table.configs
    if (relay) {
      relayNode = await createRelay({ privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'], members: new Set(table.peerIds), logger })
      const address = relayNode.getMultiaddrs()[0].toString()
      configs = configs.map(c => relayed(c, address))
    }
    for (const config of configs) daemons.push(await Daemon.start({ config, logger }))
    const dealer = daemons[0]
    const watchers: EventWatcher[] = daemons.map(d => d.events.watch())
    if (nat) {
      // Every seat has dialled in before the first hand (as it would have long before a real one).
      const deadline = Date.now() + 15_000
      while (dealer.node.getConnections().length < SEATS - 1) {
        if (Date.now() > deadline) throw new Error('the seats did not dial in')
        await new Promise(resolve => setTimeout(resolve, 20))
      }
    }
    const times: number[] = []
    for (let h = 0; h < WARMUP_HANDS + HANDS; h++) {
      const hand = await dealer.deal()
      const is = (type: NodeEvent['event']['type'], role: 'dealer' | 'seat') => (e: NodeEvent) => e.hand === hand && e.role === role && (e.event.type === type || e.event.type === 'aborted')
      const committed = await watchers[0].until(is('committed', 'dealer'), `hand ${hand} committed`, 60_000)
      let last = 0
      for (const [i, w] of watchers.entries()) {
        const seat = daemons[i].seat?.seat
        const e = await w.until(x => is('aborted', 'seat')(x) || (x.hand === hand && x.role === 'seat' && x.event.type === 'cards' && !x.event.public && x.event.seat === seat), `hand ${hand} cards`, 60_000)
        if (e.event.type === 'aborted') throw new Error(`hand ${hand} aborted: ${e.event.reason}`)
        last = Math.max(last, e.time)
      }
      if (h >= WARMUP_HANDS) times.push(last - committed.time)
      await dealer.end(hand)
      for (const w of watchers) await w.until(is('receipt', 'seat'), `hand ${hand} receipt`, 60_000)
    }
    return { p50: percentile(times, 0.5), p99: percentile(times, 0.99), hands: times.length }
  } finally {
    for (const d of [...daemons].reverse()) await d.stop({ graceMs: 0 }).catch(() => {})
    await relayNode?.stop()
  }
}

export async function run (): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'fairdeal-bench-nat-'))
  // The nodes' own timers do not hold a process open (a real node's servers do): this does, so a
  // hand that stalls shows as a timeout naming it rather than as a silent exit.
  const alive = setInterval(() => {}, 1_000)
  try {
    const direct = await runTable(join(root, 'direct'), false)
    const nat = await runTable(join(root, 'nat'), true)
    const viaRelay = await runTable(join(root, 'relay'), true, true)
    const f2 = (x: number): string => x.toFixed(2)
    console.log(`commit → cards, ${SEATS} nodes in one process, ${direct.hands} hands each, one at a time:`)
    console.log(`  direct (seats reach each other): p50 ${f2(direct.p50)} ms, p99 ${f2(direct.p99)} ms  (the bound)`)
    console.log(`  NAT (seats listen nowhere, VIEWs relayed by the dealer): p50 ${f2(nat.p50)} ms, p99 ${f2(nat.p99)} ms` +
      `  ×${f2(nat.p50 / direct.p50)} the direct p50`)
    console.log(`  relayed (nobody listens; the dealer only through a circuit relay): p50 ${f2(viaRelay.p50)} ms, p99 ${f2(viaRelay.p99)} ms` +
      `  ×${f2(viaRelay.p50 / direct.p50)} the direct p50`)
  } finally {
    clearInterval(alive)
    await rm(root, { recursive: true, force: true })
  }
}
