/**
 * `/fairdeal/witness/1.0.0`: after each append a node sends its signed head to the other members
 * of its table, which witness it (src/store/witness-store.ts) and answer with their cosignature.
 * One request per stream, both ways one length-prefixed frame:
 * - request, owner → witness: the owner's signed head line (at most MAX_HEAD_BYTES);
 * - response: 0x01 + the cosigned head line (docs/log.md, "Witnessed heads"), or 0x04 + a UTF-8
 *   reason when it is refused (not a member, not the sender's own authentic head).
 * `/fairdeal/witness/1.1.0`: the same frames, any number of request/response pairs on one stream,
 * one at a time (a request is sent only once the previous response came), so a head costs two
 * frames on a stream that stays open instead of a new stream (multistream-select, a yamux stream's
 * opening and closing). The witness waits up to {@link WITNESS_LIMITS}.idleMs for the next request,
 * then closes the stream; the sender opens a new one when it needs it. A sender offers 1.1.0 first
 * and 1.0.0 second, so a witness that only speaks 1.0.0 is still sent every head, one per stream.
 * The witness holds the heads for anyone allowed to fetch its log (`witnessed` requests of
 * `/fairdeal/log/1.0.0`, src/net/log-fetch.ts).
 */
import { lpStream } from '@libp2p/utils'
import { peerIdFromString } from '@libp2p/peer-id'
import type { Libp2p, PeerId, Stream, Connection } from '@libp2p/interface'
import { fromUtf8, utf8 } from '../core/bytes.js'
import { MAX_HEAD_BYTES } from '../core/log/format.js'
import type { DocVerifier } from '../core/log/check.js'
import { checkWitnessLine, MAX_WITNESS_BYTES } from '../core/log/witness.js'
import { nativeVerifyDocument } from '../crypto/native-crypto.js'
import type { WitnessStore } from '../store/witness-store.js'
import { dialAddress } from './addresses.js'
import { createRejectionLog } from './rejection-log.js'
import { varintLength } from './transport-patches.js'

export const WITNESS_PROTOCOL = '/fairdeal/witness/1.0.0'
/** One stream per peer for all its heads (see above). */
export const WITNESS_STREAM_PROTOCOL = '/fairdeal/witness/1.1.0'

export const WITNESS_LIMITS = {
  /** How long either side waits for the other's frame. */
  timeoutMs: 10_000,
  /** How long a witness keeps a 1.1.0 stream open with no request on it. */
  idleMs: 120_000,
  maxInboundStreams: 2,
  /**
   * A node sends a member at most one head per this many ms: the first at once, the heads appended
   * meanwhile as one (the newest) when the interval is over. A busy table appends a receipt every few
   * tens of ms at each node, and a head costs each member a check and a cosignature, the owner a
   * check of that cosignature, and two frames: witnessed once
   * an interval, its cost is shared by the hands of the interval (issue 24), while a member still
   * holds every head within a second of its append. An owner decides what it announces anyway, so
   * the interval weakens nothing against a dishonest owner; against a disk that loses entries, the
   * head file catches them (docs/log.md).
   */
  headIntervalMs: 1_000,
  /** How long closing the announcer waits for heads still to send (the newest per member) before it gives up on them. */
  flushMs: 1_000
} as const

const TAG_COSIGNED = 0x01
const TAG_ERROR = 0x04

interface Logger {
  debug: (obj: object, msg: string) => void
  warn: (obj: object, msg: string) => void
}

function frame (tag: number, text: string): Uint8Array {
  const body = utf8(text)
  const out = new Uint8Array(body.length + 1)
  out[0] = tag
  out.set(body, 1)
  return out
}

