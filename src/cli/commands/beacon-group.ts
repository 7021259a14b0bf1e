import { defineCommand, type OptionSpecs, type ParsedArgs } from '../command.js'
import { stat } from 'node:fs/promises'
import { readBounded } from '../../store/bounded-read.js'
import { dirname, join } from 'node:path'
import { UsageError } from '../errors.js'
import { parseIntOption } from '../options.js'
import { checkDkgAgreement, type AgreementInput, type DkgResult } from '../../core/beacon/index.js'
import { prepareLocalGroup } from '../../beacon/group/local-group.js'
import { BEACON_CONFIG_FILE, groupDir } from '../../beacon/group/node.js'
import { fetchMemberStatus } from '../../beacon/group/observe.js'
import { RESULTS_FILE, TRANSCRIPT_FILE } from '../../beacon/group/member.js'
import { nativeVerifyDocument } from '../../crypto/native-crypto.js'

/** A member's transcript or results file read for verify: far above any group's (a few MB at most). */
const MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024

const USAGE = `usage: fairdeal beacon group <create|status|verify> [options]

  create --out DIR --members N [--threshold T] [--period S] [--start-in S] [--phase-ms MS] [--id ID]
         [--listen-host IP] [--announce HOST]... [--base-port P]
      Writes a group: DIR/memberI/ (identity key) and DIR/memberI.json (node config with a 'group'
      block). Run each with 'fairdeal node --config DIR/memberI.json' (copy DIR/memberI/ and
      DIR/memberI.json to member I's machine): the DKG starts --start-in seconds from now (default
      30), round 1 is due a second and a half later. Once its DKG is done, each member writes
      DIR/memberI/beacon-group/ID/beacon.json, the group as a beacon for
      'fairdeal table new --beacon FILE'.
      --listen-host IP     what every member binds, libp2p and HTTP (default 127.0.0.1; 0.0.0.0
                           to be reachable from other machines)
      --announce HOST      how the others reach a member (IP or DNS name): once for all, or once
                           per member in order (default: the listen host, 127.0.0.1 for 0.0.0.0)
      --base-port P        member I uses TCP port P+2(I-1) for libp2p and P+2(I-1)+1 for HTTP
                           (default: free ports of this machine)
  status --url http://127.0.0.1:PORT
      A member's view: DKG phase, chain, latest round, and why a round is not out yet.
  verify PATH [PATH...]
      Re-checks members' DKG transcripts offline (PATH: a ${TRANSCRIPT_FILE}, or the directory
      DATA/beacon-group/ID holding it): every signature, the complaints and answers, the qualified
      set, the group key, groupHash and chain hash; then that every transcript given, and every
      signed result its member kept beside it (${RESULTS_FILE}), has the same qualified set, group
      key and groupHash. Exits 1 when members computed different keys.`

/** Transcripts one `verify` compares: a group has at most 64 members. */
const MAX_TRANSCRIPTS = 64

const OPTIONS = {
  out: { type: 'string' },
  members: { type: 'string' },
  threshold: { type: 'string' },
  period: { type: 'string' },
  'start-in': { type: 'string' },
  'phase-ms': { type: 'string' },
  id: { type: 'string' },
  url: { type: 'string' },
  'listen-host': { type: 'string' },
  announce: { type: 'string', multiple: true },
  'base-port': { type: 'string' }
} satisfies OptionSpecs

