// A member killed between the files its finished run writes (docs/beacon-group.md "The DKG",
// "Resharing": the run's state, then the share and the transcript) comes back with its share. A
// one-member group on loopback, on a stepped clock: its DKG and reshare end at their start.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { prepareLocalGroup, prepareLocalReshare, type LocalGroup } from '../src/beacon/group/local-group.js'
import { groupDir, startGroupNode } from '../src/beacon/group/node.js'
import { PREVIOUS_SHARE_FILE, SHARE_FILE, TRANSCRIPT_FILE } from '../src/beacon/group/member.js'
import { groupSession, roundTime, type ChainInfo, type DkgResult } from '../src/core/beacon/index.js'
import { steppedClock } from './helpers/beacon-group.js'
import { groupOfTwo } from './helpers/group-of-two.js'
import { DKG_SHARE } from '../src/core/beacon/dkg-documents.js'
import { bls12_381 } from '@noble/curves/bls12-381.js'
import { reservePort } from './helpers/table-nodes.js'

const Fr = bls12_381.fields.Fr

const silent = pino({ level: process.env.GROUP_TEST_LOG ?? 'silent' })
const clock = steppedClock()
let root: string
let group: LocalGroup
let dir: string

type Member = Awaited<ReturnType<typeof startGroupNode>>

/** The member's chain once it has one, or undefined after `ms` (real time). */
async function readyWithin (m: Member, ms = 5000): Promise<ChainInfo | undefined> {
  return await Promise.race([m.ready, new Promise<undefined>(resolve => setTimeout(() => resolve(undefined), ms))])
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'fairdeal-crash-'))
  group = await prepareLocalGroup({ root, freePort: reservePort, members: 1, threshold: 1, period: 1, now: clock.now(), startInMs: 1000, phaseMs: 60_000, genesisAfterMs: 1000 })
  dir = groupDir(group.dataDirs[0], group.configs[0].params.id)
})

afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

it('killed after its DKG state says done but before share.json and transcript.json: restarted, it computes its share again', async () => {
  const m = await startGroupNode({ config: group.configs[0], dataDir: group.dataDirs[0], logger: silent, clock, tickMs: 20 })
  clock.set(group.configs[0].params.dkg.start)
  const chain = await m.ready
  await m.stop()
  // The crash: dkg-state.json (phase done) is on disk, the share and the transcript are not.
  await rm(join(dir, SHARE_FILE))
  await rm(join(dir, TRANSCRIPT_FILE))
  const again = await startGroupNode({ config: group.configs[0], dataDir: group.dataDirs[0], logger: silent, clock, tickMs: 20 })
  try {
    expect(await readyWithin(again)).toEqual(chain)
    expect(JSON.parse(await readFile(join(dir, SHARE_FILE), 'utf8')).session).toBe(groupSession(group.configs[0].params))
  } finally { await again.stop() }
})

