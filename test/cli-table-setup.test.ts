// `table new` as a new user meets it (issues 19 and 23): a table of people is dealt blind-v1, a
// table with robots keeps atout-v1; --timelock travels in the invites and the table line; a second
// `table new` does not silently replace a table being set up; the address hint names the port
// actually used; an unreachable beacon is said at once, in one line.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cliInProcess } from './helpers/cli-in-process.js'
import { fairdeal } from './helpers/cli.js'
import { requireBuild } from './helpers/node-process.js'
import { decodeAnswer, decodeInvite } from '../src/daemon/invite.js'

const invitesOf = (stdout: string): string[] => [...stdout.matchAll(/^seat \d: (fairdeal-invite:\S+)$/gm)].map(m => m[1])

describe('table new: the default for people, and no silent surprises', () => {
  let dir: string
  beforeAll(async () => {
    requireBuild()
    dir = await mkdtemp(join(tmpdir(), 'fairdeal-table-setup-'))
  })
  afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

  it('a table of people is blind-v1, one with robots atout-v1, --scheme chooses otherwise; the help says why', async () => {
    const people = await cliInProcess('table', 'new', '--answers', '--game', 'coinche', '--seats', '4', '--data', join(dir, 'people'), '--listen', '/ip4/127.0.0.1/tcp/18020')
    const robots = await cliInProcess('table', 'new', '--answers', '--game', 'coinche', '--seats', '4', '--robots', '2,3', '--data', join(dir, 'robots'))
    const chosen = await cliInProcess('table', 'new', '--answers', '--game', 'tarot', '--seats', '4', '--scheme', 'tarot-v1', '--data', join(dir, 'chosen'))
    for (const r of [people, robots, chosen]) expect(r.code, r.stderr).toBe(0)
    expect(invitesOf(people.stdout).map(i => decodeInvite(i).table.scheme)).toEqual(['blind-v1', 'blind-v1', 'blind-v1'])
    expect(people.stdout).toMatch(/^table coinche-night: coinche, 4 seats, blind-v1, dealer/)
    expect(decodeInvite(invitesOf(robots.stdout)[0]).table.scheme).toBe('atout-v1')
    expect(decodeInvite(invitesOf(chosen.stdout)[0]).table.scheme).toBe('tarot-v1')
    const help = await cliInProcess('table', 'new', '--help')
    expect(help.stdout).toMatch(/A table of people is dealt blind-v1/)
    expect(help.stdout).toMatch(/the dealer's node plays the robots and sees their cards anyway/)
    expect(help.stdout).toMatch(/--timelock RULE off \(default\), replay, void or open/)
  })

  it('--timelock goes into the invites, the answer\'s table and the table line; a timelock without a beacon is refused', async () => {
    const beaconFile = join(dir, 'local-beacon.json')
    const quicknet = JSON.parse(await readFile(join(import.meta.dirname, '..', 'config', 'beacons', 'quicknet.json'), 'utf8')) as Record<string, unknown>
    // quicknet's chain, served (not) from a closed loopback port: the check answers at once.
    const hash = (quicknet.info as { hash: string }).hash
    await writeFile(beaconFile, JSON.stringify({ ...quicknet, relays: [`http://127.0.0.1:18099/${hash}`] }))
    const alice = join(dir, 'alice')
    const made = await cliInProcess('table', 'new', '--answers', '--game', 'duo', '--seats', '2', '--data', alice, '--beacon', beaconFile, '--timelock', 'replay', '--hand-length', '45', '--contribute-seconds', '30')
    expect(made.code, made.stderr).toBe(0)
    const invite = decodeInvite(invitesOf(made.stdout)[0])
    // The seats' time to contribute travels in the table block: each seat checks the COMMIT's deadline against it.
    expect(invite.table.timeouts).toEqual({ contributeMs: 30_000 })
    expect([invite.table.scheme, invite.table.timelock, invite.table.timelockHandMs]).toEqual(['blind-v1', 'replay', 2_700_000])
    const joined = await cliInProcess('table', 'join', invitesOf(made.stdout)[0], '--data', join(dir, 'bob'))
    expect(joined.code, joined.stderr).toBe(0)
    expect(joined.stderr).toMatch(/^seat 1 of table duo-night \(duo, blind-v1, time-locked: replay\)/m)
    expect(decodeAnswer(joined.stdout.trim()).seat).toBe(1)
    const added = await cliInProcess('table', 'add', joined.stdout.trim(), '--data', alice)
    expect(added.code, added.stderr).toBe(0)
    const line = decodeInvite(added.stdout.trim().split('\n').pop() as string)
    expect(line.table.timelock).toBe('replay')
    // The planned length of a hand travels with the timelock: every node opens a walked-away seat's key at the same round.
    expect(line.table.timelockHandMs).toBe(2_700_000)
    expect(line.table.timeouts).toEqual({ contributeMs: 30_000 })
    const config = JSON.parse(await readFile(join(alice, 'node.json'), 'utf8')) as { table: { scheme: string, timelock: string, timelockHandMs?: number, timeouts?: unknown } }
    expect([config.table.scheme, config.table.timelock, config.table.timelockHandMs, config.table.timeouts]).toEqual(['blind-v1', 'replay', 2_700_000, { contributeMs: 30_000 }])
    const noTime = await cliInProcess('table', 'new', '--game', 'duo', '--seats', '2', '--data', join(dir, 'notime'), '--contribute-seconds', '0')
    expect([noTime.code, noTime.stderr]).toEqual([2, 'fairdeal table new: --contribute-seconds must be a whole number from 1 to 3600, got "0"\n'])
    const handLength = await cliInProcess('table', 'new', '--game', 'duo', '--seats', '2', '--data', join(dir, 'nolock'), '--hand-length', '45')
    expect([handLength.code, handLength.stderr]).toEqual([2, 'fairdeal table new: --hand-length goes with --timelock on a blind-v1 table (it sets when a seat that walks away is opened)\n'])

    const bad = await cliInProcess('table', 'new', '--game', 'duo', '--seats', '2', '--data', join(dir, 'nobeacon'), '--timelock', 'void')
    expect([bad.code, bad.stderr]).toEqual([2, `fairdeal table new: ${join(dir, 'nobeacon', 'node.json')}: table timelock: a time-locked table needs a beacon (table.beacon)\n`])
    const rule = await cliInProcess('table', 'new', '--game', 'duo', '--seats', '2', '--data', join(dir, 'nobeacon'), '--timelock', 'sometimes')
    expect([rule.code, rule.stderr]).toEqual([2, 'fairdeal table new: --timelock must be off, replay, void, open, got "sometimes"\n'])
  })

  it('spawned: a second table new refuses to replace the pending table (--force does), the hint names the port used, an unreachable beacon is one warning', async () => {
    const data = join(dir, 'dealer')
    const first = await fairdeal('table', 'new', '--answers', '--game', 'duo', '--seats', '2', '--data', data, '--listen', '/ip4/127.0.0.1/tcp/18031')
    expect(first.code, first.stderr).toBe(0)
    expect(first.stderr).toMatch(/give --listen \/ip4\/0\.0\.0\.0\/tcp\/18031 and --announce \/ip4\/YOUR-PUBLIC-IP\/tcp\/18031 /)
    expect(first.stderr).not.toMatch(/7400/)
    const second = await fairdeal('table', 'new', '--game', 'duo', '--seats', '2', '--data', data, '--listen', '/ip4/127.0.0.1/tcp/18032')
    expect([second.code, second.stdout]).toEqual([2, ''])
    expect(second.stderr).toBe(`fairdeal table new: ${join(data, 'table-draft.json')} holds table duo-night being set up (1 of 2 seats taken): ` +
      'add its answers with \'fairdeal table add\', or give --force to replace it\n')
    const draft = JSON.parse(await readFile(join(data, 'table-draft.json'), 'utf8')) as { listen: string[] }
    expect(draft.listen).toEqual(['/ip4/127.0.0.1/tcp/18031'])
    const beaconFile = join(dir, 'local-beacon.json')
    const forced = await fairdeal('table', 'new', '--answers', '--game', 'duo', '--seats', '2', '--data', data, '--listen', '/ip4/127.0.0.1/tcp/18032', '--force', '--beacon', beaconFile)
    expect(forced.code, forced.stderr).toBe(0)
    expect((JSON.parse(await readFile(join(data, 'table-draft.json'), 'utf8')) as { listen: string[] }).listen).toEqual(['/ip4/127.0.0.1/tcp/18032'])
    const warnings = forced.stderr.split('\n').filter(l => l.startsWith('warning:'))
    expect(warnings).toEqual([expect.stringMatching(/^warning: the beacon of this table cannot be reached from this machine \(http:\/\/127\.0\.0\.1:18099\/[0-9a-f]{64}: ECONNREFUSED\): .*a beacon of your own/)])
  })
})
