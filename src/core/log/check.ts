import { canonicalJson } from '../canonical.js'
import { fromUtf8, sha256, toHex, utf8 } from '../bytes.js'
import { isPeerId } from '../identity.js'
import { verifyDocument, type Signed } from '../signed.js'
import type { AcksDue, LateAck, PayloadLink } from './types.js'
import { ENTRY_TYPE, GENESIS_PREV, HEAD_TYPE, KIND_PATTERN, MAX_ENTRY_BYTES, MAX_HEAD_BYTES } from './format.js'

/** A line of a log as it arrives: text (store, file) or its UTF-8 bytes (file, network frame). */
export type LogLine = string | Uint8Array

/** Checks one signed document's signature (core `verifyDocument`, or a faster native one in Node). */
export type DocVerifier = (doc: Signed<unknown>) => boolean

/** A problem a payload verifier found: its code, its message, and whether it only makes the entry incomplete. */
export interface PayloadProblem {
  code?: string
  message: string
  /** Not a failure: the entry is right but lacks something (a receipt missing a countersignature). */
  incomplete?: boolean
}

/** What a payload verifier says about one payload: its problems and, optionally, its place in a chain. */
export interface PayloadCheck {
  problems: Array<string | PayloadProblem>
  link?: PayloadLink
  /** An incomplete receipt: the acks it lacks, which late-ack entries after it may bring. */
  due?: AcksDue
  /** A late-ack entry whose ACK's signature verifies: what it countersigns, matched in order by the chain checks. */
  lateAck?: LateAck
  /** A passing `dkg` entry: the group it made (its groupRef, src/core/beacon/blame-record.ts). */
  group?: string
  /** A `beacon-blame` entry: the group it names, matched in order with an earlier `dkg` entry by the chain checks. */
  groupRef?: string
}

/**
 * The semantic check of one payload, injected by whoever knows what the payloads are (for fairdeal
 * tables: `verifyLogPayload` of src/core/receipt.ts). Returns the problems found (empty means fine),
 * as a list or with the payload's chain link (src/core/log/hand-chain.ts). When the caller has a
 * faster signature check it passes it as `options.verifyDoc`; `options.owner` is the log's owner
 * (the entry's verified signer).
 */
export type PayloadVerifier = (kind: string, payload: unknown, options?: { verifyDoc?: DocVerifier, owner?: string }) => Array<string | PayloadProblem> | PayloadCheck

/**
 * What one line says about itself, independent of its neighbours. Plain data, so a worker thread
 * can compute it and post it back; the chain checks (order, links, head) come after, in order.
 */
export interface LineCheck {
  type: 'entry' | 'head' | 'unreadable'
  /**
   * The document is well formed and its owner signature verifies: seq, prev and owner are the
   * owner's own words. When false, those fields are only what the line claims.
   */
  authentic: boolean
  seq?: number
  prev?: string
  owner?: string
  kind?: string
  /** Entry: sha256 of the line. Head: the entry hash it names. */
  hash?: string
  /** Not authentic: why. Authentic entry: what the payload verifier found. */
  problems: string[]
  /** Authentic entry: what makes it incomplete (it verifies, but is not a pass). */
  incomplete?: string[]
  /** The reason codes of `problems` and `incomplete`, when the payload verifier gives them. */
  codes?: string[]
  /** Authentic entry: its payload's place in a chain (hand chains), when the payload verifier gives it. */
  link?: PayloadLink
  /** Authentic incomplete receipt: the acks it lacks. */
  due?: AcksDue
  /** Authentic late-ack entry with a verified ACK: what it countersigns. */
  lateAck?: LateAck
  /** Authentic `dkg` entry that passed: its group. */
  group?: string
  /** Authentic `beacon-blame` entry: the group it names. */
  groupRef?: string
}

