import { yamux } from '@libp2p/yamux'
import { tcp } from '@libp2p/tcp'
import { webSockets } from '@libp2p/websockets'
import type { Logger } from 'pino'
import { NetInputError } from './errors.js'
import { inboundGuard } from './admission.js'
import {
  DIAL_TIMEOUT_MS, INBOUND_CONNECTION_THRESHOLD, MAX_INCOMING_PENDING_CONNECTIONS, MAX_PENDING_UPGRADES,
  MAX_STREAMS_PER_CONNECTION, PENDING_UPGRADE_TIMEOUT_MS, STREAM_WINDOW_MAX_BYTES
} from './limits.js'

// What every libp2p node fairdeal starts shares, a table node (node.ts) and a relay (relay.ts)
// alike: the bounded transports, the bounded multiplexer, the connection manager's bounds, and
// the one-line reason a start failed.

/**
 * TCP and WebSockets, each behind the bound on upgrades in progress. Plain ws is accepted in both
 * directions: @libp2p/websockets 10 has no filter that drops insecure addresses, so a loopback
 * /ws address dials as is.
 */
export function guardedTransports (logger: Logger): [ReturnType<typeof tcp>, ReturnType<typeof webSockets>] {
  const guard = inboundGuard(MAX_PENDING_UPGRADES, logger)
  return [guard.guard(tcp()), guard.guard(webSockets())]
}

/** yamux with the streams and window of limits.ts. */
export function boundedMuxer (): ReturnType<typeof yamux> {
  return yamux({
    maxInboundStreams: MAX_STREAMS_PER_CONNECTION,
    maxOutboundStreams: MAX_STREAMS_PER_CONNECTION,
    streamOptions: { maxStreamWindowSize: STREAM_WINDOW_MAX_BYTES }
  })
}

/** The connection manager's bounds, for a node allowed `maxConnections`. */
export function connectionBounds (maxConnections: number): {
  maxConnections: number, maxIncomingPendingConnections: number, inboundUpgradeTimeout: number, inboundConnectionThreshold: number, dialTimeout: number
} {
  return {
    maxConnections,
    maxIncomingPendingConnections: MAX_INCOMING_PENDING_CONNECTIONS,
    inboundUpgradeTimeout: PENDING_UPGRADE_TIMEOUT_MS,
    inboundConnectionThreshold: INBOUND_CONNECTION_THRESHOLD,
    dialTimeout: DIAL_TIMEOUT_MS
  }
}

/**
 * Why a node could not start: libp2p lists every failed address with its stack; the system's
 * one-line reason (EADDRINUSE, EACCES, …) is kept, naming the listen addresses. Any other error
 * is returned as it is.
 */
export function listenFailure (err: unknown, listen: readonly string[]): unknown {
  const reason = /\b(E[A-Z]{3,}): ([^\n]*)/.exec((err as Error)?.message ?? '')
  return reason === null ? err : new NetInputError(`cannot listen on ${listen.join(', ')}: ${reason[2]} (${reason[1]})`, { cause: err })
}
