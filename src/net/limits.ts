// Every number the network adapter enforces, in one place, so docs/network.md and the code agree.

/** Where a node listens when nothing else is configured: loopback, one TCP and one WebSocket port. */
export const DEFAULT_LISTEN: readonly string[] = Object.freeze([
  '/ip4/127.0.0.1/tcp/7400',
  '/ip4/127.0.0.1/tcp/7401/ws'
])

/** A table has a handful of members, each with at most a couple of connections to us. */
export const MAX_CONNECTIONS = 64

/** Connections still in the noise/yamux upgrade; the membership check runs only after noise. */
export const MAX_INCOMING_PENDING_CONNECTIONS = 10

/**
 * New inbound connections per second from one host. libp2p's default (5) trips when a loopback
 * demo starts a whole table at once; every seat then comes from 127.0.0.1.
 */
export const INBOUND_CONNECTION_THRESHOLD = 20

/** A dial (socket, noise, yamux) must finish within this. */
export const DIAL_TIMEOUT_MS = 10_000

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
