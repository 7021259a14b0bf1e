import { defineCommand, type OptionSpecs, type ParsedArgs } from '../command.js'
import { readFile } from 'node:fs/promises'
import { UsageError } from '../errors.js'
import { parseIntOption } from '../options.js'
import { verifyDkgResult, type DkgResult } from '../../core/beacon/index.js'
import { prepareLocalGroup } from '../../beacon/group/local-group.js'
import { fetchMemberStatus } from '../../beacon/group/observe.js'
import { TRANSCRIPT_FILE } from '../../beacon/group/member.js'
import { nativeVerifyDocument } from '../../crypto/native-crypto.js'

const USAGE = `usage: fairdeal beacon group <create|status|verify> [options]

  create --out DIR --members N [--threshold T] [--period S] [--start-in S] [--phase-ms MS] [--id ID]
      Writes a loopback group: DIR/memberI/ (identity key) and DIR/memberI.json (node config with a
      'group' block). Run each with 'fairdeal node --config DIR/memberI.json': the DKG starts
      --start-in seconds from now (default 30), round 1 is due a second and a half later.
  status --url http://127.0.0.1:PORT
      A member's view: DKG phase, chain, latest round, and why a round is not out yet.
  verify DIR/memberI/beacon-group/ID/${TRANSCRIPT_FILE}
      Re-checks a member's DKG transcript offline: every signature, the complaints and answers,
      the qualified set, the group key, groupHash and chain hash.`

const OPTIONS = {
  out: { type: 'string' },
  members: { type: 'string' },
  threshold: { type: 'string' },
  period: { type: 'string' },
  'start-in': { type: 'string' },
  'phase-ms': { type: 'string' },
  id: { type: 'string' },
  url: { type: 'string' }
} satisfies OptionSpecs

export const command = defineCommand({
  name: 'beacon group',
  summary: 'create, watch or verify a beacon group of fairdeal nodes (DKG, threshold rounds)',
  help: USAGE,
  options: OPTIONS,
  positionals: { min: 1, max: 2, missing: 'give create, status or verify' },
  run
})

async function run ({ values, positionals }: ParsedArgs<typeof OPTIONS>): Promise<number> {
  const sub = positionals[0]
  switch (sub) {
    case 'create': {
      if (values.out === undefined) throw new UsageError('create: --out DIR is required')
      const n = parseIntOption(values.members, '--members', 1, 64)
      if (n === undefined) throw new UsageError('create: --members N is required')
      const group = await prepareLocalGroup({
        root: values.out,
        members: n,
        threshold: parseIntOption(values.threshold, '--threshold', 1, n),
        period: parseIntOption(values.period, '--period', 1, 3600),
        startInMs: (parseIntOption(values['start-in'], '--start-in', 1, 86_400) ?? 30) * 1000,
        phaseMs: parseIntOption(values['phase-ms'], '--phase-ms', 100, 3_600_000),
        id: values.id
      })
      const p = group.configs[0].params
      process.stdout.write([
        `beacon group ${p.id}: ${n} members, threshold ${p.threshold}, period ${p.period} s`,
        `DKG starts at ${new Date(p.dkg.start).toISOString()}, round 1 due at ${new Date(p.genesisTime * 1000).toISOString()}`,
        ...group.files.map((f, i) => `member ${i + 1}: fairdeal node --config ${f}   (drand API ${group.urls[i]})`),
        ''
      ].join('\n'))
      return 0
    }
    case 'status': {
      if (values.url === undefined) throw new UsageError('status: --url http://127.0.0.1:PORT is required (a member\'s drand API)')
      const s = await fetchMemberStatus(values.url.replace(/\/$/, ''))
      if (s === undefined) throw new UsageError(`status: no beacon group member answers at ${values.url}`)
      process.stdout.write(JSON.stringify(s, (k, v) => k === 'recent' ? undefined : v, 2) + '\n')
      return 0
    }
    case 'verify': {
      const file = positionals[1]
      if (file === undefined) throw new UsageError(`verify: give the path of a member's ${TRANSCRIPT_FILE}`)
      let saved: DkgResult
      try { saved = JSON.parse(await readFile(file, 'utf8')) as DkgResult } catch (err) { throw new UsageError(`verify: cannot read ${file}: ${(err as Error).message}`) }
      const outcome = verifyDkgResult(saved, nativeVerifyDocument)
      process.stdout.write([
        `DKG transcript of ${saved.transcript.params.id} verifies: qualified ${outcome.qual.join(', ')}`,
        ...outcome.disqualified.map(d => `  member ${d.dealer} disqualified: ${d.reason}${'complainant' in d ? ` (complaint by member ${d.complainant})` : ''}`),
        `chain ${outcome.chainInfo.hash}, group key ${outcome.groupKey}`,
        ''
      ].join('\n'))
      return 0
    }
    default:
      throw new UsageError(`unknown subcommand '${sub}' (create, status, verify)`)
  }
}


