import { UsageError } from './errors.js'

/** A log sequence number option (`--from`, `--to`): absent, or a whole number 0, 1, 2, … */
export function parseSeq (value: string | undefined, option: string): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d{1,16}$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${option} must be a sequence number (0, 1, 2, …), got ${JSON.stringify(value)}`)
  }
  return Number(value)
}

/** `--from SEQ` and `--to SEQ` of the log commands: each absent or a sequence number, `to` not before `from`. */
export function parseSeqRange (values: { from?: string, to?: string }): { from: number | undefined, to: number | undefined } {
  const from = parseSeq(values.from, '--from')
  const to = parseSeq(values.to, '--to')
  if (from !== undefined && to !== undefined && to < from) throw new UsageError(`--to ${to} is before --from ${from}`)
  return { from, to }
}

/**
 * A whole-number option (`--hand`, `--port`, `--workers`, …): absent, or decimal digits only (no
 * sign, exponent, hex or spaces), from `min` to `max`.
 */
export function parseIntOption (value: string | undefined, option: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined
  const n = /^\d{1,16}$/.test(value) ? Number(value) : NaN
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? (min === 0 ? '(0, 1, 2, …)' : `of ${min} or more`) : `from ${min} to ${max}`
    throw new UsageError(`${option} must be a whole number ${range}, got ${JSON.stringify(value)}`)
  }
  return n
}
