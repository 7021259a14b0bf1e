import { describe, expect, it } from 'vitest'
import { bls12_381 } from '@noble/curves/bls12-381.js'
import { entryFromSignature, hashRound, partialSign, recoverG1, scalarFromHex } from '../src/core/beacon/threshold.js'
import { publicShares, type DkgResult } from '../src/core/beacon/dkg.js'
import { verifyBeaconEntry } from '../src/core/beacon/index.js'
import { completeReshare, reshareDeal, ReshareRefusedError, RESHARE_REFUSED, type OldGroup, type ReshareDeal } from '../src/core/beacon/reshare.js'
import { timelockDecryptWithTlockJs, timelockEncryptText } from '../src/beacon/tlock.js'
import { verifyDocument } from '../src/core/signed.js'
import { drandClientVerifies, groupParams, memberSigners, runDkg, seededRandom } from './helpers/beacon-group.js'

// One 5-member DKG (threshold 3) shared by the tests: the expensive part, done once.
const signers = memberSigners(5, 'reshare')
const dkg = runDkg(groupParams(signers, 3), signers)
const results = dkg.results as DkgResult[]
const old: OldGroup = { threshold: 3, commitments: results[0].commitments, chainInfo: results[0].chainInfo }
const newSigners = memberSigners(7, 'reshare-new')

function deals (dealers: number[], newThreshold: number, newMembers: number): ReshareDeal[] {
  return dealers.map(i => reshareDeal({ dealer: i, oldShareHex: results[i - 1].share, newThreshold, newMembers, random: seededRandom(`reshare-${i}`) }))
}

/** Signs `round` with the given members' shares (index → share hex) and recovers the group signature. */
function signRound (shares: Map<number, string>, round: number): ReturnType<typeof entryFromSignature> {
  const h = hashRound(round)
  const partials = [...shares].map(([index, s]) => ({ index, point: partialSign(scalarFromHex(s, 'share'), h) }))
  return entryFromSignature(round, recoverG1(partials))
}

const reshared7 = newSigners.map((s, j) => completeReshare({ old, newThreshold: 4, newMembers: 7, deals: deals([1, 2, 3, 4, 5], 4, 7), signer: s, newIndex: j + 1 }))

describe('resharing (5 members, threshold 3 → 7 members, threshold 4)', () => {
  const reshared = reshared7

  it('keeps the group key and the chain hash; every new member agrees on the commitments', () => {
    expect(results.every(r => r !== undefined)).toBe(true)
    for (const r of reshared) {
      expect(r.groupKey).toBe(results[0].groupKey)
      expect(r.chainInfo.hash).toBe(results[0].chainInfo.hash)
      expect(r.commitments).toEqual(reshared[0].commitments)
      expect(r.dealers).toEqual([1, 2, 3])
      expect(r.rejected).toEqual([])
    }
    // each new share matches the new public share of its index
    const pub = publicShares(reshared[0].commitments, 7)
    reshared.forEach((r, j) => expect(pub[j].equals(bls12_381.G2.Point.BASE.multiply(scalarFromHex(r.share as string, 's')))).toBe(true))
  })

  it('any 4 new members sign a round drand-client verifies under the old chain; 3 do not suffice', async () => {
    const shares = new Map(reshared.map((r, j) => [j + 1, r.share as string]))
    const four = new Map([...shares].filter(([i]) => [2, 4, 6, 7].includes(i)))
    const entry = signRound(four, 42)
    expect(verifyBeaconEntry(old.chainInfo, entry, entry.round).ok).toBe(true)
    expect(await drandClientVerifies(old.chainInfo, entry)).toBe(true)
    const three = new Map([...shares].filter(([i]) => [1, 3, 5].includes(i)))
    const sig = signRound(three, 42)
    expect(verifyBeaconEntry(old.chainInfo, sig, sig.round).ok).toBe(false)
  })

  it('a tlock ciphertext sealed before the reshare opens with a round signed after it by new members only', async () => {
    const ct = await timelockEncryptText('sealed before the reshare', old.chainInfo, 50)
    const shares = new Map(reshared.map((r, j) => [j + 1, r.share as string]).filter(([i]) => (i as number) >= 4) as Array<[number, string]>)
    const entry = signRound(shares, 50)
    expect(new TextDecoder().decode(await timelockDecryptWithTlockJs(ct, old.chainInfo, entry))).toBe('sealed before the reshare')
  })
})