const ENTRY_KEYS = new Set(['seq', 'prev', 'kind', 'payload', 'time'])
const HEAD_KEYS = new Set(['seq', 'hash'])
const DOC_KEYS = ['body', 'sig', 'signer', 'type']

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isSeq (value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

function isHash (value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{64}$/.test(value)
}

function short (text: string, max = 60): string {
  return text.length <= max ? text : text.slice(0, max) + '…'
}

/**
 * Checks one line: size, UTF-8, JSON, that it is byte for byte its own canonical form (so every
 * byte is covered by the hash and the signature), the document's shape, the owner's signature and,
 * for an authentic entry, its payload. Pure; never throws on bad input. `verifyDoc` replaces the
 * pure Ed25519 check (for this line and, passed on, for the payload's documents).
 */
export function checkLine (line: LogLine, verifyPayload: PayloadVerifier | null, verifyDoc?: DocVerifier): LineCheck {
  const bytes = typeof line === 'string' ? utf8(line) : line
  if (bytes.length > MAX_ENTRY_BYTES) {
    return { type: 'unreadable', authentic: false, problems: [`line is longer than ${MAX_ENTRY_BYTES} bytes, the most an entry may hold`] }
  }
  let text: string
  if (typeof line === 'string') text = line
  else {
    try { text = fromUtf8(line) } catch { return { type: 'unreadable', authentic: false, problems: ['not valid UTF-8'] } }
  }
  let doc: unknown
  try { doc = JSON.parse(text) } catch (err) {
    return { type: 'unreadable', authentic: false, problems: [`not JSON (${(err as Error).message})`] }
  }
  if (!isObject(doc)) return { type: 'unreadable', authentic: false, problems: ['not a JSON object'] }

  const out: LineCheck = { type: 'unreadable', authentic: false, problems: [] }
  const body = doc.body
  if (doc.type === ENTRY_TYPE) out.type = 'entry'
  else if (doc.type === HEAD_TYPE) out.type = 'head'
  else {
    // A damaged type still leaves the shape: knowing a broken head from a broken entry keeps the
    // blame on the right line.
    if (isObject(body) && 'hash' in body && !('prev' in body)) out.type = 'head'
    else if (isObject(body) && 'prev' in body) out.type = 'entry'
    out.problems.push(`not a log entry or head (type ${short(JSON.stringify(doc.type) ?? 'missing')})`)
    if (out.type === 'unreadable') return out
  }
  if (isObject(body)) {
    if (isSeq(body.seq)) out.seq = body.seq
    if (typeof doc.signer === 'string') out.owner = doc.signer
    if (out.type === 'entry') {
      if (typeof body.prev === 'string') out.prev = body.prev
      if (typeof body.kind === 'string') out.kind = body.kind
      out.hash = toHex(sha256(bytes))
    } else if (typeof body.hash === 'string') out.hash = body.hash
  }

  const problems = out.problems
  let canonical: string | undefined
  try { canonical = canonicalJson(doc) } catch (err) { problems.push(`not canonical JSON (${(err as Error).message})`) }
  if (canonical !== undefined && canonical !== text) problems.push('not in canonical form (keys sorted, no spaces, integers only)')
  const extra = Object.keys(doc).filter(k => !DOC_KEYS.includes(k))
  if (extra.length > 0) problems.push(`unexpected field ${short(extra.join(', '))}`)
  if (!isPeerId(doc.signer)) problems.push(`signer is not an Ed25519 peer id: ${short(JSON.stringify(doc.signer) ?? 'missing')}`)
  if (typeof doc.sig !== 'string' || !/^[0-9a-f]{128}$/.test(doc.sig)) problems.push('sig must be 128 lowercase hex characters')
  if (!isObject(body)) problems.push('body is not an object')
  else if (out.type === 'entry') problems.push(...entryBodyProblems(body))
  else {
    if (bytes.length > MAX_HEAD_BYTES) problems.push(`a head is at most ${MAX_HEAD_BYTES} bytes, this one is ${bytes.length}`)
    problems.push(...headBodyProblems(body))
  }
  if (problems.length > 0) return out

  if (!(verifyDoc ?? verifyDocument)(doc as unknown as Signed<unknown>)) {
    problems.push(`${out.type === 'head' ? 'head' : 'owner'} signature does not verify`)
    return out
  }
  out.authentic = true
  if (out.type === 'entry' && verifyPayload !== null) {
    try {
      const payload = (body as Record<string, unknown>).payload
      // The owner's signature verified: a payload whose meaning depends on whose log holds it (a
      // member's `dkg` record) is checked against it.
      const result = verifyPayload(out.kind as string, payload, { ...(verifyDoc === undefined ? {} : { verifyDoc }), owner: doc.signer as string })
      const found = Array.isArray(result) ? result : result.problems
      if (!Array.isArray(result) && result.link !== undefined) out.link = result.link
      if (!Array.isArray(result) && result.due !== undefined) out.due = result.due
      if (!Array.isArray(result) && result.lateAck !== undefined) out.lateAck = result.lateAck
      if (!Array.isArray(result) && result.group !== undefined) out.group = result.group
      if (!Array.isArray(result) && result.groupRef !== undefined) out.groupRef = result.groupRef
      for (const p of found) {
        if (typeof p !== 'object' || p === null) { problems.push(String(p)); continue }
        if (p.incomplete === true) (out.incomplete ??= []).push(p.message)
        else problems.push(p.message)
        if (p.code !== undefined && !(out.codes ??= []).includes(p.code)) out.codes.push(p.code)
      }
    } catch (err) {
      problems.push(`payload check failed: ${(err as Error).message}`)
    }
  }
  return out
}

function entryBodyProblems (body: Record<string, unknown>): string[] {
  const problems: string[] = []
  const extra = Object.keys(body).filter(k => !ENTRY_KEYS.has(k))
  if (extra.length > 0) problems.push(`unexpected body field ${short(extra.join(', '))}`)
  if (!isSeq(body.seq)) problems.push('seq must be a non-negative integer')
  if (!isHash(body.prev)) problems.push('prev must be 64 lowercase hex characters')
  else if (isSeq(body.seq) && (body.seq === 0) !== (body.prev === GENESIS_PREV)) {
    problems.push(body.seq === 0 ? 'seq 0 must have prev all zeros' : 'prev is all zeros but seq is not 0')
  }
  if (typeof body.kind !== 'string' || !KIND_PATTERN.test(body.kind)) problems.push(`kind must match ${String(KIND_PATTERN)}`)
  if (!('payload' in body)) problems.push('payload is missing')
  if ('time' in body && !isSeq(body.time)) problems.push('time must be a non-negative integer')
  return problems
}

function headBodyProblems (body: Record<string, unknown>): string[] {
  const problems: string[] = []
  const extra = Object.keys(body).filter(k => !HEAD_KEYS.has(k))
  if (extra.length > 0) problems.push(`unexpected head field ${short(extra.join(', '))}`)
  if (!isSeq(body.seq)) problems.push('head seq must be a non-negative integer')
  if (!isHash(body.hash)) problems.push('head hash must be 64 lowercase hex characters')
  return problems
}
