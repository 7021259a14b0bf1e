import { InputError } from '../core/errors.js'

/**
 * A problem with what the user gave us (arguments, files, config). The CLI prints its message on
 * one line and exits 2, with no stack trace.
 */
export class UsageError extends InputError {
  override name = 'UsageError'
}
