import { defineCommand, type OptionSpecs, type ParsedArgs } from '../command.js'
import { stat } from 'node:fs/promises'
import { readBounded } from '../../store/bounded-read.js'
import { dirname, join, resolve } from 'node:path'
import { UsageError } from '../errors.js'
import { parseIntOption } from '../options.js'
import { checkDkgAgreement, type AgreementInput, type DkgResult } from '../../core/beacon/index.js'
import { prepareLocalGroup } from '../../beacon/group/local-group.js'
import { BEACON_CONFIG_FILE, groupDir, heldShare, oldGroupProblem } from '../../beacon/group/node.js'
import { fetchMemberStatus } from '../../beacon/group/observe.js'
import { RESULTS_FILE, TRANSCRIPT_FILE } from '../../beacon/group/member.js'
import { parseGroupConfig } from '../../beacon/group/config.js'
import { nativeVerifyDocument } from '../../crypto/native-crypto.js'
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, rm } from 'node:fs/promises'
import { defaultThreshold, groupSession } from '../../core/beacon/index.js'
import { GROUP_ID } from '../../core/beacon/group-params.js'
import { decodeGroupInvite, encodeGroupInvite } from '../../core/beacon/group-join.js'
import { JoinRefusedError, newJoinSecret, secretDigest } from '../../core/join.js'
import { groupBlockOf, joinGroup, readGroupDraft, GROUP_DRAFT_FILE, type GroupDraft } from '../../beacon/group/group-join.js'
import { CONFIG_FILE, writeJson } from '../../daemon/table-join.js'
import { loadOrCreateIdentity } from '../../net/identity.js'
import { createLogger } from '../../daemon/logger.js'
import { memberSettings as settingsOf } from '../group-member.js'

/** A member's transcript or results file read for verify: far above any group's (a few MB at most). */
const MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024

