import { open, readFile, rename, rm } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { canonicalJson } from '../core/canonical.js'
import { StoreDamagedError } from './errors.js'

/**
 * What a store knows about itself outside LevelDB, so that LevelDB losing writes (a truncated or
 * corrupted `.log` file, a lost table file) is noticed instead of silently continued:
 * - `head`: the signed head line of the log, rewritten after every append;
 * - `marks`: values the node must never see go back, written before they are acted on (the
 *   dealer's hand counter: `dealer/TABLE/meta`);
 * - `damage`: set when LevelDB reported dropping data on open; the store refuses to open until
 *   `fairdeal repair` clears it (LevelDB rewrites its own LOG on the next open, so the report
 *   would otherwise be gone).
 */
export interface HeadFileState {
  head: string | null
  marks: Record<string, unknown>
  damage: string | null
}

const VERSION = 1
/** A head file is a few hundred bytes; a bigger one is not ours. */
const MAX_HEAD_FILE_BYTES = 64 * 1024

/** `DIR/db` → `DIR/db-head.json`: beside the LevelDB directory, not inside it (LevelDB owns that). */
export function headFilePath (dbPath: string): string {
  return join(dirname(dbPath), `${basename(dbPath)}-head.json`)
}

/** Reads the head file; null when there is none. A file that is not one is damage, said in one line. */
export async function readHeadFile (dbPath: string): Promise<HeadFileState | null> {
  const path = headFilePath(dbPath)
  let text: string
  try {
    const fh = await open(path, 'r')
    try {
      const { size } = await fh.stat()
      if (size > MAX_HEAD_FILE_BYTES) throw new StoreDamagedError(`the head file ${path} is ${size} bytes, not a fairdeal head file`)
      text = await readFile(fh, 'utf8')
    } finally { await fh.close() }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
  let doc: Partial<HeadFileState> & { v?: unknown }
  try { doc = JSON.parse(text) } catch { throw new StoreDamagedError(`the head file ${path} is not JSON (damaged)`) }
  if (doc === null || typeof doc !== 'object' || doc.v !== VERSION ||
    !(doc.head === null || typeof doc.head === 'string') ||
    !(doc.damage === null || typeof doc.damage === 'string') ||
    doc.marks === null || typeof doc.marks !== 'object' || Array.isArray(doc.marks)) {
    throw new StoreDamagedError(`the head file ${path} is not a version ${VERSION} fairdeal head file (damaged)`)
  }
  return { head: doc.head, marks: doc.marks, damage: doc.damage }
}

/**
 * Replaces the head file durably: a temporary file written and synced, renamed over the old one,
 * and the directory synced, so after a crash the file is the old one or the new one, whole.
 */
export async function writeHeadFile (dbPath: string, state: HeadFileState): Promise<void> {
  const path = headFilePath(dbPath)
  const temp = `${path}.tmp`
  const text = canonicalJson({ damage: state.damage, head: state.head, marks: state.marks, v: VERSION }) + '\n'
  const fh = await open(temp, 'w', 0o600)
  try {
    await fh.writeFile(text)
    await fh.datasync()
  } finally { await fh.close() }
  await rename(temp, path)
  const dir = await open(dirname(path), 'r')
  try { await dir.sync() } finally { await dir.close() }
}

export async function removeHeadFile (dbPath: string): Promise<void> {
  await rm(headFilePath(dbPath), { force: true })
}

/** One writer per store: writes go out one at a time, each with the latest state. */
export class HeadFile {
  private queue: Promise<unknown> = Promise.resolve()
  private staged = false

  constructor (readonly dbPath: string, private state: HeadFileState) {}

  get current (): Readonly<HeadFileState> { return this.state }

  async update (change: Partial<HeadFileState>): Promise<void> {
    this.state = { ...this.state, ...change, marks: change.marks ?? this.state.marks }
    this.staged = false
    const run = this.queue.then(async () => { await writeHeadFile(this.dbPath, this.state) })
    this.queue = run.catch(() => {})
    await run
  }

  async setMark (key: string, value: unknown): Promise<void> {
    await this.update({ marks: { ...this.state.marks, [key]: value } })
  }

  /** Changes a mark in memory only: it goes to disk with the next write (or {@link flush}). */
  stageMark (key: string, value: unknown): void {
    this.state = { ...this.state, marks: { ...this.state.marks, [key]: value } }
    this.staged = true
  }

  /** Writes staged marks, if any. */
  async flush (): Promise<void> {
    if (this.staged) await this.update({})
  }
}
