import { sha256 } from '@noble/hashes/sha2.js'
import { fetchBeacon, type ChainClient } from 'drand-client'
import type { BeaconEntry, ChainInfo } from '../../src/core/beacon/index.js'
import { signerFromSeed, type Signer } from '../../src/core/identity.js'
import { DkgMachine, type DkgEffect, type DkgResult } from '../../src/core/beacon/dkg.js'
import { nativeVerifyDocument } from '../../src/daemon/native-crypto.js'
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

export interface Envelope { from: string, to: string, doc: unknown }

/**
 * Runs n DKG machines over an in-memory network. `intercept` may drop (return undefined) or replace
 * a message before delivery; `down` members neither start nor receive.
 */
export function runDkg (params: GroupParams, signers: Signer[], opts: {
  intercept?: (m: Envelope) => Envelope | undefined
  down?: Set<number>
  echo?: boolean
  seed?: string
} = {}): { machines: Array<DkgMachine | undefined>, results: Array<DkgResult | undefined>, effects: DkgEffect[][], failures: Array<string | undefined> } {
  const down = opts.down ?? new Set<number>()
  const machines = signers.map((s, i) => down.has(i + 1)
    ? undefined
    : new DkgMachine({ params, signer: s, random: seededRandom(`${opts.seed ?? 'dkg'}-${i + 1}`), echo: opts.echo, verify: nativeVerifyDocument }))
  const effects: DkgEffect[][] = signers.map(() => [])
  const results: Array<DkgResult | undefined> = signers.map(() => undefined)
  const failures: Array<string | undefined> = signers.map(() => undefined)
  const queue: Envelope[] = []
  let now = params.dkg.start
  const handle = (i: number, out: DkgEffect[]): void => {
    const from = signers[i].peerId
    for (const e of out) {
      effects[i].push(e)
      if (e.kind === 'send') queue.push({ from, to: e.to, doc: e.doc })
      if (e.kind === 'broadcast') for (const s of signers) if (s.peerId !== from) queue.push({ from, to: s.peerId, doc: e.doc })
      if (e.kind === 'done') results[i] = e.result
      if (e.kind === 'failed') failures[i] = e.reason
    }
  }
  machines.forEach((m, i) => { if (m !== undefined) handle(i, m.start(now)) })
  const drain = (): void => {
    while (queue.length > 0) {
      let m: Envelope | undefined = queue.shift() as Envelope
      if (opts.intercept !== undefined) m = opts.intercept(m)
      if (m === undefined) continue
      const i = signers.findIndex(s => s.peerId === m?.to)
      const machine = machines[i]
      if (machine === undefined) continue
      // A JSON round trip, as over the wire.
      handle(i, machine.receive(m.from, JSON.parse(JSON.stringify(m.doc)), now))
    }
  }
  drain()
  for (let k = 1; k <= 3; k++) {
    if (results.every((r, i) => r !== undefined || machines[i] === undefined || failures[i] !== undefined)) break
    now = params.dkg.start + k * params.dkg.phaseMs
    machines.forEach((m, i) => { if (m !== undefined) handle(i, m.tick(now)) })
    drain()
  }
  return { machines, results, effects, failures }
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
