// Files a user names (a node config, a beacon file, a DKG transcript) are read within a limit and
// only when they are regular files or pipes (issue 18, crashes and hangs: `fairdeal node --config
// /dev/zero` read until memory ran out). One line, at once.
import { afterAll, describe, expect, it } from 'vitest'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { execFile, spawn } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readBounded } from '../src/store/bounded-read.js'
import { cliInProcess } from './helpers/cli-in-process.js'

const dirs: string[] = []
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }) })
const freshDir = async (): Promise<string> => { const d = await mkdtemp(join(tmpdir(), 'fairdeal-bounded-')); dirs.push(d); return d }

describe('a file a user names, read within a limit', () => {
  it('a regular file within the limit is read whole; over it, or a directory, or missing, is refused with the reason', async () => {
    const dir = await freshDir()
    const file = join(dir, 'f.json')
    await writeFile(file, 'x'.repeat(100))
    expect((await readBounded(file, 100)).toString()).toBe('x'.repeat(100))
    await expect(readBounded(file, 99)).rejects.toThrow('it is over 99 bytes')
    await expect(readBounded(dir, 99)).rejects.toThrow('it is a directory')
    await expect(readBounded(join(dir, 'none'), 99)).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it.runIf(existsSync('/dev/zero'))('a device is refused without reading it, and a pipe is read only up to the limit', async () => {
    await expect(readBounded('/dev/zero', 1024)).rejects.toThrow('it is not a regular file or a pipe')
    // A named pipe that never ends (yes writing into it): refused one byte past the limit.
    const fifo = join(await freshDir(), 'pipe')
    await new Promise<void>((resolve, reject) => { execFile('mkfifo', [fifo], err => { if (err === null) resolve(); else reject(err) }) })
    const yes = spawn('sh', ['-c', 'exec yes > "$0"', fifo], { stdio: 'ignore' })
    try {
      await expect(readBounded(fifo, 4096)).rejects.toThrow('it is over 4096 bytes')
    } finally {
      yes.kill()
    }
  })

  it.runIf(existsSync('/dev/zero'))('fairdeal node --config /dev/zero: one line, at once', async () => {
    const r = await cliInProcess('node', '--config', '/dev/zero')
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/cannot read config \/dev\/zero: it is not a regular file or a pipe/)
  })
})
