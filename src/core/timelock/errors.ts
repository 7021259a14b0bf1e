import { InputError } from '../errors.js'

/**
 * Why a time-locked value cannot be used: `malformed` (not a canonical armored tlock age file),
 * `unsupported` (the chain's scheme has no timelock), `undecryptable` (the round's signature does
 * not open it: IBE check, header MAC or payload tag failed), `not-text` (it opens, to bytes that
 * are not UTF-8).
 */
export type TimelockFailure = 'malformed' | 'unsupported' | 'undecryptable' | 'not-text'

export class TimelockError extends InputError {
  override name = 'TimelockError'
  constructor (readonly kind: TimelockFailure, message: string) {
    super(message)
  }
}
