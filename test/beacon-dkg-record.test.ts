// A beacon group member's DKG as an entry of its signed log (kind `dkg`, docs/beacon-group.md "The
// DKG in the log"): packed without losing a signature, re-verified offline by the log verifier
// that `fairdeal verify` and the verifier page use, each tampering failed with its code.
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { checkDkgRecord, makeDkgRecord, type DkgRecord } from '../src/core/beacon/dkg-record.js'
import { DKG_RESULT, type ResultBody } from '../src/core/beacon/dkg-documents.js'
import { checkBlameRecord, type BlameRecord } from '../src/core/beacon/blame-record.js'
import { GROUP_BLAME, GROUP_PARTIAL, type BlameBody, type PartialBody } from '../src/core/beacon/group-rounds.js'
import { hashRound, partialSign, pointHex, scalarFromHex } from '../src/core/beacon/threshold.js'
import type { Signed } from '../src/core/signed.js'
import { groupSession } from '../src/core/beacon/group-params.js'
import { GENESIS_PREV, makeEntry, makeHead, verifyLog } from '../src/core/log/index.js'
import { verifyLogPayload } from '../src/core/receipt.js'
import { signDocument } from '../src/core/signed.js'
import { nativeVerifyDocument } from '../src/crypto/native-crypto.js'
import { groupParams, memberSigners, runDkg } from './helpers/beacon-group.js'

const signers = memberSigners(5)
const params = groupParams(signers, 3)
const run = runDkg(params, signers)
const result = run.results[0]!
const kept = [...run.machines[0]!.announcedResults.values()]
const record = (): DkgRecord => JSON.parse(JSON.stringify(makeDkgRecord(result, kept))) as DkgRecord
const codes = (payload: unknown, owner = signers[0].peerId): string[] => checkDkgRecord(payload, owner, nativeVerifyDocument).problems.map(p => p.code)

