// Every number the network adapter enforces, in one place, so docs/network.md and the code agree.

/** Where a node listens when nothing else is configured: loopback, one TCP and one WebSocket port. */
export const DEFAULT_LISTEN: readonly string[] = Object.freeze([
  '/ip4/127.0.0.1/tcp/7400',
  '/ip4/127.0.0.1/tcp/7401/ws'
])

/**
 * Open connections, members and non-members together. A table has at most a few dozen members,
 * each with a couple of connections to us; non-members hold at most MAX_STRANGER_CONNECTIONS of
 * these, so members always have the rest.
 */
export const MAX_CONNECTIONS = 64

/**
 * Open connections one member may hold with us at once, both directions counted. An honest member
 * needs one, two while a dial each way crosses, a few more for a moment while a restart's old
 * connections close; when it has more, its oldest are closed (src/net/node.ts), so no member of one
 * table can take the room of a member of another table the node serves.
 */
export const MAX_CONNECTIONS_PER_MEMBER = 4

/**
 * The connection limit of a node with `members` members (a node serving several tables has the
 * members of all of them): MAX_CONNECTIONS, or more when its members could need more (each its
 * MAX_CONNECTIONS_PER_MEMBER, beside the strangers' share), so the limit is never reached by
 * members and strangers within their shares, and libp2p never refuses or prunes a member for room.
 */
export function connectionLimit (members: number): number {
  return Math.max(MAX_CONNECTIONS, MAX_CONNECTIONS_PER_MEMBER * members + MAX_STRANGER_CONNECTIONS)
}

/** Non-members connected at once, where they may connect at all (`log.access: anyone`). */
export const MAX_STRANGER_CONNECTIONS = 16

/**
 * A non-member's connection with no stream open for this long is closed (a log fetch opens one
 * stream per page and dials again if it must); so is any non-member's connection this old.
 */
export const STRANGER_IDLE_MS = 10_000
export const STRANGER_MAX_AGE_MS = 120_000

/**
 * Inbound sockets between accept and the end of their noise/yamux upgrade. Before noise a member
 * and a stranger look alike, so when this many wait, the OLDEST is dropped for the newcomer
 * (src/net/admission.ts): an honest handshake takes milliseconds, a socket held open without one
 * is the first to go.
 */
export const MAX_PENDING_UPGRADES = 32

/**
 * libp2p's own cap on the same sockets, which refuses the newcomer: set well above ours so it
 * never decides (its count drops a moment after an eviction).
 */
export const MAX_INCOMING_PENDING_CONNECTIONS = 4 * MAX_PENDING_UPGRADES

/** A socket's whole inbound upgrade (noise and yamux) must finish within this, or it is dropped. */
export const PENDING_UPGRADE_TIMEOUT_MS = 5_000

/**
 * New inbound connections per second from one host. Every member of a loopback table is the same
 * host, so a low rate would refuse members along with a stranger's flood; the eviction above and
 * the membership check right after noise are what bound strangers.
 */
export const INBOUND_CONNECTION_THRESHOLD = 1_000

/** A dial (socket, noise, yamux) must finish within this. */
export const DIAL_TIMEOUT_MS = 10_000

/**
 * A node that keeps a connection to its dealer (src/net/keep-connected.ts) dials again this long
 * after a failed dial, doubling after each failure up to REDIAL_MAX_MS (±20 % jitter). The ceiling
 * is well under the default contribution time (10 s): a seat is back within it after its dealer's
 * node restarts, in time for the next hand; a refused dial costs next to nothing meanwhile.
 */
export const REDIAL_MIN_MS = 1_000
export const REDIAL_MAX_MS = 5_000

/**
 * The peer-store tag every table member carries, and its value: when over MAX_CONNECTIONS libp2p
 * closes the lowest-valued peers' connections first, so members' (a NAT seat's only way in) go last.
 */
export const MEMBER_TAG = 'fairdeal-member'
export const MEMBER_TAG_VALUE = 100

/**
 * A seat's document to another seat (a VIEW) that has a fallback through the dealer (a RELAY) waits
 * at most this long for a dial to that seat before the fallback goes: a seat behind NAT whose
 * address was given anyway would otherwise hold the relay up for the whole DIAL_TIMEOUT_MS.
 */
export const DIRECT_BEFORE_RELAY_MS = 3_000

/** How long `table join` waits for the dealer's node to answer its reachability check. */
export const REACH_CHECK_MS = 5_000

/**
 * Yamux stream window ceiling. The messenger pauses a stream while its handler is busy; what the
 * peer may still send then is one window, so this bounds what a slow reader buffers per stream.
 */
export const STREAM_WINDOW_MAX_BYTES = 1024 * 1024

/** Yamux streams per connection, all protocols together (ours use one per direction). */
export const MAX_STREAMS_PER_CONNECTION = 64

/** Streams of one messenger protocol a peer may have open to us at once on one connection. */
export const MAX_MESSENGER_STREAMS_PER_CONNECTION = 8

/** The largest maxFrameBytes a messenger accepts; protocol messages are a few kilobytes. */
export const MAX_FRAME_BYTES_CEILING = 16 * 1024 * 1024

/** An Ed25519 key file is 68 bytes; anything much bigger is not one and is not read whole. */
export const IDENTITY_FILE_MAX_BYTES = 4096

/** How long messenger.close() waits for an outbound stream to flush before resetting it. */
export const CLOSE_TIMEOUT_MS = 2_000
