// Beacon-bound hands: the time from the bound round's publication (its roundTime on the local
// beacon, which serves a round from that instant) to every seat holding its cards, on a 4-node
// in-process table over loopback TCP. The bound, measured in the same run and interleaved with the
// hands: the bare beacon client with the daemon's settings waiting for a round and fetching it
// (waitAndFetchRound alone). What the table adds on top is dealing, signing, sending and checking.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { createBeaconClient, startLocalBeacon } from '../../src/beacon/index.js'
import { roundTime } from '../../src/core/beacon/index.js'
import { Daemon } from '../../src/daemon/daemon.js'
import { prepareLocalTable } from '../../src/daemon/local-table.js'
import type { NodeEvent } from '../../src/daemon/events.js'

const HANDS = 10

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

async function waitEvent (d: Daemon, pred: (e: NodeEvent) => boolean, timeoutMs = 30_000): Promise<NodeEvent> {
  return await d.events.watch().until(pred, 'a hand event', timeoutMs)
}

const fmt = (x: number): string => x.toFixed(1)

export async function run (): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'fairdeal-bench-table-beacon-'))
  const beacon = await startLocalBeacon({ period: 1, genesisTime: Math.floor(Date.now() / 1000) - 10 })
  const daemons: Daemon[] = []
  try {
    const table = await prepareLocalTable({
      root,
      game: 'coinche',
      scheme: 'atout-drand-v1',
      seats: 4,
      beacon: { name: 'local', trust: beacon.trust, info: beacon.info, relays: [beacon.url] },
      beaconMarginMs: 0,
      timeouts: { contributeMs: 1_000, ackMs: 10_000, revealMs: 600_000 }
    })
    const logger = pino({ level: 'silent' })
    for (const config of table.configs) daemons.push(await Daemon.start({ config, logger }))
    const dealer = daemons[0]
    // The bare client, configured as the daemon configures its own (default retry and timeouts).
    const bare = createBeaconClient({ chain: beacon.info, relays: [beacon.url] })

    const playHand = async (): Promise<number> => {
      const hand = await dealer.deal()
      const committed = await waitEvent(dealer, e => e.hand === hand && e.role === 'dealer' && e.event.type === 'committed')
      const round = committed.event.type === 'committed' ? committed.event.beaconRound : null
      if (round === null) throw new Error('the hand bound no beacon round')
      let last = 0
      for (const d of daemons) {
        const e = await waitEvent(d, x => x.hand === hand && x.role === 'seat' && (x.event.type === 'cards' || x.event.type === 'aborted'))
        if (e.event.type === 'aborted') throw new Error(`hand ${hand} aborted: ${e.event.reason}: ${e.event.detail}`)
        last = Math.max(last, e.time)
      }
      await dealer.end(hand)
      for (const d of daemons) await waitEvent(d, x => x.hand === hand && x.role === 'seat' && (x.event.type === 'receipt' || x.event.type === 'aborted'))
      return last - roundTime(beacon.info, round)
    }
    const bareFetch = async (): Promise<number> => {
      const round = bare.firstRoundAfter(Date.now(), 0)
      await bare.waitAndFetchRound(round, { deadline: bare.roundTime(round) + 10_000 })
      return Date.now() - bare.roundTime(round)
    }

    // Warm-up: connections between the nodes, the relays' /info checks.
    await playHand()
    await bareFetch()
    const dealt: number[] = []
    const alone: number[] = []
    for (let i = 0; i < HANDS; i++) {
      dealt.push(await playHand())
      alone.push(await bareFetch())
    }
    dealt.sort((a, b) => a - b)
    alone.sort((a, b) => a - b)
    const t50 = percentile(dealt, 0.5)
    const t99 = percentile(dealt, 0.99)
    const b50 = percentile(alone, 0.5)
    const b99 = percentile(alone, 0.99)
    console.log(`round published → every seat holds its cards (4 nodes in-process, local beacon period 1 s, ${HANDS} hands; p99 = max here):`)
    console.log(`  table:                      p50 ${fmt(t50)} ms   p99 ${fmt(t99)} ms`)
    console.log(`  bound, waitAndFetchRound:   p50 ${fmt(b50)} ms   p99 ${fmt(b99)} ms`)
    console.log(`  ratio table/bound:          p50 ${(t50 / b50).toFixed(2)}   p99 ${(t99 / b99).toFixed(2)}   (table adds ${fmt(t50 - b50)} ms at p50)`)
  } finally {
    for (const d of [...daemons].reverse()) await d.stop({ graceMs: 0 }).catch(() => {})
    await beacon.close()
    await rm(root, { recursive: true, force: true })
  }
}
