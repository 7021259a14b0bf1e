import { canonicalBytes } from '../canonical.js'
import { sha256, toHex } from '../bytes.js'
import { isPeerId } from '../identity.js'
import { Reason } from '../hand/reasons.js'
import type { Signed } from '../signed.js'
import type { DocumentVerifier } from './dkg-documents.js'
import { GROUP_BLAME, GROUP_PARTIAL, type BlameBody, type PartialBody } from './group-rounds.js'
import { commitmentsFromHex, evaluateCommitments, g1FromHex, hashRound, MAX_GROUP_MEMBERS, verifyOnG1 } from './threshold.js'

// A beacon group member's blame record (a partial signature that fails against its sender's public
// share, src/core/beacon/group-rounds.ts), as an entry of its signed log (kind `beacon-blame`,
// docs/log.md "Blame records of a beacon group"). The payload carries the group's members and summed
// commitments, so that it is checked alone (every named partial is signed by its sender and fails
// against that sender's public share); the log verifier then matches them, in order, with a `dkg`
// entry earlier in the same log, whose transcript they must follow from.

export const BLAME_RECORD_KIND = 'beacon-blame'

export interface BlameRecord {
  record: Signed<BlameBody>
  /** The group's members, in order (params.members of its DKG). */
  members: string[]
  /** The group's summed commitments (the DKG outcome's `commitments`): public share i = Σ C_k i^k. */
  commitments: string[]
}

/**
 * The digest that names a group in a log (docs/log.md): sha256 of the canonical JSON of
 * `{chain, members, commitments}`; a `dkg` entry gives it for its outcome, a `beacon-blame` entry for
 * the group it names.
 */
export function groupRef (chain: string, members: readonly string[], commitments: readonly string[]): string {
  return toHex(sha256(canonicalBytes({ chain, members, commitments })))
}

export interface BlameProblem { code: string, message: string }

function isObject (v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * Checks a `beacon-blame` entry's payload, signed into `owner`'s log, alone: its form
 * [beacon-blame-form]; the record is signed by the log's owner, a member [beacon-blame-signer]; each
 * named partial is its sender's, of the record's chain and round [beacon-blame-partial]; and fails
 * against its sender's public share [beacon-blame-refuted]. Returns the problems (the first failing
 * check's) and, when the form holds, the group the record names (its groupRef).
 */
export function checkBlameRecord (payload: unknown, owner: string | undefined, verify: DocumentVerifier): { problems: BlameProblem[], group?: string } {
  const form = (message: string): { problems: BlameProblem[] } => ({ problems: [{ code: Reason.BLAME_FORM, message: `blame record: ${message}` }] })
  if (!isObject(payload) || Object.keys(payload).sort().join(',') !== 'commitments,members,record') return form('not of the form { record, members, commitments }')
  const { record, members, commitments } = payload as unknown as BlameRecord
  if (!Array.isArray(members) || members.length < 1 || members.length > MAX_GROUP_MEMBERS || !members.every(isPeerId) || new Set(members).size !== members.length) return form(`members must be 1 to ${MAX_GROUP_MEMBERS} distinct peer ids`)
  if (!Array.isArray(commitments) || commitments.length < 1 || commitments.length > members.length) return form('commitments must list the group\'s summed commitments')
  let pubs: ReturnType<typeof commitmentsFromHex>
  try { pubs = commitmentsFromHex(commitments, 'commitments') } catch (err) { return form((err as Error).message) }
  const docKeys = (v: Record<string, unknown>): boolean => Object.keys(v).sort().join(',') === 'body,sig,signer,type'
  if (!isObject(record) || !docKeys(record) || record.type !== GROUP_BLAME || typeof record.signer !== 'string' || typeof record.sig !== 'string' || !isObject(record.body)) return form(`record must be a signed ${GROUP_BLAME} document`)
  const body = record.body as unknown as Record<string, unknown>
  const round = body.round
  if (typeof body.chain !== 'string' || !/^[0-9a-f]{64}$/.test(body.chain) || typeof round !== 'number' || !Number.isSafeInteger(round) || round < 1 || !Array.isArray(body.bad) || body.bad.length < 1 || body.bad.length > members.length || Object.keys(body).length !== 3) {
    return form('record body must be { chain, round, bad: [{ index, reason, partial }, …] }')
  }
  // Every item's shape is the record's form: checked before any signature (docs/log.md, step 1).
  for (const [k, raw] of (body.bad as unknown[]).entries()) {
    const b = raw as Record<string, unknown> | null
    const index = b?.index
    if (!isObject(b) || !isObject(b.partial) || typeof index !== 'number' || !Number.isSafeInteger(index) || index < 1 || index > members.length || b.reason !== 'bad-partial' || Object.keys(b).length !== 3) {
      return form(`bad[${k}] must be { index, reason: "bad-partial", partial }`)
    }
  }
  const group = groupRef(body.chain, members, commitments)
  if (!members.includes(record.signer) || (owner !== undefined && record.signer !== owner) || !verify(record)) {
    return { problems: [{ code: Reason.BLAME_SIGNER, message: `blame record of round ${round}: not signed by the log's owner as a member of the group` }], group }
  }
  const problems: BlameProblem[] = []
  const hashed = hashRound(round)
  for (const [k, raw] of (body.bad as unknown[]).entries()) {
    const b = raw as { index: number, partial: Signed<PartialBody> }
    const p = b.partial
    const index = b.index
    const pb = isObject(p.body) ? p.body as unknown as Record<string, unknown> : {}
    // `group` only in a group made by a reshare (its session: docs/log.md).
    const partialKeys = Object.keys(pb).sort().join(',')
    const exactPartial = docKeys(p as unknown as Record<string, unknown>) && (partialKeys === 'chain,index,partial,round' || (partialKeys === 'chain,group,index,partial,round' && typeof pb.group === 'string' && /^[0-9a-f]{64}$/.test(pb.group)))
    if (!exactPartial || p.type !== GROUP_PARTIAL || p.signer !== members[index - 1] || pb.chain !== body.chain || pb.round !== round || pb.index !== index || typeof pb.partial !== 'string' || !verify(p)) {
      problems.push({ code: Reason.BLAME_PARTIAL, message: `blame record of round ${round}: bad[${k}] is not a partial of round ${round} signed by member ${index}` })
      continue
    }
    let point: ReturnType<typeof g1FromHex> | undefined
    try { point = g1FromHex(pb.partial, 'partial') } catch { point = undefined } // not a point of G1: no share gives it
    const fails = point === undefined || !verifyOnG1(point, hashed, evaluateCommitments(pubs, index))
    if (!fails) problems.push({ code: Reason.BLAME_REFUTED, message: `blame record of round ${round}: member ${index}'s partial verifies against its public share: it is blamed wrongly` })
  }
  return { problems, group }
}