export const command = defineCommand({
  name: 'beacon group',
  summary: 'create, watch or verify a beacon group of fairdeal nodes (DKG, threshold rounds)',
  help: USAGE,
  options: OPTIONS,
  positionals: { min: 1, max: 1 + MAX_TRANSCRIPTS, missing: 'give create, status or verify' },
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
        id: values.id,
        listenHost: values['listen-host'],
        announce: values.announce !== undefined && values.announce.length > 0 ? values.announce : undefined,
        basePort: parseIntOption(values['base-port'], '--base-port', 1, 65535)
      })
      const p = group.configs[0].params
      process.stdout.write([
        `beacon group ${p.id}: ${n} members, threshold ${p.threshold}, period ${p.period} s`,
        `DKG starts at ${new Date(p.dkg.start).toISOString()}, round 1 due at ${new Date(p.genesisTime * 1000).toISOString()}`,
        ...group.files.map((f, i) => `member ${i + 1}: fairdeal node --config ${f}   (drand API ${group.urls[i]})`),
        `once its DKG is done, each member writes ${join(groupDir(group.dataDirs[0].replace(/member1$/, 'memberI'), p.id), BEACON_CONFIG_FILE)}:`,
        `  fairdeal table new --beacon ${join(groupDir(group.dataDirs[0], p.id), BEACON_CONFIG_FILE)} …   (the group's chain, its members' URLs as relays)`,
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
      const paths = positionals.slice(1)
      if (paths.length === 0) throw new UsageError(`verify: give the path of a member's ${TRANSCRIPT_FILE} (or several members')`)
      const inputs = await Promise.all(paths.map(readTranscript))
      const { outcome, agreeing, disagreements } = checkDkgAgreement(inputs, nativeVerifyDocument)
      const id = inputs[0].result.transcript.params.id
      const lines = [
        `DKG transcript${inputs.length > 1 ? `s (${inputs.length})` : ''} of ${id} verif${inputs.length > 1 ? 'y' : 'ies'}: qualified ${outcome.qual.join(', ')}`,
        ...outcome.disqualified.map(d => `  member ${d.dealer} disqualified: ${d.reason}${'complainant' in d ? ` (complaint by member ${d.complainant})` : ''}`),
        `chain ${outcome.chainInfo.hash}, group key ${outcome.groupKey}`
      ]
      if (disagreements.length > 0) {
        process.stdout.write([
          ...lines,
          `members computed different keys: ${disagreements.length} disagreement${disagreements.length > 1 ? 's' : ''} with ${inputs[0].label}`,
          ...disagreements.map(d => `  ${d.source}: ${d.reason}`),
          'the group has no single key: its rounds cannot be trusted to come; run a new DKG',
          ''
        ].join('\n'))
        return 1
      }
      process.stdout.write([
        ...lines,
        `members agreeing (signed results or transcripts): ${agreeing.length > 0 ? agreeing.join(', ') : 'none on record'} of ${inputs[0].result.transcript.params.members.length} members`,
        ''
      ].join('\n'))
      return 0
    }
    default:
      throw new UsageError(`unknown subcommand '${sub}' (create, status, verify)`)
  }
}



/** A member's transcript (PATH is the file or its directory) and the signed results kept beside it. */
async function readTranscript (path: string): Promise<AgreementInput> {
  let file = path
  try { if ((await stat(path)).isDirectory()) file = join(path, TRANSCRIPT_FILE) } catch (err) { throw new UsageError(`verify: cannot read ${path}: ${(err as Error).message}`) }
  let result: DkgResult
  try { result = JSON.parse((await readBounded(file, MAX_TRANSCRIPT_BYTES)).toString('utf8')) as DkgResult } catch (err) { throw new UsageError(`verify: cannot read ${file}: ${(err as Error).message}`) }
  let results: unknown[] | undefined
  const beside = join(dirname(file), RESULTS_FILE)
  try {
    const parsed = JSON.parse((await readBounded(beside, MAX_TRANSCRIPT_BYTES)).toString('utf8')) as unknown
    if (!Array.isArray(parsed)) throw new UsageError(`verify: ${beside} is not a list of signed results`)
    results = parsed
  } catch (err) {
    if (err instanceof UsageError) throw err
    if ((err as { code?: string }).code !== 'ENOENT') throw new UsageError(`verify: cannot read ${beside}: ${(err as Error).message}`)
  }
  return { label: file, result, results }
}
