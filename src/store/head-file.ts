import { constants } from 'node:fs'
import { open, readFile, rename, rm, type FileHandle } from 'node:fs/promises'
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
/**
 * The file is a journal: each write appends the whole new state as one line, and the last complete
 * line is the state. Once it would pass this size it is replaced by one line (writeHeadFile).
 */
const COMPACT_AT_BYTES = 64 * 1024
/** A head file is at most the compaction size and one state; a much bigger one is not ours. */
const MAX_HEAD_FILE_BYTES = 1024 * 1024
/**
 * Appends are durable when write() returns (O_DSYNC: the data and the file's new size, as
 * fdatasync). Where the platform has no O_DSYNC, each append is followed by a datasync.
 */
const HAS_O_DSYNC = constants.O_DSYNC !== undefined
const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | (HAS_O_DSYNC ? constants.O_DSYNC : 0)

/** `DIR/db` → `DIR/db-head.json`: beside the LevelDB directory, not inside it (LevelDB owns that). */
export function headFilePath (dbPath: string): string {
  return join(dirname(dbPath), `${basename(dbPath)}-head.json`)
}

/**
 * Reads the head file; null when there is none. A file that is not one is damage, said in one line.
 * The state is its last complete line: text after the last newline is an append a crash cut short
 * (the state before it stands, as after a crash before the append), and is ignored.
 */
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
  // Every write ends its line, and the file starts with one whole line (writeHeadFile): a file
  // without a complete line was not written by us, or lost what was.
  const end = text.lastIndexOf('\n')
  if (end < 0) throw new StoreDamagedError(`the head file ${path} is not JSON (damaged)`)
  const line = text.slice(text.lastIndexOf('\n', end - 1) + 1, end)
  let doc: Partial<HeadFileState> & { v?: unknown }
  try { doc = JSON.parse(line) } catch { throw new StoreDamagedError(`the head file ${path} is not JSON (damaged)`) }
  if (doc === null || typeof doc !== 'object' || doc.v !== VERSION ||
    !(doc.head === null || typeof doc.head === 'string') ||
    !(doc.damage === null || typeof doc.damage === 'string') ||
    doc.marks === null || typeof doc.marks !== 'object' || Array.isArray(doc.marks)) {
    throw new StoreDamagedError(`the head file ${path} is not a version ${VERSION} fairdeal head file (damaged)`)
  }
  return { head: doc.head, marks: doc.marks, damage: doc.damage }
}

/** One state as the file's line: canonical JSON and a newline. */
function headFileLine (state: HeadFileState): Buffer {
  return Buffer.from(canonicalJson({ damage: state.damage, head: state.head, marks: state.marks, v: VERSION }) + '\n')
}

/**
 * Replaces the head file durably with one line: a temporary file written and synced, renamed over
 * the old one, and the directory synced, so after a crash the file is the old one or the new one,
 * whole.
 */
export async function writeHeadFile (dbPath: string, state: HeadFileState): Promise<void> {
  await replaceHeadFile(dbPath, headFileLine(state))
}

/** {@link writeHeadFile} with the state's line already made. */
async function replaceHeadFile (dbPath: string, line: Buffer): Promise<void> {
  const path = headFilePath(dbPath)
  const temp = `${path}.tmp`
  const fh = await open(temp, 'w', 0o600)
  try {
    await fh.writeFile(line)
    await fh.datasync()
  } finally { await fh.close() }
  await rename(temp, path)
  const dir = await open(dirname(path), 'r')
  try { await dir.sync() } finally { await dir.close() }
}

export async function removeHeadFile (dbPath: string): Promise<void> {
  await rm(headFilePath(dbPath), { force: true })
}

/**
 * One writer per store: writes go out one at a time, each with the latest state. The first write
 * replaces the file (writeHeadFile: one line, whatever the file held); each later one appends a
 * line through a handle kept open, one durable write() (about a quarter of a replacement's CPU, and
 * one trip to libuv's threads instead of eight), until the file would pass COMPACT_AT_BYTES and is
 * replaced again. {@link close} closes the handle.
 */
export class HeadFile {
  private queue: Promise<unknown> = Promise.resolve()
  private staged = false
  /** The open journal and its size; null before the first write, after a failed one and once closed. */
  private journal: { handle: FileHandle, bytes: number } | null = null
  private closed = false

  constructor (readonly dbPath: string, private state: HeadFileState) {}

  get current (): Readonly<HeadFileState> { return this.state }

  async update (change: Partial<HeadFileState>): Promise<void> {
    this.state = { ...this.state, ...change, marks: change.marks ?? this.state.marks }
    this.staged = false
    const run = this.queue.then(async () => { await this.write(this.state) })
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

  /** Waits for the writes under way, then closes the journal's handle; a later write replaces the file, as the first does. */
  async close (): Promise<void> {
    this.closed = true
    await this.queue
    await this.closeJournal()
  }

  private async write (state: HeadFileState): Promise<void> {
    const line = headFileLine(state)
    const journal = this.journal
    if (journal !== null && journal.bytes + line.byteLength <= COMPACT_AT_BYTES) {
      try {
        let done = 0
        while (done < line.byteLength) done += (await journal.handle.write(line, done)).bytesWritten
        if (!HAS_O_DSYNC) await journal.handle.datasync()
        journal.bytes += line.byteLength
        return
      } catch (err) {
        // What the file ends with is not known now: the next write replaces it whole.
        await this.closeJournal()
        throw err
      }
    }
    await this.closeJournal()
    await replaceHeadFile(this.dbPath, line)
    if (!this.closed) this.journal = { handle: await open(headFilePath(this.dbPath), APPEND_FLAGS), bytes: line.byteLength }
  }

  private async closeJournal (): Promise<void> {
    const journal = this.journal
    this.journal = null
    await journal?.handle.close().catch(() => {})
  }
}
