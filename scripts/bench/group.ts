// Beacon group figures, each beside a bound measured in the same run:
//  - DKG time for 4, 8 and 16 members, all in ONE process (every member's CPU on one thread), and
//    the sum of the members' irreducible curve work (dealing t G2 commitments, checking n shares:
//    n G2 multiplications) as its bound;
//  - per-member CPU per round (sign a partial, take t-1 partials from the wire, recover, verify once)
//    ÷ one hash-to-curve + one G1 multiplication + one t-term MSM + one pairing check;
//  - round latency (round due → verified at every member) at 4 and 8 members, one OS process each
//    (`fairdeal beacon demo --processes`), against the pairing-bound CPU of a round;
//  - reshare time 5 → 7 and 8 → 12 members, every participant's reshare machine in ONE process
//    (every old member deals, every new member checks, complains, combines; the documents signed
//    and verified as over the network), against the dealing and share-checking curve work (t'
//    commitments per old member, t share checks per new member). The bound leaves out what every
//    member does besides (the t·t' G2 multiplications combining the commitments, each dealer's
//    C_0 checked against its old public share, Ed25519), so the ratio is high;
//  - bytes each member sends per round (frames of the round protocol; noise and yamux framing add ~40 bytes a frame).
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { pippenger } from '@noble/curves/abstract/curve.js'
import { bls12_381 } from '@noble/curves/bls12-381.js'
import { canonicalBytes } from '../../src/core/canonical.js'
import { signerFromSeed } from '../../src/core/identity.js'
import {
  GROUP_PARTIAL, RoundMachine, reshareParams, hashRound, lagrangeAtZero, partialSign, pointHex, roundTime, scalarFromHex,
  type DkgResult, type GroupParams, type PartialBody, type RoundEffect
} from '../../src/core/beacon/index.js'
import { runDkgInMemory } from '../../src/core/beacon/dkg-in-memory.js'
import { commitPolynomial, randomPolynomial } from '../../src/core/beacon/threshold.js'
import { signDocument } from '../../src/core/signed.js'
import { nativeSigner, nativeVerifyDocument } from '../../src/crypto/native-crypto.js'

const fmt = (x: number, d = 1): string => x.toFixed(d)
const G1 = bls12_381.G1.Point
const G2 = bls12_381.G2.Point

function signers (n: number): Array<ReturnType<typeof nativeSigner>> {
  return Array.from({ length: n }, () => { const seed = randomBytes(32); return nativeSigner(seed, signerFromSeed(seed).peerId) })
}

function params (peerIds: string[], threshold: number): GroupParams {
  return { id: 'bench-group', members: peerIds, threshold, period: 1, genesisTime: 1_700_000_100, dkg: { start: 1_700_000_000_000, phaseMs: 10_000 } }
}

function cpuMs (fn: () => void): number {
  const before = process.cpuUsage()
  fn()
  const d = process.cpuUsage(before)
  return (d.user + d.system) / 1000
}

