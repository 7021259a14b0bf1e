// A reshare run by the members' DKG machines (docs/beacon-group.md "Resharing"): the old group's
// members deal their shares to the new members, who complain, get answers and agree on the
// qualified old dealers as in the DKG; the new group keeps the key and the chain. In memory, on the
// machines' clock: a 5/3 group reshared to 7/4 (one old member leaving, three new), an old member
// that lost its share coming back, a dealer dealing something other than its share, a reshare
// refused below the old threshold (each node's signed refusal), and a dealer restarted mid-run.
import { describe, expect, it } from 'vitest'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { groupDir, oldGroupProblem } from '../src/beacon/group/node.js'
import { routeRoundMessage, SHARE_FILE, TRANSCRIPT_FILE } from '../src/beacon/group/member.js'
import { prepareLocalGroup } from '../src/beacon/group/local-group.js'
import { loadOrCreateIdentity } from '../src/net/identity.js'
import { signerFromSeed } from '../src/core/identity.js'
import { decodeGroupInvite } from '../src/core/beacon/group-join.js'
import { cliInProcess } from './helpers/cli-in-process.js'
import { commitPolynomial, entryFromSignature, evaluatePolynomial, hashRound, partialSign, pointHex, randomPolynomial, recoverG1, scalarFromHex, scalarToHex } from '../src/core/beacon/threshold.js'
import { DkgMachine, publicShares, qualify, verifyDkgResult, type DkgEffect, type DkgResult, type DkgSnapshot } from '../src/core/beacon/dkg.js'
import { DKG_DEAL, DKG_SHARE, type DealBody, type ShareBody } from '../src/core/beacon/dkg-documents.js'
import { groupSession, reshareParams, type GroupParams } from '../src/core/beacon/group-params.js'
import { RESHARE_REFUSED } from '../src/core/beacon/reshare.js'
import { checkDkgRecord, checkRefusalRecord, makeDkgRecord, makeRefusalRecord, verifyBeaconEntry, type RefusalBody, type RefusalRecord } from '../src/core/beacon/index.js'
import { signDocument, verifyDocument, type Signed } from '../src/core/signed.js'
import { dkgGroup, drandClientVerifies, memberSigners, runDkg, seededRandom } from './helpers/beacon-group.js'
import { reservePort } from './helpers/table-nodes.js'

const { signers: oldSigners, params: oldParams, results: old, chain } = dkgGroup(5, 3, 'reshare-run')
const newcomers = memberSigners(3, 'reshare-run-new')
// Old members 1–4 stay (new indices 1–4), old member 5 leaves, three newcomers are 5–7.
const nodes = [...oldSigners, ...newcomers]
const newMembers = [...oldSigners.slice(0, 4), ...newcomers].map(s => s.peerId)
const dkgStart = chain.genesis_time * 1000 + 60_000

/** The snapshot a machine saved among `effects`, as a restart reads it back from disk (a JSON copy). */
function savedSnapshot (effects: DkgEffect[]): DkgSnapshot {
  const saved = effects.find(e => e.kind === 'persist')
  if (saved?.kind !== 'persist') throw new Error('no snapshot')
  return JSON.parse(JSON.stringify(saved.snapshot)) as DkgSnapshot
}

function params (members = newMembers, threshold = 4): GroupParams {
  return reshareParams({ params: oldParams, commitments: old[0].commitments, chainInfo: chain }, {
    members, threshold, dkg: { start: dkgStart, phaseMs: 10_000 }, transition: 100
  })
}

/** Recovers round `round` from the given new members' shares (index → share). */
function roundFrom (shares: Array<[number, string]>, round: number): ReturnType<typeof entryFromSignature> {
  const h = hashRound(round)
  return entryFromSignature(round, recoverG1(shares.map(([index, s]) => ({ index, point: partialSign(scalarFromHex(s, 'share'), h) }))))
}

const oldShare = (i: number): string | undefined => i <= 5 ? old[i - 1].share : undefined