const USAGE = `usage: fairdeal beacon group <new|join|reshare|create|status|verify> [options]

  new --members N --data DIR [--threshold T] [--period S] [--start-in S] [--phase-ms MS] [--id ID]
      [--listen ADDR]... [--announce ADDR]... [--http-host IP] [--http-port P] [--url URL] [--force]
      Sets up a group whose members join by invite, one per member, nothing copied back by hand.
      This node is member 1: it prints 'member I: INVITE' for I = 2…N and writes DIR/node.json.
        1. run 'fairdeal node --config DIR/node.json': it waits for the members to join;
        2. each member runs 'fairdeal beacon group join INVITE --data DIR …', which writes its
           DIR/node.json once every member has joined, then 'fairdeal node --config DIR/node.json'.
      The DKG starts --start-in seconds (default 60) after the last member joined: time for
      everyone to start their node. Every member must be reachable by the others at the
      addresses it announces (libp2p; its HTTP API for tables and tlock clients).
      --listen ADDR    where this node listens, for the joins and then for the group (default
                       /ip4/127.0.0.1/tcp/7500; /ip4/0.0.0.0/tcp/7500 for other machines)
      --announce ADDR  how the others dial it: a multiaddr, or a host (IP or DNS name) on the
                       first listen port (default: the listen addresses, 127.0.0.1 for 0.0.0.0)
      --http-host IP, --http-port P  its drand HTTP API (default port 7501, bound where --listen
                       binds when that is 0.0.0.0 or ::, else 127.0.0.1)
      --url URL        its drand API as the others reach it (default http://ANNOUNCED-HOST:PORT)
  join INVITE --data DIR [--listen ADDR]... [--announce ADDR]... [--http-host IP] [--http-port P] [--url URL] [--force]
      Joins the group of an invite from 'beacon group new': dials its creator, proves the invite,
      waits until every member has joined and writes DIR/node.json (this node's 'group' block).
      Then run 'fairdeal node --config DIR/node.json' before the DKG starts. Options as for new;
      neither replaces a DIR/node.json that holds another config (a table's) without --force.
      A member of the group already (a reshare's invite) keeps its settings unless options say
      otherwise; it restarts its node on the new DIR/node.json.

  reshare --config FILE --members N [--threshold T] [--start-in S] [--phase-ms MS]
  reshare --cancel --config FILE
      Reshares a running group (docs/beacon-group.md "Resharing"): new members, a new threshold,
      the same public key and chain hash, so every table and timelock on the chain keeps working.
      Run on a member (FILE its node.json, the group's DKG or last reshare done there): it becomes
      member 1 of the new group and prints one invite per other member (old members that stay and
      newcomers alike: an old member without an invite leaves the group). Then restart this node
      ('fairdeal node --config FILE'): it gathers the members (meanwhile the others make the
      rounds), and each member runs 'fairdeal beacon group join INVITE --data DIR' and restarts
      its node. The old members deal their shares --start-in seconds (default 60) after the last
      join; the new group signs from two rounds after the reshare's last deadline. A reshare needs
      the old group's threshold of old members holding their shares; otherwise it is refused (a
      signed record, in records.jsonl and the node's log) and the old group goes on. --threshold
      default: a majority.
      --cancel, before every member has joined (stop that node first): writes FILE back as it was
      and drops the invites.

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
  config: { type: 'string' },
  members: { type: 'string' },
  threshold: { type: 'string' },
  period: { type: 'string' },
  'start-in': { type: 'string' },
  'phase-ms': { type: 'string' },
  id: { type: 'string' },
  url: { type: 'string' },
  'listen-host': { type: 'string' },
  announce: { type: 'string', multiple: true },
  'base-port': { type: 'string' },
  data: { type: 'string' },
  listen: { type: 'string', multiple: true },
  'http-host': { type: 'string' },
  'http-port': { type: 'string' },
  force: { type: 'boolean' },
  cancel: { type: 'boolean' }
} satisfies OptionSpecs

export const command = defineCommand({
  name: 'beacon group',
  summary: 'set up (new, join), reshare, watch or verify a beacon group of fairdeal nodes (DKG, threshold rounds)',
  help: USAGE,
  options: OPTIONS,
  positionals: { min: 1, max: 1 + MAX_TRANSCRIPTS, missing: 'give new, join, reshare, create, status or verify' },
  run
})

async function run ({ values, positionals }: ParsedArgs<typeof OPTIONS>): Promise<number> {
  const sub = positionals[0]
  switch (sub) {
    case 'new': return await groupNew(values)
    case 'reshare': return await groupReshare(values)
    case 'join': {
      if (positionals.length !== 2) throw new UsageError('join: give the invite (fairdeal-group-invite:…), once')
      return await groupJoin(positionals[1], values)
    }
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
      throw new UsageError(`unknown subcommand '${sub}' (new, join, reshare, create, status, verify)`)
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

/**
 * A data directory's node.json is written by new and join: one that holds anything else (a table's
 * config, another group's) is not replaced without --force. `group`: the group being joined, whose
 * own config may be written again.
 */
async function refuseOtherConfig (dir: string, group: string | undefined, force: boolean): Promise<void> {
  if (force) return
  let raw: { groupDraft?: unknown, group?: { id?: unknown }, table?: unknown, tables?: unknown } | undefined
  try { raw = JSON.parse(await readFile(join(dir, CONFIG_FILE), 'utf8')) } catch { return }
  const ours = raw?.table === undefined && raw?.tables === undefined && (group === undefined ? raw?.groupDraft === true : raw?.group?.id === group)
  if (!ours) throw new UsageError(`${join(dir, CONFIG_FILE)} holds another node config (a table's, or another group's): give this node another --data DIR, or --force to replace it`)
}

/** This node's libp2p and HTTP settings for a group set up by invites (new and join alike). */
function memberSettings (values: ParsedArgs<typeof OPTIONS>['values']): ReturnType<typeof settingsOf> {
  return settingsOf({ listen: values.listen, announce: values.announce, httpHost: values['http-host'], httpPort: values['http-port'], url: values.url })
}

async function groupNew (values: ParsedArgs<typeof OPTIONS>['values']): Promise<number> {
  if (values.data === undefined) throw new UsageError('new: --data DIR is required (this node\'s data directory)')
  const n = parseIntOption(values.members, '--members', 2, 64)
  if (n === undefined) throw new UsageError('new: --members N is required (2 to 64, this node included)')
  const threshold = parseIntOption(values.threshold, '--threshold', 1, n) ?? defaultThreshold(n)
  const period = parseIntOption(values.period, '--period', 1, 3600) ?? 3
  const phaseMs = parseIntOption(values['phase-ms'], '--phase-ms', 100, 3_600_000) ?? 10_000
  const startInMs = (parseIntOption(values['start-in'], '--start-in', 1, 86_400) ?? 60) * 1000
  const id = values.id ?? 'fairdeal-group'
  if (!GROUP_ID.test(id)) throw new UsageError('--id must be 1 to 64 letters, digits or . _ : -')
  const dir = values.data
  if (values.force !== true && await readGroupDraft(dir) !== undefined) throw new UsageError(`${dir} holds a group being set up already (${GROUP_DRAFT_FILE}): give --force to replace it (its invites stop working)`)
  await refuseOtherConfig(dir, undefined, values.force === true)
  const me = memberSettings(values)
  const identity = await loadOrCreateIdentity(dir)
  if (identity.created) process.stderr.write(`created this node's identity: ${identity.path}\n`)
  const secrets = Array.from({ length: n - 1 }, () => newJoinSecret(k => new Uint8Array(randomBytes(k))))
  const draft: GroupDraft = {
    v: 1, id, threshold, period, phaseMs, startInMs,
    creator: { peer: identity.peerId, addrs: me.addrs, url: me.url },
    listen: me.listen,
    http: me.http,
    slots: Object.fromEntries(secrets.map((secret, i) => [String(i + 2), { digest: secretDigest(secret) }]))
  }
  await mkdir(dir, { recursive: true, mode: 0o700 })
  await writeJson(join(dir, GROUP_DRAFT_FILE), draft)
  await writeJson(join(dir, CONFIG_FILE), { data: '.', groupDraft: true })
  const addresses = me.addrs.map(a => `${a}/p2p/${identity.peerId}`)
  process.stdout.write([
    `beacon group ${id}: ${n} members, threshold ${threshold}, a round every ${period} s; this node (${identity.peerId}) is member 1`,
    ...secrets.map((secret, i) => `member ${i + 2}: ${encodeGroupInvite({ v: 1, id, members: n, threshold, period, slot: i + 2, secret, creator: identity.peerId, addresses })}`),
    `now run: fairdeal node --config ${join(dir, CONFIG_FILE)}   (it waits for the members; each runs 'fairdeal beacon group join INVITE --data DIR', then 'fairdeal node --config DIR/node.json')`,
    ''
  ].join('\n'))
  return 0
}

