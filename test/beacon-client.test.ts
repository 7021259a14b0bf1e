import { afterEach, describe, expect, it } from 'vitest'
import { fetchBeacon, HttpCachingChain, HttpChainClient } from 'drand-client'
import {
  BeaconInvalidError, BeaconTimeoutError, BeaconUnavailableError, createBeaconClient, manualClock,
  type BeaconClientInit, type RelayFailure
} from '../src/beacon/index.js'
import { parseChainInfo, roundTime, verifyBeaconEntry } from '../src/core/beacon/index.js'
import { closedRelayUrl, FIXTURE_CHAINS, loadDrandFixture, startDrandServer, type DrandServer } from './helpers/drand-server.js'

const servers: DrandServer[] = []
afterEach(async () => { await Promise.all(servers.splice(0).map(async s => await s.close())) })

async function serve (...args: Parameters<typeof startDrandServer>): Promise<DrandServer> {
  const s = await startDrandServer(...args)
  servers.push(s)
  return s
}

const quicknet = loadDrandFixture('quicknet')
const R = 30662982 // a recorded quicknet round
const atR = roundTime(quicknet.info, R) + 500

function client (relays: string[], extra: Partial<BeaconClientInit> = {}): ReturnType<typeof createBeaconClient> {
  return createBeaconClient({ chain: quicknet.info, relays, clock: manualClock(atR), requestTimeoutMs: 2000, ...extra })
}

describe('the real drand-client against a loopback relay of recorded beacons', () => {
  for (const name of FIXTURE_CHAINS) {
    it(`${name}: fetches and verifies every recorded round`, async () => {
      const fixture = loadDrandFixture(name)
      const relay = await serve(fixture)
      const last = fixture.entries[fixture.entries.length - 1]
      const c = createBeaconClient({ chain: fixture.info, relays: [relay.url], clock: manualClock(roundTime(fixture.info, last.round) + 10) })
      for (const entry of fixture.entries) {
        expect(await c.fetchRound(entry.round)).toEqual(entry)
      }
      // drand-client's stock HTTP client, pinned, agrees that this server is a valid relay.
      const opts = { disableBeaconVerification: false, noCache: false, chainVerificationParams: { chainHash: fixture.info.hash, publicKey: fixture.info.public_key } }
      const stock = new HttpChainClient(new HttpCachingChain(relay.url, opts), opts)
      expect(await fetchBeacon(stock, last.round)).toMatchObject({ round: last.round, signature: last.signature })
      // Only explicit rounds and the chain info were asked for: never "latest".
      expect(relay.requests.every(p => /\/(info|public\/[0-9]+)$/.test(p))).toBe(true)
    })
  }
})

