import { verifyDocument } from './signed.js'
import { incompleteMessage, verifyReceipt, type ReceiptSummary, type VerifyOptions } from './hand/verify.js'
import { verifyAbort } from './hand/abort-rules.js'
import { verifyRecovered } from './hand/recovered.js'
import { docDigest } from './hand/digest.js'
import { Reason, type Problem } from './hand/reasons.js'
import * as z from 'zod'
import { signedAckSchema, signedCommitSchema, type SignedAbort, type SignedCommit } from './hand/messages.js'
import type { PayloadCheck } from './log/check.js'
import { checkDkgRecord, DKG_RECORD_KIND } from './beacon/dkg-record.js'
import { BLAME_RECORD_KIND, checkBlameRecord } from './beacon/blame-record.js'
import { checkRefusalRecord, RESHARE_REFUSED_KIND } from './beacon/refusal-record.js'
import type { AcksDue, PayloadLink } from './log/types.js'

/**
 * The semantic check of one log entry's payload, used by the log verifier: a 'receipt' is a whole
 * hand (src/core/hand/messages.ts Receipt), an 'abort' a signed abort record, a 'recovered' a
 * time-locked hand finished without a missing party (src/core/hand/recovered.ts), a 'dkg' a beacon
 * group member's DKG (src/core/beacon/dkg-record.ts, checked against the log's `owner`). Returns the
 * problems found, each with its code (an incomplete receipt's missing countersignatures are flagged
 * `incomplete`), and the hand's place in its dealer's chain of COMMITs when the COMMIT is authentic.
 */
export function verifyLogPayload (kind: string, payload: unknown, options?: VerifyOptions & { owner?: string }): PayloadCheck {
  if (kind === 'receipt') {
    const verdict = verifyReceipt(payload, options)
    const problems: Array<Problem | { code: string, message: string, incomplete: true }> = [...verdict.problems]
    if (verdict.status === 'incomplete' && verdict.summary !== undefined) {
      problems.push({ code: Reason.INCOMPLETE, message: incompleteMessage(verdict.summary), incomplete: true })
    }
    const link = linkOf((payload as { commit?: unknown } | null)?.commit, verdict.summary?.commitDigest, options)
    const due = verdict.status === 'incomplete' ? acksDue(verdict.summary) : undefined
    return { problems, link, ...(due === undefined ? {} : { due }) }
  }
  if (kind === 'late-ack') return checkLateAck(payload, options)
  if (kind === 'abort') {
    const verdict = verifyAbort(payload, options)
    const link = linkOf(commitOfRecord(payload), verdict.summary?.commitDigest, options)
    if (link !== undefined && verdict.ok) nonceClaims(payload as SignedAbort, link)
    return { problems: verdict.problems, link }
  }
  if (kind === 'recovered') {
    const verdict = verifyRecovered(payload, options)
    return { problems: verdict.problems, link: linkOf(commitOfRecord(payload), undefined, options) }
  }
  if (kind === DKG_RECORD_KIND) return checkDkgRecord(payload, options?.owner, options?.verifyDoc ?? verifyDocument)
  if (kind === RESHARE_REFUSED_KIND) return checkRefusalRecord(payload, options?.owner, options?.verifyDoc ?? verifyDocument)
  if (kind === BLAME_RECORD_KIND) {
    const { problems, group } = checkBlameRecord(payload, options?.owner, options?.verifyDoc ?? verifyDocument)
    return { problems, ...(group === undefined ? {} : { groupRef: group }) }
  }
  return { problems: [{ code: Reason.UNKNOWN_KIND, message: `unknown entry kind ${JSON.stringify(kind)}` }] }
}

/** A late-ack entry's payload (docs/log.md, "Late acks"): the seat's signed ACK, nothing else. */
export const lateAckPayloadSchema = z.object({ ack: signedAckSchema }).strict()

