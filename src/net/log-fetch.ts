/**
 * `/fairdeal/log/1.0.0`: fetch a range of a peer's receipt log, streamed, so that anyone allowed
 * can re-verify it alone. The server only copies stored lines; all checking is the client's (the
 * core verifier), so a server that lies is caught exactly like a tampered file.
 *
 * Wire format (every frame is length-prefixed with an unsigned varint, as `lpStream` does):
 * - request, client → server: plain JSON `{"from":F,"to":T,"max":M}` (`to`, `max` optional),
 *   at most {@link LOG_FETCH_LIMITS}.maxRequestBytes.
 * - response, server → client: one HEAD frame (tag 0x01, then the signed head's line; nothing after
 *   the tag for an empty log), then up to M ENTRY frames (0x02 + entry line) for seq F, F+1, … in
 *   order, then END (0x03). Or, at any point, ERROR (0x04 + a UTF-8 message) and the stream ends.
 * The server caps a response at `maxEntriesPerResponse` entries and stops after
 * `maxResponseBytes`; the client pages through a range with further requests.
 *
 * Or, request `{"witnessed":PEERID}`: "the heads you hold for peer X". Response: one WITNESS frame
 * (0x05 + a cosigned head line, docs/log.md "Witnessed heads") per head the server witnessed for
 * that peer (none, the latest, then any that contradicted it), then END.
 */
import { lpStream } from '@libp2p/utils'
import { z } from 'zod'
import { dialFailureReason } from './reach.js'
import type { Libp2p, PeerId, Stream, Connection } from '@libp2p/interface'
import type { Multiaddr } from '@multiformats/multiaddr'
import { fromUtf8, utf8 } from '../core/bytes.js'
import { MAX_ENTRY_BYTES } from '../core/log/format.js'
import type { LogLine } from '../core/log/check.js'
import { MAX_HEADS_HELD, MAX_WITNESS_BYTES } from '../core/log/witness.js'
import { peerIdSchema } from '../core/peer-id-schema.js'
import { createRejectionLog } from './rejection-log.js'

export const LOG_FETCH_PROTOCOL = '/fairdeal/log/1.0.0'

export const LOG_FETCH_LIMITS = {
  maxRequestBytes: 256,
  /** A frame is a tag byte plus one line. */
  maxFrameBytes: MAX_ENTRY_BYTES + 1,
  maxEntriesPerResponse: 1000,
  /** The server stops a response once it has sent this much; it keeps the client's read buffer small. */
  maxResponseBytes: 1024 * 1024,
  /** How long the server waits for the request. */
  requestTimeoutMs: 10_000,
  /** How long the client waits for any one frame. */
  frameTimeoutMs: 30_000,
  maxInboundStreams: 4
} as const

const TAG_HEAD = 0x01
const TAG_ENTRY = 0x02
const TAG_END = 0x03
const TAG_ERROR = 0x04
const TAG_WITNESS = 0x05

const RangeRequest = z.strictObject({
  from: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  to: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  max: z.number().int().min(1).max(LOG_FETCH_LIMITS.maxEntriesPerResponse).optional()
})
const WitnessedRequest = z.strictObject({ witnessed: peerIdSchema })
const Request = z.union([RangeRequest, WitnessedRequest])
export type LogFetchRequest = z.infer<typeof RangeRequest>
/** At most this many witnessed heads in one response: all a witness holds for one owner. */
const MAX_WITNESSED = MAX_HEADS_HELD

/** What the server reads from: `Log` of src/store/log.ts, or anything that serves lines the same way. */
export interface ServedLog {
  /** The signed head's line, or null for an empty log. */
  headLine: () => string | null
  /** Entry lines from `from` to `to` inclusive, in order. */
  lines: (range: { from: number, to: number }) => AsyncIterable<string>
}

/** Who may fetch: the table's members (default), or anyone who can connect. */
export type LogFetchPolicy = 'members' | 'anyone'

/** Pino-compatible; only these two levels are used. */
export interface LogFetchLogger {
  debug: (obj: object, msg: string) => void
  warn: (obj: object, msg: string) => void
}

