/**
 * Resolves once `condition` holds (it may be async: a file read, a page's text), checked every
 * `everyMs`, or fails naming `what` after `timeoutMs`: for a state that no event announces (a
 * reservation made, a cosignature kept).
 */
export async function until (condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000, everyMs = 20): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, everyMs))
  }
}
