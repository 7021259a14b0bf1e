import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { loadOrCreateIdentity } from '../net/identity.js'
import { freeLoopbackPort } from '../net/ports.js'

// Where they were before src/net/ports.ts: callers that set up tables keep finding them here.
export { freeLoopbackPort, isPortFree } from '../net/ports.js'
import { ROBOT } from '../core/hand/messages.js'
import { parseNodeConfig, type NodeConfig } from './config.js'
import type { Timeouts } from '../protocol/types.js'

export interface LocalTableInit {
  /** Each node's data directory is created under here (node0 = the dealer). */
  root: string
  game: string
  scheme: string
  /** Number of seats; seat 0 is held by the dealer node. */
  seats: number
  robots?: number[]
  transport?: 'tcp' | 'ws'
  /** A table beacon config value: 'none', a preset name or {info, relays} (see config.ts). */
  beacon?: unknown
  beaconMarginMs?: number
  timeouts?: Partial<Timeouts>
  tableId?: string
  logAccess?: 'members' | 'anyone'
  /** table.timelock: 'off' (default) or the rule for hands the seats finish ('replay', 'void', 'open'). */
  timelock?: 'off' | 'replay' | 'void' | 'open'
  /** table.timelockHandMs: a time-locked blind table's planned length of a hand (docs/dealer-blind.md §14). */
  timelockHandMs?: number
  /**
   * Seats as behind home routers: every node but the dealer's listens nowhere and nobody has its
   * address; each dials the dealer and is reached on that connection (docs/network.md).
   */
  seatsListenNowhere?: boolean
  /** Picks each node's listen port (default: a random free one from 20000 to 31999). */
  freePort?: () => Promise<number>
}

export interface LocalTable {
  /** Node configs, dealer (also seat 0) first, then one per other human seat. */
  configs: NodeConfig[]
  /** The same configs written as files (`ROOT/nodeN.json`), for `fairdeal node --config`. */
  files: string[]
  names: string[]
  /** Each node's peer id, in the same order. */
  peerIds: string[]
}

/**
 * Sets up a table on loopback: one identity and data directory per node, free ports, and configs
 * that name every member's address. The demo and the tests use it; each node can then run
 * in-process (Daemon.start) or as its own OS process (`fairdeal node --config ROOT/nodeN.json`).
 */
export async function prepareLocalTable (init: LocalTableInit): Promise<LocalTable> {
  const robots = new Set(init.robots ?? [])
  if (robots.has(0)) throw new Error('seat 0 is the dealer node\'s own seat and cannot be a robot')
  const nodeSeats = [...Array(init.seats).keys()].filter(s => !robots.has(s))
  const names = nodeSeats.map((_, i) => `node${i}`)
  const ids: Array<Awaited<ReturnType<typeof loadOrCreateIdentity>>> = []
  for (const name of names) ids.push(await loadOrCreateIdentity(join(init.root, name)))
  const transport = init.transport ?? 'tcp'
  const listens: string[] = []
  for (let i = 0; i < names.length; i++) {
    if (i > 0 && init.seatsListenNowhere === true) { listens.push(''); continue }
    const port = await (init.freePort ?? freeLoopbackPort)()
    listens.push(transport === 'ws' ? `/ip4/127.0.0.1/tcp/${port}/ws` : `/ip4/127.0.0.1/tcp/${port}`)
  }
  const seatsList = [...Array(init.seats).keys()].map(s => robots.has(s) ? ROBOT : ids[nodeSeats.indexOf(s)].peerId)
  const peers = Object.fromEntries(ids.flatMap((id, i) => listens[i] === '' ? [] : [[id.peerId, [listens[i]]]]))
  const configs: NodeConfig[] = []
  const files: string[] = []
  await mkdir(init.root, { recursive: true })
  for (let i = 0; i < names.length; i++) {
    const raw = {
      data: names[i],
      listen: listens[i] === '' ? [] : [listens[i]],
      log: { access: init.logAccess ?? 'members' },
      table: {
        id: init.tableId ?? 'demo-table',
        game: init.game,
        scheme: init.scheme,
        dealer: ids[0].peerId,
        seats: seatsList,
        peers: Object.fromEntries(Object.entries(peers).filter(([p]) => p !== ids[i].peerId)),
        timeouts: init.timeouts,
        beacon: init.beacon ?? 'none',
        beaconMarginMs: init.beaconMarginMs,
        timelock: init.timelock,
        ...(init.timelockHandMs === undefined ? {} : { timelockHandMs: init.timelockHandMs })
      }
    }
    const file = join(init.root, `${names[i]}.json`)
    await writeFile(file, JSON.stringify(raw, null, 2) + '\n')
    files.push(file)
    configs.push(await parseNodeConfig(raw, file))
  }
  return { configs, files, names, peerIds: ids.map(id => id.peerId) }
}
