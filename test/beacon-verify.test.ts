import { describe, expect, it } from 'vitest'
import { fetchBeacon, roundAt as drandRoundAt, roundTime as drandRoundTime, type ChainClient, type ChainInfo as DrandChainInfo, type RandomnessBeacon } from 'drand-client'
import {
  computeChainHash, firstRoundAfter, parseBeaconConfig, parseChainInfo, roundAt, roundTime, SCHEME_IDS,
  verifyBeaconEntry, verifyBoundBeacon, type BeaconEntry, type ChainInfo
} from '../src/core/beacon/index.js'
import { CoreInputError } from '../src/core/errors.js'
import { fromHex, sha256Hex, toHex } from '../src/core/bytes.js'
import { bls12_381 } from '@noble/curves/bls12-381.js'
import { FIXTURE_CHAINS, loadDrandFixture, tamperEntry } from './helpers/drand-server.js'

const fixtures = FIXTURE_CHAINS.map(name => ({ name, ...loadDrandFixture(name) }))

/** drand-client's own verification (its fetchBeacon) on an entry, with no network: a ChainClient over memory. */
async function drandClientAccepts (info: ChainInfo, entry: BeaconEntry, round: number): Promise<boolean> {
  const client: ChainClient = {
    options: { disableBeaconVerification: false, noCache: false, chainVerificationParams: { chainHash: info.hash, publicKey: info.public_key } },
    chain: () => ({ baseUrl: 'memory:', info: async () => info as DrandChainInfo }),
    latest: async () => { throw new Error('not used') },
    get: async () => entry as RandomnessBeacon
  }
  const quiet = console.error
  console.error = () => {}
  try {
    await fetchBeacon(client, round)
    return true
  } catch {
    return false
  } finally {
    console.error = quiet
  }
}

describe('chain info', () => {
  it('covers every scheme drand uses, and every recorded chain hash recomputes with drand\'s formula', () => {
    expect(new Set(fixtures.map(f => f.info.schemeID))).toEqual(new Set(SCHEME_IDS))
    for (const f of fixtures) {
      const info = parseChainInfo(f.info)
      expect(computeChainHash(info)).toBe(f.info.hash)
      expect(info).toEqual(f.info)
    }
  })

  it('rejects an info whose fields do not match its hash, naming both hashes', () => {
    const info = loadDrandFixture('quicknet').info
    for (const change of [{ period: 30 }, { genesis_time: info.genesis_time + 1 }, { metadata: { beaconID: 'other' } },
      { groupHash: '00'.repeat(32) }, { public_key: loadDrandFixture('fastnet').info.public_key }]) {
      expect(() => parseChainInfo({ ...info, ...change })).toThrow(/does not match its contents \(recomputed [0-9a-f]{64}\)/)
    }
  })

  it('rejects malformed infos with a specific message', () => {
    const info = loadDrandFixture('default').info
    expect(() => parseChainInfo({ ...info, schemeID: 'bls-magic' })).toThrow(/unknown schemeID "bls-magic"/)
    expect(() => parseChainInfo({ ...info, public_key: info.public_key.slice(2) })).toThrow(/public_key must be 48 bytes/)
    expect(() => parseChainInfo({ ...info, period: 0 })).toThrow(/period must be an integer/)
    expect(() => parseChainInfo({ ...info, period: 2.5 })).toThrow(/period must be an integer/)
    expect(() => parseChainInfo({ ...info, metadata: undefined })).toThrow(/missing field metadata/)
    expect(() => parseChainInfo('nope')).toThrow(CoreInputError)
  })

  it('drops unknown fields', () => {
    const info = parseChainInfo({ ...loadDrandFixture('evmnet').info, extra: 'x' })
    expect(Object.keys(info).sort()).toEqual(['genesis_time', 'groupHash', 'hash', 'metadata', 'period', 'public_key', 'schemeID'])
  })
})

