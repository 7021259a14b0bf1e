import { UsageError } from './errors.js'

/**
 * One option of a command: a string (`--data DIR`) or a flag (`--json`); `multiple` collects every
 * occurrence (`--listen A --listen B`); `default` is what `values` holds when it is not given.
 */
export interface OptionSpec {
  type: 'string' | 'boolean'
  short?: string
  multiple?: boolean
  default?: string | boolean | string[]
}

export type OptionSpecs = Record<string, OptionSpec>

type ValueOf<S extends OptionSpec> = S['type'] extends 'boolean'
  ? (S['multiple'] extends true ? boolean[] : boolean)
  : (S['multiple'] extends true ? string[] : string)

/**
 * What the options parse to: the shape `node:util` parseArgs gives, so command bodies read the
 * same; an option with a default is always there.
 */
export type OptionValues<O extends OptionSpecs> =
  { [K in keyof O as O[K] extends { default: unknown } ? K : never]: ValueOf<O[K]> } &
  { [K in keyof O as O[K] extends { default: unknown } ? never : K]?: ValueOf<O[K]> }

/** How many positional arguments a command takes, and what to say when they are missing. */
export interface PositionalSpec {
  min: number
  max: number
  /** Said when fewer than `min` are given: `give at least one FILE`. */
  missing?: string
}

export interface ParsedArgs<O extends OptionSpecs> { values: OptionValues<O>, positionals: string[] }

/**
 * A command, declared once: its words, the line `fairdeal help` shows, its help text, its options
 * and positionals, and what it runs. Help, unknown or misspelt options, missing values and stray
 * arguments are handled by `parseCommandLine`, before `run` sees anything.
 */
export interface CommandSpec<O extends OptionSpecs = OptionSpecs> {
  name: string
  summary: string
  help: string
  options: O
  positionals?: PositionalSpec
  run: (args: ParsedArgs<O>) => Promise<number>
}

export function defineCommand<O extends OptionSpecs> (spec: CommandSpec<O>): CommandSpec<O> {
  if (spec.summary.trim() === '') throw new Error(`command ${spec.name}: empty summary`)
  if ('help' in spec.options) throw new Error(`command ${spec.name}: --help is every command's, not declared`)
  return spec
}

const isHelp = (a: string): boolean => a === '--help' || a === '-h'

/** Whether argv asks for the help (before any `--`): `-h` or `--help` anywhere. */
export function asksForHelp (argv: string[]): boolean {
  const end = argv.indexOf('--')
  return (end === -1 ? argv : argv.slice(0, end)).some(isHelp)
}

/** Edit distance of two short words (option names), for "did you mean". */
function distance (a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0]
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const up = row[j]
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1))
      diag = up
    }
  }
  return row[b.length]
}

/** The option meant by a misspelt one: the nearest within two edits (one for short names), or one it starts. */
export function suggestOption (given: string, names: string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Infinity
  for (const name of names) {
    const d = distance(given, name)
    if (d < bestDistance) { best = name; bestDistance = d }
  }
  if (best !== undefined && bestDistance <= (given.length <= 3 ? 1 : 2)) return best
  const prefixed = names.filter(n => n.startsWith(given) || given.startsWith(n))
  return prefixed.length === 1 ? prefixed[0] : undefined
}

function unknownOption (flag: string, names: string[]): UsageError {
  const bare = flag.replace(/^-+/, '')
  const meant = flag.startsWith('--') ? suggestOption(bare, names) : undefined
  return new UsageError(`unknown option ${flag}${meant !== undefined ? ` (did you mean --${meant}?)` : ''}`)
}

/** A token shown in an error: quoted only when it holds something that would make the line unclear. */
const shown = (s: string): string => /^[\w./:@=+,-]+$/.test(s) ? s : JSON.stringify(s)

/**
 * argv → values and positionals, by the command's declaration. Every mistake is one UsageError in
 * fairdeal's words: an unknown option (with the one it resembles), a value missing or given to a
 * flag, an option given twice, a stray or missing argument. `--` ends the options.
 */
export function parseCommandLine<O extends OptionSpecs> (spec: CommandSpec<O>, argv: string[]): ParsedArgs<O> {
  const names = Object.keys(spec.options)
  const byShort = new Map(Object.entries(spec.options).filter(([, o]) => o.short !== undefined).map(([n, o]) => [o.short as string, n]))
  const values: Record<string, unknown> = {}
  const positionals: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--') { positionals.push(...argv.slice(i + 1)); break }
    if (!arg.startsWith('-') || arg === '-') { positionals.push(arg); continue }
    let name: string
    let inline: string | undefined
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=')
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
      inline = eq === -1 ? undefined : arg.slice(eq + 1)
      if (!Object.hasOwn(spec.options, name)) throw unknownOption(eq === -1 ? arg : arg.slice(0, eq), names)
    } else {
      const known = byShort.get(arg.slice(1))
      if (known === undefined) throw unknownOption(arg, names)
      name = known
    }
    const option = spec.options[name]
    let value: string | boolean
    if (option.type === 'boolean') {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value (got --${name}=${shown(inline)})`)
      value = true
    } else if (inline !== undefined) {
      value = inline
    } else {
      const next = argv[i + 1]
      if (next === undefined || (next.startsWith('-') && next !== '-' && !/^-\d/.test(next))) {
        throw new UsageError(`--${name} needs a value (see --help)`)
      }
      value = next
      i++
    }
    if (option.multiple === true) {
      values[name] = [...(values[name] as unknown[] | undefined ?? []), value]
    } else {
      if (name in values) throw new UsageError(`--${name} is given twice`)
      values[name] = value
    }
  }
  for (const [name, option] of Object.entries(spec.options)) {
    if (!(name in values) && option.default !== undefined) values[name] = option.default
  }
  const { min, max, missing } = spec.positionals ?? { min: 0, max: 0 }
  if (positionals.length > max) throw new UsageError(`unexpected argument ${shown(positionals[max])} (see --help)`)
  if (positionals.length < min) throw new UsageError(`${missing ?? 'an argument is missing'} (see --help)`)
  return { values: values as OptionValues<O>, positionals }
}

/** Runs a command on its arguments: its help on `-h`/`--help`, else its `run` on what parsed. */
export async function runCommand (spec: CommandSpec<any>, argv: string[]): Promise<number> {
  if (asksForHelp(argv)) { process.stdout.write(spec.help.trimEnd() + '\n'); return 0 }
  return await spec.run(parseCommandLine(spec, argv))
}
