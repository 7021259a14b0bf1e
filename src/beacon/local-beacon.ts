import { createServer, type Server } from 'node:http'
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { AddressInfo, Socket } from 'node:net'
import {
  LOCAL_BEACON_TRUST, localBeaconSecretKey, localChainInfo, parseChainInfo, roundAt, secretKeyFromHex, signLocalRound,
  type BeaconEntry, type ChainInfo, type DrandBeaconConfig
} from '../core/beacon/index.js'
import { CoreInputError } from '../core/errors.js'
import { toHex } from '../core/bytes.js'
import { BoundedMap } from '../core/bounded-set.js'
import { systemClock, type Clock } from './clock.js'
import { drandV1Handler } from './http-api.js'

export interface LocalBeaconInit {
  /** Directory holding the key (local-beacon-key.json, mode 0600) and chain-info.json; without it the key lives in memory only. */
  dataDir?: string
  /** Seconds between rounds for a new beacon (default 3). A persisted beacon keeps its own; asking for another one is an error. */
  period?: number
  /** TCP port on 127.0.0.1 (default 0: any free port). */
  port?: number
  /** Decides which rounds are out; the system clock by default. */
  clock?: Clock
  /** Unix seconds of round 1 for a new beacon (default: now, rounded down). */
  genesisTime?: number
}

export interface LocalBeacon {
  /** Relay URL for clients: http://127.0.0.1:PORT/<chain hash>. */
  url: string
  info: ChainInfo
  /** Always LOCAL_BEACON_TRUST: shown wherever this beacon is used. */
  trust: string
  /** A table beacon config naming this beacon as its only relay. */
  config: DrandBeaconConfig
  close: () => Promise<void>
}

export const KEY_FILE = 'local-beacon-key.json'
export const INFO_FILE = 'chain-info.json'
export const TRUST_HEADER = 'x-fairdeal-beacon-trust'
const MAX_CACHED_ROUNDS = 1024

interface KeyFile { version: 1, secretKey: string, period: number, genesisTime: number }

/** Writes a file whole or not at all (a temporary file renamed over it), with the given mode. */
export async function writeAtomic (path: string, text: string, mode: number): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`
  await writeFile(tmp, text, { mode })
  await rename(tmp, path)
}

async function loadOrCreateKey (init: LocalBeaconInit, clock: Clock): Promise<{ secretKey: Uint8Array, period: number, genesisTime: number }> {
  const fresh = (): KeyFile => ({
    version: 1,
    secretKey: toHex(localBeaconSecretKey(randomBytes(48))),
    period: init.period ?? 3,
    genesisTime: init.genesisTime ?? Math.floor(clock.now() / 1000)
  })
  if (init.dataDir === undefined) {
    const key = fresh()
    return { secretKey: secretKeyFromHex(key.secretKey), period: key.period, genesisTime: key.genesisTime }
  }
  await mkdir(init.dataDir, { recursive: true, mode: 0o700 })
  const path = join(init.dataDir, KEY_FILE)
  let text: string | undefined
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  if (text === undefined) {
    const key = fresh()
    localChainInfo({ secretKey: secretKeyFromHex(key.secretKey), period: key.period, genesisTime: key.genesisTime }) // validates before writing
    await writeAtomic(path, JSON.stringify(key, null, 2) + '\n', 0o600)
    return { secretKey: secretKeyFromHex(key.secretKey), period: key.period, genesisTime: key.genesisTime }
  }
  let key: KeyFile
  try {
    key = JSON.parse(text) as KeyFile
  } catch {
    throw new CoreInputError(`${path} is not JSON`)
  }
  if (key?.version !== 1 || typeof key.secretKey !== 'string' || !Number.isSafeInteger(key.period) || !Number.isSafeInteger(key.genesisTime)) {
    throw new CoreInputError(`${path} is not a fairdeal local beacon key (version 1)`)
  }
  if (init.period !== undefined && init.period !== key.period) {
    throw new CoreInputError(`the beacon in ${init.dataDir} has a period of ${key.period} s; a chain cannot change its period (use another directory for ${init.period} s)`)
  }
  return { secretKey: secretKeyFromHex(key.secretKey), period: key.period, genesisTime: key.genesisTime }
}

/**
 * A drand-compatible beacon for offline tables and tests: its own BLS12-381 key, quicknet's scheme
 * (so the real drand-client verifies it), the v1 HTTP API on 127.0.0.1 only, 404 for future
 * rounds. Its rounds are only as unpredictable as its operator is honest: it is labelled so.
 */
export async function startLocalBeacon (init: LocalBeaconInit = {}): Promise<LocalBeacon> {
  const clock = init.clock ?? systemClock
  const { secretKey, period, genesisTime } = await loadOrCreateKey(init, clock)
  const info = parseChainInfo(localChainInfo({ secretKey, period, genesisTime }))
  if (init.dataDir !== undefined) await writeAtomic(join(init.dataDir, INFO_FILE), JSON.stringify(info, null, 2) + '\n', 0o644)

  const cache = new BoundedMap<number, BeaconEntry>(MAX_CACHED_ROUNDS)
  const entry = (round: number): BeaconEntry => {
    let e = cache.get(round)
    if (e === undefined) {
      e = signLocalRound(secretKey, round)
      cache.set(round, e)
    }
    return e
  }
  const latestRound = (): number => {
    const now = clock.now()
    return now < genesisTime * 1000 ? 0 : roundAt(info, now)
  }
  const handler = drandV1Handler({ info, latestRound, entry, headers: { [TRUST_HEADER]: LOCAL_BEACON_TRUST } })
  const server: Server = createServer((req, res) => {
    try {
      handler(req, res)
    } catch {
      if (!res.headersSent) res.writeHead(500)
      res.end()
    }
  })
  const sockets = new Set<Socket>()
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)) })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(init.port ?? 0, '127.0.0.1', () => { server.off('error', reject); resolve() })
  })
  const { port } = server.address() as AddressInfo
  const url = `http://127.0.0.1:${port}/${info.hash}`
  return {
    url,
    info,
    trust: LOCAL_BEACON_TRUST,
    config: { kind: 'drand', name: 'local', chain: info, relays: [url], trust: LOCAL_BEACON_TRUST },
    close: async () => {
      const closed = new Promise<void>(resolve => server.close(() => resolve()))
      for (const s of sockets) s.destroy()
      await closed
    }
  }
}
