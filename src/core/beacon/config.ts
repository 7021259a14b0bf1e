import { CoreInputError } from '../errors.js'
import { isDefaultBeaconId, parseChainInfo, type ChainInfo } from './chain-info.js'

/** A table's beacon: none, or a drand chain with the relays to fetch it from. */
export type BeaconConfig = NoBeacon | DrandBeaconConfig

export interface NoBeacon { kind: 'none' }

export interface DrandBeaconConfig {
  kind: 'drand'
  /** Preset name or a free label (shown to users). */
  name: string
  chain: ChainInfo
  /** Base URLs of v1 HTTP relays, tried in order; each ends in /<chain hash> unless the chain is drand's default one. */
  relays: string[]
  /** Who one must trust for the rounds to be unpredictable (e.g. "League of Entropy", or a local beacon's label). */
  trust: string
}

export const MAX_RELAYS = 8
const MAX_URL_LENGTH = 512
// The core has no URL class (it stays free of DOM and Node typings); this is the subset we accept.
const RELAY_URL = /^https?:\/\/[A-Za-z0-9.\-[\]:]+(\/[A-Za-z0-9._~%!$&'()*+,;=:@\-/]*)?$/

function relayUrl (value: unknown, chain: ChainInfo, what: string): string {
  if (typeof value !== 'string' || value.length > MAX_URL_LENGTH || !RELAY_URL.test(value)) {
    throw new CoreInputError(`${what}: relay must be an http(s) URL without query or fragment, got ${JSON.stringify(String(value).slice(0, 80))}`)
  }
  const url = value.replace(/\/+$/, '')
  // drand-client never appends the chain hash, so a relay URL without it silently serves the default chain.
  if (!isDefaultBeaconId(chain.metadata.beaconID) && !url.endsWith('/' + chain.hash)) {
    throw new CoreInputError(`${what}: relay ${url} must end in /${chain.hash} (the chain hash of ${chain.metadata.beaconID})`)
  }
  return url
}

/**
 * Validates a beacon config: `{"kind": "none"}`, or `{name?, trust?, info, relays}` where `info`
 * is the chain's `/info` JSON (presets under config/beacons/ have this shape).
 */
export function parseBeaconConfig (value: unknown, what = 'beacon config'): BeaconConfig {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CoreInputError(`${what} must be a JSON object`)
  const obj = value as Record<string, unknown>
  if (obj.kind === 'none') return { kind: 'none' }
  if (obj.kind !== undefined && obj.kind !== 'drand') throw new CoreInputError(`${what}: kind must be "none" or "drand", got ${JSON.stringify(obj.kind)}`)
  const chain = parseChainInfo(obj.info, `${what}: info`)
  if (!Array.isArray(obj.relays) || obj.relays.length === 0 || obj.relays.length > MAX_RELAYS) {
    throw new CoreInputError(`${what}: relays must be a list of 1 to ${MAX_RELAYS} URLs`)
  }
  const relays = obj.relays.map(r => relayUrl(r, chain, what))
  const name = obj.name === undefined ? chain.metadata.beaconID : obj.name
  const trust = obj.trust === undefined ? 'unspecified' : obj.trust
  if (typeof name !== 'string' || name.length === 0 || name.length > 64) throw new CoreInputError(`${what}: name must be a string of 1 to 64 characters`)
  if (typeof trust !== 'string' || trust.length === 0 || trust.length > 200) throw new CoreInputError(`${what}: trust must be a string of 1 to 200 characters`)
  return { kind: 'drand', name, chain, relays, trust }
}

/** The JSON form of a config (the inverse of parseBeaconConfig). */
export function beaconConfigJson (config: BeaconConfig): Record<string, unknown> {
  if (config.kind === 'none') return { kind: 'none' }
  return { kind: 'drand', name: config.name, trust: config.trust, info: config.chain, relays: config.relays }
}
