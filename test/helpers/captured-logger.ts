import type { Logger } from 'pino'
import { createLogger } from '../../src/daemon/logger.js'

/** One pino line as written (JSON), with the fields the code logs beside it. */
export interface LogLine {
  level: number
  msg: string
  [field: string]: unknown
}

export const WARN = 40

/**
 * The node's real logger (createLogger: same fields, same redaction) whose JSON lines land in an
 * array, so a test can assert on what a node said (a refusal, a rejected message and its reason)
 * and wait for a line instead of sleeping.
 */
export class CapturedLogger {
  readonly lines: LogLine[] = []
  readonly logger: Logger
  #waiters = new Set<() => void>()

  /** Every line exactly as written, for greps over the raw text. */
  readonly raw: string[] = []

  constructor (level: 'trace' | 'debug' | 'info' | 'warn' = 'info') {
    this.logger = createLogger({
      level,
      stream: {
        write: (text: string): void => {
          this.raw.push(text)
          this.lines.push(JSON.parse(text) as LogLine)
          for (const w of [...this.#waiters]) w()
        }
      }
    })
  }

  warnings (): LogLine[] {
    return this.lines.filter(l => l.level === WARN)
  }

  /** Lines the daemon wrote for a refused table message, with their reasons. */
  rejections (): Array<{ from: string, reason: string }> {
    return this.lines.filter(l => l.msg === 'message rejected').map(l => ({ from: String(l.from), reason: String(l.reason) }))
  }

  /** Resolves with the first line (already written or to come) that `match` accepts. */
  async waitFor (match: (line: LogLine) => boolean, what: string, timeoutMs = 10_000): Promise<LogLine> {
    const found = this.lines.find(match)
    if (found !== undefined) return found
    return await new Promise<LogLine>((resolve, reject) => {
      let seen = this.lines.length
      const check = (): void => {
        for (; seen < this.lines.length; seen++) {
          if (match(this.lines[seen])) { done(); resolve(this.lines[seen]); return }
        }
      }
      const timer = setTimeout(() => { done(); reject(new Error(`timed out after ${timeoutMs} ms waiting for log line: ${what}`)) }, timeoutMs)
      const done = (): void => { clearTimeout(timer); this.#waiters.delete(check) }
      this.#waiters.add(check)
    })
  }
}
