// A beacon group set up by invites (docs/beacon-group.md, "A group by invites"): the creator's desk
// and the members' joins over real libp2p on loopback, in this process; then the whole CLI walk in
// OS processes (new, join, node), ending with the real drand-client verifying a round from every
// member's URL.
import { afterAll, describe, expect, it } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { fetchBeacon, HttpCachingChain, HttpChainClient } from 'drand-client'
import { pino } from 'pino'
import { checkFinalGroup, decodeGroupInvite, signFinalGroup, type GroupInvite } from '../src/core/beacon/group-join.js'
import { secretDigest, newJoinSecret } from '../src/core/join.js'
import { gatherMembers, groupBlockOf, joinGroup, GROUP_DRAFT_FILE, type GroupDraft } from '../src/beacon/group/group-join.js'
import { parseGroupConfig } from '../src/beacon/group/config.js'
import { loadOrCreateIdentity } from '../src/net/identity.js'
import { signerFromSeed } from '../src/core/identity.js'
import { requireBuild } from './helpers/node-process.js'
import { cliInProcess } from './helpers/cli-in-process.js'
import { reservePort } from './helpers/table-nodes.js'

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'fairdeal.js')
const silent = pino({ level: 'silent' })
const roots: string[] = []
afterAll(async () => { for (const r of roots) await rm(r, { recursive: true, force: true }) })

