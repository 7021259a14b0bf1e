import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClassicLevel } from 'classic-level'
import type { Level } from 'level'
import { checkLine } from '../core/log/check.js'
import { nativeVerifyDocument } from '../crypto/native-crypto.js'
import { GENESIS_PREV, makeHead } from '../core/log/format.js'
import type { Signer } from '../core/identity.js'
import { LogInUseError, StoreDamagedError } from './errors.js'
import { stateValueEncoding } from './state-encoding.js'
import { headFilePath, readHeadFile, writeHeadFile, type HeadFileState } from './head-file.js'
import { ENTRY_PREFIX, HEAD_KEY, entryKey } from './log.js'
import { openStoreDb } from './store-db.js'

/** The marks that are hand counters: `dealer/TABLE/meta` = { nextHand, prevCommit }. */
const COUNTER_MARK = /^dealer\/.+\/meta$/

export interface RepairReport {
  /** What is wrong, one line each; empty for a whole store. */
  problems: string[]
  /** What the repair does (or would do), one line each. */
  actions: string[]
  /** Entries kept: seq 0 .. kept − 1 verify and link. */
  kept: number
  /** Seq of the head before (the highest of LevelDB's and the head file's), or null. */
  headBefore: number | null
  /** Where the damaged store was copied before anything changed (only when applied). */
  backup?: string
  /** Where the entries that were taken out of the log were written (only when applied). */
  setAside?: string
}

interface LogLevel {
  get: (key: string) => Promise<string | undefined>
  values: (bounds: { gte?: string, lt?: string }) => AsyncIterable<string>
  keys: (bounds: { gte?: string, lt?: string }) => AsyncIterable<string>
  batch: (ops: Array<{ type: 'put' | 'del', key: string, value?: string }>, options: { sync: boolean }) => Promise<void>
}

interface JsonLevel {
  get: (key: string) => Promise<unknown>
  put: (key: string, value: unknown, options: { sync: boolean }) => Promise<void>
}

/**
 * Checks a stopped node's store and, when `apply`, repairs it:
 * 1. a store LevelDB cannot open (CURRENT or MANIFEST bad or missing, a table file missing) goes
 *    through LevelDB's own RepairDB, which rebuilds them from the table and log files left;
 * 2. the log keeps its longest prefix from seq 0 whose entries are the owner's and link (checked
 *    like `verify --chain-only`); later entries are taken out and written to a file beside it;
 * 3. the head is re-signed at the last kept entry and written to LevelDB and the head file, and
 *    the damage mark is cleared;
 * 4. a dealer's hand counter the head file kept is put back where LevelDB lost it (never lowered).
 * Before anything changes, the whole store (LevelDB directory and head file) is copied aside.
 * Without `apply`, nothing in the data directory changes (LevelDB's repair runs on a copy).
 */
