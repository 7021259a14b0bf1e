import { lpStream, type LengthPrefixedStream } from '@libp2p/utils'
import { peerIdFromString } from '@libp2p/peer-id'
import type { Connection, Libp2p, PeerId, Stream } from '@libp2p/interface'
import type { Multiaddr } from '@multiformats/multiaddr'
import type { Logger } from 'pino'
import { BoundedMap } from '../core/bounded-set.js'
import { NetInputError, NoRouteError, SendError } from './errors.js'
import { sendRoute } from './send-route.js'
import { varintLength } from './transport-patches.js'
import { createRejectionLog } from './rejection-log.js'
import {
  CLOSE_TIMEOUT_MS, MAX_FRAME_BYTES_CEILING, MAX_MESSENGER_STREAMS_PER_CONNECTION, STREAM_WINDOW_MAX_BYTES
} from './limits.js'

/**
 * Called once per frame; frames from one peer are delivered one at a time, in the order sent.
 * The frame is the handler's to keep.
 */
export type FrameHandler = (from: string, frame: Uint8Array) => void | Promise<void>

/** Peer ids kept parsed by a messenger (the oldest forgotten beyond it: only a cache). */
const MAX_PARSED_PEER_IDS = 256

export interface MessengerInit {
  /** The libp2p protocol id, e.g. `/fairdeal/deal/1`. */
  protocol: string
  /**
   * The largest frame accepted, in bytes, both ways. A peer announcing a longer frame has its
   * stream reset as soon as the length prefix is read, before the body is buffered.
   */
  maxFrameBytes: number
  logger: Logger
  /**
   * Where to dial a peer that is not connected. Read at each send, so it may be filled later.
   * Addresses without `/p2p/` get the peer id appended, so noise checks the far end's key.
   */
  addressBook?: ReadonlyMap<string, ReadonlyArray<Multiaddr | string>>
}

export interface SendOptions {
  /** Abandons the dial or a write waiting for the peer to read (the frame may still be sent). */
  signal?: AbortSignal
}

export interface MessengerStats {
  /** Outbound streams this messenger opened (one per peer while the connection lives). */
  streamsOpened: number
  /** Inbound streams peers opened to it. */
  streamsAccepted: number
  framesSent: number
  framesReceived: number
  /** Streams reset for a frame over the limit or a malformed length prefix. */
  framesRejected: number
}

export interface Messenger {
  readonly protocol: string
  /**
   * Sends one frame to `peerId` on this messenger's long-lived stream to it, opening the stream
   * (and dialling, from the address book, if not connected) when there is none. Sends to one peer
   * go out in call order. Resolves once the frame is handed to the connection, not when the peer
   * has read it: acknowledgement is the protocol's business. If the stream turns out dead, the
   * frame is sent again once on a new stream; a second failure rejects with SendError.
   */
  send: (peerId: string, frame: Uint8Array, options?: SendOptions) => Promise<void>
  /** Sets the one frame handler. Frames that arrive before it is set wait (the peer is slowed). */
  onFrame: (handler: FrameHandler) => void
  stats: () => MessengerStats
  /** Stops accepting streams, flushes and closes outbound streams, resets inbound ones. */
  close: () => Promise<void>
}

interface OutboundLink {
  stream: Stream
  lp: LengthPrefixedStream<Stream>
}

/** Error names from @libp2p/utils that mean the peer broke the framing rules. */
const FRAMING_ERRORS = new Set([
  'InvalidDataLengthError', 'InvalidDataLengthLengthError', 'InvalidMessageLengthError', 'StreamBufferError'
])

/** One line on what the peer did wrong, with the library's own words for the details. */
function framingReason (err: Error, maxFrameBytes: number): string {
  switch (err.name) {
    case 'InvalidDataLengthError':
    case 'InvalidDataLengthLengthError':
      return `frame over the ${maxFrameBytes}-byte limit (${err.message})`
    case 'StreamBufferError':
      return `peer sent past the flow-control window (${err.message})`
    default:
      return `malformed length prefix (${err.message})`
  }
}

/**
 * A framed message channel over one libp2p protocol: each frame is a varint length then the bytes
 * (the usual libp2p length-prefixed framing), one long-lived stream per peer and direction.
 *
 * @example
 * ```ts
 * const messenger = await createMessenger(node, { protocol: '/fairdeal/deal/1', maxFrameBytes: 65536, logger })
 * messenger.onFrame(async (from, frame) => { await machine.receive(from, frame) })
 * await messenger.send(seatPeerId, bytes)
 * ```
 */
