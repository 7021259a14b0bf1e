import { InputError } from '../core/errors.js'
import { parseArgsMessage } from './args.js'

/** A CLI command: gets its own arguments (after the command words), returns the exit code. */
export type Command = (argv: string[]) => Promise<number>

/**
 * Command words → lazily imported modules, so `fairdeal vectors check` does not load libp2p.
 * Multi-word commands (`log export`, `beacon verify`) are keyed by their words joined by a space.
 */
const commands: Record<string, () => Promise<{ run: Command }>> = {
  'vectors check': async () => await import('./commands/vectors-check.js'),
  deal: async () => await import('./commands/deal.js'),
  init: async () => await import('./commands/init.js'),
  'beacon verify': async () => await import('./commands/beacon-verify.js'),
  'beacon serve': async () => await import('./commands/beacon-serve.js'),
  'beacon demo': async () => await import('./commands/beacon-demo.js'),
  'beacon group': async () => await import('./commands/beacon-group.js'),
  'log export': async () => await import('./commands/log-export.js'),
  'log show': async () => await import('./commands/log-show.js'),
  verify: async () => await import('./commands/verify.js'),
  node: async () => await import('./commands/node.js'),
  relay: async () => await import('./commands/relay.js'),
  repair: async () => await import('./commands/repair.js'),
  demo: async () => await import('./commands/demo.js'),
  web: async () => await import('./commands/web.js'),
  'table new': async () => tableCommand('new'),
  'table join': async () => tableCommand('join'),
  'table add': async () => tableCommand('add'),
  'hand deal': async () => handCommand('deal'),
  'hand stage': async () => handCommand('stage'),
  'hand end': async () => handCommand('end'),
  'hand status': async () => handCommand('status'),
  'hand cards': async () => handCommand('cards')
}

async function tableCommand (sub: 'new' | 'join' | 'add'): Promise<{ run: Command }> {
  const mod = await import('./commands/table.js')
  return { run: async (argv) => await mod.run(sub, argv) }
}

async function handCommand (sub: 'deal' | 'stage' | 'end' | 'status' | 'cards'): Promise<{ run: Command }> {
  const mod = await import('./commands/hand.js')
  return { run: async (argv) => await mod.run(sub, argv) }
}

/** One line per command, for `fairdeal help` and a group's `--help` (`fairdeal hand --help`). */
const SUMMARIES: Record<string, string> = {
  'vectors check': 'recompute the published reference vectors',
  deal: 'compute one deal of any scheme from its inputs',
  init: 'create a node identity (the only command that creates one)',
  'beacon verify': 'check drand beacon entries offline',
  'beacon serve': 'run a local drand-compatible beacon',
  'beacon demo': 'run a beacon group of several members on loopback, and watch its rounds',
  'beacon group': 'set up, watch and check a beacon group (create, status, verify)',
  'log export': 'write a node\'s receipt log as JSON Lines',
  'log show': 'one row per log entry, with its shield',
  verify: 're-verify a log (file, data directory or running peer)',
  node: 'run a table node (dealer and/or seat)',
  relay: 'run a circuit relay for a dealer nobody can dial',
  demo: 'play a demo table on loopback',
  repair: 'check a node\'s store and mend what can be mended (--yes)',
  web: 'serve the web pages (the verifier at /verify)',
  'table new': 'dealer: set up a table; prints one invite per seat',
  'table join': 'player: take the seat an invite offers; prints the answer',
  'table add': 'dealer: add a player\'s answer; when all are in, the table line',
  'hand deal': 'dealer: commit a new hand; prints its number',
  'hand stage': 'dealer: deliver a later stage (take, faceUp, dog)',
  'hand end': 'dealer: reveal the hand',
  'hand status': 'the node\'s table, role, peers and hands in play',
  'hand cards': 'this seat\'s cards in a hand, and the public ones'
}

function listing (names: string[], prefix = ''): string {
  const width = Math.max(...names.map(n => n.length - prefix.length))
  return names.map(n => `  ${n.slice(prefix.length).padEnd(width)}  ${SUMMARIES[n] ?? ''}`).join('\n')
}