function median (xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

function dkg (n: number, t: number): { ms: number, results: DkgResult[], ids: ReturnType<typeof signers> } {
  const ids = signers(n)
  const start = performance.now()
  const run = runDkgInMemory(params(ids.map(s => s.peerId), t), ids, { random: () => (k) => new Uint8Array(randomBytes(k)), verify: nativeVerifyDocument })
  const ms = performance.now() - start
  if (run.results.some(r => r === undefined)) throw new Error(`DKG of ${n} failed: ${run.failures.find(f => f !== undefined) ?? '?'}`)
  return { ms, results: run.results as DkgResult[], ids }
}

/** One member's CPU for one round: its tick (hash, sign, ed25519) and t-1 partials received (decode, recover, verify). */
function roundCpu (n: number, t: number, rounds: number): { perRound: number, bound: number, bytes: number } {
  const { results, ids } = dkg(n, t)
  const p = params(ids.map(s => s.peerId), t)
  const chain = results[0].chainInfo
  const machine = new RoundMachine({ chain, members: p.members, threshold: t, commitments: results[0].commitments, index: 1, share: results[0].share, signer: ids[0], verify: nativeVerifyDocument })
  const samples: number[] = []
  const bounds: number[] = []
  let bytes = 0
  for (let r = 1; r <= rounds; r++) {
    // The others' partials, made outside the measurement, as they arrive from the wire.
    const h = hashRound(r)
    const incoming = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16].slice(0, t - 1).map(i => JSON.parse(JSON.stringify(signDocument<PartialBody>(GROUP_PARTIAL, {
      chain: chain.hash, round: r, index: i, partial: pointHex(partialSign(scalarFromHex(results[i - 1].share, 's'), h))
    }, ids[i - 1]))) as unknown)
    const now = roundTime(chain, r) + 1
    let out: RoundEffect[] = []
    samples.push(cpuMs(() => {
      out = machine.tick(now)
      for (let k = 0; k < incoming.length; k++) out.push(...machine.receive(ids[k + 1].peerId, incoming[k], now))
    }))
    if (!out.some(e => e.kind === 'produced')) throw new Error(`round ${r} was not produced`)
    for (const e of out) if (e.kind === 'broadcast') bytes += canonicalBytes(e.msg).byteLength * (n - 1)
    // The bound, on the same round: hash to G1, one G1 multiplication, one t-term MSM, one pairing check.
    const share = scalarFromHex(results[0].share, 's')
    const points = Array.from({ length: t }, (_, i) => partialSign(share + BigInt(i), h))
    const lambdas = lagrangeAtZero(Array.from({ length: t }, (_, i) => i + 1))
    const key = G2.BASE.multiply(share)
    bounds.push(cpuMs(() => {
      const hh = hashRound(r + 100_000)
      const sig = hh.multiply(share)
      pippenger(G1, points, lambdas)
      bls12_381.shortSignatures.verify(sig, hh, key)
    }))
  }
  return { perRound: median(samples), bound: median(bounds), bytes: bytes / rounds }
}

async function demoLatency (members: number, seconds: number): Promise<{ p50: number, p99: number, rounds: number, missed: number, dkgMs: number } | string> {
  const bin = fileURLToPath(new URL('../../../bin/fairdeal.js', import.meta.url))
  return await new Promise(resolve => {
    const child = spawn(process.execPath, [bin, 'beacon', 'demo', '--members', String(members), '--processes', '--period', '1', '--duration', String(seconds), '--json'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c })
    child.stderr.setEncoding('utf8').on('data', (c: string) => { err += c })
    child.on('exit', (code) => {
      const lines = out.trim().split('\n')
      if (code !== 0 || lines.length < 2) { resolve(`demo failed (${String(code)}): ${err.trim().split('\n').find(l => l.startsWith('fairdeal')) ?? err.trim().slice(0, 200)}`); return }
      const last = JSON.parse(lines[lines.length - 1]) as { rounds: number, missed: number, dkgMs: number, roundLatencyMs: { p50: number, p99: number } }
      resolve({ ...last.roundLatencyMs, rounds: last.rounds, missed: last.missed, dkgMs: last.dkgMs })
    })
  })
}

