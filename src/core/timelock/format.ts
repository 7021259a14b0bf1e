import { concatBytes, fromBase64, fromUtf8, toBase64, utf8 } from '../bytes.js'
import { TimelockError } from './errors.js'

/**
 * The byte format of a time-locked value: an age v1 file (age-encryption.org/v1) with exactly one
 * `tlock` recipient stanza, ASCII-armored the way tlock-js writes it. Parsing is strict and
 * canonical: a text is accepted only if re-armoring its bytes gives the same text, so a signed
 * ciphertext has exactly one spelling.
 */

export const ARMOR_HEADER = '-----BEGIN AGE ENCRYPTED FILE-----'
export const ARMOR_FOOTER = '-----END AGE ENCRYPTED FILE-----'
/** Longest armored ciphertext a document may carry (a 64-character secret gives about 600). */
export const MAX_TIMELOCK_CHARS = 2048
/** Quick shape check for schemas; {@link parseTimelock} does the full one. */
export const TIMELOCK_ARMOR = /^-----BEGIN AGE ENCRYPTED FILE-----\n[A-Za-z0-9+/=\n]{1,2000}\n-----END AGE ENCRYPTED FILE-----\n$/

const AGE_VERSION = 'age-encryption.org/v1'
const ROUND = /^[1-9][0-9]{0,15}$/
const CHAIN_HASH = /^[0-9a-f]{64}$/
const BODY_LINE = 64
/** A compressed BLS12-381 G2 point (U) and the two 16-byte masks (V, W) of the wrapped file key. */
export const STANZA_BODY_BYTES = 96 + 16 + 16
const MAC_BYTES = 32

export interface TimelockCiphertext {
  /** The drand round whose signature opens it. */
  round: number
  /** The chain the stanza names (hex). */
  chainHash: string
  /** The IBE ciphertext of the 16-byte age file key: U ‖ V ‖ W. */
  stanzaBody: Uint8Array
  /** The header bytes the header MAC covers: from `age-encryption.org/v1` through `---`. */
  macInput: Uint8Array
  mac: Uint8Array
  /** 16-byte payload nonce ‖ ChaCha20-Poly1305 STREAM chunks. */
  payload: Uint8Array
}

/** The armor tlock-js writes: padded base64 in 64-column lines between the two marker lines. */
export function armorAge (bytes: Uint8Array): string {
  const b64 = toBase64(bytes)
  const lines: string[] = []
  for (let i = 0; i < b64.length; i += BODY_LINE) lines.push(b64.slice(i, i + BODY_LINE))
  return `${ARMOR_HEADER}\n${lines.join('\n')}\n${ARMOR_FOOTER}\n`
}

/** Undoes {@link armorAge}; only its exact output is accepted. */
export function dearmorAge (armored: string): Uint8Array {
  if (typeof armored !== 'string' || armored.length > MAX_TIMELOCK_CHARS) {
    throw new TimelockError('malformed', `a time-locked value is armored text of at most ${MAX_TIMELOCK_CHARS} characters`)
  }
  if (!armored.startsWith(ARMOR_HEADER + '\n') || !armored.endsWith('\n' + ARMOR_FOOTER + '\n')) {
    throw new TimelockError('malformed', 'not an armored age file (BEGIN/END AGE ENCRYPTED FILE lines)')
  }
  const inner = armored.slice(ARMOR_HEADER.length + 1, armored.length - ARMOR_FOOTER.length - 2)
  let bytes: Uint8Array
  try {
    bytes = fromBase64(inner.split('\n').join(''), 'armored age file')
  } catch (err) {
    throw new TimelockError('malformed', (err as Error).message)
  }
  if (armorAge(bytes) !== armored) throw new TimelockError('malformed', 'armor is not in canonical form (64-column lines, LF endings)')
  return bytes
}

function indexOfBytes (haystack: Uint8Array, needle: Uint8Array, from: number): number {
  outer: for (let i = from; i + needle.length <= haystack.length; i++) {
    for (let k = 0; k < needle.length; k++) if (haystack[i + k] !== needle[k]) continue outer
    return i
  }
  return -1
}