/**
 * A member of the group already, joining its reshare with no --listen, --announce, --http-host,
 * --http-port or --url: the settings of its current DIR/node.json (the others reach it where they
 * did). Undefined for a newcomer, or when options are given.
 */
async function currentSettings (values: ParsedArgs<typeof OPTIONS>['values']): Promise<ReturnType<typeof memberSettings> | undefined> {
  if ([values.listen, values.announce, values['http-host'], values['http-port'], values.url].some(v => v !== undefined)) return undefined
  let raw: { group?: unknown } | undefined
  try { raw = JSON.parse(await readFile(join(values.data as string, CONFIG_FILE), 'utf8')) } catch { return undefined }
  if (raw?.group === undefined) return undefined
  const config = parseGroupConfig(raw.group, join(values.data as string, CONFIG_FILE))
  const self = (await loadOrCreateIdentity(values.data as string)).peerId
  const addrs = config.addresses.get(self)
  if (addrs === undefined || addrs.length === 0 || !config.params.members.includes(self)) return undefined
  return { listen: config.listen, addrs, http: config.http, url: config.urls.get(self) ?? `http://127.0.0.1:${config.http.port}` }
}

async function groupReshare (values: ParsedArgs<typeof OPTIONS>['values']): Promise<number> {
  if (values.config === undefined) throw new UsageError('reshare: --config FILE is required (this member\'s node.json)')
  if (values.cancel === true) {
    let raw: { data?: unknown, groupDraft?: unknown }
    try { raw = JSON.parse(await readFile(values.config, 'utf8')) } catch (err) { throw new UsageError(`reshare --cancel: cannot read ${values.config}: ${(err as Error).message}`) }
    return await cancelReshare(values.config, raw)
  }
  const n = parseIntOption(values.members, '--members', 2, 64)
  if (n === undefined) throw new UsageError('reshare: --members N is required (the new group\'s size, 2 to 64, this node included)')
  const threshold = parseIntOption(values.threshold, '--threshold', 1, n) ?? defaultThreshold(n)
  const phaseMs = parseIntOption(values['phase-ms'], '--phase-ms', 100, 3_600_000) ?? 10_000
  const startInMs = (parseIntOption(values['start-in'], '--start-in', 1, 86_400) ?? 60) * 1000
  const file = values.config
  let raw: { data?: unknown, group?: unknown, table?: unknown, tables?: unknown, groupDraft?: unknown }
  try { raw = JSON.parse(await readFile(file, 'utf8')) } catch (err) { throw new UsageError(`reshare: cannot read ${file}: ${(err as Error).message}`) }
  if (raw.groupDraft === true) throw new UsageError(`reshare: ${file} is gathering a group already (a reshare or a new group): 'beacon group reshare --cancel --config ${file}' first`)
  if (raw.group === undefined) throw new UsageError(`reshare: ${file} names no beacon group (its 'group' block)`)
  if (raw.table !== undefined || raw.tables !== undefined) throw new UsageError(`reshare: ${file} also runs a table: reshare from a member whose node.json holds the group only`)
  if (typeof raw.data !== 'string' || raw.data === '') throw new UsageError(`reshare: ${file}: field data is missing (the node's data directory)`)
  let config
  try { config = parseGroupConfig(raw.group, `${file}: group`) } catch (err) { throw new UsageError((err as Error).message) }
  const dir = resolve(dirname(resolve(file)), raw.data)
  const params = config.params
  // This member's share of the group's current key, and the outcome it came from.
  const held = await heldShare(dir, params.id)
  if (held?.session !== groupSession(params)) throw new UsageError(`reshare: this member holds no share of group ${params.id}'s current key (its DKG or last reshare is not done here): reshare from a member that has one`)
  const outcome = await held.outcome()
  const identity = await loadOrCreateIdentity(dir)
  const addrs = config.addresses.get(identity.peerId) ?? []
  if (addrs.length === 0) throw new UsageError(`reshare: ${file} lists no address for this member`)
  const url = config.urls.get(identity.peerId)
  const secrets = Array.from({ length: n - 1 }, () => newJoinSecret(k => new Uint8Array(randomBytes(k))))
  const member = (peer: string): { peer: string, addrs: string[], url?: string } => ({ peer, addrs: config.addresses.get(peer) ?? [], ...(config.urls.has(peer) ? { url: config.urls.get(peer) } : {}) })
  const draft: GroupDraft = {
    v: 1, id: params.id, threshold, period: params.period, phaseMs, startInMs,
    creator: { peer: identity.peerId, addrs, ...(url !== undefined ? { url } : {}) },
    listen: config.listen,
    http: config.http,
    slots: Object.fromEntries(secrets.map((secret, i) => [String(i + 2), { digest: secretDigest(secret) }])),
    reshare: { session: groupSession(params), members: params.members.map(member), threshold: params.threshold, commitments: outcome.commitments, chain: outcome.chainInfo as unknown as Record<string, unknown> },
    // The node's config as it was: --cancel puts it back, nothing of the running group is lost.
    previous: raw as Record<string, unknown>
  }
  await writeJson(join(dir, GROUP_DRAFT_FILE), draft)
  await writeJson(file, { data: raw.data, groupDraft: true })
  const addresses = addrs.map(a => `${a}/p2p/${identity.peerId}`)
  process.stdout.write([
    `reshare of beacon group ${params.id} (chain ${outcome.chainInfo.hash.slice(0, 16)}…, ${params.members.length} members, threshold ${params.threshold}) to ${n} members, threshold ${threshold}; this node is member 1`,
    ...secrets.map((secret, i) => `member ${i + 2}: ${encodeGroupInvite({ v: 1, id: params.id, members: n, threshold, period: params.period, slot: i + 2, secret, creator: identity.peerId, addresses, reshare: outcome.chainInfo.hash })}`),
    `now restart this node: fairdeal node --config ${file}   (it gathers the members; each runs 'fairdeal beacon group join INVITE --data DIR', then restarts its node)`,
    `to call it off before every member has joined: fairdeal beacon group reshare --cancel --config ${file}`,
    ''
  ].join('\n'))
  return 0
}

