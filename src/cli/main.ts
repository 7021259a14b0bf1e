import { UsageError } from './errors.js'
import { CoreInputError } from '../core/errors.js'

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
  repair: async () => await import('./commands/repair.js'),
  demo: async () => await import('./commands/demo.js'),
  web: async () => await import('./commands/web.js'),
  'hand deal': async () => handCommand('deal'),
  'hand stage': async () => handCommand('stage'),
  'hand end': async () => handCommand('end'),
  'hand status': async () => handCommand('status'),
  'hand cards': async () => handCommand('cards')
}

async function handCommand (sub: 'deal' | 'stage' | 'end' | 'status' | 'cards'): Promise<{ run: Command }> {
  const mod = await import('./commands/hand.js')
  return { run: async (argv) => await mod.run(sub, argv) }
}

const USAGE = `usage: fairdeal <command> [options]

commands:
${Object.keys(commands).sort().map(c => `  ${c}`).join('\n')}

Run a command with --help for its options.`

export async function main (argv: string[]): Promise<number> {
  const words = argv.filter(a => !a.startsWith('-'))
  let key: string | undefined
  for (let n = Math.min(2, words.length); n >= 1; n--) {
    const candidate = argv.slice(0, n).join(' ')
    if (candidate in commands) { key = candidate; break }
  }
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    process.stdout.write(USAGE + '\n')
    return argv.length === 0 ? 2 : 0
  }
  if (key === undefined) {
    const subcommands = Object.keys(commands).filter(c => c.startsWith(`${argv[0]} `)).map(c => c.slice(argv[0].length + 1)).sort()
    const hint = subcommands.length > 0 ? `${argv[0]} takes ${subcommands.join(', ')}` : "run 'fairdeal --help'"
    process.stderr.write(`fairdeal: unknown command '${argv.slice(0, 2).join(' ')}' (${hint})\n`)
    return 2
  }
  const rest = argv.slice(key.split(' ').length)
  try {
    const mod = await commands[key]()
    return await mod.run(rest)
  } catch (err) {
    if (err instanceof UsageError || err instanceof CoreInputError || isInputError(err) || isSystemError(err)) {
      // Messages may quote what they could not parse, newlines included; the CLI promises one line.
      process.stderr.write(`fairdeal ${key}: ${(err as Error).message.replace(/\s*\n\s*/g, ' ').trim()}\n`)
      return 2
    }
    if (isParseArgsError(err)) {
      // parseArgs explains some mistakes over several lines; the first one names the problem.
      process.stderr.write(`fairdeal ${key}: ${(err as Error).message.split('\n')[0]}\n`)
      return 2
    }
    throw err
  }
}

/** Errors of the adapters that mean bad input or environment (a locked data dir, a bad key file). */
function isInputError (err: unknown): boolean {
  const name = (err as Error | null)?.name
  return name === 'NetInputError' || name === 'NodeInputError' || name === 'IdentityFileError' || name === 'DataDirInUseError' || name === 'LogInUseError' ||
    name === 'LogNotFoundError' || name === 'LogStateError' || name === 'StoreDamagedError' || name === 'LogInputError' || name === 'DataDirError' || name === 'Rejection'
}

/** Node's system errors (ENOENT, EEXIST, EADDRINUSE, EACCES, …): a file, directory or port named by the user is unusable. */
function isSystemError (err: unknown): boolean {
  const e = err as { code?: unknown, syscall?: unknown } | null
  return typeof e?.code === 'string' && /^E[A-Z0-9]+$/.test(e.code) && typeof e.syscall === 'string'
}

function isParseArgsError (err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')
}
