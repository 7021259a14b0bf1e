// Nobody can walk away from a time-locked blind table (docs/dealer-blind.md §14), on the real
// stack: four nodes on 127.0.0.1 (real libp2p, real LevelDB, the real beacon client against a
// local beacon over loopback HTTP), belote. Seat 3 is its own OS process, SIGKILLed once it holds
// its cards and before it gives its shares for the take; at the key round the dealer opens its
// hand key from its timelock, the other seats get their cards and finish the hand, the receipt
// names seat 3 in its BUNLOCK, and every log verifies. The other paths are in memory
// (test/machines-blind-unlock.test.ts).
import { afterEach, beforeAll, expect, it } from 'vitest'
import { startLocalBeacon, type LocalBeacon } from '../src/beacon/index.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { NodeProcess, requireBuild } from './helpers/node-process.js'
import { logEntries, ownCardsEvent, seatEvent, TestTable, verifyNodeLog, waitEvent, type TableNode } from './helpers/table-nodes.js'

let beacon: LocalBeacon | undefined
let table: TestTable | undefined
let walker: NodeProcess | undefined

beforeAll(() => { requireBuild() })

afterEach(async () => {
  await Promise.all([walker?.kill(), beacon?.close()])
  await table?.cleanup()
  walker = beacon = table = undefined
})

it('belote, 4 seats: seat 3 killed after it holds its cards, before its shares for the take: finished from its timelock at the key round, seat 3 named, every log verifying', async () => {
  beacon = await startLocalBeacon({ period: 1, genesisTime: Math.floor(Date.now() / 1000) - 60 })
  const t = table = await TestTable.prepare({
    game: 'belote',
    scheme: 'blind-v1',
    seats: 4,
    robots: [],
    transport: 'tcp',
    beacon: { name: 'local', trust: beacon.trust, info: beacon.info, relays: [beacon.url] },
    beaconMarginMs: 0,
    // The test waits it out twice: the bound round comes after it (keys and four shuffles must fit
    // in it on a shared machine: 8 s was missed once with the whole suite starting beside it, and
    // the keys have half of it: docs/dealer-blind.md §3, Turns), and the dealer waits that long for
    // the take's shares.
    timeouts: { contributeMs: 16_000, ackMs: 10_000, revealMs: 30_000 },
    timelock: 'open',
    timelockHandMs: 1_000
  })
  const nodes: TableNode[] = [await t.start(0), await t.start(1), await t.start(2)]
  walker = await NodeProcess.start(t.local.files[3], t.dataDir(3))
  const dealer = nodes[0]
  const hand = await dealer.daemon.deal({ dealer: 0 })
  for (const n of nodes) {
    // The cards, or the hand's end: a hand that ended says why at once instead of a timeout.
    const cards = ownCardsEvent(n, hand)
    const seen = await waitEvent(n.daemon.events, e => cards(e) || (e.hand === hand && e.role === 'seat' && e.event.type === 'aborted'), `${n.name}: cards of hand ${hand}`, 60_000)
    expect(seen.event.type, JSON.stringify(seen.event)).toBe('cards')
  }
  const seat3 = t.seatOf(3)
  await walker.until(e => e.hand === hand && e.role === 'seat' && e.event.type === 'cards' && !e.event.public && e.event.seat === seat3, 'seat 3\'s cards', 60_000)
  await walker.kill()
  walker = undefined

  await dealer.daemon.stage(hand, 'take', 0)
  const unlocked = await waitEvent(dealer.daemon.events, e => e.hand === hand && e.role === 'dealer' && (e.event.type === 'unlocked' || e.event.type === 'aborted'), 'the dealer unlocks seat 3', 60_000)
  expect(unlocked.event).toEqual({ type: 'unlocked', seats: [seat3], reason: 'missing-shares' })
  for (const n of nodes) {
    await waitEvent(n.daemon.events, e => e.hand === hand && e.role === 'seat' && e.event.type === 'cards' && e.event.stage === 'take' && e.event.seat === n.daemon.seat?.seat, `${n.name}: take cards`, 30_000)
  }
  await dealer.daemon.end(hand)
  for (const n of nodes) {
    const shield = await waitEvent(n.daemon.events, seatEvent(hand, 'shield'), `${n.name}: shield`, 30_000)
    expect(shield.event).toMatchObject({ type: 'shield', ok: true })
    await waitEvent(n.daemon.events, seatEvent(hand, 'receipt'), `${n.name}: receipt`, 30_000)
  }
  await t.stopAll()

  const receipt = (await logEntries(t.dataDir(0))).find(e => e.body.kind === 'receipt')!.body.payload as any
  const verdict = verifyReceipt(receipt)
  expect(verdict.problems).toEqual([])
  expect(verdict.status).toBe('incomplete')
  expect(verdict.summary?.acked).toEqual([0, 1, 2].map(i => t.seatOf(i)).sort())
  expect(receipt.reveal.body.unlock.body.keys.map((k: any) => [k.seat, k.reason])).toEqual([[seat3, 'missing-shares']])
  for (let i = 0; i < 3; i++) expect(await verifyNodeLog(t.dataDir(i))).toMatchObject({ failed: 0 })
  expect(await verifyNodeLog(t.dataDir(3))).toMatchObject({ failed: 0 })
}, 120_000)
