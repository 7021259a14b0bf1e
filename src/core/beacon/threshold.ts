import { bls12_381 } from '@noble/curves/bls12-381.js'
import { pippenger } from '@noble/curves/abstract/curve.js'
import { CoreInputError } from '../errors.js'
import { concatBytes, fromHex, sha256, toHex, utf8 } from '../bytes.js'
import { bls12381G1FromBytes, bls12381G2FromBytes, g2Lines, verifyHashedOnG1 } from './bls12-381.js'
import { checkRound } from './rounds.js'
import { SCHEMES } from './schemes.js'
import { beaconMessage } from './verify.js'
import type { BeaconEntry } from './entry.js'

// Threshold BLS for drand's `bls-unchained-g1-rfc9380` (quicknet's scheme): secret shares are
// scalars of Fr, public commitments and keys on G2, signatures on G1. Members are numbered 1…n;
// member i holds f(i) of a polynomial f of degree t-1 and f(0) is the group secret nobody holds.
// Every operation is @noble/curves' (field, points, MSM, pairing); nothing here is home-made
// arithmetic beyond Horner and Lagrange coefficients over its Fr.

export type G1Point = InstanceType<typeof bls12_381.G1.Point>
export type G2Point = InstanceType<typeof bls12_381.G2.Point>

const Fr = bls12_381.fields.Fr
const G1 = bls12_381.G1.Point
const G2 = bls12_381.G2.Point
export const GROUP_SCHEME = SCHEMES['bls-unchained-g1-rfc9380']

/** The largest group we accept: drand's League of Entropy is a few dozen members. */
export const MAX_GROUP_MEMBERS = 64

function bytesToBigint (bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt('0x' + toHex(bytes))
}

/**
 * A scalar of Fr from 48 bytes (wide reduction, bias 2^-128): the coefficients of a dealer's
 * polynomial. A zero result (probability 2^-255) is refused rather than used.
 */
export function scalarFromSeed (seed48: Uint8Array): bigint {
  if (seed48.length !== 48) throw new CoreInputError('a scalar seed is 48 bytes')
  const s = Fr.create(bytesToBigint(seed48))
  if (s === 0n) throw new CoreInputError('scalar seed reduces to zero')
  return s
}

export function scalarToHex (s: bigint): string {
  return toHex(Fr.toBytes(s))
}

/** A scalar encoded as 32 big-endian bytes of hex, canonical (below the group order) and non-zero. */
export function scalarFromHex (hex: string, what: string): bigint {
  const bytes = fromHex(hex, what, 32)
  const s = bytesToBigint(bytes)
  if (s >= Fr.ORDER) throw new CoreInputError(`${what} is not below the BLS12-381 group order`)
  if (s === 0n) throw new CoreInputError(`${what} is zero`)
  return s
}

/** A dealer's secret polynomial: coefficients a_0 … a_{t-1}, each from 48 bytes of randomness. */
export function randomPolynomial (threshold: number, random: (n: number) => Uint8Array): bigint[] {
  checkThreshold(threshold, MAX_GROUP_MEMBERS)
  const coefficients: bigint[] = []
  for (let k = 0; k < threshold; k++) coefficients.push(scalarFromSeed(random(48)))
  return coefficients
}

export function checkThreshold (threshold: number, members: number): void {
  if (!Number.isSafeInteger(members) || members < 1 || members > MAX_GROUP_MEMBERS) {
    throw new CoreInputError(`a group has 1 to ${MAX_GROUP_MEMBERS} members, got ${String(members)}`)
  }
  if (!Number.isSafeInteger(threshold) || threshold < 1 || threshold > members) {
    throw new CoreInputError(`threshold must be an integer from 1 to ${members}, got ${String(threshold)}`)
  }
}

/** f(x) by Horner's rule in Fr. */
export function evaluatePolynomial (coefficients: readonly bigint[], x: number): bigint {
  let acc = 0n
  const X = Fr.create(BigInt(x))
  for (let k = coefficients.length - 1; k >= 0; k--) acc = Fr.add(Fr.mul(acc, X), coefficients[k])
  return acc
}