/**
 * Calls off a reshare still gathering its members: the node's config as it was before `reshare`
 * (kept in the draft) is written back and the draft removed, so the node runs its group again. A
 * reshare whose group is complete is not called off: its members may have started on it.
 */
async function cancelReshare (file: string, raw: { data?: unknown, groupDraft?: unknown }): Promise<number> {
  if (raw.groupDraft !== true || typeof raw.data !== 'string') throw new UsageError(`reshare --cancel: ${file} is not gathering a reshare`)
  const dir = resolve(dirname(resolve(file)), raw.data)
  const draft = await readGroupDraft(dir)
  if (draft?.reshare === undefined || draft.previous === undefined) throw new UsageError(`reshare --cancel: ${dir} holds no reshare being gathered (${GROUP_DRAFT_FILE})`)
  if (draft.final !== undefined) throw new UsageError(`reshare --cancel: every member has joined already (the reshare starts at ${new Date(draft.final.body.dkg.start).toISOString()}); it cannot be called off here`)
  await writeJson(file, draft.previous)
  await rm(join(dir, GROUP_DRAFT_FILE), { force: true })
  process.stdout.write(`the reshare of beacon group ${draft.id} is called off: ${file} runs the group as before (restart its node); its invites no longer work\n`)
  return 0
}