const USAGE = `usage: fairdeal <command> [options]

commands:
${listing(Object.keys(commands).sort())}

'fairdeal help COMMAND' or 'fairdeal COMMAND --help' (-h) explains a command; --version prints the version.
NO_COLOR set turns colours off; FAIRDEAL_LOG_LEVEL (trace, debug, info, warn, error, fatal, silent) sets a node's log level.`

/** The words that group several commands (`hand`, `log`, `beacon`, `vectors`). */
function subcommandsOf (group: string): string[] {
  return Object.keys(commands).filter(c => c.startsWith(`${group} `)).sort()
}

function groupHelp (group: string): string {
  return `usage: fairdeal ${group} <subcommand> [options]

subcommands:
${listing(subcommandsOf(group), `${group} `)}

'fairdeal ${group} SUBCOMMAND --help' explains one.`
}

/** The package's version, from its package.json (the repository root: above src/ or dist/src/). */
async function version (): Promise<string> {
  const { readFile } = await import('node:fs/promises')
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(await readFile(new URL(up, import.meta.url), 'utf8')) as { name?: string, version?: string }
      if (pkg.name === 'fairdeal' && typeof pkg.version === 'string') return pkg.version
    } catch {}
  }
  return 'unknown'
}

/** The command key argv starts with (one or two words), if any. */
function commandKey (argv: string[]): string | undefined {
  for (let n = Math.min(2, argv.length); n >= 1; n--) {
    const candidate = argv.slice(0, n).join(' ')
    if (candidate in commands) return candidate
  }
  return undefined
}

const isHelp = (a: string): boolean => a === '--help' || a === '-h'

export async function main (argv: string[]): Promise<number> {
  if (argv.length === 0) {
    // No command at all is a usage error: the usage goes to stderr, as every usage error does.
    process.stderr.write(USAGE + '\n')
    return 2
  }
  if (argv[0] === '--version' || argv[0] === '-V' || argv[0] === 'version') {
    process.stdout.write(`fairdeal ${await version()}\n`)
    return 0
  }
  if (isHelp(argv[0]) || argv[0] === 'help') {
    const topic = argv.slice(1).filter(a => !isHelp(a))
    if (topic.length === 0) { process.stdout.write(USAGE + '\n'); return 0 }
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
      ;(help ? process.stdout : process.stderr).write(groupHelp(argv[0]) + '\n')
      return help ? 0 : 2
    }
    const hint = subcommands.length > 0 ? `${argv[0]} takes ${subcommands.map(c => c.slice(argv[0].length + 1)).join(', ')}` : "run 'fairdeal help'"
    process.stderr.write(`fairdeal: unknown command '${argv.slice(0, 2).join(' ')}' (${hint})\n`)
    return 2
  }
  let rest = argv.slice(key.split(' ').length)
  // Every command takes -h as --help, whatever its own option parser knows.
  if (rest.includes('-h')) rest = ['--help']
  try {
    const mod = await commands[key]()
    return await mod.run(rest)
  } catch (err) {
    // Every input error of every layer extends InputError (src/core/errors.ts), which carries its
    // exit status; Node's system errors name a file, directory or port the user gave.
    if (err instanceof InputError || isSystemError(err)) {
      // Messages may quote what they could not parse, newlines included; the CLI promises one line.
      process.stderr.write(`fairdeal ${key}: ${(err as Error).message.replace(/\s*\n\s*/g, ' ').trim()}\n`)
      return err instanceof InputError ? err.exitCode : 2
    }
    const parseMessage = parseArgsMessage(err)
    if (parseMessage !== null) {
      process.stderr.write(`fairdeal ${key}: ${parseMessage}\n`)
      return 2
    }
    throw err
  }
}

/** Node's system errors (ENOENT, EEXIST, EADDRINUSE, EACCES, …): a file, directory or port named by the user is unusable. */
function isSystemError (err: unknown): boolean {
  const e = err as { code?: unknown, syscall?: unknown } | null
  return typeof e?.code === 'string' && /^E[A-Z0-9]+$/.test(e.code) && typeof e.syscall === 'string'
}
