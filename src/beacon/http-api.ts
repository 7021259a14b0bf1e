import type { IncomingMessage, ServerResponse } from 'node:http'
import type { BeaconEntry, ChainInfo } from '../core/beacon/index.js'

/**
 * drand's v1 HTTP API (the part drand-client uses) over any source of entries: `/info`,
 * `/public/latest`, `/public/{round}`, `/chains`, `/health`, each also under `/{chain hash}/`.
 * A round that is not (yet) available is a 404, as drand's relays answer.
 */
export interface DrandSource {
  info: ChainInfo
  /** The latest round available now, or 0 before the first one. */
  latestRound: () => number
  /** The entry of `round` if it is available, else undefined. */
  entry: (round: number) => BeaconEntry | undefined
  /** The round due now on the source's clock (`/health`'s `expected`); latestRound() if not given. */
  expectedRound?: () => number
  /** Extra response headers (a local beacon labels its trust here). */
  headers?: Record<string, string>
}

const ROUND = /^[1-9][0-9]{0,15}$/

function send (res: ServerResponse, status: number, body: unknown, headers: Record<string, string>, cache: string): void {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': cache
  })
  res.end(text)
}

export function drandV1Handler (source: DrandSource): (req: IncomingMessage, res: ServerResponse) => void {
  const headers = source.headers ?? {}
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, { error: 'method not allowed' }, { ...headers, allow: 'GET, HEAD' }, 'no-store')
      return
    }
    let path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '')
    const prefix = '/' + source.info.hash
    if (path === prefix || path.startsWith(prefix + '/')) path = path.slice(prefix.length)
    if (path === '/info') return send(res, 200, source.info, headers, 'public, max-age=300')
    if (path === '/chains') return send(res, 200, [source.info.hash], headers, 'public, max-age=300')
    if (path === '/health') {
      // As drand's: 200 when the latest round is at most one behind the one due, else 503.
      const current = source.latestRound()
      const expected = source.expectedRound?.() ?? current
      const status = current + 1 >= expected ? 200 : 503
      return send(res, status, { status, current, expected }, headers, 'no-store')
    }
    if (path === '/public/latest') {
      const latest = source.latestRound()
      const entry = latest > 0 ? source.entry(latest) : undefined
      if (entry === undefined) return send(res, 404, { error: 'no round produced yet' }, headers, 'no-store')
      return send(res, 200, entry, headers, 'no-store')
    }
    const m = /^\/public\/([^/]+)$/.exec(path)
    if (m !== null) {
      if (!ROUND.test(m[1])) return send(res, 400, { error: 'round must be a positive decimal integer' }, headers, 'no-store')
      const round = Number(m[1])
      const entry = round <= source.latestRound() ? source.entry(round) : undefined
      if (entry === undefined) return send(res, 404, { error: `round ${round} not available` }, headers, 'no-store')
      // A produced round never changes.
      return send(res, 200, entry, headers, 'public, max-age=604800, immutable')
    }
    send(res, 404, { error: 'not found' }, headers, 'no-store')
  }
}
