import { describe, expect, it } from 'vitest'
import { signDocument, type Signed } from '../src/core/signed.js'
import { DkgMachine, verifyDkgResult, type DkgEffect, type DkgResult } from '../src/core/beacon/dkg.js'
import { DKG_DEAL, DKG_RESPONSES, type DealBody, type ResponsesBody } from '../src/core/beacon/dkg-documents.js'
import { commitPolynomial, pointHex, randomPolynomial } from '../src/core/beacon/threshold.js'
import { nativeVerifyDocument } from '../src/crypto/native-crypto.js'
import { groupParams, memberSigners, seededRandom } from './helpers/beacon-group.js'

// The red team's key split (issue 22): five members, threshold three; member 4 holds back member
// 1's share until members 2 and 3 have left the deal phase, then sends member 1 a second deal and
// then the honest share. Release points: once 2 and 3 left the deal phase, after chosen messages, at phase deadlines. Every honest member must end with the same key.

// The machines check documents with node:crypto, as a member node's do (src/beacon/group/member.ts).
const signers = memberSigners(5, 'equivocation')
const params = groupParams(signers, 3)
const peer = (i: number): string => signers[i - 1].peerId

interface Frame { from: string, to: string, doc: any }

function run (release: { afterDelivered?: number, atPhase?: number, whenLeftDeal?: boolean }): { results: Array<DkgResult | undefined>, failures: Array<string | undefined> } {
  const machines = signers.map((s, i) => new DkgMachine({ params, signer: s, random: seededRandom(`eq-${i + 1}`), verify: nativeVerifyDocument }))
  const results: Array<DkgResult | undefined> = [undefined, undefined, undefined, undefined, undefined]
  const failures: Array<string | undefined> = [undefined, undefined, undefined, undefined, undefined]
  const queue: Frame[] = []
  let held: Frame | undefined
  let released = false
  let delivered = 0
  let now = params.dkg.start
  const left = new Set<number>()
  const handle = (i: number, out: DkgEffect[]): void => {
    for (const e of out) {
      if (e.kind === 'broadcast' && e.doc.type === DKG_RESPONSES && (i === 1 || i === 2)) left.add(i)
      if (e.kind === 'send') queue.push({ from: signers[i].peerId, to: e.to, doc: e.doc })
      if (e.kind === 'broadcast') for (const s of signers) if (s.peerId !== signers[i].peerId) queue.push({ from: signers[i].peerId, to: s.peerId, doc: e.doc })
      if (e.kind === 'done') results[i] = e.result
      if (e.kind === 'failed') failures[i] = e.reason
    }
  }
  const releaseHeld = (): void => {
    if (released || held === undefined) return
    released = true
    const second = signDocument<DealBody>(DKG_DEAL, {
      session: machines[3].session, dealer: 4, commitments: commitPolynomial(randomPolynomial(3, seededRandom('second-deal'))).map(pointHex)
    }, signers[3])
    queue.unshift({ from: peer(4), to: peer(1), doc: second }, held)
  }
  machines.forEach((m, i) => handle(i, m.start(now)))
  const drain = (): void => {
    while (queue.length > 0) {
      const f = queue.shift() as Frame
      if (f.from === peer(4) && f.to === peer(1) && f.doc.type === 'beacon-group/share' && f.doc.body.recipient === 1 && held === undefined) { held = f; continue }
      const i = signers.findIndex(s => s.peerId === f.to)
      delivered++
      handle(i, machines[i].receive(f.from, JSON.parse(JSON.stringify(f.doc)), now))
      if (release.afterDelivered === delivered) releaseHeld()
      if (release.whenLeftDeal === true && left.size === 2) releaseHeld()
    }
  }
  drain()
  for (let k = 1; k <= 3; k++) {
    if (release.atPhase === k) { releaseHeld(); drain() }
    now = params.dkg.start + k * params.dkg.phaseMs
    machines.forEach((m, i) => handle(i, m.tick(now)))
    drain()
  }
  return { results, failures }
}

function expectOneKey (r: ReturnType<typeof run>): void {
  const honest = [1, 2, 3, 5].map(i => r.results[i - 1])
  expect(r.failures.filter(f => f !== undefined)).toEqual([])
  for (const res of honest) expect(res).toBeDefined()
  const keys = new Set(honest.map(x => x?.groupKey))
  const quals = new Set(honest.map(x => x?.qual.join(',')))
  expect(keys.size).toBe(1)
  expect(quals.size).toBe(1)
  for (const res of honest) verifyDkgResult(res as DkgResult)
}

describe('one group key whatever one dealer does (issue 22 red team)', () => {
  it('the attack as reported: every honest member disqualifies member 4 for equivocation, same key', () => {
    // Released once members 2 and 3 have sent their responses (left the deal phase).
    const r = run({ whenLeftDeal: true })
    expectOneKey(r as ReturnType<typeof run>)
    for (const i of [1, 2, 3, 5]) {
      expect(r?.results[i - 1]?.qual).toEqual([1, 2, 3, 5])
      expect(r?.results[i - 1]?.disqualified).toEqual([expect.objectContaining({ dealer: 4, reason: 'equivocation' })])
    }
  })

  it('the release at other timings (mid-deal, at the deal and complaint deadlines) leaves one key', () => {
    let timings = 0
    for (const k of [25]) { expectOneKey(run({ afterDelivered: k })); timings++ }
    for (const p of [1, 2]) { expectOneKey(run({ atPhase: p })); timings++ }
    expect(timings).toBe(3)
  })

  it('a member\'s responses carry its view: a deal only one honest member saw is in everyone\'s transcript', () => {
    const r = run({ atPhase: 1 })
    const responses = r.results[1]?.transcript.responses as Array<Signed<ResponsesBody>>
    expect(responses.every(x => x.type === DKG_RESPONSES && x.body.view.length >= 4)).toBe(true)
  })
})
