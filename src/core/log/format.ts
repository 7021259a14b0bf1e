import { canonicalJson } from '../canonical.js'
import { CoreInputError } from '../errors.js'
import { sha256, sha256Hex, toHex, utf8 } from '../bytes.js'
import { signDocument, type Signed } from '../signed.js'
import type { Signer } from '../identity.js'

/** `type` of a signed log entry; the signature's domain tag is `fairdeal/v1/log-entry`. */
export const ENTRY_TYPE = 'log-entry'
/** `type` of the signed head; a head signature can never be replayed as an entry and back. */
export const HEAD_TYPE = 'log-head'
/** `prev` of entry 0: there is nothing before it. */
export const GENESIS_PREV = '0'.repeat(64)
/**
 * Largest canonical entry line, in bytes. The store refuses to write a bigger one, so every entry a
 * node holds can also be served over the network, whose frames are limited to this size. A
 * dealer-blind tarot receipt of 5 seats (five 78-card shuffles) is about 168 KB.
 */
export const MAX_ENTRY_BYTES = 256 * 1024
/** Largest head line (a head is about 300 bytes; the margin is for longer peer ids). */
export const MAX_HEAD_BYTES = 1024
/** Entry kinds are short lowercase words (`receipt`, `abort`): they are printed in tables and errors. */
export const KIND_PATTERN = /^[a-z][a-z0-9-]{0,31}$/

export interface EntryBody {
  /** Position in the owner's log: 0, 1, 2, … without gaps. */
  seq: number
  /** Hash of the previous entry's line (see {@link entryHash}); {@link GENESIS_PREV} for seq 0. */
  prev: string
  /** What the payload is: `receipt` or `abort` for fairdeal tables. */
  kind: string
  /** Opaque to the log; checked by the injected payload verifier. Any canonical JSON value. */
  payload: unknown
  /** Milliseconds since the Unix epoch when the owner appended it (informative only). */
  time?: number
}

export interface HeadBody {
  /** Sequence number of the last entry. An empty log has no head at all. */
  seq: number
  /** Hash of that entry's line. */
  hash: string
}

/** One log entry: the owner's signature over the body, so any range of a log verifies by itself. */
export type LogEntry = Signed<EntryBody>
/** The owner's signed statement "my log ends at `seq`, whose entry hashes to `hash`". */
export type LogHead = Signed<HeadBody>

/** The one byte form of an entry or head: a line of a JSON Lines export, a store value, a frame. */
export function encodeLine (doc: LogEntry | LogHead): string {
  return canonicalJson(doc)
}

/** sha256 of the entry's canonical line, lowercase hex: covers the body, the signer and the signature. */
export function entryHash (entry: LogEntry | string): string {
  return sha256Hex(typeof entry === 'string' ? entry : encodeLine(entry))
}

export interface NewEntry {
  seq: number
  prev: string
  kind: string
  payload: unknown
  time?: number
}

/**
 * Signs a new entry and returns it with its line and hash. Refuses what the verifier would refuse,
 * so a node never writes an entry it could not later prove.
 */
export function makeEntry (signer: Signer, fields: NewEntry): { entry: LogEntry, line: string, hash: string } {
  const { seq, prev, kind, payload, time } = fields
  if (!Number.isSafeInteger(seq) || seq < 0) throw new CoreInputError(`entry seq must be a non-negative integer, got ${String(seq)}`)
  if ((seq === 0) !== (prev === GENESIS_PREV) || !/^[0-9a-f]{64}$/.test(prev)) {
    throw new CoreInputError(`entry ${seq}: prev must be 64 lowercase hex characters, all zeros exactly for seq 0`)
  }
  if (typeof kind !== 'string' || !KIND_PATTERN.test(kind)) {
    throw new CoreInputError(`entry kind must match ${String(KIND_PATTERN)}, got ${JSON.stringify(String(kind).slice(0, 40))}`)
  }
  if (payload === undefined) throw new CoreInputError('entry payload is missing')
  if (time !== undefined && (!Number.isSafeInteger(time) || time < 0)) {
    throw new CoreInputError(`entry time must be a non-negative integer (ms), got ${String(time)}`)
  }
  const body: EntryBody = time === undefined ? { seq, prev, kind, payload } : { seq, prev, kind, payload, time }
  const entry = signDocument(ENTRY_TYPE, body, signer)
  const line = encodeLine(entry)
  const bytes = utf8(line)
  if (bytes.length > MAX_ENTRY_BYTES) {
    throw new CoreInputError(`entry ${seq} is ${bytes.length} bytes once encoded; the limit is ${MAX_ENTRY_BYTES}`)
  }
  return { entry, line, hash: toHex(sha256(bytes)) }
}

export function makeHead (signer: Signer, seq: number, hash: string): { head: LogHead, line: string } {
  const head = signDocument(HEAD_TYPE, { seq, hash }, signer)
  return { head, line: encodeLine(head) }
}
