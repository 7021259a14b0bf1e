import { UsageError } from './errors.js'

/** A log sequence number option (`--from`, `--to`): absent, or a whole number 0, 1, 2, … */
export function parseSeq (value: string | undefined, option: string): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d{1,16}$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${option} must be a sequence number (0, 1, 2, …), got ${JSON.stringify(value)}`)
  }
  return Number(value)
}
