import { InputError } from '../core/errors.js'
import { runCommand, suggestOption, type CommandSpec } from './command.js'

/** A command module: one command (`command`) or several sharing a module (`commands`: `hand …`, `table …`). */
interface CommandModule { command?: CommandSpec<any>, commands?: Array<CommandSpec<any>> }

/**
 * Command words → lazily imported modules, so `fairdeal vectors check` does not load libp2p.
 * Multi-word commands (`log export`, `beacon verify`) are keyed by their words joined by a space;
 * each module declares its commands (summary, help, options, run) once, under the same words.
 */
const modules: Record<string, () => Promise<CommandModule>> = {
  'vectors check': async () => await import('./commands/vectors-check.js'),
  deal: async () => await import('./commands/deal.js'),
  init: async () => await import('./commands/init.js'),
  relay: async () => await import('./commands/relay.js'),
  'beacon verify': async () => await import('./commands/beacon-verify.js'),
  'beacon serve': async () => await import('./commands/beacon-serve.js'),
  'beacon demo': async () => await import('./commands/beacon-demo.js'),
  'beacon group': async () => await import('./commands/beacon-group.js'),
  'log export': async () => await import('./commands/log-export.js'),
  'log show': async () => await import('./commands/log-show.js'),
  verify: async () => await import('./commands/verify.js'),
  node: async () => await import('./commands/node.js'),
  repair: async () => await import('./commands/repair.js'),
  demo: async () => await import('./commands/demo.js'),
  web: async () => await import('./commands/web.js'),
  'table new': async () => await import('./commands/table.js'),
  'table join': async () => await import('./commands/table.js'),
  'table add': async () => await import('./commands/table.js'),
  'hand deal': async () => await import('./commands/hand.js'),
  'hand stage': async () => await import('./commands/hand.js'),
  'hand end': async () => await import('./commands/hand.js'),
  'hand status': async () => await import('./commands/hand.js'),
  'hand cards': async () => await import('./commands/hand.js'),
  'hand show': async () => await import('./commands/hand-play.js'),
  'hand bid': async () => await import('./commands/hand-play.js'),
  'hand play': async () => await import('./commands/hand-play.js')
}

/** The words of every command, sorted. */
export const COMMAND_NAMES = Object.keys(modules).sort()

/** The declaration of the command named `key` (one of COMMAND_NAMES). */
export async function loadCommand (key: string): Promise<CommandSpec<any>> {
  const mod = await modules[key]()
  const spec = [mod.command, ...(mod.commands ?? [])].find(c => c?.name === key)
  if (spec === undefined) throw new Error(`no command '${key}' declared in its module`)
  return spec
}

/** One line per command, from the commands' own declarations (loading the modules: help only). */
async function summaries (names: string[]): Promise<Map<string, string>> {
  return new Map(await Promise.all(names.map(async n => [n, (await loadCommand(n)).summary] as const)))
}

async function listing (names: string[], prefix = ''): Promise<string> {
  const width = Math.max(...names.map(n => n.length - prefix.length))
  const lines = await summaries(names)
  return names.map(n => `  ${n.slice(prefix.length).padEnd(width)}  ${lines.get(n) as string}`).join('\n')
}

const usage = async (): Promise<string> => `usage: fairdeal <command> [options]

commands:
${await listing(COMMAND_NAMES)}

'fairdeal help COMMAND' or 'fairdeal COMMAND --help' (-h) explains a command; --version prints the version.
NO_COLOR set turns colours off; FAIRDEAL_LOG_LEVEL (trace, debug, info, warn, error, fatal, silent) sets a node's log level.`

/** The words that group several commands (`hand`, `log`, `beacon`, `vectors`). */
function subcommandsOf (group: string): string[] {
  return COMMAND_NAMES.filter(c => c.startsWith(`${group} `))
}

async function groupHelp (group: string): Promise<string> {
  return `usage: fairdeal ${group} <subcommand> [options]

subcommands:
${await listing(subcommandsOf(group), `${group} `)}

'fairdeal ${group} SUBCOMMAND --help' explains one.`
}

