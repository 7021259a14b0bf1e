import { createLibp2p } from 'libp2p'
import { flushingOnStop, patchedNoise } from './transport-patches.js'
import { circuitRelayTransport } from '@libp2p/circuit-relay-v2'
import { identify } from '@libp2p/identify'
import { dcutr } from '@libp2p/dcutr'
import type { Connection, Libp2p, PrivateKey } from '@libp2p/interface'
import type { Logger } from 'pino'
import { parseListenAddress } from './addresses.js'
import { boundedMuxer, connectionBounds, guardedTransports, listenFailure } from './libp2p-parts.js'
import { membershipGater, type Membership } from './gater.js'
import { parseRelayAddress, RESERVE_ON_RELAYS } from './relay.js'
import {
  connectionLimit, DEFAULT_LISTEN, MAX_CONNECTIONS_PER_MEMBER, MAX_CONNECTIONS, MAX_STRANGER_CONNECTIONS, STRANGER_IDLE_MS, STRANGER_MAX_AGE_MS
} from './limits.js'

export interface NodeInit {
  /** The node's Ed25519 key (from loadOrCreateIdentity); its peer id is the node's name. */
  privateKey: PrivateKey
  /**
   * Multiaddrs to listen on: `/ip4|ip6/HOST/tcp/PORT` and `/ip4|ip6/HOST/tcp/PORT/ws`.
   * Default: DEFAULT_LISTEN (127.0.0.1, TCP 7400 and WebSockets 7401). Pass `[]` for a node
   * that only dials out.
   */
  listen?: readonly string[]
  /**
   * Peer ids allowed to connect in or be dialled; everyone else is refused and logged.
   * Default 'anyone' (no gating): a table's node should always pass its membership list.
   */
  members?: Membership
  /**
   * With a set of `members`: 'refuse' (default) keeps everyone else out; 'admit' lets non-members
   * connect in as well (a public log), bounded and timed out so that members always find room.
   */
  strangers?: 'refuse' | 'admit'
  /** Refusals are logged here at warn. */
  logger: Logger
  /**
   * Relays of this node's tables (docs/network.md, "A dealer behind NAT: the relay"): each a
   * `…/p2p/RELAYID` address; `reserve` for a table this node deals, so that seats reach it through
   * the relay. With any relay the node can also dial `…/p2p-circuit/p2p/PEER` addresses, and the
   * relays may connect (they are not members of any table).
   */
  relays?: ReadonlyArray<{ address: string, reserve: boolean }>
}

/**
 * A started libp2p node: TCP and WebSockets transports, noise encryption, yamux multiplexing, the
 * membership gater, no discovery and no services. Stop it with `node.stop()`.
 *
 * @example
 * ```ts
 * const id = await loadOrCreateIdentity(dataDir)
 * const node = await createNode({ privateKey: id.privateKey, members: new Set([dealer, ...seats]), logger })
 * const messenger = await createMessenger(node, { protocol: '/fairdeal/deal/1', maxFrameBytes: 65536, logger })
 * ```
 */
export async function createNode (init: NodeInit): Promise<Libp2p> {
  const relays = (init.relays ?? []).map(r => ({ ...parseRelayAddress(r.address), reserve: r.reserve }))
  // A node that holds a reservation listens on `/p2p-circuit`: it reserves a slot on each relay it
  // connects to (the daemon keeps its connection to the table's relay), and again after the relay
  // comes back. A listen address naming the relay would make a relay that is down at start fatal,
  // and would never be reserved again once that connection dropped.
  const listen = [
    ...(init.listen ?? DEFAULT_LISTEN).map(a => parseListenAddress(a).toString()),
    ...(relays.some(r => r.reserve) ? [RESERVE_ON_RELAYS] : [])
  ]
  // A relay carries the members' connections; it is let through the gater, not made a member of a table.
  const members = init.members === undefined || init.members === 'anyone' || relays.length === 0
    ? init.members ?? 'anyone'
    : new UnionSet(init.members, relays.map(r => r.peerId))
  const logger = init.logger.child({ component: 'net' })
  let node: Libp2p | undefined
  try {
    node = await createLibp2p({
      privateKey: init.privateKey,
      addresses: { listen },
      transports: [...guardedTransports(logger), ...(relays.length > 0 ? [circuitRelayTransport()] : [])],
      connectionEncrypters: [patchedNoise()],
      streamMuxers: [boundedMuxer()],
      connectionGater: membershipGater(members, logger, { strangers: init.strangers, connections: () => node?.getConnections() ?? [] }),
      connectionManager: connectionBounds(members === 'anyone' ? MAX_CONNECTIONS : connectionLimit(members.size)),
      // No peerDiscovery or peerRouters: peers are known from the table, nothing is announced, and
      // multistream-select needs no identify to open a stream.
      peerDiscovery: [],
      // The relay transport needs identify (it learns from it that a relay speaks the hop
      // protocol); a node with no relay keeps none, as before. With a relay, DCUtR: two members on
      // a relayed connection that both have public, dialable addresses (identify tells each the
      // other's) open a direct connection by simultaneous dial, and the table then uses it
      // (docs/network.md, the relay). Private addresses are never tried (`@libp2p/dcutr`), and a
      // node that listens nowhere has nothing to punch through: it stays relayed.
      services: (relays.length > 0 ? { identify: identify(), dcutr: dcutr() } : {}) as Record<string, ReturnType<typeof identify>>
    })
  } catch (err) {
    throw listenFailure(err, listen)
  }
  if (members !== 'anyone') boundMembers(node, members, logger)
  if (members !== 'anyone' && init.strangers === 'admit') boundStrangers(node, members, logger)
  return flushingOnStop(node)
}

