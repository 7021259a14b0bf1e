// A table whose nodes are its beacon group (src/core/own-group.ts, docs/beacon-group.md "A table's
// own group"), the quick parts: what `table new`/`table join` refuse, what a config must hold, and a
// table held by its node until its group's chain is bound (Daemon.bindOwnGroup): a deal refused
// with the reason, the members' documents kept for the machines, then a hand played through. The
// whole walk over the CLI, DKG included, is test/table-own-beacon.test.ts.
import { afterAll, describe, expect, it } from 'vitest'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startLocalBeacon, type LocalBeacon } from '../src/beacon/local-beacon.js'
import { parseNodeConfig } from '../src/daemon/config.js'
import { checkOwnGroup, finalOwnGroup, ownGroupSize, ownGroupThreshold, recoverableWithoutDealer } from '../src/core/own-group.js'
import { JoinDesk, type Draft } from '../src/daemon/table-join.js'
import { newJoinSecret, secretDigest } from '../src/core/join.js'
import { signerFromSeed } from '../src/core/identity.js'
import { loadOrCreateIdentity } from '../src/net/identity.js'
import { pino } from 'pino'
import { cliInProcess } from './helpers/cli-in-process.js'
import { logEntries, seatsCards, TestTable, verifyNodeLog, waitEvent } from './helpers/table-nodes.js'

const roots: string[] = []
afterAll(async () => { for (const r of roots) await rm(r, { recursive: true, force: true }) })
async function tempDir (label: string): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), `fairdeal-${label}-`))
  roots.push(d)
  return d
}

const member = (port: number): { addrs: string[], url: string } => ({ addrs: [`/ip4/127.0.0.1/tcp/${port}`], url: `http://127.0.0.1:${port + 1}` })