it('killed after a reshare wrote share.json but before transcript.json: restarted, it still has the new share and signs for the new group', async () => {
  const first = await startGroupNode({ config: group.configs[0], dataDir: group.dataDirs[0], logger: silent, clock, tickMs: 20 })
  const chain = await first.ready
  const old = JSON.parse(await readFile(join(dir, TRANSCRIPT_FILE), 'utf8')) as DkgResult
  await first.stop()
  await copyFile(join(dir, TRANSCRIPT_FILE), join(root, 'old-transcript.json'))
  // 1/1 → 2/2: the old member and a newcomer; the old member's new share is not its old one.
  const start = roundTime(chain, 5)
  const reshare = await prepareLocalReshare({ freePort: reservePort, root, group, old, newcomers: 1, threshold: 2, start, phaseMs: 1000, transition: 10 })
  const nodes = [0, 1].map(async i => await startGroupNode({ config: reshare.configs[i], dataDir: reshare.dataDirs[i], logger: silent, clock, tickMs: 20 }))
  const [m, newcomer] = await Promise.all(nodes)
  try {
    clock.set(start)
    const deadline = Date.now() + 20_000
    while ([m, newcomer].some(x => x.status().reshare?.state !== 'done') && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
    expect(m.status().reshare?.state).toBe('done')
    await m.stop()
    const session = groupSession(reshare.configs[0].params)
    expect(JSON.parse(await readFile(join(dir, SHARE_FILE), 'utf8')).session).toBe(session)
    // The crash: share-previous.json and the new share.json are written, transcript.json is the old one.
    await copyFile(join(root, 'old-transcript.json'), join(dir, TRANSCRIPT_FILE))
    const again = await startGroupNode({ config: reshare.configs[0], dataDir: reshare.dataDirs[0], logger: silent, clock, tickMs: 20 })
    try {
      expect(await readyWithin(again)).toEqual(chain)
      const deadline2 = Date.now() + 10_000
      while (again.status().reshare?.state !== 'done' && Date.now() < deadline2) await new Promise(resolve => setTimeout(resolve, 20))
      expect(again.status().reshare?.state).toBe('done')
      // Written again (the member's writes follow its state): the reshare's transcript.
      const written = async (): Promise<string> => groupSession((JSON.parse(await readFile(join(dir, TRANSCRIPT_FILE), 'utf8')) as DkgResult).transcript.params)
      const deadline3 = Date.now() + 10_000
      while (await written() !== session && Date.now() < deadline3) await new Promise(resolve => setTimeout(resolve, 20))
      expect(await written()).toBe(session)
      expect(JSON.parse(await readFile(join(dir, PREVIOUS_SHARE_FILE), 'utf8')).session).toBe(groupSession(group.configs[0].params))
      // From the transition the new group (both members) makes the rounds.
      clock.set(roundTime(chain, 11) + 1)
      const until = Date.now() + 10_000
      while ((again.entry(11) === undefined || newcomer.entry(11) === undefined) && Date.now() < until) await new Promise(resolve => setTimeout(resolve, 20))
      expect(again.entry(11)).toBeDefined()
      expect(newcomer.entry(11)).toEqual(again.entry(11))
    } finally { await again.stop() }
  } finally {
    await m.stop()
    await newcomer.stop()
  }
})

it('once round transition + 40 is due, nothing on an old member\'s disk holds its old share: not a member staying in the group, not one leaving it', async () => {
  // A 2/2 group {A, B} reshared to {A, C} (2/2): B leaves, C is new.
  const root2 = join(root, 'retire')
  const { group: g, dirs, chain, shares: oldShares, old } = await groupOfTwo(root2, clock, silent)
  const start = roundTime(chain, 5)
  const T = 10
  const reshare = await prepareLocalReshare({ freePort: reservePort, root: root2, group: g, old, newcomers: 1, keep: [1], threshold: 2, start, phaseMs: 1000, transition: T })
  // Members: A (old 1, new 1), B (old 2, leaving), C (new 2).
  const nodes = await Promise.all([0, 1, 2].map(async i => await startGroupNode({ config: reshare.configs[i], dataDir: reshare.dataDirs[i], logger: silent, clock, tickMs: 20 })))
  // Files the old share is in, or can be computed from: a saved run state holds the shares the
  // member received (their sum is its share of that run's group) and its polynomial.
  const holding = async (d: string, secret: string): Promise<string[]> => {
    const out: string[] = []
    for (const f of await readdir(d)) {
      // The member deletes its old share's files while this polls: one gone since the listing holds nothing.
      const text = await readFile(join(d, f), 'utf8').catch((err: NodeJS.ErrnoException) => { if (err.code === 'ENOENT') return undefined; throw err })
      if (text === undefined) continue
      if (text.includes(secret)) { out.push(f); continue }
      let state: { documents?: Array<{ type: string, body: { dealer: number, recipient: number, share: string } }> } | undefined
      try { state = JSON.parse(text) } catch { continue }
      const byDealer = new Map<number, bigint>()
      for (const doc of state?.documents ?? []) {
        if (doc.type === DKG_SHARE && !byDealer.has(doc.body.dealer)) byDealer.set(doc.body.dealer, BigInt('0x' + doc.body.share))
      }
      let sum = 0n
      for (const v of byDealer.values()) sum = Fr.add(sum, v)
      if (byDealer.size > 0 && sum === BigInt('0x' + secret)) out.push(f)
    }
    return out
  }
  try {
    clock.set(start)
    const deadline = Date.now() + 20_000
    const states = (): Array<string | undefined> => nodes.map(n => n.status().reshare?.state)
    while (JSON.stringify(states()) !== JSON.stringify(['done', 'left', 'done']) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
    expect(states()).toEqual(['done', 'left', 'done'])
    clock.set(roundTime(chain, T + 41) + 1)
    const until = Date.now() + 10_000
    while (((await holding(dirs[0], oldShares[0])).length > 0 || (await holding(dirs[1], oldShares[1])).length > 0) && Date.now() < until) await new Promise(resolve => setTimeout(resolve, 50))
    expect(await holding(dirs[0], oldShares[0])).toEqual([])
    expect(await holding(dirs[1], oldShares[1])).toEqual([])
  } finally {
    for (const n of nodes) await n.stop()
  }
  // A, restarted, still signs for the new group with C.
  const a = await startGroupNode({ config: reshare.configs[0], dataDir: reshare.dataDirs[0], logger: silent, clock, tickMs: 20 })
  const c = await startGroupNode({ config: reshare.configs[2], dataDir: reshare.dataDirs[2], logger: silent, clock, tickMs: 20 })
  try {
    expect(await readyWithin(a)).toEqual(chain)
    clock.set(roundTime(chain, T + 42) + 1)
    const until = Date.now() + 10_000
    while (a.entry(T + 42) === undefined && Date.now() < until) await new Promise(resolve => setTimeout(resolve, 20))
    expect(a.entry(T + 42)).toBeDefined()
  } finally {
    await a.stop()
    await c.stop()
  }
})
