// Logs for the log tests: real signatures throughout. Payloads are documents signed by a "seat"
// key other than the log owner's, so a forged payload is caught by a real signature check even
// when the owner re-signs the entry around it.
import { signerFromSeed, type Signer } from '../../src/core/identity.js'
import { signDocument, verifyDocument, type Signed } from '../../src/core/signed.js'
import { GENESIS_PREV, makeEntry, makeHead } from '../../src/core/log/format.js'

export function seededSigner (n: number): Signer {
  return signerFromSeed(new Uint8Array(32).fill(n))
}

export const OWNER = seededSigner(1)
export const SEAT = seededSigner(2)
export const STRANGER = seededSigner(3)

export interface TestReceipt {
  hand: number
  game: string
  seats: string[]
  beacon: { round: number } | null
}

export function testPayload (hand: number, seat: Signer = SEAT): Signed<TestReceipt> {
  return signDocument('test-receipt', {
    hand,
    game: hand % 3 === 0 ? 'belote' : 'coinche',
    seats: [seat.peerId, 'robot', 'robot', 'robot'],
    beacon: hand % 2 === 0 ? { round: 1000 + hand } : null
  }, seat)
}

/** The payload check the tests inject in place of the receipt verifier. */
export function verifyTestPayload (kind: string, payload: unknown, options?: { verifyDoc?: (doc: Signed<unknown>) => boolean }): string[] {
  if (kind !== 'receipt' && kind !== 'abort') return [`unknown entry kind ${JSON.stringify(kind)}`]
  const doc = payload as Signed<TestReceipt> | null
  if (doc === null || typeof doc !== 'object' || doc.type !== 'test-receipt') return ['payload is not a test receipt']
  return (options?.verifyDoc ?? verifyDocument)(doc) ? [] : ['receipt signature does not verify']
}

/** A whole log as exported: the head line, then `n` entry lines. */
export function buildLog (n: number, owner: Signer = OWNER, payloadFor: (seq: number) => unknown = testPayload): string[] {
  const entries: string[] = []
  let prev = GENESIS_PREV
  for (let seq = 0; seq < n; seq++) {
    const made = makeEntry(owner, { seq, prev, kind: seq % 5 === 4 ? 'abort' : 'receipt', payload: payloadFor(seq), time: 1_700_000_000_000 + seq })
    entries.push(made.line)
    prev = made.hash
  }
  if (n === 0) return []
  return [makeHead(owner, n - 1, prev).line, ...entries]
}

/** Deterministic PRNG (mulberry32) so a failing random case can be replayed from its seed. */
export function prng (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * Character positions inside JSON values (string contents, numbers, literals) of one canonical
 * line: the bytes a tamperer would change, as opposed to keys and punctuation.
 */
export function valuePositions (line: string): number[] {
  const out: number[] = []
  let i = 0
  while (i < line.length) {
    const c = line[i]
    if (c === '"') {
      let j = i + 1
      while (line[j] !== '"') j += line[j] === '\\' ? 2 : 1
      let k = j + 1
      while (line[k] === ' ') k++
      if (line[k] !== ':') for (let p = i + 1; p < j; p++) out.push(p)
      i = j + 1
    } else if (/[-0-9a-z]/.test(c)) {
      out.push(i)
      i++
    } else {
      i++
    }
  }
  return out
}
