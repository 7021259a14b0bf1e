// Issue 17, one shape per command: every command and subcommand answers an unknown flag, a misspelt
// one, a missing value and a stray argument in one line of fairdeal's own words, exit 2, and
// `fairdeal help` has a summary for every command. In process (main), as the binary runs it.
import { describe, expect, it } from 'vitest'
import { cliInProcess } from './helpers/cli-in-process.js'

async function commandNames (): Promise<string[]> {
  const help = await cliInProcess('help')
  const block = help.stdout.split('\ncommands:\n')[1].split('\n\n')[0]
  return block.split('\n').map(l => /^ {2}(\S+(?: \S+)?) {2,}\S/.exec(l)?.[1]).filter((n): n is string => n !== undefined)
}

describe('every command, one shape for its mistakes', () => {
  it('fairdeal help lists every command with a summary', async () => {
    const help = await cliInProcess('help')
    const block = help.stdout.split('\ncommands:\n')[1].split('\n\n')[0].split('\n')
    expect(block.length).toBeGreaterThan(20)
    for (const line of block) expect(line, line).toMatch(/^ {2}\S+(?: \S+)? +\S.{10,}$/)
  })

  it('COMMAND --bogus: one line naming the flag, exit 2, for every command', async () => {
    const names = await commandNames()
    expect(names).toContain('hand deal')
    expect(names).toContain('relay')
    for (const name of names) {
      const r = await cliInProcess(...name.split(' '), '--bogus')
      expect({ name, code: r.code, stdout: r.stdout }).toEqual({ name, code: 2, stdout: '' })
      expect(r.stderr, name).toBe(`fairdeal ${name}: unknown option --bogus (see --help)\n`)
    }
  })

  it('a misspelt flag gets a suggestion; a missing value and a stray argument are named', async () => {
    expect((await cliInProcess('verify', '--dta', 'x')).stderr).toBe('fairdeal verify: unknown option --dta (did you mean --data?) (see --help)\n')
    expect((await cliInProcess('hand', 'cards', '--data')).stderr).toBe('fairdeal hand cards: --data needs a value (see --help)\n')
    expect((await cliInProcess('init', 'stray'))).toMatchObject({ code: 2, stderr: 'fairdeal init: unexpected argument "stray": this command takes none (see --help)\n' })
  })

  it('each hand subcommand has its own help', async () => {
    const helps: string[] = []
    for (const s of ['deal', 'stage', 'end', 'status', 'cards']) helps.push((await cliInProcess('hand', s, '--help')).stdout)
    expect(new Set(helps).size).toBe(5)
    expect(helps[0]).toMatch(/^usage: fairdeal hand deal --data DIR \[--dealer SEAT\]/)
    expect(helps[1]).toMatch(/--stage S/)
    expect(helps[0]).not.toMatch(/--stage S/)
  })
})
