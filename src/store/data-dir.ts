import { logDbPath, openLog, type Log } from './log.js'
import { LogInUseError, LogNotFoundError } from './errors.js'
import { InputError } from '../core/errors.js'

/** Why a node's data directory could not be read, in one line for a person at a terminal. */
export class DataDirError extends InputError {
  override name = 'DataDirError'
}

/**
 * Opens the log of a node's data directory (`DIR/db`) for reading: export, show, verify. Not
 * checked on open, so that the verifier reports a damaged log entry by entry.
 */
export async function openDataDirLog (dataDir: string): Promise<Log> {
  const path = logDbPath(dataDir)
  try {
    return await openLog({ path, create: false, checkOnOpen: false })
  } catch (err) {
    if (err instanceof LogNotFoundError) {
      throw new DataDirError(`no log in ${dataDir} (${path} does not exist): is it a fairdeal data directory?`)
    }
    if (err instanceof LogInUseError) {
      throw new DataDirError(`${dataDir} is in use by a running node: stop it, or fetch its log over the network with 'fairdeal verify --peer ADDRESS'`)
    }
    throw err
  }
}