/** Witnesses the heads members send. Returns a function that stops. */
export async function registerWitness (node: Libp2p, store: WitnessStore, options: { members: Set<string>, logger?: Logger }): Promise<() => Promise<void>> {
  // A member decides how often it contradicts itself: the warnings are rate-limited summaries.
  const contradiction = options.logger === undefined ? undefined : createRejectionLog(options.logger)
  const answer = async (peer: string, raw: Uint8Array): Promise<Uint8Array> => {
    if (!options.members.has(peer)) return frame(TAG_ERROR, 'not a member of this table')
    try {
      const observed = await store.observe(peer, fromUtf8(raw))
      if (observed.status === 'conflict') contradiction?.({ peer, cosigned: observed.line }, 'a peer sent a head that contradicts one it sent before (kept as evidence)')
      return frame(TAG_COSIGNED, observed.line)
    } catch (err) {
      return frame(TAG_ERROR, (err as Error).message)
    }
  }
  const handler = async (stream: Stream, connection: Connection): Promise<void> => {
    const peer = connection.remotePeer.toString()
    const lp = lpStream(stream, { maxDataLength: MAX_HEAD_BYTES, lengthDecoder: varintLength })
    try {
      const raw = await lp.read({ signal: AbortSignal.timeout(WITNESS_LIMITS.timeoutMs) })
      await lp.write(await answer(peer, raw.subarray()))
      await stream.close()
    } catch (err) {
      options.logger?.debug({ peer, err: (err as Error).message }, 'witness request failed')
      stream.abort(err as Error)
    }
  }
  const streamHandler = async (stream: Stream, connection: Connection): Promise<void> => {
    const peer = connection.remotePeer.toString()
    // A stranger gets its refusal and the stream closes: it holds no stream open here.
    const member = options.members.has(peer)
    const lp = lpStream(stream, { maxDataLength: MAX_HEAD_BYTES, lengthDecoder: varintLength })
    let raw: Uint8Array | undefined
    try {
      raw = (await lp.read({ signal: AbortSignal.timeout(WITNESS_LIMITS.timeoutMs) })).subarray()
      while (true) {
        await lp.write(await answer(peer, raw))
        if (!member) break
        try {
          raw = (await lp.read({ signal: AbortSignal.timeout(WITNESS_LIMITS.idleMs) })).subarray()
        } catch {
          break // the sender closed the stream, or left it idle: closed here too
        }
      }
      await stream.close()
    } catch (err) {
      options.logger?.debug({ peer, err: (err as Error).message }, 'witness request failed')
      stream.abort(err as Error)
    }
  }
  await node.handle(WITNESS_PROTOCOL, handler, { maxInboundStreams: WITNESS_LIMITS.maxInboundStreams })
  await node.handle(WITNESS_STREAM_PROTOCOL, streamHandler, { maxInboundStreams: WITNESS_LIMITS.maxInboundStreams })
  return async () => {
    await node.unhandle(WITNESS_PROTOCOL)
    await node.unhandle(WITNESS_STREAM_PROTOCOL)
  }
}

/**
 * Sends `headLine` to `peer` and returns its cosignature, checked: a cosigned head of exactly
 * that head, by that peer. Both signatures in it (the witness's, and the node's own head's) are
 * checked with `verifyDoc`: Node's own Ed25519 by default; the daemon passes its verify memo, which
 * knows its own head's signature already (it made it) and so checks only the witness's.
 */
export async function sendHead (node: Libp2p, peer: string, headLine: string, addresses: string[] = [], signal?: AbortSignal, verifyDoc: DocVerifier = nativeVerifyDocument): Promise<string> {
  const both = withTimeout(signal)
  const stream = await node.dialProtocol(targetOf(node, peer, addresses), WITNESS_PROTOCOL, { signal: both })
  try {
    return await exchange(lpStream(stream, { maxDataLength: MAX_WITNESS_BYTES + 1, lengthDecoder: varintLength }), peer, headLine, both, verifyDoc)
  } finally {
    await stream.close().catch(() => {})
  }
}

function withTimeout (signal?: AbortSignal): AbortSignal {
  const timeout = AbortSignal.timeout(WITNESS_LIMITS.timeoutMs)
  return signal === undefined ? timeout : AbortSignal.any([timeout, signal])
}

function targetOf (node: Libp2p, peer: string, addresses: string[]): PeerId | ReturnType<typeof dialAddress>[] {
  const id = peerIdFromString(peer)
  return node.getConnections(id).length > 0 || addresses.length === 0 ? id : addresses.map(a => dialAddress(a, peer))
}

