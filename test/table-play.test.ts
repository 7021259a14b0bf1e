import { afterEach, describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { docDigest, ZERO_HASH } from '../src/core/hand/digest.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import type { Receipt } from '../src/core/hand/messages.js'
import { CapturedLogger } from './helpers/captured-logger.js'
import { logEntries, playHand, TestTable, verifyNodeLog, waitEvent, type PlayOptions } from './helpers/table-nodes.js'

// Guarantee 4 over the network: full tables of real Daemons on 127.0.0.1 play many hands; afterwards
// every node's log re-verifies offline, all nodes hold the same chained receipts, and what each
// seat was shown during the hand is exactly its share of the deal the receipt recomputes.

type Transport = 'tcp' | 'ws'
let table: TestTable | undefined

afterEach(async () => {
  await table?.cleanup()
  table = undefined
})

interface Shown { stage: string, seat: number | null, public: boolean, cards: string[] }

async function playTable (transport: Transport, game: string, scheme: string, seats: number, hands: number,
  plan: (h: number) => PlayOptions): Promise<{ t: TestTable, shown: Map<number, Map<number, Shown[]>> }> {
  const t = table = await TestTable.prepare({ game, scheme, seats, transport, timeouts: { contributeMs: 10_000, ackMs: 10_000, revealMs: 60_000 } })
  const nodes = await t.startAll()
  for (let h = 0; h < hands; h++) await playHand(nodes[0], nodes, plan(h))
  // The hands really went over that transport, on loopback.
  const remotes = nodes.flatMap(n => n.daemon.node.getConnections().map(c => c.remoteAddr.toString()))
  expect(remotes.length).toBeGreaterThanOrEqual(nodes.length - 1)
  for (const a of remotes) expect(a.startsWith('/ip4/127.0.0.1/tcp/') && a.includes('/ws') === (transport === 'ws'), a).toBe(true)
  // What each node's seat was shown, per hand, read from its own event feed before it stops.
  const shown = new Map<number, Map<number, Shown[]>>()
  for (const n of nodes) {
    const byHand = new Map<number, Shown[]>()
    for (const e of n.daemon.events.after(0, Number.MAX_SAFE_INTEGER)) {
      if (e.role !== 'seat' || e.event.type !== 'cards') continue
      const { stage, seat, public: pub, cards } = e.event
      byHand.set(e.hand, [...(byHand.get(e.hand) ?? []), { stage, seat, public: pub, cards }])
    }
    shown.set(n.index, byHand)
  }
  await t.stopAll()
  return { t, shown }
}

/** Every log holds `hands` receipts, verified, chained, identical on every node, matching what seats saw. */
async function checkLogs (t: TestTable, hands: number, shown: Map<number, Map<number, Shown[]>>, stages: string[]): Promise<void> {
  const humans = t.seats.map((s, i) => (s === 'robot' ? -1 : i)).filter(i => i >= 0)
  let reference: string[] | undefined
  for (let i = 0; i < t.peerIds.length; i++) {
    const verdict = await verifyNodeLog(t.dataDir(i))
    expect(verdict.failures, t.local.names[i]).toEqual([])
    expect(verdict.passed, t.local.names[i]).toBe(hands)
    const entries = await logEntries(t.dataDir(i))
    expect(entries.map(e => e.body.kind)).toEqual(Array(hands).fill('receipt'))
    expect(entries.every(e => e.signer === t.peerIds[i])).toBe(true)
    const lines = entries.map(e => canonicalJson(e.body.payload))
    // The dealer's receipt travels to every seat in FINAL: all logs hold the very same documents.
    if (reference === undefined) reference = lines
    else expect(lines).toEqual(reference)
  }
  const receipts = (await logEntries(t.dataDir(0))).map(e => e.body.payload as Receipt)
  receipts.forEach((r, k) => {
    expect(r.commit.body.hand).toBe(k + 1)
    expect(r.commit.body.prev).toBe(k === 0 ? ZERO_HASH : docDigest(receipts[k - 1].commit))
    const verdict = verifyReceipt(r)
    expect(verdict.problems).toEqual([])
    expect(verdict.summary?.acked).toEqual(humans)
    expect(r.reveal.body.stages).toEqual(stages)
    const deliveries = verdict.summary?.deliveries ?? []
    for (let i = 0; i < t.peerIds.length; i++) {
      const seat = t.seatOf(i)
      // Exactly its own private cards and the public ones: nothing more, nothing less, as dealt.
      const expected = deliveries.filter(d => d.public || d.seat === seat)
      const got = shown.get(i)?.get(k + 1) ?? []
      const key = (d: Shown): string => canonicalJson({ stage: d.stage, seat: d.seat, public: d.public, cards: d.cards })
      expect(got.map(key).sort(), `hand ${k + 1} seat ${seat}`).toEqual(expected.map(key).sort())
    }
  })
}

// Every game, many chained hands and what each seat is shown are proven in memory
// (protocol-games.test.ts); these prove the same over the real stack, one table per transport.
describe('a table of real nodes on 127.0.0.1', () => {
  it('over tcp: 4 nodes play 4 coinche hands, each dealing in turn: every log verifies and holds the same chained receipts', async () => {
    const hands = 4
    const { t, shown } = await playTable('tcp', 'coinche', 'atout-v1', 4, hands, h => ({ dealerSeat: h % 4 }))
    await checkLogs(t, hands, shown, ['deal'])
  })

  it('over ws: belote with the take stage (the taker varies)', async () => {
    const hands = 2
    const { t, shown } = await playTable('ws', 'belote', 'atout-v1', 4, hands, h => ({ dealerSeat: h % 4, stages: [{ stage: 'take', taker: (h + 1) % 4 }] }))
    await checkLogs(t, hands, shown, ['deal', 'turnUp', 'take'])
    const receipts = (await logEntries(t.dataDir(0))).map(e => e.body.payload as Receipt)
    expect(receipts.map(r => r.reveal.body.params.taker)).toEqual([1, 2])
  })
})

// Friends at home (issue 12): seats behind home routers have no address anyone can dial. Each
// seat's node listens on nothing and dials the dealer; everything that flows to a seat goes on that
// connection, and a seat's VIEW for another seat goes through the dealer (RELAY).
describe('seats that listen on nothing (behind NAT)', () => {
  it('a seat not dialled in yet is unreachable, nobody blamed; then the whole hand plays on the seats\' own connections', async () => {
    const t = table = await TestTable.prepare({
      game: 'coinche', scheme: 'atout-v1', seats: 4, seatsListenNowhere: true, timeouts: { contributeMs: 3_000, ackMs: 10_000, revealMs: 60_000 }
    })
    expect(t.local.configs.slice(1).map(c => c.listen)).toEqual([[], [], []])
    expect(t.local.configs[0].peers).toEqual({}) // the dealer knows no seat's address
    const dealer = await t.start(0)
    // At debug: the seats' failed direct sends are logged there (they are expected, not warnings).
    const early = [await t.start(1, new CapturedLogger('debug')), await t.start(2, new CapturedLogger('debug'))]
    // Seat 3's node is not running: the dealer never reaches it, and says so without blaming it.
    const h1 = await dealer.daemon.deal()
    const ended = await waitEvent(dealer.daemon.events, e => e.hand === h1 && e.role === 'dealer' && e.event.type === 'aborted', 'hand 1 ends unreachable')
    expect(ended.event).toMatchObject({ reason: 'unreachable', blame: [] })
    expect(ended.event.type === 'aborted' && ended.event.detail).toMatch(/could not reach seat 3 \(not connected, and no address is known/)
    for (const n of early) await waitEvent(n.daemon.events, e => e.hand === h1 && e.event.type === 'aborted', `${n.name} hears hand 1 ended`)
    // The dealer tried every second; it warned once about the COMMIT that could not go, not per retry.
    const commitFailures = dealer.logs.lines.filter(l => l.msg === 'send failed' && l.type === 'commit')
    expect(commitFailures.filter(l => l.level >= 40)).toHaveLength(1)

    const nodes = [dealer, ...early, await t.start(3, new CapturedLogger('debug'))]
    await waitUntil('every seat connected to the dealer', () => peersOf(dealer).filter(p => p.connected).length === 3)
    const hand = await playHand(dealer, nodes)
    // Witnessing works over the seats' connections too: the dealer holds each seat's cosigned head,
    // and each seat the dealer's (both sides announce their head after every append).
    await waitUntil('witnessed heads both ways', async () => {
      for (const n of nodes.slice(1)) {
        if ((await dealer.daemon.witnessedHeads(n.peerId)).length === 0 || (await n.daemon.witnessedHeads(dealer.peerId)).length === 0) return false
      }
      return true
    })
    // Nobody but the dealer listens; every connection was opened by a seat, to the dealer.
    for (const n of nodes.slice(1)) expect(n.daemon.addresses()).toEqual([])
    expect(dealer.daemon.node.getConnections().map(c => c.direction)).toEqual(['inbound', 'inbound', 'inbound'])
    expect(peersOf(dealer).map(p => [p.connected, p.direction])).toEqual(Array(3).fill([true, 'inbound']))
    for (const n of nodes.slice(1)) expect(n.daemon.node.getConnections().map(c => c.remotePeer.toString())).toEqual([dealer.peerId])
    // The views between seats went through the dealer, at once: no dial was even tried.
    for (const n of nodes.slice(1)) {
      const failed = n.logs.lines.filter(l => l.msg === 'send failed' && l.to !== dealer.peerId)
      expect(failed.filter(l => l.type === 'view').length, n.name).toBe(2)
      for (const l of failed) expect(String(l.err), n.name).toMatch(/^not connected, and no address is known/)
      expect(failed.filter(l => l.level >= 40), n.name).toEqual([]) // expected, so not a warning
    }
    await t.stopAll()
    for (let i = 0; i < 4; i++) {
      const verdict = await verifyNodeLog(t.dataDir(i))
      const entries = await logEntries(t.dataDir(i))
      const kinds = entries.map(e => e.body.kind)
      // Seat 3 started after hand 1 ended. The ASK it sends on start-up may bring it the dealer's
      // record of hand 1 before hand 2 begins; if not, its log says hand 1 is missing (docs/log.md,
      // hand chains). The others hold that record.
      const missedHand1 = i === 3 && kinds.length === 1
      expect(kinds, t.local.names[i]).toEqual(missedHand1 ? ['receipt'] : ['abort', 'receipt'])
      expect(verdict.failures, t.local.names[i]).toEqual(missedHand1 ? [expect.stringMatching(/^seq 0: hand 1 of table .* was committed \(hand 2 follows\) but ends in neither a receipt nor an abort record of this log$/)] : [])
      const receipt = entries.find(e => e.body.kind === 'receipt')?.body.payload as Receipt
      expect(receipt.commit.body.hand).toBe(hand)
      expect(verifyReceipt(receipt).summary?.acked).toEqual([0, 1, 2, 3])
    }
  })
})

function peersOf (n: { daemon: { status: () => Record<string, unknown> } }): Array<{ connected: boolean, direction: string | null }> {
  return n.daemon.status().peers as Array<{ connected: boolean, direction: string | null }>
}

async function waitUntil (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

