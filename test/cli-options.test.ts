// One shape per command: every command and subcommand is declared once (summary, help, options,
// positionals, run), and its mistakes are answered in one place, as one line in fairdeal's words.
// The parser is run in this process for every command; a few spawned runs prove the wiring.
import { describe, expect, it } from 'vitest'
import { COMMAND_NAMES, loadCommand } from '../src/cli/main.js'
import { parseCommandLine, suggestOption } from '../src/cli/command.js'
import { UsageError } from '../src/cli/errors.js'
import { InputError } from '../src/core/errors.js'
import { cliInProcess } from './helpers/cli-in-process.js'
import { fairdeal } from './helpers/cli.js'
import { requireBuild } from './helpers/node-process.js'

const ALL = ['beacon demo', 'beacon group', 'beacon serve', 'beacon verify', 'deal', 'demo', 'hand bid', 'hand cards', 'hand deal', 'hand end', 'hand play', 'hand show', 'hand stage',
  'hand status', 'init', 'log export', 'log show', 'node', 'relay', 'repair', 'table add', 'table join', 'table new', 'vectors check', 'verify', 'web']

describe('one shape per command', () => {
  it('every command is declared under its own words, with a summary, and every option in its help', async () => {
    expect(COMMAND_NAMES).toEqual(ALL)
    const helps = new Set<string>()
    for (const name of ALL) {
      const spec = await loadCommand(name)
      expect(spec.name).toBe(name)
      expect(spec.summary.trim(), name).not.toBe('')
      expect(spec.help, name).toMatch(new RegExp(`^usage: fairdeal ${name}\\b`))
      for (const option of Object.keys(spec.options)) expect(spec.help, `${name} --${option}`).toContain(`--${option}`)
      helps.add(spec.help)
    }
    // Each subcommand has its own help (the five `hand` ones used to print the same text).
    expect(helps.size).toBe(ALL.length)
  })

  it('--bogus, a misspelt option, a missing value and a stray argument: one UsageError each, for every command', async () => {
    for (const name of ALL) {
      const spec = await loadCommand(name)
      const fail = (argv: string[]): string => {
        try { parseCommandLine(spec, argv) } catch (err) { expect(err).toBeInstanceOf(UsageError); return (err as Error).message }
        throw new Error(`${name} ${argv.join(' ')}: accepted`)
      }
      expect(fail(['--bogus'])).toBe('unknown option --bogus')
      expect(fail(['-q'])).toBe('unknown option -q')
      const option = Object.keys(spec.options).find(o => o.length >= 4)
      if (option !== undefined) expect(fail([`--${option.slice(0, -1)}x`]), name).toMatch(new RegExp(`\\(did you mean --(${option}|[\\w-]+)\\?\\)$`))
      const stringOption = Object.entries(spec.options as Record<string, { type: string }>).find(([, o]) => o.type === 'string')?.[0]
      if (stringOption !== undefined) expect(fail([`--${stringOption}`])).toBe(`--${stringOption} needs a value (see --help)`)
      const max = spec.positionals?.max ?? 0
      if (Number.isFinite(max)) expect(fail([...Array.from({ length: max }, () => 'a'), 'stray'])).toBe('unexpected argument stray (see --help)')
    }
  })

  it('an unknown command: the one meant, when one is near', async () => {
    expect((await cliInProcess('dael')).stderr).toBe('fairdeal: unknown command \'dael\' (did you mean \'deal\'?)\n')
    expect((await cliInProcess('frobnicate')).stderr).toBe('fairdeal: unknown command \'frobnicate\' (run \'fairdeal help\')\n')
  })

  it('suggests the option meant, and nothing far from every option', () => {
    expect(suggestOption('dta', ['data', 'peer', 'json'])).toBe('data')
    expect(suggestOption('chain-olny', ['chain-only', 'config'])).toBe('chain-only')
    expect(suggestOption('bogus', ['data', 'peer', 'json'])).toBeUndefined()
  })

  it('main answers --bogus for every command with one line naming the flag, exit 2 (in process)', async () => {
    for (const name of ALL) {
      const r = await cliInProcess(...name.split(' '), '--bogus')
      expect({ name, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ name, code: 2, stdout: '', stderr: `fairdeal ${name}: unknown option --bogus\n` })
    }
  })

  it('every input error of src/ extends the one base class that carries the exit code', async () => {
    const { NetInputError, IdentityFileError } = await import('../src/net/errors.js')
    const store = await import('../src/store/errors.js')
    const { DataDirError } = await import('../src/store/data-dir.js')
    const { NodeInputError, TableChoiceError } = await import('../src/daemon/errors.js')
    const { DataDirInUseError } = await import('../src/daemon/daemon.js')
    const { Rejection } = await import('../src/protocol/types.js')
    const { CoreInputError } = await import('../src/core/errors.js')
    const { TimelockError } = await import('../src/core/timelock/errors.js')
    const web = await import('../src/web/verify/analyse.js')
    for (const C of [NetInputError, IdentityFileError, store.LogInUseError, store.LogNotFoundError, store.LogStateError, store.StoreDamagedError, store.LogInputError,
      DataDirError, NodeInputError, TableChoiceError, DataDirInUseError, Rejection, CoreInputError, TimelockError, web.InputError, UsageError]) {
      expect(C.prototype, C.name).toBeInstanceOf(InputError)
    }
    expect(new UsageError('x').exitCode).toBe(2)
  })

  it('the real CLI, spawned: a misspelt flag, a missing value, a stray argument', async () => {
    requireBuild()
    const [dta, value, stray] = await Promise.all([fairdeal('verify', '--dta', 'x'), fairdeal('table', 'new', '--data'), fairdeal('repair', 'x')])
    expect([dta.code, dta.stdout, dta.stderr]).toEqual([2, '', 'fairdeal verify: unknown option --dta (did you mean --data?)\n'])
    expect([value.code, value.stderr]).toEqual([2, 'fairdeal table new: --data needs a value (see --help)\n'])
    expect([stray.code, stray.stderr]).toEqual([2, 'fairdeal repair: unexpected argument x (see --help)\n'])
  })
})
