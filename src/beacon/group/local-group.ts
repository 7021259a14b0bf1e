import { mkdir, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { loadOrCreateIdentity } from '../../net/identity.js'
import { freeLoopbackPort } from '../../net/ports.js'
import { defaultThreshold, reshareParams, type ChainInfo } from '../../core/beacon/index.js'
import { CoreInputError } from '../../core/errors.js'
import { groupConfigBlock, parseGroupConfig, type GroupConfig } from './config.js'

export interface LocalGroupInit {
  /** Each member's data directory is created under here (member1 … memberN). */
  root: string
  members: number
  threshold?: number
  /** Seconds between rounds (default 1). */
  period?: number
  id?: string
  /** The DKG starts this long from now (time for the members to start; default 2000 ms). */
  startInMs?: number
  /** Each DKG phase's deadline (default 5000 ms; a phase ends early once everything is in). */
  phaseMs?: number
  /** Round 1 is due this long after the DKG starts, rounded up to a whole second (default 1500 ms). */
  genesisAfterMs?: number
  now?: number
  /** Existing data directories to use (their identities), instead of ROOT/member1 … memberN. */
  dataDirs?: string[]
  /**
   * The address each member binds, libp2p and HTTP (default 127.0.0.1; 0.0.0.0 or :: for every
   * interface, so other machines can reach it).
   */
  listenHost?: string
  /**
   * The host (IP or DNS name) by which the others reach each member: one per member, or one for
   * all (default: listenHost, or 127.0.0.1 when it is a wildcard). It goes into every config's
   * `members[].addrs` and `members[].url`, the group's announce addresses.
   */
  announce?: string[]
  /** Member i (1…n) listens on libp2p port basePort + 2(i−1) and HTTP port basePort + 2(i−1) + 1; default free loopback ports. */
  basePort?: number
  /** Picks each free port when there is no basePort (default: a random free one from 20000 to 31999). */
  freePort?: () => Promise<number>
}

export interface LocalGroup {
  configs: GroupConfig[]
  /** Node config files (`ROOT/memberN.json`, a `group` block only) for `fairdeal node --config`. */
  files: string[]
  dataDirs: string[]
  peerIds: string[]
  /** Each member's drand API base URL (http://127.0.0.1:PORT). */
  urls: string[]
}

/**
 * Sets up a beacon group on loopback: an identity and a data directory per member, free ports for
 * libp2p and HTTP, and one node config per member that names everyone. Used by `fairdeal beacon
 * demo`, `fairdeal beacon group create` and the tests.
 */
export async function prepareLocalGroup (init: LocalGroupInit): Promise<LocalGroup> {
  const n = init.members
  const threshold = init.threshold ?? defaultThreshold(n)
  const period = init.period ?? 1
  const phaseMs = init.phaseMs ?? 5000
  const start = (init.now ?? Date.now()) + (init.startInMs ?? 2000)
  const genesisTime = Math.ceil((start + (init.genesisAfterMs ?? 1500)) / 1000)
  await mkdir(init.root, { recursive: true })
  const dataDirs: string[] = []
  const peerIds: string[] = []
  const listenHost = init.listenHost ?? '127.0.0.1'
  const wildcard = listenHost === '0.0.0.0' || listenHost === '::'
  const announce = init.announce ?? [wildcard ? '127.0.0.1' : listenHost]
  if (announce.length !== 1 && announce.length !== n) throw new CoreInputError(`give one announce host for all members or one per member (${n}), not ${announce.length}`)
  const hostOf = (i: number): string => announce.length === 1 ? announce[0] : announce[i]
  if (init.basePort !== undefined && (init.basePort < 1 || init.basePort + 2 * n - 1 > 65535)) throw new CoreInputError(`base port ${init.basePort}: member ports must fit between 1 and 65535`)
  const p2pPorts: number[] = []
  const httpPorts: number[] = []
  const freePort = init.freePort ?? freeLoopbackPort
  for (let i = 1; i <= n; i++) {
    const dir = init.dataDirs?.[i - 1] ?? join(init.root, `member${i}`)
    dataDirs.push(dir)
    peerIds.push((await loadOrCreateIdentity(dir)).peerId)
    p2pPorts.push(init.basePort !== undefined ? init.basePort + 2 * (i - 1) : await freePort())
    httpPorts.push(init.basePort !== undefined ? init.basePort + 2 * (i - 1) + 1 : await freePort())
  }
  const listens = p2pPorts.map(p => `${ipProtocol(listenHost)}/${listenHost}/tcp/${p}`)
  const announced = p2pPorts.map((p, i) => `${hostProtocol(hostOf(i))}/${hostOf(i)}/tcp/${p}`)
  const urls = httpPorts.map((p, i) => `http://${hostOf(i).includes(':') ? `[${hostOf(i)}]` : hostOf(i)}:${p}`)
  const configs: GroupConfig[] = []
  const files: string[] = []
  for (let i = 0; i < n; i++) {
    const block = groupConfigBlock({
      params: { id: init.id ?? 'fairdeal-demo-group', members: peerIds, threshold, period, genesisTime, dkg: { start, phaseMs } },
      addresses: new Map(peerIds.map((p, j) => [p, [announced[j]]])),
      urls: new Map(peerIds.map((p, j) => [p, urls[j]])),
      listen: [listens[i]],
      http: { host: listenHost, port: httpPorts[i] }
    })
    const file = join(init.root, `member${i + 1}.json`)
    await writeFile(file, JSON.stringify({ data: relative(init.root, dataDirs[i]), group: block }, null, 2) + '\n')
    files.push(file)
    configs.push(parseGroupConfig(block, file))
  }
  return { configs, files, dataDirs, peerIds, urls }
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/
const ipProtocol = (host: string): string => {
  if (IPV4.test(host)) return '/ip4'
  if (host.includes(':')) return '/ip6'
  throw new CoreInputError(`listen host ${host} must be an IP address (0.0.0.0 for every interface)`)
}
/** An announced host may be a DNS name (dialled as /dns/…). */
const hostProtocol = (host: string): string => {
  if (IPV4.test(host)) return '/ip4'
  if (host.includes(':')) return '/ip6'
  if (/^[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*$/.test(host)) return '/dns'
  throw new CoreInputError(`announce host ${JSON.stringify(host)} must be an IP address or a DNS name`)
}

export interface LocalReshare {
  /** One config per participant: the old members (in old order), then the newcomers. */
  configs: GroupConfig[]
  files: string[]
  dataDirs: string[]
  peerIds: string[]
  urls: string[]
}

/**
 * A reshare of a loopback group (prepareLocalGroup) to its members plus `newcomers` new ones
 * (members `keep` of the old group stay, in their order, default all), with threshold `threshold`:
 * every participant's node config, the old members' on their old ports (`ROOT/reshare-memberN.json`).
 * `old` is the group's outcome (its commitments and chain), as a member's transcript.json holds it.
 */
export async function prepareLocalReshare (init: {
  root: string
  group: LocalGroup
  old: { commitments: string[], chainInfo: ChainInfo }
  newcomers: number
  keep?: number[]
  threshold: number
  start: number
  phaseMs: number
  transition: number
  /** Picks the newcomers' free ports (default: a random free one from 20000 to 31999). */
  freePort?: () => Promise<number>
}): Promise<LocalReshare> {
  const g = init.group
  const oldParams = g.configs[0].params
  const dataDirs = [...g.dataDirs]
  const peerIds = [...g.peerIds]
  const urls = [...g.urls]
  const listens = g.configs.map(c => c.listen)
  const https = g.configs.map(c => c.http)
  const addrs = new Map(g.configs[0].addresses)
  const urlOf = new Map(g.configs[0].urls)
  const freePort = init.freePort ?? freeLoopbackPort
  for (let k = 1; k <= init.newcomers; k++) {
    const dir = join(init.root, `newcomer${k}`)
    const peer = (await loadOrCreateIdentity(dir)).peerId
    const p2p = await freePort()
    const http = await freePort()
    dataDirs.push(dir)
    peerIds.push(peer)
    urls.push(`http://127.0.0.1:${http}`)
    listens.push([`/ip4/127.0.0.1/tcp/${p2p}`])
    https.push({ host: '127.0.0.1', port: http })
    addrs.set(peer, [`/ip4/127.0.0.1/tcp/${p2p}`])
    urlOf.set(peer, `http://127.0.0.1:${http}`)
  }
  const keep = init.keep ?? oldParams.members.map((_, i) => i + 1)
  const members = [...keep.map(i => oldParams.members[i - 1]), ...peerIds.slice(oldParams.members.length)]
  const params = reshareParams({ params: oldParams, commitments: init.old.commitments, chainInfo: init.old.chainInfo }, {
    members, threshold: init.threshold, dkg: { start: init.start, phaseMs: init.phaseMs }, transition: init.transition
  })
  const configs: GroupConfig[] = []
  const files: string[] = []
  for (let i = 0; i < peerIds.length; i++) {
    const block = groupConfigBlock({ params, addresses: addrs, urls: urlOf, listen: listens[i], http: https[i] })
    const file = join(init.root, `reshare-member${i + 1}.json`)
    await writeFile(file, JSON.stringify({ data: relative(init.root, dataDirs[i]), group: block }, null, 2) + '\n')
    files.push(file)
    configs.push(parseGroupConfig(block, file))
  }
  return { configs, files, dataDirs, peerIds, urls }
}
