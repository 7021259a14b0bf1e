import { readdir, readFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { Level } from 'level'
import { LogInUseError, LogNotFoundError, StoreDamagedError } from './errors.js'
import { headFilePath, readHeadFile, writeHeadFile } from './head-file.js'

/** Files LevelDB keeps data in: their presence means a store exists, whatever else is missing. */
const DATA_FILE = /^(\d+\.(ldb|sst|log)|MANIFEST-\d+)$/

/** The data directory a store's LevelDB directory belongs to (`DIR/db` → `DIR`), for hints. */
export function dataDirOf (dbPath: string): string {
  return basename(dbPath) === 'db' ? dirname(dbPath) : dbPath
}

/** The one recovery hint every damage message ends with. */
export function repairHint (dbPath: string): string {
  const dir = dataDirOf(dbPath)
  return `see 'fairdeal verify --data ${dir}', then 'fairdeal repair --data ${dir}'`
}

export function isLocked (err: unknown): boolean {
  const e = err as { code?: unknown, cause?: { code?: unknown } } | null
  return e?.code === 'LEVEL_LOCKED' || e?.cause?.code === 'LEVEL_LOCKED'
}

async function listDir (path: string): Promise<string[] | null> {
  try { return await readdir(path) } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    // A file where the data directory should be: there is no store there, nor can one be made.
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') throw new LogNotFoundError(path)
    throw err
  }
}

export interface OpenStoreOptions {
  /** Create the store when there is none (never over the remains of one). Default true. */
  create?: boolean
  valueEncoding?: string
  /**
   * Read every record once before returning (a node's start): LevelDB reads a table file only when
   * a key in it is asked for, so a truncated or corrupted `.ldb` would otherwise open fine and fail
   * later, in the middle of a hand, with an uncaught LEVEL_IO_ERROR or LEVEL_CORRUPTION.
   */
  readAll?: boolean
}

/**
 * Opens a node's LevelDB directory, refusing in one line (StoreDamagedError) what LevelDB would
 * otherwise do silently or with a stack trace: create a fresh store over an existing one whose
 * CURRENT file was lost (and then delete its table files), open with missing table files or a bad
 * CURRENT or MANIFEST, or drop records of a corrupted `.log` file. A store is new only when its
 * directory holds no LevelDB data file and it has no head file.
 *
 * @throws LogInUseError when another process holds it
 * @throws LogNotFoundError when `create` is false and there is no store
 * @throws StoreDamagedError when it is damaged
 */
export async function openStoreDb (path: string, options: OpenStoreOptions = {}): Promise<Level<string, any>> {
  const files = await listDir(path)
  const kept = await readHeadFile(path)
  const hasData = files?.some(f => DATA_FILE.test(f)) === true
  const hasCurrent = files?.includes('CURRENT') === true
  if (!hasCurrent) {
    if (hasData) {
      throw new StoreDamagedError(`the store in ${path} is damaged: its CURRENT file is missing (LevelDB files are there; never opened as a new store): ${repairHint(path)}`)
    }
    if (kept !== null) {
      throw new StoreDamagedError(`the store in ${path} is gone: its LevelDB files are missing but ${headFilePath(path)} says it held a log: restore them from a backup, or ${repairHint(path)}`)
    }
    if (options.create === false) throw new LogNotFoundError(path)
  }
  const db = new Level<string, any>(path, { createIfMissing: !hasCurrent, valueEncoding: options.valueEncoding ?? 'utf8' })
  try {
    await db.open()
  } catch (err) {
    if (isLocked(err)) throw new LogInUseError(path, { cause: err })
    const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message
    throw new StoreDamagedError(`the store in ${path} is damaged: LevelDB cannot open it (${cause.split('\n')[0]}): ${repairHint(path)}`)
  }
  if (options.readAll === true) {
    try {
      // Values as bytes: only what LevelDB can read is checked here, not what the records say.
      for await (const _ of db.iterator({ keyEncoding: 'buffer', valueEncoding: 'buffer', fillCache: false })) { /* read */ }
    } catch (err) {
      await db.close().catch(() => {})
      const cause = (err as Error).message.replace(path + '/', '').split('\n')[0]
      throw new StoreDamagedError(`the store in ${path} is damaged: LevelDB cannot read it (${cause}): ${repairHint(path)}`)
    }
  }
  // LevelDB (without paranoid checks, which classic-level does not offer) skips a corrupted record
  // of its write-ahead log on open and only says so in its info LOG, which the next open replaces:
  // keep what it said in the head file, so that the store stays refused until repaired.
  const dropped = await droppedOnOpen(path)
  if (dropped !== null) {
    const damage = `LevelDB dropped data of a damaged file when it opened the store (${dropped})`
    await writeHeadFile(path, { head: kept?.head ?? null, marks: kept?.marks ?? {}, damage: kept?.damage ?? damage })
  }
  return db
}

/** What LevelDB's info LOG of this open says it dropped, or null. */
async function droppedOnOpen (path: string): Promise<string | null> {
  let text: string
  try { text = await readFile(join(path, 'LOG'), 'utf8') } catch { return null }
  const line = text.split('\n').find(l => /dropping \d+ bytes|Corruption:/.test(l))
  if (line === undefined) return null
  return line.replace(/^\S+ \S+ /, '').replace(path + '/', '').trim().slice(0, 200)
}