/**
 * The part of a late-ack entry's check that needs no other entry: its form and its ACK's signature
 * (by the signer it names). Whether that signer is the seat, and the ACK what the receipt of its
 * hand earlier in the log needs, is decided in order by the chain checks (src/core/log/chain.ts).
 */
function checkLateAck (payload: unknown, options?: VerifyOptions): PayloadCheck {
  const parsed = lateAckPayloadSchema.safeParse(payload)
  if (!parsed.success) return { problems: [{ code: Reason.LATE_ACK_FORM, message: `late ack: not of the form { ack: ACK } (${parsed.error.issues[0]?.message ?? 'malformed'})` }] }
  const { ack } = parsed.data
  if (!(options?.verifyDoc ?? verifyDocument)(ack)) return { problems: [{ code: Reason.BAD_SIGNATURE, message: `late ack of seat ${ack.body.seat}: bad signature` }] }
  const { table, hand, commit, reveal, seat, cards } = ack.body
  return { problems: [], lateAck: { commit, table, hand, reveal, seat, cards, signer: ack.signer } }
}

/** An incomplete receipt's missing acks and what each must say, when its deal was recomputed. */
export function acksDue (summary: ReceiptSummary | undefined): AcksDue | undefined {
  if (summary?.commitDigest === undefined || summary.revealDigest === undefined || summary.seatCards === undefined) return undefined
  const seats: AcksDue['seats'] = {}
  for (const s of summary.missingAcks) seats[String(s)] = { signer: summary.seats[s], cards: summary.seatCards[s] }
  return { commit: summary.commitDigest, table: summary.table, hand: summary.hand, reveal: summary.revealDigest, seats }
}

/**
 * What an abort record that verified says about nonces and views, for the log rule that a dealer's
 * missing-nonce (missing-view) is refuted by another record of the log holding a blamed seat's
 * NONCE (VIEW) (docs/protocol.md §10).
 */
function nonceClaims (record: SignedAbort, link: PayloadLink): void {
  const { body } = record
  const seats = (body.commit as SignedCommit).body.seats
  if (record.signer === body.commit?.body.dealer) {
    if (body.reason === 'missing-nonce') link.claim = { what: 'nonce', blamed: [...body.blame] }
    if (body.reason === 'missing-view') link.claim = { what: 'view', blamed: [...body.blame] }
    return
  }
  // Only documents of this very COMMIT (an equivocation record may hold another COMMIT's VIEW).
  const of = (type: string): string[] => body.evidence.filter(e => e.type === type && (e.body as { commit?: unknown }).commit === link.id)
    .map(e => seats[(e.body as { seat: number }).seat]).filter(p => p !== undefined && p !== record.signer)
  const released = { nonce: of('nonce'), view: of('view') }
  if (released.nonce.length + released.view.length > 0) link.released = released
}

function commitOfRecord (payload: unknown): unknown {
  return (payload as { body?: { commit?: unknown } } | null)?.body?.commit
}

/**
 * A hand's place in its dealer's chain at its table, from the COMMIT an entry carries, whenever
 * that COMMIT is well formed and signed by the dealer it names, whatever else is wrong with the
 * entry (docs/log.md, "Hand chains"): a malformed receipt or record of an authentic COMMIT still
 * holds its hand, so the hand after it is no gap. `digest` is the COMMIT's docDigest when the
 * entry's own check already verified the dealer's signature on it (no second check then).
 */
function linkOf (value: unknown, digest: string | undefined, options?: VerifyOptions): PayloadLink | undefined {
  const parsed = signedCommitSchema.safeParse(value)
  if (!parsed.success) return undefined
  const commit = parsed.data
  if (digest === undefined) {
    if (commit.signer !== commit.body.dealer || !(options?.verifyDoc ?? verifyDocument)(commit)) return undefined
    digest = docDigest(commit)
  }
  return { chain: { table: commit.body.table, dealer: commit.body.dealer }, index: commit.body.hand, id: digest, prev: commit.body.prev }
}
