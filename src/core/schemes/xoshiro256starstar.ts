import { CoreInputError } from '../errors.js'
import { preview } from './inputs.js'

const MASK64 = 0xffffffffffffffffn
const UINT32_MAX = 0xffffffffn
/** PHP gives up after this many redraws (RANDOM_RANGE_ATTEMPTS in ext/random/random.c). */
const RANGE_ATTEMPTS = 50

function rotl (x: bigint, k: bigint): bigint {
  return ((x << k) | (x >> (64n - k))) & MASK64
}

/**
 * PHP's `Random\Engine\Xoshiro256StarStar`: the state is four 64-bit words read little-endian from
 * the 32-byte seed; an all-zero seed is refused as PHP refuses it. BigInt keeps every 64-bit step
 * exact; dice need a handful of outputs, so speed does not matter here.
 */
export class Xoshiro256StarStar {
  #s0: bigint
  #s1: bigint
  #s2: bigint
  #s3: bigint

  constructor (seed: Uint8Array) {
    if (!(seed instanceof Uint8Array) || seed.length !== 32) {
      throw new CoreInputError(`a Xoshiro256** seed is 32 bytes, got ${seed instanceof Uint8Array ? seed.length : preview(seed)}`)
    }
    if (seed.every(b => b === 0)) throw new CoreInputError('a Xoshiro256** seed must not be all zero bytes')
    const word = (o: number): bigint => {
      let w = 0n
      for (let i = 7; i >= 0; i--) w = (w << 8n) | BigInt(seed[o + i])
      return w
    }
    this.#s0 = word(0); this.#s1 = word(8); this.#s2 = word(16); this.#s3 = word(24)
  }

  /** The next raw 64-bit output. */
  next64 (): bigint {
    const result = (rotl((this.#s1 * 5n) & MASK64, 7n) * 9n) & MASK64
    const t = (this.#s1 << 17n) & MASK64
    this.#s2 ^= this.#s0
    this.#s3 ^= this.#s1
    this.#s1 ^= this.#s2
    this.#s0 ^= this.#s3
    this.#s2 ^= t
    this.#s3 = rotl(this.#s3, 45n)
    return result
  }
}

/**
 * `Random\Randomizer::getInt(min, max)` on a Xoshiro256** engine. umax = max − min; up to 2^32−1 it
 * uses the low 32 bits of one output, above that the whole output; umax = 2^32−1 (or 2^64−1) returns
 * it as is, a power-of-two range masks it, otherwise outputs ≥ 2^w − (2^w mod (umax+1)) are redrawn
 * (at most 50 times, as PHP) and min + value mod (umax+1) is returned.
 */
export function getInt (engine: Xoshiro256StarStar, min: number, max: number): number {
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max)) {
    throw new CoreInputError(`getInt bounds must be safe integers, got ${preview(min)} and ${preview(max)}`)
  }
  if (min > max) throw new CoreInputError(`getInt min must be less than or equal to max, got ${min} > ${max}`)
  const umax = BigInt(max) - BigInt(min)
  const wide = umax > UINT32_MAX
  const draw = wide ? () => engine.next64() : () => engine.next64() & UINT32_MAX
  let value = draw()
  if (umax !== (wide ? MASK64 : UINT32_MAX)) {
    const m = umax + 1n
    if ((m & (m - 1n)) === 0n) {
      value &= m - 1n
    } else {
      const limit = (wide ? 1n << 64n : 1n << 32n) - ((wide ? 1n << 64n : 1n << 32n) % m)
      let attempts = 0
      while (value >= limit) {
        if (++attempts > RANGE_ATTEMPTS) throw new Error(`Failed to generate an acceptable random number in ${RANGE_ATTEMPTS} attempts`)
        value = draw()
      }
      value %= m
    }
  }
  return Number(BigInt(min) + value)
}