export interface LogFetchInit {
  /** Default `members`. */
  policy?: LogFetchPolicy
  /** The members (peer ids), or a test of membership, for the `members` policy. */
  members?: Iterable<string> | ((peerId: string) => boolean)
  logger?: LogFetchLogger
  /** Cap on entries per response (at most, and default, {@link LOG_FETCH_LIMITS}.maxEntriesPerResponse). */
  maxEntriesPerResponse?: number
  /** Default {@link LOG_FETCH_LIMITS}.maxResponseBytes. */
  maxResponseBytes?: number
  /** The cosigned heads this node holds for a peer (its witness store); absent: it holds none. */
  witnessed?: (owner: string) => Promise<string[]>
}

function frame (tag: number, text = ''): Uint8Array {
  const body = utf8(text)
  const out = new Uint8Array(body.length + 1)
  out[0] = tag
  out.set(body, 1)
  return out
}

function memberTest (init: LogFetchInit): (peerId: string) => boolean {
  if ((init.policy ?? 'members') === 'anyone') return () => true
  const members = init.members
  if (typeof members === 'function') return members
  const set = new Set(members ?? [])
  return peerId => set.has(peerId)
}

/** Serves `log` on {@link LOG_FETCH_PROTOCOL}. Returns a function that stops serving. */
export async function registerLogFetch (node: Libp2p, log: ServedLog, init: LogFetchInit = {}): Promise<() => Promise<void>> {
  const allowed = memberTest(init)
  const maxEntries = Math.min(init.maxEntriesPerResponse ?? LOG_FETCH_LIMITS.maxEntriesPerResponse, LOG_FETCH_LIMITS.maxEntriesPerResponse)
  const maxBytes = init.maxResponseBytes ?? LOG_FETCH_LIMITS.maxResponseBytes
  const logger = init.logger
  const refused = logger === undefined ? undefined : createRejectionLog(logger)

  const handler = async (stream: Stream, connection: Connection): Promise<void> => {
    const peer = connection.remotePeer.toString()
    const lp = lpStream(stream, { maxDataLength: LOG_FETCH_LIMITS.maxRequestBytes })
    const refuse = async (message: string): Promise<void> => {
      refused?.({ peer, reason: message }, 'log fetch refused')
      await lp.write(frame(TAG_ERROR, message))
      await stream.close()
    }
    try {
      const raw = await lp.read({ signal: AbortSignal.timeout(LOG_FETCH_LIMITS.requestTimeoutMs) })
      let request: z.infer<typeof Request>
      try {
        request = Request.parse(JSON.parse(fromUtf8(raw.subarray())))
      } catch (err) {
        await refuse(`bad request: ${err instanceof z.ZodError ? z.prettifyError(err).replace(/\n/g, '; ') : (err as Error).message}`)
        return
      }
      if (!allowed(peer)) {
        await refuse('not allowed: this node serves its log to its table members only')
        return
      }
      if ('witnessed' in request) {
        const held = init.witnessed === undefined ? [] : await init.witnessed(request.witnessed)
        for (const line of held.slice(0, MAX_WITNESSED)) await lp.write(frame(TAG_WITNESS, line))
        await lp.write(frame(TAG_END))
        await stream.close()
        logger?.debug({ peer, owner: request.witnessed, heads: held.length }, 'witnessed heads served')
        return
      }
      const headLine = log.headLine()
      await lp.write(frame(TAG_HEAD, headLine ?? ''))
      let sent = 0
      if (headLine !== null) {
        const headSeq = (JSON.parse(headLine) as { body: { seq: number } }).body.seq
        const to = Math.min(request.to ?? headSeq, headSeq)
        const max = Math.min(request.max ?? maxEntries, maxEntries)
        let bytes = 0
        if (request.from <= to) {
          for await (const line of log.lines({ from: request.from, to })) {
            const f = frame(TAG_ENTRY, line)
            await lp.write(f)
            sent++
            bytes += f.length
            if (sent >= max || bytes >= maxBytes) break
          }
        }
      }
      await lp.write(frame(TAG_END))
      await stream.close()
      logger?.debug({ peer, from: request.from, entries: sent }, 'log fetch served')
    } catch (err) {
      // The peer decides how often its request breaks (a bad length, silence, a reset): rate-limited summaries.
      refused?.({ peer, reason: (err as Error).message }, 'log fetch failed')
      stream.abort(err as Error)
    }
  }

  await node.handle(LOG_FETCH_PROTOCOL, handler, { maxInboundStreams: LOG_FETCH_LIMITS.maxInboundStreams })
  return async () => { await node.unhandle(LOG_FETCH_PROTOCOL) }
}

