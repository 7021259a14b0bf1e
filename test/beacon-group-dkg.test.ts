import { describe, expect, it } from 'vitest'
import { bls12_381 } from '@noble/curves/bls12-381.js'
import { signDocument } from '../src/core/signed.js'
import { toHex } from '../src/core/bytes.js'
import {
  commitPolynomial, entryFromSignature, evaluateCommitments, evaluatePolynomial, g1FromHex, hashRound, lagrangeAtZero,
  pairingTarget, partialSign, pointHex, publicKeyMatches, randomPolynomial, recoverG1, scalarFromHex, scalarToHex, shareMatchesCommitments, verifyOnG1,
  verifyOnTarget
} from '../src/core/beacon/threshold.js'
import { publicShares, qualify, verifyDkgResult, type DkgResult } from '../src/core/beacon/dkg.js'
import { DKG_SHARE, type ShareBody } from '../src/core/beacon/dkg-documents.js'
import { groupSession, parseGroupParams } from '../src/core/beacon/group-params.js'
import { parseChainInfo, verifyBeaconEntry, type BeaconEntry, type ChainInfo } from '../src/core/beacon/index.js'
import { drandClientVerifies, groupParams, memberSigners, runDkg, seededRandom } from './helpers/beacon-group.js'

const Fr = bls12_381.fields.Fr
const H1 = '95d3fa4eeea6c775ee329d2805948d00b920e5167e48d9ea5bfa41616ddec9d87b6ad2dd22805e4f2f68cb596ebe5c31'

/** drand-client's own verification (fetchBeacon) on an entry, without HTTP. */

function signRound (result: DkgResult, round: number): string {
  return pointHex(partialSign(scalarFromHex(result.share, 'share'), hashRound(round)))
}

