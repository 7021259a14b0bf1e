// A reshare run against one hostile old member (docs/beacon-group.md "Resharing", "The DKG"): in
// memory, on the machines' clock, every document delivered well within its phase. Whatever the
// hostile dealer signs, the honest members must end with one new group, and every honest member's
// own records (its `dkg` entry) must pass the project's verifier. The same driver also kills an
// old member mid-run (its frames lost) and restarts it from its snapshot.
import { describe, expect, it } from 'vitest'
import { signDocument, verifyDocument, type Signed } from '../src/core/signed.js'
import { DkgMachine, verifyDkgResult, type DkgEffect, type DkgResult, type DkgSnapshot } from '../src/core/beacon/dkg.js'
import { DKG_DEAL, DKG_RESPONSES, DKG_RESULT, DKG_SHARE, type DealBody, type ResponsesBody, type ResultBody, type ShareBody } from '../src/core/beacon/dkg-documents.js'
import { reshareParams, type GroupParams } from '../src/core/beacon/group-params.js'
import { checkDkgRecord, makeDkgRecord } from '../src/core/beacon/index.js'
import { commitPolynomial, pointHex, randomPolynomial, scalarToHex } from '../src/core/beacon/threshold.js'
import { nativeVerifyDocument } from '../src/crypto/native-crypto.js'
import { dkgGroup, memberSigners, seededRandom } from './helpers/beacon-group.js'

const { signers: oldSigners, params: oldParams, results: old, chain } = dkgGroup(5, 3, 'reshare-hostile')
const newcomers = memberSigners(2, 'reshare-hostile-new')
// Every old member stays (new indices 1–5), two newcomers are 6 and 7: 5/3 → 7/4.
const nodes = [...oldSigners, ...newcomers]
const runParams: GroupParams = reshareParams({ params: oldParams, commitments: old[0].commitments, chainInfo: chain }, {
  members: nodes.map(s => s.peerId), threshold: 4, dkg: { start: chain.genesis_time * 1000 + 60_000, phaseMs: 10_000 }, transition: 100
})

interface Frame { from: string, to: string, doc: any }

/**
 * Runs every node's machine; `hostile` (a node index, 1-based) has its frames passed through
 * `tamper`, which returns the frames to deliver instead (none, the same, or more).
 */
function run (hostile: number, tamper: (f: Frame, phase: number) => Frame[], opts: {
  params?: GroupParams
  /** The hostile node is restarted from its last snapshot once the frames of this phase are delivered. */
  restartAfterPhase?: number
} = {}): { results: Array<DkgResult | undefined>, failures: Array<string | undefined>, machines: DkgMachine[], left: Array<boolean> } {
  const params = opts.params ?? runParams
  // The machines check documents with node:crypto, as a member node's do (src/beacon/group/member.ts);
  // the records are checked below by the core verifier, as any verifier would.
  const make = (i: number, snapshot?: DkgSnapshot): DkgMachine => new DkgMachine({ params, signer: nodes[i], random: seededRandom(`hostile-${i + 1}`), oldShare: old[i]?.share, verify: nativeVerifyDocument }, snapshot)
  const machines = nodes.map((_, i) => make(i))
  const saved: Array<DkgSnapshot | undefined> = nodes.map(() => undefined)
  const left = nodes.map(() => false)
  const results: Array<DkgResult | undefined> = nodes.map(() => undefined)
  const failures: Array<string | undefined> = nodes.map(() => undefined)
  const queue: Frame[] = []
  let phase = 0
  const handle = (i: number, out: DkgEffect[]): void => {
    const from = nodes[i].peerId
    const frames: Frame[] = []
    for (const e of out) {
      if (e.kind === 'send') frames.push({ from, to: e.to, doc: e.doc })
      if (e.kind === 'broadcast') for (const s of nodes) if (s.peerId !== from) frames.push({ from, to: s.peerId, doc: e.doc })
      if (e.kind === 'done') results[i] = e.result
      if (e.kind === 'failed') failures[i] = e.reason
      if (e.kind === 'left') left[i] = true
      if (e.kind === 'persist') saved[i] = JSON.parse(JSON.stringify(e.snapshot))
    }
    for (const f of frames) queue.push(...(i + 1 === hostile ? tamper(f, phase) : [f]))
  }
  let now = params.dkg.start
  machines.forEach((m, i) => handle(i, m.start(now)))
  const drain = (): void => {
    while (queue.length > 0) {
      const f = queue.shift() as Frame
      const i = nodes.findIndex(s => s.peerId === f.to)
      handle(i, machines[i].receive(f.from, JSON.parse(JSON.stringify(f.doc)), now))
    }
  }
  const restart = (k: number): void => {
    if (opts.restartAfterPhase !== k) return
    phase = 100 // the frames of the restarted process
    machines[hostile - 1] = make(hostile - 1, saved[hostile - 1])
    handle(hostile - 1, machines[hostile - 1].tick(now))
    drain()
  }
  drain()
  restart(0)
  for (let k = 1; k <= 3; k++) {
    if (phase < 100) phase = k
    now = params.dkg.start + k * params.dkg.phaseMs
    machines.forEach((m, i) => handle(i, m.tick(now)))
    drain()
    restart(k)
  }
  return { results, failures, machines, left }
}

