/**
 * Why fetching a bound beacon round failed. The protocol turns each of these into a signed abort
 * record ("beacon unavailable"); they are distinct classes so it can name the cause, and so a bad
 * relay (invalid) is never mistaken for a slow one (timeout).
 */
export type BeaconFailureKind = 'timeout' | 'unavailable' | 'invalid'

/** One relay's last answer, kept for the error message and the abort record. */
export interface RelayFailure {
  url: string
  /** not-yet: 404 for a future round; slow: per-request timeout; down: refused, HTTP error, wrong chain or not a beacon; invalid: an entry that failed verification. */
  kind: 'not-yet' | 'slow' | 'down' | 'invalid'
  message: string
}

export abstract class BeaconError extends Error {
  abstract readonly kind: BeaconFailureKind
  constructor (message: string, readonly round: number, readonly chainHash: string, readonly relays: RelayFailure[]) {
    super(message)
  }
}

/** The deadline passed before a valid entry for the round was in hand (not yet produced, or relays too slow). */
export class BeaconTimeoutError extends BeaconError {
  override name = 'BeaconTimeoutError'
  readonly kind = 'timeout' as const
}

/** No relay could serve the round: every one was down, answered an HTTP error, garbage, or another chain. */
export class BeaconUnavailableError extends BeaconError {
  override name = 'BeaconUnavailableError'
  readonly kind = 'unavailable' as const
}

/** A relay served an entry for the round that does not verify against the pinned chain. */
export class BeaconInvalidError extends BeaconError {
  override name = 'BeaconInvalidError'
  readonly kind = 'invalid' as const
}
