import { join } from 'node:path'
import type { Level } from 'level'
import { checkLine } from '../core/log/check.js'
import { nativeVerifyDocument } from '../crypto/native-crypto.js'
import { GENESIS_PREV, makeEntry, makeHead, type LogEntry, type LogHead } from '../core/log/format.js'
import type { Signer } from '../core/identity.js'
import { LogInUseError, LogStateError, StoreDamagedError } from './errors.js'
import { HeadFile, readHeadFile, type HeadFileState } from './head-file.js'
import { isLocked, openStoreDb, repairHint } from './store-db.js'

/** The LevelDB directory of a node's data directory (`DIR/db`), where its log lives. */
export function logDbPath (dataDir: string): string {
  return join(dataDir, 'db')
}

export interface OpenLogOptions {
  /** A LevelDB directory of the log's own. */
  path?: string
  /**
   * Or a database shared with other node data: the log keeps to its sublevel, so one atomic batch
   * can never interleave with the other data's keys. Not closed by {@link Log.close}.
   */
  db?: Level<any, any>
  /** Sublevel name inside `db` (or inside the database at `path`). Default `log`. */
  sublevel?: string
  /** The node's identity. Without one the log is read-only (export, verify, show). */
  signer?: Signer | null
  /** Create the database when `path` holds none. Default true. */
  create?: boolean
  /** Clock for entries' `time` (ms). Default `Date.now`. */
  now?: () => number
  /**
   * Check on open that the stored log is whole and is the signer's (default true). Readers that
   * verify everything anyway (export, verify, show) turn it off, so that a damaged log is reported
   * entry by entry instead of refused as a whole; appending then is refused.
   */
  checkOnOpen?: boolean
}

/** What `append` wrote: the signed entry, its canonical line and its hash (what the next entry links to). */
export interface AppendedEntry {
  entry: LogEntry
  line: string
  hash: string
}

export interface Range {
  /** First seq (default 0). */
  from?: number
  /** Last seq, inclusive (default: the head). */
  to?: number
}

/** A write to another sublevel of the log's database, made in an append's batch ({@link Log.append}). */
export type AlongsideWrite = { type: 'put', sublevel: object, key: string, value: unknown } | { type: 'del', sublevel: object, key: string }

/** Keys of the log's sublevel (`log`): the head line, and one entry line per seq. */
export const HEAD_KEY = 'head'
export const ENTRY_PREFIX = 'e'
/** Head-file marks holding peers' cosignatures of this log's head: `cosigned/` + the witness's peer id. */
const COSIGNED_MARK = 'cosigned/'

/** The cosigned heads a head file keeps, one per witness. */
function cosignaturesOf (state: HeadFileState): string[] {
  return Object.entries(state.marks).filter(([k, v]) => k.startsWith(COSIGNED_MARK) && typeof v === 'string').map(([, v]) => v as string)
}

/**
 * The cosigned heads kept in a data directory's head file, read without opening LevelDB (which a
 * running node holds): the node rewrites the file whole (renamed into place), so a reader sees one
 * version or the next.
 */
export async function keptCosignaturesOf (dataDir: string): Promise<string[]> {
  const state = await readHeadFile(logDbPath(dataDir))
  return state === null ? [] : cosignaturesOf(state)
}

// Sequence numbers are zero-padded to the 16 digits of Number.MAX_SAFE_INTEGER so that LevelDB's
// byte order is numeric order.
export function entryKey (seq: number): string {
  return ENTRY_PREFIX + String(seq).padStart(16, '0')
}

interface Bounds { gt?: string, gte?: string, lt?: string, lte?: string, limit?: number }

/**
 * The part of a utf8 sublevel the log uses. Declared here because abstract-level's sublevel types
 * drop classic-level's `sync` write option, which is the one option the log cannot do without.
 */
interface LogLevel {
  get: (key: string) => Promise<string | undefined>
  batch: (ops: Array<{ type: 'put', key: string, value: string }>, options: { sync: boolean }) => Promise<void>
  values: (bounds: Bounds) => AsyncIterable<string>
  keys: (bounds: Bounds) => AsyncIterable<string>
}

