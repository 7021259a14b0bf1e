/**
 * The group of blind-v1: ristretto255 (RFC 9496) from @noble/curves, its scalars mod ℓ, and the
 * fixed encodings every document and transcript uses. No curve or field arithmetic is written
 * here: points and scalars only pass through noble's API.
 *
 * - a scalar is 32 bytes little-endian, strictly below ℓ, written as 64 lowercase hex characters;
 * - a point is its canonical 32-byte ristretto255 encoding, 64 lowercase hex characters (the
 *   identity is 32 zero bytes); a non-canonical encoding is refused.
 */
import { ristretto255, ristretto255_hasher } from '@noble/curves/ed25519.js'
import { pippenger } from '@noble/curves/abstract/curve.js'
import { bytesToNumberLE, numberToBytesLE } from '@noble/curves/utils.js'
import { fromHex, toHex, utf8 } from '../bytes.js'
import { CoreInputError } from '../errors.js'

export const RistrettoPoint = ristretto255.Point
export type Point = InstanceType<typeof RistrettoPoint>

/** ℓ, the prime order of the group. */
export const ORDER: bigint = RistrettoPoint.Fn.ORDER
export const G: Point = RistrettoPoint.BASE
export const IDENTITY: Point = RistrettoPoint.ZERO

const HEX64 = /^[0-9a-f]{64}$/

export function mod (x: bigint): bigint {
  const r = x % ORDER
  return r < 0n ? r + ORDER : r
}

export function scalarToBytes (x: bigint): Uint8Array {
  return numberToBytesLE(mod(x), 32)
}

export function scalarToHex (x: bigint): string {
  return toHex(scalarToBytes(x))
}

/** A 32-byte little-endian integer mod ℓ, reduced (used for hashes, not for decoding documents). */
export function scalarFromBytesReduced (bytes: Uint8Array): bigint {
  return mod(bytesToNumberLE(bytes))
}

/** A scalar from a document: exactly 64 lowercase hex characters, below ℓ. */
export function scalarFromHex (hex: unknown, what: string): bigint {
  if (typeof hex !== 'string' || !HEX64.test(hex)) throw new CoreInputError(`${what} must be a scalar: 64 lowercase hex characters`)
  const x = bytesToNumberLE(fromHex(hex))
  if (x >= ORDER) throw new CoreInputError(`${what} is not a canonical scalar (not below the group order)`)
  return x
}

export function pointToBytes (p: Point): Uint8Array {
  return p.toBytes()
}

export function pointToHex (p: Point): string {
  return toHex(p.toBytes())
}

/** A point from a document: 64 lowercase hex characters, a canonical ristretto255 encoding. */
export function pointFromHex (hex: unknown, what: string): Point {
  if (typeof hex !== 'string' || !HEX64.test(hex)) throw new CoreInputError(`${what} must be a group element: 64 lowercase hex characters`)
  try {
    return RistrettoPoint.fromBytes(fromHex(hex))
  } catch {
    throw new CoreInputError(`${what} is not a canonical ristretto255 encoding`)
  }
}

/** x·P for a secret x (noble's constant-time ladder); 0 and the identity are allowed. */
export function mulSecret (p: Point, x: bigint): Point {
  const s = mod(x)
  if (s === 0n || p.is0()) return IDENTITY
  return p.multiply(s)
}

/** x·P for public values (faster, variable time). */
export function mulPublic (p: Point, x: bigint): Point {
  return p.multiplyUnsafe(mod(x))
}

/** Σ xᵢ·Pᵢ over public values (Pippenger). */
export function msm (points: readonly Point[], scalars: readonly bigint[]): Point {
  if (points.length === 0) return IDENTITY
  return pippenger(RistrettoPoint, [...points], scalars.map(mod))
}

export function sumPoints (points: readonly Point[]): Point {
  let acc = IDENTITY
  for (const p of points) acc = acc.add(p)
  return acc
}

const CARD_DST = 'fairdeal/blind-v1/card'
const GENERATOR_DST = 'fairdeal/blind-v1/generator'

/** hash_to_ristretto255 (RFC 9380 expand_message_xmd, SHA-512) of a UTF-8 text under a DST. */
function hashToGroup (text: string, dst: string): Point {
  return ristretto255_hasher.hashToCurve(utf8(text), { DST: dst }) as unknown as Point
}

const cardPoints = new Map<string, Point>()
/** The group element standing for a card code: hash_to_ristretto255(code, "fairdeal/blind-v1/card"). */
export function cardPoint (code: string): Point {
  let p = cardPoints.get(code)
  if (p === undefined) { p = hashToGroup(code, CARD_DST); cardPoints.set(code, p) }
  return p
}

const generators = new Map<string, Point>()
/** An independent generator named `name`: hash_to_ristretto255(name, "fairdeal/blind-v1/generator"). */
export function generator (name: string): Point {
  let p = generators.get(name)
  if (p === undefined) { p = hashToGroup(name, GENERATOR_DST); generators.set(name, p) }
  return p
}

/** The shuffle proof's generators: h (named "h") and h₀ … h_{n−1} (named "0" … "n−1"). */
export function shuffleGenerators (n: number): { h: Point, hs: Point[] } {
  return { h: generator('h'), hs: Array.from({ length: n }, (_, i) => generator(String(i))) }
}