/** The peer refused, broke the protocol, or went silent. */
export class LogFetchError extends Error {
  override name = 'LogFetchError'
}

export interface FetchLogOptions {
  /** First seq (default 0). */
  from?: number
  /** Last seq (default: the head the peer sends first). */
  to?: number
  /** Entries per request (default, and at most, the protocol's cap). */
  pageSize?: number
  signal?: AbortSignal
}

/**
 * A peer's log as lines, in the form the verifier takes: the signed head first, then the entries.
 * `remotePeer` is the peer the connection authenticated, known once iteration has started: the
 * log must be that peer's (pass it to the verifier as `expectOwner`).
 */
export interface LogFetch extends AsyncIterable<LogLine> {
  readonly remotePeer: string | null
}

export function fetchLog (node: Libp2p, target: Multiaddr | PeerId, options: FetchLogOptions = {}): LogFetch {
  const state: { remotePeer: string | null } = { remotePeer: null }
  const pageSize = Math.min(options.pageSize ?? LOG_FETCH_LIMITS.maxEntriesPerResponse, LOG_FETCH_LIMITS.maxEntriesPerResponse)

  async function * lines (): AsyncGenerator<LogLine> {
    let from = options.from ?? 0
    let end = options.to ?? Number.MAX_SAFE_INTEGER
    let first = true
    while (from <= end) {
      let stream: Stream
      try {
        const connection = await node.dial(target, { signal: options.signal })
        state.remotePeer = connection.remotePeer.toString()
        stream = await connection.newStream(LOG_FETCH_PROTOCOL, { signal: options.signal })
      } catch (err) {
        throw new LogFetchError(`cannot open a log stream to ${state.remotePeer ?? target.toString()}: ${dialFailure(err)}`, { cause: err })
      }
      const lp = lpStream(stream, { maxDataLength: LOG_FETCH_LIMITS.maxFrameBytes })
      const read = async (): Promise<Uint8Array> => {
        const signals = [AbortSignal.timeout(LOG_FETCH_LIMITS.frameTimeoutMs), ...(options.signal !== undefined ? [options.signal] : [])]
        try {
          // A fresh copy: frames can be views into larger network buffers.
          return new Uint8Array((await lp.read({ signal: AbortSignal.any(signals) })).subarray())
        } catch (err) {
          stream.abort(err as Error)
          throw new LogFetchError(`fetching the log from ${state.remotePeer ?? '?'} failed: ${(err as Error).message}`, { cause: err })
        }
      }
      const request: LogFetchRequest = { from, max: pageSize, ...(end !== Number.MAX_SAFE_INTEGER ? { to: end } : {}) }
      try {
        await lp.write(utf8(JSON.stringify(request)), { signal: options.signal })
      } catch (err) {
        stream.abort(err as Error)
        throw new LogFetchError(`sending the log request to ${state.remotePeer ?? '?'} failed: ${(err as Error).message}`, { cause: err })
      }

      let got = 0
      let lastEntry: Uint8Array | null = null
      let headSeen = false
      try {
        for (let f = await read(); ; f = await read()) {
          const tag = f[0]
          if (tag === TAG_ERROR) throw new LogFetchError(`${state.remotePeer} refused: ${safeText(f.subarray(1))}`)
          if (tag === TAG_HEAD && !headSeen) {
            headSeen = true // once per response, before any entry
            if (f.length === 1) return // empty log
            if (first) {
              first = false
              const seq = seqOf(f.subarray(1))
              if (options.to === undefined && seq !== null) end = seq
              yield f.subarray(1)
            }
            continue
          }
          if (tag === TAG_ENTRY && headSeen) {
            if (++got > pageSize) throw new LogFetchError(`${state.remotePeer} sent more entries than the ${pageSize} asked for`)
            lastEntry = f.subarray(1)
            yield lastEntry
            continue
          }
          if (tag === TAG_END && headSeen) break
          throw new LogFetchError(`${state.remotePeer} broke the log protocol (unexpected frame tag ${tag})`)
        }
      } finally {
        await stream.close().catch(() => {})
      }
      if (got === 0) return // the peer has nothing more in the range; the verifier judges what is missing
      // The next page starts after the last seq received, so a gap in what the peer sent stays a
      // gap (and is reported as one) instead of shifting the pages; always forward, whatever it says.
      const lastSeq = lastEntry === null ? null : seqOf(lastEntry)
      from = lastSeq !== null && lastSeq >= from ? lastSeq + 1 : from + got
    }
  }

  return {
    get remotePeer () { return state.remotePeer },
    [Symbol.asyncIterator]: () => lines()
  }
}

