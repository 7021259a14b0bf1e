/**
 * Randomness for the blind protocol is injected: a function returning n random bytes. Nodes pass
 * the platform's CSPRNG; tests and known-answer vectors pass `seededRandom`, whose stream is
 * SHA-512(seed ‖ u32be(0)) ‖ SHA-512(seed ‖ u32be(1)) ‖ … consumed in order.
 */
import { sha512 } from '@noble/hashes/sha2.js'
import { randomBytes as nobleRandomBytes } from '@noble/hashes/utils.js'
import { concatBytes } from '../bytes.js'
import { CoreInputError } from '../errors.js'
import { ORDER } from './group.js'
import { bytesToNumberLE } from '@noble/curves/utils.js'

export type RandomBytes = (n: number) => Uint8Array

/** The platform's CSPRNG (WebCrypto; Node 20 and browsers). */
export const systemRandom: RandomBytes = n => nobleRandomBytes(n)

/** A deterministic stream for tests and vectors (never for real hands). */
export function seededRandom (seed: Uint8Array): RandomBytes {
  let counter = 0
  let buffer: Uint8Array = new Uint8Array(0)
  return (n: number) => {
    while (buffer.length < n) {
      const block = new Uint8Array(4)
      new DataView(block.buffer).setUint32(0, counter++)
      buffer = concatBytes(buffer, sha512(concatBytes(seed, block)))
    }
    const out = buffer.slice(0, n)
    buffer = buffer.slice(n)
    return out
  }
}

/** A uniform non-zero scalar: 64 random bytes read little-endian, mod ℓ (bias below 2^-250). */
export function randomScalar (random: RandomBytes): bigint {
  for (;;) {
    const bytes = random(64)
    const x = bytesToNumberLE(bytes) % ORDER
    if (x !== 0n) return x
  }
}

/** Uniform in 0 … n−1 from u32 big-endian draws, rejecting draws ≥ 2^32 − (2^32 mod n). */
export function randomBelow (random: RandomBytes, n: number): number {
  if (!Number.isSafeInteger(n) || n < 1 || n > 2 ** 32) throw new CoreInputError(`cannot draw below ${n}`)
  const limit = 2 ** 32 - (2 ** 32 % n)
  for (;;) {
    const b = random(4)
    const x = ((b[0] << 24) >>> 0) + (b[1] << 16) + (b[2] << 8) + b[3]
    if (x < limit) return x % n
  }
}

/** Fisher–Yates from [0 … n−1]: for i = n−1 down to 1, swap π[i] with π[randomBelow(i+1)]. */
export function randomPermutation (random: RandomBytes, n: number): number[] {
  const p = Array.from({ length: n }, (_, i) => i)
  for (let i = n - 1; i > 0; i--) {
    const j = randomBelow(random, i + 1)
    const t = p[i]; p[i] = p[j]; p[j] = t
  }
  return p
}