/**
 * A node's receipt log in LevelDB. Each append writes the entry and the new signed head in one
 * synced batch, so after a crash the log holds every acknowledged entry and never half of one;
 * then the head goes to the store's head file (head-file.ts), outside LevelDB, so that LevelDB
 * later losing entries is noticed on open.
 */
export class Log {
  private headDoc: LogHead | null
  private headText: string | null
  private queue: Promise<unknown> = Promise.resolve()
  private closed = false
  private readonly listeners: Array<(headLine: string) => void> = []

  /** @internal use {@link openLog} */
  constructor (
    private readonly store: LogLevel,
    private readonly root: Level<any, any> | null,
    private readonly signer: Signer | null,
    private readonly now: () => number,
    head: string | null,
    private readonly checked: boolean,
    private readonly kept: HeadFile
  ) {
    this.headText = head
    this.headDoc = head === null ? null : parseHead(head)
  }

  /**
   * A value kept in the head file, outside LevelDB (see {@link keepMark}); undefined when none.
   */
  mark (key: string): unknown {
    return this.kept.current.marks[key]
  }

  /**
   * Keeps a value the node must never see go back (the dealer's hand counter) in the head file,
   * synced, so a store whose LevelDB lost it is refused on open and `fairdeal repair` restores it.
   */
  async keepMark (key: string, value: unknown): Promise<void> {
    await this.kept.setMark(key, value)
  }

  /**
   * Keeps a peer's cosignature of this log's head (see src/core/log/witness.ts) in the head file,
   * with the next write: evidence, outside LevelDB, of how far peers saw the log.
   */
  noteCosignature (witness: string, line: string): void {
    this.kept.stageMark(`${COSIGNED_MARK}${witness}`, line)
  }

  /** The cosigned heads kept in the head file, one per witness (the latest each sent back). */
  keptCosignatures (): string[] {
    return cosignaturesOf(this.kept.current)
  }

  /** Calls `listener` with the new head line after each append (to send it to witnesses). */
  onAppend (listener: (headLine: string) => void): void {
    this.listeners.push(listener)
  }

  /** Damage LevelDB reported when the store was opened (kept until repaired), or null. */
  damage (): string | null {
    return this.kept.current.damage
  }

  /** The head line kept in the head file: the last head this store is known to have written. */
  keptHeadLine (): string | null {
    return this.kept.current.head
  }

  /** Peer id of the log's owner: whoever signed the head, or the signer for a new log. */
  get owner (): string | null {
    return this.headDoc?.signer ?? this.signer?.peerId ?? null
  }

  /** The signed head (last seq and its hash), or null for an empty log. */
  head (): LogHead | null {
    return this.headDoc
  }

  /** The head's canonical line, as exported and served. */
  headLine (): string | null {
    return this.headText
  }

  /**
   * Whether `sublevel` is a sublevel of the database the log lives in, so that writes to it can go
   * in an append's own batch (see {@link append}).
   */
  sharesBatch (sublevel: unknown): boolean {
    const db = (this.store as unknown as { db?: unknown }).db
    return typeof sublevel === 'object' && sublevel !== null && db !== undefined && (sublevel as { db?: unknown }).db === db
  }

  /**
   * Appends an entry and returns once it is on disk (synced). Concurrent calls are applied one at
   * a time in call order; a failed append leaves the log as it was. `alongside`: writes to other
   * sublevels of the log's database ({@link sharesBatch}) that go in the same synced batch as the
   * entry and the head, so that they and the entry are on disk together or not at all (a hand's
   * saved state leaving as its record is logged).
   */
  async append (kind: string, payload: unknown, alongside: AlongsideWrite[] = []): Promise<AppendedEntry> {
    const result = this.queue.then(async () => await this.appendNow(kind, payload, alongside))
    this.queue = result.catch(() => {})
    return await result
  }

