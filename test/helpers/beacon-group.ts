import { sha256 } from '@noble/hashes/sha2.js'
import { fetchBeacon, type ChainClient } from 'drand-client'
import type { BeaconEntry, ChainInfo, DkgResult } from '../../src/core/beacon/index.js'
import { signerFromSeed, type Signer } from '../../src/core/identity.js'
import { runDkgInMemory, type DkgEnvelope, type InMemoryDkg } from '../../src/core/beacon/dkg-in-memory.js'
import { nativeVerifyDocument } from '../../src/crypto/native-crypto.js'
import type { GroupParams } from '../../src/core/beacon/group-params.js'
import type { Clock } from '../../src/beacon/clock.js'

/** Deterministic randomness: sha256(label ‖ counter) stretched to n bytes (fixed seeds for vectors). */
export function seededRandom (label: string): (n: number) => Uint8Array {
  let counter = 0
  return (n) => {
    const out = new Uint8Array(n)
    for (let off = 0; off < n; off += 32) {
      const block = sha256(new TextEncoder().encode(`${label}/${counter++}`))
      out.set(block.subarray(0, Math.min(32, n - off)), off)
    }
    return out
  }
}

export function memberSigners (n: number, label = 'member'): Signer[] {
  return Array.from({ length: n }, (_, i) => signerFromSeed(sha256(new TextEncoder().encode(`${label}-${i + 1}`))))
}

export function groupParams (signers: Signer[], threshold: number, over: Partial<GroupParams> = {}): GroupParams {
  return {
    id: 'test-group',
    members: signers.map(s => s.peerId),
    threshold,
    period: 1,
    genesisTime: 1_700_000_100,
    dkg: { start: 1_700_000_000_000, phaseMs: 10_000 },
    ...over
  }
}

/** Runs n DKG machines in memory with fixed seeds (see runDkgInMemory). */
export function runDkg (params: GroupParams, signers: Signer[], opts: {
  intercept?: (m: DkgEnvelope) => DkgEnvelope | undefined
  down?: Set<number>
  echo?: boolean
  seed?: string
  oldShare?: (member: number) => string | undefined
} = {}): InMemoryDkg {
  return runDkgInMemory(params, signers, { ...opts, random: (i) => seededRandom(`${opts.seed ?? 'dkg'}-${i}`), verify: nativeVerifyDocument })
}

/**
 * A group of `n` members (signers labelled `label`) at threshold `t`, made by its DKG in memory: the
 * old group a reshare test starts from, with each member's result and the chain.
 */
export function dkgGroup (n: number, t: number, label: string): { signers: Signer[], params: GroupParams, results: DkgResult[], chain: ChainInfo } {
  const signers = memberSigners(n, label)
  const params = groupParams(signers, t)
  const results = runDkg(params, signers).results as DkgResult[]
  return { signers, params, results, chain: results[0].chainInfo }
}

/** drand-client's own verification (fetchBeacon) of an entry, without HTTP: true when it accepts it. */
export async function drandClientVerifies (info: ChainInfo, entry: BeaconEntry): Promise<boolean> {
  const client: ChainClient = {
    options: { disableBeaconVerification: false, noCache: true, chainVerificationParams: { chainHash: info.hash, publicKey: info.public_key } },
    chain: () => ({ baseUrl: 'memory:', info: async () => info }) as any,
    latest: async () => entry as any,
    get: async () => entry as any
  }
  try { await fetchBeacon(client, entry.round); return true } catch { return false }
}

/**
 * A beacon group's clock, stepped by the test: it stands still until set, so each round is made
 * due only once the previous one is in everywhere, however loaded the machine is. A sleep waits a
 * few real milliseconds (the members' loops poll it). It starts ten minutes behind real time, so
 * the rounds are in the past for tlock-js, which checks a round's time against the real clock.
 */
export function steppedClock (): Clock & { set: (ms: number) => void } {
  let now = Date.now() - 600_000
  return {
    now: () => now,
    set: (ms) => { now = ms },
    sleep: async (ms, signal) => {
      signal?.throwIfAborted()
      if (ms <= 0) return
      await new Promise<void>((resolve, reject) => {
        const onAbort = (): void => { clearTimeout(t); reject(signal?.reason) }
        const t = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve() }, Math.min(ms, 10))
        signal?.addEventListener('abort', onAbort, { once: true })
      })
    }
  }
}

/** Polls `get` every `everyMs` until it gives a value (returned), failing after `timeoutMs` with `what`. */
export async function untilValue<T> (what: string, get: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 20): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const v = await get()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, everyMs))
  }
}
