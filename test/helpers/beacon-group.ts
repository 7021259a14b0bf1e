import { sha256 } from '@noble/hashes/sha2.js'
import { fetchBeacon, type ChainClient } from 'drand-client'
import type { BeaconEntry, ChainInfo } from '../../src/core/beacon/index.js'
import { signerFromSeed, type Signer } from '../../src/core/identity.js'
import { runDkgInMemory, type DkgEnvelope, type InMemoryDkg } from '../../src/core/beacon/dkg-in-memory.js'
import { nativeVerifyDocument } from '../../src/crypto/native-crypto.js'
import type { GroupParams } from '../../src/core/beacon/group-params.js'

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
