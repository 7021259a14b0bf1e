import { pino, type Logger, type LevelWithSilent } from 'pino'
import pretty from 'pino-pretty'

/**
 * The node's logger: JSON lines (one object per line, for machines and log shippers), or a
 * readable coloured form when the destination is a terminal.
 */
export function createLogger (options: { level?: LevelWithSilent, fd?: 1 | 2, name?: string } = {}): Logger {
  const fd = options.fd ?? 1
  const stream = fd === 1 ? process.stdout : process.stderr
  const base = { level: options.level ?? (process.env.FAIRDEAL_LOG_LEVEL as LevelWithSilent | undefined) ?? 'info', name: options.name }
  if (stream.isTTY === true) {
    return pino(base, pretty({ colorize: true, destination: fd, sync: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' }))
  }
  return pino(base, pino.destination({ fd, sync: false }))
}
