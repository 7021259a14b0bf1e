import { CoreInputError } from '../errors.js'
import { isHex } from '../bytes.js'

/** A drand beacon entry as the v1 HTTP API serves it (`/public/{round}`). */
export interface BeaconEntry {
  round: number
  /** sha256(signature), hex. */
  randomness: string
  signature: string
  /** Only on chained schemes: the signature of round - 1 (the groupHash for round 1). */
  previous_signature?: string
}

/** Generous upper bound on any encoded point drand uses (a BN254 G2 point is 128 bytes). */
const MAX_POINT_BYTES = 256

function hexOf (obj: Record<string, unknown>, key: string, what: string, bytes?: number): string {
  const value = obj[key]
  if (!isHex(value) || value.length === 0 || value.length > MAX_POINT_BYTES * 2 || (bytes !== undefined && value.length !== bytes * 2)) {
    const size = bytes !== undefined ? `${bytes} bytes of ` : ''
    throw new CoreInputError(`${what}: ${key} must be ${size}lowercase hex, got ${JSON.stringify(value === undefined ? undefined : String(value).slice(0, 80))}`)
  }
  return value
}

/**
 * Checks the shape of an entry (not its signature: see verifyBeaconEntry) and returns a copy
 * holding only drand's fields, so unknown fields never reach a receipt.
 */
export function parseBeaconEntry (value: unknown, what = 'beacon entry'): BeaconEntry {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CoreInputError(`${what} must be a JSON object with round, randomness and signature`)
  }
  const obj = value as Record<string, unknown>
  const round = obj.round
  if (typeof round !== 'number' || !Number.isSafeInteger(round) || round < 1) {
    throw new CoreInputError(`${what}: round must be an integer >= 1, got ${JSON.stringify(round)}`)
  }
  const entry: BeaconEntry = {
    round,
    randomness: hexOf(obj, 'randomness', what, 32),
    signature: hexOf(obj, 'signature', what)
  }
  if (obj.previous_signature !== undefined) entry.previous_signature = hexOf(obj, 'previous_signature', what)
  return entry
}
