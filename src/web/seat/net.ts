import { createLibp2p } from 'libp2p'
import { webSockets } from '@libp2p/websockets'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@libp2p/yamux'
import { circuitRelayTransport } from '@libp2p/circuit-relay-v2'
import { identify } from '@libp2p/identify'
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys'
import { lpStream, type LengthPrefixedStream } from '@libp2p/utils'
import { multiaddr } from '@multiformats/multiaddr'
import type { Libp2p, Stream } from '@libp2p/interface'
import { JOIN_PROTOCOL, MAX_JOIN_MESSAGE_BYTES, joinAsSeat, linkUsedUp, type FinalTableBody, type LinkInvite } from '../../core/join.js'
import type { Signed } from '../../core/signed.js'
import { MAX_FRAME_BYTES, TABLE_PROTOCOL } from '../../protocol/wire.js'

/**
 * The seat page's network: js-libp2p in the browser, WebSockets to the dealer's node (its `…/ws`
 * addresses), noise and yamux as every fairdeal node. The page listens nowhere: it dials the
 * dealer, keeps that connection (dialling again while it is down), and the dealer sends on it, as
 * a seat node behind NAT does (docs/network.md, "Who dials whom").
 */

/** How long the page waits between dials while the dealer cannot be reached. */
const REDIAL_MS = 300

export interface SeatNet {
  /** One frame to the dealer, on the page's long-lived table stream (opened on first use). */
  send: (frame: Uint8Array) => Promise<void>
  /** Whether the page is connected to the dealer now. */
  connected: () => boolean
  stop: () => Promise<void>
}

/**
 * A libp2p node with the seat's key (its Ed25519 seed), dialling only. At a table with a relay it
 * also dials through the relay (`…/ws/p2p/RELAY/p2p-circuit/p2p/DEALER`, the relay's WebSockets
 * address), which needs identify to learn that the relay speaks the hop protocol.
 */