export async function run (): Promise<void> {
  // Warm up: the first pairing of a process precomputes for ~200 ms.
  bls12_381.shortSignatures.verify(hashRound(1).multiply(3n), hashRound(1), G2.BASE.multiply(3n))
  console.log('DKG, all members in this one process (one thread):')
  console.log('members  threshold  DKG ms  bound ms  ratio')
  for (const n of [4, 8, 16]) {
    const t = Math.floor(n / 2) + 1
    const { ms } = dkg(n, t)
    // Bound: each member deals t G2 commitments and checks n shares (a G2 multiplication each), all on this thread.
    const start = performance.now()
    for (let i = 0; i < n; i++) {
      commitPolynomial(randomPolynomial(t, k => new Uint8Array(randomBytes(k))))
      for (let j = 0; j < n; j++) G2.BASE.multiply(BigInt(j + 12345))
    }
    const bound = performance.now() - start
    console.log(`${String(n).padStart(7)}  ${String(t).padStart(9)}  ${fmt(ms, 0).padStart(6)}  ${fmt(bound, 0).padStart(8)}  ${fmt(ms / bound, 2).padStart(5)}`)
  }
  console.log('\nreshare, every participant\'s machine in this one process (one thread; the old members stay, newcomers join, as the network runs it: signed documents, views, complaints); the group key kept:')
  console.log('old n/t  new n/t  reshare ms  bound ms  ratio')
  for (const [n, t, n2, t2] of [[5, 3, 7, 4], [8, 5, 12, 7]]) {
    const { results, ids } = dkg(n, t)
    const oldParams = params(ids.map(s => s.peerId), t)
    const all = [...ids, ...signers(n2 - n)]
    const p2 = reshareParams({ params: oldParams, commitments: results[0].commitments, chainInfo: results[0].chainInfo }, {
      members: all.map(s => s.peerId), threshold: t2, dkg: { start: 1_700_000_200_000, phaseMs: 10_000 }, transition: 1000
    })
    const start = performance.now()
    const run = runDkgInMemory(p2, all, { random: () => (k) => new Uint8Array(randomBytes(k)), verify: nativeVerifyDocument, oldShare: i => results[i - 1]?.share })
    const ms = performance.now() - start
    if (run.results.some(r => r === undefined || r.groupKey !== results[0].groupKey)) throw new Error(`reshare lost the group key: ${run.failures.find(f => f !== undefined) ?? '?'}`)
    // Bound: each old member deals t2 G2 commitments, each new member checks t shares (a G2 multiplication each).
    const b0 = performance.now()
    for (let i = 0; i < n; i++) commitPolynomial(randomPolynomial(t2, k => new Uint8Array(randomBytes(k))))
    for (let j = 0; j < n2 * t; j++) G2.BASE.multiply(BigInt(j + 12345))
    const bound = performance.now() - b0
    console.log(`${`${n}/${t}`.padStart(7)}  ${`${n2}/${t2}`.padStart(7)}  ${fmt(ms, 0).padStart(10)}  ${fmt(bound, 0).padStart(8)}  ${fmt(ms / bound, 2).padStart(5)}`)
  }
  console.log('\nper-member CPU per round (median of 12 rounds) ÷ (hash-to-curve + G1 mul + t-term MSM + pairing check), goal ≤ 1.3:')
  console.log('members  threshold  CPU ms  bound ms  ratio  bytes sent/member/round')
  for (const [n, t] of [[4, 3], [8, 5], [16, 9]]) {
    const r = roundCpu(n, t, 12)
    console.log(`${String(n).padStart(7)}  ${String(t).padStart(9)}  ${fmt(r.perRound).padStart(6)}  ${fmt(r.bound).padStart(8)}  ${fmt(r.perRound / r.bound, 2).padStart(5)}  ${fmt(r.bytes, 0).padStart(23)}`)
  }
  const cpu = new Map([[4, roundCpu(4, 3, 6).perRound], [8, roundCpu(8, 5, 6).perRound]])
  console.log(`\nround latency, one OS process per member (fairdeal beacon demo --processes, period 1 s, 12 s);`)
  console.log(`goal (issue 22): p50 ≤ 2× one member's CPU per round at that size, measured just now: ${[...cpu].map(([n, ms]) => `${fmt(ms)} ms at ${n}`).join(', ')}`)
  console.log(`(the machine's load average now: ${loadavg()[0].toFixed(1)}; with more member processes than cores, the members' checks of a round queue for the cores)`)
  console.log('members  p50 ms  p99 ms  rounds  missed  DKG ms  p50 ÷ CPU')
  for (const n of [4, 8]) {
    const r = await demoLatency(n, 12)
    if (typeof r === 'string') console.log(`${String(n).padStart(7)}  ${r}`)
    else {
      const ratio = r.p50 / (cpu.get(n) as number)
      console.log(`${String(n).padStart(7)}  ${String(r.p50).padStart(6)}  ${String(r.p99).padStart(6)}  ${String(r.rounds).padStart(6)}  ${String(r.missed).padStart(6)}  ${String(r.dkgMs).padStart(6)}  ×${fmt(ratio, 2)} (goal ≤ ×2: ${ratio <= 2 ? 'met' : 'NOT met'})`)
    }
  }
}
