/**
 * Local fixes to the libp2p transport stack, each waste a table hand's profile showed (issue 24),
 * each to be dropped once upstream has it; 1 to 4 put the same bytes on the wire as before.
 * Applied once, on import, to the pinned versions in package.json (@chainsafe/libp2p-noise
 * 17.0.0, @libp2p/yamux 8.0.3, @libp2p/utils 7.4.1); a version whose internals differ is left
 * alone (each patch checks what it replaces first).
 *
 * 1. Noise wrote every transport message as two socket writes: its 2-byte length, then the
 *    ciphertext (EncryptedMessageStream.encrypt appends them as two buffers, and the TCP
 *    connection writes each buffer of a list on its own). Upstream fixed exactly this in
 *    ChainSafe/js-libp2p-noise#387 ("concatenate encrypted data length prefix with data before
 *    sending", merged 2023-11); the rewrite for libp2p 3 (noise 17) brought the two writes back.
 *    Here a secured connection sends each encrypted message as one buffer: one socket write.
 * 2. LengthPrefixedDecoder (noise's framing, and libp2p's) asks its length decoder for the next
 *    length after every message it yields, so each received chunk ends by constructing and
 *    throwing a RangeError (with its stack) on the empty buffer, which the loop then catches.
 *    The same waste in mplex was ChainSafe/lodestar#3467 (90% of its decode time). Here the loop
 *    stops when the buffer is empty, before asking; a partial length still throws as before.
 * 3. A yamux stream answered every data frame it received with a window update frame (another
 *    noise message, another socket write, another frame for the peer to handle). go-yamux sends
 *    one only once at least half the window is consumed, and rust-yamux does the same
 *    (libp2p/rust-yamux#109); the yamux spec leaves the choice to the receiver. Here a stream
 *    that is established (no SYN/ACK flag to carry) skips the update while less than half of its
 *    receive window is used: the sender never waits for credit it would have had, since it still
 *    holds more than half a window.
 * 4. (Not a patch: {@link varintLength}, a length decoder for lpStream that does not construct a
 *    RangeError for every frame of 128 bytes or more; the messenger and the witness streams use it.)
 * 5. A secured connection encrypted and wrote every yamux frame on its own: with 16 hands in
 *    flight a node sent a peer 3.4 writes a tick. Here `send` queues the frame and one flush for
 *    the end of the tick (`process.nextTick`: after the promise callbacks the tick chains, where
 *    a microtask would run before them), so a tick's frames leave as one noise message and one
 *    write. The yamux frames are the same; any noise peer reads them. A send while the socket
 *    needs a drain, or on a stream not writable, goes through at once as before. What could end
 *    the socket before the tick does sends the queue first: the raw connection's close (libp2p's
 *    Connection.close closes that one, and noise's close calls it), and the node's stop (libp2p's
 *    TCP listener destroys the sockets it accepted: {@link flushingOnStop}).
 * No upstream issue or pull request for 1 (the regression), 2, 3, 4 or 5 in js-libp2p was found in
 * the stored issue corpus. Each is drafted to file, as an issue text and a patch against the
 * pinned versions' sources, in docs/upstream/ (test/transport-patches checks that each patch still
 * applies); this machine cannot reach GitHub, so none is filed yet.
 */
import { InvalidMessageLengthError, LengthPrefixedDecoder } from '@libp2p/utils'
import { YamuxStream, StreamState } from '@libp2p/yamux/stream'
import { noise } from '@chainsafe/libp2p-noise'
import { InvalidParametersError } from '@libp2p/interface'
import type { Uint8ArrayList } from 'uint8arraylist'

interface Decoder {
  buffer: Uint8ArrayList
  maxBufferSize: number
  maxDataLength: number
  lengthDecoder: (data: Uint8ArrayList) => number
  encodingLength: (length: number) => number
}

