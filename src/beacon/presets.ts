import { readdir, access } from 'node:fs/promises'
import { BoundedReadError, readBounded } from '../store/bounded-read.js'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseBeaconConfig, type BeaconConfig } from '../core/beacon/index.js'
import { CoreInputError } from '../core/errors.js'

/** Beacon config files larger than this are refused before parsing. */
const MAX_CONFIG_BYTES = 64 * 1024
const PRESET_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/
/** Friendly names for presets whose file is named after drand's beacon ID. */
const ALIASES: Record<string, string> = { mainnet: 'default' }

let presetDir: Promise<string> | undefined

/** config/beacons/ of this package, found from this module whether it runs from src/ or dist/src/. */
export async function presetDirectory (): Promise<string> {
  presetDir ??= (async () => {
    let dir = dirname(fileURLToPath(import.meta.url))
    for (let i = 0; i < 6; i++) {
      const candidate = join(dir, 'config', 'beacons')
      try { await access(candidate); return candidate } catch {}
      dir = dirname(dir)
    }
    throw new Error('config/beacons/ not found above ' + fileURLToPath(import.meta.url))
  })()
  return await presetDir
}

export async function listBeaconPresets (): Promise<string[]> {
  const files = await readdir(await presetDirectory())
  return files.filter(f => f.endsWith('.json')).map(f => f.slice(0, -5)).sort()
}

export async function readJsonFile (path: string, what: string): Promise<unknown> {
  let text: string
  try {
    text = (await readBounded(path, MAX_CONFIG_BYTES)).toString('utf8')
  } catch (err) {
    if (err instanceof BoundedReadError && err.tooLarge) throw new CoreInputError(`${what} ${path} is larger than ${MAX_CONFIG_BYTES} bytes`)
    throw new CoreInputError(`cannot read ${what} ${path}: ${(err as Error).message}`)
  }
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new CoreInputError(`${what} ${path} is not valid JSON: ${(err as Error).message}`)
  }
}

/** A shipped preset by name (`quicknet`, `default` a.k.a. `mainnet`). */
export async function loadBeaconPreset (name: string): Promise<BeaconConfig> {
  const file = ALIASES[name] ?? name
  const known = await listBeaconPresets()
  if (!PRESET_NAME.test(file) || !known.includes(file)) {
    throw new CoreInputError(`unknown beacon preset ${JSON.stringify(name)} (known: ${[...known, ...Object.keys(ALIASES)].sort().join(', ')})`)
  }
  const path = join(await presetDirectory(), file + '.json')
  return parseBeaconConfig(await readJsonFile(path, 'beacon preset'), `beacon preset ${file}`)
}

/**
 * A table's beacon from what a user typed: `none`, a preset name, or a JSON file holding either a
 * beacon config (`{name?, trust?, info, relays}`) or a bare chain info (then `relays` is required).
 */
export async function resolveBeaconConfig (spec: string, options: { relays?: string[] } = {}): Promise<BeaconConfig> {
  if (spec === 'none') return { kind: 'none' }
  if (!spec.includes('/') && !spec.endsWith('.json')) return await loadBeaconPreset(spec)
  const value = await readJsonFile(spec, 'beacon config')
  const isBareInfo = typeof value === 'object' && value !== null && 'schemeID' in value
  if (isBareInfo) {
    if (options.relays === undefined || options.relays.length === 0) {
      throw new CoreInputError(`${spec} is a bare chain info: give the relay URLs to fetch it from`)
    }
    return parseBeaconConfig({ info: value, relays: options.relays }, `beacon config ${spec}`)
  }
  const config = parseBeaconConfig(value, `beacon config ${spec}`)
  if (options.relays !== undefined && options.relays.length > 0 && config.kind === 'drand') {
    return parseBeaconConfig({ name: config.name, trust: config.trust, info: config.chain, relays: options.relays }, `beacon config ${spec}`)
  }
  return config
}
