// A 2/2 beacon group on loopback, made by its DKG on a stepped clock and then stopped: what the
// reshare tests start from (the old group), with each member's share and the public transcript.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { prepareLocalGroup, type LocalGroup } from '../../src/beacon/group/local-group.js'
import { groupDir, startGroupNode } from '../../src/beacon/group/node.js'
import { SHARE_FILE, TRANSCRIPT_FILE } from '../../src/beacon/group/member.js'
import type { ChainInfo, DkgResult } from '../../src/core/beacon/index.js'
import type { steppedClock } from './beacon-group.js'
import { reservePort } from './table-nodes.js'

export interface GroupOfTwo {
  group: LocalGroup
  /** Each member's group directory (its share, transcript and run state). */
  dirs: string[]
  chain: ChainInfo
  /** Each member's secret share (hex), as its share.json holds it. */
  shares: string[]
  /** The DKG's public result, as member 1's transcript.json holds it. */
  old: DkgResult
}

export async function groupOfTwo (root: string, clock: ReturnType<typeof steppedClock>, logger: Logger): Promise<GroupOfTwo> {
  const group = await prepareLocalGroup({ root, freePort: reservePort, members: 2, threshold: 2, period: 1, now: clock.now(), startInMs: 1000, phaseMs: 60_000, genesisAfterMs: 1000 })
  const dirs = group.dataDirs.map(d => groupDir(d, group.configs[0].params.id))
  const members = await Promise.all([0, 1].map(async i => await startGroupNode({ config: group.configs[i], dataDir: group.dataDirs[i], logger, clock, tickMs: 20 })))
  clock.set(group.configs[0].params.dkg.start)
  const chain = await members[0].ready
  await members[1].ready
  for (const m of members) await m.stop()
  const shares = await Promise.all(dirs.map(async d => JSON.parse(await readFile(join(d, SHARE_FILE), 'utf8')).share as string))
  const old = JSON.parse(await readFile(join(dirs[0], TRANSCRIPT_FILE), 'utf8')) as DkgResult
  return { group, dirs, chain, shares, old }
}