/**
 * Parses an armored tlock ciphertext: the age version line, exactly one `-> tlock <round>
 * <chainHash>` stanza with a body of {@link STANZA_BODY_BYTES} bytes, the header MAC and the
 * payload. Throws TimelockError('malformed') with the first problem.
 */
export function parseTimelock (armored: string): TimelockCiphertext {
  const bytes = dearmorAge(armored)
  const macAt = indexOfBytes(bytes, utf8('\n--- '), 0)
  if (macAt < 0) throw new TimelockError('malformed', 'age header has no MAC line')
  const macEnd = indexOfBytes(bytes, utf8('\n'), macAt + 1)
  if (macEnd < 0) throw new TimelockError('malformed', 'age MAC line is not terminated')
  let headerText: string
  let macText: string
  try {
    headerText = fromUtf8(bytes.subarray(0, macAt))
    macText = fromUtf8(bytes.subarray(macAt + 5, macEnd))
  } catch {
    throw new TimelockError('malformed', 'age header is not text')
  }
  const lines = headerText.split('\n')
  if (lines[0] !== AGE_VERSION) throw new TimelockError('malformed', `age header must start with ${AGE_VERSION}`)
  const stanza = /^-> tlock ([^ ]+) ([^ ]+)$/.exec(lines[1] ?? '')
  if (stanza === null) throw new TimelockError('malformed', 'the first age stanza must be "-> tlock <round> <chainHash>"')
  const [, roundText, chainHash] = stanza
  if (!ROUND.test(roundText) || !Number.isSafeInteger(Number(roundText))) throw new TimelockError('malformed', `tlock stanza round ${JSON.stringify(roundText.slice(0, 20))} is not a round number`)
  if (!CHAIN_HASH.test(chainHash)) throw new TimelockError('malformed', 'tlock stanza chain hash is not 64 lowercase hex characters')
  const bodyLines = lines.slice(2)
  // age: the body is unpadded base64 in 64-column lines, its last line shorter than 64.
  const last = bodyLines.length - 1
  if (bodyLines.length === 0 || bodyLines.some((l, i) => i < last ? l.length !== BODY_LINE : l.length >= BODY_LINE)) {
    throw new TimelockError('malformed', 'age allows one stanza here, its body in 64-column lines ending with a shorter one')
  }
  let stanzaBody: Uint8Array
  let mac: Uint8Array
  try {
    stanzaBody = fromBase64(bodyLines.join(''), 'tlock stanza body')
    mac = fromBase64(macText, 'age header MAC')
  } catch (err) {
    throw new TimelockError('malformed', (err as Error).message)
  }
  if (bodyLines.join('').includes('=') || macText.includes('=')) throw new TimelockError('malformed', 'age base64 is unpadded')
  if (stanzaBody.length !== STANZA_BODY_BYTES) throw new TimelockError('malformed', `tlock stanza body must be ${STANZA_BODY_BYTES} bytes, got ${stanzaBody.length}`)
  if (mac.length !== MAC_BYTES) throw new TimelockError('malformed', `age header MAC must be ${MAC_BYTES} bytes`)
  const payload = bytes.subarray(macEnd + 1)
  if (payload.length < 16 + 16) throw new TimelockError('malformed', 'age payload is too short')
  return {
    round: Number(roundText),
    chainHash,
    stanzaBody,
    macInput: concatBytes(bytes.subarray(0, macAt + 4)),
    mac,
    payload: concatBytes(payload)
  }
}

/** The round and chain a ciphertext is locked to, or why it cannot be read. */
export function timelockTarget (armored: string): { round: number, chainHash: string } {
  const { round, chainHash } = parseTimelock(armored)
  return { round, chainHash }
}

/**
 * The one target check: the ciphertext is locked to exactly this chain and round. Returns a
 * one-line problem, or undefined when it is. (tlock-js itself never compares the chain hash.)
 */
export function checkTimelockTarget (armored: string, expected: { chainHash: string, round: number }): string | undefined {
  let target
  try {
    target = timelockTarget(armored)
  } catch (err) {
    return (err as Error).message
  }
  if (target.chainHash !== expected.chainHash) return `locked to chain ${target.chainHash.slice(0, 16)}…, not the table's ${expected.chainHash.slice(0, 16)}…`
  if (target.round !== expected.round) return `locked to round ${target.round}, not the bound round ${expected.round}`
  return undefined
}
