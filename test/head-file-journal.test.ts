// The head file as a journal (src/store/head-file.ts, docs/log.md "The head file"): the first write
// replaces the file with one line, each later one appends the whole state as a line through a
// handle kept open, and the state is the last complete line. A line a crash cut short is ignored,
// and the next writer starts the file over; past 64 KB the file is replaced by one line again.
import { afterEach, describe, expect, it } from 'vitest'
import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HeadFile, headFilePath, readHeadFile, type HeadFileState } from '../src/store/head-file.js'
import { StoreDamagedError } from '../src/store/errors.js'

const dirs: string[] = []
afterEach(async () => { for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true }) })

async function dbPath (): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fairdeal-head-file-'))
  dirs.push(dir)
  return join(dir, 'db')
}

const lines = async (db: string): Promise<string[]> => (await readFile(headFilePath(db), 'utf8')).split('\n')
const state = (head: string, marks: Record<string, unknown> = {}): HeadFileState => ({ head, marks, damage: null })

describe('the head file is a journal of states', () => {
  it('the first write replaces the file with one line; later ones append a line each; the last complete line is the state', async () => {
    const db = await dbPath()
    await writeFile(headFilePath(db), 'left by an older writer\n{"damage":null,"head":"h0","marks":{},"v":1}\n', { mode: 0o600 })
    const file = new HeadFile(db, state('h0'))
    await file.update({ head: 'h1' })
    expect(await lines(db)).toEqual(['{"damage":null,"head":"h1","marks":{},"v":1}', ''])
    await file.setMark('dealer/t/meta', { nextHand: 3 })
    await file.update({ head: 'h2' })
    expect(await lines(db)).toEqual([
      '{"damage":null,"head":"h1","marks":{},"v":1}',
      '{"damage":null,"head":"h1","marks":{"dealer/t/meta":{"nextHand":3}},"v":1}',
      '{"damage":null,"head":"h2","marks":{"dealer/t/meta":{"nextHand":3}},"v":1}',
      ''
    ])
    expect(await readHeadFile(db)).toEqual(state('h2', { 'dealer/t/meta': { nextHand: 3 } }))
    expect((await stat(headFilePath(db))).mode & 0o777).toBe(0o600)
    await file.close()
  })

  it('a line a crash cut short is ignored, and the next writer starts the file over', async () => {
    const db = await dbPath()
    const file = new HeadFile(db, state('h0'))
    await file.update({ head: 'h1' })
    await file.update({ head: 'h2' })
    await file.close()
    await appendFile(headFilePath(db), '{"damage":null,"head":"h3","mar')
    expect((await readHeadFile(db))?.head).toBe('h2')
    const after = new HeadFile(db, (await readHeadFile(db)) as HeadFileState)
    await after.update({ head: 'h3' })
    expect(await lines(db)).toEqual(['{"damage":null,"head":"h3","marks":{},"v":1}', ''])
    await after.update({ head: 'h4' })
    expect((await readHeadFile(db))?.head).toBe('h4')
    await after.close()
  })

  it('once a line would take it past 64 KB, the file is replaced by that one line', async () => {
    const db = await dbPath()
    const file = new HeadFile(db, state('h'))
    const big = 'x'.repeat(3000)
    let replaced = 0
    let before = 0
    for (let i = 0; i < 60; i++) {
      await file.update({ head: `${big}${i}` })
      const size = (await stat(headFilePath(db))).size
      expect(size).toBeLessThanOrEqual(64 * 1024)
      if (size < before) replaced++
      before = size
      expect((await readHeadFile(db))?.head).toBe(`${big}${i}`)
    }
    // 60 lines of about 3 KB: 21 to a file before it is replaced, so two replacements after the first.
    expect(replaced).toBe(2)
    await file.close()
  })

  it('a file without a complete line, or whose last line is not a state, is damage', async () => {
    const db = await dbPath()
    await writeFile(headFilePath(db), '{"damage":null,"head":"h1","marks":{},"v":1}')
    await expect(readHeadFile(db)).rejects.toThrow(StoreDamagedError)
    await expect(readHeadFile(db)).rejects.toThrow(/is not JSON \(damaged\)$/)
    await writeFile(headFilePath(db), '{"damage":null,"head":"h1","marks":{},"v":1}\nnot a state\n')
    await expect(readHeadFile(db)).rejects.toThrow(/is not JSON \(damaged\)$/)
    await writeFile(headFilePath(db), '{"damage":null,"head":"h1","marks":{},"v":1}\n{"damage":null,"head":"h2","marks":[],"v":1}\n')
    await expect(readHeadFile(db)).rejects.toThrow(/is not a version 1 fairdeal head file \(damaged\)$/)
  })

  it('a write after close replaces the file, and keeps nothing open', async () => {
    const db = await dbPath()
    const file = new HeadFile(db, state('h0'))
    await file.update({ head: 'h1' })
    await file.update({ head: 'h2' })
    await file.close()
    await file.update({ head: 'h3' })
    await file.update({ head: 'h4' })
    expect(await lines(db)).toEqual(['{"damage":null,"head":"h4","marks":{},"v":1}', ''])
  })
})
