import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino'
import pretty from 'pino-pretty'
import { NodeInputError } from './errors.js'

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']

/** FAIRDEAL_LOG_LEVEL, checked: a misspelt level is one line of error, not pino's stack trace. */
export function envLogLevel (fallback: LevelWithSilent): LevelWithSilent {
  const value = process.env.FAIRDEAL_LOG_LEVEL
  if (value === undefined || value === '') return fallback
  if (!LEVELS.includes(value)) throw new NodeInputError(`FAIRDEAL_LOG_LEVEL must be one of ${LEVELS.join(', ')}, got ${JSON.stringify(value)}`)
  return value as LevelWithSilent
}

/** https://no-color.org: NO_COLOR set to anything but the empty string turns colours off. */
export function colourAllowed (): boolean {
  const v = process.env.NO_COLOR
  return v === undefined || v === ''
}

/**
 * Fields no log line may carry, whatever level: the dealer's secret and the seats' nonces (a hand's
 * randomness, unrevealed until the REVEAL: in a log shipped elsewhere they would let a reader know
 * the deal early), a seat's private cards, key material, the control token and a table page's
 * one-time login link (`login`: whoever opens it first gets a session). pino replaces them
 * with "[redacted]" before the line is written, at the top level and up to two objects deep (an
 * `err`, an `event`, a document's `body`). The code logs none of these on purpose; this is the net
 * under it, and test/secrets.test.ts greps every line a played table writes.
 */
export const REDACTED_FIELDS = ['secret', 'nonce', 'nonces', 'cards', 'seed', 'privateKey', 'token', 'authorization', 'login'] as const

export const REDACT_PATHS: string[] = REDACTED_FIELDS.flatMap(f => [f, `*.${f}`, `*.*.${f}`])

/**
 * The node's logger: JSON lines (one object per line, for machines and log shippers), or a
 * readable coloured form when the destination is a terminal. `stream` replaces the file descriptor
 * (tests capture the lines a node would write).
 */
export function createLogger (options: { level?: LevelWithSilent, fd?: 1 | 2, name?: string, stream?: DestinationStream } = {}): Logger {
  const fd = options.fd ?? 1
  const base = {
    level: options.level ?? envLogLevel('info'),
    name: options.name,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' }
  }
  if (options.stream !== undefined) return pino(base, options.stream)
  const stream = fd === 1 ? process.stdout : process.stderr
  if (stream.isTTY === true) {
    return pino(base, pretty({ colorize: colourAllowed(), destination: fd, sync: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' }))
  }
  return pino(base, pino.destination({ fd, sync: false }))
}
