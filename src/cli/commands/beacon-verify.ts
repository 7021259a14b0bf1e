import { defineCommand, type OptionSpecs, type ParsedArgs } from '../command.js'
import { access } from 'node:fs/promises'
import { UsageError } from '../errors.js'
import { parseChainInfo, verifyBeaconEntry, type ChainInfo } from '../../core/beacon/index.js'
import { loadBeaconPreset, readJsonFile } from '../../beacon/presets.js'

const USAGE = `usage: fairdeal beacon verify FILE.json...
       fairdeal beacon verify --chain CHAIN ENTRY.json...

Checks drand beacon entries offline (round, randomness = sha256(signature), BLS signature for the
chain's scheme), against the chain info alone.

  FILE.json        {info, entries}: a chain info and the entries to check against it
  ENTRY.json       one drand entry {round, randomness, signature[, previous_signature]},
                   a list of them, or an {info, entries} file (its info is then ignored)
  --chain CHAIN    the chain to check against: a chain info JSON file, a file with an "info"
                   field (beacon config, preset, fixture), or a preset name (quicknet, default)
  --round N        every entry must be round N (the round a COMMIT named)

Prints one line per failed entry and, last, "N passed, M failed". Exit 1 if any failed.`

async function loadChain (spec: string): Promise<ChainInfo> {
  let exists = true
  try { await access(spec) } catch { exists = false }
  if (!exists) {
    if (/^[a-z0-9-]+$/.test(spec)) {
      const preset = await loadBeaconPreset(spec)
      if (preset.kind === 'drand') return preset.chain
    }
    throw new UsageError(`--chain ${spec}: no such file or preset`)
  }
  const value = await readJsonFile(spec, 'chain info')
  const obj = value as Record<string, unknown> | null
  const info = obj !== null && typeof obj === 'object' && !('schemeID' in obj) && 'info' in obj ? obj.info : value
  return parseChainInfo(info, `chain info ${spec}`)
}

interface Job { label: string, entry: unknown, chain: ChainInfo }

function entriesOf (value: unknown, file: string): { info?: unknown, entries: unknown[] } {
  if (Array.isArray(value)) return { entries: value }
  if (typeof value === 'object' && value !== null) {
    const obj = value as Record<string, unknown>
    if ('entries' in obj) {
      if (!Array.isArray(obj.entries)) throw new UsageError(`${file}: "entries" must be a list`)
      return { info: obj.info, entries: obj.entries }
    }
    if ('round' in obj) return { entries: [obj] }
  }
  throw new UsageError(`${file}: expected a drand entry, a list of entries, or {info, entries}`)
}

const OPTIONS = {
  chain: { type: 'string' },
  round: { type: 'string' }
} satisfies OptionSpecs

export const command = defineCommand({
  name: 'beacon verify',
  summary: 'check drand beacon entries offline',
  help: USAGE,
  options: OPTIONS,
  positionals: { min: 1, max: Infinity, missing: 'give at least one file of entries' },
  run
})

async function run ({ values, positionals }: ParsedArgs<typeof OPTIONS>): Promise<number> {
  let round: number | undefined
  if (values.round !== undefined) {
    if (!/^[1-9][0-9]{0,15}$/.test(values.round)) throw new UsageError(`--round must be a round number >= 1, got ${JSON.stringify(values.round)}`)
    round = Number(values.round)
  }
  const pinned = values.chain !== undefined ? await loadChain(values.chain) : undefined

  const jobs: Job[] = []
  for (const file of positionals) {
    const { info, entries } = entriesOf(await readJsonFile(file, 'entries file'), file)
    let chain = pinned
    if (chain === undefined) {
      if (info === undefined) throw new UsageError(`${file} has no chain info: give one with --chain`)
      chain = parseChainInfo(info, `${file}: info`)
    }
    entries.forEach((entry, i) => {
      jobs.push({ label: `${file} entry ${i + 1}`, entry, chain: chain! })
    })
  }
  if (jobs.length === 0) throw new UsageError('no entries to verify')

  let passed = 0
  let failed = 0
  for (const job of jobs) {
    const claimed = (job.entry as { round?: unknown } | null)?.round
    const expected = round ?? (typeof claimed === 'number' ? claimed : 0)
    const verdict = verifyBeaconEntry(job.chain, job.entry, expected)
    if (verdict.ok) {
      passed++
    } else {
      failed++
      const name = typeof claimed === 'number' ? `round ${claimed}` : 'entry'
      process.stdout.write(`FAIL ${name} (${job.label}, chain ${job.chain.metadata.beaconID}): ${verdict.reason}: ${verdict.message}\n`)
    }
  }
  process.stdout.write(`${passed} passed, ${failed} failed\n`)
  return failed > 0 ? 1 : 0
}