describe('threshold BLS (known answers)', () => {
  it('f(x) = 1 + 2x + 3x²: any 3 partials recover H(round) itself, the signature of secret 1', () => {
    const f = [1n, 2n, 3n]
    expect(evaluatePolynomial(f, 1)).toBe(6n)
    expect(evaluatePolynomial(f, 2)).toBe(17n)
    expect(evaluatePolynomial(f, 5)).toBe(86n)
    const h = hashRound(1)
    // quicknet's hash of round 1: RFC 9380 hash_to_curve(sha256(u64be(1))) on G1, DST …G1_XMD:SHA-256_SSWU_RO_NUL_
    expect(pointHex(h)).toBe(H1)
    for (const subset of [[1, 2, 3], [2, 4, 5], [1, 3, 5], [5, 4, 1]]) {
      const partials = subset.map(i => ({ index: i, point: partialSign(evaluatePolynomial(f, i), h) }))
      expect(recoverG1(partials).equals(h)).toBe(true)
    }
    expect(evaluateCommitments(commitPolynomial(f), 4).equals(bls12_381.G2.Point.BASE.multiply(evaluatePolynomial(f, 4)))).toBe(true)
  })

  it('Lagrange coefficients at 0 for {1,2,3} are 3, -3, 1', () => {
    expect(lagrangeAtZero([1, 2, 3])).toEqual([3n, Fr.neg(3n), 1n])
    expect(() => lagrangeAtZero([1, 1])).toThrow(/distinct/)
  })

  it('a random polynomial: t partials recover the signature of f(0), which noble and drand-client verify', async () => {
    const f = randomPolynomial(3, seededRandom('kat-poly'))
    // Pinned: the seeded randomness gives exactly these coefficients (sha256 counter stream, wide reduction).
    expect(scalarToHex(f[0])).toBe(scalarToHex(Fr.create(BigInt('0x' + toHex(seededRandom('kat-poly')(48))))))
    const secret = f[0]
    const h = hashRound(42)
    const direct = bls12_381.shortSignatures.sign(h, Fr.toBytes(secret))
    const partials = [2, 3, 5].map(i => ({ index: i, point: partialSign(evaluatePolynomial(f, i), h) }))
    const recovered = recoverG1(partials)
    expect(recovered.equals(direct)).toBe(true)
    const groupKey = commitPolynomial(f)[0]
    expect(verifyOnG1(recovered, h, groupKey)).toBe(true)
    // Two partials are not enough: interpolation through them gives some other point.
    expect(verifyOnG1(recoverG1(partials.slice(0, 2)), h, groupKey)).toBe(false)
    // A single partial verifies under its member's public share, not under the group key.
    expect(verifyOnG1(partials[0].point, h, evaluateCommitments(commitPolynomial(f), 2))).toBe(true)
    expect(verifyOnG1(partials[0].point, h, groupKey)).toBe(false)
    // The same check with its message side computed ahead (a round's latency): the same verdicts;
    // another round's target, the identity point and a point off the key all fail.
    const target = pairingTarget(h, groupKey)
    expect(verifyOnTarget(recovered, target)).toBe(true)
    expect(verifyOnTarget(recoverG1(partials.slice(0, 2)), target)).toBe(false)
    expect(verifyOnTarget(partials[0].point, target)).toBe(false)
    expect(verifyOnTarget(recovered, pairingTarget(hashRound(43), groupKey))).toBe(false)
    expect(verifyOnTarget(bls12_381.G1.Point.ZERO, target)).toBe(false)
    expect(verifyOnTarget(partials[0].point, pairingTarget(h, evaluateCommitments(commitPolynomial(f), 2)))).toBe(true)
    // The target is noble's own pairing (its key's line coefficients kept between calls), and the
    // point at infinity on either side is refused, as noble's pairing refuses it.
    for (const key of [groupKey, evaluateCommitments(commitPolynomial(f), 3), groupKey]) {
      expect(bls12_381.fields.Fp12.eql(pairingTarget(h, key), bls12_381.pairing(h, key))).toBe(true)
    }
    expect(() => pairingTarget(bls12_381.G1.Point.ZERO, groupKey)).toThrow()
    expect(() => pairingTarget(h, bls12_381.G2.Point.ZERO)).toThrow()
    expect(shareMatchesCommitments(commitPolynomial(f), 4, evaluatePolynomial(f, 4))).toBe(true)
    expect(shareMatchesCommitments(commitPolynomial(f), 4, evaluatePolynomial(f, 3))).toBe(false)
  })
})

