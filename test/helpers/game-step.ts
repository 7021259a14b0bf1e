/** The state of an accepted game step; a refusal fails the test with its code. */
export function must<S> (r: { ok: true, state: S } | { ok: false, code: string, message?: string }): S {
  if (!r.ok) throw new Error(`refused: ${r.code}${r.message === undefined ? '' : ` (${r.message})`}`)
  return r.state
}