/** True when secret·G2 is `publicKey`. */
export function publicKeyMatches (secret: bigint, publicKey: G2Point): boolean {
  return secret !== 0n && secret < Fr.ORDER && G2.BASE.multiply(secret).equals(publicKey)
}

/** Feldman commitments C_k = a_k·G2, compressed (96 bytes each). */
export function commitPolynomial (coefficients: readonly bigint[]): G2Point[] {
  return coefficients.map(a => G2.BASE.multiply(a))
}

/**
 * Σ_k C_k · x^k: the public image f(x)·G2 of a committed polynomial. Horner's rule with the small
 * public index x (at most MAX_GROUP_MEMBERS): t short multiplications, far cheaper than an MSM
 * with full-width scalars x^k (measured: ~1 ms against ~70 ms for t = 3).
 */
export function evaluateCommitments (commitments: readonly G2Point[], x: number): G2Point {
  if (!Number.isSafeInteger(x) || x < 1) throw new CoreInputError(`member index must be >= 1, got ${String(x)}`)
  const X = BigInt(x)
  let acc = G2.ZERO
  for (let k = commitments.length - 1; k >= 0; k--) acc = (acc.is0() ? acc : acc.multiplyUnsafe(X)).add(commitments[k])
  return acc
}

/** True when `share`·G2 = Σ C_k·index^k: the share dealt to `index` lies on the committed polynomial. */
export function shareMatchesCommitments (commitments: readonly G2Point[], index: number, share: bigint): boolean {
  return publicKeyMatches(share, evaluateCommitments(commitments, index))
}

// Decoding a G2 point (square root in Fp2, subgroup check) costs ~10 ms here, and a DKG decodes
// the same few commitments many times (checking shares, qualifying, verifying): decoded once.
const decodedG2 = new Map<string, G2Point>()
const MAX_DECODED = 4096

/** Decodes a list of compressed G2 commitments; throws CoreInputError naming the bad one. */
export function commitmentsFromHex (hexes: readonly string[], what: string): G2Point[] {
  return hexes.map((h, k) => g2FromHex(h, `${what}[${k}]`))
}

/** Coefficient-wise sum of several dealers' commitments: the commitments of the summed polynomial. */
export function sumCommitments (all: ReadonlyArray<readonly G2Point[]>): G2Point[] {
  if (all.length === 0) throw new CoreInputError('no commitments to sum')
  const t = all[0].length
  const out: G2Point[] = []
  for (let k = 0; k < t; k++) {
    let acc = G2.ZERO
    for (const c of all) {
      if (c.length !== t) throw new CoreInputError('commitments of different degrees')
      acc = acc.add(c[k])
    }
    out.push(acc)
  }
  return out
}

/**
 * Lagrange coefficients at 0 for the given distinct indices: λ_i = Π_{j≠i} j / (j − i) in Fr.
 * Σ λ_i·f(i) = f(0) for every f of degree < indices.length.
 */
export function lagrangeAtZero (indices: readonly number[]): bigint[] {
  if (new Set(indices).size !== indices.length) throw new CoreInputError('Lagrange interpolation needs distinct indices')
  const xs = indices.map(i => {
    if (!Number.isSafeInteger(i) || i < 1) throw new CoreInputError(`member index must be >= 1, got ${String(i)}`)
    return Fr.create(BigInt(i))
  })
  const num: bigint[] = []
  const den: bigint[] = []
  for (let a = 0; a < xs.length; a++) {
    let n = 1n
    let d = 1n
    for (let b = 0; b < xs.length; b++) {
      if (a === b) continue
      n = Fr.mul(n, xs[b])
      d = Fr.mul(d, Fr.sub(xs[b], xs[a]))
    }
    num.push(n)
    den.push(d)
  }
  const inv = Fr.invertBatch(den)
  return num.map((n, a) => Fr.mul(n, inv[a]))
}

const PIPPENGER_FROM = 12