describe('a reshare run by the machines', () => {
  it('5/3 → 7/4: the same key and chain for every new member, any 4 new shares sign rounds drand-client verifies; the leaving member sees the same outcome', async () => {
    const p = params()
    const run = runDkg(p, nodes, { seed: 'reshare-run', oldShare })
    const byNew = (j: number): DkgResult => run.results[nodes.findIndex(s => s.peerId === newMembers[j - 1])] as DkgResult
    expect(run.failures.filter(f => f !== undefined)).toEqual([])
    for (let j = 1; j <= 7; j++) {
      const r = byNew(j)
      expect(r.index).toBe(j)
      expect(r.groupKey).toBe(chain.public_key)
      expect(r.chainInfo).toEqual(chain)
      expect(r.qual).toEqual([1, 2, 3, 4, 5])
      expect(r.commitments).toEqual(byNew(1).commitments)
      expect(r.groupHash).toBe(byNew(1).groupHash)
      expect(r.commitments).toHaveLength(4)
      // Offline: the outcome follows from the transcript, and the share matches its public share.
      verifyDkgResult({ ...r }, verifyDocument)
    }
    expect(run.results[4]).toBeUndefined()
    expect(run.left[4]?.groupHash).toBe(byNew(1).groupHash)
    const pubs = publicShares(byNew(1).commitments, 7)
    expect(pubs).toHaveLength(7)
    for (const subset of [[1, 2, 3, 4], [4, 5, 6, 7], [1, 3, 5, 7]]) {
      const entry = roundFrom(subset.map(j => [j, byNew(j).share]), 150)
      expect(verifyBeaconEntry(chain, entry, 150).ok).toBe(true)
      expect(await drandClientVerifies(chain, entry)).toBe(true)
    }
    // The reshare as a `dkg` entry of a member's log (docs/log.md): it verifies, and names its member.
    const record = makeDkgRecord(byNew(6), [])
    expect(checkDkgRecord(JSON.parse(JSON.stringify(record)), newMembers[5], verifyDocument)).toMatchObject({ problems: [] })
    expect(checkDkgRecord(record, newMembers[0], verifyDocument).problems[0]?.code).toBe('dkg-member')
    // Other reshare parameters are another session: the signed documents are not of it.
    const otherRun = { ...record, params: { ...record.params, reshare: { ...record.params.reshare, transition: 101 } } }
    expect(checkDkgRecord(otherRun, newMembers[5], verifyDocument).problems[0]?.code).toBe('dkg-outcome')
    const extra = { ...record, params: { ...record.params, reshare: { ...record.params.reshare, note: 1 } } }
    expect(checkDkgRecord(extra, newMembers[5], verifyDocument).problems[0]?.code).toBe('dkg-form')
    // Three new shares are not enough: the new threshold is 4.
    expect(verifyBeaconEntry(chain, roundFrom([[5, byNew(5).share], [6, byNew(6).share], [7, byNew(7).share]], 150), 150).ok).toBe(false)
  })

  it('a reshare to threshold 1 (as `beacon group reshare --threshold 1` allows): every dealer deals its old share as a constant, and one new share signs a round', () => {
    const p = params(newMembers.slice(0, 3), 1)
    const run = runDkg(p, oldSigners, { seed: 'reshare-t1', oldShare })
    expect(run.failures.filter(f => f !== undefined)).toEqual([])
    for (let j = 1; j <= 3; j++) {
      const r = run.results[j - 1] as DkgResult
      expect(r.groupKey).toBe(chain.public_key)
      expect(r.commitments).toHaveLength(1)
      expect(verifyBeaconEntry(chain, roundFrom([[j, r.share]], 150), 150).ok).toBe(true)
    }
  })

  it('an old member that lost its share deals nothing and gets a new share like a newcomer; it is out of qual (no-deal), the key is kept', () => {
    const run = runDkg(params(), nodes, { seed: 'reshare-lost', oldShare: (i) => i === 2 ? undefined : oldShare(i) })
    const r2 = run.results[1] as DkgResult
    expect(r2.qual).toEqual([1, 3, 4, 5])
    expect(r2.disqualified).toEqual([{ dealer: 2, reason: 'no-deal' }])
    expect(r2.groupKey).toBe(chain.public_key)
    verifyDkgResult({ ...r2 }, verifyDocument)
    const entry = roundFrom([[2, r2.share], [5, (run.results[5] as DkgResult).share], [6, (run.results[6] as DkgResult).share], [7, (run.results[7] as DkgResult).share]], 200)
    expect(verifyBeaconEntry(chain, entry, 200).ok).toBe(true)
  })

  it('a dealer that deals a polynomial not on its old share is out for every member (bad-deal), whatever shares it sends', () => {
    const p = params()
    const session = groupSession(p)
    const liar = oldSigners[4]
    const fake = randomPolynomial(4, seededRandom('fake'))
    const fakeDeal = signDocument<DealBody>(DKG_DEAL, { session, dealer: 5, commitments: commitPolynomial(fake).map(pointHex) }, liar)
    const run = runDkg(p, nodes, {
      seed: 'reshare-bad-deal',
      oldShare,
      intercept: (m) => {
        if (m.from !== liar.peerId) return m
        const doc = m.doc as { type: string, body: { recipient?: number } }
        if (doc.type === DKG_DEAL) return { ...m, doc: fakeDeal }
        if (doc.type === DKG_SHARE) {
          const recipient = doc.body.recipient as number
          return { ...m, doc: signDocument<ShareBody>(DKG_SHARE, { session, dealer: 5, recipient, share: scalarToHex(evaluatePolynomial(fake, recipient)) }, liar) }
        }
        return m
      }
    })
    for (let i = 0; i < nodes.length; i++) {
      if (i === 4) continue
      const r = run.results[i] as DkgResult
      expect(r.qual).toEqual([1, 2, 3, 4])
      expect(r.disqualified).toEqual([{ dealer: 5, reason: 'bad-deal' }])
      expect(r.groupKey).toBe(chain.public_key)
    }
  })

  it('fewer qualified old dealers than the old threshold: refused by every node, each with a signed record naming the old members missing', () => {
    const p = params()
    // Old members 3, 4 and 5 hold no share (5, leaving without one, is not even running).
    const run = runDkg(p, nodes, { seed: 'reshare-refused', oldShare: (i) => i <= 2 ? oldShare(i) : undefined, down: new Set([5]) })
    expect(run.results.every(r => r === undefined)).toBe(true)
    for (let i = 0; i < nodes.length; i++) {
      if (i === 4) continue
      expect(run.failures[i]).toMatch(/reshare refused: 2 qualified old member\(s\) \[1, 2\], the old group's threshold is 3/)
      const record = run.refusals[i]
      expect(record).toBeDefined()
      if (record === undefined) continue
      expect(record.type).toBe(RESHARE_REFUSED)
      expect(record.signer).toBe(nodes[i].peerId)
      expect(verifyDocument(record)).toBe(true)
      expect(record.body).toMatchObject({ session: groupSession(p), chainHash: chain.hash, oldThreshold: 3, dealers: [1, 2], reason: 'below-old-threshold' })
      expect(record.body.rejected).toEqual([{ dealer: 3, reason: 'no-deal' }, { dealer: 4, reason: 'no-deal' }, { dealer: 5, reason: 'no-deal' }])
    }
    // The transcript proves it: qualify refuses it the same way offline; as a log entry (docs/log.md
    // "Refused reshares") the refusal verifies in its signer's log, and each tampering has its code.
    const machine = run.machines[0] as DkgMachine
    expect(() => qualify(machine.transcript(), verifyDocument)).toThrow(/reshare refused/)
    const entry = JSON.parse(JSON.stringify(makeRefusalRecord(machine.transcript(), run.refusals[0] as Signed<RefusalBody>))) as RefusalRecord
    expect(checkRefusalRecord(entry, nodes[0].peerId, verifyDocument).problems).toEqual([])
    const code = (p: unknown, owner = nodes[0].peerId): string | undefined => checkRefusalRecord(p, owner, verifyDocument).problems[0]?.code
    expect(code(entry, nodes[1].peerId)).toBe('reshare-refused-signer')
    expect(code({ ...entry, extra: 1 })).toBe('reshare-refused-form')
    expect(code({ ...entry, params: { ...entry.params, reshare: undefined } })).toBe('reshare-refused-form')
    // A refusal naming an old member out that the transcript shows dealing (re-signed by its signer: the signature is not the point).
    const lying = signDocument(RESHARE_REFUSED, { ...entry.refusal.body, dealers: [1], rejected: [{ dealer: 2, reason: 'no-deal' }, ...entry.refusal.body.rejected] }, nodes[0])
    expect(code({ ...entry, refusal: lying })).toBe('reshare-refused-outcome')
    expect(code({ ...entry, refusal: { ...entry.refusal, sig: entry.refusal.sig.replace(/^./, c => c === '0' ? '1' : '0') } })).toBe('reshare-refused-signer')
    // A transcript whose reshare went through refuses nothing.
    const good = runDkg(p, nodes, { seed: 'reshare-refused-good', oldShare }).machines[0] as DkgMachine
    expect(code({ ...JSON.parse(JSON.stringify(makeRefusalRecord(good.transcript(), entry.refusal))) })).toBe('reshare-refused-outcome')
  })

  it('fewer new members taking part than the new threshold: refused (below-new-threshold), the old group stays', () => {
    // Old member 4 and the three newcomers are down: new members 1–3 answer, the new threshold is 4.
    const run = runDkg(params(), nodes, { seed: 'reshare-few-new', oldShare, down: new Set([4, 6, 7, 8]) })
    for (const i of [0, 1, 2, 4]) {
      expect(run.failures[i]).toMatch(/reshare refused: 3 new member\(s\) took part \[1, 2, 3\], the new threshold is 4/)
      expect(run.refusals[i]?.body).toMatchObject({ dealers: [1, 2, 3, 5], reason: 'below-new-threshold' })
      expect(run.results[i]).toBeUndefined()
    }
    expect(run.left[4]).toBeUndefined()
  })

  it('a node that starts after the deal phase and sees too little says it missed the reshare, and signs no refusal', () => {
    const p = params()
    const m = new DkgMachine({ params: p, signer: newcomers[0], random: seededRandom('late') })
    const started = m.start(dkgStart + 10_000)
    const out = [...started, ...m.tick(dkgStart + 30_000)]
    expect(out.filter(e => e.kind === 'refused')).toEqual([])
    expect(out.find(e => e.kind === 'failed')).toMatchObject({ reason: expect.stringMatching(/^missed the reshare: this node started after its deal phase ended/), cause: 'missed' })
    // Restarted from the snapshot it saved, it still knows it came up late.
    const again = new DkgMachine({ params: p, signer: newcomers[0], random: seededRandom('late') }, savedSnapshot(started))
    const after = again.tick(dkgStart + 30_000)
    expect(after.filter(e => e.kind === 'refused')).toEqual([])
    expect(after.find(e => e.kind === 'failed')).toMatchObject({ cause: 'missed' })
  })

  it('a node killed in the deal phase and restarted after it ended, holding too little, says it missed the reshare, and signs no refusal', () => {
    const p = params()
    const m = new DkgMachine({ params: p, signer: oldSigners[0], random: seededRandom('down'), oldShare: old[0].share })
    const saved = savedSnapshot(m.start(dkgStart))
    // Down from the deal phase to after the run's last deadline: the others finished without it.
    const again = new DkgMachine({ params: p, signer: oldSigners[0], random: seededRandom('down'), oldShare: old[0].share }, saved)
    const out = again.tick(dkgStart + 31_000)
    expect(out.filter(e => e.kind === 'refused')).toEqual([])
    expect(out.find(e => e.kind === 'failed')).toMatchObject({ cause: 'missed' })
  })

  it('a dealer restarted from its snapshot deals the same polynomial on its old share; a snapshot on another share is refused', () => {
    const p = params()
    const m = new DkgMachine({ params: p, signer: oldSigners[0], random: seededRandom('restart'), oldShare: old[0].share })
    const out = m.start(dkgStart)
    const snapshot = savedSnapshot(out)
    const again = new DkgMachine({ params: p, signer: oldSigners[0], random: seededRandom('other'), oldShare: old[0].share }, snapshot)
    expect(again.currentPhase).toBe('deal')
    expect(again.transcript().deals.map(d => d.body.commitments)).toEqual(m.transcript().deals.map(d => d.body.commitments))
    expect(() => new DkgMachine({ params: p, signer: oldSigners[0], random: seededRandom('x'), oldShare: old[1].share })).toThrow(/does not match old member 1/)
    expect(() => new DkgMachine({ params: p, signer: oldSigners[0], random: seededRandom('x'), oldShare: old[0].share }, { ...snapshot, coefficients: [old[1].share, ...snapshot.coefficients.slice(1)] })).toThrow(/does not reshare/)
  })

  it('an old member joining a reshare checks its old group against its own share and transcript: forged commitments or another run are refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fairdeal-old-group-'))
    try {
      const memberDir = groupDir(dir, oldParams.id)
      await mkdir(memberDir, { recursive: true })
      await writeFile(join(memberDir, SHARE_FILE), JSON.stringify({ version: 1, session: groupSession(oldParams), index: 1, share: old[0].share }))
      await writeFile(join(memberDir, TRANSCRIPT_FILE), JSON.stringify({ ...old[0], share: undefined }))
      const p = params()
      expect(await oldGroupProblem(dir, p, oldSigners[0].peerId)).toBeUndefined()
      // The creator's block with other old commitments (C_0 still the key, so it passes every check alone).
      const forged = { ...p, reshare: { ...(p.reshare as NonNullable<GroupParams['reshare']>), commitments: [old[0].commitments[0], ...old[0].commitments.slice(1).reverse()] } }
      expect(await oldGroupProblem(dir, forged, oldSigners[0].peerId)).toMatch(/is not the one this member holds a share of/)
      const otherRun = { ...p, reshare: { ...(p.reshare as NonNullable<GroupParams['reshare']>), session: 'ab'.repeat(32) } }
      expect(await oldGroupProblem(dir, otherRun, oldSigners[0].peerId)).toMatch(/holds no share/)
      // A newcomer (no share here) has nothing to compare.
      expect(await oldGroupProblem(join(dir, 'none'), p, newcomers[0].peerId)).toBeUndefined()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('beacon group reshare on a member: one invite per other member of the new group, its config gathering; --cancel puts the config back', async () => {
    const root = await mkdtemp(join(tmpdir(), 'fairdeal-reshare-cli-'))
    try {
      const group = await prepareLocalGroup({ root, freePort: reservePort, members: 3, threshold: 2 })
      const ids = await Promise.all(group.dataDirs.map(async d => await loadOrCreateIdentity(d)))
      const signers3 = ids.map(id => signerFromSeed(id.seed))
      const dkg = runDkg(group.configs[0].params, signers3, { seed: 'reshare-cli' }).results as DkgResult[]
      const memberDir = groupDir(group.dataDirs[0], group.configs[0].params.id)
      await mkdir(memberDir, { recursive: true })
      await writeFile(join(memberDir, SHARE_FILE), JSON.stringify({ version: 1, session: groupSession(group.configs[0].params), index: 1, share: dkg[0].share }))
      await writeFile(join(memberDir, TRANSCRIPT_FILE), JSON.stringify({ ...dkg[0], share: undefined }))
      const file = group.files[0]
      const before = await readFile(file, 'utf8')
      const made = await cliInProcess('beacon', 'group', 'reshare', '--config', file, '--members', '4', '--threshold', '3')
      expect(made.code, made.stderr).toBe(0)
      expect(made.stdout.split('\n').filter(l => /^member [234]: fairdeal-group-invite:/.test(l))).toHaveLength(3)
      expect(decodeGroupInvite(made.stdout.split('\n')[1].slice('member 2: '.length))).toMatchObject({ members: 4, threshold: 3, reshare: dkg[0].chainInfo.hash })
      expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ groupDraft: true })
      // Twice is refused; --cancel gives the running group back, as it was.
      expect((await cliInProcess('beacon', 'group', 'reshare', '--config', file, '--members', '4')).stderr).toMatch(/is gathering a group already/)
      const cancel = await cliInProcess('beacon', 'group', 'reshare', '--cancel', '--config', file)
      expect(cancel.code, cancel.stderr).toBe(0)
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(JSON.parse(before))
      expect((await cliInProcess('beacon', 'group', 'reshare', '--cancel', '--config', file)).stderr).toMatch(/is not gathering a reshare/)
      // A member without a share of the current key cannot lead a reshare.
      expect((await cliInProcess('beacon', 'group', 'reshare', '--config', group.files[1], '--members', '4')).stderr).toMatch(/holds no share of group/)
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })

  it('reshare parameters keep the chain: another period, a transition before the run ends, or commitments not of the chain are refused', () => {
    const base = { params: oldParams, commitments: old[0].commitments, chainInfo: chain }
    const next = { members: newMembers, threshold: 4, dkg: { start: dkgStart, phaseMs: 10_000 }, transition: 100 }
    expect(() => reshareParams(base, { ...next, transition: 80 })).toThrow(/transition \(round 80\) must come after/)
    expect(() => reshareParams({ ...base, params: { ...oldParams, period: 2 } }, next)).toThrow(/keeps the chain/)
    expect(() => reshareParams({ ...base, commitments: [...old[0].commitments].reverse() }, next)).toThrow(/commitments\[0\] must be the chain's public key/)
  })
})

describe('a round message, routed to the group that signs its round', () => {
  // Stand-ins with RoundMachine's two members the routing reads: the old group signs up to the
  // reshare's transition (round 33), the new group from it.
  const machine = (first: number, last = Number.MAX_SAFE_INTEGER): { firstRound: number, signs: (r: number) => boolean } => ({ firstRound: first, signs: r => r >= first && r <= last })
  const oldGroup = machine(1, 32)
  const newGroup = machine(33)
  it('goes to the group signing its round; a partial of the old group at a member without its share is that group\'s, not refused', () => {
    expect(routeRoundMessage([oldGroup, newGroup], true, 20)).toBe(oldGroup)
    expect(routeRoundMessage([oldGroup, newGroup], true, 33)).toBe(newGroup)
    // A newcomer, a member that lost its old share, one that dropped the old group after the transition.
    for (const r of [1, 20, 32]) expect(routeRoundMessage([newGroup], true, r)).toBe('old-group')
    // Rounds no group signs or can sign: refused (and logged in the rate-limited summaries).
    for (const r of [0, -3, 20.5, Number.NaN]) expect(routeRoundMessage([newGroup], true, r)).toBe('refused')
    expect(routeRoundMessage([machine(1, 32)], true, 40)).toBe('refused')
    // Not a partial, or a partial without a round: the newest group, which checks it and answers.
    expect(routeRoundMessage([oldGroup, newGroup], false, undefined)).toBe(newGroup)
    expect(routeRoundMessage([oldGroup, newGroup], true, 'x')).toBe(newGroup)
    expect(routeRoundMessage([], true, 20)).toBe('none')
  })
})