/** One request and its response on `lp`: the cosignature, checked (see sendHead). */
async function exchange (lp: ReturnType<typeof lpStream>, peer: string, headLine: string, signal: AbortSignal, verifyDoc: DocVerifier): Promise<string> {
  await lp.write(utf8(headLine), { signal })
  const f = (await lp.read({ signal })).subarray()
  const text = fromUtf8(f.subarray(1))
  if (f[0] === TAG_ERROR) throw new WitnessRefused(`${peer} refused to witness: ${text.slice(0, 300)}`)
  if (f[0] !== TAG_COSIGNED) throw new Error(`${peer} broke the witness protocol (frame tag ${f[0]})`)
  const checked = checkWitnessLine(text, verifyDoc)
  if (!checked.ok) throw new Error(`${peer} sent a bad cosignature: ${checked.problem}`)
  if (checked.statement.witness !== peer || checked.statement.headLine !== headLine) {
    // A conflict answer carries the head the witness holds: not a cosignature of this one.
    throw new Error(`${peer} cosigned another head (seq ${checked.statement.seq}) than the one sent`)
  }
  return text
}

/** A witness answered, and refused: the stream is still in step (1.1.0 goes on with the next head). */
class WitnessRefused extends Error {}

interface WitnessLink { stream: Stream, lp: ReturnType<typeof lpStream> }

function usable (link: WitnessLink | undefined): link is WitnessLink {
  return link !== undefined && link.stream.status === 'open' && link.stream.writeStatus === 'writable' && link.stream.readStatus === 'readable'
}

/**
 * Sends each new head to every other member this node is connected to (the table keeps members
 * connected while they play; no dial is started for a head), one request per member at a time and
 * at most one per `intervalMs` (default {@link WITNESS_LIMITS}.headIntervalMs): a head that comes
 * while one is on its way, or within the interval after the last one left, waits, and only the
 * newest waiting one is sent when the interval is over. Closing sends what still waits (for up to
 * {@link WITNESS_LIMITS}.flushMs). With
 * `current`, a member that connects (or connects again, and the node itself after a restart) is
 * sent the current head at once, so a member that was away, or a log that went back while its
 * node was down, is witnessed without waiting for the next append. Never throws; failures are
 * logged.
 */