/** The package's version, from its package.json (found above the running module: src/, dist/src/ or the bundle). */
async function version (): Promise<string> {
  const [{ readFile }, { join }, { packageRoot }] = await Promise.all([import('node:fs/promises'), import('node:path'), import('../store/package-files.js')])
  try {
    const pkg = JSON.parse(await readFile(join(packageRoot(), 'package.json'), 'utf8')) as { version?: string }
    if (typeof pkg.version === 'string') return pkg.version
  } catch {}
  return 'unknown'
}

/** The command key argv starts with (one or two words), if any. */
function commandKey (argv: string[]): string | undefined {
  for (let n = Math.min(2, argv.length); n >= 1; n--) {
    const candidate = argv.slice(0, n).join(' ')
    if (candidate in modules) return candidate
  }
  return undefined
}

const isHelp = (a: string): boolean => a === '--help' || a === '-h'

export async function main (argv: string[]): Promise<number> {
  if (argv.length === 0) {
    // No command at all is a usage error: the usage goes to stderr, as every usage error does.
    process.stderr.write(await usage() + '\n')
    return 2
  }
  if (argv[0] === '--version' || argv[0] === '-V' || argv[0] === 'version') {
    process.stdout.write(`fairdeal ${await version()}\n`)
    return 0
  }
  if (isHelp(argv[0]) || argv[0] === 'help') {
    const topic = argv.slice(1).filter(a => !isHelp(a))
    if (topic.length === 0) { process.stdout.write(await usage() + '\n'); return 0 }
    // `fairdeal help hand deal` is `fairdeal hand deal --help`; `fairdeal help hand` is the group's help.
    if (commandKey(topic) === undefined && subcommandsOf(topic[0]).length === 0) {
      process.stderr.write(`fairdeal help: no command '${topic.join(' ')}' (run 'fairdeal help' for the list)\n`)
      return 2
    }
    return await main([...topic, '--help'])
  }
  const key = commandKey(argv)
  if (key === undefined) {
    const subcommands = subcommandsOf(argv[0])
    if (subcommands.length > 0 && (argv.length === 1 || argv.slice(1).some(isHelp))) {
      // `fairdeal hand --help` lists the subcommands; a bare `fairdeal hand` does too, as an error.
      const help = argv.length > 1
      ;(help ? process.stdout : process.stderr).write(await groupHelp(argv[0]) + '\n')
      return help ? 0 : 2
    }
    const words = [...new Set(COMMAND_NAMES.map(c => c.split(' ')[0]))]
    const meant = subcommands.length === 0 ? suggestOption(argv[0], words) : undefined
    const hint = subcommands.length > 0
      ? `${argv[0]} takes ${subcommands.map(c => c.slice(argv[0].length + 1)).join(', ')}`
      : meant !== undefined ? `did you mean '${meant}'?` : "run 'fairdeal help'"
    process.stderr.write(`fairdeal: unknown command '${argv.slice(0, 2).join(' ')}' (${hint})\n`)
    return 2
  }
  const rest = argv.slice(key.split(' ').length)
  try {
    return await runCommand(await loadCommand(key), rest)
  } catch (err) {
    if (err instanceof InputError || isSystemError(err)) {
      // Messages may quote what they could not parse, newlines included; the CLI promises one line.
      process.stderr.write(`fairdeal ${key}: ${(err as Error).message.replace(/\s*\n\s*/g, ' ').trim()}\n`)
      return err instanceof InputError ? err.exitCode : 2
    }
    throw err
  }
}

/** Node's system errors (ENOENT, EEXIST, EADDRINUSE, EACCES, …): a file, directory or port named by the user is unusable. */
function isSystemError (err: unknown): boolean {
  const e = err as { code?: unknown, syscall?: unknown } | null
  return typeof e?.code === 'string' && /^E[A-Z0-9]+$/.test(e.code) && typeof e.syscall === 'string'
}
