import type { Connection, ConnectionGater, MultiaddrConnection, PeerId } from '@libp2p/interface'
import type { Logger } from 'pino'
import { MAX_STRANGER_CONNECTIONS } from './limits.js'
import { createRejectionLog } from './rejection-log.js'

/** Who may connect: a set of peer ids, or anyone. */
export type Membership = ReadonlySet<string> | 'anyone'

export interface GaterOptions {
  /**
   * 'refuse' (the default): only members connect. 'admit': peers outside `members` may connect in
   * too (a public log), at most MAX_STRANGER_CONNECTIONS of them at once, so that members always
   * find room; we never dial them.
   */
  strangers?: 'refuse' | 'admit' | (() => boolean)
  /** The node's open connections (for counting strangers); read at each check. */
  connections?: () => Connection[]
}

/**
 * A connection gater that lets only `members` connect in or be dialled, and logs every refusal at
 * warn with the peer id and the direction, in rate-limited summaries (src/net/rejection-log.ts).
 *
 * Inbound peers are checked right after the noise handshake, the first moment their key is
 * proven; dials are checked before any socket is opened and again after noise, for dials to an
 * address that did not name the peer. The set is read at every check, so a caller may keep it
 * and add or remove members later (existing connections are not closed by a removal).
 */
export function membershipGater (members: Membership, logger: Logger, options: GaterOptions = {}): ConnectionGater {
  if (members === 'anyone') return {}
  const admitStrangers = (): boolean => typeof options.strangers === 'function' ? options.strangers() : options.strangers === 'admit'
  const log = createRejectionLog(logger)
  const refuse = (peer: PeerId, direction: 'inbound' | 'outbound', stage: string, why: string, maConn?: MultiaddrConnection): true => {
    const id = peer.toString()
    log({ peer: id, direction, stage, remoteAddr: maConn?.remoteAddr.toString(), reason: why }, `refused ${direction} connection: ${id} ${why}`)
    return true
  }
  const notMember = (peer: PeerId): boolean => !members.has(peer.toString())
  return {
    denyDialPeer: (peer) => notMember(peer) && refuse(peer, 'outbound', 'dial', 'is not a member'),
    denyOutboundEncryptedConnection: (peer, maConn) => notMember(peer) && refuse(peer, 'outbound', 'encrypted', 'is not a member', maConn),
    denyInboundEncryptedConnection: (peer, maConn) => {
      // A member is always let in: room per member is kept by closing its oldest connections (node.ts).
      if (!notMember(peer)) return false
      if (!admitStrangers()) return refuse(peer, 'inbound', 'encrypted', 'is not a member', maConn)
      const strangers = (options.connections?.() ?? []).filter(c => c.status === 'open' && !members.has(c.remotePeer.toString())).length
      if (strangers < MAX_STRANGER_CONNECTIONS) return false
      return refuse(peer, 'inbound', 'encrypted', `is not a member and ${strangers} non-members are connected already (the room left is the members')`, maConn)
    }
  }
}