describe('offline verification of recorded real beacons', () => {
  for (const f of fixtures) {
    describe(`${f.name} (${f.info.schemeID})`, () => {
      const info = parseChainInfo(f.info)

      it('verifies every recorded entry, as drand-client does', async () => {
        for (const entry of f.entries) {
          const verdict = verifyBeaconEntry(info, entry, entry.round)
          expect(verdict, `round ${entry.round}`).toEqual({ ok: true, entry })
          expect(await drandClientAccepts(info, entry, entry.round)).toBe(true)
        }
      })

      it('rejects a flipped signature byte, like drand-client', async () => {
        const entry = f.entries[f.entries.length - 1]
        // Byte 10 lands in the x coordinate; with randomness recomputed only the point/pairing check can catch it.
        const tampered = tamperEntry(entry)
        const verdict = verifyBeaconEntry(info, tampered, entry.round)
        expect(verdict.ok).toBe(false)
        if (!verdict.ok) expect(['bad-signature', 'malformed-point']).toContain(verdict.reason)
        expect(await drandClientAccepts(info, tampered, entry.round)).toBe(false)
        // Without recomputing randomness, the cheaper check names it.
        const lazy = { ...entry, signature: tampered.signature }
        expect(verifyBeaconEntry(info, lazy, entry.round)).toMatchObject({ ok: false, reason: 'randomness-mismatch' })
      })

      it('rejects another round\'s signature and a wrong round number', async () => {
        const [a, b] = f.entries
        const swapped = { ...a, signature: b.signature, randomness: b.randomness }
        expect(verifyBeaconEntry(info, swapped, a.round)).toMatchObject({ ok: false, reason: 'bad-signature' })
        expect(await drandClientAccepts(info, swapped, a.round)).toBe(false)
        // The entry is genuine but not the round that was named.
        expect(verifyBeaconEntry(info, b, a.round)).toMatchObject({ ok: false, reason: 'round-mismatch' })
        expect(await drandClientAccepts(info, b, a.round)).toBe(false)
        // A relabelled round: the signature is over the real round, so it fails.
        const relabelled = { ...a, round: a.round + 1 }
        expect(verifyBeaconEntry(info, relabelled, a.round + 1)).toMatchObject({ ok: false, reason: 'bad-signature' })
        expect(await drandClientAccepts(info, relabelled, a.round + 1)).toBe(false)
      })

      it('rejects every entry against the wrong chain', async () => {
        // Same scheme where possible, so the failure is the key, not the point size.
        const other = fixtures.find(o => o.name !== f.name && o.info.schemeID === f.info.schemeID) ??
          fixtures.find(o => o.name !== f.name && o.info.schemeID !== f.info.schemeID)!
        const wrong = parseChainInfo(other.info)
        for (const entry of f.entries) {
          const verdict = verifyBeaconEntry(wrong, entry, entry.round)
          expect(verdict.ok, `round ${entry.round} against ${other.name}`).toBe(false)
          expect(await drandClientAccepts(wrong, entry, entry.round)).toBe(false)
        }
        const binding = { chainHash: other.info.hash, round: f.entries[0].round }
        expect(verifyBoundBeacon(info, binding, f.entries[0])).toMatchObject({ ok: false, reason: 'wrong-chain' })
        expect(verifyBoundBeacon(info, { chainHash: info.hash, round: f.entries[0].round }, f.entries[0]).ok).toBe(true)
      })
    })
  }
})

