import { createLibp2p } from 'libp2p'
import { flushingOnStop, patchedNoise } from './transport-patches.js'
import { identify } from '@libp2p/identify'
import { circuitRelayServer } from '@libp2p/circuit-relay-v2'
import { multiaddr } from '@multiformats/multiaddr'
import type { Connection, ConnectionGater, Libp2p, PeerId, PrivateKey } from '@libp2p/interface'
import type { Logger } from 'pino'
import { parseListenAddress } from './addresses.js'
import { NetInputError } from './errors.js'
import { membershipGater } from './gater.js'
import { boundedMuxer, connectionBounds, guardedTransports, listenFailure } from './libp2p-parts.js'
import { connectionLimit } from './limits.js'
import { createRejectionLog } from './rejection-log.js'

/**
 * A table's relay (docs/network.md, "A dealer behind NAT: the relay"): a libp2p circuit-relay v2
 * node on which the dealer holds a reservation, so that seats reach a dealer that nobody can dial.
 * It relays for the tables' members only (and, while a table takes seats by links, a joining seat
 * to that table's dealer only), and without relay v2's default limits (2 minutes and
 * 128 KiB per relayed connection), which would cut a table's long-lived connections mid-hand: what
 * bounds it instead is its member list (only members connect, at most one reservation each).
 */

/** How a table names its relay: a dialable multiaddr that ends with the relay's `/p2p/PEERID`. */
export interface RelayAddress {
  address: string
  peerId: string
}

const RELAY_SHAPE = /^\/(ip4|ip6|dns|dns4|dns6)\/[^/\s]+\/tcp\/\d{1,5}(\/ws)?\/p2p\/[1-9A-HJ-NP-Za-km-z]+$/

/** Checks a relay address (`/ip4/HOST/tcp/PORT[/ws]/p2p/RELAYID`, or /dns4 …) and names its peer. */
export function parseRelayAddress (text: string): RelayAddress {
  if (typeof text !== 'string' || !RELAY_SHAPE.test(text)) {
    throw new NetInputError(`relay address ${JSON.stringify(String(text).slice(0, 120))} must look like /ip4/HOST/tcp/PORT/p2p/RELAYID (or /dns4/NAME/…, …/tcp/PORT/ws/p2p/RELAYID): the relay's peer id is part of it`)
  }
  let peerId: string | undefined
  try { peerId = multiaddr(text).getComponents().findLast(c => c.name === 'p2p')?.value } catch (err) {
    throw new NetInputError(`relay address ${JSON.stringify(text)} is not a multiaddr (${(err as Error).message})`)
  }
  if (peerId === undefined) throw new NetInputError(`relay address ${text} names no peer`)
  return { address: text, peerId }
}

/** Where a node reaches `peer` through the relay (the peer holds a reservation there). */
export function circuitAddress (relay: string, peer: string): string {
  return `${relay}/p2p-circuit/p2p/${peer}`
}

/** What a node listens on to hold a reservation on every relay it is connected to. */
export const RESERVE_ON_RELAYS = '/p2p-circuit'

export interface RelayInit {
  privateKey: PrivateKey
  /** Where the relay listens: `/ip4|ip6/HOST/tcp/PORT[/ws]`. */
  listen: readonly string[]
  /** What it tells peers it can be reached at (a public address, a DNS name); default its listen addresses. */
  announce?: readonly string[]
  /**
   * The peers it serves (the tables' dealers and seats): only they may connect, hold a
   * reservation, or be relayed to. The set is read at every check, so it may grow while the relay runs.
   */
  members: ReadonlySet<string>
  /**
   * Dealers whose tables still take seats by links (seats not taken yet): a seat joining by link is
   * nobody the relay knows yet, so while this set is not empty a non-member may connect (at most
   * MAX_STRANGER_CONNECTIONS at once) and be relayed to one of these dealers only, whose node lets
   * it do nothing but prove its link's one-time secret. Read at every check. Default: none.
   */
  joining?: ReadonlySet<string>
  logger: Logger
}

/** Starts a relay; stop it with `relay.stop()`. */
export async function createRelay (init: RelayInit): Promise<Libp2p> {
  const listen = init.listen.map(a => parseListenAddress(a).toString())
  const logger = init.logger.child({ component: 'relay' })
  let node: Libp2p | undefined
  try {
    node = await createLibp2p({
      privateKey: init.privateKey,
      addresses: { listen, ...(init.announce !== undefined && init.announce.length > 0 ? { announce: [...init.announce] } : {}) },
      transports: guardedTransports(logger),
      connectionEncrypters: [patchedNoise()],
      streamMuxers: [boundedMuxer()],
      // Strangers cannot connect at all, so they can neither reserve nor be relayed, nor ask to
      // be relayed to a member.
      connectionGater: relayGater(init, logger, () => node?.getConnections() ?? []),
      // Each member holds one direct connection to the relay; each relayed connection rides on two of those.
      connectionManager: connectionBounds(connectionLimit(init.members.size)),
      peerDiscovery: [],
      services: {
        identify: identify(),
        relay: circuitRelayServer({
          reservations: {
            // One per member at most: every member of a relayed table holds one (seats reach each other through it).
            maxReservations: Math.max(1, init.members.size),
            // No 2-minute / 128 KiB cut: a table's connections last for hours and carry whole hands.
            applyDefaultLimit: false
          }
        })
      }
    })
    return flushingOnStop(node)
  } catch (err) {
    throw listenFailure(err, listen)
  }
}

/**
 * Members connect, hold a reservation and are relayed to members. A seat joining by link (not a
 * member yet) connects only while some table joins (`joining`), and is relayed only to a joining
 * table's dealer; it never holds a reservation.
 */
export function relayGater (init: Pick<RelayInit, 'members' | 'joining'>, logger: Logger, connections: () => Connection[]): ConnectionGater {
  const joining = init.joining ?? new Set<string>()
  const log = createRejectionLog(logger)
  const base = membershipGater(init.members, logger, { strangers: () => joining.size > 0, connections })
  const member = (peer: PeerId): boolean => init.members.has(peer.toString())
  return {
    ...base,
    denyInboundRelayReservation: (peer) => {
      if (member(peer)) return false
      log({ peer: peer.toString(), stage: 'reservation', reason: 'is not a member' }, `refused a reservation: ${peer.toString()} is not a member`)
      return true
    },
    denyOutboundRelayedConnection: (source, destination) => {
      const dst = destination.toString()
      if (member(source) ? init.members.has(dst) : joining.has(dst)) return false
      log({ peer: source.toString(), stage: 'relay', reason: `may not be relayed to ${dst}` }, `refused to relay ${source.toString()} to ${dst}`)
      return true
    }
  }
}

/** The number of reservations the relay holds now (for status lines and tests). */
export function reservationsOf (relay: Libp2p): number {
  const service = (relay.services as { relay?: { reservations?: { size?: number } } }).relay
  return service?.reservations?.size ?? 0
}
