import { sha256 } from '../bytes.js'

/** A source of unsigned 32-bit integers. The shuffles take one so tests can force every path. */
export interface U32Source {
  next: () => number
}

/**
 * A reusable message buffer: a fixed prefix followed by a decimal counter, re-written in place for
 * every hash. A deal hashes the same prefix many times, so this avoids one string build and one
 * UTF-8 encoding per hash (the hot path of verifying a log).
 */
export class CounterMessage {
  readonly #buf: Uint8Array
  readonly #prefix: number
  readonly #suffix: Uint8Array

  constructor (prefix: Uint8Array, suffix: Uint8Array = new Uint8Array(0)) {
    this.#buf = new Uint8Array(prefix.length + 16 + suffix.length)
    this.#buf.set(prefix)
    this.#prefix = prefix.length
    this.#suffix = suffix
  }

  /** SHA-256 of prefix ‖ decimal(counter) ‖ suffix; counter is a safe non-negative integer. */
  digest (counter: number): Uint8Array {
    const buf = this.#buf
    let len = this.#prefix
    if (counter < 10) {
      buf[len++] = 48 + counter
    } else {
      const digits = String(counter)
      for (let i = 0; i < digits.length; i++) buf[len++] = digits.charCodeAt(i)
    }
    if (this.#suffix.length > 0) { buf.set(this.#suffix, len); len += this.#suffix.length }
    return sha256(buf.subarray(0, len))
  }
}

export function readU32BE (bytes: Uint8Array, offset: number): number {
  return ((bytes[offset] << 24) | (bytes[offset + 1] << 16) | (bytes[offset + 2] << 8) | bytes[offset + 3]) >>> 0
}

/**
 * Fisher–Yates from the end with rejection sampling: for i = n−1 … 1 draw until a number is below
 * 2^32 − (2^32 mod (i+1)), then swap item i with item (number mod (i+1)). atout-v1 and tarot-v1
 * share it; only their number sources differ.
 */
export function fisherYates (items: { [i: number]: number, length: number }, source: U32Source): void {
  for (let i = items.length - 1; i >= 1; i--) {
    const m = i + 1
    const limit = 4294967296 - (4294967296 % m)
    let x = source.next()
    while (x >= limit) x = source.next()
    const j = x % m
    const t = items[i]; items[i] = items[j]; items[j] = t
  }
}

/** The identity permutation 0 … n−1. */
export function identity (n: number): Uint16Array {
  const out = new Uint16Array(n)
  for (let i = 0; i < n; i++) out[i] = i
  return out
}
