/**
 * The group of blind-v1: ristretto255 (RFC 9496), its scalars mod ℓ, and the fixed encodings every
 * document and transcript uses. No curve or field arithmetic is written here: points and scalars
 * only pass through @noble/curves' API and, once loaded, libsodium's (the engine below).
 *
 * - a scalar is 32 bytes little-endian, strictly below ℓ, written as 64 lowercase hex characters;
 * - a point is its canonical 32-byte ristretto255 encoding, 64 lowercase hex characters (the
 *   identity is 32 zero bytes); a non-canonical encoding is refused.
 */
import { ristretto255, ristretto255_hasher } from '@noble/curves/ed25519.js'
import sodium from 'libsodium-wrappers-sumo'
import { pippenger } from '@noble/curves/abstract/curve.js'
import { bytesToNumberLE, numberToBytesLE } from '@noble/curves/utils.js'
import { expand_message_xmd } from '@noble/curves/abstract/hash-to-curve.js'
import { sha512 } from '@noble/hashes/sha2.js'
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

/**
 * The engine. Secret-scalar multiplications run on libsodium's ristretto255 (WebAssembly, constant
 * time, ~5-8x noble's ladder) once its module has loaded; until then, and where libsodium cannot
 * load, on noble's. Both give the same group element for every scalar, so documents, proofs and the
 * known-answer vectors are byte-identical whichever engine ran. libsodium loads asynchronously:
 * loading starts when this module is imported, and `blindEngineReady()` resolves once it is done
 * (the process entry src/polyfill.ts and the web pages await it before any hand; a caller that
 * does not simply runs on noble until then). Public-scalar work (verifiers' multi-scalar
 * multiplications) stays on noble's Pippenger, which libsodium does not have.
 */
let engine: typeof sodium | null = null
const engineLoading: Promise<void> = sodium.ready.then(() => { engine = sodium }, () => { /* noble stays the engine */ })

/** Resolves once the fastest engine is loaded (or failed to load: noble stays). Never rejects. */
export function blindEngineReady (): Promise<void> {
  return engineLoading
}

/** Which engine multiplies secret scalars now: 'libsodium' or 'noble'. */
export function blindEngine (): 'libsodium' | 'noble' {
  return engine === null ? 'noble' : 'libsodium'
}

/** Runs `f` with the secret-scalar engine forced to noble (benchmarks compare the two engines). */
export function withNobleEngine<T> (f: () => T): T {
  const saved = engine
  engine = null
  try { return f() } finally { engine = saved }
}

/**
 * Encodings already known, by point: a point decoded from a document or produced by libsodium
 * carries its 32 bytes, so encoding it again (a field inversion and square root in noble) is free.
 */
const encodings = new WeakMap<Point, Uint8Array>()

function remember (p: Point, bytes: Uint8Array): Point {
  encodings.set(p, bytes)
  return p
}

/** A lazily decoded point's own fields (see lazyPoint). */
interface Lazy { lazyBytes: Uint8Array, lazyEp?: unknown }

/**
 * The prototype of lazily decoded points: noble's ristretto point keeps its Edwards representative
 * in the public field `ep`, which every noble method reads; here `ep` is a getter that decodes the
 * point's bytes with noble the first time it is read.
 */
const LAZY: object = Object.create(RistrettoPoint.prototype, {
  ep: {
    get (this: Lazy): unknown {
      return (this.lazyEp ??= (RistrettoPoint.fromBytes(this.lazyBytes) as unknown as { ep: unknown }).ep)
    }
  }
})

/**
 * The point of a canonical encoding already known to be valid (checked by libsodium, or produced
 * by it), as a noble point whose coordinates are decoded only when noble arithmetic first reads
 * them. Decoding is a field inverse square root in noble (~0.13 ms), the largest cost of a
 * verification once the products run on libsodium, and most points never reach noble: they are
 * hashed and multiplied as bytes. Such a point is a `RistrettoPoint` (instanceof holds: its
 * prototype chain is noble's) and behaves as one.
 */
function lazyPoint (bytes: Uint8Array): Point {
  const p = Object.create(LAZY) as Lazy
  p.lazyBytes = bytes
  return p as unknown as Point
}

/** The point's encoding when known (not a copy: never modified), else undefined. */
function knownBytes (p: Point): Uint8Array | undefined {
  return (p as unknown as Partial<Lazy>).lazyBytes ?? encodings.get(p)
}

/** The point's encoding, computed once (not a copy: never modified). */
function bytesOf (p: Point): Uint8Array {
  let b = knownBytes(p)
  if (b === undefined) { b = p.toBytes(); encodings.set(p, b) }
  return b
}

/** The point of encoding `bytes` produced by the engine (valid by construction). */
function fromEngine (bytes: Uint8Array): Point {
  return engine === null ? remember(RistrettoPoint.fromBytes(bytes), bytes) : lazyPoint(bytes)
}

