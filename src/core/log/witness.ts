/**
 * Witnessed heads: a table member's signed statement that it received a peer's signed log head.
 * Modelled on transparency-log witnessing (C2SP tlog-cosignature: a witness signs "cosignature/v1",
 * the time, and the checkpoint it saw), in fairdeal's own signed-document form so that one
 * signature scheme covers everything. The format and the rules are in docs/log.md, "Witnessed
 * heads". Pure and browser-safe.
 */
import { canonicalJson } from '../canonical.js'
import { sha256Hex, fromUtf8, utf8 } from '../bytes.js'
import { isPeerId, type Signer } from '../identity.js'
import { signDocument, verifyDocument, type Signed } from '../signed.js'
import { checkLine, type DocVerifier, type LogLine } from './check.js'
import { HEAD_TYPE, MAX_HEAD_BYTES, type LogHead } from './format.js'

/** `type` of a cosigned head; its signature's domain tag is `fairdeal/v1/log-witness`. */
export const WITNESS_TYPE = 'log-witness'
/** Largest cosigned head line: the owner's head (≤ 1,024 bytes) and the witness's envelope. */
export const MAX_WITNESS_BYTES = MAX_HEAD_BYTES + 512
/** Contradicting heads a witness keeps per owner (each with the head it contradicted: 2 lines a proof). */
export const MAX_CONFLICTS_KEPT = 4
/** Earlier (replaced) heads a witness keeps per owner, thinned. */
export const MAX_HISTORY_KEPT = 8
/** The most cosigned heads a witness holds, and serves, for one owner: the latest, the proofs, the history. */
export const MAX_HEADS_HELD = 1 + 2 * MAX_CONFLICTS_KEPT + MAX_HISTORY_KEPT

export interface WitnessBody {
  /** The owner's signed head, exactly as received (its canonical form is its line). */
  head: LogHead
  /** When the witness received it: milliseconds since the Unix epoch, by the witness's clock. */
  seen: number
}

/** A witness's statement "I received this head, signed by its owner, from its owner at `seen`". */
export type WitnessedHead = Signed<WitnessBody>

/** A statement that checked out. */
export interface WitnessStatement {
  /** Its canonical line (the evidence). */
  line: string
  witness: string
  owner: string
  seq: number
  hash: string
  seen: number
  /** The owner's head's canonical line. */
  headLine: string
}

/** Cosigns an owner's head (the caller has checked it: {@link checkWitnessLine} does so again). */
export function cosignHead (signer: Signer, head: LogHead, seen: number): { doc: WitnessedHead, line: string } {
  const doc = signDocument(WITNESS_TYPE, { head, seen }, signer)
  return { doc, line: canonicalJson(doc) }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Checks a cosigned head line: at most {@link MAX_WITNESS_BYTES}, canonical JSON, exactly the
 * fields `body` {`head`, `seen`}, `sig`, `signer`, `type` = `log-witness`; `seen` a safe integer
 * ≥ 0; the witness's signature verifies; `head` is an authentic log head (checked as a head line
 * is) signed by someone other than the witness. Never throws.
 */
