/**
 * Rejected input (a refused connection, a bad frame, a message that fails its checks) logged in
 * rate-limited summaries: whoever sends it, member or stranger, decides how often it is sent, and
 * must not decide how much the node writes to its log.
 *
 * Per window of REJECTION_WINDOW_MS: the first REJECTION_LINES_PER_KIND rejections of each
 * (message, peer, reason kind) are logged in full, up to REJECTION_LINES_PER_WINDOW lines in all;
 * the rest are counted, and when the window ends one summary line per (message, peer, reason kind)
 * gives the count (at most REJECTION_SUMMARIES_PER_WINDOW of them, then one line for all the others). At most REJECTION_KEYS
 * kinds are counted apart; beyond, rejections are counted together. Memory and log lines per window
 * are bounded whatever arrives.
 */
import type { Logger } from 'pino'

export const REJECTION_WINDOW_MS = 10_000
export const REJECTION_LINES_PER_KIND = 5
export const REJECTION_LINES_PER_WINDOW = 50
export const REJECTION_SUMMARIES_PER_WINDOW = 20
export const REJECTION_KEYS = 256

interface Pick { warn: (fields: object, msg: string) => void }

export interface RejectionFields {
  /** The peer the input came from (a peer id, an address), or omitted. */
  peer?: string
  /** Why it was rejected. */
  reason?: string
  [field: string]: unknown
}

export type RejectionLog = (fields: RejectionFields, msg: string) => void

/** The reason with what varies from one input to the next (numbers, hex, quoted text) taken out. */
export function reasonKind (reason: string | undefined): string {
  if (reason === undefined) return ''
  return reason.replace(/"[^"]*"|'[^']*'|\b[0-9a-f]{8,}\b|12D3KooW\w+|\d+/g, '…').slice(0, 100)
}

/**
 * A rejection logger writing at warn to `logger`. `now` and the timer are injectable for tests;
 * the summary of a window is written when the window ends (an unref'd timer), or by `flush()`.
 */
export function createRejectionLog (logger: Logger | Pick, options: { now?: () => number, windowMs?: number } = {}): RejectionLog & { flush: () => void } {
  const now = options.now ?? Date.now
  const windowMs = options.windowMs ?? REJECTION_WINDOW_MS
  let windowStart = -Infinity
  let lines = 0
  const counts = new Map<string, { msg: string, peer?: string, reason: string, logged: number, count: number }>()
  let overflow = 0
  let timer: ReturnType<typeof setTimeout> | undefined

  const flush = (): void => {
    if (timer !== undefined) { clearTimeout(timer); timer = undefined }
    let written = 0
    let rest = overflow
    for (const c of counts.values()) {
      if (c.count === 0) continue
      if (written < REJECTION_SUMMARIES_PER_WINDOW) {
        written++
        logger.warn({ peer: c.peer, reason: c.reason, count: c.count, seconds: windowMs / 1000 },
          `${c.msg}: ${c.count} more like it in ${windowMs / 1000} s (not logged one by one)`)
      } else {
        rest += c.count
      }
    }
    if (rest > 0) logger.warn({ count: rest, seconds: windowMs / 1000 }, `rejected ${rest} more inputs of other peers or kinds in ${windowMs / 1000} s (not logged one by one)`)
    counts.clear()
    overflow = 0
  }

  const log = (fields: RejectionFields, msg: string): void => {
    const t = now()
    if (t - windowStart >= windowMs) {
      flush()
      windowStart = t
      lines = 0
    }
    const kind = reasonKind(fields.reason)
    const key = `${msg}\u0000${fields.peer ?? ''}\u0000${kind}`
    let held = counts.get(key)
    if (held === undefined && counts.size < REJECTION_KEYS) {
      held = { msg, peer: fields.peer, reason: kind, logged: 0, count: 0 }
      counts.set(key, held)
    }
    if (held !== undefined && held.logged < REJECTION_LINES_PER_KIND && lines < REJECTION_LINES_PER_WINDOW) {
      // The first few of a kind in this window are said in full; later ones are counted.
      lines++
      held.logged++
      logger.warn(fields, msg)
      return
    }
    if (held !== undefined) held.count++
    else overflow++
    if (timer === undefined && options.now === undefined) {
      timer = setTimeout(() => {
        timer = undefined
        flush()
        windowStart = -Infinity
      }, Math.max(0, windowStart + windowMs - t))
      timer.unref?.()
    }
  }
  return Object.assign(log, { flush })
}
