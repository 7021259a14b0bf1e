import { readFile, stat } from 'node:fs/promises'
import { defineCommand, type OptionSpecs, type ParsedArgs } from '../command.js'
import { checkVectorFile, describeFailure } from '../../core/vectors.js'
import { CoreInputError } from '../../core/errors.js'
import { UsageError } from '../errors.js'

const USAGE = `usage: fairdeal vectors check FILE...

Recomputes every field of every vector in each file (the shared format: { scheme, …, vectors: [...] },
schemes atout-v1, bitjack21, php-xoshiro256starstar). Prints one line per failed vector naming the
fields that differ, then "N passed, M failed". Exit 0 if all passed, 1 if any failed, 2 on bad input.`

/** Vector files are small; a bigger one is a mistake, not something to parse. */
const MAX_FILE_BYTES = 16 * 1024 * 1024

const OPTIONS = { } satisfies OptionSpecs

export const command = defineCommand({
  name: 'vectors check',
  summary: 'recompute the published reference vectors',
  help: USAGE,
  options: OPTIONS,
  positionals: { min: 1, max: Infinity, missing: 'give at least one vectors file' },
  run
})

async function run ({ values, positionals }: ParsedArgs<typeof OPTIONS>): Promise<number> {
  if (positionals.length === 0) throw new UsageError('give at least one vectors file (fairdeal vectors check FILE...)')

  // Read and check every file before printing, so a malformed file stops the run with one line.
  const lines: string[] = []
  let passed = 0
  let failed = 0
  for (const file of positionals) {
    const report = checkOne(file, await readJson(file))
    passed += report.passed
    failed += report.failed
    for (const r of report.results) if (r.mismatches.length > 0) lines.push(`${file} ${describeFailure(r)}`)
  }
  for (const line of lines) process.stdout.write(line + '\n')
  process.stdout.write(`${passed} passed, ${failed} failed\n`)
  return failed > 0 ? 1 : 0
}

function checkOne (file: string, doc: unknown): ReturnType<typeof checkVectorFile> {
  try {
    return checkVectorFile(doc)
  } catch (err) {
    if (err instanceof CoreInputError) throw new UsageError(`${file}: ${err.message}`)
    throw err
  }
}

async function readJson (file: string): Promise<unknown> {
  let text: string
  try {
    const info = await stat(file)
    if (!info.isFile()) throw new UsageError(`${file}: not a regular file`)
    if (info.size > MAX_FILE_BYTES) throw new UsageError(`${file}: ${info.size} bytes is too big for a vectors file (limit ${MAX_FILE_BYTES})`)
    text = await readFile(file, 'utf8')
  } catch (err) {
    if (err instanceof UsageError) throw err
    const code = (err as { code?: string }).code
    throw new UsageError(`${file}: cannot read it (${code ?? (err as Error).message})`)
  }
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new UsageError(`${file}: not JSON (${(err as Error).message})`)
  }
}