/** Recovers f(0)·P from t points f(i)·P by Lagrange interpolation at 0 (one t-term MSM). */
export function recoverG1 (points: ReadonlyArray<{ index: number, point: G1Point }>): G1Point {
  if (points.length === 0) throw new CoreInputError('nothing to recover from')
  const lambdas = lagrangeAtZero(points.map(p => p.index))
  // noble's Pippenger only pays off from a dozen points on (measured here: 3 points ~6 ms against
  // ~2 ms for plain multiplications); below that, the sum of products. Inputs are public.
  if (points.length >= PIPPENGER_FROM) return pippenger(G1, points.map(p => p.point), lambdas)
  return points.reduce((acc, p, i) => acc.add(p.point.multiplyUnsafe(lambdas[i])), G1.ZERO)
}

/** The point a round's message hashes to (quicknet's DST). Computed once per round and reused. */
export function hashRound (round: number): G1Point {
  checkRound(round)
  return bls12_381.shortSignatures.hash(beaconMessage(GROUP_SCHEME, round), GROUP_SCHEME.dst)
}

/** A member's partial signature of a round: its share times the round's point on G1. */
export function partialSign (share: bigint, hashed: G1Point): G1Point {
  return hashed.multiply(share)
}

/** The pairing check e(sig, G2) = e(H(m), key): one signature (partial or recovered) against one key. */
export const verifyOnG1: (signature: G1Point, hashed: G1Point, publicKey: G2Point) => boolean = verifyHashedOnG1

/** e(H(m), key) in GT: one side of a signature check, computable before the signature exists. */
export type PairingTarget = ReturnType<typeof bls12_381.pairing>

/**
 * The pairing target of a message's point under a key (roundTarget ahead, verifyOnTarget when the
 * signature comes): noble's pairing, the same checks, Miller loop and final exponentiation, with the
 * key's line coefficients computed once per key (g2Lines) instead of at every round.
 */
export function pairingTarget (hashed: G1Point, publicKey: G2Point): PairingTarget {
  if (hashed.is0() || publicKey.is0()) throw new CoreInputError('a pairing of the point at infinity')
  hashed.assertValidity()
  const { x, y } = hashed.toAffine()
  return bls12_381.fields.Fp12.finalExponentiate(bls12_381.millerLoopBatch([[g2Lines(publicKey), x, y]]))
}

/**
 * e(sig, G2) = target: the same check as verifyOnG1 with its message side computed ahead, so that
 * only one pairing is left once the signature is there (a round's latency is that pairing's).
 */
export function verifyOnTarget (signature: G1Point, target: PairingTarget): boolean {
  try {
    // noble's pairing, with the generator's line coefficients computed once (its pairing computes
    // them for every call): the same checks, Miller loop and final exponentiation, less work.
    if (signature.is0()) return false
    signature.assertValidity()
    const { x, y } = signature.toAffine()
    const Fp12 = bls12_381.fields.Fp12
    return Fp12.eql(Fp12.finalExponentiate(bls12_381.millerLoopBatch([[g2Lines(bls12_381.G2.Point.BASE), x, y]])), target)
  } catch {
    return false
  }
}

export function g1FromHex (hex: string, what: string): G1Point {
  return bls12381G1FromBytes(fromHex(hex, what, 48), what)
}

export function g2FromHex (hex: string, what: string): G2Point {
  let p = decodedG2.get(hex)
  if (p === undefined) {
    p = bls12381G2FromBytes(fromHex(hex, what, 96), what)
    if (decodedG2.size >= MAX_DECODED) decodedG2.clear()
    decodedG2.set(hex, p)
  }
  return p
}

export function pointHex (p: G1Point | G2Point): string {
  return toHex(p.toBytes())
}

/** A drand entry from a recovered group signature: randomness = sha256(signature). */
export function entryFromSignature (round: number, signature: G1Point): BeaconEntry {
  const bytes = signature.toBytes()
  return { round, randomness: toHex(sha256(bytes)), signature: toHex(bytes) }
}

/** Domain-separated sha256 for the group's hashes (session ids, transcript digests). */
export function groupDigest (tag: string, bytes: Uint8Array): string {
  return toHex(sha256(concatBytes(utf8(`fairdeal/beacon-group/v1/${tag}\n`), bytes)))
}
