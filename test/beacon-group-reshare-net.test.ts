// A reshare over the network (docs/beacon-group.md "Resharing"): a 3-member group (threshold 2) on
// loopback, real libp2p and HTTP, reshared to 4 members with threshold 3 while it makes rounds (the
// five-to-seven reshare runs as OS processes in beacon-group-reshare-walk.test.ts; here a small
// group, every member in this process). The old members restart one by one on the reshare's
// config (member 3 with its share deleted), a newcomer starts; the old group signs until the transition, the new group from it. The public key
// and chain hash do not change, no round is missing, drand-client verifies rounds from before and
// after the reshare from every member's URL, and a tlock ciphertext sealed before opens after.
// A second reshare with too few of the new members is refused, each with its signed record.
// The clock is stepped by the test (as in beacon-group-net.test.ts), so nothing waits on real time.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fetchBeacon, HttpCachingChain, HttpChainClient } from 'drand-client'
import { pino } from 'pino'
import { steppedClock, untilValue } from './helpers/beacon-group.js'
import { groupSession, reshareParams, roundAt, roundTime, verifyBeaconEntry, RESHARE_REFUSED, type ChainInfo, type DkgResult, type RefusalBody } from '../src/core/beacon/index.js'
import { verifyDocument, type Signed } from '../src/core/signed.js'
import { prepareLocalGroup, prepareLocalReshare, type LocalGroup, type LocalReshare } from '../src/beacon/group/local-group.js'
import { groupDir, startGroupNode } from '../src/beacon/group/node.js'
import { PREVIOUS_SHARE_FILE, RECORDS_FILE, SHARE_FILE, TRANSCRIPT_FILE } from '../src/beacon/group/member.js'
import { timelockDecryptWithTlockJs, timelockEncryptText } from '../src/beacon/tlock.js'
import { verifyDataDir } from '../src/daemon/verify-data.js'
import { verifyLogPayload } from '../src/core/receipt.js'
import { logEntries } from './helpers/table-nodes.js'
import { cliInProcess } from './helpers/cli-in-process.js'
import { reservePort } from './helpers/table-nodes.js'


type Member = Awaited<ReturnType<typeof startGroupNode>>
const silent = pino({ level: process.env.GROUP_TEST_LOG ?? 'silent' })

async function until (what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}


function client (relay: string, chain: ChainInfo): HttpChainClient {
  const opts = { disableBeaconVerification: false, noCache: true, chainVerificationParams: { chainHash: chain.hash, publicKey: chain.public_key } }
  return new HttpChainClient(new HttpCachingChain(relay, opts), opts)
}

const clock = steppedClock()
let root: string
let group: LocalGroup
let reshare: LocalReshare
let chain: ChainInfo
const members: Array<Member | undefined> = []

const start = async (config: LocalGroup['configs'][number], dir: string, i: number): Promise<Member> => {
  members[i] = await startGroupNode({ config, dataDir: dir, logger: silent, clock, tickMs: 50, ownLog: true })
  return members[i] as Member
}
const stop = async (i: number): Promise<void> => { await members[i]?.stop(); members[i] = undefined }
const up = (): number[] => members.flatMap((m, i) => m === undefined ? [] : [i])
/** Makes `round` due and waits until every member up holds it. */
async function make (round: number, who = up()): Promise<void> {
  clock.set(roundTime(chain, round) + 1)
  await until(`round ${round} at members ${who.map(i => i + 1).join(', ')}`, () => who.every(i => members[i]?.entry(round) !== undefined)).catch((err: Error) => {
    // Which member lacks it, and why (its status says).
    throw new Error(`${err.message}: ${JSON.stringify(who.map(i => { const s = members[i]?.status(); return { member: i + 1, has: members[i]?.entry(round) !== undefined, waiting: s?.waiting, reshare: s?.reshare, suspects: s?.suspects } }))}`)
  })
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'fairdeal-reshare-'))
  group = await prepareLocalGroup({ root, freePort: reservePort, members: 3, threshold: 2, period: 1, now: clock.now(), startInMs: 1000, phaseMs: 60_000, genesisAfterMs: 1000 })
  for (let i = 0; i < 3; i++) await start(group.configs[i], group.dataDirs[i], i)
  clock.set(group.configs[0].params.dkg.start)
  chain = await (members[0] as Member).ready
  for (let i = 1; i < 3; i++) await (members[i] as Member).ready
})

afterAll(async () => {
  for (let i = 0; i < members.length; i++) await stop(i)
  await rm(root, { recursive: true, force: true })
})

