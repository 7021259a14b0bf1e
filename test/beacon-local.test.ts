import { afterEach, describe, expect, it } from 'vitest'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fetchBeacon, fetchBeaconByTime, HttpCachingChain, HttpChainClient } from 'drand-client'
import { createBeaconClient, KEY_FILE, INFO_FILE, LOCAL_BEACON_TRUST, loadBeaconPreset, manualClock, resolveBeaconConfig, startLocalBeacon, TRUST_HEADER, type LocalBeacon } from '../src/beacon/index.js'
import { parseChainInfo, roundTime, verifyBeaconEntry } from '../src/core/beacon/index.js'
import { CoreInputError } from '../src/core/errors.js'

const cleanup: Array<() => Promise<void>> = []
afterEach(async () => { for (const f of cleanup.splice(0).reverse()) await f() })

async function tempDir (): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fairdeal-beacon-'))
  cleanup.push(async () => await rm(dir, { recursive: true, force: true }))
  return dir
}

async function start (init: Parameters<typeof startLocalBeacon>[0]): Promise<LocalBeacon> {
  const b = await startLocalBeacon(init)
  cleanup.push(b.close)
  return b
}

function stockClient (b: LocalBeacon): HttpChainClient {
  const opts = { disableBeaconVerification: false, noCache: false, chainVerificationParams: { chainHash: b.info.hash, publicKey: b.info.public_key } }
  return new HttpChainClient(new HttpCachingChain(b.url, opts), opts)
}

describe('local beacon', () => {
  it('serves rounds the stock drand-client verifies, 404 for future rounds, labelled with its trust', async () => {
    const genesis = 1_700_000_000
    const clock = manualClock(genesis * 1000 + 10_500) // round 4 of a 3 s chain is out, 5 is not
    const b = await start({ period: 3, genesisTime: genesis, clock })
    expect(b.trust).toBe(LOCAL_BEACON_TRUST)
    expect(b.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:[0-9]+/${b.info.hash}$`))
    expect(parseChainInfo(b.info)).toEqual(b.info) // its chain hash recomputes with drand's formula
    expect(b.info.schemeID).toBe('bls-unchained-g1-rfc9380')

    const stock = stockClient(b)
    for (const r of [1, 2, 4]) expect((await fetchBeacon(stock, r)).round).toBe(r)
    expect((await fetchBeaconByTime(stock, genesis * 1000 + 4000)).round).toBe(2)

    const future = await fetch(`${b.url}/public/5`)
    expect(future.status).toBe(404)
    const info = await fetch(`${b.url}/info`)
    expect(info.headers.get(TRUST_HEADER)).toBe(LOCAL_BEACON_TRUST)
    expect(await info.json()).toEqual(b.info)
    expect((await fetch(`${b.url}/public/abc`)).status).toBe(400)
    expect((await fetch(`${b.url}/public/4`, { method: 'POST' })).status).toBe(405)

    clock.advance(3000)
    expect((await fetch(`${b.url}/public/5`)).status).toBe(200)
    const latest = await (await fetch(`${b.url}/public/latest`)).json() as { round: number }
    expect(latest.round).toBe(5)
    expect(verifyBeaconEntry(b.info, latest, 5).ok).toBe(true)
  })

  it('keeps its key in the data directory: a restart serves the same chain, and the period cannot change', async () => {
    const dir = await tempDir()
    const first = await startLocalBeacon({ dataDir: dir, period: 2 })
    const entry = await (await fetch(`${first.url}/public/1`)).json()
    await first.close()
    expect((await stat(join(dir, KEY_FILE))).mode & 0o777).toBe(0o600)
    expect(JSON.parse(await readFile(join(dir, INFO_FILE), 'utf8'))).toEqual(first.info)

    const second = await start({ dataDir: dir })
    expect(second.info).toEqual(first.info)
    expect(await (await fetch(`${second.url}/public/1`)).json()).toEqual(entry)
    await expect(startLocalBeacon({ dataDir: dir, period: 3 })).rejects.toThrow(/has a period of 2 s/)
  })

  it('two beacons without a data directory are two different chains', async () => {
    const a = await start({ period: 1 })
    const b = await start({ period: 1 })
    expect(a.info.public_key).not.toBe(b.info.public_key)
    expect(a.info.hash).not.toBe(b.info.hash)
  })

  it('in real time: the client has the verified round shortly after it is due', async () => {
    const b = await start({ period: 1, genesisTime: Math.floor(Date.now() / 1000) - 5 })
    const c = createBeaconClient({ chain: b.info, relays: b.config.relays, retryIntervalMs: 50 })
    const round = c.firstRoundAfter(Date.now(), 0)
    const entry = await c.waitAndFetchRound(round, { deadline: c.roundTime(round) + 5000 })
    const lag = Date.now() - c.roundTime(round)
    expect(entry.round).toBe(round)
    expect(lag).toBeGreaterThanOrEqual(0)
    expect(verifyBeaconEntry(b.info, entry, round).ok).toBe(true)
  })

  it('its config is a valid table beacon config', async () => {
    const b = await start({ period: 1 })
    expect(b.config).toEqual({ kind: 'drand', name: 'local', chain: b.info, relays: [b.url], trust: LOCAL_BEACON_TRUST })
    expect(roundTime(b.info, 1)).toBe(b.info.genesis_time * 1000)
  })
})

describe('presets', () => {
  it('ship quicknet and mainnet (default), pinned to the recorded chain infos', async () => {
    const quicknet = await loadBeaconPreset('quicknet')
    const mainnet = await loadBeaconPreset('mainnet')
    expect(await loadBeaconPreset('default')).toEqual(mainnet)
    const fixture = async (n: string): Promise<unknown> => JSON.parse(await readFile(new URL(`./fixtures/drand/${n}.json`, import.meta.url), 'utf8')).info
    expect(quicknet).toMatchObject({ kind: 'drand', chain: await fixture('quicknet') })
    expect(mainnet).toMatchObject({ kind: 'drand', chain: await fixture('default') })
    for (const p of [quicknet, mainnet]) {
      if (p.kind !== 'drand') throw new Error('unreachable')
      expect(p.relays.length).toBeGreaterThan(1)
      for (const r of p.relays) expect(r.endsWith('/' + p.chain.hash)).toBe(true)
    }
  })

  it('resolveBeaconConfig: none, presets, config files, bare chain infos with relays', async () => {
    expect(await resolveBeaconConfig('none')).toEqual({ kind: 'none' })
    expect((await resolveBeaconConfig('quicknet')).kind).toBe('drand')
    await expect(resolveBeaconConfig('nosuchchain')).rejects.toThrow(/unknown beacon preset "nosuchchain" \(known: default, mainnet, quicknet\)/)
    const infoFile = new URL('./fixtures/drand/evmnet.json', import.meta.url).pathname
    // A fixture file has an info but no relays.
    await expect(resolveBeaconConfig(infoFile)).rejects.toThrow(CoreInputError)
    const dir = await tempDir()
    const b = await start({ dataDir: dir, period: 1 })
    const config = await resolveBeaconConfig(join(dir, INFO_FILE), { relays: [b.url] })
    expect(config).toMatchObject({ kind: 'drand', chain: b.info, relays: [b.url] })
    await expect(resolveBeaconConfig(join(dir, INFO_FILE))).rejects.toThrow(/bare chain info: give the relay URLs/)
  })
})
