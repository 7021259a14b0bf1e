/**
 * `/fairdeal/witness/1.0.0`: after each append a node sends its signed head to the other members
 * of its table, which witness it (src/store/witness-store.ts) and answer with their cosignature.
 * One request per stream, both ways one length-prefixed frame:
 * - request, owner → witness: the owner's signed head line (at most MAX_HEAD_BYTES);
 * - response: 0x01 + the cosigned head line (docs/log.md, "Witnessed heads"), or 0x04 + a UTF-8
 *   reason when it is refused (not a member, not the sender's own authentic head).
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

export const WITNESS_PROTOCOL = '/fairdeal/witness/1.0.0'

export const WITNESS_LIMITS = {
  /** How long either side waits for the other's frame. */
  timeoutMs: 10_000,
  maxInboundStreams: 2
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
  const handler = async (stream: Stream, connection: Connection): Promise<void> => {
    const peer = connection.remotePeer.toString()
    const lp = lpStream(stream, { maxDataLength: MAX_HEAD_BYTES })
    try {
      const raw = await lp.read({ signal: AbortSignal.timeout(WITNESS_LIMITS.timeoutMs) })
      let reply: Uint8Array
      if (!options.members.has(peer)) {
        reply = frame(TAG_ERROR, 'not a member of this table')
      } else {
        try {
          const observed = await store.observe(peer, fromUtf8(raw.subarray()))
          if (observed.status === 'conflict') contradiction?.({ peer, cosigned: observed.line }, 'a peer sent a head that contradicts one it sent before (kept as evidence)')
          reply = frame(TAG_COSIGNED, observed.line)
        } catch (err) {
          reply = frame(TAG_ERROR, (err as Error).message)
        }
      }
      await lp.write(reply)
      await stream.close()
    } catch (err) {
      options.logger?.debug({ peer, err: (err as Error).message }, 'witness request failed')
      stream.abort(err as Error)
    }
  }
  await node.handle(WITNESS_PROTOCOL, handler, { maxInboundStreams: WITNESS_LIMITS.maxInboundStreams })
  return async () => { await node.unhandle(WITNESS_PROTOCOL) }
}

/**
 * Sends `headLine` to `peer` and returns its cosignature, checked: a cosigned head of exactly
 * that head, by that peer. Both signatures in it (the witness's, and the node's own head's) are
 * checked with `verifyDoc`: Node's own Ed25519 by default; the daemon passes its verify memo, which
 * knows its own head's signature already (it made it) and so checks only the witness's.
 */
export async function sendHead (node: Libp2p, peer: string, headLine: string, addresses: string[] = [], signal?: AbortSignal, verifyDoc: DocVerifier = nativeVerifyDocument): Promise<string> {
  const id = peerIdFromString(peer)
  const target = node.getConnections(id).length > 0 || addresses.length === 0 ? id : addresses.map(a => dialAddress(a, peer))
  const timeout = AbortSignal.timeout(WITNESS_LIMITS.timeoutMs)
  const both = signal === undefined ? timeout : AbortSignal.any([timeout, signal])
  const stream = await node.dialProtocol(target, WITNESS_PROTOCOL, { signal: both })
  try {
    const lp = lpStream(stream, { maxDataLength: MAX_WITNESS_BYTES + 1 })
    await lp.write(utf8(headLine), { signal: both })
    const f = (await lp.read({ signal: both })).subarray()
    const text = fromUtf8(f.subarray(1))
    if (f[0] === TAG_ERROR) throw new Error(`${peer} refused to witness: ${text.slice(0, 300)}`)
    if (f[0] !== TAG_COSIGNED) throw new Error(`${peer} broke the witness protocol (frame tag ${f[0]})`)
    const checked = checkWitnessLine(text, verifyDoc)
    if (!checked.ok) throw new Error(`${peer} sent a bad cosignature: ${checked.problem}`)
    if (checked.statement.witness !== peer || checked.statement.headLine !== headLine) {
      // A conflict answer carries the head the witness holds: not a cosignature of this one.
      throw new Error(`${peer} cosigned another head (seq ${checked.statement.seq}) than the one sent`)
    }
    return text
  } finally {
    await stream.close().catch(() => {})
  }
}

/**
 * Sends each new head to every other member this node is connected to (the table keeps members
 * connected while they play; no dial is started for a head), one request per member at a time: a
 * head that comes while one is on its way waits, and only the newest waiting one is sent. With
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
}): { announce: (headLine: string) => void, close: () => Promise<void> } {
  const peers = [...new Set(options.members)].filter(p => p !== options.self)
  const busy = new Map<string, Promise<void>>()
  const waiting = new Map<string, string>()
  const stop = new AbortController()
  const run = (peer: string, headLine: string): void => {
    const p = sendHead(node, peer, headLine, options.addressBook.get(peer) ?? [], stop.signal, options.verifyDoc)
      .then(line => { options.onCosigned?.(peer, line) })
      .catch((err: unknown) => { if (!stop.signal.aborted) options.logger?.debug({ peer, err: (err as Error).message }, 'head not witnessed') })
      .finally(() => {
        busy.delete(peer)
        const next = waiting.get(peer)
        waiting.delete(peer)
        if (next !== undefined && !stop.signal.aborted) run(peer, next)
      })
    busy.set(peer, p)
  }
  const offer = (peer: string, headLine: string): void => {
    if (busy.has(peer)) waiting.set(peer, headLine)
    else run(peer, headLine)
  }
  const onConnect = (evt: CustomEvent<PeerId>): void => {
    const peer = evt.detail.toString()
    const head = options.current?.() ?? null
    if (head === null || stop.signal.aborted || !peers.includes(peer)) return
    offer(peer, head)
  }
  if (options.current !== undefined) node.addEventListener('peer:connect', onConnect)
  return {
    announce (headLine: string): void {
      if (stop.signal.aborted || node.status !== 'started') return
      for (const peer of peers) {
        if (node.getConnections(peerIdFromString(peer)).length === 0) continue
        offer(peer, headLine)
      }
    },
    async close (): Promise<void> {
      node.removeEventListener('peer:connect', onConnect)
      stop.abort()
      waiting.clear()
      await Promise.all(busy.values())
    }
  }
}
