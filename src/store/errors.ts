import { InputError } from '../core/errors.js'

/** The LevelDB directory is locked: the node is running, or the log is already open elsewhere. */
export class LogInUseError extends InputError {
  override name = 'LogInUseError'
  constructor (readonly path: string, options?: { cause?: unknown }) {
    super(`${path} is already in use (is the node running?)`, options)
  }
}

/** There is no log database where one was expected (and creating one was not asked for). */
export class LogNotFoundError extends InputError {
  override name = 'LogNotFoundError'
  constructor (readonly path: string) {
    super(`no log database at ${path}`)
  }
}

/**
 * What is on disk contradicts itself or the node: a head whose entry is missing, a log signed by
 * another identity. Opening refuses rather than append to a log it cannot vouch for.
 */
export class LogStateError extends InputError {
  override name = 'LogStateError'
}

/**
 * The store on disk lost data or its files are damaged (LevelDB files truncated, corrupted or
 * missing, or fewer entries than the store's head file vouches for). Opening refuses, in one line;
 * `fairdeal repair` is the explicit way out.
 */
export class StoreDamagedError extends InputError {
  override name = 'StoreDamagedError'
}

/** An input file that cannot be a log (a device, endless bytes, no lines): said in one line. */
export class LogInputError extends InputError {
  override name = 'LogInputError'
}
