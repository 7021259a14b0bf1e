import * as z from 'zod'
import { CoreInputError } from '../../core/errors.js'
import { defaultThreshold, parseGroupParams, type ChainInfo, type DrandBeaconConfig, type GroupParams } from '../../core/beacon/index.js'

// The `group` block of a node config: a beacon group this node is a member of.
//
//   "group": {
//     "id": "my-group",
//     "members": [{ "peer": "12D3KooW…", "addrs": ["/ip4/127.0.0.1/tcp/7500"], "url": "http://127.0.0.1:8081" }, …],
//     "threshold": 3,                      // default floor(n/2) + 1
//     "period": 3,                         // whole seconds
//     "genesisTime": 1767225600,           // Unix seconds of round 1
//     "dkg": { "start": 1767225540000, "phaseMs": 10000 },
//     "listen": ["/ip4/127.0.0.1/tcp/7500"],
//     "http": { "host": "127.0.0.1", "port": 8081 }
//   }
//
// The members' order gives their indices (1…n) and is part of the group: every member's config
// must list them identically (the DKG's session id hashes them).

const peerId = z.string().regex(/^12D3KooW[1-9A-HJ-NP-Za-km-z]{44}$/, 'must be an Ed25519 libp2p peer id (12D3KooW…)')
const listenAddr = z.string().regex(/^\/(ip4|ip6)\/[^/\s]+\/tcp\/\d{1,5}(\/ws)?$/, 'must be a listen multiaddr like /ip4/127.0.0.1/tcp/7500')
const multiaddr = z.string().regex(/^\/(ip4|ip6|dns|dns4|dns6)\/[^/\s]+\/tcp\/\d{1,5}(\/ws)?(\/p2p\/[1-9A-HJ-NP-Za-km-z]+)?$/, 'must be a multiaddr like /ip4/127.0.0.1/tcp/7500')
const httpUrl = z.string().regex(/^https?:\/\/[^\s/]+(:\d{1,5})?\/?$/, 'must be an http(s)://host:port URL (the member\'s drand API, without the chain hash)')

const memberSchema = z.object({ peer: peerId, addrs: z.array(multiaddr).max(8).default([]), url: httpUrl.optional() }).strict()

const groupSchema = z.object({
  id: z.string(),
  members: z.array(memberSchema).min(1).max(64),
  threshold: z.number().int().optional(),
  period: z.number().int(),
  genesisTime: z.number().int(),
  dkg: z.object({ start: z.number().int(), phaseMs: z.number().int().default(10_000) }).strict(),
  listen: z.array(listenAddr).min(1).max(8),
  http: z.object({ host: z.string().default('127.0.0.1'), port: z.number().int().min(0).max(65535).default(0) }).strict().default({ host: '127.0.0.1', port: 0 }),
  // A round the group missed is made again at most once per this many ms (default: half the period).
  catchupMs: z.number().int().min(0).max(3_600_000).optional(),
  // A reshare of the group (docs/beacon-group.md "Resharing"): the old group, dealing to `members`.
  // Its fields are checked by parseGroupParams (parseReshareFrom); the old members' addresses here.
  reshare: z.object({
    session: z.string(),
    members: z.array(memberSchema).min(1).max(64),
    threshold: z.number().int(),
    commitments: z.array(z.string()).max(64),
    chain: z.record(z.string(), z.unknown()),
    transition: z.number().int()
  }).strict().optional()
}).strict()

export interface GroupConfig {
  params: GroupParams
  /** peer id → multiaddrs, for every member. */
  addresses: Map<string, string[]>
  /** peer id → the member's drand API base URL, where known (a table can use them as relays). */
  urls: Map<string, string>
  listen: string[]
  http: { host: string, port: number }
  /** The catch-up period for rounds the group missed (docs/beacon-group.md), if set. */
  catchupMs?: number
}

/** Validates a `group` block; a wrong field is a CoreInputError naming it. */
export function parseGroupConfig (value: unknown, what = 'group'): GroupConfig {
  const parsed = groupSchema.safeParse(value)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new CoreInputError(`${what}: field ${issue.path.join('.') || '(root)'}: ${issue.message}`)
  }
  const g = parsed.data
  const params = parseGroupParams({
    id: g.id,
    members: g.members.map(m => m.peer),
    threshold: g.threshold ?? defaultThreshold(g.members.length),
    period: g.period,
    genesisTime: g.genesisTime,
    dkg: g.dkg,
    ...(g.reshare !== undefined ? { reshare: { ...g.reshare, members: g.reshare.members.map(m => m.peer) } } : {})
  }, what)
  // Every participant's addresses and URL: the old members' from the reshare block, the members' after (theirs win).
  const all = [...(g.reshare?.members ?? []), ...g.members]
  if (!/^(127\.\d+\.\d+\.\d+|::1|localhost|0\.0\.0\.0|::|[0-9a-f:.]+)$/i.test(g.http.host)) {
    throw new CoreInputError(`${what}: field http.host must be an IP address (127.0.0.1 by default)`)
  }
  return {
    params,
    addresses: new Map(all.map(m => [m.peer, m.addrs])),
    urls: new Map(all.filter(m => m.url !== undefined).map(m => [m.peer, (m.url as string).replace(/\/$/, '')])),
    listen: g.listen,
    http: g.http,
    ...(g.catchupMs !== undefined ? { catchupMs: g.catchupMs } : {})
  }
}

/** The JSON block for a config file, from its parts (the inverse of parseGroupConfig). */
export function groupConfigBlock (c: { params: GroupParams, addresses: ReadonlyMap<string, string[]>, urls: ReadonlyMap<string, string>, listen: string[], http: { host: string, port: number }, catchupMs?: number }): Record<string, unknown> {
  const member = (peer: string): Record<string, unknown> => ({ peer, addrs: c.addresses.get(peer) ?? [], ...(c.urls.has(peer) ? { url: c.urls.get(peer) } : {}) })
  const reshare = c.params.reshare
  return {
    id: c.params.id,
    members: c.params.members.map(member),
    threshold: c.params.threshold,
    period: c.params.period,
    genesisTime: c.params.genesisTime,
    dkg: c.params.dkg,
    listen: c.listen,
    http: c.http,
    ...(c.catchupMs !== undefined ? { catchupMs: c.catchupMs } : {}),
    ...(reshare !== undefined ? { reshare: { ...reshare, members: reshare.members.map(member) } } : {})
  }
}

/** What a group's rounds rest on, shown wherever the group is used as a table's beacon. */
export function groupBeaconTrust (params: Pick<GroupParams, 'id' | 'threshold' | 'members'>): string {
  return `beacon group ${params.id}: unpredictable unless ${params.threshold} of its ${params.members.length} members collude`
}

/** A table beacon config naming a group's chain, with every member's HTTP API as a relay. */
export function groupBeaconConfig (chain: ChainInfo, params: Pick<GroupParams, 'id' | 'threshold' | 'members'>, urls: string[]): DrandBeaconConfig {
  return { kind: 'drand', name: params.id, chain, relays: urls.map(u => `${u}/${chain.hash}`), trust: groupBeaconTrust(params) }
}
