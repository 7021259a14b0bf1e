import { parseArgs as nodeParseArgs, type ParseArgsConfig } from 'node:util'
import { UsageError } from './errors.js'

/**
 * Node's parseArgs, strict unless told otherwise, with its mistakes said once, in one line, in
 * fairdeal's words: an unknown or misspelt option names the flag (with the nearest one the command
 * takes), a missing value names the option, a stray argument is named. Every command parses its
 * arguments with it, so these lines are the same everywhere (`fairdeal COMMAND --bogus`).
 */
export const parseArgs = ((config: ParseArgsConfig) => {
  try {
    return nodeParseArgs({ strict: true, ...config })
  } catch (err) {
    const message = parseArgsMessage(err, config)
    if (message === null) throw err
    throw new UsageError(message)
  }
}) as typeof nodeParseArgs

/** The one line for one of parseArgs's errors, or null for any other error. */
export function parseArgsMessage (err: unknown, config?: ParseArgsConfig): string | null {
  const code = (err as { code?: unknown } | null)?.code
  if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS_')) return null
  const text = (err as Error).message
  const quoted = /'([^']*)'/.exec(text)?.[1]
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const flag = quoted ?? '?'
      const near = config === undefined ? undefined : nearestOption(flag, config)
      return `unknown option ${flag}${near !== undefined ? ` (did you mean ${near}?)` : ''} (see --help)`
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      // "Option '--data <value>' argument missing", or a value given to a flag that takes none.
      const option = quoted?.split(' ')[0] ?? '?'
      if (/argument missing/.test(text)) return `${option} needs a value (see --help)`
      // `--dealer -1`: the value starts with a dash, so it could be another option.
      if (/ambiguous/.test(text)) return `${option} needs a value, and the next word starts with a dash: write ${option}=VALUE for a value that does (see --help)`
      return `${option} takes no value (see --help)`
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${JSON.stringify(quoted ?? '?')}: this command takes none (see --help)`
    default:
      return `${text.split('\n')[0]} (see --help)`
  }
}

/** The option of `config` closest to a misspelt `flag`, when one is close enough to be meant. */
function nearestOption (flag: string, config: ParseArgsConfig): string | undefined {
  const name = flag.replace(/^-+/, '')
  let best: { option: string, distance: number } | undefined
  for (const option of Object.keys(config.options ?? {})) {
    const distance = editDistance(name, option)
    if (best === undefined || distance < best.distance) best = { option, distance }
  }
  // At most a third of the name changed (two letters of --data → --dta is one), never a wild guess.
  if (best === undefined || best.distance > Math.max(1, Math.floor(name.length / 3))) return undefined
  return `--${best.option}`
}

function editDistance (a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1))
      diagonal = above
    }
  }
  return row[b.length]
}