describe('rejection reasons', () => {
  const quicknet = loadDrandFixture('quicknet')
  const info = parseChainInfo(quicknet.info)
  const entry = quicknet.entries[0]

  it('names a malformed point, including one of the wrong size and the point at infinity', () => {
    const bad = 'ff'.repeat(48)
    expect(verifyBeaconEntry(info, { ...entry, signature: bad, randomness: sha256Hex(fromHex(bad)) }, entry.round))
      .toMatchObject({ ok: false, reason: 'malformed-point' })
    const short = entry.signature.slice(2)
    expect(verifyBeaconEntry(info, { ...entry, signature: short, randomness: sha256Hex(fromHex(short)) }, entry.round))
      .toMatchObject({ ok: false, reason: 'malformed-point', message: expect.stringMatching(/48 bytes/) })
    const infinity = toHex(bls12_381.G1.Point.ZERO.toBytes())
    expect(verifyBeaconEntry(info, { ...entry, signature: infinity, randomness: sha256Hex(fromHex(infinity)) }, entry.round))
      .toMatchObject({ ok: false, reason: 'malformed-point', message: expect.stringMatching(/infinity/) })
  })

  it('a flipped bit that still decodes to a valid point (the sign bit: -S) fails the pairing, not the decoding', () => {
    for (const f of fixtures.filter(x => x.info.schemeID !== 'bls-bn254-unchained-on-g1')) {
      const chain = parseChainInfo(f.info)
      const e = f.entries[0]
      const sig = fromHex(e.signature)
      sig[0] ^= 0x20 // compressed encoding's y-sign bit
      const tampered = { ...e, signature: toHex(sig), randomness: sha256Hex(sig) }
      expect(verifyBeaconEntry(chain, tampered, e.round), f.name).toMatchObject({ ok: false, reason: 'bad-signature' })
    }
    // BN254 points are uncompressed: -S is (x, p - y).
    const evm = fixtures.find(x => x.name === 'evmnet')!
    const e = evm.entries[0]
    const p = BigInt('0x30644e72e131a029b85045b68181585d97816a916871ca8d3c208c16d87cfd47')
    const y = BigInt('0x' + e.signature.slice(64))
    const negated = e.signature.slice(0, 64) + (p - y).toString(16).padStart(64, '0')
    const tampered = { ...e, signature: negated, randomness: sha256Hex(fromHex(negated)) }
    expect(verifyBeaconEntry(parseChainInfo(evm.info), tampered, e.round)).toMatchObject({ ok: false, reason: 'bad-signature' })
  })

  it('names malformed entries and chained/unchained mismatches', () => {
    expect(verifyBeaconEntry(info, { ...entry, round: '1' }, 1)).toMatchObject({ ok: false, reason: 'malformed-entry' })
    expect(verifyBeaconEntry(info, { ...entry, signature: entry.signature.toUpperCase() }, 1)).toMatchObject({ ok: false, reason: 'malformed-entry' })
    expect(verifyBeaconEntry(info, null, 1)).toMatchObject({ ok: false, reason: 'malformed-entry' })
    expect(verifyBeaconEntry(info, { ...entry, previous_signature: entry.signature }, 1)).toMatchObject({ ok: false, reason: 'malformed-entry' })
    const chained = loadDrandFixture('default')
    const { previous_signature: _, ...bare } = chained.entries[1]
    expect(verifyBeaconEntry(parseChainInfo(chained.info), bare, bare.round)).toMatchObject({ ok: false, reason: 'malformed-entry' })
  })

  it('names an unknown scheme and an inconsistent chain info instead of throwing', () => {
    expect(verifyBeaconEntry({ ...info, schemeID: 'nope' } as unknown as ChainInfo, entry, 1)).toMatchObject({ ok: false, reason: 'unknown-scheme' })
    expect(verifyBeaconEntry({ ...info, period: 4 }, entry, 1)).toMatchObject({ ok: false, reason: 'bad-chain-info' })
  })
})

