import type { Logger } from 'pino'
import type { ChainInfo, DrandBeaconConfig } from '../../core/beacon/index.js'
import { groupBeaconConfig } from './config.js'
import { prepareLocalGroup, type LocalGroup } from './local-group.js'
import { startGroupNode } from './node.js'

// Kept here too, where they were first exported.
export { groupBeaconConfig, groupBeaconTrust } from './config.js'

export interface LocalGroupBeacon {
  group: LocalGroup
  chain: ChainInfo
  /** A table beacon config: the group's chain, its members' URLs as relays. */
  config: DrandBeaconConfig
  /** Stops one member (0-based, the group's member index − 1): a node going down with its table node. */
  stopMember: (i: number) => Promise<void>
  close: () => Promise<void>
}

/**
 * Runs a beacon group in this process on loopback (`fairdeal demo --beacon group`): members with
 * the given data directories (a table's nodes: the same identities), the DKG, and resolves once
 * every member serves a first round.
 */
export async function startLocalGroupBeacon (init: { root: string, dataDirs: string[], threshold?: number, period?: number, logger: Logger }): Promise<LocalGroupBeacon> {
  const group = await prepareLocalGroup({ root: init.root, members: init.dataDirs.length, dataDirs: init.dataDirs, threshold: init.threshold, period: init.period ?? 1, startInMs: 2000, phaseMs: 20_000 })
  const members: Array<Awaited<ReturnType<typeof startGroupNode>>> = []
  const close = async (): Promise<void> => { for (const m of members) await m.stop().catch(() => {}) }
  try {
    // All at once: a member that is not up by the deal phase's deadline is left out of the DKG.
    const started = await Promise.allSettled(group.configs.map(async (config, i) => await startGroupNode({ config, dataDir: group.dataDirs[i], logger: init.logger.child({ member: i + 1 }) })))
    for (const s of started) if (s.status === 'fulfilled') members.push(s.value)
    const failed = started.find(s => s.status === 'rejected')
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason
    const chain = (await Promise.all(members.map(async m => await m.ready)))[0]
    await Promise.all(members.map(async m => await new Promise<void>(resolve => {
      if (m.status().latestRound > 0) { resolve(); return }
      m.onRound(() => { resolve() })
    })))
    const stopMember = async (i: number): Promise<void> => {
      const m = members.find(x => x.index === i + 1)
      if (m === undefined) return
      members.splice(members.indexOf(m), 1)
      await m.stop()
    }
    return { group, chain, config: groupBeaconConfig(chain, group.configs[0].params, group.urls), stopMember, close }
  } catch (err) {
    await close()
    throw err
  }
}