describe('resharing: who may deal', () => {
  it('any 3 old members suffice: members 1 and 2 down (one lost its share) still give the same key', () => {
    const r = completeReshare({ old, newThreshold: 3, newMembers: 5, deals: deals([3, 4, 5], 3, 5), signer: signers[2], newIndex: 1 })
    expect(r.groupKey).toBe(results[0].groupKey)
    expect(r.dealers).toEqual([3, 4, 5])
    // a member that lost its share (member 1) gets one back: with any 2 other new shares it signs
    const others = [2, 3].map(j => completeReshare({ old, newThreshold: 3, newMembers: 5, deals: deals([3, 4, 5], 3, 5), signer: signers[j - 1], newIndex: j }))
    const entry = signRound(new Map([[1, r.share as string], [2, others[0].share as string], [3, others[1].share as string]]), 7)
    expect(verifyBeaconEntry(old.chainInfo, entry, entry.round).ok).toBe(true)
  })

  it('fewer than the old threshold is refused with a signed record naming the dealers and the threshold', () => {
    let err: unknown
    try {
      completeReshare({ old, newThreshold: 4, newMembers: 7, deals: deals([2, 5], 4, 7), signer: newSigners[0], newIndex: 1 })
    } catch (e) { err = e }
    expect(err).toBeInstanceOf(ReshareRefusedError)
    const record = (err as ReshareRefusedError).record
    expect(record.type).toBe(RESHARE_REFUSED)
    expect(record.signer).toBe(newSigners[0].peerId)
    expect(verifyDocument(record)).toBe(true)
    expect(record.body).toMatchObject({ reason: 'below-old-threshold', oldThreshold: 3, dealers: [2, 5], chainHash: old.chainInfo.hash })
  })

  it('a dealer that reshares anything but its old share is rejected and named; a forged third deal does not reach the threshold', () => {
    const honest = deals([1, 2], 4, 7)
    // member 3 deals a polynomial whose constant term is member 4's share, not its own
    const forged = { ...reshareDeal({ dealer: 4, oldShareHex: results[3].share, newThreshold: 4, newMembers: 7, random: seededRandom('forge') }), dealer: 3 }
    let err: unknown
    try { completeReshare({ old, newThreshold: 4, newMembers: 7, deals: [...honest, forged], signer: newSigners[1], newIndex: 2 }) } catch (e) { err = e }
    expect(err).toBeInstanceOf(ReshareRefusedError)
    expect((err as ReshareRefusedError).record.body.rejected).toEqual([{ dealer: 3, reason: 'constant term is not the dealer\'s old public share' }])
  })

  it('a share off the committed polynomial leaves its receiver without a share and names the dealer; the others agree on the dealers', () => {
    const d = deals([1, 2, 3, 4], 4, 7)
    d[0] = { ...d[0], shares: d[0].shares.map((s, j) => j === 2 ? d[1].shares[2] : s) }
    const victim = completeReshare({ old, newThreshold: 4, newMembers: 7, deals: d, signer: newSigners[2], newIndex: 3 })
    expect(victim.share).toBeUndefined()
    expect(victim.complaints).toEqual([{ dealer: 1, reason: 'share to new member 3 is not on the committed polynomial' }])
    const other = completeReshare({ old, newThreshold: 4, newMembers: 7, deals: d, signer: newSigners[0], newIndex: 1 })
    expect(victim.dealers).toEqual([1, 2, 3])
    expect(other.dealers).toEqual([1, 2, 3])
    expect(other.commitments).toEqual(victim.commitments)
    expect(other.share).toBe(reshared7[0].share)
  })

  it('a dealer with two different deals is excluded whatever the order they arrive in', () => {
    const d = deals([1, 2, 3, 4], 4, 7)
    const second = reshareDeal({ dealer: 1, oldShareHex: results[0].share, newThreshold: 4, newMembers: 7, random: seededRandom('second') })
    for (const order of [[...d, second], [second, ...d]]) {
      const r = completeReshare({ old, newThreshold: 4, newMembers: 7, deals: order, signer: newSigners[0], newIndex: 1 })
      expect(r.dealers).toEqual([2, 3, 4])
      expect(r.rejected).toEqual([{ dealer: 1, reason: 'two different deals from the same dealer' }])
      expect(r.groupKey).toBe(results[0].groupKey)
    }
  })
})