export function checkWitnessLine (line: LogLine, verifyDoc: DocVerifier = verifyDocument): { ok: true, statement: WitnessStatement } | { ok: false, problem: string } {
  const bytes = typeof line === 'string' ? utf8(line) : line
  if (bytes.length > MAX_WITNESS_BYTES) return { ok: false, problem: `longer than ${MAX_WITNESS_BYTES} bytes` }
  let text: string
  let doc: unknown
  try { text = typeof line === 'string' ? line : fromUtf8(line); doc = JSON.parse(text) } catch { return { ok: false, problem: 'not UTF-8 JSON' } }
  if (!isObject(doc)) return { ok: false, problem: 'not a JSON object' }
  let canonical: string
  try { canonical = canonicalJson(doc) } catch { return { ok: false, problem: 'not canonical JSON' } }
  if (canonical !== text) return { ok: false, problem: 'not in canonical form' }
  if (doc.type !== WITNESS_TYPE) return { ok: false, problem: `type is not ${WITNESS_TYPE}` }
  if (Object.keys(doc).sort().join() !== 'body,sig,signer,type') return { ok: false, problem: 'fields must be exactly body, sig, signer, type' }
  const body = doc.body
  if (!isObject(body) || Object.keys(body).sort().join() !== 'head,seen') return { ok: false, problem: 'body must have exactly head and seen' }
  if (typeof body.seen !== 'number' || !Number.isSafeInteger(body.seen) || body.seen < 0) return { ok: false, problem: 'seen must be a non-negative integer (ms)' }
  if (!isPeerId(doc.signer)) return { ok: false, problem: 'signer is not an Ed25519 peer id' }
  if (typeof doc.sig !== 'string' || !/^[0-9a-f]{128}$/.test(doc.sig)) return { ok: false, problem: 'sig must be 128 lowercase hex characters' }
  if (!isObject(body.head) || body.head.type !== HEAD_TYPE) return { ok: false, problem: 'head is not a log head' }
  const headLine = canonicalJson(body.head)
  const head = checkLine(headLine, null, verifyDoc)
  if (head.type !== 'head' || !head.authentic) return { ok: false, problem: `the head does not verify: ${head.problems.join('; ')}` }
  if (head.owner === doc.signer) return { ok: false, problem: 'a log owner cannot witness its own head' }
  if (!verifyDoc(doc as unknown as Signed<unknown>)) return { ok: false, problem: 'witness signature does not verify' }
  return {
    ok: true,
    statement: { line: text, witness: doc.signer, owner: head.owner as string, seq: head.seq as number, hash: head.hash as string, seen: body.seen, headLine }
  }
}

/** A log that contradicts a head its owner gave a witness. */
export interface WitnessFailure {
  kind: 'rolled-back' | 'forked'
  witness: string
  /** The witnessed seq. */
  seq: number
  /** One line for a person. */
  message: string
  /** The two signed documents that contradict each other: the cosigned head, then the log's head (or entry). */
  evidence: [string, string]
}

/**
 * Compares a log copy, as it streams past, with heads witnesses say its owner gave them. For a
 * witnessed head (S, H) and the copy's own signed head at seq D:
 * - S > D: the copy is shorter than a log its owner signed. It is **rolled back** when the copy is
 *   the owner's log as it is now (`current`: a data directory, a running node), or when the same
 *   witness received the copy's own head (same seq and hash) after it received (S, H): the owner
 *   went back. An older copy (a file exported before more entries came) is not compared.
 * - otherwise, the log's entry at S (or its head, when D = S) with another hash than H: **forked**
 *   — the owner signed two different logs.
 * - two witnessed heads at one seq with two hashes: **forked**, whatever the copy holds (once per
 *   seq, when the copy did not already show that fork).
 * An empty copy (no line at all) of a current log is rolled back before every witnessed head.
 * Statements for another owner are ignored, as are seqs the copy does not hold (a partial export).
 * Evidence is the cosigned head line and the log's own signed head (or the entry at S; the later
 * cosigned head of the copy's head for an older copy; nothing for an empty copy).
 */
export class WitnessComparer {
  private readonly wanted = new Map<number, WitnessStatement[]>()
  private readonly found = new Map<number, { hash: string, line: string }>()
  private head: { seq: number, hash: string, line: string } | null = null
  private lines = 0
  private readonly pattern: RegExp | null
  private readonly current: boolean

  constructor (private readonly statements: WitnessStatement[], owner: string | null, options: { current?: boolean } = {}) {
    this.current = options.current ?? true
    // The same cosigned head from two sources (the head file and the witness asked) is one statement.
    const unique = statements.filter((s, i) => statements.findIndex(t => t.line === s.line) === i)
    this.statements = owner === null ? unique : unique.filter(s => s.owner === owner)
    for (const s of this.statements) this.wanted.set(s.seq, [...(this.wanted.get(s.seq) ?? []), s])
    // Only lines that may be an entry at a wanted seq are parsed: canonical bodies end "…,"seq":S,"time"…" or "…"seq":S}".
    this.pattern = this.wanted.size === 0 ? null : new RegExp(`"seq":(${[...this.wanted.keys()].join('|')})[,}]`)
  }

  /** Passes the lines through, noting the head and the entries at witnessed seqs. */
  async * tap (lines: AsyncIterable<LogLine>): AsyncGenerator<LogLine> {
    let first = true
    for await (const line of lines) {
      this.lines++
      if (this.pattern !== null) {
        const text = typeof line === 'string' ? line : safeText(line)
        if (text !== null && (first || this.pattern.test(text))) this.note(text, first)
      }
      first = false
      yield line
    }
  }