export async function createMessenger (node: Libp2p, init: MessengerInit): Promise<Messenger> {
  const { protocol, maxFrameBytes, addressBook } = init
  if (typeof protocol !== 'string' || !protocol.startsWith('/') || protocol.length > 256 || /\s/.test(protocol)) {
    throw new NetInputError(`protocol id must look like /name/version, got ${JSON.stringify(String(protocol).slice(0, 80))}`)
  }
  if (!Number.isSafeInteger(maxFrameBytes) || maxFrameBytes < 1 || maxFrameBytes > MAX_FRAME_BYTES_CEILING) {
    throw new NetInputError(`maxFrameBytes must be an integer from 1 to ${MAX_FRAME_BYTES_CEILING}, got ${String(maxFrameBytes)}`)
  }
  const log = init.logger.child({ component: 'messenger', protocol })
  // Whatever a peer sends decides how often input is rejected, never how much the log grows.
  const rejected = createRejectionLog(log)
  // Frames parsed but not yet handled, per inbound stream: above the high mark the stream is paused,
  // so yamux stops granting window and the sender's writes wait. This bounds a slow handler's memory.
  const highWater = Math.max(STREAM_WINDOW_MAX_BYTES, 2 * maxFrameBytes)
  const lowWater = highWater / 2
  // What the byte reader may hold unparsed: what was in flight when we paused, plus one frame.
  const readBufferBytes = 2 * STREAM_WINDOW_MAX_BYTES + maxFrameBytes + 16

  let handler: FrameHandler | undefined
  let handlerIsSet!: () => void
  const handlerReady = new Promise<void>(resolve => { handlerIsSet = resolve })
  let closed = false
  const outbound = new Map<string, OutboundLink>()
  const inbound = new Set<Stream>()
  const sendTails = new Map<string, Promise<void>>()
  const deliveryTails = new Map<string, Promise<void>>()
  const stats: MessengerStats = { streamsOpened: 0, streamsAccepted: 0, framesSent: 0, framesReceived: 0, framesRejected: 0 }

  /** Hands `frame` to the handler after every earlier frame from `from`, whatever stream it came on. */
  function deliver (from: string, frame: Uint8Array): Promise<void> {
    const previous = deliveryTails.get(from) ?? handlerReady
    const next = previous.then(async () => {
      if (closed || handler === undefined) return
      try {
        await handler(from, frame)
      } catch (err) {
        rejected({ peer: from, reason: (err as Error).message }, 'frame handler failed')
      }
    })
    deliveryTails.set(from, next)
    void next.then(() => { if (deliveryTails.get(from) === next) deliveryTails.delete(from) })
    return next
  }

  async function serve (stream: Stream, connection: Connection): Promise<void> {
    const from = connection.remotePeer.toString()
    if (closed) { stream.abort(new Error('messenger closed')); return }
    stats.streamsAccepted++
    inbound.add(stream)
    const lp = lpStream(stream, { maxDataLength: maxFrameBytes, maxBufferSize: readBufferBytes, lengthDecoder: varintLength })
    let queued = 0
    let paused = false
    const resumeIfDrained = (): void => {
      if (!paused || queued > lowWater) return
      paused = false
      try { stream.resume() } catch { /* the stream ended meanwhile */ }
    }
    try {
      for (;;) {
        // A fresh plain Uint8Array: the handler may keep it, and it is no view into a transport buffer.
        const frame = new Uint8Array((await lp.read()).subarray())
        if (closed) break
        stats.framesReceived++
        queued += frame.byteLength
        void deliver(from, frame).then(() => { queued -= frame.byteLength; resumeIfDrained() })
        if (!paused && queued > highWater) {
          paused = true
          try { stream.pause() } catch { /* the stream ended meanwhile */ }
        }
      }
    } catch (err) {
      const reason = (err as Error).message
      if (FRAMING_ERRORS.has((err as Error).name)) {
        stats.framesRejected++
        rejected({ peer: from, reason: framingReason(err as Error, maxFrameBytes) }, 'rejected frame; resetting the stream')
        stream.abort(err as Error)
      } else if (stream.remoteWriteStatus === 'closed' && stream.status === 'open') {
        // The sender closed its end (lpStream reports that as an unexpected EOF); close ours too.
        log.debug({ peer: from, reason }, 'inbound stream closed by the sender')
        await stream.close().catch((closeErr: Error) => { stream.abort(closeErr) })
      } else {
        log.debug({ peer: from, reason }, 'inbound stream ended')
        if (stream.status === 'open') stream.abort(err as Error)
      }
    } finally {
      inbound.delete(stream)
    }
  }

  function usable (link: OutboundLink | undefined): link is OutboundLink {
    return link !== undefined && link.stream.status === 'open' && link.stream.writeStatus === 'writable'
  }

  async function openLink (peerId: string, peer: PeerId, options?: SendOptions): Promise<OutboundLink> {
    const current = outbound.get(peerId)
    if (usable(current)) return current
    if (current !== undefined) outbound.delete(peerId)
    const connected = node.getConnections(peer).some(c => c.status === 'open')
    let stream: Stream
    try {
      const route = sendRoute(peerId, connected, addressBook?.get(peerId))
      if (route.kind === 'none') throw new SendError(route.reason, peerId, { cause: new NoRouteError(route.reason) })
      // On an open connection libp2p opens the stream there (the peer may have dialled us: NAT).
      const connection = await node.dial(route.kind === 'connection' ? peer : route.addresses, { signal: options?.signal })
      // The caller's signal bounds the dial only: handed to newStream it would stay tied to this
      // long-lived stream and abort it (and every later frame on it) when it fires.
      stream = await connection.newStream(protocol)
    } catch (err) {
      if (err instanceof SendError) throw err
      throw new SendError(`cannot open ${protocol} to ${peerId}: ${(err as Error).message}`, peerId, { cause: err })
    }
    stats.streamsOpened++
    // The receiving end never writes back; anything it sends is a violation and resets the stream.
    const link: OutboundLink = { stream, lp: lpStream(stream, { maxBufferSize: 1024 }) }
    stream.addEventListener('close', () => {
      if (outbound.get(peerId)?.stream === stream) outbound.delete(peerId)
    }, { once: true })
    if (closed) {
      stream.abort(new Error('messenger closed'))
      throw new SendError(`messenger for ${protocol} is closed`, peerId)
    }
    outbound.set(peerId, link)
    return link
  }

  async function transmit (peerId: string, peer: PeerId, frame: Uint8Array, options?: SendOptions): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      if (closed) throw new SendError(`messenger for ${protocol} is closed`, peerId)
      const link = await openLink(peerId, peer, options)
      try {
        await link.lp.write(frame, { signal: options?.signal })
        stats.framesSent++
        return
      } catch (err) {
        if (options?.signal?.aborted === true && link.stream.status === 'open' && link.stream.writeStatus === 'writable') {
          // The caller stopped waiting for the peer to read: the frame is already queued on the
          // stream (lpStream hands it over before it waits), after frames this messenger reported
          // sent. The stream stays: aborting it would drop those frames without a word. This frame
          // may still arrive; the caller takes its fallback.
          throw new SendError(`gave up waiting for ${peerId} to read on ${protocol} (the frame is queued and may still arrive)`, peerId, { cause: err })
        }
        if (outbound.get(peerId) === link) outbound.delete(peerId)
        if (link.stream.status === 'open') link.stream.abort(err as Error)
        if (attempt >= 2 || closed || options?.signal?.aborted === true) {
          throw new SendError(`cannot send to ${peerId} on ${protocol}: ${(err as Error).message}`, peerId, { cause: err })
        }
        log.debug({ peer: peerId, reason: (err as Error).message }, 'stream died; sending again on a new one')
      }
    }
  }

  // A table sends to the same few peers all the time: their ids are parsed once (base58 and a
  // multihash decoded each time was ~10 µs of a frame's CPU), not once a frame.
  const parsedPeerIds = new BoundedMap<string, PeerId>(MAX_PARSED_PEER_IDS)

  function send (peerId: string, frame: Uint8Array, options?: SendOptions): Promise<void> {
    if (!(frame instanceof Uint8Array)) {
      return Promise.reject(new NetInputError('a frame must be a Uint8Array'))
    }
    if (frame.byteLength > maxFrameBytes) {
      return Promise.reject(new NetInputError(`frame of ${frame.byteLength} bytes is over the ${maxFrameBytes}-byte limit of ${protocol}`))
    }
    let peer = parsedPeerIds.get(peerId)
    if (peer === undefined) {
      try {
        peer = peerIdFromString(peerId)
      } catch {
        return Promise.reject(new NetInputError(`not a peer id: ${JSON.stringify(String(peerId).slice(0, 80))}`))
      }
      parsedPeerIds.set(peerId, peer)
    }
    if (peer.equals(node.peerId)) {
      return Promise.reject(new NetInputError(`cannot send to this node's own peer id ${peerId}`))
    }
    if (closed) return Promise.reject(new SendError(`messenger for ${protocol} is closed`, peerId))
    const previous = sendTails.get(peerId) ?? Promise.resolve()
    const result = previous.then(async () => { await transmit(peerId, peer, frame, options) })
    const tail = result.catch(() => {})
    sendTails.set(peerId, tail)
    void tail.then(() => { if (sendTails.get(peerId) === tail) sendTails.delete(peerId) })
    return result
  }

  await node.handle(protocol, (stream, connection) => { void serve(stream, connection) }, {
    maxInboundStreams: MAX_MESSENGER_STREAMS_PER_CONNECTION,
    maxOutboundStreams: MAX_MESSENGER_STREAMS_PER_CONNECTION
  })

  return {
    protocol,
    send,
    onFrame (h: FrameHandler): void {
      if (typeof h !== 'function') throw new NetInputError('onFrame needs a function')
      if (handler !== undefined) throw new NetInputError(`a frame handler is already set for ${protocol}`)
      handler = h
      handlerIsSet()
    },
    stats: () => ({ ...stats }),
    async close (): Promise<void> {
      if (closed) return
      closed = true
      handlerIsSet() // lets deliveries waiting for a handler run out (they drop their frame)
      await node.unhandle(protocol).catch((err: Error) => { log.debug({ reason: err.message }, 'unhandle failed') })
      for (const stream of inbound) stream.abort(new Error('messenger closed'))
      inbound.clear()
      const links = [...outbound.values()]
      outbound.clear()
      await Promise.all(links.map(async ({ stream }) => {
        try {
          await stream.close({ signal: AbortSignal.timeout(CLOSE_TIMEOUT_MS) })
        } catch (err) {
          stream.abort(err as Error)
        }
      }))
    }
  }
}