describe('the dkg log record', () => {
  it('holds each deal once and unpacks to the signed documents; verifies in its member\'s log, in no one else\'s', () => {
    const r = record()
    expect(r.deals).toHaveLength(5)
    expect(r.transcript.responses.every(x => x.body.view.every(i => typeof i === 'number'))).toBe(true)
    expect(canonicalJson(r).length).toBeLessThan(canonicalJson({ ...result, share: undefined }).length / 2)
    expect(canonicalJson(r)).not.toContain(result.share)
    expect(codes(r)).toEqual([])
    expect(codes(r, signers[1].peerId)).toEqual(['dkg-member'])
    // Through the log verifier, as `fairdeal verify` and the page run it.
    const e = makeEntry(signers[0], { seq: 0, prev: GENESIS_PREV, kind: 'dkg', payload: r, time: 1 })
    const lines = [makeHead(signers[0], 0, e.hash).line, e.line]
    return verifyLog(lines, { verifyPayload: verifyLogPayload }).then(v => {
      expect([v.passed, v.failed]).toEqual([1, 0])
      const other = makeEntry(signers[1], { seq: 0, prev: GENESIS_PREV, kind: 'dkg', payload: r, time: 1 })
      return verifyLog([makeHead(signers[1], 0, other.hash).line, other.line], { verifyPayload: verifyLogPayload })
    }).then(v => { expect([v.passed, v.failed]).toEqual([0, 1]) })
  })

  it('fails a changed outcome, a changed document, a view pointing elsewhere and a malformed record, each with its code', () => {
    const key = record()
    key.outcome.groupKey = run.results[1]!.commitments[1]
    expect(codes(key)).toEqual(['dkg-outcome'])
    const qual = record()
    qual.outcome.qual = [1, 2, 3]
    expect(codes(qual)).toEqual(['dkg-outcome'])
    const deal = record()
    deal.deals[2].body.commitments[0] = deal.deals[3].body.commitments[0]
    expect(codes(deal)).toEqual(['dkg-outcome'])
    const view = record()
    view.transcript.responses[1].body.view[0] = 1
    expect(codes(view)).toEqual(['dkg-outcome'])
    for (const bad of [
      { ...record(), share: result.share },
      { ...record(), member: 6 },
      { ...record(), deals: 'x' },
      (() => { const r = record(); r.transcript.deals[0] = 9; return r })(),
      (() => { const r = record(); r.transcript.responses[0].body.view = [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0]; return r })(),
      { ...record(), results: [{ type: DKG_RESULT }] },
      (() => { const r = record(); (r.outcome as Record<string, unknown>).extra = 1; return r })(),
      (() => { const r = record(); (r.params as unknown as Record<string, unknown>).extra = 1; return r })(),
      null
    ]) expect(codes(bad)).toEqual(['dkg-form'])
  })

  it('fails a record keeping a member\'s signed result that names another key: members computed different keys', () => {
    const r = record()
    const session = groupSession(params)
    const other = signDocument<ResultBody>(DKG_RESULT, { session, member: 2, qual: [1, 2, 3], groupKey: run.results[1]!.commitments[1], groupHash: result.groupHash }, signers[1])
    r.results = [...r.results.filter(x => (x as { body: ResultBody }).body.member !== 2), other]
    const { problems } = checkDkgRecord(r, signers[0].peerId, nativeVerifyDocument)
    expect(problems.map(p => p.code)).toEqual(['dkg-disagreement'])
    expect(problems[0].message).toMatch(/member 2's signed result/)
  })
})

describe('a blame record in the log (docs/log.md "Blame records of a beacon group")', () => {
  const chainHash = result.chainInfo.hash
  const round = 7
  const partialOf = (member: number, share: string, r = round): Signed<PartialBody> =>
    signDocument<PartialBody>(GROUP_PARTIAL, { chain: chainHash, round, index: member, partial: pointHex(partialSign(scalarFromHex(share, 'share'), hashRound(r))) }, signers[member - 1])
  const blame = (bad: Array<Signed<PartialBody>>, by = signers[0]): BlameRecord => ({
    record: signDocument<BlameBody>(GROUP_BLAME, { chain: chainHash, round, bad: bad.map(p => ({ index: p.body.index, reason: 'bad-partial' as const, partial: p })) }, by),
    members: params.members,
    commitments: result.commitments
  })
  // Member 2's share used on another round's point: a valid G1 point, not its partial of this round.
  const wrong = partialOf(2, run.results[1]!.share, round + 1000)
  const blameCodes = (payload: unknown, owner = signers[0].peerId): string[] => checkBlameRecord(payload, owner, nativeVerifyDocument).problems.map(p => p.code)
  const logLines = (entries: Array<{ kind: string, payload: unknown }>): string[] => {
    const out: string[] = []
    let prev = GENESIS_PREV
    entries.forEach((e, seq) => { const m = makeEntry(signers[0], { seq, prev, kind: e.kind, payload: e.payload, time: 1 }); out.push(m.line); prev = m.hash })
    return [makeHead(signers[0], entries.length - 1, prev).line, ...out]
  }

  it('a wrong partial, signed by its sender, blamed by the log\'s owner: passes; an honest partial blamed: refuted', () => {
    expect(blameCodes(blame([wrong]))).toEqual([])
    expect(blameCodes(blame([partialOf(3, run.results[2]!.share)]))).toEqual(['beacon-blame-refuted'])
    expect(blameCodes(blame([wrong, partialOf(3, run.results[2]!.share)]))).toEqual(['beacon-blame-refuted'])
  })

  it('another signer, a partial not its sender\'s or of another round, and a malformed record fail with their codes', () => {
    expect(blameCodes(blame([wrong], signers[1]))).toEqual(['beacon-blame-signer'])
    expect(blameCodes(blame([wrong]), signers[1].peerId)).toEqual(['beacon-blame-signer'])
    const forged = { ...wrong, signer: signers[3].peerId }
    expect(blameCodes(blame([forged]))).toEqual(['beacon-blame-partial'])
    expect(blameCodes(blame([{ ...wrong, extra: 1 } as unknown as Signed<PartialBody>]))).toEqual(['beacon-blame-partial'])
    const other = blame([wrong])
    other.record = signDocument<BlameBody>(GROUP_BLAME, { ...other.record.body, round: round + 1 }, signers[0])
    expect(blameCodes(other)).toEqual(['beacon-blame-partial'])
    for (const bad of [null, { ...blame([wrong]), extra: 1 }, { ...blame([wrong]), record: { ...blame([wrong]).record, extra: 1 } }, { ...blame([wrong]), members: ['x'] }, { ...blame([wrong]), commitments: ['00'] }, blame([])]) {
      expect(blameCodes(bad)).toEqual(['beacon-blame-form'])
    }
  })

  it('in a whole log it needs the dkg entry of its group before it', async () => {
    const dkg = { kind: 'dkg', payload: makeDkgRecord(result, kept) }
    const b = { kind: 'beacon-blame', payload: blame([wrong]) }
    const verdict = async (entries: Array<{ kind: string, payload: unknown }>): Promise<{ passed: number, failed: number, codes: string[] }> => {
      const codes: string[] = []
      const v = await verifyLog(logLines(entries), { verifyPayload: verifyLogPayload, onFailure: f => codes.push(...(f.codes ?? [])) })
      return { passed: v.passed, failed: v.failed, codes }
    }
    expect(await verdict([dkg, b])).toEqual({ passed: 2, failed: 0, codes: [] })
    expect(await verdict([b])).toEqual({ passed: 0, failed: 1, codes: ['beacon-blame-unmatched'] })
    expect(await verdict([b, dkg])).toEqual({ passed: 1, failed: 1, codes: ['beacon-blame-unmatched'] })
    // Other commitments (the group's, reversed: valid points, not the group the dkg entry made): its
    // partial still fails against them, so only the match with the dkg entry fails.
    const elsewhere = { kind: 'beacon-blame', payload: { ...blame([wrong]), commitments: [...result.commitments].reverse() } }
    expect(await verdict([dkg, elsewhere])).toEqual({ passed: 1, failed: 1, codes: ['beacon-blame-unmatched'] })
  })
})