export async function repairStore (dbPath: string, signer: Signer, options: { apply: boolean, now?: () => number }): Promise<RepairReport> {
  const now = options.now ?? Date.now
  const stamp = new Date(now()).toISOString().replace(/[:.]/g, '-')
  const problems: string[] = []
  const actions: string[] = []
  const report: RepairReport = { problems, actions, kept: 0, headBefore: null }
  const kept: HeadFileState = await readHeadFile(dbPath).catch((err: unknown) => {
    if (!(err instanceof StoreDamagedError)) throw err
    problems.push(err.message)
    actions.push(`rewrite the head file ${headFilePath(dbPath)}`)
    return null
  }) ?? { head: null, marks: {}, damage: null }

  let db: Level<string, any> | null = null
  let scratch: string | null = null
  let where = dbPath
  try {
    try {
      db = await openStoreDb(where, { create: false })
    } catch (err) {
      if (err instanceof LogInUseError) throw err
      if (!(err instanceof StoreDamagedError)) throw err
      problems.push(err.message)
      actions.push('rebuild LevelDB\'s CURRENT and MANIFEST from the table and log files left (LevelDB RepairDB)')
      if (options.apply) {
        report.backup = await backup(dbPath, stamp)
      } else {
        // Preview on a copy: LevelDB's repair rewrites the directory it is given.
        scratch = await mkdtemp(join(tmpdir(), 'fairdeal-repair-'))
        where = join(scratch, 'db')
        await cp(dbPath, where, { recursive: true }).catch(async () => { await mkdir(where) })
        await rm(headFilePath(where), { force: true })
      }
      await mkdir(where, { recursive: true })
      await ClassicLevel.repair(where)
      db = new (await import('level')).Level<string, any>(where, { createIfMissing: true })
      await db.open()
    }
    const damage = (await readHeadFile(where).catch(() => null))?.damage ?? kept.damage
    if (damage !== null) {
      if (!problems.some(p => p.includes(damage))) problems.push(`LevelDB reported damage: ${damage}`)
      actions.push('clear the damage mark of the head file')
    }
    const log = db.sublevel<string, string>('log', { keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as LogLevel
    const state = db.sublevel<string, unknown>('state', { keyEncoding: 'utf8', valueEncoding: stateValueEncoding }) as unknown as JsonLevel

    // The longest prefix of the owner's entries, from seq 0, that link.
    let prev = GENESIS_PREV
    let keep = 0
    for await (const line of log.values({ gte: ENTRY_PREFIX, lt: ENTRY_PREFIX + '~' })) {
      const c = checkLine(line, null, nativeVerifyDocument)
      if (c.type !== 'entry' || !c.authentic || c.owner !== signer.peerId || c.seq !== keep || c.prev !== prev) break
      prev = c.hash as string
      keep++
    }
    let beyond = 0
    for await (const _ of log.keys({ gte: entryKey(keep), lt: ENTRY_PREFIX + '~' })) beyond++
    const dbHeadLine = await log.get(HEAD_KEY) ?? null
    const dbHead = dbHeadLine === null ? null : checkLine(dbHeadLine, null, nativeVerifyDocument)
    const keptHead = kept.head === null ? null : checkLine(kept.head, null, nativeVerifyDocument)
    const seqOf = (c: ReturnType<typeof checkLine> | null): number => c !== null && c.type === 'head' && c.authentic ? c.seq as number : -1
    const before = Math.max(seqOf(dbHead), seqOf(keptHead))
    report.headBefore = before < 0 ? null : before
    report.kept = keep
    const lastKept = keep - 1
    const headIsRight = dbHead !== null && dbHead.authentic && dbHead.owner === signer.peerId && dbHead.seq === lastKept && dbHead.hash === prev
    if (before > lastKept) {
      problems.push(`the log lost entries: its head ${seqOf(keptHead) > seqOf(dbHead) ? 'file' : ''} says seq ${before}, but only seq 0..${lastKept} are whole and link (seq ${keep}..${before} lost or broken)`.replace('head  says', 'head says'))
    }
    if (beyond > 0) actions.push(`take out the ${beyond} entr${beyond === 1 ? 'y' : 'ies'} from seq ${keep} on (they do not link to seq 0..${lastKept}) and write them to a file beside the store`)
    if (!headIsRight || kept.head !== dbHeadLine || before > lastKept) {
      actions.push(lastKept < 0 ? 'empty the log (no entry is left): no head' : `re-sign the head at seq ${lastKept}, the last entry kept, in LevelDB and the head file`)
      if (before > lastKept) actions.push(`peers that witnessed this log up to seq ${before} will report it as rolled back: that is the truth, the entries are gone (restore a backup of the data directory instead if you have one)`)
    }
    const restore: Array<[string, unknown]> = []
    for (const [key, value] of Object.entries(kept.marks)) {
      if (!COUNTER_MARK.test(key)) continue
      const v = value as { nextHand?: unknown }
      const current = await state.get(key) as { nextHand?: number } | undefined
      if (typeof v.nextHand === 'number' && (current === undefined || (current.nextHand ?? 0) < v.nextHand)) {
        problems.push(`LevelDB lost the hand counter ${key} (it says ${current?.nextHand ?? 'nothing'}, the head file ${v.nextHand})`)
        actions.push(`put the hand counter ${key} back to next hand ${v.nextHand}`)
        restore.push([key, value])
      }
    }

    if (!options.apply || problems.length === 0) return report
    report.backup ??= await backup(dbPath, stamp)
    if (beyond > 0) {
      const lines: string[] = []
      for await (const line of log.values({ gte: entryKey(keep), lt: ENTRY_PREFIX + '~' })) lines.push(line)
      for (const h of [dbHeadLine, kept.head]) if (h !== null) lines.unshift(h)
      report.setAside = join(dbPath, '..', `repair-${stamp}-set-aside.jsonl`)
      await writeFile(report.setAside, lines.join('\n') + '\n', { mode: 0o600 })
    }
    const ops: Array<{ type: 'put' | 'del', key: string, value?: string }> = []
    for await (const key of log.keys({ gte: entryKey(keep), lt: ENTRY_PREFIX + '~' })) ops.push({ type: 'del', key })
    const head = lastKept < 0 ? null : makeHead(signer, lastKept, prev).line
    ops.push(head === null ? { type: 'del', key: HEAD_KEY } : { type: 'put', key: HEAD_KEY, value: head })
    await log.batch(ops, { sync: true })
    for (const [key, value] of restore) await state.put(key, value, { sync: true })
    await writeHeadFile(dbPath, { head, marks: kept.marks, damage: null })
    return report
  } finally {
    await db?.close().catch(() => {})
    if (scratch !== null) await rm(scratch, { recursive: true, force: true })
  }
}

/** Copies the store (LevelDB directory and head file) aside, before a repair changes it. */
async function backup (dbPath: string, stamp: string): Promise<string> {
  const to = `${dbPath}.before-repair-${stamp}`
  await cp(dbPath, to, { recursive: true, errorOnExist: true, force: false }).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err
    await mkdir(to)
  })
  await cp(headFilePath(dbPath), join(to, 'head-file.json')).catch(() => {})
  return to
}