export async function startSeatNode (seed: Uint8Array, relayed = false): Promise<Libp2p> {
  const privateKey = await generateKeyPairFromSeed('Ed25519', seed)
  return await createLibp2p({
    privateKey,
    addresses: { listen: [] },
    transports: relayed ? [webSockets(), circuitRelayTransport()] : [webSockets()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    // The dealer's node is often on this machine or this network: a private address is the usual case.
    connectionGater: { denyDialMultiaddr: () => false },
    peerDiscovery: [],
    services: (relayed ? { identify: identify() } : {}) as Record<string, ReturnType<typeof identify>>
  })
}

/** The dealer's addresses the page can dial: the WebSockets ones. */
export function pageAddresses (addresses: readonly string[]): string[] {
  return addresses.filter(a => /\/(ws|wss|tls\/ws)\/p2p\//.test(a))
}

/** The dealer's node could not be reached: the page tries again. */
export class UnreachableError extends Error {
  override name = 'UnreachableError'
}

/** The dealer's node hung up on this page's key while joining: the table is complete without it. */
export class UsedLinkError extends Error {
  override name = 'UsedLinkError'
}

/** A stream to the dealer on `protocol`; `joining` names the table a join is for (a hang-up then means a used link). */
async function dialStream (node: Libp2p, addresses: readonly string[], protocol: string, joining?: string): Promise<Stream> {
  const ws = pageAddresses(addresses)
  if (ws.length === 0) throw new Error('the dealer\'s node names no WebSockets address (…/tcp/PORT/ws), which a browser needs')
  let last: unknown
  for (const a of ws) {
    try { return await node.dialProtocol(multiaddr(a), protocol, { signal: AbortSignal.timeout(5_000) }) } catch (err) { last = err }
  }
  // A WebSocket that cannot connect rejects with a bare Event: its type is all it says.
  const e = last as { message?: unknown, type?: unknown } | undefined
  const reason = typeof e?.message === 'string' && e.message !== '' ? e.message : typeof e?.type === 'string' ? `connection ${e.type === 'error' ? 'failed' : e.type}` : String(last)
  // A dealer's node past joining admits only the table's players: it hangs up on anyone else.
  if (joining !== undefined && /EOF|reset|closed|encrypt/i.test(reason)) throw new UsedLinkError(linkUsedUp(joining))
  throw new UnreachableError(`cannot reach the dealer's node at ${ws.join(' or ')} (${reason}): is it running?`)
}

/** The join (src/core/join.ts) over a stream to the dealer: resolves with its signed final table. */
export async function joinFromPage (node: Libp2p, invite: LinkInvite, self: string, onBound: (waiting: number[]) => void): Promise<Signed<FinalTableBody>> {
  const stream = await dialStream(node, invite.dealerAddresses, JOIN_PROTOCOL, invite.table.id)
  try {
    return await joinAsSeat(lpStream(stream, { maxDataLength: MAX_JOIN_MESSAGE_BYTES }), invite, self, onBound)
  } finally {
    stream.abort(new Error('join done'))
  }
}

/**
 * The table protocol with the dealer: frames the dealer's node sends arrive on streams it opens to
 * the page (`onFrame`, one at a time, in order); the page's own go on one stream it opens, one
 * frame after another in the order `send` was called (a dead stream is replaced once per frame).
 */
export async function connectTable (node: Libp2p, dealer: string, addresses: readonly string[], onFrame: (from: string, frame: Uint8Array) => void, onState: (connected: boolean) => void): Promise<SeatNet> {
  let out: { stream: Stream, lp: LengthPrefixedStream<Stream> } | undefined
  let stopped = false
  await node.handle(TABLE_PROTOCOL, async (stream: Stream, connection) => {
    const from = connection.remotePeer.toString()
    const lp = lpStream(stream, { maxDataLength: MAX_FRAME_BYTES })
    try {
      for (;;) onFrame(from, new Uint8Array((await lp.read()).subarray()))
    } catch {
      stream.abort(new Error('table stream ended'))
    }
  }, { maxInboundStreams: 8 })
  const isConnected = (): boolean => node.getConnections().some(c => c.remotePeer.toString() === dealer && c.status === 'open')
  node.addEventListener('connection:open', () => { onState(isConnected()) })
  node.addEventListener('connection:close', () => { onState(isConnected()) })
  const multiaddrs = (list: readonly string[]): ReturnType<typeof multiaddr>[] => pageAddresses(list).map(a => multiaddr(a))
  // Kept connected: the dealer reaches the page only on a connection the page opened.
  const keep = async (): Promise<void> => {
    while (!stopped) {
      if (!isConnected()) {
        // Each address in turn (the dealer's own first, then through the relay) until one connects.
        for (const a of multiaddrs(addresses)) {
          try { await node.dial(a, { signal: AbortSignal.timeout(5_000) }); break } catch {}
        }
        onState(isConnected())
      }
      await new Promise(resolve => setTimeout(resolve, REDIAL_MS))
    }
  }
  void keep()
  /** Lets the stream go (aborted if still open: the dealer admits few streams a connection); the next frame opens another. */
  const drop = (reason: Error): void => {
    if (out !== undefined && out.stream.status === 'open') out.stream.abort(reason)
    out = undefined
  }
  const transmit = async (frame: Uint8Array): Promise<void> => {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        // A stream of a connection that closed is closed too: a new one goes on the connection there is now.
        if (out !== undefined && (out.stream.status !== 'open' || out.stream.writeStatus !== 'writable')) drop(new Error('table stream no longer writable'))
        if (out === undefined) {
          const stream = await dialStream(node, addresses, TABLE_PROTOCOL)
          out = { stream, lp: lpStream(stream, { maxDataLength: MAX_FRAME_BYTES }) }
        }
        await out.lp.write(frame)
        return
      } catch (err) {
        drop(err as Error)
        if (attempt === 1) throw err
      }
    }
  }
  // One send at a time, in call order: the seat machine hands over several frames at once (a BDEAL's
  // shares, the ASKs after a reload), and sends that overlapped while no stream was open each dialled
  // their own, so the dealer read them in whichever order their streams opened, not the order sent.
  let tail: Promise<void> = Promise.resolve()
  const send = (frame: Uint8Array): Promise<void> => {
    const result = tail.then(async () => { await transmit(frame) })
    tail = result.catch(() => {})
    return result
  }
  onState(isConnected())
  return {
    send,
    connected: isConnected,
    stop: async () => { stopped = true; await node.stop() }
  }
}
