// A loopback drand v1 HTTP server over recorded entries ({info, entries}, the shape of
// test/fixtures/drand/*.json), with switchable faults so tests can see how clients behave when a
// relay is down, slow, serving garbage, serving tampered entries or serving another chain.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { sha256Hex, fromHex, toHex } from '../../src/core/bytes.js'
import type { BeaconEntry, ChainInfo } from '../../src/core/beacon/index.js'
import { drandV1Handler } from '../../src/beacon/http-api.js'

export interface DrandFixture { info: ChainInfo, entries: BeaconEntry[] }

export type FaultMode =
  | 'ok'
  | 'down' // 503 to everything
  | 'slow' // every response delayed by delayMs
  | 'garbage' // /info is fine, /public/* answers 200 with a body that is not a drand entry
  | 'tampered' // entries with one signature byte flipped (randomness recomputed, so only the BLS check catches it)
  | 'wrong-round' // asked for round r, serves the entry of another recorded round

export interface DrandServerOptions {
  mode?: FaultMode
  /** Delay of 'slow' mode (default 30 000 ms; close() cuts it short). */
  delayMs?: number
  /** Rounds above this answer 404 as not yet produced (default: every recorded round is out). */
  publishedUpTo?: number
  /** Serve this info instead of the fixture's (a relay of another chain). */
  info?: ChainInfo
}

export interface DrandServer {
  /** Relay URL, with the chain hash as drand-client expects for non-default chains. */
  url: string
  /** http://127.0.0.1:PORT */
  origin: string
  /** Every request path, in order. */
  requests: string[]
  setMode: (mode: FaultMode) => void
  setPublishedUpTo: (round: number | undefined) => void
  close: () => Promise<void>
}

const FIXTURE_DIR = fileURLToPath(new URL('../fixtures/drand/', import.meta.url))

export const FIXTURE_CHAINS = ['default', 'quicknet', 'testnet-unchained-3s', 'fastnet', 'testnet-g', 'evmnet'] as const

export function loadDrandFixture (name: string): DrandFixture {
  return JSON.parse(readFileSync(`${FIXTURE_DIR}${name}.json`, 'utf8')) as DrandFixture
}

/** The entry with one signature byte changed and randomness recomputed to match. */
export function tamperEntry (entry: BeaconEntry, byteIndex = 10): BeaconEntry {
  const sig = fromHex(entry.signature, 'signature')
  sig[byteIndex] ^= 0x01
  return { ...entry, signature: toHex(sig), randomness: sha256Hex(sig) }
}

export async function startDrandServer (fixture: DrandFixture, options: DrandServerOptions = {}): Promise<DrandServer> {
  let mode: FaultMode = options.mode ?? 'ok'
  let publishedUpTo = options.publishedUpTo
  const info = options.info ?? fixture.info
  const byRound = new Map(fixture.entries.map(e => [e.round, e]))
  const requests: string[] = []
  const timers = new Set<NodeJS.Timeout>()

  const handler = drandV1Handler({
    info,
    latestRound: () => publishedUpTo ?? Math.max(0, ...byRound.keys()),
    entry: (round) => {
      const e = byRound.get(round)
      if (e === undefined) return undefined
      if (mode === 'tampered') return tamperEntry(e)
      if (mode === 'wrong-round') return fixture.entries.find(x => x.round !== round) ?? e
      return e
    }
  })

  const respond = (req: IncomingMessage, res: ServerResponse): void => {
    if (mode === 'down') {
      res.writeHead(503, { 'content-type': 'text/plain' })
      res.end('service unavailable')
      return
    }
    if (mode === 'garbage' && (req.url ?? '').includes('/public/')) {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{"round": "soon", "randomness": 42}')
      return
    }
    handler(req, res)
  }

  const server = createServer((req, res) => {
    requests.push(req.url ?? '')
    if (mode === 'slow') {
      const t = setTimeout(() => { timers.delete(t); respond(req, res) }, options.delayMs ?? 30_000)
      timers.add(t)
      return
    }
    respond(req, res)
  })
  const sockets = new Set<Socket>()
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)) })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const origin = `http://127.0.0.1:${port}`
  return {
    url: `${origin}/${info.hash}`,
    origin,
    requests,
    setMode: (m) => { mode = m },
    setPublishedUpTo: (r) => { publishedUpTo = r },
    close: async () => {
      for (const t of timers) clearTimeout(t)
      timers.clear()
      const closed = new Promise<void>(resolve => server.close(() => resolve()))
      for (const s of sockets) s.destroy()
      await closed
    }
  }
}

/** A loopback URL nothing listens on (a relay that refuses connections). */
export async function closedRelayUrl (chainHash: string): Promise<string> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>(resolve => server.close(() => resolve()))
  return `http://127.0.0.1:${port}/${chainHash}`
}
