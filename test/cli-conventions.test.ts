// The CLI's conventions, run as users run it (`node bin/fairdeal.js …` on the build): --version,
// help for every command and group (`help CMD`, `CMD --help`, `CMD -h`), usage errors on stderr
// with status 2, a bad FAIRDEAL_LOG_LEVEL in one line, NO_COLOR.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { requireBuild } from './helpers/node-process.js'
import { colourAllowed } from '../src/daemon/logger.js'
import { main } from '../src/cli/main.js'
import { fairdeal, fairdealWithEnv } from './helpers/cli.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

interface Run { code: number | null, stdout: string, stderr: string }

/** main() in this process, its stdout and stderr captured: the help texts need no process each. */
async function inProcess (args: string[]): Promise<Run> {
  let stdout = ''
  let stderr = ''
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => { stdout += String(chunk); return true })
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => { stderr += String(chunk); return true })
  try {
    const code = await main(args)
    return { code, stdout, stderr }
  } finally {
    out.mockRestore()
    err.mockRestore()
  }
}

const COMMANDS = ['vectors check', 'deal', 'init', 'beacon verify', 'beacon serve', 'beacon demo', 'beacon group', 'log export', 'log show', 'verify', 'node',
  'repair', 'demo', 'web', 'table new', 'table join', 'table add', 'hand deal', 'hand stage', 'hand end', 'hand status', 'hand cards']
const GROUPS: Record<string, string[]> = {
  hand: ['cards', 'deal', 'end', 'stage', 'status'], log: ['export', 'show'], beacon: ['demo', 'group', 'serve', 'verify'], vectors: ['check'], table: ['add', 'join', 'new']
}

describe('CLI conventions', () => {
  beforeAll(() => { requireBuild() })

  it('--version and help for every command and group, on stdout with status 0', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }
    const version = await fairdeal('--version')
    expect([version.code, version.stdout, version.stderr]).toEqual([0, `fairdeal ${pkg.version}\n`, ''])
    const help = await inProcess(['help'])
    expect(help.code).toBe(0)
    for (const c of COMMANDS) expect(help.stdout).toMatch(new RegExp(`^  ${c} +\\S`, 'm'))

    const runs: string[][] = []
    for (const c of COMMANDS) {
      const words = c.split(' ')
      runs.push([...words, '--help'], [...words, '-h'], ['help', ...words])
    }
    for (const args of runs) {
      const r = await inProcess(args)
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' })
      expect(r.stdout, args.join(' ')).toMatch(/^usage:/)
    }
    for (const [group, subs] of Object.entries(GROUPS)) {
      for (const args of [[group, '--help'], [group, '-h'], ['help', group]]) {
        const r = await inProcess(args)
        expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' })
        // One line per subcommand, with what it does.
        for (const s of subs) expect(r.stdout).toMatch(new RegExp(`^  ${s} +\\w`, 'm'))
      }
    }
  })

  it('usage errors go to stderr with status 2; a bad log level is one line', async () => {
    const [none, level] = await Promise.all([fairdeal(), fairdealWithEnv({ FAIRDEAL_LOG_LEVEL: 'loud' }, 'demo', '--hands', '1')])
    const unknown = await inProcess(['dael'])
    const bare = await inProcess(['hand'])
    const helpUnknown = await inProcess(['help', 'nope'])
    const badOption = await inProcess(['log', 'export', '--bogus'])
    for (const r of [none, unknown, bare, helpUnknown, badOption, level]) {
      expect(r.code).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr).not.toBe('')
    }
    expect(none.stderr).toMatch(/^usage: fairdeal <command>/)
    expect(bare.stderr).toMatch(/^usage: fairdeal hand <subcommand>/)
    expect(level.stderr).toBe('fairdeal demo: FAIRDEAL_LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got "loud"\n')
    expect(badOption.stderr.trim().split('\n')).toHaveLength(1)
  })

  it('NO_COLOR (set and not empty) turns colours off', () => {
    const saved = process.env.NO_COLOR
    try {
      delete process.env.NO_COLOR
      expect(colourAllowed()).toBe(true)
      process.env.NO_COLOR = ''
      expect(colourAllowed()).toBe(true)
      process.env.NO_COLOR = '1'
      expect(colourAllowed()).toBe(false)
    } finally {
      if (saved === undefined) delete process.env.NO_COLOR
      else process.env.NO_COLOR = saved
    }
  })
})
