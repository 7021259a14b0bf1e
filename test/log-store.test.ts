import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import { openLog } from '../src/store/log.js'
import { headFilePath } from '../src/store/head-file.js'
import { LogInUseError, LogNotFoundError, LogStateError } from '../src/store/errors.js'
import { verifyLog, formatFailure, MAX_ENTRY_BYTES } from '../src/core/log/index.js'
import { OWNER, STRANGER, testPayload, verifyTestPayload } from './helpers/log-fixtures.js'

const dirs: string[] = []
async function tempDir (): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fairdeal-log-'))
  dirs.push(dir)
  return dir
}
afterEach(async () => {
  // The head file lies beside the store's directory (head-file.ts), here in the system's temp directory.
  for (const dir of dirs.splice(0)) await Promise.all([rm(dir, { recursive: true, force: true }), rm(headFilePath(dir), { force: true })])
})

async function verifyAll (lines: AsyncIterable<string>): Promise<{ passed: number, failures: string[] }> {
  const failures: string[] = []
  const verdict = await verifyLog(lines, { verifyPayload: verifyTestPayload, onFailure: f => failures.push(formatFailure(f)) })
  return { passed: verdict.passed, failures }
}

describe('the LevelDB log', () => {
  it('appends, links, signs the head, and verifies after reopening', async () => {
    const dir = await tempDir()
    let clock = 1_700_000_000_000
    const log = await openLog({ path: dir, signer: OWNER, now: () => clock++ })
    expect(log.head()).toBeNull()
    const first = await log.append('receipt', testPayload(0))
    expect(first.entry.body).toMatchObject({ seq: 0, prev: '0'.repeat(64), kind: 'receipt', time: 1_700_000_000_000 })
    const second = await log.append('abort', testPayload(1))
    expect(second.entry.body.prev).toBe(first.hash)
    expect(log.head()?.body).toEqual({ seq: 1, hash: second.hash })
    await log.close()

    const again = await openLog(dir, OWNER)
    expect(again.head()?.body).toEqual({ seq: 1, hash: second.hash })
    const third = await again.append('receipt', testPayload(2))
    expect(third.entry.body.prev).toBe(second.hash)
    const read = []
    for await (const e of again.read()) read.push(e.body.seq)
    expect(read).toEqual([0, 1, 2])
    expect(await verifyAll(again.copy())).toEqual({ passed: 3, failures: [] })
    await again.close()
  })

  it('serializes concurrent appends into one unbroken chain', async () => {
    const log = await openLog(await tempDir(), OWNER)
    const appended = await Promise.all(Array.from({ length: 25 }, async (_, i) => await log.append('receipt', testPayload(i))))
    expect(appended.map(a => a.entry.body.seq)).toEqual(Array.from({ length: 25 }, (_, i) => i))
    expect(appended.map(a => (a.entry.body.payload as { body: { hand: number } }).body.hand)).toEqual(appended.map((_, i) => i))
    expect(await verifyAll(log.copy())).toEqual({ passed: 25, failures: [] })
    await log.close()
  })

  it('a refused append changes nothing', async () => {
    const log = await openLog(await tempDir(), OWNER)
    await log.append('receipt', testPayload(0))
    const head = log.headLine()
    await expect(log.append('receipt', { big: 'x'.repeat(MAX_ENTRY_BYTES) })).rejects.toThrow(/limit is/)
    await expect(log.append('Bad Kind', 1)).rejects.toThrow(/kind must match/)
    await expect(log.append('receipt', 1.5)).rejects.toThrow(/safe integers/)
    expect(log.headLine()).toBe(head)
    await log.append('receipt', testPayload(1))
    expect(await verifyAll(log.copy())).toEqual({ passed: 2, failures: [] })
    await log.close()
  })

  it('copies a range with the head first', async () => {
    const log = await openLog(await tempDir(), OWNER)
    for (let i = 0; i < 6; i++) await log.append('receipt', testPayload(i))
    const lines = []
    for await (const line of log.copy({ from: 2, to: 4 })) lines.push(line)
    expect(lines[0]).toBe(log.headLine())
    expect(lines.slice(1).map(l => (JSON.parse(l) as { body: { seq: number } }).body.seq)).toEqual([2, 3, 4])
    const failures: string[] = []
    await verifyLog(lines, { verifyPayload: verifyTestPayload, from: 2, to: 4, onFailure: f => failures.push(formatFailure(f)) })
    expect(failures).toEqual([])
    await log.close()
  })

  it('refuses a second open of the same directory with a clear error', async () => {
    const dir = await tempDir()
    const log = await openLog(dir, OWNER)
    const err = await openLog(dir, OWNER).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(LogInUseError)
    expect((err as Error).message).toBe(`${dir} is already in use (is the node running?)`)
    await log.close()
  })

  it('refuses a log that belongs to another identity', async () => {
    const dir = await tempDir()
    const log = await openLog(dir, OWNER)
    await log.append('receipt', testPayload(0))
    await log.close()
    await expect(openLog(dir, STRANGER)).rejects.toThrow(LogStateError)
    await expect(openLog(dir, STRANGER)).rejects.toThrow(`belongs to ${OWNER.peerId}, not to this node (${STRANGER.peerId})`)
  })

  it('opens read-only without a signer, and only where a log exists when asked not to create', async () => {
    const dir = await tempDir()
    await expect(openLog({ path: join(dir, 'none'), create: false })).rejects.toThrow(LogNotFoundError)
    // A file named as the data directory (e.g. a node's config): no log there, said plainly.
    await writeFile(join(dir, 'node.json'), '{}')
    await expect(openLog({ path: join(dir, 'node.json', 'db'), create: false })).rejects.toThrow(LogNotFoundError)
    await expect(openLog({ path: join(dir, 'node.json', 'db') })).rejects.toThrow(LogNotFoundError)
    const log = await openLog(dir, OWNER)
    await log.append('receipt', testPayload(0))
    await log.close()
    const ro = await openLog({ path: dir, create: false })
    expect(ro.owner).toBe(OWNER.peerId)
    await expect(ro.append('receipt', testPayload(1))).rejects.toThrow(/read-only/)
    await ro.close()
  })

  it('shares a database with other node data through its sublevel', async () => {
    const db = new Level<string, string>(await tempDir())
    const secrets = db.sublevel('secrets')
    await secrets.put('hand-1', 'pending secret')
    const log = await openLog({ db, signer: OWNER })
    await log.append('receipt', testPayload(0))
    await log.close() // does not close the shared database
    expect(await secrets.get('hand-1')).toBe('pending secret')
    const again = await openLog({ db, signer: OWNER })
    expect(again.head()?.body.seq).toBe(0)
    await db.close()
  })

  it('refuses a store whose head names an entry that is not there', async () => {
    const dir = await tempDir()
    const log = await openLog(dir, OWNER)
    await log.append('receipt', testPayload(0))
    await log.append('receipt', testPayload(1))
    await log.close()
    const db = new Level<string, string>(dir)
    await db.sublevel('log').del('e' + '1'.padStart(16, '0'))
    await db.close()
    const err = await openLog(dir, OWNER).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(LogStateError)
    expect((err as Error).message).toMatch(/damaged: the entry at its head \(seq 1\) is missing/)
  })
})

