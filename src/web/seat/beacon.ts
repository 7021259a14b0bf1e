import { parseBeaconConfig } from '../../core/beacon/index.js'
import type { BeaconBindingConfig } from '../../protocol/types.js'
import quicknet from '../../../config/beacons/quicknet.json'
import mainnet from '../../../config/beacons/default.json'

/** The node config's default margin (src/daemon/config.ts): the bound round follows the deadline by this. */
const DEFAULT_MARGIN_MS = 1_000

/** The presets a table may name (config/beacons, bundled: the page reads no file). */
const PRESETS: Record<string, unknown> = { quicknet, default: mainnet, mainnet }

/**
 * The beacon a table binds, as the seat machine takes it: null for 'none', else its chain and
 * margin, from a preset the page bundles or the config the table block carries. The rounds come in
 * the dealer's documents and the machine checks them offline against this chain.
 */
export function beaconBinding (beacon: string | Record<string, unknown>, marginMs: number | undefined): BeaconBindingConfig | null {
  if (beacon === 'none') return null
  // A table whose nodes are also its beacon group: every seat is a group member, which a page cannot be.
  if (typeof beacon === 'object' && 'group' in beacon) throw new Error(`this table's nodes are also its beacon group ${String(beacon.group)}: every seat runs a node that is a member, which this page cannot be; join it with 'fairdeal table join LINK --data DIR --group-listen ADDR'`)
  const value = typeof beacon === 'string' ? PRESETS[beacon] : beacon
  if (value === undefined) throw new Error(`this table names the beacon ${JSON.stringify(beacon)}, which the seat page does not know: join it with a seat node`)
  const config = parseBeaconConfig(value, 'the table\'s beacon')
  return config.kind === 'drand' ? { chain: config.chain, marginMs: marginMs ?? DEFAULT_MARGIN_MS } : null
}
