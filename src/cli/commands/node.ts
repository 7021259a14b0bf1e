import { defineCommand, type OptionSpecs, type ParsedArgs } from '../command.js'
import { dirname, resolve } from 'node:path'
import { parseNodeConfig, readNodeConfigJson } from '../../daemon/config.js'
import { parseGroupConfig } from '../../beacon/group/config.js'
import { gatherMembers, groupBlockOf, GroupJoinDesk, readGroupDraft, GROUP_DRAFT_FILE } from '../../beacon/group/group-join.js'
import { groupTableBeacon, startGroupNode } from '../../beacon/group/node.js'
import { parseBeaconConfig } from '../../core/beacon/index.js'
import { Daemon } from '../../daemon/daemon.js'
import { startControl, type LoginLinks } from '../../daemon/control.js'
import { startTableWeb } from '../../daemon/table-web.js'
import { createLogger } from '../../daemon/logger.js'
import { ROBOT } from '../../core/hand/messages.js'
import { UsageError } from '../errors.js'
import { parseIntOption } from '../options.js'
import { gatherSeats, joiningTable, JoinDesk, readDraft, registerJoinDesk, writeJson, type Draft } from '../../daemon/table-join.js'
import { loadIdentity } from '../../net/identity.js'
import type { Signer } from '../../core/identity.js'
import { nativeSigner } from '../../crypto/native-crypto.js'

const HELP = `usage: fairdeal node --config FILE [--control-port PORT]

Runs what the config holds, until SIGINT or SIGTERM: a table node (dealer and/or seat), a beacon
group member (a 'group' block: DKG, then threshold rounds served over drand's HTTP API), or both.
For the table: On a stop, a dealt hand is revealed
and countersigned, a hand not yet dealt is aborted with a signed record, and the store is closed.
Logs are JSON lines on stdout (readable on a terminal); FAIRDEAL_LOG_LEVEL sets the level.
The node is driven with 'fairdeal hand ... --data DIR' through its local control endpoint.`

const OPTIONS = { config: { type: 'string' }, 'control-port': { type: 'string' } } satisfies OptionSpecs

export const command = defineCommand({
  name: 'node',
  summary: 'run a table node (dealer and/or seat)',
  help: HELP,
  options: OPTIONS,
  run
})