it('3/2 reshared to 4/3 while making rounds: same key and chain hash, no round missing, drand-client verifies rounds before and after from every member\'s URL, a tlock sealed before opens after, a member whose share was deleted is back; a second reshare below the old threshold is refused with signed records and the group goes on', async () => {
  for (let r = 1; r <= 3; r++) await make(r)
  const transcript = JSON.parse(await readFile(join(groupDir(group.dataDirs[0], chain.metadata.beaconID), TRANSCRIPT_FILE), 'utf8')) as DkgResult
  // The reshare deals at round 4 (of the stepped clock), each phase at most a round long, and the
  // new group signs from round T = 9 (the run ends by round 7). Few rounds: each costs all members.
  // The clock passes a phase's deadline only once every document sent in it is in everywhere (as
  // the DKG's agreement assumes: docs/beacon-group.md "One deal per dealer for all").
  const dkgStart = roundTime(chain, 4)
  const T = 9
  reshare = await prepareLocalReshare({ freePort: reservePort, root, group, old: transcript, newcomers: 1, threshold: 3, start: dkgStart, phaseMs: 1_000, transition: T })
  expect(reshare.configs[0].params.reshare?.chain).toEqual(chain)
  const sealed = await timelockEncryptText('sealed before the reshare', chain, T + 2)

  // Member 3 loses its share (a wiped disk): it comes back through the reshare only.
  await stop(2)
  await rm(join(groupDir(group.dataDirs[2], chain.metadata.beaconID), SHARE_FILE))
  // The old members restart on the reshare's config one at a time; rounds go on meanwhile.
  for (const i of [0, 1, 2]) {
    if (i !== 2) await stop(i)
    await start(reshare.configs[i], reshare.dataDirs[i], i)
  }
  await start(reshare.configs[3], reshare.dataDirs[3], 3)
  // The old members holding their share (1 and 2: member 3 has none any more) make the rounds until the
  // transition; meanwhile the reshare runs. Its deal phase lasts to its deadline (a round): member
  // 3 deals nothing. Then every participant is done before the transition.
  await make(4, [0, 1])
  await until('2 deals and 2 shares at every member', () => [0, 1, 2, 3].every(i => { const h = members[i]?.status().dkgHeld; return h?.deals === 2 && h.shares === 2 }))
  await make(5, [0, 1]) // the deal phase's deadline: then everyone answers, and the run ends
  await until('the reshare done everywhere', () => [0, 1, 2, 3].every(i => members[i]?.status().reshare?.state === 'done'))
  for (let r = 6; r < T; r++) await make(r, [0, 1])
  const last = T + 3
  for (let r = T; r <= last; r++) await make(r, [0, 1, 2, 3])
  // The newcomers and member 3 fetched the rounds before the transition from the others (catch-up).
  await until(`rounds 1–${T - 1} at the new members`, () => [2, 3].every(i => Array.from({ length: T - 1 }, (_, k) => k + 1).every(r => members[i]?.entry(r) !== undefined)))

  for (const [i, m] of members.entries()) {
    const s = (m as Member).status()
    expect(s.chain).toEqual(chain)
    expect(s.members).toBe(4)
    expect(s.threshold).toBe(3)
    expect(s.index).toBe(i + 1)
  }
  // Every round from 1 on, verified against the unchanged chain, the same at every member.
  for (let r = 1; r <= last; r++) {
    const e = members[0]?.entry(r)
    expect(e, `round ${r}`).toBeDefined()
    expect(verifyBeaconEntry(chain, e as NonNullable<typeof e>, r).ok).toBe(true)
    for (const m of members) expect(m?.entry(r)?.signature).toBe(e?.signature)
  }
  // drand-client, unmodified, from each of the seven URLs: a round of the old group and one of the new.
  for (const url of reshare.urls) {
    for (const r of [3, T - 1, T, last]) {
      const beacon = await fetchBeacon(client(`${url}/${chain.hash}`, chain), r)
      expect(beacon.signature).toBe(members[0]?.entry(r)?.signature)
    }
    expect(await (await fetch(`${url}/info`)).json()).toEqual(chain)
  }
  expect(new TextDecoder().decode(await timelockDecryptWithTlockJs(sealed, chain, members[3]?.entry(T + 2) as NonNullable<ReturnType<Member['entry']>>))).toBe('sealed before the reshare')

  // The old share is deleted once the new group has taken over; the new one is 0600.
  // (The clock jumps there: the rounds in between are not what this checks.)
  await make(T + 32 + 8 + 1)
  const dir = groupDir(group.dataDirs[0], chain.metadata.beaconID)
  await until('share-previous.json deleted', async () => await stat(join(dir, PREVIOUS_SHARE_FILE)).then(() => false, () => true))
  expect((await stat(join(dir, SHARE_FILE))).mode & 0o777).toBe(0o600)
  // A second reshare with two of the four (the old threshold is now 3): refused by each of them,
  // each with its signed record naming the members that did not deal; the group goes on with all
  // four through the round that reshare meant to hand over.
  const now = roundAt(chain, clock.now())
  const second = JSON.parse(await readFile(join(dir, TRANSCRIPT_FILE), 'utf8')) as DkgResult
  const secondStart = roundTime(chain, now + 2)
  const again = reshareParams({ params: reshare.configs[0].params, commitments: second.commitments, chainInfo: chain }, {
    members: reshare.peerIds, threshold: 3, dkg: { start: secondStart, phaseMs: 1_000 }, transition: now + 6
  })
  for (const i of [0, 1]) {
    await stop(i)
    await start({ ...reshare.configs[i], params: again }, reshare.dataDirs[i], i)
  }
  await make(now + 1)
  await make(now + 2) // the second reshare deals
  const held = (deals: number, shares: number, responses: number) => () => [0, 1].every(i => { const h = members[i]?.status().dkgHeld; return h !== undefined && h.deals === deals && h.shares === shares && h.responses >= responses })
  await until('2 deals and shares at members 1 and 2', held(2, 2, 0))
  await make(now + 3) // the deal phase's deadline
  await until('2 responses at members 1 and 2', held(2, 2, 2))
  await make(now + 4) // the complaint phase's deadline: refused
  for (let r = now + 5; r <= now + 8; r++) await make(r)
  for (const i of [0, 1]) {
    expect(members[i]?.status().reshare).toMatchObject({ state: 'refused', message: expect.stringMatching(/reshare refused: 2 qualified old member\(s\) \[1, 2\], the old group's threshold is 3/) })
    // Written by the member's write chain, after its status changed.
    const file = join(groupDir(reshare.dataDirs[i], chain.metadata.beaconID), RECORDS_FILE)
    const refusal = await untilValue('the refusal record', async () => {
      const text = await readFile(file, 'utf8').catch(() => '')
      return text.trim().split('\n').filter(l => l !== '').map(l => JSON.parse(l) as Signed<RefusalBody>).find(r => r.type === RESHARE_REFUSED)
    })
    expect(refusal?.signer).toBe(reshare.peerIds[i])
    expect(verifyDocument(refusal as Signed<RefusalBody>)).toBe(true)
    expect(refusal?.body).toMatchObject({ session: groupSession(again), dealers: [1, 2], oldThreshold: 3, reason: 'below-old-threshold' })
    expect(refusal?.body.rejected).toEqual([3, 4].map(dealer => ({ dealer, reason: 'no-deal' })))
  }

  // Each member's log holds the DKG and the reshare (both `dkg` entries; a newcomer's only the
  // reshare), members 1 and 2's the refused second reshare too, and verifies.
  for (let i = 0; i < 4; i++) await stop(i)
  for (const [i, count, refused] of [[0, 2, 1], [2, 2, 0], [3, 1, 0]]) {
    const kinds = (await logEntries(reshare.dataDirs[i])).map(e => e.body.kind)
    expect(kinds.filter(k => k === 'dkg')).toHaveLength(count)
    expect(kinds.filter(k => k === 'beacon-reshare-refused')).toHaveLength(refused)
    expect(await verifyDataDir(reshare.dataDirs[i], verifyLogPayload)).toEqual({ passed: kinds.length, failed: 0, incomplete: 0, failures: [] })
  }
  // `log show` says what each row is: the DKG, the reshare, the refused reshare and why.
  const shown = await cliInProcess('log', 'show', '--data', reshare.dataDirs[0])
  expect(shown.code, shown.stderr).toBe(0)
  expect(shown.stdout).toMatch(/beacon group fairdeal-demo-group: member 1 of 3, threshold 2/)
  expect(shown.stdout).toMatch(/beacon group fairdeal-demo-group \(reshare\): member 1 of 4, threshold 3/)
  expect(shown.stdout).toMatch(/beacon group fairdeal-demo-group: reshare refused: 2 qualified old member/)
}, 120_000)
