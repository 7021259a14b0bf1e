import { UsageError } from './errors.js'
import { parseIntOption } from './options.js'

/** Where a beacon group member listens by default (libp2p), and its drand HTTP API's port. */
export const DEFAULT_GROUP_LISTEN = '/ip4/127.0.0.1/tcp/7500'
export const DEFAULT_GROUP_HTTP_PORT = 7501

/** A member's libp2p and HTTP settings as given on the command line (`prefix`: '' for `beacon group`, 'group-' for `table`). */
export interface MemberOptions { listen?: string[], announce?: string[], httpHost?: string, httpPort?: string, url?: string }

/**
 * This node's settings as a beacon group member, from its options (`beacon group new/join`, and
 * `table new/join` of a table whose nodes are its group, with the `--group-` prefix): where it
 * listens, the addresses the others dial (at most 4), its drand HTTP API and the URL others reach it at.
 */
export function memberSettings (o: MemberOptions, prefix = ''): { listen: string[], addrs: string[], http: { host: string, port: number }, url: string } {
  const opt = (name: string): string => `--${prefix}${name}`
  const listen = o.listen !== undefined && o.listen.length > 0 ? o.listen : [DEFAULT_GROUP_LISTEN]
  for (const l of listen) if (!/^\/(ip4|ip6)\/[^/\s]+\/tcp\/\d{1,5}$/.test(l)) throw new UsageError(`${opt('listen')} ${l}: must be a TCP multiaddr like /ip4/0.0.0.0/tcp/7500`)
  // --announce takes a multiaddr, or a bare host (IP or DNS name, as `create` takes) on the first listen port.
  const port0 = listen[0].split('/')[4]
  const asAddr = (a: string): string => a.startsWith('/') ? a : `${/^\d{1,3}(\.\d{1,3}){3}$/.test(a) ? '/ip4' : a.includes(':') ? '/ip6' : '/dns'}/${a}/tcp/${port0}`
  const addrs = o.announce !== undefined && o.announce.length > 0
    ? o.announce.map(asAddr)
    : listen.map(l => l.replace(/^\/ip4\/0\.0\.0\.0\//, '/ip4/127.0.0.1/').replace(/^\/ip6\/::\//, '/ip6/::1/'))
  for (const a of addrs) if (!/^\/(ip4|ip6|dns|dns4|dns6)\/[^/\s]+\/tcp\/\d{1,5}$/.test(a)) throw new UsageError(`${opt('announce')} ${a}: must be a TCP multiaddr like /ip4/192.0.2.7/tcp/7500 or /dns/host.example/tcp/7500`)
  // The final group carries every member's addresses in one message: each member gives at most 4.
  if (addrs.length > 4) throw new UsageError(`a member announces at most 4 addresses (${addrs.length} given, by ${opt('announce')} or ${opt('listen')})`)
  // With /p2p/<peer id> appended (the invites), an address stays within the 256 characters a join message allows.
  for (const a of addrs) if (a.length > 190) throw new UsageError(`${opt('announce')} ${a.slice(0, 40)}…: at most 190 characters`)
  // Reachable from other machines when libp2p is: the HTTP API binds where the first listen address does.
  const listenIp = listen[0].split('/')[2]
  const host = o.httpHost ?? (listenIp === '0.0.0.0' || listenIp === '::' ? listenIp : '127.0.0.1')
  const port = parseIntOption(o.httpPort, opt('http-port'), 1, 65535) ?? DEFAULT_GROUP_HTTP_PORT
  const announcedHost = addrs[0].split('/')[2]
  const url = (o.url ?? `http://${announcedHost.includes(':') ? `[${announcedHost}]` : announcedHost}:${port}`).replace(/\/$/, '')
  if (!/^https?:\/\/[^\s/]+(:\d{1,5})?$/.test(url) || url.length > 256) throw new UsageError(`${opt('url')} ${url.slice(0, 60)}: must be http(s)://host:port, at most 256 characters`)
  return { listen, addrs, http: { host, port }, url }
}