/** Patch 2: the decode loop, stopping on an empty buffer instead of catching the RangeError it would throw. */
function patchDecoder (): void {
  const proto = LengthPrefixedDecoder.prototype as unknown as { decode: (buf: Uint8Array | Uint8ArrayList) => Generator<Uint8ArrayList> }
  if (typeof proto.decode !== 'function') return
  proto.decode = function * (this: Decoder, buf: Uint8Array | Uint8ArrayList): Generator<Uint8ArrayList> {
    this.buffer.append(buf)
    if (this.buffer.byteLength > this.maxBufferSize) {
      throw new InvalidParametersError(`Buffer length limit exceeded - ${this.buffer.byteLength}/${this.maxBufferSize}`)
    }
    while (this.buffer.byteLength > 0) {
      let dataLength: number
      try {
        dataLength = this.lengthDecoder(this.buffer)
      } catch (err) {
        // Not enough bytes for the length yet.
        if (err instanceof RangeError) break
        throw err
      }
      if (dataLength < 0 || dataLength > this.maxDataLength) throw new InvalidMessageLengthError('Invalid message length')
      const lengthLength = this.encodingLength(dataLength)
      const chunkLength = lengthLength + dataLength
      if (this.buffer.byteLength < chunkLength) break
      const out = this.buffer.sublist(lengthLength, chunkLength)
      this.buffer.consume(chunkLength)
      if (out.byteLength > 0) yield out
    }
  }
}

interface WindowedStream {
  state: StreamState
  recvWindow: number
  recvWindowCapacity: number
  sendWindowUpdate: () => void
}

/** Patch 3: a window update only once half the receive window is used (or when it carries a flag). */
function patchWindowUpdates (): void {
  const proto = YamuxStream.prototype as unknown as WindowedStream
  const original = proto.sendWindowUpdate
  if (typeof original !== 'function') return
  proto.sendWindowUpdate = function (this: WindowedStream): void {
    // Established: the update would carry no flag. Paused: the original only notes the time.
    if (this.state === StreamState.Established && (this.recvWindow - this.recvWindowCapacity) * 2 < this.recvWindow) return
    original.call(this)
  }
}

interface EncryptedStream {
  stream: { send: (data: Uint8Array | Uint8ArrayList) => boolean }
  encrypt: (chunk: Uint8Array | Uint8ArrayList) => Uint8ArrayList
  sendData: (data: Uint8Array | Uint8ArrayList) => { sentBytes: number, canSendMore: boolean }
  send: (data: Uint8Array | Uint8ArrayList) => boolean
  processSendQueue: () => boolean
  writeBuffer: Uint8ArrayList
  writeStatus: string
  writableNeedsDrain: boolean
}

/** The secured connections with a flush of their write buffer queued for the end of this tick. */
const flushQueued = new Set<EncryptedStream>()

function flushSecured (stream: EncryptedStream): void {
  if (!flushQueued.delete(stream)) return
  try {
    stream.processSendQueue()
  } catch {
    // processSendQueue has aborted the connection with the error (as a send would have).
  }
}

/**
 * Sends now what every secured connection of this process queued in this tick (patch 5). A node's
 * `stop` calls it first: libp2p's TCP listener destroys its sockets on stop, without the graceful
 * close that flushes, so a frame sent in the tick a node stops would otherwise be lost where the
 * unpatched send had already written it.
 */
export function flushQueuedSends (): void {
  for (const stream of flushQueued) flushSecured(stream)
}

/** `node`, whose `stop` first sends what this tick queued (flushQueuedSends). */
export function flushingOnStop<N extends { stop: () => void | Promise<void> }> (node: N): N {
  const stop = node.stop.bind(node)
  node.stop = async () => {
    flushQueuedSends()
    await stop()
  }
  return node
}

const patchedSecured = new WeakSet<object>()

