// A time-locked table whose beacon is a group of the table's own nodes (docs/beacon-group.md,
// "Tables on the group's rounds"): no League of Entropy, no outside operator. The four nodes'
// identities form a 3-of-4 group (the members in this process, as `demo --beacon group` runs them);
// the table is bound to its chain with its members' URLs as relays and time-locks every hand. The
// dealer, its own OS process, is SIGKILLed after dealing and its group member stopped with it: the
// three others still make the rounds, and every seat finishes the hand from its timelocks, opened
// with the group's round; every log verifies.
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeAll, expect, it } from 'vitest'
import { pino } from 'pino'
import { startLocalGroupBeacon, type LocalGroupBeacon } from '../src/beacon/group/group-beacon.js'
import { verifyRecovered, type SignedRecovered } from '../src/core/hand/recovered.js'
import { loadOrCreateIdentity } from '../src/net/identity.js'
import { NodeProcess, requireBuild } from './helpers/node-process.js'
import { logEntries, seatEvent, seatsCards, TestTable, verifyNodeLog, waitEvent } from './helpers/table-nodes.js'

let group: LocalGroupBeacon | undefined
let table: TestTable | undefined
let dealer: NodeProcess | undefined

beforeAll(() => { requireBuild() })

afterEach(async () => {
  await dealer?.stop()
  await group?.close()
  await table?.cleanup()
  dealer = group = table = undefined
})

it('a table on its own nodes\' group, time-locked: the dealer killed after dealing (its member with it), the seats finish the hand from the group\'s round; every log verifies', async () => {
  const root = await mkdtemp(join(tmpdir(), 'fairdeal-own-group-'))
  const dirs = [0, 1, 2, 3].map(i => join(root, `node${i}`))
  for (const d of dirs) await loadOrCreateIdentity(d)
  group = await startLocalGroupBeacon({ root: join(root, 'group'), dataDirs: dirs, threshold: 3, period: 1, logger: pino({ level: 'silent' }) })
  expect(group.config.relays).toHaveLength(4)
  const t = table = await TestTable.prepare({
    game: 'coinche',
    scheme: 'atout-drand-v1',
    seats: 4,
    beacon: { name: group.config.name, trust: group.config.trust, info: group.chain, relays: group.config.relays },
    beaconMarginMs: 0,
    timeouts: { contributeMs: 5_000, ackMs: 500, revealMs: 1_000 },
    timelock: 'void'
  }, root)
  // The same identities: the table's nodes are the group's members.
  expect(t.peerIds).toEqual(group.group.peerIds)
  const seats = [await t.start(1), await t.start(2), await t.start(3)]
  dealer = await NodeProcess.start(t.local.files[0], t.dataDir(0))
  const hand = await dealer.client.deal(0)
  const held = await seatsCards(seats, hand)
  await dealer.kill()
  await group.stopMember(0)
  for (const s of seats) {
    const e = await waitEvent(s.daemon.events, seatEvent(hand, 'recovered'), `${s.name}: hand ${hand} recovered`, 20_000)
    expect(e.event).toEqual({ type: 'recovered', rule: 'void', faults: [], blame: [] })
  }
  dealer = undefined
  await t.stopAll()
  const deals = new Set<string>()
  for (let i = 1; i < 4; i++) {
    const entries = await logEntries(t.dataDir(i))
    expect(entries.map(e => e.body.kind)).toEqual(['recovered'])
    const verdict = verifyRecovered(entries[0].body.payload as SignedRecovered)
    expect(verdict.problems).toEqual([])
    expect(verdict.summary?.hands?.[t.seatOf(i)]).toEqual(held.get(t.seatOf(i)))
    deals.add(JSON.stringify(verdict.summary?.hands))
    expect(await verifyNodeLog(t.dataDir(i))).toMatchObject({ failed: 0, passed: 1 })
  }
  expect(deals.size).toBe(1)
}, 90_000)