/**
 * The cosigned heads `target` holds for the log of `owner` (unchecked lines: the caller checks
 * them with checkWitnessLine), and the peer that answered.
 */
export async function fetchWitnessed (node: Libp2p, target: Multiaddr | PeerId, owner: string, options: { signal?: AbortSignal } = {}): Promise<{ peer: string, lines: string[] }> {
  let stream: Stream
  let peer: string
  try {
    const connection = await node.dial(target, { signal: options.signal })
    peer = connection.remotePeer.toString()
    stream = await connection.newStream(LOG_FETCH_PROTOCOL, { signal: options.signal })
  } catch (err) {
    throw new LogFetchError(`cannot open a log stream to ${target.toString()}: ${dialFailure(err)}`, { cause: err })
  }
  const lp = lpStream(stream, { maxDataLength: MAX_WITNESS_BYTES + 1 })
  const lines: string[] = []
  try {
    await lp.write(utf8(JSON.stringify({ witnessed: owner })), { signal: options.signal })
    for (;;) {
      const signals = [AbortSignal.timeout(LOG_FETCH_LIMITS.frameTimeoutMs), ...(options.signal !== undefined ? [options.signal] : [])]
      const f = (await lp.read({ signal: AbortSignal.any(signals) })).subarray()
      if (f[0] === TAG_END) break
      if (f[0] === TAG_ERROR) throw new LogFetchError(`${peer} refused: ${safeText(f.subarray(1))}`)
      if (f[0] !== TAG_WITNESS || lines.length >= MAX_WITNESSED) throw new LogFetchError(`${peer} broke the log protocol (unexpected frame tag ${f[0]})`)
      lines.push(fromUtf8(f.subarray(1)))
    }
  } catch (err) {
    stream.abort(err as Error)
    if (err instanceof LogFetchError) throw err
    throw new LogFetchError(`fetching witnessed heads from ${peer} failed: ${(err as Error).message}`, { cause: err })
  }
  await stream.close().catch(() => {})
  return { peer, lines }
}

function seqOf (bytes: Uint8Array): number | null {
  try {
    const seq = (JSON.parse(fromUtf8(bytes)) as { body?: { seq?: unknown } }).body?.seq
    return typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0 ? seq : null
  } catch { return null }
}

function safeText (bytes: Uint8Array): string {
  // eslint-disable-next-line no-control-regex
  return new TextDecoder().decode(bytes.subarray(0, 300)).replace(/[\u0000-\u001f\u007f]/g, ' ')
}

/** One line on why a dial failed; a node that admits only its table closes a stranger's connection. */
function dialFailure (err: unknown): string {
  const reason = dialFailureReason(err)
  const hint = /EOF|reset|close|abort|failed/i.test(reason) ? ' — the peer may serve its log to its table members only' : ''
  return reason + hint
}
