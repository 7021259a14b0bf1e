import type { Multiaddr } from '@multiformats/multiaddr'
import { dialAddress } from './addresses.js'

/**
 * How a frame gets to a peer, decided before anything is dialled:
 * - `connection`: a connection to the peer is open, whichever side opened it. A seat behind a home
 *   router (NAT) is reached only this way: on the connection it opened to us.
 * - `dial`: no connection, but addresses are known for the peer (each ends in its `/p2p/` id, so
 *   noise checks the far end's key).
 * - `none`: neither. Nothing is dialled: a peer that listens nowhere (or whose address we were not
 *   given) cannot be dialled, and trying would only hold the send up until libp2p gives up. The
 *   caller learns at once and takes its fallback (the dealer's delivery retry, a RELAY).
 */
export type SendRoute =
  | { kind: 'connection' }
  | { kind: 'dial', addresses: Multiaddr[] }
  | { kind: 'none', reason: string }

export function sendRoute (peerId: string, connected: boolean, known: ReadonlyArray<Multiaddr | string> | undefined): SendRoute {
  if (connected) return { kind: 'connection' }
  if (known === undefined || known.length === 0) {
    return { kind: 'none', reason: 'not connected, and no address is known for it (a peer that listens nowhere must dial in)' }
  }
  return { kind: 'dial', addresses: known.map(a => dialAddress(a, peerId)) }
}
