import { join } from 'node:path'
import type { Logger } from 'pino'
import { loadOrCreateIdentity } from '../../net/identity.js'
import { createNode } from '../../net/node.js'
import { nativeSigner } from '../../native/native-crypto.js'
import type { Clock } from '../clock.js'
import type { GroupConfig } from './config.js'
import { startGroupMember, type GroupMember } from './member.js'

export interface GroupNodeInit {
  config: GroupConfig
  /** The node's data directory (its identity key; the group's files go in beacon-group/<id>/). */
  dataDir: string
  logger: Logger
  clock?: Clock
  tickMs?: number
}

/** Where a member keeps a group's files inside its data directory. */
export function groupDir (dataDir: string, groupId: string): string {
  return join(dataDir, 'beacon-group', groupId)
}

/**
 * A beacon group member with its own libp2p node (noise, yamux, the membership gater admitting
 * only the group's members) on the group's listen addresses, and its drand HTTP API.
 */
export async function startGroupNode (init: GroupNodeInit): Promise<GroupMember & { stop: () => Promise<void> }> {
  const { config, logger } = init
  const identity = await loadOrCreateIdentity(init.dataDir)
  if (!config.params.members.includes(identity.peerId)) {
    throw new Error(`this node (${identity.peerId}) is not a member of beacon group ${config.params.id}`)
  }
  const node = await createNode({ privateKey: identity.privateKey, listen: config.listen, members: new Set(config.params.members), logger })
  let member: GroupMember
  try {
    member = await startGroupMember({
      params: config.params,
      node,
      signer: nativeSigner(identity.seed, identity.peerId),
      addresses: config.addresses,
      dir: groupDir(init.dataDir, config.params.id),
      logger,
      clock: init.clock,
      http: { host: config.http.host, port: config.http.port },
      tickMs: init.tickMs
    })
  } catch (err) {
    await node.stop()
    throw err
  }
  return { ...member, stop: async () => { await member.close(); await node.stop() } }
}
