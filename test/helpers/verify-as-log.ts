import { GENESIS_PREV, makeEntry, makeHead, verifyLog, type LogFailure } from '../../src/core/log/index.js'
import { verifyLogPayload } from '../../src/core/receipt.js'
import type { Signer } from '../../src/core/identity.js'

/** The entries a node appended (in memory), as its store would hold them, verified whole: the failures found. */
export async function verifyAsLog (signer: Signer, entries: Array<{ entry: string, payload: unknown }>): Promise<LogFailure[]> {
  const lines: string[] = []
  let prev = GENESIS_PREV
  entries.forEach((e, seq) => {
    const made = makeEntry(signer, { seq, prev, kind: e.entry, payload: e.payload })
    lines.push(made.line)
    prev = made.hash
  })
  const failures: LogFailure[] = []
  await verifyLog([makeHead(signer, entries.length - 1, prev).line, ...lines], { verifyPayload: verifyLogPayload, onFailure: f => { failures.push(f) } })
  return failures
}
