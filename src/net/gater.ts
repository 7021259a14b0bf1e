import type { ConnectionGater, MultiaddrConnection, PeerId } from '@libp2p/interface'
import type { Logger } from 'pino'

/** Who may connect: a set of peer ids, or anyone. */
export type Membership = ReadonlySet<string> | 'anyone'

/**
 * A connection gater that lets only `members` connect in or be dialled, and logs every refusal at
 * warn with the peer id and the direction.
 *
 * Inbound peers are checked right after the noise handshake, the first moment their key is
 * proven; dials are checked before any socket is opened and again after noise, for dials to an
 * address that did not name the peer. The set is read at every check, so a caller may keep it
 * and add or remove members later (existing connections are not closed by a removal).
 */
export function membershipGater (members: Membership, logger: Logger): ConnectionGater {
  if (members === 'anyone') return {}
  const refused = (peer: PeerId, direction: 'inbound' | 'outbound', stage: string, maConn?: MultiaddrConnection): boolean => {
    const id = peer.toString()
    if (members.has(id)) return false
    logger.warn({ peer: id, direction, stage, remoteAddr: maConn?.remoteAddr.toString() },
      `refused ${direction} connection: ${id} is not a member`)
    return true
  }
  return {
    denyDialPeer: (peer) => refused(peer, 'outbound', 'dial'),
    denyOutboundEncryptedConnection: (peer, maConn) => refused(peer, 'outbound', 'encrypted', maConn),
    denyInboundEncryptedConnection: (peer, maConn) => refused(peer, 'inbound', 'encrypted', maConn)
  }
}
