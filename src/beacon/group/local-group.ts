import { mkdir, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { loadOrCreateIdentity } from '../../net/identity.js'
import { freeLoopbackPort } from '../../native/loopback.js'
import { defaultThreshold } from '../../core/beacon/index.js'
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
  const listens: string[] = []
  const httpPorts: number[] = []
  for (let i = 1; i <= n; i++) {
    const dir = init.dataDirs?.[i - 1] ?? join(init.root, `member${i}`)
    dataDirs.push(dir)
    peerIds.push((await loadOrCreateIdentity(dir)).peerId)
    listens.push(`/ip4/127.0.0.1/tcp/${await freeLoopbackPort()}`)
    httpPorts.push(await freeLoopbackPort())
  }
  const urls = httpPorts.map(p => `http://127.0.0.1:${p}`)
  const configs: GroupConfig[] = []
  const files: string[] = []
  for (let i = 0; i < n; i++) {
    const block = groupConfigBlock({
      params: { id: init.id ?? 'fairdeal-demo-group', members: peerIds, threshold, period, genesisTime, dkg: { start, phaseMs } },
      addresses: new Map(peerIds.map((p, j) => [p, [listens[j]]])),
      urls: new Map(peerIds.map((p, j) => [p, urls[j]])),
      listen: [listens[i]],
      http: { host: '127.0.0.1', port: httpPorts[i] }
    })
    const file = join(init.root, `member${i + 1}.json`)
    await writeFile(file, JSON.stringify({ data: relative(init.root, dataDirs[i]), group: block }, null, 2) + '\n')
    files.push(file)
    configs.push(parseGroupConfig(block, file))
  }
  return { configs, files, dataDirs, peerIds, urls }
}
