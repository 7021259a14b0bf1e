// Beacon figures: offline verifications per second per drand scheme (ours and drand-client's),
// against the bare pairing check of the curve library, measured in the same run; then the time
// from a round's publication to the verified entry in hand, through the client, against a local
// beacon on loopback, against a bare HTTP GET + one verification of the same round.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { bls12_381 } from '@noble/curves/bls12-381.js'
import { bn254 } from '@noble/curves/bn254.js'
import { fetchBeacon, type ChainClient, type ChainInfo as DrandChainInfo, type RandomnessBeacon } from 'drand-client'
import { forgetVerifiedBeaconSignatures, parseChainInfo, SCHEMES, verifyBeaconEntry, type BeaconEntry, type ChainInfo } from '../../src/core/beacon/index.js'
import { createBeaconClient, startLocalBeacon } from '../../src/beacon/index.js'

const FIXTURES = ['default', 'testnet-unchained-3s', 'fastnet', 'quicknet', 'evmnet']
// src/ → scripts/bench; dist/ → dist/scripts/bench: the fixtures sit at the package root either way.
function fixturePath (name: string): string {
  const here = fileURLToPath(import.meta.url)
  const root = here.includes('/dist/') ? here.slice(0, here.indexOf('/dist/')) : here.slice(0, here.indexOf('/scripts/'))
  return `${root}/test/fixtures/drand/${name}.json`
}

/** Operations per second of `fn`, run for about `ms` (at least 5 times). */
async function rate (fn: () => unknown | Promise<unknown>, ms = 600): Promise<number> {
  await fn()
  let n = 0
  const start = performance.now()
  while (n < 5 || performance.now() - start < ms) { await fn(); n++ }
  return n / ((performance.now() - start) / 1000)
}

function drandClientFor (info: ChainInfo, entry: BeaconEntry): ChainClient {
  return {
    options: { disableBeaconVerification: false, noCache: false, chainVerificationParams: { chainHash: info.hash, publicKey: info.public_key } },
    chain: () => ({ baseUrl: 'memory:', info: async () => info as DrandChainInfo }),
    latest: async () => entry as RandomnessBeacon,
    get: async () => entry as RandomnessBeacon
  }
}

const fmt = (x: number, d = 1): string => x.toFixed(d)

export async function run (): Promise<void> {
  // The irreducible cost of one BLS verification: a two-pair pairing product (two Miller loops, one final exponentiation).
  const g1 = bls12_381.G1.Point.BASE.multiply(12345n)
  const g2 = bls12_381.G2.Point.BASE.multiply(67890n)
  const blsBound = await rate(() => bls12_381.pairingBatch([{ g1, g2 }, { g1: g1.negate(), g2 }]))
  const b1 = bn254.G1.Point.BASE.multiply(12345n)
  const b2 = bn254.G2.Point.BASE.multiply(67890n)
  const bnBound = await rate(() => bn254.pairingBatch([{ g1: b1, g2: b2 }, { g1: b1.negate(), g2: b2 }]))
  console.log(`bound: bare 2-pair pairing check  BLS12-381 ${fmt(blsBound)}/s   BN254 ${fmt(bnBound)}/s`)
  console.log('scheme                       ours/s  drand-client/s  bound/s  ours/bound  ours/drand-client')
  for (const name of FIXTURES) {
    const fixture = JSON.parse(readFileSync(fixturePath(name), 'utf8')) as { info: unknown, entries: BeaconEntry[] }
    const info = parseChainInfo(fixture.info)
    const entry = fixture.entries[fixture.entries.length - 1]
    // Each check is done in full: the verifier remembers signatures it has checked (src/core/beacon/verify.ts).
    const ours = await rate(() => { forgetVerifiedBeaconSignatures(); if (!verifyBeaconEntry(info, entry, entry.round).ok) throw new Error('fixture did not verify') })
    const client = drandClientFor(info, entry)
    const theirs = await rate(async () => await fetchBeacon(client, entry.round))
    const bound = SCHEMES[info.schemeID].curve === 'bn254' ? bnBound : blsBound
    console.log(`${info.schemeID.padEnd(28)} ${fmt(ours).padStart(6)}  ${fmt(theirs).padStart(14)}  ${fmt(bound).padStart(7)}  ${fmt(ours / bound, 2).padStart(10)}  ${fmt(ours / theirs, 2).padStart(17)}`)
  }

  // Publication → verified entry in hand. A local beacon publishes round r exactly at roundTime(r).
  const beacon = await startLocalBeacon({ period: 1, genesisTime: Math.floor(Date.now() / 1000) - 10 })
  try {
    const client = createBeaconClient({ chain: beacon.info, relays: [beacon.url], retryIntervalMs: 20 })
    const lags: number[] = []
    await client.fetchRound(client.currentRound()) // first contact checks /info; not part of the steady state
    for (let i = 0; i < 5; i++) {
      const round = client.firstRoundAfter(Date.now(), 0)
      await client.waitAndFetchRound(round, { deadline: client.roundTime(round) + 5000 })
      lags.push(Date.now() - client.roundTime(round))
    }
    const past = client.currentRound() - 1
    const getAndVerify = await rate(async () => {
      const entry = await (await fetch(`${beacon.url}/public/${past}`)).json()
      forgetVerifiedBeaconSignatures()
      if (!verifyBeaconEntry(beacon.info, entry, past).ok) throw new Error('local entry did not verify')
    }, 1000)
    const boundMs = 1000 / getAndVerify
    lags.sort((a, b) => a - b)
    const median = lags[Math.floor(lags.length / 2)]
    console.log(`publication → verified entry (local beacon, loopback): median ${fmt(median)} ms, max ${fmt(lags[lags.length - 1])} ms over ${lags.length} rounds`)
    console.log(`bound: bare GET + one verification of a round: ${fmt(boundMs)} ms   ratio median/bound ${fmt(median / boundMs, 2)}`)
  } finally {
    await beacon.close()
  }
}