describe('round arithmetic', () => {
  const chains = fixtures.map(f => parseChainInfo(f.info))

  it('matches drand-client\'s roundAt and roundTime', () => {
    for (const chain of chains) {
      const g = chain.genesis_time * 1000
      for (const ms of [g, g + 1, g + chain.period * 1000 - 1, g + chain.period * 1000, g + 123_456_789, 1_760_000_000_000]) {
        expect(roundAt(chain, ms)).toBe(drandRoundAt(ms, chain as DrandChainInfo))
      }
      for (const r of [1, 2, 1000, 30662982]) expect(roundTime(chain, r)).toBe(drandRoundTime(chain as DrandChainInfo, r))
    }
  })

  it('firstRoundAfter is the first round due strictly after deadline + margin', () => {
    for (const chain of chains) {
      const p = chain.period * 1000
      for (const ms of [chain.genesis_time * 1000 + 5 * p, chain.genesis_time * 1000 + 5 * p + 1, 1_760_000_000_123]) {
        for (const margin of [0, 1, p - 1, p, 2500]) {
          const r = firstRoundAfter(chain, ms, margin)
          expect(roundTime(chain, r)).toBeGreaterThan(ms + margin)
          expect(roundTime(chain, r - 1)).toBeLessThanOrEqual(ms + margin)
        }
      }
      expect(firstRoundAfter(chain, 0)).toBe(1)
    }
  })

  it('rejects bad times and rounds', () => {
    const chain = chains[0]
    expect(() => roundAt(chain, chain.genesis_time * 1000 - 1)).toThrow(/before the chain's genesis/)
    expect(() => roundTime(chain, 0)).toThrow(/round must be an integer >= 1/)
    expect(() => firstRoundAfter(chain, 1.5)).toThrow(/milliseconds/)
    expect(() => firstRoundAfter(chain, 0, -1)).toThrow(/margin must not be negative/)
  })
})

describe('beacon config', () => {
  it('accepts none and a chain with relays ending in the chain hash', () => {
    expect(parseBeaconConfig({ kind: 'none' })).toEqual({ kind: 'none' })
    const q = loadDrandFixture('quicknet').info
    const config = parseBeaconConfig({ info: q, relays: [`http://127.0.0.1:1/${q.hash}/`] })
    expect(config).toMatchObject({ kind: 'drand', name: 'quicknet', relays: [`http://127.0.0.1:1/${q.hash}`] })
  })

  it('rejects a relay URL that would silently serve the default chain, and bad URLs', () => {
    const q = loadDrandFixture('quicknet').info
    expect(() => parseBeaconConfig({ info: q, relays: ['http://127.0.0.1:1'] })).toThrow(/must end in \/52db9ba7/)
    expect(() => parseBeaconConfig({ info: q, relays: [`ftp://x/${q.hash}`] })).toThrow(/http\(s\) URL/)
    expect(() => parseBeaconConfig({ info: q, relays: [] })).toThrow(/1 to 8 URLs/)
    const d = loadDrandFixture('default').info
    expect(parseBeaconConfig({ info: d, relays: ['http://127.0.0.1:1'] }).kind).toBe('drand')
  })
})

describe('verifyHashedOnG1 (a G1 signature against a G2 key, lines kept per key)', () => {
  it('gives noble shortSignatures.verify\'s verdict on right and wrong signatures, messages and keys, and on the point at infinity', async () => {
    const { verifyHashedOnG1 } = await import('../src/core/beacon/bls12-381.js')
    const short = bls12_381.shortSignatures
    const dst = 'BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_'
    const keys = [123456789n, 2n ** 200n + 7n].map(sk => ({ sk, pk: bls12_381.G2.Point.BASE.multiply(sk) }))
    const hashes = ['round 1', 'round 2'].map(m => short.hash(new TextEncoder().encode(m), dst))
    const { ZERO } = bls12_381.G1.Point
    // Each key twice in a row: the second check reads the lines the first kept.
    const h = hashes[1]
    let valid = 0
    for (const { sk, pk } of [...keys, ...keys]) {
      for (const sig of [h.multiply(sk), h.multiply(sk + 1n), hashes[0].multiply(sk), ZERO]) {
        for (const [s, hh, key] of [[sig, h, pk], [sig, h, keys[0].pk], [sig, ZERO, pk]] as const) {
          const noble = (() => { try { return short.verify(s, hh, key) } catch { return false } })()
          expect(verifyHashedOnG1(s, hh, key)).toBe(noble)
          if (noble) valid++
        }
      }
    }
    // The right signature under its own key (each key twice), and the first key's under itself again.
    expect(valid).toBe(6)
    expect(verifyHashedOnG1(hashes[0].multiply(5n), hashes[0], bls12_381.G2.Point.ZERO)).toBe(false)
  })
})
