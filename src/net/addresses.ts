import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import { NetInputError } from './errors.js'

const LISTEN_SHAPE = 'expected /ip4/HOST/tcp/PORT or /ip4/HOST/tcp/PORT/ws (ip6 also accepted)'

function parse (text: string, what: string): Multiaddr {
  if (typeof text !== 'string' || text.length === 0 || text.length > 256) {
    throw new NetInputError(`${what} must be a multiaddr string, got ${JSON.stringify(String(text).slice(0, 80))}`)
  }
  try {
    return multiaddr(text)
  } catch (err) {
    throw new NetInputError(`${what} ${JSON.stringify(text)} is not a multiaddr (${(err as Error).message})`)
  }
}

/**
 * Checks that `text` is an address this node can listen on with its two transports (TCP and plain
 * WebSockets over an IP literal) and returns it parsed. A listen address carries no /p2p/ part.
 */
export function parseListenAddress (text: string): Multiaddr {
  const ma = parse(text, 'listen address')
  const names = ma.getComponents().map(c => c.name)
  const ipOk = names[0] === 'ip4' || names[0] === 'ip6'
  const shapeOk = names[1] === 'tcp' && (names.length === 2 || (names.length === 3 && names[2] === 'ws'))
  if (!ipOk || !shapeOk) {
    throw new NetInputError(`unsupported listen address ${JSON.stringify(text)}: ${LISTEN_SHAPE}`)
  }
  return ma
}

/**
 * The address to dial `peerId` at: `addr` with `/p2p/<peerId>` appended (so noise checks that the
 * far end really holds that key), or as is when it already names that peer. An address naming
 * another peer is refused.
 */
export function dialAddress (addr: Multiaddr | string, peerId: string): Multiaddr {
  const ma = typeof addr === 'string' ? parse(addr, `address of ${peerId}`) : addr
  const named = ma.getComponents().findLast(c => c.name === 'p2p')?.value
  if (named === undefined) return ma.encapsulate(`/p2p/${peerId}`)
  if (named !== peerId) {
    throw new NetInputError(`address ${ma.toString()} names peer ${named}, not ${peerId}`)
  }
  return ma
}