  private note (text: string, first: boolean): void {
    let doc: { type?: unknown, signer?: unknown, body?: { seq?: unknown, hash?: unknown } }
    try { doc = JSON.parse(text) } catch { return }
    const seq = doc.body?.seq
    if (typeof seq !== 'number') return
    // Only a line its owner signed can show that the owner signed two logs: a line damaged or
    // forged by anyone else fails the line check on its own, and proves no fork.
    if (!this.statements.some(s => s.owner === doc.signer) || !checkLine(text, null).authentic) return
    if (first && doc.type === HEAD_TYPE && typeof doc.body?.hash === 'string') {
      this.head = { seq, hash: doc.body.hash, line: text }
    } else if (doc.type === 'log-entry' && this.wanted.has(seq) && !this.found.has(seq)) {
      this.found.set(seq, { hash: sha256Hex(utf8(text)), line: text })
    }
  }

  /** The contradictions found, once the copy has been read. */
  finish (): WitnessFailure[] {
    const out: WitnessFailure[] = []
    for (const [seq, list] of this.wanted) {
      for (const s of list) {
        const when = new Date(s.seen).toISOString()
        if (this.head === null && this.lines === 0) {
          // An empty log (no head, no entry) is the shortest rollback of all.
          if (!this.current) continue
          out.push({
            kind: 'rolled-back',
            witness: s.witness,
            seq,
            message: `rolled back: witness ${s.witness} received the owner's signed head at seq ${seq} (hash ${s.hash.slice(0, 16)}…) on ${when}, but this log is empty`,
            evidence: [s.line, '']
          })
          continue
        }
        if (this.head !== null && seq > this.head.seq) {
          const head = this.head
          if (this.current) {
            out.push({
              kind: 'rolled-back',
              witness: s.witness,
              seq,
              message: `rolled back: witness ${s.witness} received the owner's signed head at seq ${seq} (hash ${s.hash.slice(0, 16)}…) on ${when}, but this log's signed head is at seq ${head.seq}`,
              evidence: [s.line, head.line]
            })
            continue
          }
          // An older copy, unless the same witness was given this copy's head after the longer one.
          const after = this.statements.find(t => t.witness === s.witness && t.seq === head.seq && t.hash === head.hash && t.seen > s.seen)
          if (after !== undefined) {
            out.push({
              kind: 'rolled-back',
              witness: s.witness,
              seq,
              message: `rolled back: witness ${s.witness} received the owner's signed head at seq ${seq} (hash ${s.hash.slice(0, 16)}…) on ${when}, then this log's signed head at seq ${head.seq} on ${new Date(after.seen).toISOString()}`,
              evidence: [s.line, after.line]
            })
          }
          continue
        }
        const mine = this.head !== null && this.head.seq === seq ? { hash: this.head.hash, line: this.head.line } : this.found.get(seq)
        if (mine !== undefined && mine.hash !== s.hash) {
          out.push({
            kind: 'forked',
            witness: s.witness,
            seq,
            message: `forked: witness ${s.witness} received the owner's signed head naming hash ${s.hash.slice(0, 16)}… at seq ${seq} on ${when}, but this log's entry at seq ${seq} hashes to ${mine.hash.slice(0, 16)}…`,
            evidence: [s.line, mine.line]
          })
        }
      }
    }
    // Two heads the owner signed at one seq with two hashes prove a fork by themselves, whatever
    // the copy holds (an older file, a log rolled back below that seq): reported once per seq,
    // unless the copy's own entry or head already showed it.
    for (const [seq, list] of this.wanted) {
      if (out.some(f => f.kind === 'forked' && f.seq === seq)) continue
      const other = list.find(t => t.hash !== list[0].hash)
      if (other === undefined) continue
      const s = list[0]
      out.push({
        kind: 'forked',
        witness: other.witness,
        seq,
        message: `forked: the owner signed two heads at seq ${seq}: hash ${s.hash.slice(0, 16)}… (witness ${s.witness}, ${new Date(s.seen).toISOString()}) and hash ${other.hash.slice(0, 16)}… (witness ${other.witness}, ${new Date(other.seen).toISOString()})`,
        evidence: [s.line, other.line]
      })
    }
    return out.sort((a, b) => a.seq - b.seq)
  }
}

function safeText (bytes: Uint8Array): string | null {
  try { return fromUtf8(bytes) } catch { return null }
}
