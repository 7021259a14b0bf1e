import type { Libp2p } from '@libp2p/interface'
import type { Multiaddr } from '@multiformats/multiaddr'
import { dialAddress } from './addresses.js'

/** One line on why a dial failed: the first line of the error, and of the first inner error of an aggregate. */
export function dialFailureReason (err: unknown): string {
  const e = err as { message?: unknown, name?: unknown, type?: unknown, errors?: unknown[] } | null
  // Some transports reject with a DOM-style Event (a closed WebSocket): its `type` is all it says.
  const message = typeof e?.message === 'string' && e.message !== '' ? e.message
    : typeof e?.type === 'string' ? `connection ${e.type === 'error' ? 'failed' : e.type === 'close' ? 'closed' : e.type}`
      : typeof e?.name === 'string' ? e.name : String(err)
  const inner = Array.isArray(e?.errors) && e.errors.length > 0 ? ` (${dialFailureReason(e.errors[0])})` : ''
  return message.split('\n')[0] + inner
}

/** The kind of a failed dial, from the system's error code where there is one. */
export type DialFailureKind = 'refused' | 'timeout' | 'closed' | 'other'

export function dialFailureKind (err: unknown): DialFailureKind {
  const text = dialFailureReason(err)
  if (/ECONNREFUSED|connection refused/i.test(text)) return 'refused'
  if (/ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|timed? ?out|TimeoutError|aborted/i.test(text)) return 'timeout'
  if (/EOF|reset|closed|ECONNRESET|stream ended|encrypt/i.test(text)) return 'closed'
  return 'other'
}

/** Why a dial failed and what the user can check, in one line. */
export function dialFailureHint (err: unknown): string {
  const reason = dialFailureReason(err)
  switch (dialFailureKind(err)) {
    case 'refused':
      return `${reason} — nothing listens there: is its node running, and is the port right (and forwarded to it, behind a router)?`
    case 'timeout':
      return `${reason} — no answer: check the address, the port forwarding on its router and its firewall`
    case 'closed':
      return `${reason} — it answered and hung up: its node admits only its table's members (is it running with the complete table, this node in it?)`
    default:
      return reason
  }
}

export type ReachResult =
  | { ok: true, address: string, ms: number }
  | { ok: false, addresses: string[], reason: string, kind: DialFailureKind }

/**
 * Dials `peer` at `addresses` once, with a timeout, and hangs up: whether this machine can reach it
 * (`table join` asks this of the dealer). For a node of its own: the connection is closed after.
 */
export async function probePeer (node: Libp2p, peer: string, addresses: ReadonlyArray<string | Multiaddr>, timeoutMs: number): Promise<ReachResult> {
  const targets = addresses.map(a => dialAddress(a, peer))
  const shown = targets.map(t => t.toString())
  if (targets.length === 0) return { ok: false, addresses: [], reason: 'no address is known for it', kind: 'other' }
  const started = performance.now()
  try {
    const connection = await node.dial(targets, { signal: AbortSignal.timeout(timeoutMs) })
    const ms = Math.round(performance.now() - started)
    const address = connection.remoteAddr.toString()
    await connection.close().catch(() => { connection.abort(new Error('probe done')) })
    return { ok: true, address, ms }
  } catch (err) {
    return { ok: false, addresses: shown, reason: dialFailureHint(err), kind: dialFailureKind(err) }
  }
}
