/**
 * @packageDocumentation
 *
 * Receipt logs: the entry format, hashing, the signed head and the streaming verifier. Pure and
 * browser-safe: storage (src/store) and transport (src/net/log-fetch.ts) feed it lines.
 *
 * A log is a sequence of entries, each signed by the node that keeps it (its owner) and holding the
 * hash of the previous one; the owner also signs its head (last seq and hash). A copy of the log
 * is the head's line followed by the entries' lines, each in the canonical JSON form; the format is
 * specified in docs/log.md.
 *
 * @example
 *
 * ```ts
 * import { verifyLog, formatFailure } from './core/log/index.js'
 * import { verifyLogPayload } from './core/receipt.js'
 *
 * const verdict = await verifyLog(lines, {
 *   verifyPayload: verifyLogPayload,
 *   onFailure: f => { console.log(formatFailure(f)) }
 * })
 * console.log(`${verdict.passed} passed, ${verdict.failed} failed`)
 * ```
 */
export {
  ENTRY_TYPE, HEAD_TYPE, GENESIS_PREV, MAX_ENTRY_BYTES, MAX_HEAD_BYTES, KIND_PATTERN,
  encodeLine, entryHash, makeEntry, makeHead,
  type EntryBody, type HeadBody, type LogEntry, type LogHead, type NewEntry
} from './format.js'
export { checkLine, type DocVerifier, type LineCheck, type LogLine, type PayloadCheck, type PayloadProblem, type PayloadVerifier } from './check.js'
export { HandChains, type PayloadLink } from './hand-chain.js'
export type { AcksDue, LateAck } from './types.js'
export { lateAckProblems } from './late-ack.js'
export { ChainVerifier, formatFailure, summaryLine, type ChainOptions, type LogFailure, type LogVerdict } from './chain.js'
export { verifyLog, inThreadChecker, type LineChecker, type VerifyLogOptions } from './verify.js'
