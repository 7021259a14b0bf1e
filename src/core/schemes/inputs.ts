import { sha256Hex } from '../bytes.js'
import { CoreInputError } from '../errors.js'
import type { BeaconInput, KeyInputs } from './types.js'

const LONE_SURROGATE = /\p{Cs}/u

/**
 * A secret or nonce is hashed as UTF-8. A lone surrogate has no UTF-8 form (encoders silently turn
 * it into U+FFFD), so two different strings would give one key: refuse it instead.
 */
export function checkText (value: unknown, what: string): string {
  if (typeof value !== 'string') throw new CoreInputError(`${what} must be a string, got ${typeName(value)}`)
  if (LONE_SURROGATE.test(value)) throw new CoreInputError(`${what} is not well-formed Unicode (it holds a lone surrogate)`)
  return value
}

/** Exactly `bytes` bytes of lowercase hex: these fields go into a hashed text, so one spelling only. */
export function checkLowerHex (value: unknown, what: string, bytes: number): string {
  if (typeof value !== 'string' || value.length !== bytes * 2 || !/^[0-9a-f]*$/.test(value)) {
    throw new CoreInputError(`${what} must be ${bytes * 2} lowercase hex characters, got ${preview(value)}`)
  }
  return value
}

/** The key a deck or a roll is drawn from: in these schemes always the 64-hex SHA-256 of the key text. */
export function checkKey (key: unknown): string {
  return checkLowerHex(key, 'key', 32)
}

/** The commitment of the schemes that commit to the secret alone: SHA-256 of its UTF-8 bytes, no salt. */
export function secretCommitment (scheme: string, secret: string, salt?: string): string {
  if (salt !== undefined && salt !== '') throw new CoreInputError(`${scheme} commits to the secret alone (no salt)`)
  return sha256Hex(checkText(secret, `${scheme} secret`))
}

/** `<scheme>|<secret>|<nonce 0>|…|<nonce n−1>`: the key text of the schemes that bind no beacon. */
export function plainKeyText (scheme: string, inputs: KeyInputs, beaconHint = ''): string {
  if (inputs?.beacon !== undefined) throw new CoreInputError(`${scheme} takes no beacon${beaconHint}`)
  const nonces = checkNonces(inputs, scheme)
  return scheme + '|' + inputs.secret + '|' + nonces.join('|')
}

export function checkSeat (value: unknown, seats: number, what: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0 || (value as number) >= seats) {
    throw new CoreInputError(`${what} must be a seat number from 0 to ${seats - 1}, got ${preview(value)}`)
  }
  return value as number
}

export function checkNonces (inputs: KeyInputs, scheme: string): readonly string[] {
  if (inputs === null || typeof inputs !== 'object') throw new CoreInputError(`${scheme} key inputs must be an object`)
  checkText(inputs.secret, `${scheme} secret`)
  if (!Array.isArray(inputs.nonces) || inputs.nonces.length === 0) {
    throw new CoreInputError(`${scheme} needs one nonce per seat (an array of strings), got ${preview(inputs.nonces)}`)
  }
  inputs.nonces.forEach((n, i) => checkText(n, `${scheme} nonce of seat ${i}`))
  return inputs.nonces
}

export function checkBeacon (beacon: unknown, scheme: string): BeaconInput {
  if (beacon === null || typeof beacon !== 'object') throw new CoreInputError(`${scheme} needs a beacon {chainHash, round, randomness}`)
  const b = beacon as Record<string, unknown>
  checkLowerHex(b.chainHash, `${scheme} beacon chain hash`, 32)
  if (!Number.isSafeInteger(b.round) || (b.round as number) < 1) {
    throw new CoreInputError(`${scheme} beacon round must be a positive integer, got ${preview(b.round)}`)
  }
  checkLowerHex(b.randomness, `${scheme} beacon randomness`, 32)
  return b as unknown as BeaconInput
}

/** Seat count for a game: the given one if allowed, or the only one the game has. */
export function resolveSeats (allowed: readonly number[], seats: number | undefined, what: string): number {
  if (seats === undefined) {
    if (allowed.length === 1) return allowed[0]
    throw new CoreInputError(`${what} needs the number of seats (${orList(allowed)})`)
  }
  if (!allowed.includes(seats)) {
    throw new CoreInputError(`${what} is for ${orList(allowed)} seats, got ${preview(seats)}`)
  }
  return seats
}

export function preview (value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 70 ? value.slice(0, 70) + '…' : value)
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value)
  try {
    const s = JSON.stringify(value)
    return s.length > 70 ? s.slice(0, 70) + '…' : s
  } catch {
    return typeName(value)
  }
}

function typeName (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value
}

/** [3, 4, 5] → '3, 4 or 5'. */
export function orList (items: readonly unknown[]): string {
  const words = items.map(String)
  return words.length <= 1 ? words.join('') : words.slice(0, -1).join(', ') + ' or ' + words[words.length - 1]
}
