/**
 * The signature schemes drand chains use, as named in a chain's `schemeID`. Each one fixes the
 * curve, which group holds the signature and which the public key, how the signed message is
 * derived from the round, and the hash-to-curve domain separation tag.
 */
export const SCHEME_IDS = [
  'pedersen-bls-chained',
  'pedersen-bls-unchained',
  'bls-unchained-on-g1',
  'bls-unchained-g1-rfc9380',
  'bls-bn254-unchained-on-g1'
] as const

export type SchemeId = typeof SCHEME_IDS[number]

export interface SchemeSpec {
  id: SchemeId
  curve: 'bls12-381' | 'bn254'
  /** The group the signature lives in; the public key is in the other one. */
  signatureGroup: 'G1' | 'G2'
  /** Encoded sizes as drand serialises them (compressed on BLS12-381, uncompressed on BN254). */
  signatureBytes: number
  publicKeyBytes: number
  /** Chained: the message also covers the previous round's signature. */
  chained: boolean
  /** Hash used to turn the round (and previous signature) into the signed message. */
  messageHash: 'sha256' | 'keccak256'
  /** Domain separation tag of the hash-to-curve step. */
  dst: string
}

const G2_DST = 'BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_NUL_'
const G1_DST = 'BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_'
const BN254_DST = 'BLS_SIG_BN254G1_XMD:KECCAK-256_SVDW_RO_NUL_'

export const SCHEMES: Readonly<Record<SchemeId, SchemeSpec>> = Object.freeze({
  'pedersen-bls-chained': {
    id: 'pedersen-bls-chained', curve: 'bls12-381', signatureGroup: 'G2', signatureBytes: 96, publicKeyBytes: 48,
    chained: true, messageHash: 'sha256', dst: G2_DST
  },
  'pedersen-bls-unchained': {
    id: 'pedersen-bls-unchained', curve: 'bls12-381', signatureGroup: 'G2', signatureBytes: 96, publicKeyBytes: 48,
    chained: false, messageHash: 'sha256', dst: G2_DST
  },
  // drand's first G1 chains hashed to G1 with the G2 tag; kept as is because their signatures need it.
  'bls-unchained-on-g1': {
    id: 'bls-unchained-on-g1', curve: 'bls12-381', signatureGroup: 'G1', signatureBytes: 48, publicKeyBytes: 96,
    chained: false, messageHash: 'sha256', dst: G2_DST
  },
  'bls-unchained-g1-rfc9380': {
    id: 'bls-unchained-g1-rfc9380', curve: 'bls12-381', signatureGroup: 'G1', signatureBytes: 48, publicKeyBytes: 96,
    chained: false, messageHash: 'sha256', dst: G1_DST
  },
  'bls-bn254-unchained-on-g1': {
    id: 'bls-bn254-unchained-on-g1', curve: 'bn254', signatureGroup: 'G1', signatureBytes: 64, publicKeyBytes: 128,
    chained: false, messageHash: 'keccak256', dst: BN254_DST
  }
})

export function isSchemeId (value: unknown): value is SchemeId {
  return typeof value === 'string' && (SCHEME_IDS as readonly string[]).includes(value)
}