export function createHeadAnnouncer (node: Libp2p, options: {
  self: string
  members: Iterable<string>
  addressBook: Map<string, string[]>
  logger?: Logger
  onCosigned?: (peer: string, line: string) => void
  /** The node's current head line (null for an empty log), sent to a member when it connects. */
  current?: () => string | null
  /** Checks the signatures in the cosignatures that come back (see sendHead). */
  verifyDoc?: DocVerifier
  /** At most one head per member per this many ms (see above). */
  intervalMs?: number
}): { announce: (headLine: string) => void, close: () => Promise<void> } {
  // The other members, parsed once: announce asks libp2p for each one's connections at every append.
  const peerIds = new Map([...new Set(options.members)].filter(p => p !== options.self).map(p => [p, peerIdFromString(p)]))
  const intervalMs = options.intervalMs ?? WITNESS_LIMITS.headIntervalMs
  const busy = new Map<string, Promise<void>>()
  const waiting = new Map<string, string>()
  /** When the last head to each member left, and the timer that sends the one waiting after it. */
  const lastSent = new Map<string, number>()
  const timers = new Map<string, ReturnType<typeof setTimeout>>()
  let closing = false
  const stop = new AbortController()
  // Each peer's 1.1.0 stream, kept between heads (one request on it at a time: see `busy`).
  const links = new Map<string, WitnessLink>()
  const verifyDoc = options.verifyDoc ?? nativeVerifyDocument
  const drop = (peer: string, link: WitnessLink, err?: Error): void => {
    if (links.get(peer) === link) links.delete(peer)
    if (link.stream.status === 'open') {
      if (err === undefined) void link.stream.close().catch(() => {})
      else link.stream.abort(err)
    }
  }
  /** One head to one peer: on its kept stream, or on a new one; a kept stream found dead is replaced once. */
  const witness = async (peer: string, headLine: string): Promise<string> => {
    for (let attempt = 1; ; attempt++) {
      const signal = withTimeout(stop.signal)
      let link = links.get(peer)
      const kept = usable(link)
      if (!kept) {
        if (link !== undefined) drop(peer, link)
        // The signal bounds the dial only (as in messenger.ts): handed to newStream it would stay
        // tied to the kept stream and abort it when it fires.
        const connection = await node.dial(targetOf(node, peer, options.addressBook.get(peer) ?? []), { signal })
        const stream = await connection.newStream([WITNESS_STREAM_PROTOCOL, WITNESS_PROTOCOL])
        link = { stream, lp: lpStream(stream, { maxDataLength: MAX_WITNESS_BYTES + 1, lengthDecoder: varintLength }) }
        if (stream.protocol === WITNESS_STREAM_PROTOCOL) links.set(peer, link)
        if (stop.signal.aborted) { drop(peer, link); throw new Error('announcer closed') }
      }
      const current = link as WitnessLink
      try {
        const line = await exchange(current.lp, peer, headLine, signal, verifyDoc)
        if (current.stream.protocol !== WITNESS_STREAM_PROTOCOL) drop(peer, current)
        return line
      } catch (err) {
        // A refusal leaves the stream in step; anything else may not: it is not used again.
        if (err instanceof WitnessRefused && current.stream.protocol === WITNESS_STREAM_PROTOCOL) throw err
        drop(peer, current, err as Error)
        // A kept stream may have died while idle (the witness closed it, the connection went): once more on a new one.
        if (!kept || attempt >= 2 || stop.signal.aborted) throw err
      }
    }
  }
  const run = (peer: string, headLine: string): void => {
    lastSent.set(peer, performance.now())
    const p = witness(peer, headLine)
      .then(line => { options.onCosigned?.(peer, line) })
      .catch((err: unknown) => { if (!stop.signal.aborted) options.logger?.debug({ peer, err: (err as Error).message }, 'head not witnessed') })
      .finally(() => {
        busy.delete(peer)
        if (!stop.signal.aborted) next(peer)
      })
    busy.set(peer, p)
  }
  /** Sends the head waiting for `peer` now, or sets the timer for the end of its interval. */
  const next = (peer: string): void => {
    const headLine = waiting.get(peer)
    if (headLine === undefined || busy.has(peer) || timers.has(peer)) return
    const wait = (lastSent.get(peer) ?? -Infinity) + intervalMs - performance.now()
    if (wait > 0 && !closing) {
      timers.set(peer, setTimeout(() => { timers.delete(peer); next(peer) }, wait))
      return
    }
    waiting.delete(peer)
    run(peer, headLine)
  }
  const offer = (peer: string, headLine: string): void => {
    waiting.set(peer, headLine)
    next(peer)
  }
  const onConnect = (evt: CustomEvent<PeerId>): void => {
    const peer = evt.detail.toString()
    const head = options.current?.() ?? null
    if (head === null || stop.signal.aborted || closing || !peerIds.has(peer)) return
    offer(peer, head)
  }
  if (options.current !== undefined) node.addEventListener('peer:connect', onConnect)
  return {
    announce (headLine: string): void {
      if (stop.signal.aborted || closing || node.status !== 'started') return
      for (const [peer, id] of peerIds) {
        if (node.getConnections(id).length === 0) continue
        offer(peer, headLine)
      }
    },
    async close (): Promise<void> {
      node.removeEventListener('peer:connect', onConnect)
      // The newest head still waiting for its interval goes now, so members hold the log's end.
      closing = true
      for (const timer of timers.values()) clearTimeout(timer)
      timers.clear()
      if (node.status === 'started') for (const peer of [...waiting.keys()]) next(peer)
      if (busy.size > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined
        await Promise.race([
          (async () => { while (busy.size > 0) await Promise.all(busy.values()) })(),
          new Promise<void>(resolve => { timer = setTimeout(resolve, WITNESS_LIMITS.flushMs) })
        ])
        clearTimeout(timer)
      }
      stop.abort()
      waiting.clear()
      await Promise.all(busy.values())
      for (const [peer, link] of links) drop(peer, link)
    }
  }
}
