import { canonicalJson } from '../canonical.js'
import { CoreInputError } from '../errors.js'
import type { Signed } from '../signed.js'
import { checkDkgAgreement } from './dkg-agreement.js'
import { DKG_RESULT, parseDkgDocument, type DealBody, type DocumentVerifier, type ResponsesBody, type ShareBody } from './dkg-documents.js'
import type { DkgOutcome, DkgResult, DkgTranscript } from './dkg.js'
import { dealersOf, groupSession, parseGroupParams, type GroupParams } from './group-params.js'
import { MAX_GROUP_MEMBERS } from './threshold.js'
import { groupRef } from './blame-record.js'
import { Reason } from '../hand/reasons.js'

// A member's DKG, as an entry of its own signed log (kind `dkg`, docs/beacon-group.md "The DKG in
// the log"): the public transcript, the outcome it claims, and the other members' signed results
// it held. Re-verified offline like a receipt: the outcome (qualified set, disqualifications with
// their evidence, group key, groupHash, chain) must follow from the signed documents, the log's
// owner must be the member it names, and every kept result must name the same group.
//
// Packed: each member's responses carry its view of every deal (signed by the dealers), so a
// transcript holds each deal about n+1 times (91% of a 12-member transcript). The record keeps each
// distinct deal document once, in `deals`, and the transcript's deals and every view as indices into
// it; unpacking puts the same documents back, byte for byte, so every signature still verifies.

export const DKG_RECORD_KIND = 'dkg'

/** A member's responses with its `view` as indices into the record's `deals`. */
export interface PackedResponses {
  type: string
  signer: string
  sig: string
  body: Omit<ResponsesBody, 'view'> & { view: number[] }
}

export interface DkgRecord {
  /** The member whose log this is (1-based index into params.members). */
  member: number
  params: GroupParams
  /** Every distinct signed deal the transcript holds, each once. */
  deals: Array<Signed<DealBody>>
  transcript: { deals: number[], responses: PackedResponses[], answers: Array<Signed<ShareBody>> }
  outcome: Pick<DkgOutcome, 'qual' | 'groupKey' | 'groupHash' | 'chainInfo' | 'commitments'>
  /** Other members' signed results this member held when it logged the record. */
  results: unknown[]
}

/** A transcript packed: each distinct deal once, in `deals`, and the transcript's deals and views as indices into it. */
export interface PackedTranscript {
  deals: Array<Signed<DealBody>>
  transcript: { deals: number[], responses: PackedResponses[], answers: Array<Signed<ShareBody>> }
}

/** Packs a transcript (makeDkgRecord, and the record of a refused reshare). */
export function packTranscript (t: DkgTranscript): PackedTranscript {
  const deals: Array<Signed<DealBody>> = []
  const at = new Map<string, number>()
  const indexOf = (d: Signed<DealBody>): number => {
    const key = canonicalJson(d)
    let i = at.get(key)
    if (i === undefined) { i = deals.length; deals.push(d); at.set(key, i) }
    return i
  }
  const transcript = {
    deals: t.deals.map(indexOf),
    responses: t.responses.map(r => ({ type: r.type, signer: r.signer, sig: r.sig, body: { ...r.body, view: r.body.view.map(indexOf) } })),
    answers: t.answers
  }
  return { deals, transcript }
}

/** The record of a member's finished DKG (no secret share: it is never logged). */
export function makeDkgRecord (result: DkgResult, results: readonly unknown[]): DkgRecord {
  return {
    member: result.index,
    params: result.transcript.params,
    ...packTranscript(result.transcript),
    outcome: { qual: result.qual, groupKey: result.groupKey, groupHash: result.groupHash, chainInfo: result.chainInfo, commitments: result.commitments },
    results: [...results]
  }
}

/** A problem of a `dkg` entry, with its reason code (src/core/hand/reasons.ts). */
export interface DkgRecordProblem { code: typeof Reason.DKG_FORM | typeof Reason.DKG_MEMBER | typeof Reason.DKG_OUTCOME | typeof Reason.DKG_DISAGREEMENT, message: string }

