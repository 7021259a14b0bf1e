import { GENESIS_PREV, makeEntry, makeHead, verifyLog, type LogFailure } from '../../src/core/log/index.js'
import { verifyLogPayload } from '../../src/core/receipt.js'
import type { Signer } from '../../src/core/identity.js'

/** Entries signed into an exported log's lines by `signer`: its signed head first, then each entry chained to the one before. */
export function signedLogLines (signer: Signer, entries: Array<{ kind: string, payload: unknown }>): string[] {
  const lines: string[] = []
  let prev = GENESIS_PREV
  entries.forEach((e, seq) => {
    const made = makeEntry(signer, { seq, prev, kind: e.kind, payload: e.payload })
    lines.push(made.line)
    prev = made.hash
  })
  return [makeHead(signer, entries.length - 1, prev).line, ...lines]
}

/** The entries a node appended (in memory), as its store would hold them, verified whole: the failures found. */
export async function verifyAsLog (signer: Signer, entries: Array<{ entry: string, payload: unknown }>): Promise<LogFailure[]> {
  const failures: LogFailure[] = []
  const lines = signedLogLines(signer, entries.map(e => ({ kind: e.entry, payload: e.payload })))
  await verifyLog(lines, { verifyPayload: verifyLogPayload, onFailure: f => { failures.push(f) } })
  return failures
}
