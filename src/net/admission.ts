import type { MultiaddrConnection, Transport, Upgrader } from '@libp2p/interface'
import type { Logger } from 'pino'

/**
 * Admission of inbound sockets before their peer is known.
 *
 * Until noise has proven a peer's key, a member's socket and a stranger's look alike (on loopback
 * they even share the address), so no rule can reserve room for members there. libp2p's own rule
 * refuses the NEWEST socket once `maxIncomingPendingConnections` are in their upgrade: a dozen
 * sockets that never start noise then lock every member out until they time out, and a stranger
 * who keeps re-opening them locks members out for good. This guard turns that around: when the
 * pending sockets are at the limit, the OLDEST is dropped to make room for the newcomer. An honest
 * peer's handshake takes milliseconds, so it is never the oldest for long; a socket held open
 * without a handshake is the first to go. Whatever still has not finished its upgrade after
 * PENDING_UPGRADE_TIMEOUT_MS is dropped by libp2p's inbound upgrade timeout.
 */
export interface InboundGuard {
  /** Wraps a transport factory so that its listeners' inbound upgrades go through the guard. */
  guard: <C>(factory: (components: C) => Transport) => (components: C) => Transport
  /** Sockets now between accept and the end of their upgrade. */
  readonly pending: number
  /** Sockets dropped to make room for newer ones, since the start. */
  readonly evicted: number
}

export class PendingUpgradeEvicted extends Error {
  override name = 'PendingUpgradeEvicted'
}

export function inboundGuard (maxPending: number, logger: Logger): InboundGuard {
  // In arrival order: the first one is the oldest.
  const pending: MultiaddrConnection[] = []
  let evicted = 0
  let lastReport = 0

  const admit = (maConn: MultiaddrConnection): void => {
    while (pending.length >= maxPending) {
      const oldest = pending.shift() as MultiaddrConnection
      evicted++
      hardClose(oldest, new PendingUpgradeEvicted(`dropped: still not upgraded when ${maxPending} newer inbound sockets were waiting`))
    }
    pending.push(maConn)
    // A flood would log one line per socket; once a second is enough to see it happening.
    if (evicted > 0 && Date.now() - lastReport >= 1_000) {
      lastReport = Date.now()
      logger.warn({ evicted, pending: pending.length, remoteAddr: maConn.remoteAddr.toString() },
        'inbound sockets that did not finish their handshake were dropped to make room')
    }
  }
  const release = (maConn: MultiaddrConnection): void => {
    const i = pending.indexOf(maConn)
    if (i >= 0) pending.splice(i, 1)
  }

  const wrap = (upgrader: Upgrader): Upgrader => {
    const upgradeInbound = async (maConn: MultiaddrConnection, opts: Parameters<Upgrader['upgradeInbound']>[1]): Promise<void> => {
      admit(maConn)
      try {
        await upgrader.upgradeInbound(maConn, opts as never)
      } catch (err) {
        // Timed out, evicted or refused: make sure the socket itself is gone.
        hardClose(maConn, err as Error)
        throw err
      } finally {
        release(maConn)
      }
    }
    return new Proxy(upgrader, {
      get (target, prop, receiver) {
        if (prop === 'upgradeInbound') return upgradeInbound
        const value = Reflect.get(target, prop, receiver) as unknown
        return typeof value === 'function' ? value.bind(target) : value
      }
    })
  }

  return {
    guard: (factory) => (components) => {
      const transport = factory(components)
      const createListener = transport.createListener.bind(transport)
      transport.createListener = (options) => createListener({ ...options, upgrader: wrap(options.upgrader) })
      return transport
    },
    get pending () { return pending.length },
    get evicted () { return evicted }
  }
}

/**
 * Aborts a connection that is still upgrading, and closes its socket. An inbound WebSocket's abort
 * in @libp2p/websockets 10 sends close code 1006, which the `ws` package refuses to send (it is
 * reserved for "closed without a frame") by throwing, so the socket would stay open: terminate it.
 */
function hardClose (maConn: MultiaddrConnection, err: Error): void {
  maConn.abort(err)
  const ws = (maConn as { websocket?: { terminate?: () => void } }).websocket
  if (typeof ws?.terminate === 'function') {
    try { ws.terminate() } catch {}
  }
}