/** Whether p is the identity, from its encoding when known (no decode). */
function isZeroPoint (p: Point): boolean {
  const b = knownBytes(p)
  return b !== undefined ? b.every(v => v === 0) : p.is0()
}

/** Whether two points are the same group element: their canonical encodings are equal. */
export function samePoint (p: Point, q: Point): boolean {
  if (p === q) return true
  const a = knownBytes(p); const b = knownBytes(q)
  if (a === undefined || b === undefined) return p.equals(q)
  for (let i = 0; i < 32; i++) if (a[i] !== b[i]) return false
  return true
}

export function pointToBytes (p: Point): Uint8Array {
  return bytesOf(p).slice()
}

/** Writes the encodings of `points` into `out` from `offset` (32 bytes each), with no copy between. */
export function writePoints (points: readonly Point[], out: Uint8Array, offset = 0): void {
  for (let i = 0; i < points.length; i++) out.set(bytesOf(points[i]), offset + 32 * i)
}

/** The encodings of `points`, concatenated. */
export function pointsToBytes (points: readonly Point[]): Uint8Array {
  const out = new Uint8Array(32 * points.length)
  writePoints(points, out)
  return out
}

export function pointToHex (p: Point): string {
  return toHex(pointToBytes(p))
}

/**
 * Points decoded lately, by their hex (noble's decode is a field square root, the largest cost of
 * verifying a receipt once the multiplications are on libsodium; each deck is read as one seat's
 * output and the next one's input, and by every party a node hosts). Points are immutable. At
 * 8,192 entries (a tarot hand reads about 1,600 distinct points) the map starts afresh.
 */
const decoded = new Map<string, Point>()

/** Forgets the decoded points: benchmarks timing a cold verification call it first. */
export function forgetDecodedPoints (): void {
  decoded.clear()
}

/** A point from a document: 64 lowercase hex characters, a canonical ristretto255 encoding. */
export function pointFromHex (hex: unknown, what: string): Point {
  if (typeof hex !== 'string' || !HEX64.test(hex)) throw new CoreInputError(`${what} must be a group element: 64 lowercase hex characters`)
  const known = decoded.get(hex)
  if (known !== undefined) return known
  try {
    const bytes = fromHex(hex)
    let p: Point
    if (engine !== null) {
      // libsodium's validity check is RFC 9496's decode (canonical, non-negative s, a square root),
      // ~10x faster than noble's; the coordinates wait until noble needs them.
      if (!engine.crypto_core_ristretto255_is_valid_point(bytes)) throw new CoreInputError('not canonical')
      p = lazyPoint(bytes)
    } else {
      p = remember(RistrettoPoint.fromBytes(bytes), bytes)
    }
    if (decoded.size >= 8192) decoded.clear()
    decoded.set(hex, p)
    return p
  } catch {
    throw new CoreInputError(`${what} is not a canonical ristretto255 encoding`)
  }
}

/**
 * x·P for a secret x, constant time in x; 0 and the identity are allowed and give the identity.
 * On libsodium: crypto_scalarmult_ristretto255 clears bit 255 of the scalar, which no reduced
 * scalar has set (ℓ < 2^253), and throws when the result is the identity, which in a group of
 * prime order happens only for x ≡ 0 or P = identity, both answered before the call (the catch
 * answers the identity too, as noble does). The fixed base G uses libsodium's base-point tables.
 */
export function mulSecret (p: Point, x: bigint): Point {
  const s = mod(x)
  if (s === 0n || isZeroPoint(p)) return IDENTITY
  if (engine === null) return p.multiply(s)
  const sb = numberToBytesLE(s, 32)
  let out: Uint8Array
  try {
    out = p === G ? engine.crypto_scalarmult_ristretto255_base(sb) : engine.crypto_scalarmult_ristretto255(sb, pointToBytes(p))
  } catch {
    return IDENTITY
  } finally {
    sb.fill(0)
  }
  return lazyPoint(out)
}

/** x·P for public values: libsodium once loaded (faster than noble's variable-time wNAF), noble's otherwise. */
export function mulPublic (p: Point, x: bigint): Point {
  if (engine !== null) return mulSecret(p, x)
  return p.multiplyUnsafe(mod(x))
}

/** A point, or its canonical encoding (what a sum kept in encoded form hands on). */
export type PointOrEncoding = Point | Uint8Array

function encodingOf (p: PointOrEncoding): Uint8Array {
  return p instanceof Uint8Array ? p : bytesOf(p)
}

function isIdentity (p: PointOrEncoding): boolean {
  return p instanceof Uint8Array ? p.every(v => v === 0) : isZeroPoint(p)
}