/**
 * A member holds at most MAX_CONNECTIONS_PER_MEMBER connections with the node: when one more
 * opens, its oldest ones are closed. The newest is kept, since a member that dials again is most
 * likely back from a restart and its old connections dead, so an honest member is never refused;
 * one that opens connections without end only ever holds its own share.
 */
function boundMembers (node: Libp2p, members: ReadonlySet<string>, logger: Logger): void {
  node.addEventListener('connection:open', (evt) => {
    const peer = evt.detail.remotePeer
    if (!members.has(peer.toString())) return
    const open = node.getConnections(peer).filter(x => x.status === 'open').sort((a, b) => a.timeline.open - b.timeline.open)
    const excess = open.slice(0, Math.max(0, open.length - MAX_CONNECTIONS_PER_MEMBER))
    if (excess.length === 0) return
    logger.debug({ peer: peer.toString(), connections: open.length, closed: excess.length }, 'closed a member\'s oldest connections over its share')
    for (const c of excess) c.abort(new Error(`over the share of ${MAX_CONNECTIONS_PER_MEMBER} connections a member`))
  })
}

/**
 * Non-members (admitted for a public log) hold at most MAX_STRANGER_CONNECTIONS connections: the
 * gater refuses more after noise, and since handshakes run side by side, a connection that opens
 * over the cap all the same is closed at once. Their connections that sit idle for STRANGER_IDLE_MS
 * or live STRANGER_MAX_AGE_MS are closed.
 */
function boundStrangers (node: Libp2p, members: ReadonlySet<string>, logger: Logger): void {
  const stranger = (c: Connection): boolean => !members.has(c.remotePeer.toString())
  node.addEventListener('connection:open', (evt) => {
    const c = evt.detail
    if (!stranger(c)) return
    const open = node.getConnections().filter(x => x.status === 'open' && stranger(x))
    if (open.length <= MAX_STRANGER_CONNECTIONS || !open.includes(c)) return
    logger.debug({ peer: c.remotePeer.toString(), strangers: open.length }, 'closed a non-member connection over the cap')
    c.abort(new Error(`over the cap of ${MAX_STRANGER_CONNECTIONS} non-member connections`))
  })
  sweepStrangers(node, stranger)
}

function sweepStrangers (node: Libp2p, stranger: (c: Connection) => boolean): void {
  const idleSince = new WeakMap<object, number>()
  const timer = setInterval(() => {
    if (node.status !== 'started') {
      if (node.status === 'stopped') clearInterval(timer)
      return
    }
    const now = Date.now()
    for (const c of node.getConnections()) {
      if (c.status !== 'open' || !stranger(c)) continue
      if (c.streams.length > 0) idleSince.delete(c)
      else if (!idleSince.has(c)) idleSince.set(c, now)
      const idle = now - (idleSince.get(c) ?? now)
      if (idle >= STRANGER_IDLE_MS || now - c.timeline.open >= STRANGER_MAX_AGE_MS) {
        c.close().catch(() => { c.abort(new Error('non-member connection timed out')) })
      }
    }
  }, 1_000)
  timer.unref()
}

/** A read-only view of a live set plus a few fixed entries (the gater reads the set at every check). */
class UnionSet implements ReadonlySet<string> {
  constructor (private readonly live: ReadonlySet<string>, private readonly extra: readonly string[]) {}
  has (value: string): boolean { return this.live.has(value) || this.extra.includes(value) }
  get size (): number { return this.#all().size }
  forEach (fn: (value: string, key: string, set: ReadonlySet<string>) => void): void { for (const v of this.#all()) fn(v, v, this) }
  entries (): SetIterator<[string, string]> { return this.#all().entries() }
  keys (): SetIterator<string> { return this.#all().keys() }
  values (): SetIterator<string> { return this.#all().values() }
  [Symbol.iterator] (): SetIterator<string> { return this.#all().values() }
  #all (): Set<string> { return new Set([...this.live, ...this.extra]) }
}