/** Every honest node: a result, all the same new group, each verifying offline and as its `dkg` log entry. */
function expectOneGroup (r: ReturnType<typeof run>, hostile: number): DkgResult[] {
  const honest = nodes.map((_, i) => i).filter(i => i + 1 !== hostile)
  expect(honest.map(i => r.failures[i])).toEqual(honest.map(() => undefined))
  const results = honest.map(i => r.results[i] as DkgResult)
  for (const res of results) expect(res).toBeDefined()
  expect(new Set(results.map(x => x.qual.join(','))).size).toBe(1)
  expect(new Set(results.map(x => x.groupHash)).size).toBe(1)
  expect(new Set(results.map(x => x.commitments.join(','))).size).toBe(1)
  for (const [k, i] of honest.entries()) {
    const res = results[k]
    expect(res.groupKey).toBe(chain.public_key)
    verifyDkgResult({ ...res }, verifyDocument)
    const record = JSON.parse(JSON.stringify(makeDkgRecord(res, [])))
    expect(checkDkgRecord(record, nodes[i].peerId, verifyDocument).problems).toEqual([])
  }
  return results
}

describe('a reshare against one hostile old member', () => {
  it('a dealer that signs many different deals is out for equivocation everywhere; honest views and records stay within their bounds', () => {
    // Old member 2 sends each member its deal, then eleven more of its own (2·5 + 1: more than a
    // transcript of five dealers can hold). Each is a valid signed deal of this session.
    const extra = Array.from({ length: 11 }, (_, k) => signDocument<DealBody>(DKG_DEAL, {
      session: machinesSession(runParams), dealer: 2, commitments: commitPolynomial(randomPolynomial(4, seededRandom(`flood-${k}`))).map(pointHex)
    }, oldSigners[1]))
    const r = run(2, (f) => f.doc.type === DKG_DEAL ? [f, ...extra.map(doc => ({ ...f, doc }))] : [f])
    const results = expectOneGroup(r, 2)
    expect(results[0].disqualified.map(d => [d.dealer, d.reason])).toEqual([[2, 'equivocation']])
    for (const m of r.machines) expect(m.transcript().deals.length).toBeLessThanOrEqual(2 * 5)
  })

  it('a dealer that answers a complaint with its share, then with another share signed by it, is judged alike by every member', () => {
    // Old member 2 keeps newcomer 7's share back (7 complains that it is missing); its machine
    // answers with the right share, and old member 2 also publishes a wrong share for 7, signed by
    // it: after the right one to members 1, 3 and 4, before it to members 5, 6 and 7. Every frame
    // arrives in its phase; the echoes reach everyone.
    const wrong = (b: ShareBody): Frame['doc'] => signDocument<ShareBody>(DKG_SHARE, { ...b, share: scalarToHex(12345n) }, oldSigners[1])
    let withheld = false
    const r = run(2, (f, phase) => {
      if (f.doc.type !== DKG_SHARE || (f.doc.body as ShareBody).recipient !== 7) return [f]
      if (phase === 0 && !withheld) { withheld = true; return [] }
      const first = [1, 3, 4].some(k => nodes[k - 1].peerId === f.to)
      return first ? [f, { ...f, doc: wrong(f.doc.body) }] : [{ ...f, doc: wrong(f.doc.body) }, f]
    })
    expect(withheld).toBe(true)
    expectOneGroup(r, 2)
  })

  it('a member that signs two different responses documents (one complaining of a share it never gets answered) is judged alike by every member', () => {
    // Old member 2, also new member 2, sends members 1, 3 and 4 responses complaining that its
    // own share to itself is missing, and members 5, 6 and 7 its real responses (no complaint);
    // it never answers that complaint. Both documents are signed by it and sent in time.
    let split = false
    const r = run(2, (f) => {
      if (f.doc.type === DKG_SHARE && (f.doc.body as ShareBody).recipient === 2 && f.doc.body.dealer === 2) return []
      if (f.doc.type !== DKG_RESPONSES) return [f]
      if (![1, 3, 4].some(k => nodes[k - 1].peerId === f.to)) return [f]
      split = true
      const body = f.doc.body as ResponsesBody
      return [{ ...f, doc: signDocument<ResponsesBody>(DKG_RESPONSES, { ...body, complaints: [...body.complaints.filter(c => c.dealer !== 2), { dealer: 2, kind: 'missing' as const }].sort((a, b) => a.dealer - b.dealer) }, oldSigners[1]) }]
    })
    expect(split).toBe(true)
    expectOneGroup(r, 2)
  })

  it('a dealer whose commitments are not curve points is out everywhere (bad-deal); the reshare goes on', () => {
    const junk = Array.from({ length: 4 }, (_, k) => 'ab'.repeat(95) + String(k).padStart(2, '0'))
    // Its one deal, everywhere: in its own responses' view too (so it is no equivocation).
    let deal: Signed<DealBody> | undefined
    const r = run(2, (f) => {
      if (f.doc.type === DKG_DEAL) {
        deal ??= signDocument<DealBody>(DKG_DEAL, { ...f.doc.body, commitments: junk }, oldSigners[1])
        return [{ ...f, doc: deal }]
      }
      if (f.doc.type === DKG_RESPONSES && deal !== undefined) {
        const body = f.doc.body as ResponsesBody
        return [{ ...f, doc: signDocument<ResponsesBody>(DKG_RESPONSES, { ...body, view: body.view.map(d => d.body.dealer === 2 ? deal as Signed<DealBody> : d) }, oldSigners[1]) }]
      }
      return [f]
    })
    const results = expectOneGroup(r, 2)
    expect(results[0].disqualified.map(d => [d.dealer, d.reason])).toEqual([[2, 'bad-deal']])
  })

  it('a member\'s second, different result (after the run) does not replace its first: what members compare (agreeing) stays what it signed first', () => {
    const r = run(0, (f) => [f])
    const m = r.machines[0]
    const first = m.announcedResults.get(2)
    expect(first).toBeDefined()
    if (first === undefined) return
    const other = signDocument<ResultBody>(DKG_RESULT, { ...first.body, groupHash: '00'.repeat(32) }, nodes[1])
    m.receive(nodes[1].peerId, JSON.parse(JSON.stringify(other)), runParams.dkg.start + 40_000)
    expect(m.announcedResults.get(2)?.sig).toBe(first.sig)
  })
})

describe('a reshare with an old member killed mid-run (the same driver, its first process\'s frames lost)', () => {
  it('a leaving dealer killed in the deal phase before its deal and shares went out, restarted from its snapshot, still deals', () => {
    // Old member 5 leaves (5/3 → 6/4: old 1–4 and the two newcomers); it only deals and answers.
    const p = reshareParams({ params: oldParams, commitments: old[0].commitments, chainInfo: chain }, {
      members: [...oldSigners.slice(0, 4), ...newcomers].map(s => s.peerId), threshold: 4, dkg: runParams.dkg, transition: 100
    })
    // Its first process's frames are lost (it was killed); its second one's go out.
    const r = run(5, (f, phase) => phase < 100 ? [] : [f], { params: p, restartAfterPhase: 0 })
    const honest = [0, 1, 2, 3, 5, 6]
    expect(honest.map(i => r.failures[i])).toEqual(honest.map(() => undefined))
    for (const i of honest) expect(r.results[i]?.qual).toEqual([1, 2, 3, 4, 5])
    expect(r.left[4]).toBe(true)
  })
})

function machinesSession (p: GroupParams): string {
  return new DkgMachine({ params: p, signer: nodes[0], random: seededRandom('s'), oldShare: old[0].share }).session
}