/**
 * The encoding of Σ xᵢ·Pᵢ + Σ Qⱼ, what a Fiat–Shamir transcript hashes. On libsodium every
 * product and sum stays in encoded form (no decode to noble's coordinates between them); terms
 * with x ≡ 0 or Pᵢ = identity are skipped (libsodium refuses an identity result), and an empty sum
 * is the identity's encoding. Same bytes as noble's sum, which runs otherwise. The products are
 * libsodium's constant-time multiplication, so a prover may pass secret scalars: the only branch
 * on them is x ≡ 0, which a uniformly drawn secret is with probability 2^-252.
 */
export function combineToBytes (terms: ReadonlyArray<readonly [PointOrEncoding, bigint]>, plus: readonly PointOrEncoding[] = []): Uint8Array {
  return combine(terms, plus, mulPublic)
}

/** combineToBytes as a point (decoded by noble only if noble arithmetic ever reads it). */
export function combineToPoint (terms: ReadonlyArray<readonly [PointOrEncoding, bigint]>, plus: readonly PointOrEncoding[] = []): Point {
  return fromEngine(combine(terms, plus, mulPublic))
}

/** a − b as a point (no decode on libsodium). */
export function differenceToPoint (a: PointOrEncoding, b: PointOrEncoding): Point {
  return fromEngine(differenceToBytes(a, b))
}

/** The encoding of a − b. */
export function differenceToBytes (a: PointOrEncoding, b: PointOrEncoding): Uint8Array {
  if (engine === null) {
    const asPoint = (p: PointOrEncoding): Point => p instanceof Uint8Array ? RistrettoPoint.fromBytes(p) : p
    return pointToBytes(asPoint(a).subtract(asPoint(b)))
  }
  if (isIdentity(b)) return encodingOf(a).slice()
  return engine.crypto_core_ristretto255_sub(encodingOf(a), encodingOf(b))
}

/** combineToBytes for secret scalars: on noble, its constant-time ladder (mulSecret) instead of wNAF. */
export function combineSecretToBytes (terms: ReadonlyArray<readonly [PointOrEncoding, bigint]>, plus: readonly PointOrEncoding[] = []): Uint8Array {
  return combine(terms, plus, mulSecret)
}

/** combineSecretToBytes as a point (a re-encryption: no decode on libsodium). */
export function combineSecretToPoint (terms: ReadonlyArray<readonly [PointOrEncoding, bigint]>, plus: readonly PointOrEncoding[] = []): Point {
  return fromEngine(combine(terms, plus, mulSecret))
}

function combine (terms: ReadonlyArray<readonly [PointOrEncoding, bigint]>, plus: readonly PointOrEncoding[], nobleMul: (p: Point, x: bigint) => Point): Uint8Array {
  if (engine === null) {
    const asPoint = (p: PointOrEncoding): Point => p instanceof Uint8Array ? RistrettoPoint.fromBytes(p) : p
    return pointToBytes(sumPoints([...terms.map(([p, x]) => nobleMul(asPoint(p), x)), ...plus.map(asPoint)]))
  }
  const e = engine
  let acc: Uint8Array | null = null
  for (const [p, x] of terms) {
    const s = mod(x)
    if (s === 0n || isIdentity(p)) continue
    const sb = numberToBytesLE(s, 32)
    const prod = p === G ? e.crypto_scalarmult_ristretto255_base(sb) : e.crypto_scalarmult_ristretto255(sb, encodingOf(p))
    sb.fill(0)
    acc = acc === null ? prod : addEncoded(e, acc, prod)
  }
  for (const q of plus) acc = acc === null ? encodingOf(q) : addEncoded(e, acc, encodingOf(q))
  return acc ?? pointToBytes(IDENTITY)
}

/** a + b on encodings; a sum that is the identity (b = −a) is its all-zero encoding. */
function addEncoded (e: typeof sodium, a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.every(v => v === 0)) return b
  if (b.every(v => v === 0)) return a
  return e.crypto_core_ristretto255_add(a, b)
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

/**
 * hash_to_ristretto255 (RFC 9380 expand_message_xmd, SHA-512) of a UTF-8 text under a DST: the
 * one-way map of RFC 9496 applied to the 64 expanded bytes, libsodium's
 * crypto_core_ristretto255_from_hash once loaded (~50x faster than noble's, which runs otherwise;
 * same point: the vectors check both).
 */
function hashToGroup (text: string, dst: string): Point {
  if (engine === null) return ristretto255_hasher.hashToCurve(utf8(text), { DST: dst }) as unknown as Point
  return lazyPoint(engine.crypto_core_ristretto255_from_hash(expand_message_xmd(utf8(text), utf8(dst), 64, sha512)))
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

const generatorSums = new Map<number, Uint8Array>()
/** The encoding of h₀ + … + h_{n−1} (the verifier's C̄ subtracts it), remembered per n. */
export function shuffleGeneratorSum (n: number): Uint8Array {
  let s = generatorSums.get(n)
  if (s === undefined) { s = combineToBytes([], shuffleGenerators(n).hs); generatorSums.set(n, s) }
  return s
}
