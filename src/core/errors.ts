/**
 * Bad input to a core function (unknown scheme, malformed hex, wrong seat count, …). Callers at the
 * edges (CLI, network, HTTP) turn it into a one-line error; it never means a bug in the core.
 */
export class CoreInputError extends Error {
  override name = 'CoreInputError'
}
