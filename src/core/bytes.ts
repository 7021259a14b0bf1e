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

export function sha256 (data: Uint8Array | string): Uint8Array {
  return nobleSha256(typeof data === 'string' ? utf8(data) : data)
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
  const out = new Uint8Array(hex.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return out
}

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
