import { join } from 'node:path'
import { beaconConfigJson, participantsOf, type ChainInfo, type DkgResult, type GroupParams } from '../../core/beacon/index.js'
import { MAX_RELAYS } from '../../core/beacon/config.js'
import { writeAtomic } from '../local-beacon.js'
import type { Logger } from 'pino'
import { loadOrCreateIdentity } from '../../net/identity.js'
import { createNode } from '../../net/node.js'
import { nativeSigner } from '../../crypto/native-crypto.js'
import { logDbPath, openLog } from '../../store/log.js'
import type { Connection, Stream } from '@libp2p/interface'
import { GROUP_JOIN_PROTOCOL } from '../../core/beacon/group-join.js'
import type { GroupJoinDesk } from './group-join.js'
import type { Clock } from '../clock.js'
import { groupBeaconConfig, type GroupConfig } from './config.js'
import { startGroupMember, SHARE_FILE, TRANSCRIPT_FILE, type GroupMember } from './member.js'
import { readFile } from 'node:fs/promises'

export interface GroupNodeInit {
  config: GroupConfig
  /** The node's data directory (its identity key; the group's files go in beacon-group/<id>/). */
  dataDir: string
  logger: Logger
  clock?: Clock
  tickMs?: number
  /** Where the DKG's record goes: an append to the node's signed log (GroupMemberInit.record). */
  record?: (kind: string, payload: unknown) => Promise<void>
  /**
   * For a member alone in its data directory (no table node beside it): opens the node's log there
   * and records into it, closing it on stop. Ignored when `record` is given.
   */
  ownLog?: boolean
  /**
   * The creator of a group set up by invites: its desk, complete, keeps answering on the member's
   * node, so that a member that hung up before the group was complete still gets the final group.
   */
  joinDesk?: GroupJoinDesk
}

/** The directory of a data directory that holds its beacon groups' files, one directory per group. */
export const GROUPS_DIR = 'beacon-group'

/** Where a member keeps a group's files inside its data directory. */
export function groupDir (dataDir: string, groupId: string): string {
  return join(dataDir, GROUPS_DIR, groupId)
}

/** The table beacon config a member writes once its DKG is done, for `fairdeal table new --beacon FILE`. */
export const BEACON_CONFIG_FILE = 'beacon.json'

/**
 * The group as a table's beacon: its chain, and as relays the members' URLs (`members[].url`, in
 * member order, at most MAX_RELAYS), each with the chain hash. Undefined when no member has a URL.
 */
export function groupTableBeacon (config: GroupConfig, chain: ChainInfo): Record<string, unknown> | undefined {
  const urls = config.params.members.map(p => config.urls.get(p)).filter((u): u is string => u !== undefined).slice(0, MAX_RELAYS)
  if (urls.length === 0) return undefined
  return beaconConfigJson(groupBeaconConfig(chain, config.params, urls))
}

/**
 * A beacon group member with its own libp2p node (noise, yamux, the membership gater admitting
 * only the group's members) on the group's listen addresses, and its drand HTTP API.
 */
export async function startGroupNode (init: GroupNodeInit): Promise<GroupMember & { stop: () => Promise<void> }> {
  const { config, logger } = init
  const identity = await loadOrCreateIdentity(init.dataDir)
  const participants = participantsOf(config.params)
  if (!participants.includes(identity.peerId)) {
    throw new Error(`this node (${identity.peerId}) is not a member of beacon group ${config.params.id}`)
  }
  const signer = nativeSigner(identity.seed, identity.peerId)
  const log = init.record === undefined && init.ownLog === true ? await openLog({ path: logDbPath(init.dataDir), create: true, signer }) : undefined
  const record = init.record ?? (log === undefined ? undefined : async (kind: string, payload: unknown) => { await log.append(kind, payload) })
  let node: Awaited<ReturnType<typeof createNode>>
  try {
    node = await createNode({ privateKey: identity.privateKey, listen: config.listen, members: new Set(participants), logger })
  } catch (err) {
    await log?.close()
    throw err
  }
  let member: GroupMember
  try {
    const desk = init.joinDesk
    // Only the group's members pass the gater now: a member asking again gets the final group.
    if (desk !== undefined) await node.handle(GROUP_JOIN_PROTOCOL, async (stream: Stream, connection: Connection) => { await desk.serve(stream, connection) }, { maxInboundStreams: 2 * config.params.members.length })
    member = await startGroupMember({
      params: config.params,
      node,
      signer,
      addresses: config.addresses,
      dir: groupDir(init.dataDir, config.params.id),
      logger,
      clock: init.clock,
      http: { host: config.http.host, port: config.http.port },
      tickMs: init.tickMs,
      catchupMs: config.catchupMs,
      record
    })
  } catch (err) {
    await node.stop()
    await log?.close()
    throw err
  }
  // Once the group has a chain (the DKG done, or reloaded), its table beacon config beside the transcript.
  member.ready.then(async (chain) => {
    const beacon = groupTableBeacon(config, chain)
    if (beacon !== undefined) await writeAtomic(join(groupDir(init.dataDir, config.params.id), BEACON_CONFIG_FILE), JSON.stringify(beacon, null, 2) + '\n', 0o644)
  }).catch((err: Error) => { logger.debug({ reason: err.message }, 'no table beacon config written') })
  return { ...member, stop: async () => { await member.close(); await node.stop(); await log?.close() } }
}

/**
 * The share a node holds of group `id` (its share.json: the session of the DKG or reshare that made
 * it), and the outcome that share came from (transcript.json, read on demand); undefined when it
 * holds none. The secret share itself is not returned.
 */
export async function heldShare (dataDir: string, id: string): Promise<{ session: unknown, outcome: () => Promise<DkgResult> } | undefined> {
  const memberDir = groupDir(dataDir, id)
  const share = JSON.parse(await readFile(join(memberDir, SHARE_FILE), 'utf8').catch(() => 'null')) as { session?: unknown } | null
  if (share === null) return undefined
  return { session: share.session, outcome: async () => JSON.parse(await readFile(join(memberDir, TRANSCRIPT_FILE), 'utf8')) as DkgResult }
}

/**
 * For an old member joining a reshare: the old group the creator's final group names must be the
 * one this member holds a share of (its session, members, threshold, commitments and chain, from its
 * own transcript.json), or the member would deal against commitments it never agreed to. Undefined
 * when it is, or when this node holds no share of the group (a newcomer, or a member that lost it).
 */
export async function oldGroupProblem (dir: string, params: GroupParams, self: string): Promise<string | undefined> {
  const from = params.reshare
  if (from === undefined) return undefined
  const held = await heldShare(dir, params.id)
  if (held === undefined) return undefined
  if (held.session !== from.session) return `it reshares a group run (session ${from.session.slice(0, 16)}…) of which this member holds no share (its share is of ${String(held.session).slice(0, 16)}…)`
  const own = await held.outcome()
  if (own.transcript.params.members.join(',') !== from.members.join(',') || own.transcript.params.threshold !== from.threshold ||
      own.commitments.join(',') !== from.commitments.join(',') || own.chainInfo.hash !== from.chain.hash || !from.members.includes(self)) {
    return 'its old group (members, threshold, commitments or chain) is not the one this member holds a share of'
  }
  return undefined
}