describe('DKG (Joint-Feldman) in memory', () => {
  const signers = memberSigners(5)
  const params = groupParams(signers, 3)
  let baseline: ReturnType<typeof runDkg> | undefined
  const honest = (): ReturnType<typeof runDkg> => (baseline ??= runDkg(params, signers))

  it('5 members, threshold 3: same group key everywhere, shares consistent, rounds verify with drand-client', async () => {
    const { results, failures } = honest()
    expect(failures).toEqual([undefined, undefined, undefined, undefined, undefined])
    const r = results as DkgResult[]
    expect(new Set(r.map(x => x.groupKey)).size).toBe(1)
    expect(new Set(r.map(x => x.chainInfo.hash)).size).toBe(1)
    expect(r[0].qual).toEqual([1, 2, 3, 4, 5])
    const info = parseChainInfo(r[0].chainInfo)
    expect(info.schemeID).toBe('bls-unchained-g1-rfc9380')
    expect(info.metadata.beaconID).toBe('test-group')
    const pubs = publicShares(r[0].commitments, 5)
    r.forEach((x, i) => { expect(publicKeyMatches(scalarFromHex(x.share, 's'), pubs[i])).toBe(true) })
    for (const x of r) expect(verifyDkgResult(x).qual).toEqual([1, 2, 3, 4, 5])
    // Any 3 members recover the same signature, which drand-client accepts as the chain's round.
    const round = 7
    const sigs = r.map(x => signRound(x, round))
    const recover = (idx: number[]): string => pointHex(recoverG1(idx.map(i => ({ index: i, point: g1FromHex(sigs[i - 1], 'p') }))))
    const a = recover([1, 2, 3])
    expect(recover([3, 4, 5])).toBe(a)
    expect(recover([5, 1, 4])).toBe(a)
    const entry = entryFromSignature(round, g1FromHex(a, 'sig'))
    expect(verifyBeaconEntry(info, entry, round).ok).toBe(true)
    expect(await drandClientVerifies(info, entry)).toBe(true)
    // A partial is not a round.
    expect(await drandClientVerifies(info, entryFromSignature(round, g1FromHex(sigs[0], 'p')))).toBe(false)
  })

  it('the same seeds give the same transcript and chain (known answer for the run)', () => {
    const a = honest().results[0] as DkgResult
    const b = runDkg(params, signers).results[0] as DkgResult
    expect(b.chainInfo).toEqual(a.chainInfo)
    expect(b.share).toBe(a.share)
    const c = runDkg(params, signers, { seed: 'other', down: new Set([5]) }).results[0] as DkgResult
    expect(c.groupKey).not.toBe(a.groupKey)
  })

  it('a dealer who deals an inconsistent share is disqualified everywhere, the signed complaint on record', () => {
    // Member 2 sends member 4 a share off its polynomial (signed by member 2).
    const { results } = runDkg(params, signers, {
      intercept: (m) => {
        const d = m.doc as { type: string, body: ShareBody }
        if (d.type === DKG_SHARE && d.body.dealer === 2 && d.body.recipient === 4 && m.from === signers[1].peerId) {
          return { ...m, doc: signDocument<ShareBody>(DKG_SHARE, { ...d.body, share: scalarToHex(12345n) }, signers[1]) }
        }
        return m
      }
    })
    const r = results as DkgResult[]
    expect(r.every(x => x !== undefined)).toBe(true)
    for (const x of r) {
      expect(x.qual).toEqual([1, 3, 4, 5])
      const why = x.disqualified.find(d => d.dealer === 2)
      expect(why).toMatchObject({ dealer: 2, reason: 'bad-share', complainant: 4 })
      const complaint = x.transcript.responses.find(doc => doc.body.member === 4)?.body.complaints[0]
      expect(complaint).toMatchObject({ dealer: 2, kind: 'bad-share' })
      expect(verifyDkgResult(x).disqualified.find(d => d.dealer === 2)?.reason).toBe('bad-share')
    }
    expect(new Set(r.map(x => x.groupKey)).size).toBe(1)
    const pubs = publicShares(r[0].commitments, 5)
    r.forEach((x, i) => { expect(publicKeyMatches(scalarFromHex(x.share, 's'), pubs[i])).toBe(true) })
  })

  it('a missing share is complained about, answered in public, and the dealer stays qualified', () => {
    let dropped = false
    const { results, machines } = runDkg(params, signers, {
      intercept: (m) => {
        const d = m.doc as { type: string, body: ShareBody }
        if (!dropped && d.type === DKG_SHARE && d.body.dealer === 3 && d.body.recipient === 5) { dropped = true; return undefined }
        return m
      }
    })
    const r = results as DkgResult[]
    for (const x of r) {
      expect(x.qual).toEqual([1, 2, 3, 4, 5])
      expect(x.transcript.answers.some(a => a.body.dealer === 3 && a.body.recipient === 5)).toBe(true)
    }
    expect(machines.every(m => m?.currentPhase === 'done')).toBe(true)
    expect(new Set(r.map(x => x.groupKey)).size).toBe(1)
  })

  it('a dealer who never answers a complaint is disqualified (unanswered-complaint)', () => {
    // Member 3's share to member 5 is lost, and so is everything member 3 sends after dealing.
    const { results } = runDkg(params, signers, {
      intercept: (m) => {
        const d = m.doc as { type: string, body: ShareBody }
        return m.from === signers[2].peerId && d.type === DKG_SHARE && d.body.recipient === 5 ? undefined : m
      }
    })
    const r = (results as DkgResult[]).filter((_, i) => i !== 2)
    for (const x of r) {
      expect(x.qual).toEqual([1, 2, 4, 5])
      expect(x.disqualified.find(d => d.dealer === 3)).toMatchObject({ reason: 'unanswered-complaint', complainant: 5 })
    }
  })

  it('a member that is down: the others finish at the deadlines without it', () => {
    const { results, machines } = runDkg(params, signers, { down: new Set([5]) })
    const r = results.slice(0, 4) as DkgResult[]
    for (const x of r) {
      expect(x.qual).toEqual([1, 2, 3, 4])
      expect(x.disqualified).toEqual([{ dealer: 5, reason: 'no-deal' }])
    }
    expect(machines[4]).toBeUndefined()
  })

  it('too few dealers: the DKG fails with a reason, and no key comes out', () => {
    const { results, failures } = runDkg(params, signers, { down: new Set([3, 4, 5]) })
    expect(results.every(x => x === undefined)).toBe(true)
    expect(failures[0]).toMatch(/2 qualified dealer\(s\), the threshold is 3/)
  })

  it('hostile documents are refused with a reason and change nothing', () => {
    const { machines } = honest()
    const m = machines[0]
    if (m === undefined) throw new Error('no machine')
    const other = runDkg(groupParams(signers, 3, { id: 'other-group' }), signers).machines[1]
    const foreign = other?.transcript().deals[1]
    const fresh = new (m.constructor as any)({ params, signer: signers[0], random: seededRandom('x') })
    fresh.start(params.dkg.start)
    const rejections = [
      fresh.receive('p', foreign, params.dkg.start),
      fresh.receive('p', { ...m.transcript().deals[1], sig: '00'.repeat(64) }, params.dkg.start),
      fresh.receive('p', { ...m.transcript().deals[1], signer: signers[2].peerId }, params.dkg.start),
      fresh.receive('p', 'garbage', params.dkg.start)
    ]
    for (const r of rejections) expect(r[0]).toMatchObject({ kind: 'rejected' })
    expect(rejections.map(r => r[0].kind === 'rejected' ? r[0].reason : '')).toEqual([
      expect.stringMatching(/another session/),
      expect.stringMatching(/bad signature/),
      expect.stringMatching(/not by member 2/),
      expect.stringMatching(/JSON object/)
    ])
    expect(fresh.transcript().deals.length).toBe(1)
  })

  it('a member restarted from its snapshot finishes the same DKG', () => {
    const { effects, results, machines } = honest()
    const persisted = effects[0].filter(e => e.kind === 'persist')
    expect(persisted.map(e => e.kind === 'persist' ? e.phase : '')).toEqual(['deal', 'complain', 'answer', 'done'])
    const first = persisted[0]
    if (first.kind !== 'persist') throw new Error('no snapshot')
    // Restarted in the deal phase with only its own deal: it deals the same polynomial again.
    const again = new (machines[0] as any).constructor({ params, signer: signers[0], random: seededRandom('unused') }, JSON.parse(JSON.stringify(first.snapshot)))
    expect(again.transcript().deals[0].sig).toBe((results[0] as DkgResult).transcript.deals[0].sig)
  })

  it('group parameters are checked, and the session binds them', () => {
    expect(() => parseGroupParams({ ...params, threshold: 6 })).toThrow(/threshold/)
    expect(() => parseGroupParams({ ...params, members: [params.members[0], params.members[0]] })).toThrow(/twice/)
    expect(() => parseGroupParams({ ...params, genesisTime: 1_699_999_990 })).toThrow(/genesisTime/)
    expect(groupSession(params)).not.toBe(groupSession({ ...params, threshold: 4 }))
    expect(qualify((honest().results[0] as DkgResult).transcript).qual).toEqual([1, 2, 3, 4, 5])
  })
})
