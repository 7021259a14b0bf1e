// Time-locked tables over the real stack (docs/protocol.md §16): the dealer is its own OS process,
// SIGKILLed after dealing; the seats (Daemons: libp2p on 127.0.0.1, LevelDB, the real beacon client
// against a local beacon over loopback HTTP) finish the hand from its timelocks and log RECOVERED
// records whose deal verifies offline and holds the cards each was shown; the restarted dealer,
// asked to end the hand, completes a receipt of the same deal; every node's log verifies. The other paths (after the nonces, a withheld nonce, faults,
// refusals) are covered in memory (test/timelock-machines.test.ts) and by the demo.
import { afterEach, beforeAll, expect, it } from 'vitest'
import { startLocalBeacon, type LocalBeacon } from '../src/beacon/index.js'
import { verifyRecovered, type SignedRecovered } from '../src/core/hand/recovered.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { NodeProcess, requireBuild } from './helpers/node-process.js'
import { logEntries, seatEvent, seatsCards, TestTable, verifyNodeLog, waitEvent } from './helpers/table-nodes.js'

let beacon: LocalBeacon | undefined
let table: TestTable | undefined
let dealer: NodeProcess | undefined

beforeAll(() => { requireBuild() })

afterEach(async () => {
  await Promise.all([dealer?.stop(), beacon?.close()])
  await table?.cleanup()
  dealer = beacon = table = undefined
})

it('a dealer SIGKILLed after dealing: every seat finishes the hand from its timelocks, cards checked; the same deal everywhere; every log verifies', async () => {
  beacon = await startLocalBeacon({ period: 1, genesisTime: Math.floor(Date.now() / 1000) - 60 })
  const t = table = await TestTable.prepare({
    game: 'coinche',
    scheme: 'atout-drand-v1',
    seats: 4,
    beacon: { name: 'local', trust: beacon.trust, info: beacon.info, relays: [beacon.url] },
    beaconMarginMs: 0,
    // Generous: three seats share this test's thread, and each seals its nonce before it pledges.
    timeouts: { contributeMs: 5_000, ackMs: 500, revealMs: 1_000 },
    timelock: 'void'
  })
  const seats = [await t.start(1), await t.start(2), await t.start(3)]
  dealer = await NodeProcess.start(t.local.files[0], t.dataDir(0))
  const hand = await dealer.client.deal(0)
  const held = await seatsCards(seats, hand)
  await dealer.until(e => e.hand === hand && e.role === 'seat' && e.event.type === 'cards' && e.event.seat === 0, 'seat 0\'s cards in the dealer process')
  await dealer.kill()
  expect((await dealer.exited).signal).toBe('SIGKILL')

  for (const s of seats) {
    const e = await waitEvent(s.daemon.events, seatEvent(hand, 'recovered'), `${s.name}: hand ${hand} recovered`, 20_000)
    expect(e.event).toEqual({ type: 'recovered', rule: 'void', faults: [], blame: [] })
  }
  // The restarted dealer had dealt: asked to end the hand it reveals as usual, too late for the
  // seats, and completes a receipt without their countersignatures: the same deal as their records.
  dealer = await NodeProcess.start(t.local.files[0], t.dataDir(0))
  await dealer.client.end(hand)
  await dealer.until(e => e.hand === hand && e.role === 'dealer' && e.event.type === 'receipt', 'the restarted dealer\'s receipt')
  expect((await dealer.stop()).code).toBe(0)
  dealer = undefined
  await t.stopAll()

  const deals: unknown[] = []
  const receipt = (await logEntries(t.dataDir(0))).map(e => e.body)
  // The receipt; after it, when the dealer's own seat countersigned it only once it was out, that
  // seat's late ack (docs/protocol.md §11: whether it comes before the node stops is a race).
  expect(receipt[0].kind).toBe('receipt')
  const lateAcks = receipt.slice(1)
  expect(lateAcks.map(e => [e.kind, (e.payload as { ack: { body: { seat: number } } }).ack.body.seat])).toEqual(lateAcks.length === 0 ? [] : [['late-ack', 0]])
  const dealt = verifyReceipt(receipt[0].payload)
  expect(dealt.problems).toEqual([])
  deals.push(dealt.summary?.hands)
  for (let i = 1; i < 4; i++) {
    const entries = await logEntries(t.dataDir(i))
    expect(entries.map(e => e.body.kind), t.local.names[i]).toEqual(['recovered'])
    const verdict = verifyRecovered(entries[0].body.payload as SignedRecovered)
    expect(verdict.problems).toEqual([])
    deals.push(verdict.summary?.hands)
    const seat = t.seatOf(i)
    expect(verdict.summary?.hands?.[seat], `seat ${seat}'s cards`).toEqual(held.get(seat))
  }
  // The dealer's receipt lacks the seats' countersignatures: it verifies as incomplete, never a pass.
  expect(await verifyNodeLog(t.dataDir(0))).toMatchObject({ failed: 0, passed: lateAcks.length, incomplete: 1 })
  for (let i = 1; i < 4; i++) expect(await verifyNodeLog(t.dataDir(i))).toMatchObject({ failed: 0, passed: 1 })
  expect(new Set(deals.map(d => JSON.stringify(d))).size).toBe(1)
}, 60_000)

it('a dealer stopped while it waits for the bound round signs nothing: the hand stays saved and, restarted, it waits to finish it from its timelocks', async () => {
  beacon = await startLocalBeacon({ period: 1, genesisTime: Math.floor(Date.now() / 1000) - 60 })
  const t = table = await TestTable.prepare({
    game: 'duo',
    scheme: 'atout-drand-v1',
    seats: 2,
    robots: [1],
    beacon: { name: 'local', trust: beacon.trust, info: beacon.info, relays: [beacon.url] },
    // The bound round is a minute away: the node is stopped while it waits for it.
    beaconMarginMs: 60_000,
    timeouts: { contributeMs: 3_000, ackMs: 500, revealMs: 1_000 },
    timelock: 'open'
  })
  const node = await t.start(0)
  const hand = await node.daemon.deal()
  await waitEvent(node.daemon.events, e => e.hand === hand && e.role === 'seat' && e.event.type === 'contributed', 'the own seat\'s nonce')
  const deadline = Date.now() + 10_000
  while (node.daemon.dealer?.status().find(h => h.hand === hand)?.phase !== 'beacon' && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
  expect(node.daemon.dealer?.status()).toMatchObject([{ hand, phase: 'beacon' }])
  await t.stop(0)
  expect(node.logs.lines.filter(l => l.msg === 'hand aborted')).toEqual([])
  expect(await logEntries(t.dataDir(0))).toEqual([])
  const again = await t.start(0)
  expect(again.daemon.dealer?.status()).toMatchObject([{ hand, phase: 'recovering' }])
  await t.stop(0)
  expect(await logEntries(t.dataDir(0))).toEqual([])
}, 60_000)