/** Patch 1, on the class of the first secured connection noise returns (it is not exported). */
function patchSecuredClass (connection: unknown): void {
  const proto = Object.getPrototypeOf(connection) as EncryptedStream | null
  if (proto === null || patchedSecured.has(proto)) return
  patchedSecured.add(proto)
  if (typeof proto.encrypt !== 'function' || typeof proto.sendData !== 'function') return
  proto.sendData = function (this: EncryptedStream, data: Uint8Array | Uint8ArrayList) {
    // One buffer: each length prefix with its ciphertext, written at once.
    return { sentBytes: data.byteLength, canSendMore: this.stream.send(this.encrypt(data).subarray()) }
  }
  const send = proto.send
  if (typeof send !== 'function' || typeof proto.processSendQueue !== 'function') return
  proto.send = function (this: EncryptedStream, data: Uint8Array | Uint8ArrayList): boolean {
    // Patch 5: the frames sent in one tick go out as one noise message and one socket write.
    if (this.writeStatus !== 'writable' || this.writableNeedsDrain) return send.call(this, data)
    this.writeBuffer.append(data)
    if (!flushQueued.has(this)) {
      flushQueued.add(this)
      process.nextTick(flushSecured, this)
    }
    return true
  }
}

/**
 * Patch 5's other half, on each secured connection: libp2p closes a connection by closing its
 * muxer and then the raw connection under noise (Connection.close), which can all happen in
 * promise callbacks before the tick ends. The raw connection's close first sends what is queued
 * above it, as the unpatched send had already done. (The secured connection's own close is the
 * raw one's: noise's `close` calls it.)
 */
function flushBeforeClose (connection: unknown): void {
  const secured = connection as EncryptedStream & { stream: { close?: (...args: unknown[]) => Promise<void> } }
  const under = secured.stream
  if (under === null || typeof under !== 'object' || typeof under.close !== 'function') return
  const close = under.close
  under.close = async function (this: unknown, ...args: unknown[]): Promise<void> {
    flushSecured(secured)
    return await close.apply(this, args)
  }
}

/** Thrown, as one object, for a length prefix not complete yet: no stack is captured per frame. */
const INCOMPLETE_LENGTH = new RangeError('the length prefix is not complete yet')

/**
 * The varint length decoder for `lpStream` (its `lengthDecoder` option), same values as
 * uint8-varint's: lpStream reads a length one byte at a time and asks again after each byte until
 * the decoder stops throwing a RangeError, so every frame of 128 bytes or more made the stock
 * decoder construct one (uint8arraylist's out-of-bounds `get`), with its stack. This one throws the
 * same pre-made RangeError each time instead. Up to 8 bytes (2^53), as uint8-varint.
 */
export function varintLength (buf: Uint8Array | { subarray: () => Uint8Array }): number {
  const bytes = buf instanceof Uint8Array ? buf : buf.subarray()
  let value = 0
  let scale = 1
  for (let i = 0; i < bytes.length && i < 8; i++) {
    const b = bytes[i]
    value += (b & 0x7f) * scale
    if (b < 0x80) return value
    scale *= 128
  }
  throw INCOMPLETE_LENGTH
}

patchDecoder()
patchWindowUpdates()

/** noise(), whose secured connections send each encrypted message in one write (patch 1 above). */
export function patchedNoise (): ReturnType<typeof noise> {
  const factory = noise()
  return (components) => {
    const encrypter = factory(components)
    const secureInbound = encrypter.secureInbound.bind(encrypter)
    const secureOutbound = encrypter.secureOutbound.bind(encrypter)
    encrypter.secureInbound = async (...args) => {
      const secured = await secureInbound(...args)
      patchSecuredClass(secured.connection)
      flushBeforeClose(secured.connection)
      return secured
    }
    encrypter.secureOutbound = async (...args) => {
      const secured = await secureOutbound(...args)
      patchSecuredClass(secured.connection)
      flushBeforeClose(secured.connection)
      return secured
    }
    return encrypter
  }
}
