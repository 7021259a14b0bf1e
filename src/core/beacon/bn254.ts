import { bn254 } from '@noble/curves/bn254.js'
import { hash_to_field } from '@noble/curves/abstract/hash-to-curve.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { CoreInputError } from '../errors.js'

// drand's evmnet signs on BN254 G1 with a hash-to-curve that @noble/curves does not ship for this
// curve: RFC 9380 expand_message_xmd over keccak-256, then the Shallue–van de Woestijne map (the
// straight-line version of RFC 9380 appendix F.1). Points use kyber's uncompressed encoding.

const { Fp, Fp2, Fp12 } = bn254.fields
type G1Point = InstanceType<typeof bn254.G1.Point>
type G2Point = InstanceType<typeof bn254.G2.Point>

const FIELD_BYTES = 32

function fieldElement (bytes: Uint8Array, what: string): bigint {
  let n = 0n
  for (const b of bytes) n = (n << 8n) | BigInt(b)
  if (n >= Fp.ORDER) throw new CoreInputError(`${what} has a coordinate outside the BN254 base field`)
  return n
}

function isAllZero (bytes: Uint8Array): boolean {
  for (const b of bytes) if (b !== 0) return false
  return true
}

/** A BN254 G1 point from kyber's 64-byte encoding x ‖ y (big-endian); rejects infinity. */
export function bn254G1FromBytes (bytes: Uint8Array, what: string): G1Point {
  if (bytes.length !== 2 * FIELD_BYTES) throw new CoreInputError(`${what} must be ${2 * FIELD_BYTES} bytes (uncompressed BN254 G1 point), got ${bytes.length}`)
  if (isAllZero(bytes)) throw new CoreInputError(`${what} is the point at infinity`)
  const x = fieldElement(bytes.subarray(0, 32), what)
  const y = fieldElement(bytes.subarray(32, 64), what)
  const point = bn254.G1.Point.fromAffine({ x, y })
  try { point.assertValidity() } catch { throw new CoreInputError(`${what} is not a point of the BN254 G1 group`) }
  return point
}

/**
 * A BN254 G2 point from kyber's 128-byte encoding: x.im ‖ x.re ‖ y.im ‖ y.re (big-endian);
 * rejects infinity and points outside the prime-order subgroup.
 */
export function bn254G2FromBytes (bytes: Uint8Array, what: string): G2Point {
  if (bytes.length !== 4 * FIELD_BYTES) throw new CoreInputError(`${what} must be ${4 * FIELD_BYTES} bytes (uncompressed BN254 G2 point), got ${bytes.length}`)
  if (isAllZero(bytes)) throw new CoreInputError(`${what} is the point at infinity`)
  const part = (i: number): bigint => fieldElement(bytes.subarray(i * 32, i * 32 + 32), what)
  const x = Fp2.create({ c0: part(1), c1: part(0) })
  const y = Fp2.create({ c0: part(3), c1: part(2) })
  const point = bn254.G2.Point.fromAffine({ x, y })
  try { point.assertValidity() } catch { throw new CoreInputError(`${what} is not a point of the BN254 G2 group`) }
  return point
}

// SVDW constants for E: y² = x³ + 3 with Z = 1 (A = 0, B = 3), precomputed once.
const B = 3n
const Z = 1n
const g = (x: bigint): bigint => Fp.add(Fp.mul(Fp.mul(x, x), x), B)
const C1 = g(Z)
const C2 = Fp.div(Fp.neg(Z), 2n)
const THREE_Z2 = Fp.mul(3n, Fp.mul(Z, Z))
const C3 = (() => {
  const root = Fp.sqrt(Fp.mul(Fp.neg(C1), THREE_Z2))
  // RFC 9380 fixes the root with sgn0(C3) = 0.
  return Fp.isOdd!(root) ? Fp.neg(root) : root
})()
const C4 = Fp.div(Fp.mul(4n, Fp.neg(C1)), THREE_Z2)

function isSquare (v: bigint): boolean {
  const l = Fp.pow(v, (Fp.ORDER - 1n) / 2n)
  return Fp.eql(l, Fp.ONE) || Fp.is0(l)
}

function mapToCurveSvdw (u: bigint): { x: bigint, y: bigint } {
  let tv1 = Fp.mul(Fp.sqr(u), C1)
  const tv2 = Fp.add(Fp.ONE, tv1)
  tv1 = Fp.sub(Fp.ONE, tv1)
  const tv3 = Fp.inv(Fp.mul(tv1, tv2))
  const tv4 = Fp.mul(Fp.mul(Fp.mul(u, tv1), tv3), C3)
  const x1 = Fp.sub(C2, tv4)
  const e1 = isSquare(g(x1))
  const x2 = Fp.add(C2, tv4)
  const e2 = isSquare(g(x2)) && !e1
  let x3 = Fp.sqr(Fp.mul(Fp.sqr(tv2), tv3))
  x3 = Fp.add(Fp.mul(x3, C4), Z)
  const x = e1 ? x1 : e2 ? x2 : x3
  let y = Fp.sqrt(g(x))
  if (Fp.isOdd!(u) !== Fp.isOdd!(y)) y = Fp.neg(y)
  return { x, y }
}

/** hash_to_curve (random oracle variant) onto BN254 G1; the cofactor of G1 is 1. */
export function bn254HashToG1 (message: Uint8Array, dst: string): G1Point {
  const [[u0], [u1]] = hash_to_field(message, 2, { DST: dst, p: Fp.ORDER, m: 1, k: 128, expand: 'xmd', hash: keccak_256 })
  const q0 = bn254.G1.Point.fromAffine(mapToCurveSvdw(u0))
  const q1 = bn254.G1.Point.fromAffine(mapToCurveSvdw(u1))
  const point = q0.add(q1)
  point.assertValidity()
  return point
}

/** e(S, G2) == e(H(m), P): a BLS signature on G1 under a public key on G2. */
export function bn254VerifyOnG1 (signature: G1Point, hashedMessage: G1Point, publicKey: G2Point): boolean {
  const product = bn254.pairingBatch([
    { g1: hashedMessage, g2: publicKey.negate() },
    { g1: signature, g2: bn254.G2.Point.BASE }
  ])
  return Fp12.eql(product, Fp12.ONE)
}
