/**
 * The base of every error that means bad input or environment, not a bug: what the user gave (an
 * argument, a file, a config), what a peer sent, a data directory in use. The CLI prints its message
 * on one line and exits with `exitCode` (2), with no stack trace; the daemon and the page show the
 * message. Every layer's input errors extend it, so the edges recognise them by class alone.
 */
export class InputError extends Error {
  override name = 'InputError'
  /** The CLI's exit status for it. */
  readonly exitCode: number = 2
}

/**
 * Bad input to a core function (unknown scheme, malformed hex, wrong seat count, …). Callers at the
 * edges (CLI, network, HTTP) turn it into a one-line error; it never means a bug in the core.
 */
export class CoreInputError extends InputError {
  override name = 'CoreInputError'
}