describe('a table on its own group: the rules', () => {
  it('n is the dealer and each human seat; the default threshold floor(n/2) + 1; a hand recoverable without its dealer only when n − 1 ≥ t', () => {
    const t = { dealer: 'D', seats: ['D', null, 'robot', null] }
    expect(ownGroupSize(t)).toBe(3)
    expect([2, 3, 4, 5].map(ownGroupThreshold)).toEqual([2, 2, 3, 3])
    expect([2, 3, 4, 5].map(n => recoverableWithoutDealer(n, ownGroupThreshold(n)))).toEqual([false, true, true, true])
  })

  it('table new and table join refuse what cannot make a group, each in one sentence', async () => {
    const dir = await tempDir('own-new')
    const cases: Array<[string[], RegExp]> = [
      [['--game', 'coinche', '--seats', '4', '--beacon', 'own', '--answers'], /--beacon own goes with the links, not --answers/],
      [['--game', 'duo', '--seats', '2', '--robots', '1', '--beacon', 'own'], /--beacon own needs a human seat besides the dealer's/],
      [['--game', 'coinche', '--seats', '4', '--beacon', 'own', '--group-threshold', '1'], /--group-threshold must be a whole number from 2 to 4/],
      [['--game', 'coinche', '--seats', '4', '--beacon', 'own', '--group-threshold', '5'], /--group-threshold must be a whole number from 2 to 4/],
      [['--game', 'coinche', '--seats', '4', '--group-listen', '/ip4/127.0.0.1/tcp/7500'], /--group-listen goes with --beacon own/],
      [['--game', 'coinche', '--seats', '4', '--beacon', 'own', '--group-listen', '/ip4/127.0.0.1/udp/7500'], /--group-listen \/ip4\/127.0.0.1\/udp\/7500: must be a TCP multiaddr/],
      // The group is named by the table's id: one no table may have is said as for any table.
      [['--game', 'coinche', '--seats', '4', '--beacon', 'own', '--id', 'bad id!'], /table id: letters, digits and \. _ : - only/]
    ]
    for (const [args, message] of cases) {
      const r = await cliInProcess('table', 'new', ...args, '--data', join(dir, 'x'))
      expect(r.code, r.stdout).toBe(2)
      expect(r.stderr).toMatch(message)
    }
    // A duo of two nodes makes a 2-of-2 group: it works, and the dealer is told its hands cannot be finished without it.
    const duo = await cliInProcess('table', 'new', '--game', 'duo', '--seats', '2', '--beacon', 'own', '--timelock', 'void', '--data', join(dir, 'duo'), '--web-port', '18950', '--json')
    expect(duo.code, duo.stderr).toBe(0)
    expect(duo.stderr).toMatch(/are also its beacon group duo-night, 2 of 2/)
    expect(duo.stderr).toMatch(/the 1 other node of a 2-of-2 group cannot make the round that opens the timelocks/)
    const draft = JSON.parse(await readFile(join(dir, 'duo', 'table-draft.json'), 'utf8')) as { table: { beacon: unknown, timelock: string } }
    expect(draft.table.beacon).toEqual({ group: 'duo-night', threshold: 2, period: 3 })
    // --group-* go only with the link of such a table.
    const plain = await cliInProcess('table', 'new', '--game', 'duo', '--seats', '2', '--data', join(dir, 'plain'), '--web-port', '18951', '--json')
    const link = (JSON.parse(plain.stdout) as { links: Array<{ link: string }> }).links[0].link
    const join$ = await cliInProcess('table', 'join', link, '--data', join(dir, 'bob'), '--group-listen', '/ip4/127.0.0.1/tcp/7600')
    expect(join$.code).toBe(2)
    expect(join$.stderr).toMatch(/--group-listen goes with a table whose nodes are also its beacon group, and table duo-night's beacon is another/)
  })

  it('the dealer\'s desk takes a seat only with where the group reaches it, and makes the group of the table\'s nodes once every seat is taken', async () => {
    const dir = await tempDir('own-desk')
    const [dealerId, bob, eve] = await Promise.all(['d', 'b', 'e'].map(async n => await loadOrCreateIdentity(join(dir, n))))
    const secret = newJoinSecret(n => crypto.getRandomValues(new Uint8Array(n)))
    const beacon = { group: 'pair', threshold: 2, period: 1 }
    const draft: Draft = {
      listen: ['/ip4/127.0.0.1/tcp/7400'],
      table: { id: 'pair', game: 'duo', scheme: 'blind-v1', dealer: dealerId.peerId, seats: [dealerId.peerId, null], beacon, timelock: 'void' },
      peers: {},
      links: { digests: { 1: secretDigest(secret) }, webPort: 7402 },
      group: { listen: ['/ip4/127.0.0.1/tcp/7500'], http: { host: '127.0.0.1', port: 7501 }, member: member(7500), phaseMs: 1_000, startInMs: 30_000 }
    }
    const desk = new JoinDesk(dir, draft, signerFromSeed(dealerId.seed), pino({ level: 'silent' }))
    const ask = async (peer: string, group?: unknown): ReturnType<JoinDesk['request']> => await desk.request(peer, { table: 'pair', seat: 1, secret, ...(group !== undefined ? { group } : {}) })
    // The seat page (no group part) and a malformed one: refused, the seat still open.
    expect(await ask(bob.peerId)).toEqual({ kind: 'refused', reason: expect.stringMatching(/nodes are also its beacon group: every seat runs a node the others reach; join with 'fairdeal table join LINK --data DIR --group-listen ADDR' \(the seat page cannot be a member\)/) })
    expect(await ask(bob.peerId, { addrs: ['/ip4/127.0.0.1/udp/1'], url: 'http://127.0.0.1:1' })).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/where the group reaches this seat is malformed: addrs.0/) })
    expect(desk.open()).toEqual([1])
    const before = Date.now()
    expect(await ask(bob.peerId, member(7600))).toEqual({ kind: 'bound', seat: 1, waiting: [] })
    const final = await desk.complete
    const group = final.body.group as { members: Array<{ peer: string }>, dkg: { start: number, phaseMs: number }, genesisTime: number }
    expect(group.members).toEqual([{ peer: dealerId.peerId, ...member(7500) }, { peer: bob.peerId, ...member(7600) }])
    expect(group.dkg.start).toBeGreaterThanOrEqual(before + 30_000)
    expect(group.genesisTime).toBe(Math.ceil((group.dkg.start + 1_000) / 1000))
    expect(checkOwnGroup(group, final.body.table, bob.peerId, member(7600))).toBeUndefined()
    // The same seat asking again: the same addresses, or refused; another node: the link is used.
    expect(await ask(bob.peerId, member(7600))).toMatchObject({ kind: 'bound' })
    expect(await ask(bob.peerId, member(7700))).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/seat 1 joined the group at \/ip4\/127.0.0.1\/tcp\/7600 .*of the first time/) })
    expect(await ask(eve.peerId, member(7800))).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/used already/) })
    // The dealer's config, written with the final table, holds its member's group block.
    const config = JSON.parse(await readFile(join(dir, 'node.json'), 'utf8')) as { group: Record<string, unknown> }
    expect(config.group).toEqual({ ...group, listen: ['/ip4/127.0.0.1/tcp/7500'], http: { host: '127.0.0.1', port: 7501 } })
  })

  it('a config whose table names its own group holds that group, of exactly the table\'s nodes', async () => {
    const t = await TestTable.prepare({ game: 'duo', scheme: 'atout-drand-v1', seats: 2, beacon: 'quicknet', timelock: 'void', tableId: 'pair' })
    roots.push(t.root)
    const raw = JSON.parse(await readFile(t.local.files[1], 'utf8')) as { table: Record<string, unknown> & { dealer: string, seats: string[] } }
    const beacon = { group: 'pair', threshold: 2, period: 1 }
    const table = { ...raw.table, beacon }
    const members = new Map(t.peerIds.map((p, i) => [p, member(7500 + 2 * i)]))
    const group = { ...finalOwnGroup({ table: { id: 'pair', dealer: raw.table.dealer, seats: raw.table.seats }, beacon, members, start: Date.now(), phaseMs: 1000 }), listen: ['/ip4/127.0.0.1/tcp/7502'] }
    const parse = async (value: unknown): Promise<unknown> => await parseNodeConfig(value, 'node.json')
    expect((await parse({ ...raw, table, group }) as { ownGroup: unknown }).ownGroup).toEqual(beacon)
    await expect(parse({ ...raw, table })).rejects.toThrow(/field table.beacon: names the table's own beacon group pair, and this config has no group block/)
    await expect(parse({ ...raw, table, group: { ...group, id: 'other' } })).rejects.toThrow(/this node's group block is group other/)
    await expect(parse({ ...raw, table, group: { ...group, members: [...group.members].reverse() } })).rejects.toThrow(/field group: is not table pair's own group: the group's members .* are not the table's nodes/)
    await expect(parse({ ...raw, table, group: { ...group, threshold: 1 } })).rejects.toThrow(/not the threshold 2 and period 1 s the table's beacon names/)
    await expect(parse({ ...raw, table: { ...table, beacon: { ...beacon, threshold: 3 } }, group })).rejects.toThrow(/field table.beacon.threshold: is 3, and the table has 2 nodes/)
    await expect(parse({ ...raw, table: { ...table, beacon: { ...beacon, relays: [] } }, group })).rejects.toThrow(/field table.beacon: the table's own group: \(root\): Unrecognized key/)
    // A seat checks its own entry in the dealer's group: its addresses, as it gave them.
    const { listen: _listen, ...body } = group
    expect(checkOwnGroup(body, { ...table, id: 'pair' }, t.peerIds[1], member(7502))).toBeUndefined()
    expect(checkOwnGroup(body, { ...table, id: 'pair' }, t.peerIds[1], member(7700))).toMatch(/lists this node at \/ip4\/127.0.0.1\/tcp\/7502 .*join again with the --group-listen/)
  })
})

describe('a table held until its own group\'s chain is bound', () => {
  let beacon: LocalBeacon | undefined
  let wrong: LocalBeacon | undefined
  afterAll(async () => { await beacon?.close(); await wrong?.close() })

  it('deals nothing before (saying why), keeps what members send meanwhile, and plays once bound; its logs verify', async () => {
    const t = await TestTable.prepare({
      game: 'duo', scheme: 'atout-drand-v1', seats: 2, beacon: 'quicknet', tableId: 'pair', timelock: 'void',
      beaconMarginMs: 0, timeouts: { contributeMs: 5_000, ackMs: 1_000, revealMs: 1_000 }
    })
    roots.push(t.root)
    // Both configs name the table's own group, as 'table new --beacon own' and 'table join' write them.
    const own = { group: 'pair', threshold: 2, period: 1 }
    for (let i = 0; i < 2; i++) {
      const raw = JSON.parse(await readFile(t.local.files[i], 'utf8')) as { table: Record<string, unknown> & { dealer: string, seats: string[] } }
      const members = new Map(t.peerIds.map((p, k) => [p, member(7500 + 2 * k)]))
      const group = { ...finalOwnGroup({ table: { id: 'pair', dealer: raw.table.dealer, seats: raw.table.seats }, beacon: own, members, start: Date.now(), phaseMs: 1000 }), listen: ['/ip4/127.0.0.1/tcp/7500'] }
      t.local.configs[i] = await parseNodeConfig({ ...raw, table: { ...raw.table, beacon: own, timelock: 'void' }, group }, t.local.files[i])
    }
    const [dealer, seat] = [await t.start(0), await t.start(1)]
    try {
      await expect(dealer.daemon.deal()).rejects.toThrow(/^table pair takes its beacon from its own group pair \(2 of its nodes make a round\), whose chain is not known yet: its DKG is not done; the table deals once it is$/)
      expect(dealer.daemon.status().beacon).toMatchObject({ name: 'pair', pending: expect.stringMatching(/whose chain is not known yet/) })
      expect(dealer.daemon.role).toBe('dealer + seat 0')
      expect(() => seat.daemon.cards(0)).toThrow(/whose chain is not known yet/)
      // A chain of another period is not the group's: refused, and the table stays held.
      wrong = await startLocalBeacon({ period: 2 })
      await expect(dealer.daemon.bindOwnGroup('pair', wrong.config)).rejects.toThrow(/its own group's chain has a round every 2 s, not every 1 s/)
      await expect(dealer.daemon.deal()).rejects.toThrow(/not known yet/)
      // The chain (here a local beacon's, standing in for the group's) bound at the dealer first:
      // its COMMIT reaches a seat still held, which keeps it, and deals with it once bound too.
      beacon = await startLocalBeacon({ period: 1 })
      await dealer.daemon.bindOwnGroup('pair', beacon.config)
      const hand = await dealer.daemon.deal()
      await waitEvent(dealer.daemon.events, e => e.hand === hand && e.role === 'dealer' && e.event.type === 'committed', 'the commit')
      await seat.daemon.bindOwnGroup('pair', beacon.config)
      await expect(seat.daemon.bindOwnGroup('pair', beacon.config)).rejects.toThrow(/is not waiting for its own group's chain/)
      await seatsCards([dealer, seat], hand)
      await dealer.daemon.end(hand)
      for (const n of [dealer, seat]) await waitEvent(n.daemon.events, e => e.hand === hand && e.role === 'seat' && e.event.type === 'receipt', `${n.name}: receipt`)
      expect(seat.daemon.status().beacon).toMatchObject({ name: beacon.config.name, chainHash: beacon.info.hash })
      // Nothing the dealer sent while the seat was held was refused: it was kept, then taken.
      expect(seat.daemon.rejections).toBe(0)
    } finally {
      await t.stopAll()
    }
    for (let i = 0; i < 2; i++) {
      const entries = await logEntries(t.dataDir(i))
      expect(entries.map(e => e.body.kind)).toEqual(['receipt'])
      expect(await verifyNodeLog(t.dataDir(i))).toMatchObject({ failed: 0, passed: 1 })
    }
  }, 60_000)
})
