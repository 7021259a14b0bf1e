import { bls12_381 } from '@noble/curves/bls12-381.js'
import { CoreInputError } from '../errors.js'

// drand's BLS12-381 schemes, on @noble/curves: signatures on G2 with keys on G1 ("long"), or
// signatures on G1 with keys on G2 ("short"). Points are in the standard compressed encoding.

type G1Point = InstanceType<typeof bls12_381.G1.Point>
type G2Point = InstanceType<typeof bls12_381.G2.Point>

function decode<P extends { is0: () => boolean }> (decoder: (bytes: Uint8Array) => P, bytes: Uint8Array, what: string, group: string): P {
  let point: P
  try {
    point = decoder(bytes)
  } catch (err) {
    throw new CoreInputError(`${what} is not a valid BLS12-381 ${group} point (${(err as Error).message})`)
  }
  if (point.is0()) throw new CoreInputError(`${what} is the point at infinity`)
  return point
}

/** fromBytes checks the encoding, that the point is on the curve and in the prime-order subgroup. */
export function bls12381G1FromBytes (bytes: Uint8Array, what: string): G1Point {
  return decode(b => bls12_381.G1.Point.fromBytes(b), bytes, what, 'G1')
}

export function bls12381G2FromBytes (bytes: Uint8Array, what: string): G2Point {
  return decode(b => bls12_381.G2.Point.fromBytes(b), bytes, what, 'G2')
}

/** Signature on G2, public key on G1 (drand's pedersen-bls-* schemes). */
export function verifySignatureOnG2 (signature: G2Point, message: Uint8Array, publicKey: G1Point, dst: string): boolean {
  const hashed = bls12_381.longSignatures.hash(message, dst)
  return bls12_381.longSignatures.verify(signature, hashed, publicKey)
}

/** Signature on G1, public key on G2 (bls-unchained-on-g1, bls-unchained-g1-rfc9380). */
export function verifySignatureOnG1 (signature: G1Point, message: Uint8Array, publicKey: G2Point, dst: string): boolean {
  const hashed = bls12_381.shortSignatures.hash(message, dst)
  return bls12_381.shortSignatures.verify(signature, hashed, publicKey)
}
