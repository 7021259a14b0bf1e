import { checkLine, type DocVerifier, type LineCheck, type LogLine, type PayloadVerifier } from './check.js'
import { ChainVerifier, type ChainOptions, type LogFailure, type LogVerdict } from './chain.js'

/**
 * Runs {@link checkLine} over batches of lines. The default runs in the calling thread; a Node
 * adapter (src/store/check-pool.ts) runs it on worker threads, which is where the time goes:
 * every entry costs at least one Ed25519 verification, and its payload usually several more.
 */
export interface LineChecker {
  /** Results in the order of `lines`. */
  check: (lines: LogLine[]) => Promise<LineCheck[]>
  /** How many batches it works on at once; the verifier keeps twice that many in flight. */
  readonly concurrency: number
}

export function inThreadChecker (verifyPayload: PayloadVerifier | null, verifyDoc?: DocVerifier): LineChecker {
  return {
    concurrency: 1,
    check: async (lines) => lines.map(line => checkLine(line, verifyPayload, verifyDoc))
  }
}

export interface VerifyLogOptions extends ChainOptions {
  /** The semantic check of each payload; null checks only the log itself (chain, signatures, head). */
  verifyPayload: PayloadVerifier | null
  /** Where the per-line checks run; default in this thread with `verifyPayload`. */
  checker?: LineChecker
  /** Lines per batch handed to the checker (default 64). */
  batchLines?: number
  /** Called once per failed entry, missing range or failed head, in input order. */
  onFailure?: (failure: LogFailure) => void
  /** Called after each batch with the lines checked so far. */
  onProgress?: (linesDone: number) => void
}

const MAX_BATCH_BYTES = 1024 * 1024

/**
 * Verifies a log given as lines: optionally the signed head first, then entries in order. Streams:
 * at most a few batches are held at once, whatever the log's length. Failures are reported through
 * `onFailure` as they are found; the verdict counts them.
 */
export async function verifyLog (
  lines: AsyncIterable<LogLine> | Iterable<LogLine>,
  options: VerifyLogOptions
): Promise<LogVerdict> {
  const checker = options.checker ?? inThreadChecker(options.verifyPayload)
  const batchLines = Math.max(1, options.batchLines ?? 64)
  const maxInFlight = Math.max(2, checker.concurrency * 2)
  const chain = new ChainVerifier(options, options.onFailure ?? (() => {}))
  const inFlight: Array<Promise<LineCheck[]>> = []
  let done = 0

  const settleOldest = async (): Promise<void> => {
    const results = await (inFlight.shift() as Promise<LineCheck[]>)
    for (const result of results) chain.push(result)
    done += results.length
    options.onProgress?.(done)
  }
  const submit = (batch: LogLine[]): void => {
    const pending = checker.check(batch)
    // Awaited in order later; this only keeps a rejection from being reported as unhandled meanwhile.
    pending.catch(() => {})
    inFlight.push(pending)
  }

  let batch: LogLine[] = []
  let batchBytes = 0
  for await (const line of lines) {
    batch.push(line)
    batchBytes += line.length
    if (batch.length >= batchLines || batchBytes >= MAX_BATCH_BYTES) {
      submit(batch)
      batch = []
      batchBytes = 0
      while (inFlight.length >= maxInFlight) await settleOldest()
    }
  }
  if (batch.length > 0) submit(batch)
  while (inFlight.length > 0) await settleOldest()
  return chain.finish()
}
