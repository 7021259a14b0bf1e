import type * as z from 'zod'
import type { Signed } from '../signed.js'
import { docDigest } from './digest.js'
import { Reason, type ReasonCode } from './reasons.js'
import { zodProblems } from './verdict.js'
import type { CommitBody, SignedAbort } from './messages.js'

/**
 * The one evidence sorter of abort records (docs/protocol.md §10, docs/dealer-blind.md §13), for
 * every hand family: each piece of a record's evidence is a type its reason's row lists, parses as
 * that type's document, is signed by the party that makes it, and belongs to the record's table,
 * hand and COMMIT, unless the row says a type may show another hand or COMMIT (that is what it
 * proves). What differs between families is their documents, given as an `EvidenceDocs`.
 */

export type AddProblem = (code: ReasonCode, message: string) => void
export type VerifyDoc = (doc: Signed<unknown>) => boolean
export type RawEvidence = SignedAbort['body']['evidence'][number]

/** What the sorter hands a family's `file` with each document that kept the rules. */
export interface Filing {
  commit: CommitBody
  /** docDigest of the record's COMMIT. */
  digest: string
  /** `abort: evidence I (TYPE)`, the prefix of this piece's problems. */
  what: string
  verifyDoc: VerifyDoc
  add: AddProblem
}

/** A family's documents, as the sorter needs them. */
export interface EvidenceDocs<Ev> {
  /** The schema of each document type the family's records may carry. */
  schemas: Readonly<Record<string, z.ZodType>>
  /** The types a seat signs (`seatSigner` says who, from the seat the body names); the others are the dealer's. */
  seatTypes: ReadonlySet<string>
  seatSigner: (commit: CommitBody, seat: unknown) => string | undefined
  /** How a WRONG_SIGNER problem names a seat type's signer. */
  seatSignerName: string
  /** The message for a piece of a type the reason's row does not list. */
  notListed: (reason: string, type: string, commit: CommitBody) => string
  /** An empty evidence record of the family. */
  empty: () => Ev
  /** Files one document that kept the rules (it may check more and refuse it, adding a problem). */
  file: (ev: Ev, type: string, doc: Signed<unknown>, at: Filing) => void
}

/** The evidence columns of a reason's row. */
export interface EvidenceRow {
  /** The evidence types the reason may carry. */
  evidence: readonly string[]
  /** Types that may belong to another hand of the table (a broken-chain record's earlier COMMIT). */
  otherHand?: readonly string[]
  /** Types that may answer another COMMIT (what an equivocation record shows). */
  otherCommit?: readonly string[]
  /** A piece of an unlisted type that the record may still carry, and that is passed over. */
  passes?: (raw: RawEvidence, body: SignedAbort['body'], commit: CommitBody, verifyDoc: VerifyDoc) => boolean
}

/**
 * Parses each piece of a record's evidence, checks its signer and signature, and that it is for this
 * table, hand and COMMIT (as its row allows), and files it in the family's evidence record.
 */
export function sortEvidence<Ev> (
  docs: EvidenceDocs<Ev>, row: EvidenceRow, body: SignedAbort['body'], commit: CommitBody, digest: string,
  verifyDoc: VerifyDoc, add: AddProblem
): Ev {
  const ev = docs.empty()
  const reason = body.reason
  for (const [i, raw] of body.evidence.entries()) {
    const what = `abort: evidence ${i} (${raw.type})`
    if (!row.evidence.includes(raw.type)) {
      if (row.passes?.(raw, body, commit, verifyDoc) === true) continue
      add(Reason.ABORT_EVIDENCE, `${what}: ${docs.notListed(reason, raw.type, commit)}`)
      continue
    }
    const parsed = (docs.schemas[raw.type] as z.ZodType).safeParse(raw)
    if (!parsed.success) { for (const p of zodProblems(parsed.error)) add(p.code, `${what}: ${p.message}`); continue }
    const doc = parsed.data as Signed<{ table: string, hand: number, commit?: string, seat?: unknown }>
    const bySeat = docs.seatTypes.has(raw.type)
    const signer = bySeat ? docs.seatSigner(commit, doc.body.seat) : commit.dealer
    if (signer === undefined || doc.signer !== signer) { add(Reason.WRONG_SIGNER, `${what}: not signed by ${bySeat ? docs.seatSignerName : 'the dealer'}`); continue }
    if (!verifyDoc(doc)) { add(Reason.BAD_SIGNATURE, `${what}: bad signature`); continue }
    const otherHand = row.otherHand?.includes(raw.type) === true
    if (doc.body.table !== body.table || (doc.body.hand !== body.hand && !otherHand)) { add(Reason.ABORT_FOREIGN_EVIDENCE, `${what}: belongs to another table or hand`); continue }
    const itsCommit = raw.type === 'commit' ? docDigest(doc) : doc.body.commit
    if (itsCommit !== digest && row.otherCommit?.includes(raw.type) !== true) { add(Reason.ABORT_FOREIGN_EVIDENCE, `${what}: belongs to another COMMIT`); continue }
    docs.file(ev, raw.type, doc, { commit, digest, what, verifyDoc, add })
  }
  return ev
}

/** A record's blame is exactly `want` (`who` names it in the problem): the blame column of a row that names its party. */
export function expectBlame (ctx: { body: SignedAbort['body'], add: AddProblem }, want: readonly string[], who: string): void {
  const got = ctx.body.blame
  if (got.length !== want.length || got.some((b, i) => b !== want[i])) {
    ctx.add(Reason.ABORT_BLAME, `abort: a ${ctx.body.reason} record blames ${who}, not ${got.length === 0 ? 'nobody' : got.join(', ')}`)
  }
}