/** A JSON object (not null, not an array): what a record's fields must be before they are read. */
export function isObject (v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** An object with exactly these fields (a record has one form: docs/log.md). */
export const exact = (v: unknown, keys: readonly string[]): boolean => isObject(v) && Object.keys(v).length === keys.length && keys.every(k => k in v)

/**
 * A record's `params` (exactly the group's fields, and `reshare` for a reshare) and its packed
 * transcript unpacked: the documents as their signers signed them. Throws why it cannot be.
 */
export function unpackTranscript (p: Record<string, unknown>): { params: GroupParams, transcript: DkgTranscript } {
  const groupKeys = ['id', 'members', 'threshold', 'period', 'genesisTime', 'dkg']
  const reshared = isObject(p.params) && 'reshare' in p.params
  if (!exact(p.params, reshared ? [...groupKeys, 'reshare'] : groupKeys) || !exact((p.params as Record<string, unknown>).dkg, ['start', 'phaseMs'])) {
    throw new CoreInputError('params must be exactly { id, members, threshold, period, genesisTime, dkg: { start, phaseMs } }, and reshare for a reshare')
  }
  // A reshare's `reshare` block is checked field by field (exactly its fields) by parseGroupParams.
  const params = parseGroupParams(p.params, 'params')
  const n = params.members.length
  const nd = dealersOf(params).length
  // Each dealer's deal, and at most one more for a dealer that equivocated, is all a transcript can hold.
  if (!Array.isArray(p.deals) || p.deals.length > 2 * MAX_GROUP_MEMBERS) throw new CoreInputError('deals must be a list of signed deals')
  const deals = p.deals as Array<Signed<DealBody>>
  const deal = (i: unknown, what: string): Signed<DealBody> => {
    if (typeof i !== 'number' || !Number.isSafeInteger(i) || i < 0 || i >= deals.length) throw new CoreInputError(`${what} must be an index into deals`)
    return deals[i]
  }
  const t = p.transcript
  if (!isObject(t) || !Array.isArray(t.deals) || !Array.isArray(t.responses) || !Array.isArray(t.answers) || Object.keys(t).length !== 3) {
    throw new CoreInputError('transcript must be { deals, responses, answers }')
  }
  if (t.deals.length > 2 * nd || t.responses.length > 2 * n || t.answers.length > nd * n) throw new CoreInputError('transcript holds more documents than a DKG of this group can')
  const responses = t.responses.map((r, k) => {
    if (!isObject(r) || !isObject(r.body) || !Array.isArray(r.body.view) || r.body.view.length > 2 * nd) throw new CoreInputError(`transcript.responses[${k}] must be responses whose view lists indices into deals`)
    return { ...r, body: { ...r.body, view: r.body.view.map((i, j) => deal(i, `transcript.responses[${k}].view[${j}]`)) } } as unknown as Signed<ResponsesBody>
  })
  return { params, transcript: { params, deals: t.deals.map((i, j) => deal(i, `transcript.deals[${j}]`)), responses, answers: t.answers as Array<Signed<ShareBody>> } }
}

/** The record's transcript unpacked (the documents as signed), or why it cannot be. */
function unpack (p: Record<string, unknown>, verify: DocumentVerifier): { params: GroupParams, member: number, transcript: DkgTranscript, outcome: DkgRecord['outcome'], results: unknown[] } {
  const keys = ['member', 'params', 'deals', 'transcript', 'outcome', 'results']
  const extra = Object.keys(p).filter(k => !keys.includes(k))
  if (extra.length > 0) throw new CoreInputError(`unexpected field ${extra.join(', ').slice(0, 60)}`)
  const { params, transcript } = unpackTranscript(p)
  const n = params.members.length
  const member = p.member
  if (typeof member !== 'number' || !Number.isSafeInteger(member) || member < 1 || member > n) throw new CoreInputError(`member must be a member index from 1 to ${n}`)
  const o = p.outcome
  if (!isObject(o) || !exact(o, ['qual', 'groupKey', 'groupHash', 'chainInfo', 'commitments']) || !Array.isArray(o.qual) || !Array.isArray(o.commitments) || typeof o.groupKey !== 'string' || typeof o.groupHash !== 'string' || !isObject(o.chainInfo)) {
    throw new CoreInputError('outcome must be exactly { qual, groupKey, groupHash, chainInfo, commitments }')
  }
  if (!Array.isArray(p.results) || p.results.length > n) throw new CoreInputError(`results must be a list of at most ${n} signed results`)
  const session = groupSession(params)
  p.results.forEach((x, k) => {
    if (parseDkgDocument(x, params, session, verify).type !== DKG_RESULT) throw new CoreInputError(`results[${k}] is not a signed result`)
  })
  return { params, member, transcript, outcome: o as unknown as DkgRecord['outcome'], results: p.results }
}

/**
 * Checks a `dkg` entry's payload, signed into `owner`'s log: its form [dkg-form]; the owner is the
 * member it names [dkg-member]; the outcome follows from the signed documents [dkg-outcome]; every
 * kept signed result names the same qualified set, group key and groupHash [dkg-disagreement].
 * Each check needs the one before, so the first that fails is the one problem reported. A record
 * that passes names the group it made (its groupRef), which a later blame record must name.
 */
export function checkDkgRecord (payload: unknown, owner: string | undefined, verify: DocumentVerifier): { problems: DkgRecordProblem[], group?: string } {
  const fail = (code: DkgRecordProblem['code'], message: string): { problems: DkgRecordProblem[] } => ({ problems: [{ code, message }] })
  if (!isObject(payload)) return fail(Reason.DKG_FORM, 'dkg record: not a JSON object')
  let r: ReturnType<typeof unpack>
  try { r = unpack(payload, verify) } catch (err) { return fail(Reason.DKG_FORM, `dkg record: ${(err as Error).message}`) }
  const peer = r.params.members[r.member - 1]
  if (owner !== undefined && owner !== peer) {
    return fail(Reason.DKG_MEMBER, `dkg record of member ${r.member} (${peer.slice(0, 16)}…) in the log of ${owner.slice(0, 16)}…`)
  }
  let agreement: ReturnType<typeof checkDkgAgreement>
  try {
    agreement = checkDkgAgreement([{ label: 'dkg record', result: { ...r.outcome, transcript: r.transcript, index: r.member }, results: r.results }], verify)
  } catch (err) {
    return fail(Reason.DKG_OUTCOME, `dkg record of group ${r.params.id}: ${(err as Error).message.replace(/^dkg record: /, '')}`)
  }
  const problems = agreement.disagreements.map(d => ({ code: Reason.DKG_DISAGREEMENT, message: `dkg record of group ${r.params.id}: ${d.source}: ${d.reason}` }))
  return problems.length > 0 ? { problems } : { problems, group: groupRef(r.outcome.chainInfo.hash, r.params.members, r.outcome.commitments) }
}