async function groupJoin (text: string, values: ParsedArgs<typeof OPTIONS>['values']): Promise<number> {
  if (values.data === undefined) throw new UsageError('join: --data DIR is required (this node\'s data directory)')
  let invite
  try { invite = decodeGroupInvite(text) } catch (err) { throw new UsageError((err as Error).message) }
  await refuseOtherConfig(values.data, invite.id, values.force === true)
  const me = (invite.reshare !== undefined ? await currentSettings(values) : undefined) ?? memberSettings(values)
  const identity = await loadOrCreateIdentity(values.data)
  if (identity.created) process.stderr.write(`created this node's identity: ${identity.path}\n`)
  if (identity.peerId === invite.creator) throw new UsageError('this data directory is the group creator\'s: join from another member\'s')
  process.stderr.write(`joining beacon group ${invite.id} as member ${invite.slot} of ${invite.members}: dialling its creator…\n`)
  let final
  try {
    final = await joinGroup({
      invite, privateKey: identity.privateKey, self: identity.peerId, addrs: me.addrs, url: me.url, logger: createLogger({ level: 'warn', fd: 2 }),
      onWaiting: () => { process.stderr.write('its node does not answer yet: trying again every second for two minutes (the creator starts it with \'fairdeal node --config DIR/node.json\')\n') },
      onBound: waiting => { process.stderr.write(waiting.length > 0 ? `joined; waiting for member ${waiting.join(', ')}\n` : 'joined; every member is in\n') }
    })
  } catch (err) {
    if (err instanceof JoinRefusedError) throw new UsageError(err.message)
    throw new UsageError((err as Error).message)
  }
  const file = join(values.data, CONFIG_FILE)
  const block = groupBlockOf(final.body, me.listen, me.http)
  // Checked as `fairdeal node` will (a reshare's old group against its chain): refused here, not at start.
  let parsed
  try { parsed = parseGroupConfig(block, 'the creator\'s final group') } catch (err) { throw new UsageError((err as Error).message) }
  const problem = await oldGroupProblem(values.data, parsed.params, identity.peerId)
  if (problem !== undefined) throw new UsageError(`the creator's reshare is refused: ${problem}`)
  await writeJson(file, { data: '.', group: block })
  process.stdout.write([
    `member ${invite.slot} of beacon group ${final.body.id} (${final.body.members.length} members, threshold ${final.body.threshold}): wrote ${file}`,
    final.body.reshare !== undefined
      ? `the reshare starts at ${new Date(final.body.dkg.start).toISOString()}: before then, (re)start: fairdeal node --config ${file}; the new group signs from round ${final.body.reshare.transition}`
      : `the DKG starts at ${new Date(final.body.dkg.start).toISOString()}: run before then: fairdeal node --config ${file}`,
    ''
  ].join('\n'))
  return 0
}
