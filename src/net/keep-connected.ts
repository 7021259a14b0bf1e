import { peerIdFromString } from '@libp2p/peer-id'
import type { Libp2p, PeerId } from '@libp2p/interface'
import type { Multiaddr } from '@multiformats/multiaddr'
import type { Logger } from 'pino'
import { dialAddress } from './addresses.js'
import { dialFailureHint } from './reach.js'
import { DIAL_TIMEOUT_MS, MEMBER_TAG, MEMBER_TAG_VALUE, REDIAL_MAX_MS, REDIAL_MIN_MS } from './limits.js'

/**
 * Marks the table's members in libp2p's peer store with a high tag value. When the node is over its
 * connection limit, libp2p closes the connections of the lowest-valued peers first (inbound before
 * outbound): a seat that dialled in from behind NAT, whose connection is the only way to reach it,
 * is then never chosen before a stranger fetching the log.
 */
export async function tagMembers (node: Libp2p, members: Iterable<string>): Promise<void> {
  const self = node.peerId.toString()
  for (const m of members) {
    if (m === self) continue
    await node.peerStore.merge(peerIdFromString(m), { tags: { [MEMBER_TAG]: { value: MEMBER_TAG_VALUE } } })
  }
}

export interface KeepConnectedInit {
  /** The peer to stay connected to (for a seat: its dealer). */
  peer: string
  /** Where it listens; `/p2p/<peer>` is appended where missing. */
  addresses: ReadonlyArray<string | Multiaddr>
  logger: Logger
  /** What the peer is, for log lines ("the dealer"). */
  name?: string
  /** First wait after a failed dial; doubled after each failure up to `maxDelayMs`. */
  minDelayMs?: number
  maxDelayMs?: number
}

export interface KeptConnection {
  /** Dials so far (successful or not). */
  readonly dials: number
  /** The last dial's failure with what to check (dialFailureHint), or null once connected. */
  readonly lastError: string | null
  /** Stops re-dialling (the connection itself is left to node.stop). */
  close: () => void
}

/**
 * Keeps one connection to `peer` open from this side, until `close()` or the node stops: dials it at once, and whenever it drops dials
 * again, waiting `minDelayMs` after a failure, doubling up to `maxDelayMs` (±20 % jitter, so that the
 * seats of a table whose dealer restarts do not all come back in the same millisecond). A connection
 * the peer opens to us counts as well: no dial while any connection is open. The peer sends on this
 * connection, so a node behind a home router (NAT) needs no open port. libp2p's connection monitor
 * pings over it every 10 s, which also keeps the router's NAT mapping alive.
 *
 * The first failure of a streak is logged at warn with what to check; the rest at debug, and the
 * reconnection at info.
 */
export function keepConnected (node: Libp2p, init: KeepConnectedInit): KeptConnection {
  const name = init.name ?? init.peer
  const log = init.logger.child({ component: 'keep-connected', peer: init.peer })
  const peer: PeerId = peerIdFromString(init.peer)
  const targets = init.addresses.map(a => dialAddress(a, init.peer))
  const minDelay = init.minDelayMs ?? REDIAL_MIN_MS
  const maxDelay = init.maxDelayMs ?? REDIAL_MAX_MS
  const stop = new AbortController()
  let dials = 0
  let lastError: string | null = null
  let failures = 0
  let wake: (() => void) | undefined

  const connected = (): boolean => node.getConnections(peer).some(c => c.status === 'open')
  const onDisconnect = (evt: CustomEvent<PeerId>): void => { if (evt.detail.equals(peer)) wake?.() }
  node.addEventListener('peer:disconnect', onDisconnect)
  // A stopped node dials nobody: the loop ends with it, whoever stops it.
  const close = (): void => {
    stop.abort()
    node.removeEventListener('peer:disconnect', onDisconnect)
    node.removeEventListener('stop', close)
  }
  node.addEventListener('stop', close)

  /** Resolves after `ms`, on a disconnect of the peer (when waiting while connected), or on close. */
  const sleep = async (ms: number): Promise<void> => {
    await new Promise<void>(resolve => {
      const timer = setTimeout(done, ms)
      timer.unref() // a wait never keeps the process alive
      function done (): void {
        clearTimeout(timer)
        wake = undefined
        stop.signal.removeEventListener('abort', done)
        resolve()
      }
      wake = done
      stop.signal.addEventListener('abort', done, { once: true })
    })
  }

  const run = async (): Promise<void> => {
    if (targets.length === 0) {
      log.error(`no address for ${name}: this node cannot reach it, and it cannot reach this node unless this node listens at an address it knows`)
      return
    }
    while (!stop.signal.aborted && node.status === 'started') {
      if (connected()) {
        failures = 0
        // Woken at once by the peer's disconnect; the timer is only a safety net.
        await sleep(maxDelay)
        continue
      }
      dials++
      try {
        await node.dial(targets, { signal: AbortSignal.any([stop.signal, AbortSignal.timeout(DIAL_TIMEOUT_MS)]) })
        if (failures > 0) log.info({ after: failures }, `connected to ${name} again`)
        else log.debug(`connected to ${name}`)
        lastError = null
        failures = 0
      } catch (err) {
        // Stopping (the node or this loop) fails the dial in flight: that is no news for anyone.
        if (stop.signal.aborted || node.status !== 'started') return
        lastError = dialFailureHint(err)
        failures++
        const delay = Math.min(maxDelay, minDelay * 2 ** Math.min(failures - 1, 16)) * (0.8 + 0.4 * Math.random())
        const line = `cannot reach ${name} at ${targets.map(t => t.toString()).join(' or ')}: ${lastError}; trying again in ${Math.ceil(delay / 1000)} s`
        if (failures === 1) log.warn({ reason: (err as Error).message }, line)
        else log.debug({ reason: (err as Error).message, failures }, line)
        await sleep(delay)
      }
    }
  }
  void run().catch((err: unknown) => { log.error({ err }, 'keep-connected loop failed') })

  return {
    get dials () { return dials },
    get lastError () { return lastError },
    close
  }
}
