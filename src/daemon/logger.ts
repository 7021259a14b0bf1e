import { pino, type Logger, type LevelWithSilent } from 'pino'
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
 * The node's logger: JSON lines (one object per line, for machines and log shippers), or a
 * readable coloured form when the destination is a terminal.
 */
export function createLogger (options: { level?: LevelWithSilent, fd?: 1 | 2, name?: string } = {}): Logger {
  const fd = options.fd ?? 1
  const stream = fd === 1 ? process.stdout : process.stderr
  const base = { level: options.level ?? envLogLevel('info'), name: options.name }
  if (stream.isTTY === true) {
    return pino(base, pretty({ colorize: colourAllowed(), destination: fd, sync: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' }))
  }
  return pino(base, pino.destination({ fd, sync: false }))
}
