import { access } from 'node:fs/promises'
import { join } from 'node:path'
import { openDataDirLog, DataDirError } from '../store/data-dir.js'
import { CONTROL_FILE } from '../daemon/control.js'
import { keptCosignaturesOf } from '../store/log.js'
import { exists } from './files.js'

export interface DataDirLines {
  lines: AsyncIterable<string>
  /** True when the lines come from the running node through its control endpoint. */
  running: boolean
  /** Damage the store reported on open (a stopped node's; the running node reports its own in its log). */
  notes: string[]
  /** Heads peers cosigned for this node, kept in its head file (read whether the node runs or not). */
  cosigned: string[]
  close: () => Promise<void>
}

/**
 * The log of a data directory as exported lines (signed head, then entries): read from the store
 * when the node is stopped, or, while it runs (LevelDB allows one process), asked of the node
 * through its control endpoint. Either way the same lines, so the same output.
 */
export async function dataDirLogLines (dir: string, range: { from?: number, to?: number } = {}): Promise<DataDirLines> {
  try {
    const log = await openDataDirLog(dir)
    const damage = log.damage()
    return { lines: log.copy(range), running: false, notes: damage === null ? [] : [damage], cosigned: log.keptCosignatures(), close: async () => { await log.close() } }
  } catch (err) {
    if (!(err instanceof DataDirError) || !/in use by a running node/.test(err.message)) throw err
    try { await access(join(dir, CONTROL_FILE)) } catch {
      // A beacon group member without a table runs no control endpoint and serves its log to nobody
      // (its group files are in DIR/beacon-group/). Imported here only: the group's modules are
      // not for reading a log.
      const { GROUPS_DIR } = await import('../beacon/group/node.js')
      if (await exists(join(dir, GROUPS_DIR))) {
        throw new DataDirError(`${dir} is in use by its running beacon group member, which has no control endpoint to read the log through and serves it to nobody: stop that node, then run this again`)
      }
      throw err
    }
    const { ControlClient } = await import('../daemon/control-client.js')
    const client = await ControlClient.forDataDir(dir)
    // The head file is outside LevelDB: its cosigned heads are read as for a stopped node.
    return { lines: client.logLines(range), running: true, notes: [], cosigned: await keptCosignaturesOf(dir), close: async () => {} }
  }
}