describe('crash safety', () => {
  const appender = join(import.meta.dirname, 'helpers', 'log-appender.mjs')
  beforeAll(() => {
    if (!existsSync(join(import.meta.dirname, '..', 'dist', 'src', 'store', 'log.js'))) {
      throw new Error('this test runs a child process from the build: run `npx tsc -p tsconfig.json` (npm test does) first')
    }
  })

  /** Starts the appender; resolves once it has acknowledged `acks` appends, with the last acked seq. */
  async function runAppender (dir: string, acks: number): Promise<{ child: ChildProcess, lastAcked: () => number, opened: number }> {
    const child = spawn(process.execPath, [appender, dir], { stdio: ['ignore', 'pipe', 'pipe'] })
    let last = -1
    let opened = -2
    let stderr = ''
    child.stderr?.on('data', (d: Buffer) => { stderr += d.toString() })
    await new Promise<void>((resolve, reject) => {
      let seen = 0
      let buffer = ''
      child.stdout?.on('data', (d: Buffer) => {
        buffer += d.toString()
        const lines = buffer.split('\n')
        buffer = lines.pop() as string
        for (const line of lines) {
          if (line.startsWith('open ')) { opened = Number(line.slice(5)); continue }
          last = Number(line)
          if (++seen === acks) resolve()
        }
      })
      child.on('exit', (code) => { reject(new Error(`appender exited (${String(code)}): ${stderr}`)) })
    })
    return { child, lastAcked: () => last, opened }
  }

  it('a node killed with SIGKILL mid-stream reopens whole: every acknowledged entry, no torn one, and it verifies', async () => {
    const dir = await tempDir()
    let expectedAtLeast = -1
    // Two kills: the second also proves that what survived the first is still whole after another.
    for (let round = 0; round < 2; round++) {
      const { child, lastAcked, opened } = await runAppender(dir, 15 + round * 10)
      // The previous round's acknowledged entries survived the kill.
      expect(opened).toBeGreaterThanOrEqual(expectedAtLeast)

      // A second process cannot open the log while the node holds it.
      const err = await openLog(dir, OWNER).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(LogInUseError)

      const exited = new Promise(resolve => child.on('exit', resolve))
      child.kill('SIGKILL')
      await exited
      expectedAtLeast = lastAcked()

      const log = await openLog(dir, OWNER)
      const head = log.head()
      expect(head?.body.seq).toBeGreaterThanOrEqual(expectedAtLeast)
      const result = await verifyAll(log.copy())
      expect(result.failures).toEqual([])
      expect(result.passed).toBe((head?.body.seq ?? -1) + 1)
      await log.close()
    }
  })
})
