import { verifyDocument } from './signed.js'
import { incompleteMessage, verifyReceipt, type VerifyOptions } from './hand/verify.js'
import { verifyAbort } from './hand/abort-rules.js'
import { verifyRecovered } from './hand/recovered.js'
import { docDigest } from './hand/digest.js'
import { Reason, type Problem } from './hand/reasons.js'
import type { SignedCommit } from './hand/messages.js'
import type { PayloadCheck } from './log/check.js'
import type { PayloadLink } from './log/hand-chain.js'

/**
 * The semantic check of one log entry's payload, used by the log verifier: a 'receipt' is a whole
 * hand (src/core/hand/messages.ts Receipt), an 'abort' a signed abort record, a 'recovered' a
 * time-locked hand finished without a missing party (src/core/hand/recovered.ts). Returns the
 * problems found, each with its code (an incomplete receipt's missing countersignatures are flagged
 * `incomplete`), and the hand's place in its dealer's chain of COMMITs when the COMMIT is authentic.
 */
export function verifyLogPayload (kind: string, payload: unknown, options?: VerifyOptions): PayloadCheck {
  if (kind === 'receipt') {
    const verdict = verifyReceipt(payload, options)
    const problems: Array<Problem | { code: string, message: string, incomplete: true }> = [...verdict.problems]
    if (verdict.status === 'incomplete' && verdict.summary !== undefined) {
      problems.push({ code: Reason.INCOMPLETE, message: incompleteMessage(verdict.summary), incomplete: true })
    }
    return { problems, link: linkOf((payload as { commit?: SignedCommit }).commit, verdict.summary?.commitDigest) }
  }
  if (kind === 'abort') {
    const verdict = verifyAbort(payload, options)
    return { problems: verdict.problems, link: linkOf((payload as { body?: { commit?: SignedCommit } }).body?.commit, verdict.summary?.commitDigest) }
  }
  if (kind === 'recovered') {
    const verdict = verifyRecovered(payload, options)
    const commit = (payload as { body?: { commit?: SignedCommit } }).body?.commit
    const authentic = verdict.summary !== undefined && commit !== undefined && commit.signer === commit.body.dealer &&
      (options?.verifyDoc ?? verifyDocument)(commit)
    return { problems: verdict.problems, link: linkOf(commit, authentic ? docDigest(commit) : undefined) }
  }
  return { problems: [{ code: Reason.UNKNOWN_KIND, message: `unknown entry kind ${JSON.stringify(kind)}` }] }
}

/** A hand's place in its dealer's chain at its table, from a COMMIT whose signature verified (digest given). */
function linkOf (commit: SignedCommit | undefined, digest: string | undefined): PayloadLink | undefined {
  if (commit === undefined || digest === undefined) return undefined
  return { chain: { table: commit.body.table, dealer: commit.body.dealer }, index: commit.body.hand, id: digest, prev: commit.body.prev }
}
