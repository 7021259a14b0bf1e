import { defineCommand, type OptionSpecs, type ParsedArgs } from '../command.js'
import { createWriteStream } from 'node:fs'
import { rename, rm } from 'node:fs/promises'
import type { Writable } from 'node:stream'
import { UsageError } from '../errors.js'
import { parseSeqRange } from '../options.js'
import { quietOnClosedStdout } from '../stdout.js'
import { parseHead } from '../../store/log.js'
import { dataDirLogLines } from '../node-log.js'

const USAGE = `usage: fairdeal log export --data DIR [--from SEQ] [--to SEQ] [--out FILE]

Writes a node's receipt log as JSON Lines: the node's signed head first, then one entry per line
in its canonical form, exactly as stored and signed. Anyone can check the file alone with
'fairdeal verify FILE' (a partial export with 'fairdeal verify FILE --from SEQ --to SEQ').

  --data DIR     the node's data directory (a running node's log comes through its control endpoint)
  --from SEQ     first entry (default 0)
  --to SEQ       last entry (default: the last one)
  --out FILE     write there instead of to stdout (written whole, or not at all)`

const OPTIONS = {
  data: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  out: { type: 'string' }
} satisfies OptionSpecs

export const command = defineCommand({
  name: 'log export',
  summary: 'write a node\'s receipt log as JSON Lines',
  help: USAGE,
  options: OPTIONS,
  run
})

async function run ({ values, positionals }: ParsedArgs<typeof OPTIONS>): Promise<number> {
  if (values.data === undefined) throw new UsageError('--data DIR is required (see --help)')
  const range = parseSeqRange(values)
  const from = range.from ?? 0
  const to = range.to

  // The store when the node is stopped; while it runs, the same lines from its control endpoint.
  const log = await dataDirLogLines(values.data, { from, to })
  const temp = values.out === undefined ? undefined : `${values.out}.${process.pid}.tmp`
  if (temp === undefined) quietOnClosedStdout()
  try {
    const out: Writable = temp === undefined ? process.stdout : createWriteStream(temp, { flags: 'wx' })
    let entries = 0
    let last: string | undefined
    let headSeq: number | undefined
    for await (const line of log.lines) {
      // The first line is the signed head; every other line is an entry.
      if (last === undefined) headSeq = parseHead(line)?.body.seq
      else entries++
      last = line
      if (!out.write(line + '\n')) await new Promise(resolve => out.once('drain', resolve))
    }
    if (temp !== undefined) {
      await new Promise<void>((resolve, reject) => { out.once('error', reject); out.end(resolve) })
      await rename(temp, values.out as string)
    }
    const lastSeq = entries > 0 ? seqOf(last as string) : undefined
    const partial = from > 0 || (headSeq !== undefined && lastSeq !== undefined && lastSeq < headSeq)
    if (partial && lastSeq !== undefined) {
      process.stderr.write(`exported seq ${from}..${lastSeq} of a log whose head is at seq ${String(headSeq)}: ` +
        `check it with 'fairdeal verify FILE --from ${from} --to ${lastSeq}'\n`)
    } else if (entries === 0) {
      process.stderr.write(headSeq === undefined ? 'the log is empty\n' : `no entries in that range (the head is at seq ${headSeq})\n`)
    }
    return 0
  } catch (err) {
    if (temp !== undefined) await rm(temp, { force: true })
    if (typeof (err as NodeJS.ErrnoException).code === 'string' && values.out !== undefined) {
      throw new UsageError(`cannot write ${values.out}: ${(err as Error).message}`)
    }
    throw err
  } finally {
    await log.close()
  }
}

function seqOf (line: string): number | undefined {
  try { return (JSON.parse(line) as { body: { seq: number } }).body.seq } catch { return undefined }
}
