import { CoreInputError } from '../errors.js'
import type { Signed } from '../signed.js'
import { Reason } from '../hand/reasons.js'
import type { DocumentVerifier } from './dkg-documents.js'
import { qualify, QualifyError, type DkgTranscript } from './dkg.js'
import { exact, isObject, packTranscript, unpackTranscript, type PackedTranscript } from './dkg-record.js'
import { sameJson } from '../same-json.js'
import { groupSession, participantsOf, type GroupParams } from './group-params.js'
import { RESHARE_REFUSED, type RefusalBody } from './reshare.js'

// A refused reshare, as an entry of the refusing node's signed log (kind `beacon-reshare-refused`,
// docs/log.md "Refused reshares"): the run's public transcript as the node held it (packed as a
// `dkg` record's) and the node's signed refusal. Re-verified offline: the refusal must be exactly
// what the qualification of that transcript refuses, so a node cannot log a refusal its evidence
// does not support, and nobody is named as not dealing unless the transcript shows it.

export const RESHARE_REFUSED_KIND = 'beacon-reshare-refused'

export interface RefusalRecord extends PackedTranscript {
  params: GroupParams
  refusal: Signed<RefusalBody>
}

export function makeRefusalRecord (transcript: DkgTranscript, refusal: Signed<RefusalBody>): RefusalRecord {
  return { params: transcript.params, ...packTranscript(transcript), refusal }
}

export interface RefusalRecordProblem {
  code: typeof Reason.RESHARE_REFUSED_FORM | typeof Reason.RESHARE_REFUSED_SIGNER | typeof Reason.RESHARE_REFUSED_OUTCOME
  message: string
}

const REFUSAL_KEYS = ['session', 'groupKey', 'chainHash', 'oldThreshold', 'dealers', 'rejected', 'reason', 'message']

/**
 * Checks a `beacon-reshare-refused` entry signed into `owner`'s log, in order, the first failing
 * check its one problem: its form [reshare-refused-form]; the refusal signed by the owner, a
 * participant of the run, of this run and its chain [reshare-refused-signer]; and the
 * qualification of the transcript refusing it for the same reason, with the same qualified old
 * members and the same members out and why [reshare-refused-outcome].
 */
export function checkRefusalRecord (payload: unknown, owner: string | undefined, verify: DocumentVerifier): { problems: RefusalRecordProblem[] } {
  const fail = (code: RefusalRecordProblem['code'], message: string): { problems: RefusalRecordProblem[] } => ({ problems: [{ code, message: `refused reshare record: ${message}` }] })
  if (!isObject(payload) || !exact(payload, ['params', 'deals', 'transcript', 'refusal'])) return fail(Reason.RESHARE_REFUSED_FORM, 'not of the form { params, deals, transcript, refusal }')
  let unpacked: ReturnType<typeof unpackTranscript>
  try { unpacked = unpackTranscript(payload) } catch (err) { return fail(Reason.RESHARE_REFUSED_FORM, (err as Error).message) }
  const { params, transcript } = unpacked
  const reshare = params.reshare
  if (reshare === undefined) return fail(Reason.RESHARE_REFUSED_FORM, 'params are not a reshare\'s (no reshare block)')
  const r = payload.refusal
  if (!isObject(r) || !exact(r, ['type', 'signer', 'body', 'sig']) || r.type !== RESHARE_REFUSED || typeof r.signer !== 'string' || typeof r.sig !== 'string' || !exact(r.body, REFUSAL_KEYS)) {
    return fail(Reason.RESHARE_REFUSED_FORM, `refusal must be a signed ${RESHARE_REFUSED} document whose body is exactly { ${REFUSAL_KEYS.join(', ')} }`)
  }
  const refusal = r as unknown as Signed<RefusalBody>
  const body = refusal.body
  if (!participantsOf(params).includes(refusal.signer)) return fail(Reason.RESHARE_REFUSED_SIGNER, `signed by ${refusal.signer.slice(0, 16)}…, who takes no part in this reshare`)
  if (owner !== undefined && refusal.signer !== owner) return fail(Reason.RESHARE_REFUSED_SIGNER, `signed by ${refusal.signer.slice(0, 16)}…, in the log of ${owner.slice(0, 16)}…`)
  if (!verify(refusal)) return fail(Reason.RESHARE_REFUSED_SIGNER, 'the refusal\'s signature does not verify')
  if (body.session !== groupSession(params) || body.groupKey !== reshare.chain.public_key || body.chainHash !== reshare.chain.hash || body.oldThreshold !== reshare.threshold) {
    return fail(Reason.RESHARE_REFUSED_SIGNER, 'the refusal names another run, key, chain or old threshold than its params')
  }
  let error: unknown
  try {
    qualify(transcript, verify)
    return fail(Reason.RESHARE_REFUSED_OUTCOME, 'its transcript reshares: nothing was refused')
  } catch (err) { error = err }
  if (!(error instanceof QualifyError)) return fail(Reason.RESHARE_REFUSED_OUTCOME, `its transcript does not verify: ${(error as Error).message}`)
  const rejected = error.disqualified.map(d => ({ dealer: d.dealer, reason: d.reason }))
  if (error.reason !== body.reason || !sameJson(error.qual, body.dealers) || !sameJson(rejected, body.rejected)) {
    return fail(Reason.RESHARE_REFUSED_OUTCOME, `its transcript refuses it as ${error.reason} with old members [${error.qual.join(', ')}] qualified and ${JSON.stringify(rejected)} out, not as the refusal says`)
  }
  return { problems: [] }
}

/** Throws when `payload` is not a refusal record a node may log (used before an honest node logs one). */
export function assertRefusalRecord (payload: RefusalRecord, owner: string, verify: DocumentVerifier): void {
  const { problems } = checkRefusalRecord(JSON.parse(JSON.stringify(payload)), owner, verify)
  if (problems.length > 0) throw new CoreInputError(problems[0].message)
}
