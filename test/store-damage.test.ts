// Damaged disks (issue 9, item 3): each kind of damage is made for real on a LevelDB directory in
// a temp dir, then opened. The store refuses it in one line (never a stack trace, never a new
// store over the old one); `verify --data` names what was lost; `repair --yes` recovers.
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { existsSync } from 'node:fs'
import { mkdtemp, open, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import { logDbPath, openLog } from '../src/store/log.js'
import { StoreDamagedError } from '../src/store/errors.js'
import { headFilePath, readHeadFile } from '../src/store/head-file.js'
import { repairStore } from '../src/store/repair.js'
import { verifyLog, formatFailure } from '../src/core/log/index.js'
import { loadOrCreateIdentity } from '../src/net/identity.js'
import { nativeSigner } from '../src/crypto/native-crypto.js'
import type { Signer } from '../src/core/identity.js'
import { testPayload } from './helpers/log-fixtures.js'
import { fairdeal, withLines } from './helpers/cli.js'
import { TestTable } from './helpers/table-nodes.js'
import { dealerMetaKey } from '../src/protocol/dealer.js'
import { cliInProcess } from './helpers/cli-in-process.js'
import { cosignHead } from '../src/core/log/witness.js'
import { SEAT } from './helpers/log-fixtures.js'
import type { LogHead } from '../src/core/log/format.js'

const root = join(import.meta.dirname, '..')
const dirs: string[] = []
afterEach(async () => { for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true }) })

beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'src', 'cli', 'commands', 'repair.js'))) throw new Error('run `npx tsc -p tsconfig.json` first (npm test does)')
})

/** A node's data directory (identity + DIR/db) whose log holds `n` entries. */
async function dataDir (n: number): Promise<{ dir: string, db: string, signer: Signer }> {
  const dir = await mkdtemp(join(tmpdir(), 'fairdeal-damage-'))
  dirs.push(dir)
  const identity = await loadOrCreateIdentity(dir)
  const signer = nativeSigner(identity.seed, identity.peerId)
  const db = logDbPath(dir)
  const log = await openLog(db, signer)
  for (let i = 0; i < n; i++) await log.append('receipt', testPayload(i))
  await log.close()
  return { dir, db, signer }
}

async function newestLogFile (db: string): Promise<string> {
  const name = (await readdir(db)).filter(f => f.endsWith('.log')).sort().pop()
  if (name === undefined) throw new Error('no .log file')
  return join(db, name)
}

/** Truncates the newest LevelDB write-ahead log as a crash of the disk would: its last records go. */
async function truncateNewestLog (db: string, entries: number, of: number): Promise<void> {
  const file = await newestLogFile(db)
  const { size } = await stat(file)
  await truncate(file, Math.floor(size * (of - entries) / of) - 10)
}

/** Moves LevelDB's data into a table file (a reopen compacts the write-ahead log). */
async function compact (db: string): Promise<void> {
  const level = new Level(db)
  await level.open()
  await level.close()
}

async function verifyLines (db: string): Promise<string[]> {
  const log = await openLog({ path: db, create: false, checkOnOpen: false })
  const out: string[] = []
  try {
    await verifyLog(log.copy(), { verifyPayload: null, store: true, onFailure: f => out.push(formatFailure(f)) })
  } finally { await log.close() }
  return out
}

/** `fairdeal node` (spawned) on a one-table config of DIR's identity: exits 2 with one line on stderr, started nothing; that line. */
async function nodeRefusal (dir: string): Promise<string> {
  const config = join(dir, 'node.json')
  const { peerId } = await loadOrCreateIdentity(dir)
  await writeFile(config, JSON.stringify({ data: '.', listen: ['/ip4/127.0.0.1/tcp/0'], table: { id: 't', game: 'duo', scheme: 'atout-v1', dealer: peerId, seats: [peerId, 'robot'] } }))
  const node = await fairdeal('node', '--config', config)
  expect(node.code).toBe(2)
  expect(node.stderr.trim().split('\n')).toHaveLength(1)
  expect(node.stdout).not.toMatch(/node started|control endpoint/)
  return node.stderr
}