  private async appendNow (kind: string, payload: unknown, alongside: AlongsideWrite[]): Promise<AppendedEntry> {
    if (this.closed) throw new Error('the log is closed')
    if (this.signer === null) throw new Error('this log was opened without a signer, so it is read-only')
    if (!this.checked) throw new Error('this log was opened without checking it, so it is read-only')
    if (alongside.some(w => !this.sharesBatch(w.sublevel))) throw new Error('a write alongside an append must be to a sublevel of the log\'s own database')
    const seq = this.headDoc === null ? 0 : this.headDoc.body.seq + 1
    const prev = this.headDoc === null ? GENESIS_PREV : this.headDoc.body.hash
    const made = makeEntry(this.signer, { seq, prev, kind, payload, time: this.now() })
    const { head, line: headLine } = makeHead(this.signer, seq, made.hash)
    await this.store.batch([
      { type: 'put', key: entryKey(seq), value: made.line },
      { type: 'put', key: HEAD_KEY, value: headLine },
      ...alongside as unknown as Array<{ type: 'put', key: string, value: string }>
    ], { sync: true })
    this.headDoc = head
    this.headText = headLine
    await this.kept.update({ head: headLine })
    for (const l of this.listeners) l(headLine)
    return made
  }

  /** Entry lines from `from` to `to` (inclusive), exactly as stored. */
  async * lines (range: Range = {}): AsyncGenerator<string> {
    const from = range.from ?? 0
    const to = range.to ?? this.headDoc?.body.seq ?? -1
    if (to < from) return
    for await (const value of this.store.values({ gte: entryKey(from), lte: entryKey(to) })) yield value
  }

  /** Entries from `from` to `to` (inclusive), parsed. */
  async * read (range: Range = {}): AsyncGenerator<LogEntry> {
    for await (const line of this.lines(range)) yield JSON.parse(line) as LogEntry
  }

  /**
   * A copy of the log as lines: the signed head, then the entries of the range that the head
   * covers. Head and range are taken together, so appends made meanwhile do not tear the copy.
   */
  async * copy (range: Range = {}): AsyncGenerator<string> {
    let headLine = this.headText
    if (!this.checked) {
      // Read for verification: when the head file names a later head than LevelDB holds, that one
      // is the log's true end, and the verifier reports the entries LevelDB lost as missing.
      const kept = this.kept.current.head
      const keptSeq = kept === null ? null : parseHead(kept)?.body.seq ?? null
      if (kept !== null && keptSeq !== null && (this.headDoc === null || keptSeq > this.headDoc.body.seq)) headLine = kept
    }
    // An unchecked log may have a head too damaged to name its seq: copy everything, and let the
    // verifier say what is wrong.
    const headSeq = (headLine === null ? null : parseHead(headLine)?.body.seq) ?? Number.MAX_SAFE_INTEGER
    if (headLine !== null) yield headLine
    else if (this.checked) return
    const to = Math.min(range.to ?? headSeq, headSeq)
    yield * this.lines({ from: range.from ?? 0, to })
  }

  /** Waits for pending appends, then closes the database if the log opened it. */
  async close (): Promise<void> {
    if (this.closed) return
    await this.queue
    this.closed = true
    if (this.checked) await this.kept.flush().catch(() => {})
    await this.kept.close()
    if (this.root !== null) await this.root.close()
  }
}

/**
 * Opens (or creates) a node's log, checking that what is on disk is whole: the head verifies, its
 * entry exists with the hash it names, nothing lies beyond it, and it belongs to `signer`.
 *
 * @throws LogInUseError when another process holds the database
 * @throws LogNotFoundError when `create` is false and there is no database
 * @throws LogStateError when the stored log is inconsistent or owned by another identity
 * @throws StoreDamagedError when LevelDB's files are damaged or it holds fewer entries than the
 *   head file vouches for (checked opens only; unchecked ones report it through `copy()`)
 */