describe('waitAndFetchRound', () => {
  it('with an injected clock, waits until the round is due, then fetches it', async () => {
    const relay = await serve(quicknet)
    const clock = manualClock(roundTime(quicknet.info, R) - 60_000)
    const c = client([relay.url], { clock })
    const entry = await c.waitAndFetchRound(R, { deadline: roundTime(quicknet.info, R) + 10_000 })
    expect(verifyBeaconEntry(parseChainInfo(quicknet.info), entry, R).ok).toBe(true)
    expect(clock.now()).toBeGreaterThanOrEqual(roundTime(quicknet.info, R))
    // Nothing was requested before the round was due: one info, one round.
    expect(relay.requests).toEqual([`/${quicknet.info.hash}/info`, `/${quicknet.info.hash}/public/${R}`])
  })

  it('keeps asking while the relay answers 404 (not yet), and returns once the round is out', async () => {
    const relay = await serve(quicknet, { publishedUpTo: R - 1 })
    const clock = manualClock(atR)
    const seen: RelayFailure[] = []
    const c = client([relay.url], { clock, retryIntervalMs: 500, onRelayFailure: f => { seen.push(f); if (seen.length === 3) relay.setPublishedUpTo(R) } })
    const entry = await c.waitAndFetchRound(R, { deadline: atR + 60_000 })
    expect(entry.round).toBe(R)
    expect(seen.map(f => f.kind)).toEqual(['not-yet', 'not-yet', 'not-yet'])
  })

  it('fails over to the next relay when the first refuses, is down, or serves another chain', async () => {
    const good = await serve(quicknet)
    const down = await serve(quicknet, { mode: 'down' })
    const testnetG = loadDrandFixture('testnet-g')
    // A relay of another chain at a quicknet URL (404 for its info), and one whose info is another chain's.
    const otherChain = await serve(testnetG)
    const misplaced = `${otherChain.origin}/${quicknet.info.hash}`
    const impostor = (await serve(quicknet, { info: testnetG.info })).url
    const refused = await closedRelayUrl(quicknet.info.hash)
    const seen: RelayFailure[] = []
    const c = client([refused, down.url, misplaced, impostor, good.url], { onRelayFailure: f => seen.push(f) })
    expect((await c.waitAndFetchRound(R)).round).toBe(R)
    expect(seen.map(f => [f.url, f.kind])).toEqual([[refused, 'down'], [down.url, 'down'], [misplaced, 'down'], [impostor, 'down']])
    expect(seen[0].message).toBe('ECONNREFUSED')
    expect(seen[1].message).toBe('HTTP 503')
    expect(seen[2].message).toMatch(/no chain info here \(404\)/)
    expect(seen[3].message).toMatch(/serves chain f3827d77.* not the pinned 52db9ba7/)
    expect(good.requests).toHaveLength(2)
  })

  it('beacon down: every relay failing until the deadline is BeaconUnavailableError', async () => {
    const down = await serve(quicknet, { mode: 'down' })
    const refused = await closedRelayUrl(quicknet.info.hash)
    const c = client([down.url, refused], { retryIntervalMs: 1000 })
    const err = await c.waitAndFetchRound(R, { deadline: atR + 5000 }).catch(e => e)
    expect(err).toBeInstanceOf(BeaconUnavailableError)
    expect(err.kind).toBe('unavailable')
    expect(err.round).toBe(R)
    expect(err.relays.map((f: RelayFailure) => f.kind)).toEqual(['down', 'down'])
    expect(err.message).toMatch(/round 30662982 of chain quicknet .*not obtained before the deadline.*HTTP 503/)
    expect(down.requests.length).toBeGreaterThan(1) // it retried
  })

  it('beacon slow: no answer within the per-request timeout is BeaconTimeoutError', async () => {
    const slow = await serve(quicknet, { mode: 'slow' })
    const c = client([slow.url], { requestTimeoutMs: 300 })
    const started = Date.now()
    const err = await c.waitAndFetchRound(R, { deadline: atR + 1000 }).catch(e => e)
    expect(err).toBeInstanceOf(BeaconTimeoutError)
    expect(err.relays[0]).toMatchObject({ kind: 'slow', message: 'no answer within 300 ms' })
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('beacon garbage: a 200 that is not a drand entry is a broken relay (unavailable), not a beacon', async () => {
    const garbage = await serve(quicknet, { mode: 'garbage' })
    const err = await client([garbage.url]).waitAndFetchRound(R, { deadline: atR + 2000 }).catch(e => e)
    expect(err).toBeInstanceOf(BeaconUnavailableError)
    expect(err.relays[0].message).toMatch(/relay entry: round must be an integer/)
  })

  it('a tampered entry is BeaconInvalidError at once, naming the reason; the relay is not asked again', async () => {
    const tampered = await serve(quicknet, { mode: 'tampered' })
    const clock = manualClock(atR)
    const err = await client([tampered.url], { clock }).waitAndFetchRound(R, { deadline: atR + 60_000 }).catch(e => e)
    expect(err).toBeInstanceOf(BeaconInvalidError)
    expect(err.relays[0]).toMatchObject({ kind: 'invalid', message: expect.stringMatching(/^(bad-signature|malformed-point): /) })
    expect(clock.now()).toBe(atR) // no waiting for the deadline
    expect(tampered.requests.filter(p => p.includes('/public/'))).toHaveLength(1)
  })

  it('a relay serving another round for the one asked is invalid; a good relay after it still wins', async () => {
    const liar = await serve(quicknet, { mode: 'wrong-round' })
    const good = await serve(quicknet)
    const seen: RelayFailure[] = []
    const entry = await client([liar.url, good.url], { onRelayFailure: f => seen.push(f) }).waitAndFetchRound(R)
    expect(entry.round).toBe(R)
    expect(seen).toEqual([expect.objectContaining({ kind: 'invalid', message: expect.stringMatching(/^round-mismatch/) })])
  })

  it('an invalid relay among relays that are down is reported as invalid at the deadline', async () => {
    const tampered = await serve(quicknet, { mode: 'tampered' })
    const down = await serve(quicknet, { mode: 'down' })
    const err = await client([tampered.url, down.url], { retryIntervalMs: 1000 }).waitAndFetchRound(R, { deadline: atR + 3000 }).catch(e => e)
    expect(err).toBeInstanceOf(BeaconInvalidError)
  })

  it('a round due after the deadline is a timeout right away, without a request', async () => {
    const relay = await serve(quicknet)
    const c = client([relay.url], { clock: manualClock(atR) })
    const err = await c.waitAndFetchRound(R + 100, { deadline: atR + 1000 }).catch(e => e)
    expect(err).toBeInstanceOf(BeaconTimeoutError)
    expect(err.message).toMatch(/after the deadline/)
    expect(relay.requests).toEqual([])
  })

  it('the caller\'s abort signal stops a wait with the signal\'s reason', async () => {
    const slow = await serve(quicknet, { mode: 'slow' })
    const c = client([slow.url], { requestTimeoutMs: 20_000 })
    const controller = new AbortController()
    setTimeout(() => controller.abort(new Error('hand cancelled')), 200)
    await expect(c.waitAndFetchRound(R, { signal: controller.signal })).rejects.toThrow('hand cancelled')
  })

  it('round arithmetic follows the injected clock', () => {
    const c = client(['http://127.0.0.1:1/' + quicknet.info.hash])
    expect(c.currentRound()).toBe(R)
    expect(c.firstRoundAfter(atR, 0)).toBe(R + 1)
    expect(c.firstRoundAfter(atR, 3000)).toBe(R + 2)
    expect(c.roundTime(R)).toBe(atR - 500)
  })

  it('refuses to start without relays or with an inconsistent chain', () => {
    expect(() => createBeaconClient({ chain: quicknet.info, relays: [] })).toThrow(/at least one relay/)
    expect(() => createBeaconClient({ chain: { ...quicknet.info, period: 30 }, relays: ['http://127.0.0.1:1'] })).toThrow(/does not match its contents/)
  })
})