describe('a damaged store is refused in one line', () => {
  it('the head file follows every append, beside the LevelDB directory', async () => {
    const { db } = await dataDir(3)
    const kept = await readHeadFile(db)
    expect(kept?.damage).toBeNull()
    expect(JSON.parse(kept?.head as string).body.seq).toBe(2)
    expect(headFilePath(db)).toBe(`${db}-head.json`)
    expect((await stat(headFilePath(db))).mode & 0o777).toBe(0o600)
  })

  it('a truncated newest .log file: refused naming the lost entries; verify names them missing', async () => {
    const { db, signer } = await dataDir(12)
    await truncateNewestLog(db, 3, 12)
    const err = await openLog(db, signer).catch((e: unknown) => e) as Error
    expect(err).toBeInstanceOf(StoreDamagedError)
    expect(err.message).toMatch(/has lost log entries: LevelDB holds up to seq \d+, its head file says seq 11, so seq \d+\.\.11 are missing/)
    expect(err.message).not.toMatch(/\n/)
    const failures = await verifyLines(db)
    expect(failures).toHaveLength(1)
    expect(failures[0]).toMatch(/^seq (8|9)\.\.11: missing \(\d entries\): the signed head says the log ends at seq 11$/)
    // Still refused after a read-only open compacted the damage away.
    await expect(openLog(db, signer)).rejects.toThrow(StoreDamagedError)
  })

  it('a corrupted record in the newest .log file: LevelDB drops it, the store is refused until repaired', async () => {
    const { db, signer } = await dataDir(12)
    const file = await newestLogFile(db)
    const fh = await open(file, 'r+')
    await fh.write(Buffer.from('XXXXXXXX'), 0, 8, 2000)
    await fh.close()
    const err = await openLog(db, signer).catch((e: unknown) => e) as Error
    expect(err).toBeInstanceOf(StoreDamagedError)
    expect(err.message).toMatch(/LevelDB dropped data of a damaged file .*checksum mismatch/)
    // The next open no longer sees LevelDB's report, but the head file kept it.
    await expect(openLog(db, signer)).rejects.toThrow(/LevelDB dropped data/)
  })

  it('a deleted CURRENT: refused, never opened as a new store, its files kept', async () => {
    const { db, signer } = await dataDir(4)
    await rm(join(db, 'CURRENT'))
    const before = (await readdir(db)).sort()
    await expect(openLog(db, signer)).rejects.toThrow(/its CURRENT file is missing \(LevelDB files are there; never opened as a new store\)/)
    expect((await readdir(db)).sort()).toEqual(before)
  })

  it('a missing .ldb, a bad CURRENT, a bad MANIFEST: one line each', async () => {
    const ldb = await dataDir(4)
    await compact(ldb.db)
    const table = (await readdir(ldb.db)).find(f => f.endsWith('.ldb')) as string
    await rm(join(ldb.db, table))
    await expect(openLog(ldb.db, ldb.signer)).rejects.toThrow(/^the store in .* is damaged: LevelDB cannot open it \(Corruption: 1 missing files; e\.g\.: .*\.ldb\): see 'fairdeal verify --data .*', then 'fairdeal repair --data .*'$/)

    const current = await dataDir(4)
    await writeFile(join(current.db, 'CURRENT'), 'MANIFEST-999999\n')
    await expect(openLog(current.db, current.signer)).rejects.toThrow(StoreDamagedError)

    const manifest = await dataDir(4)
    const name = (await readdir(manifest.db)).find(f => f.startsWith('MANIFEST-')) as string
    await writeFile(join(manifest.db, name), 'not a manifest')
    await expect(openLog(manifest.db, manifest.signer)).rejects.toThrow(/is damaged: LevelDB cannot open it \(Corruption: /)
  })

  it('LevelDB files all gone but the head file left: refused, not started over', async () => {
    const { db, signer } = await dataDir(2)
    await rm(db, { recursive: true })
    await expect(openLog(db, signer)).rejects.toThrow(/its LevelDB files are missing/)
  })

  it('an older store without a head file gets one on its first checked open', async () => {
    const { db, signer } = await dataDir(2)
    await rm(headFilePath(db))
    const log = await openLog(db, signer)
    await log.close()
    expect(JSON.parse((await readHeadFile(db))?.head as string).body.seq).toBe(1)
  })
})

describe('fairdeal repair', () => {
  it('a truncated log: says what it would do, changes nothing without --yes, then repairs and the log continues', async () => {
    const { dir, db, signer } = await dataDir(12)
    await truncateNewestLog(db, 3, 12)
    const preview = await repairStore(db, signer, { apply: false })
    expect(preview.problems.join('\n')).toMatch(/lost entries/)
    await expect(openLog(db, signer)).rejects.toThrow(StoreDamagedError)
    const done = await repairStore(db, signer, { apply: true })
    expect(done.backup).toMatch(/db\.before-repair-/)
    expect(existsSync(join(done.backup as string, 'head-file.json'))).toBe(true)
    const log = await openLog(db, signer)
    expect(log.head()?.body.seq).toBe(done.kept - 1)
    await log.append('receipt', testPayload(99))
    await log.close()
    expect(await verifyLines(db)).toEqual([])
    expect((await repairStore(db, signer, { apply: false })).problems).toEqual([])
    expect(dir).toBeTruthy()
  })

  it('a deleted CURRENT and a missing table file: LevelDB rebuilds, the entries that are left are kept', async () => {
    const { db, signer } = await dataDir(6)
    await rm(join(db, 'CURRENT'))
    const done = await repairStore(db, signer, { apply: true })
    expect(done.kept).toBe(6)
    const log = await openLog(db, signer)
    expect(log.head()?.body.seq).toBe(5)
    await log.close()
  })

  it('the CLI: verify --data exits 1 naming the lost entries, node refuses, repair needs --yes', async () => {
    const { dir, db } = await dataDir(12)
    await truncateNewestLog(db, 3, 12)
    const verified = withLines(await cliInProcess('verify', '--data', dir, '--chain-only', '--workers', '0'))
    expect(verified.code).toBe(1)
    expect(verified.lines[0]).toMatch(/^seq (8|9)\.\.11: missing/)
    expect(await nodeRefusal(dir)).toMatch(/^fairdeal node: the store in .* has lost log entries/)
    const preview = withLines(await cliInProcess('repair', '--data', dir))
    expect(preview.code).toBe(1)
    expect(preview.lines.at(-1)).toBe(`run 'fairdeal repair --data ${dir} --yes' to do it`)
    const repaired = await fairdeal('repair', '--data', dir, '--yes')
    expect(repaired.code).toBe(0)
    expect(repaired.lines.at(-1)).toMatch(/^repaired: the log holds seq 0\.\.\d+$/)
    expect(await verifyLines(db)).toEqual([])
    expect(await readFile(headFilePath(db), 'utf8')).toMatch(/"damage":null/)
  })
})

// Issue 18: a truncated or bit-flipped table file opened fine (LevelDB reads a table file when a key
// in it is asked for) and the node crashed later with an uncaught LEVEL_IO_ERROR / LEVEL_CORRUPTION,
// once after networking had started. The node reads its whole store before anything starts.
describe('a damaged .ldb file: fairdeal node refuses it in one line before it starts', () => {
  for (const damage of ['truncated', 'bit-flipped'] as const) {
    it(`a ${damage} table file`, async () => {
      const { dir, db } = await dataDir(40)
      await compact(db)
      const ldb = (await readdir(db)).find(f => f.endsWith('.ldb'))
      if (ldb === undefined) throw new Error('no table file after compaction')
      const file = join(db, ldb)
      if (damage === 'truncated') {
        await truncate(file, Math.floor((await stat(file)).size / 2))
      } else {
        const bytes = await readFile(file)
        for (let i = 1_000; i < 1_100; i++) bytes[i] ^= 0xff
        await writeFile(file, bytes)
      }
      expect(await nodeRefusal(dir)).toMatch(/^fairdeal node: the store in .* is damaged: LevelDB cannot read it \((IO error|Corruption): .*\): see 'fairdeal verify --data /)
    })
  }
})

describe('heads peers witnessed, kept in the head file', () => {
  it('after a repair that lost entries, verify --data reports the log rolled back against a peer\'s cosignature', async () => {
    const { dir, db, signer } = await dataDir(12)
    const log = await openLog(db, signer)
    // What the announcer keeps when a member answers with its cosignature of the head (seq 11).
    log.noteCosignature(SEAT.peerId, cosignHead(SEAT, log.head() as LogHead, 1_765_000_000_000).line)
    await log.close()
    expect((await readHeadFile(db))?.marks[`cosigned/${SEAT.peerId}`]).toMatch(/"type":"log-witness"/)
    const whole = await cliInProcess('verify', '--data', dir, '--chain-only', '--workers', '0')
    expect(whole.stdout).toBe('12 passed, 0 failed\n')

    // The disk then loses seq 9..11 (LevelDB's table file with them goes; the reopen above moved
    // them there), and the user repairs.
    await rm(join(db, (await readdir(db)).find(f => f.endsWith('.ldb')) as string))
    await repairStore(db, signer, { apply: true })
    const r = await cliInProcess('verify', '--data', dir, '--chain-only', '--workers', '0')
    expect(r.code).toBe(1)
    const lines = r.stdout.split('\n')
    expect(lines[0]).toMatch(new RegExp(`^witness: seq 11: rolled back: witness ${SEAT.peerId} received the owner's signed head at seq 11 .* on 2025-12-06T05:46:40.000Z, but this log is empty$`))
    expect(lines.at(-2)).toBe('0 passed, 1 failed')
  })
})

describe('the dealer\'s hand counter never goes back', () => {
  it('LevelDB losing it is refused at start; repair puts it back and the next hand follows on', async () => {
    const table = await TestTable.prepare({ game: 'duo', scheme: 'atout-v1', seats: 2, robots: [1] })
    try {
      const dealer = await table.start(0)
      expect(await dealer.daemon.deal()).toBe(1)
      expect(await dealer.daemon.deal()).toBe(2)
      await table.stop(0)
      const dir = table.dataDir(0)
      const key = dealerMetaKey(table.local.configs[0].table.id)
      // What a damaged LevelDB does: the counter's last writes are gone.
      const db = new Level<string, unknown>(logDbPath(dir), { valueEncoding: 'json' })
      await db.sublevel<string, unknown>('state', { valueEncoding: 'json' }).del(key)
      await db.close()
      const refused = await table.start(0).catch((e: unknown) => e) as Error
      expect(refused).toBeInstanceOf(StoreDamagedError)
      expect(refused.message).toMatch(/lost the dealer's hand counter of table .* \(LevelDB: next hand none, head file: 3\)/)
      const identity = await loadOrCreateIdentity(dir)
      const report = await repairStore(logDbPath(dir), nativeSigner(identity.seed, identity.peerId), { apply: true })
      expect(report.actions).toContain(`put the hand counter ${key} back to next hand 3`)
      const again = await table.start(0)
      expect(await again.daemon.deal()).toBe(3)
    } finally {
      await table.cleanup()
    }
  })
})