export async function openLog (target: string | OpenLogOptions, signer?: Signer | null): Promise<Log> {
  const options: OpenLogOptions = typeof target === 'string' ? { path: target } : target
  const who = signer ?? options.signer ?? null
  let root: Level<any, any> | null = null
  let db: Level<any, any>
  let where: string
  if (options.db !== undefined) {
    db = options.db
    where = db.location
  } else if (options.path !== undefined) {
    where = options.path
    root = await openStoreDb(where, { create: options.create })
    db = root
  } else {
    throw new TypeError('openLog needs a path or a db')
  }
  try {
    await db.open()
  } catch (err) {
    if (isLocked(err)) throw new LogInUseError(where, { cause: err })
    throw err
  }
  try {
    const store = db.sublevel<string, string>(options.sublevel ?? 'log', { keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as LogLevel
    const checked = options.checkOnOpen !== false
    const kept = await readHeadFile(where)
    const state: HeadFileState = kept ?? { head: null, marks: {}, damage: null }
    let head: string | null
    if (checked) {
      if (state.damage !== null) throw new StoreDamagedError(`the store in ${where} is damaged: ${state.damage}: ${repairHint(where)}`)
      head = await loadHead(store, where, who)
      await checkAgainstKept(store, where, head, state.head)
    } else {
      head = await store.get(HEAD_KEY) ?? null
    }
    const headFile = new HeadFile(where, state)
    // A store from before head files, or one whose last append crashed between LevelDB and the
    // head file: the head file catches up now.
    if (checked && head !== null && head !== state.head) await headFile.update({ head })
    return new Log(store, root, who, options.now ?? Date.now, head, checked, headFile)
  } catch (err) {
    if (root !== null) await root.close().catch(() => {})
    throw err
  }
}

/** A head line's document when it names a seq (nothing else checked: the verifier does that). */
export function parseHead (line: string): LogHead | null {
  try {
    const head = JSON.parse(line) as LogHead
    return Number.isSafeInteger(head?.body?.seq) && head.body.seq >= 0 ? head : null
  } catch { return null }
}

/**
 * LevelDB's head must be the head file's or extend it: fewer entries than the head file vouches
 * for means LevelDB lost some (a truncated or damaged `.log` file), another entry at that seq
 * means the store was replaced under it.
 */
async function checkAgainstKept (store: LogLevel, where: string, head: string | null, kept: string | null): Promise<void> {
  if (kept === null) return
  const k = checkLine(kept, null, nativeVerifyDocument)
  if (k.type !== 'head' || !k.authentic) throw new StoreDamagedError(`the head file of ${where} holds no valid signed head (${k.problems.join('; ')}): ${repairHint(where)}`)
  const keptSeq = k.seq as number
  const seq = head === null ? -1 : (parseHead(head)?.body.seq ?? -1)
  if (seq < keptSeq) {
    const lost = seq + 1 === keptSeq ? `seq ${keptSeq} is` : `seq ${seq + 1}..${keptSeq} are`
    throw new StoreDamagedError(`the store in ${where} has lost log entries: LevelDB holds ${seq < 0 ? 'none' : `up to seq ${seq}`}, its head file says seq ${keptSeq}, so ${lost} missing: ${repairHint(where)}`)
  }
  const line = await store.get(entryKey(keptSeq))
  if (line === undefined || checkLine(line, null, nativeVerifyDocument).hash !== k.hash) {
    throw new StoreDamagedError(`the store in ${where} does not extend the head in its head file: entry ${keptSeq} is ${line === undefined ? 'missing' : 'another one'}: ${repairHint(where)}`)
  }
}

async function loadHead (store: LogLevel, where: string, signer: Signer | null): Promise<string | null> {
  const headLine = await store.get(HEAD_KEY)
  if (headLine === undefined) {
    for await (const key of store.keys({ gte: ENTRY_PREFIX, lt: ENTRY_PREFIX + '~', limit: 1 })) {
      throw new LogStateError(`the log in ${where} has entries (first: ${key}) but no head`)
    }
    return null
  }
  const head = checkLine(headLine, null, nativeVerifyDocument)
  if (head.type !== 'head' || !head.authentic) {
    throw new LogStateError(`the log head in ${where} does not verify: ${head.problems.join('; ')}`)
  }
  if (signer !== null && head.owner !== signer.peerId) {
    throw new LogStateError(`the log in ${where} belongs to ${head.owner ?? '?'}, not to this node (${signer.peerId})`)
  }
  const seq = head.seq as number
  const last = await store.get(entryKey(seq))
  const entry = last === undefined ? undefined : checkLine(last, null, nativeVerifyDocument)
  if (entry === undefined || !entry.authentic || entry.hash !== head.hash || entry.owner !== head.owner) {
    throw new LogStateError(`the log in ${where} is damaged: the entry at its head (seq ${seq}) is ${entry === undefined ? 'missing' : 'not the one the head names'}`)
  }
  for await (const key of store.keys({ gt: entryKey(seq), lt: ENTRY_PREFIX + '~', limit: 1 })) {
    throw new LogStateError(`the log in ${where} has an entry beyond its head (seq ${seq}): ${key}`)
  }
  return headLine
}