describe('a beacon group by invites: the desk and the joins (libp2p on loopback, in process)', () => {
  it('binds each member to the first node proving its invite, refuses the rest with a reason, and gives every member the same signed group', async () => {
    const root = await mkdtemp(join(tmpdir(), 'fairdeal-group-invite-'))
    roots.push(root)
    const ids = await Promise.all(['m1', 'm2', 'm3', 'other'].map(async d => await loadOrCreateIdentity(join(root, d))))
    const port = await reservePort()
    const secrets = [newJoinSecret(n => crypto.getRandomValues(new Uint8Array(n))), newJoinSecret(n => crypto.getRandomValues(new Uint8Array(n)))]
    const draft: GroupDraft = {
      v: 1, id: 'friends', threshold: 2, period: 3, phaseMs: 10_000, startInMs: 60_000,
      creator: { peer: ids[0].peerId, addrs: [`/ip4/127.0.0.1/tcp/${port}`], url: 'http://127.0.0.1:7501' },
      listen: [`/ip4/127.0.0.1/tcp/${port}`],
      http: { host: '127.0.0.1', port: 7501 },
      slots: { 2: { digest: secretDigest(secrets[0]) }, 3: { digest: secretDigest(secrets[1]) } }
    }
    const stop = new AbortController()
    const gathered = gatherMembers({ dir: join(root, 'm1'), draft, privateKey: ids[0].privateKey, signer: signerFromSeed(ids[0].seed), logger: silent, signal: stop.signal })
    const invite = (slot: number, secret: string): GroupInvite => ({ v: 1, id: 'friends', members: 3, threshold: 2, period: 3, slot, secret, creator: ids[0].peerId, addresses: [`/ip4/127.0.0.1/tcp/${port}/p2p/${ids[0].peerId}`] })
    const join$ = async (i: number, inv: GroupInvite, addr: string): ReturnType<typeof joinGroup> =>
      await joinGroup({ invite: inv, privateKey: ids[i].privateKey, self: ids[i].peerId, addrs: [addr], url: `http://127.0.0.1:${7600 + i}`, logger: silent })
    // Waits for the group to be complete: member 2 holds its stream until member 3 has joined.
    const two = join$(1, invite(2, secrets[0]), '/ip4/127.0.0.1/tcp/7602')
    // A forged secret, and member 2's invite from another node once member 2 is bound: refused, each with its reason.
    await expect(join$(3, invite(3, secrets[0]), '/ip4/127.0.0.1/tcp/7699')).rejects.toThrow(/not valid for member 3 of group friends/)
    await expect.poll(async () => JSON.parse(await readFile(join(root, 'm1', GROUP_DRAFT_FILE), 'utf8').catch(() => '{}')).slots?.[2]?.peer).toBe(ids[1].peerId)
    await expect(join$(3, invite(2, secrets[0]), '/ip4/127.0.0.1/tcp/7699')).rejects.toThrow(/used already: member 2 of group friends is /)
    const three = await join$(2, invite(3, secrets[1]), '/ip4/127.0.0.1/tcp/7603')
    const final = await gathered
    expect(await two).toEqual(final)
    expect(three).toEqual(final)
    const body = final!.body
    expect(body.members.map(m => m.peer)).toEqual([ids[0].peerId, ids[1].peerId, ids[2].peerId])
    expect(body.members.map(m => m.addrs)).toEqual([[`/ip4/127.0.0.1/tcp/${port}`], ['/ip4/127.0.0.1/tcp/7602'], ['/ip4/127.0.0.1/tcp/7603']])
    expect(body.dkg.start).toBeGreaterThan(Date.now() + 50_000)
    // Every member's config block parses to one group (the DKG's session is the same for all).
    const params = [0, 1, 2].map(i => parseGroupConfig(groupBlockOf(body, [`/ip4/127.0.0.1/tcp/${7700 + i}`], { host: '127.0.0.1', port: 7800 + i })).params)
    expect(params[1]).toEqual(params[0])
    expect(params[2]).toEqual(params[0])
    // A member refuses a final group that is not the one its invite describes, or not signed by its creator.
    const inv3 = invite(3, secrets[1])
    expect(checkFinalGroup(final!, inv3, ids[2].peerId, ['/ip4/127.0.0.1/tcp/7603'])).toBeUndefined()
    expect(checkFinalGroup(signFinalGroup({ ...body, threshold: 3 }, signerFromSeed(ids[0].seed)), inv3, ids[2].peerId, ['/ip4/127.0.0.1/tcp/7603'])).toMatch(/size, threshold or period/)
    expect(checkFinalGroup(signFinalGroup(body, signerFromSeed(ids[3].seed)), inv3, ids[2].peerId, ['/ip4/127.0.0.1/tcp/7603'])).toMatch(/not by its creator/)
    expect(checkFinalGroup(final!, inv3, ids[2].peerId, ['/ip4/127.0.0.1/tcp/1'])).toMatch(/lists this member at \/ip4\/127\.0\.0\.1\/tcp\/7603, not at \/ip4\/127\.0\.0\.1\/tcp\/1: join again with the --listen and --announce of the first time/)
    stop.abort()
  })

  it('an invite that is damaged, altered or for a member the group does not have is refused in one sentence', async () => {
    expect(() => decodeGroupInvite('fairdeal-invite:abc')).toThrow(/not a fairdeal group invite/)
    expect(() => decodeGroupInvite('fairdeal-group-invite:%%%')).toThrow(/damaged/)
    const good = { v: 1, id: 'g', members: 3, threshold: 2, period: 3, slot: 4, secret: 'a'.repeat(43), creator: '12D3KooWJQd8GvGuvsPLwPVzn3o3z9AuWqpbjhCCwfbjwrVBv9qt', addresses: ['/ip4/127.0.0.1/tcp/7500'] }
    const enc = (v: unknown): string => 'fairdeal-group-invite:' + Buffer.from(JSON.stringify(v)).toString('base64url')
    expect(() => decodeGroupInvite(enc(good))).toThrow(/offers member 4 of a 3-member group/)
    expect(() => decodeGroupInvite(enc({ ...good, slot: 3, extra: 1 }))).toThrow(/damaged or from another fairdeal version/)
    expect(decodeGroupInvite(enc({ ...good, slot: 3 })).slot).toBe(3)
    // Addresses are bounded (the final group, every member's, must fit one message).
    expect(() => decodeGroupInvite(enc({ ...good, slot: 3, addresses: [`/dns/${'a'.repeat(260)}/tcp/1`] }))).toThrow(/damaged or from another fairdeal version/)
    expect(() => decodeGroupInvite(enc({ ...good, slot: 3, addresses: Array(5).fill('/ip4/127.0.0.1/tcp/1') }))).toThrow(/damaged or from another fairdeal version/)
    const refused = await cliInProcess('beacon', 'group', 'join', enc({ ...good, slot: 9 }), '--data', join(tmpdir(), 'never-made'))
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/offers member 9 of a 3-member group/)
    // A table's node config in the directory is not replaced (without --force).
    const dir = await mkdtemp(join(tmpdir(), 'fairdeal-group-over-table-'))
    roots.push(dir)
    await writeFile(join(dir, 'node.json'), JSON.stringify({ data: '.', table: { id: 't' } }))
    for (const args of [['new', '--members', '2'], ['join', enc({ ...good, slot: 3 })]]) {
      const over = await cliInProcess('beacon', 'group', ...args, '--data', dir)
      expect(over.code).toBe(2)
      expect(over.stderr).toMatch(/holds another node config \(a table's, or another group's\)/)
    }
    expect(JSON.parse(await readFile(join(dir, 'node.json'), 'utf8'))).toEqual({ data: '.', table: { id: 't' } })
  })
})

// The CLI walk in OS processes (new, join, node, the DKG, drand-client from every member's URL, a
// member joining again once the group is complete) is test/beacon-group-reshare-walk.test.ts,
// which goes on to reshare the group.
