import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFile } from 'node:fs/promises'
import { fetchBeacon, HttpCachingChain, HttpChainClient } from 'drand-client'
import { drandV1Handler } from '../src/beacon/http-api.js'
import { parseChainInfo, type BeaconEntry } from '../src/core/beacon/index.js'

// drand's whole v1 API (issue 22) over recorded quicknet rounds 1…3 served as the latest ones, with round 5 due: the real
// drand-client reads `/{chain hash}/public/{round}`, and /health is drand's (503 when behind).
const recorded = JSON.parse(await readFile('test/fixtures/drand/quicknet.json', 'utf8')) as { info: unknown, entries: BeaconEntry[] }
const fixture = { info: recorded.info, entries: recorded.entries.filter(e => e.round <= 3) }
const info = parseChainInfo(fixture.info)
let latest = 3
let expected = 5
let server: Server
let base = ''

beforeAll(async () => {
  server = createServer(drandV1Handler({
    info,
    latestRound: () => latest,
    expectedRound: () => expected,
    entry: (r) => fixture.entries.find(e => e.round === r)
  }))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => { await new Promise(resolve => server.close(resolve)) })

describe('drand v1 HTTP API', () => {
  it('drand-client, unmodified and pinned, verifies rounds from /{chain hash}', async () => {
    const opts = { disableBeaconVerification: false, noCache: true, chainVerificationParams: { chainHash: info.hash, publicKey: info.public_key } }
    const client = new HttpChainClient(new HttpCachingChain(`${base}/${info.hash}`, opts), opts)
    for (const r of [1, 3]) expect((await fetchBeacon(client, r)).signature).toBe(fixture.entries[r - 1].signature)
  })

  it('every path answers the same at the root and under /{chain hash}/', async () => {
    for (const prefix of ['', `/${info.hash}`]) {
      const get = async (p: string): Promise<{ status: number, body: any }> => { const res = await fetch(`${base}${prefix}${p}`); return { status: res.status, body: await res.json() } }
      expect(await get('/info')).toEqual({ status: 200, body: info })
      expect(await get('/chains')).toEqual({ status: 200, body: [info.hash] })
      expect((await get('/public/latest')).body.round).toBe(3)
      expect((await get('/public/2')).body).toEqual(fixture.entries[1])
      expect((await get('/public/4')).status).toBe(404)
      expect((await get('/public/0')).status).toBe(400)
      expect((await get('/nothing')).status).toBe(404)
    }
  })

  it('/health is 200 when at most one round behind the one due, 503 when further behind', async () => {
    expected = 4
    let res = await fetch(`${base}/${info.hash}/health`)
    expect([res.status, await res.json()]).toEqual([200, { status: 200, current: 3, expected: 4 }])
    expected = 5
    res = await fetch(`${base}/health`)
    expect([res.status, await res.json()]).toEqual([503, { status: 503, current: 3, expected: 5 }])
  })
})
