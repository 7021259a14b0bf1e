import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js'
import { CoreInputError } from './errors.js'

const encoder = new TextEncoder()
const decoder = new TextDecoder('utf-8', { fatal: true })

export function utf8 (text: string): Uint8Array {
  return encoder.encode(text)
}

export function fromUtf8 (bytes: Uint8Array): string {
  return decoder.decode(bytes)
}

let sha256Of: (data: Uint8Array) => Uint8Array = nobleSha256

/**
 * Has `sha256` use another implementation of SHA-256 from now on, in this process or page: a
 * node gives it Node's own (OpenSSL, several times faster than the pure one on a hand's documents).
 * The digests are the same; the core stays pure (nothing here imports Node).
 */
export function useSha256 (impl: (data: Uint8Array) => Uint8Array): void {
  sha256Of = impl
}

export function sha256 (data: Uint8Array | string): Uint8Array {
  return sha256Of(typeof data === 'string' ? utf8(data) : data)
}

export function sha256Hex (data: Uint8Array | string): string {
  return toHex(sha256(data))
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))

export function toHex (bytes: Uint8Array): string {
  let out = ''
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]]
  return out
}

/** Strict lowercase-or-uppercase hex, even length; `what` names the field in the error. */
export function fromHex (hex: string, what = 'value', expectedBytes?: number): Uint8Array {
  if (typeof hex !== 'string' || hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) {
    throw new CoreInputError(`${what} must be hex (an even number of 0-9a-f characters), got ${JSON.stringify(String(hex).slice(0, 80))}`)
  }
  if (expectedBytes !== undefined && hex.length !== expectedBytes * 2) {
    throw new CoreInputError(`${what} must be ${expectedBytes} bytes (${expectedBytes * 2} hex characters), got ${hex.length} characters`)
  }
  // By character code, not parseInt on a slice per byte: a node decodes every signature it checks
  // (64 bytes: about 2.5 µs with parseInt). The test above already refused anything but hex digits.
  const out = new Uint8Array(hex.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = (NIBBLE[hex.charCodeAt(2 * i)] << 4) | NIBBLE[hex.charCodeAt(2 * i + 1)]
  return out
}

/** A hex digit's value by its character code (0-9, a-f, A-F). */
const NIBBLE = (() => {
  const table = new Uint8Array(128)
  for (let c = 0; c < 16; c++) {
    const digit = c.toString(16)
    table[digit.charCodeAt(0)] = c
    table[digit.toUpperCase().charCodeAt(0)] = c
  }
  return table
})()

export function isHex (value: unknown, bytes?: number): value is string {
  return typeof value === 'string' && /^[0-9a-f]*$/.test(value) && value.length % 2 === 0 &&
    (bytes === undefined || value.length === bytes * 2)
}

export function concatBytes (...parts: Uint8Array[]): Uint8Array {
  let n = 0
  for (const p of parts) n += p.length
  const out = new Uint8Array(n)
  let o = 0
  for (const p of parts) { out.set(p, o); o += p.length }
  return out
}

export function bytesEqual (a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i]
  return diff === 0
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const B64_INDEX = new Map(Array.from(B64, (c, i) => [c, i]))

/** RFC 4648 base64 with `=` padding (`unpadded` leaves it out, as age does). */
export function toBase64 (bytes: Uint8Array, unpadded = false): string {
  let out = ''
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0)
    const chars = Math.min(4, Math.ceil((bytes.length - i) * 4 / 3))
    for (let k = 0; k < 4; k++) out += k < chars ? B64[(n >> (18 - 6 * k)) & 63] : (unpadded ? '' : '=')
  }
  return out
}

/**
 * Strict base64 (padded or not): only the 64 characters, no whitespace, and the unused low bits of
 * the last character zero, so every byte string has exactly one accepted text.
 */
export function fromBase64 (text: string, what = 'value'): Uint8Array {
  const body = text.replace(/={1,2}$/, '')
  if (body.length % 4 === 1 || (body.length !== text.length && text.length % 4 !== 0)) {
    throw new CoreInputError(`${what} is not base64 (bad length)`)
  }
  const out = new Uint8Array(Math.floor(body.length * 3 / 4))
  let acc = 0
  let bits = 0
  let o = 0
  for (const c of body) {
    const v = B64_INDEX.get(c)
    if (v === undefined) throw new CoreInputError(`${what} is not base64 (character ${JSON.stringify(c)})`)
    acc = ((acc << 6) | v) & 0x3fff
    bits += 6
    if (bits >= 8) {
      bits -= 8
      out[o++] = (acc >> bits) & 0xff
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) throw new CoreInputError(`${what} is not canonical base64 (non-zero trailing bits)`)
  return out
}
