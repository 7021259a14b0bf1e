import { sha256, utf8 } from '../bytes.js'

/** A source of unsigned 32-bit integers. The shuffles take one so tests can force every path. */
export interface U32Source {
  next: () => number
}

/**
 * A reusable message buffer: a fixed prefix (and suffix) around a decimal counter, re-written in
 * place for every hash. A deal hashes the same prefix many times, so this avoids one string build
 * and one UTF-8 encoding per hash (the hot path of verifying a log), and builds the prefix with a
 * single allocation, since a deal is only a few hashes.
 */
export class CounterMessage {
  private readonly buf: Uint8Array
  private readonly prefix: number
  private readonly suffix: Uint8Array | undefined
  /** The view hashed last time: the length changes only when the counter gains a digit. */
  private view: Uint8Array | undefined

  constructor (prefix: Uint8Array | string, suffix?: Uint8Array) {
    const extra = 16 + (suffix?.length ?? 0)
    if (typeof prefix === 'string') {
      this.buf = writeAscii(prefix, extra) ?? withRoom(utf8(prefix), extra)
    } else {
      this.buf = withRoom(prefix, extra)
    }
    this.prefix = this.buf.length - extra
    this.suffix = suffix !== undefined && suffix.length > 0 ? suffix : undefined
  }

  /** SHA-256 of prefix ‖ decimal(counter) ‖ suffix; counter is a safe non-negative integer. */
  digest (counter: number): Uint8Array {
    const buf = this.buf
    let len = this.prefix
    if (counter < 10) {
      buf[len++] = 48 + counter
    } else {
      const digits = String(counter)
      for (let i = 0; i < digits.length; i++) buf[len++] = digits.charCodeAt(i)
    }
    if (this.suffix !== undefined) { buf.set(this.suffix, len); len += this.suffix.length }
    let view = this.view
    if (view === undefined || view.length !== len) view = this.view = buf.subarray(0, len)
    return sha256(view)
  }
}

/** Keys are hex, so the common case skips TextEncoder; undefined when the text is not ASCII. */
function writeAscii (text: string, extra: number): Uint8Array | undefined {
  const out = new Uint8Array(text.length + extra)
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c > 0x7f) return undefined
    out[i] = c
  }
  return out
}

function withRoom (bytes: Uint8Array, extra: number): Uint8Array {
  const out = new Uint8Array(bytes.length + extra)
  out.set(bytes)
  return out
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
  const highest = highestAccepted(items.length)
  for (let i = items.length - 1; i >= 1; i--) {
    const m = i + 1
    const top = highest[m]
    let x = source.next()
    while (x > top) x = source.next()
    const j = x % m
    const t = items[i]; items[i] = items[j]; items[j] = t
  }
}

/**
 * highest[m] = 2^32 − (2^32 mod m) − 1, the largest draw accepted for a range of m: a table, because
 * the float modulo per step costs as much as the rest of the shuffle. Grown once to the largest deck.
 */
let HIGHEST = new Uint32Array(0)
function highestAccepted (n: number): Uint32Array {
  if (HIGHEST.length <= n) {
    const table = new Uint32Array(Math.max(n + 1, 80))
    for (let m = 1; m < table.length; m++) table[m] = 4294967296 - (4294967296 % m) - 1
    HIGHEST = table
  }
  return HIGHEST
}

/** The identity permutation 0 … n−1. */
export function identity (n: number): Uint16Array {
  const out = new Uint16Array(n)
  for (let i = 0; i < n; i++) out[i] = i
  return out
}
