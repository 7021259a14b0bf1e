/**
 * A problem with what a user or a file gave us (arguments, a file, a config, a data directory),
 * never a bug. Every such error class extends it, whatever its layer: the CLI prints its message
 * on one line, with no stack trace, and exits with `exitCode` (2, a usage error).
 */
export class InputError extends Error {
  override name = 'InputError'
  readonly exitCode: number = 2
}

/**
 * Bad input to a core function (unknown scheme, malformed hex, wrong seat count, …). Callers at the
 * edges (CLI, network, HTTP) turn it into a one-line error; it never means a bug in the core.
 */
export class CoreInputError extends InputError {
  override name = 'CoreInputError'
}