async function run ({ values }: ParsedArgs<typeof OPTIONS>): Promise<number> {
  if (values.config === undefined) throw new UsageError('--config FILE is required')
  const controlPort = parseIntOption(values['control-port'], '--control-port', 0, 65535)
  let raw = await readNodeConfigJson(values.config)
  // A table joining by links: the node takes the seats first, then runs the whole table.
  const joining = joiningTable(raw) ? await gatherFirst(raw, values.config) : undefined
  if (joining === null) return 0
  if (joining !== undefined) raw = await readNodeConfigJson(values.config)
  // A beacon group gathering its members by invites: the creator's node first takes them all.
  if ((raw as { groupDraft?: unknown } | null)?.groupDraft === true) {
    if (!await gatherGroupFirst(raw, values.config)) return 0
    raw = await readNodeConfigJson(values.config)
  }
  const hasGroup = (raw as { group?: unknown } | null)?.group !== undefined
  const hasTable = (raw as { table?: unknown } | null)?.table !== undefined || (raw as { tables?: unknown } | null)?.tables !== undefined
  if (hasGroup && !hasTable) return await runGroupOnly(raw as { data?: unknown, group: unknown }, values.config)
  const config = await parseNodeConfig(raw, values.config)
  if (controlPort !== undefined) config.controlPort = controlPort
  // Everything the node writes (its LevelDB files, the control file) is its owner's alone: 0600
  // files in 0700 directories, whatever the shell's umask.
  process.umask(0o077)
  const logger = createLogger()
  // The member's DKG record goes into the node's log, which the daemon holds (started just after).
  let started: (d: Daemon) => void = () => {}
  let failed: (err: unknown) => void = () => {}
  const daemonUp = new Promise<Daemon>((resolve, reject) => { started = resolve; failed = reject })
  daemonUp.catch(() => {})
  const record = async (kind: string, payload: unknown): Promise<void> => { await (await daemonUp).log.append(kind, payload) }
  const groupConfig = hasGroup ? parseGroupConfig((raw as { group: unknown }).group, `${values.config}: group`) : undefined
  const group = groupConfig !== undefined ? await startGroupNode({ config: groupConfig, dataDir: config.dataDir, logger, record }) : undefined
  // A table on its own group deals once the group's DKG is done: until then, asked to deal, it says where the group stands.
  let groupFailure: string | undefined
  const ownGroupState = (): string => {
    if (groupFailure !== undefined) return `this node has none (${groupFailure}): see its log`
    const start = groupConfig?.params.dkg.start ?? 0
    const now = Date.now()
    return now < start ? `its DKG starts at ${new Date(start).toISOString()} (in ${Math.ceil((start - now) / 1000)} s)` : `its DKG began at ${new Date(start).toISOString()} and is not done yet`
  }
  const daemon = await Daemon.start({ config, logger, ownGroupState }).catch(async (err: unknown) => { failed(err); await group?.stop(); throw err })
  started(daemon)
  const ownTables = config.tables.filter(t => t.ownGroup !== null)
  if (ownTables.length > 0 && group !== undefined && groupConfig !== undefined) {
    // The group's chain, once this node's member has it (its DKG done, or reloaded at a restart).
    group.ready.then(async chain => {
      const beacon = groupTableBeacon(groupConfig, chain)
      if (beacon === undefined) throw new Error(`no member of group ${groupConfig.params.id} has a drand API URL: the table has no relay for its rounds`)
      const parsed = parseBeaconConfig(beacon, `group ${groupConfig.params.id}'s beacon`)
      for (const t of ownTables) await daemon.bindOwnGroup(t.table.id, parsed)
    }).catch((err: Error) => {
      groupFailure = err.message.split('\n')[0].slice(0, 300)
      logger.error({ group: groupConfig.params.id, tables: ownTables.map(t => t.table.id), err: groupFailure }, `table ${ownTables.map(t => t.table.id).join(', ')} cannot deal: no chain of its own group here (${groupFailure})`)
    })
    logger.info({ group: groupConfig.params.id, tables: ownTables.map(t => t.table.id), dkgStart: new Date(groupConfig.params.dkg.start).toISOString() },
      `table ${ownTables.map(t => t.table.id).join(', ')} takes its beacon from its own group ${groupConfig.params.id}: it deals once the group's DKG is done (${ownGroupState()})`)
  }
  for (const [i, { table, peers }] of config.tables.entries()) {
    if (daemon.peerId !== table.dealer) continue
    // A seat with no address dials in (table join writes "listen": []): that is the normal case,
    // not a fault. A hand whose seat has not dialled in by its contribution deadline ends
    // `unreachable`, and the first send that fails says so ('send failed'): nothing to warn of now.
    const dialIn = table.seats.filter(s => s !== ROBOT && s !== daemon.peerId && peers[s] === undefined)
    if (dialIn.length > 0) {
      logger.info({ table: table.id, seats: dialIn }, `seat ${dialIn.map(s => table.seats.indexOf(s)).join(', ')} of table ${table.id} dial${dialIn.length === 1 ? 's' : ''} in (no address in ${(raw as { tables?: unknown }).tables !== undefined ? `tables.${i}.peers` : 'table.peers'}): the dealer waits for ${dialIn.length === 1 ? 'it' : 'them'}`)
    }
  }
  // A seat that missed the final table (it hung up before the last seat joined) asks again, also
  // after this node's restart: the draft keeps the signed table.
  const joined = joining?.draft ?? await readDraft(config.dataDir)
  if (joined?.links?.final !== undefined && daemon.peerId === joined.table.dealer) {
    const signer = joining?.signer ?? identitySigner(await loadIdentity(config.dataDir))
    await registerJoinDesk(daemon.node, new JoinDesk(config.dataDir, joined, signer, logger))
  }
  const loginLinks: LoginLinks = {}
  let control
  try {
    // Its file is written last (below), once the table page runs too: a client that finds it (the
    // demo dealing, `fairdeal web` asking for a login link) finds the whole node started.
    control = await startControl(daemon, { port: config.controlPort, dataDir: config.dataDir, logger, loginLinks, publish: false })
  } catch (err) {
    // A running libp2p node would keep the process alive: stop it before saying why.
    await daemon.stop()
    await group?.stop()
    throw new UsageError(`cannot start the control endpoint on 127.0.0.1:${config.controlPort}: ${(err as Error).message}`)
  }
  let web: Awaited<ReturnType<typeof startTableWeb>> | undefined
  if (config.webPort !== null) {
    try {
      web = await startTableWeb(daemon, { port: config.webPort, token: control.info.token, host: config.webHost })
      // Printed, not only logged: the person at the terminal opens it (once; it expires in ten minutes).
      const page = web
      loginLinks.make = () => page.loginLink()
      // A login link is a secret (whoever opens it first gets a session): never in the log, at any
      // level. On a terminal it is written there, outside the JSON log; 'fairdeal web --data DIR'
      // asks the running node for a new one.
      logger.info({ web: web.url }, `table page at ${web.url}: 'fairdeal web --data ${config.dataDir}' prints a one-time login link to it`)
      if (process.stderr.isTTY === true) process.stderr.write(`table page: open this one-time login link (valid ten minutes, once): ${web.loginLink()}\n`)
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'the table page could not start; the node runs without it')
    }
  }
  try {
    await control.publish()
  } catch (err) {
    await web?.close()
    await control.close()
    await daemon.stop()
    await group?.stop()
    throw new UsageError(`cannot write the control file in ${config.dataDir}: ${(err as Error).message}`)
  }
  logger.info({ control: control.info.url, dataDir: config.dataDir }, 'control endpoint ready')
  await new Promise<void>(resolve => {
    const stop = (signal: string): void => {
      logger.info({ signal }, 'stopping')
      resolve()
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
  await web?.close()
  await control.close()
  await daemon.stop()
  await group?.stop()
  logger.flush?.()
  return 0
}

/**
 * The dealer's node of a table joining by links, until every seat is taken (src/daemon/table-join.ts):
 * what the node needs afterwards to answer a seat that asks again, or null when stopped first.
 */
async function gatherFirst (raw: unknown, path: string): Promise<{ dir: string, draft: Draft, signer: Signer } | null> {
  const data = (raw as { data?: unknown }).data
  if (typeof data !== 'string' || data === '') throw new UsageError(`${path}: field data is missing (the node's data directory)`)
  const dir = resolve(dirname(resolve(path)), data)
  const draft = await readDraft(dir)
  if (draft?.links === undefined) throw new UsageError(`${path}: its table has seats not taken, and ${dir} holds no table joining by links: finish it with 'fairdeal table add', or run 'fairdeal table new' again`)
  const links = draft.links
  return await untilStopped(dir, async ({ identity, signer, logger, signal }) => {
    const final = await gatherSeats({ dir, draft, privateKey: identity.privateKey, signer, logger, signal })
    if (final === undefined) { logger.flush?.(); return null }
    return { dir, draft: { ...draft, table: final.body.table, links: { ...links, final } }, signer }
  })
}

/** The node's own key as a signer, on OpenSSL (loadIdentity checked that the seed is the peer id's). */
function identitySigner (identity: { seed: Uint8Array, peerId: string }): Signer {
  return nativeSigner(identity.seed, identity.peerId)
}

/**
 * Runs a node's gathering step (seats by links, members by invites) with the data directory's
 * identity, its files private (umask 077), until it ends or SIGINT/SIGTERM aborts `signal`.
 */
async function untilStopped<T> (dir: string, step: (s: { identity: Awaited<ReturnType<typeof loadIdentity>>, signer: Signer, logger: ReturnType<typeof createLogger>, signal: AbortSignal }) => Promise<T>): Promise<T> {
  process.umask(0o077)
  const identity = await loadIdentity(dir)
  const logger = createLogger()
  const stop = new AbortController()
  const onSignal = (signal: string): void => { logger.info({ signal }, 'stopping'); stop.abort() }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    return await step({ identity, signer: identitySigner(identity), logger, signal: stop.signal })
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}

/**
 * The creator's node of a beacon group set up by invites (`beacon group new`): it gathers the
 * members (src/beacon/group/group-join.ts), after which the config names the whole group. False when
 * stopped before every member joined.
 */
async function gatherGroupFirst (raw: unknown, path: string): Promise<boolean> {
  const data = (raw as { data?: unknown }).data
  if (typeof data !== 'string' || data === '') throw new UsageError(`${path}: field data is missing (the node's data directory)`)
  const dir = resolve(dirname(resolve(path)), data)
  const draft = await readGroupDraft(dir)
  if (draft === undefined) throw new UsageError(`${path}: a beacon group still gathering its members, but ${dir} holds no ${GROUP_DRAFT_FILE}: run 'fairdeal beacon group new' again`)
  return await untilStopped(dir, async ({ identity, signer, logger, signal }) => {
    const final = await gatherMembers({ dir, draft, privateKey: identity.privateKey, signer, logger, signal })
    if (final === undefined) { logger.flush?.(); return false }
    // The config becomes an ordinary member's: the group block, with this node's listen and HTTP settings.
    await writeJson(path, { data, group: groupBlockOf(final.body, draft.listen, draft.http) })
    logger.info({ group: final.body.id, dkgStart: new Date(final.body.dkg.start).toISOString() }, `beacon group ${final.body.id} is complete: the ${final.body.reshare !== undefined ? 'reshare' : 'DKG'} starts at ${new Date(final.body.dkg.start).toISOString()}`)
    return true
  })
}

/** A config with a beacon group and no table: the member alone (no control endpoint). */
async function runGroupOnly (raw: { data?: unknown, group: unknown }, path: string): Promise<number> {
  if (typeof raw.data !== 'string' || raw.data === '') throw new UsageError(`${path}: field data is missing (the node's data directory)`)
  const config = parseGroupConfig(raw.group, `${path}: group`)
  const logger = createLogger()
  const dataDir = resolve(dirname(resolve(path)), raw.data)
  // The creator of a group set up by invites answers late members with the final group.
  const draft = await readGroupDraft(dataDir)
  const joinDesk = draft?.final !== undefined && draft.final.body.id === config.params.id
    ? new GroupJoinDesk(dataDir, draft, identitySigner(await loadIdentity(dataDir)), logger)
    : undefined
  const member = await startGroupNode({ config, dataDir, logger, ownLog: true, joinDesk })
  // Until its DKG (or reshare) starts a member is silent: say when, so the wait is not a mystery.
  const waitingFor = member.status().phase === 'waiting-for-dkg' ? config.params.dkg.start : undefined
  logger.info({ group: config.params.id, index: member.index, http: member.httpUrl, ...(waitingFor !== undefined ? { dkgStart: new Date(waitingFor).toISOString() } : {}) },
    'beacon group member started' + (waitingFor !== undefined
      ? `: its ${config.params.reshare !== undefined ? 'reshare' : 'DKG'} starts at ${new Date(waitingFor).toISOString()} (in ${Math.max(0, Math.round((waitingFor - Date.now()) / 1000))} s), every member's node up by then`
      : ''))
  await new Promise<void>(resolve => {
    const stop = (signal: string): void => { logger.info({ signal }, 'stopping'); resolve() }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
  await member.stop()
  logger.flush?.()
  return 0
}
