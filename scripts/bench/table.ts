// The table end to end (issue 3): a 4-node coinche table (atout-v1, no beacon) on loopback TCP, run
// twice: as four daemons in this process, then as four `fairdeal node` OS processes driven through
// their control endpoints. Figures, each beside the issue's goal: the time from the dealer's
// 'committed' event to the last seat's own 'cards' event (p50, p99, hands one at a time, from the
// events' own high-resolution wall-clock times, so the driver's polling adds nothing), and hands per
// second with hands pipelined (K in flight: deal → cards on every seat → end → receipt on every node).
//
// The bounds they are set against are measured in the same run: the messenger's round trip
// between two of the same nodes (5 one-way legs from COMMIT to CARDS), a synced LevelDB batch
// (2 on that path), and Ed25519 sign and verify on OpenSSL times the signatures the protocol makes
// and checks (each node checks every signature by another party once: see verify-memo.ts), priced
// in CPU time as the CPU per hand is, and measured again just before and just after each figure
// (withCryptoBeside: a signature's cost on this machine moves with its neighbours' load). In one
// process all four nodes share one JavaScript thread, so every node's work adds up on it; the
// core-per-node bound is what the same path costs when each node works on its own core, which the
// processes variant gets only as far as the machine has cores (the driver takes its share too).
// Each variant is measured warm: after 20 hands one at a time (connections up), batches of 100 hands
// in flight (at least 3, at most 12) until a batch costs less than 5% below the one before (warmUp:
// V8 compiles hot code with its optimizing compiler only after many runs).
// Before the table's figures, the same table's machines alone, in memory (machinesAlone: a figure
// that moves far less from run to run than the table's do).
// FAIRDEAL_BENCH_HANDS changes the number of hands per figure (default 500 in process, 300 with
// processes); FAIRDEAL_BENCH_PROCESSES=0 runs the in-process variant only; FAIRDEAL_BENCH_NODE_ARGS
// are Node's own arguments for the node processes (`--cpu-prof --cpu-prof-dir=DIR` profiles each).
import { spawn } from 'node:child_process'
import { createServer, connect, type AddressInfo } from 'node:net'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Level } from 'level'
import pino from 'pino'
import { signerFromSeed } from '../../src/core/identity.js'
import { signDocument } from '../../src/core/signed.js'
import { controlOfSpawnedNode, type ControlClient } from '../../src/daemon/control-client.js'
import { Daemon } from '../../src/daemon/daemon.js'
import { prepareLocalTable, type LocalTable, type LocalTableInit } from '../../src/daemon/local-table.js'
import { nativeSigner, nativeVerifyDocument } from '../../src/crypto/native-crypto.js'
import { createMessenger } from '../../src/net/messenger.js'
import type { EventSource, NodeEvent } from '../../src/daemon/events.js'
import { countStreams, formatHandCounts, installHandCounts, takeHandCounts, type HandCounts } from './lib/hand-counts.js'
import { memoryHands } from './lib/memory-hands.js'

const HANDS = Number(process.env.FAIRDEAL_BENCH_HANDS ?? 500)
const PROCESS_HANDS = Number(process.env.FAIRDEAL_BENCH_HANDS ?? 300)
/** Hands one at a time that bring the connections up, before the warm-up proper (warmUp). */
const WARMUP_HANDS = 20
const WARMUP_BATCH = 100
const WARMUP_DEPTH = 16
const WARMUP_BATCHES_MIN = 3
const WARMUP_BATCHES_MAX = 12
/** A batch that costs less than the one before by this share or less ends the warm-up. */
const WARMUP_STILL = 0.05
const PIPELINE_DEPTHS = [4, 16]
const RTT_SAMPLES = 1000
/**
 * Echoed frames before the echoes are measured: a frame's CPU falls for the first few thousand as
 * V8 optimises the echo's path (in the table's process, 99 → 84 µs over four rounds of 1,100; in a
 * process of its own, 319 µs in the first thousand and 60-67 from the fourth).
 */
const RTT_WARMUP = 3000
const SYNC_SAMPLES = 200
const CRYPTO_SAMPLES = 2000
const SEATS = 4
/** One-way legs from COMMIT to CARDS: COMMIT, PLEDGE, PLEDGES, VIEW (seat to seat), NONCE, CARDS. */
const LEGS = 6
/**
 * Synced writes one after the other on that path after the 'committed' event: the seat's before
 * PLEDGE, before its VIEW and before its NONCE, the dealer's before CARDS.
 */
const SYNCED_WRITES = 4
const GOALS = { p50: 5, p99: 25, handsPerSecond: 200 }
/** Issue 24's goals, each against a bound measured in the same run. */
const BOUND_GOALS = { cpuTimesSignatures: 2, shareOfSignatureBound: 0.5, p50TimesOneThread: 1.5 }
const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bin', 'fairdeal.js')

/**
 * Ed25519 operations of one hand, for h human seats, the dealer's node holding seat 0. A node checks
 * each signature made by another node once, and none of its own (verify-memo.ts).
 */
function cryptoCounts (h: number): Record<'pathVerify' | 'pathSign' | 'coreVerify' | 'coreSign' | 'handVerify' | 'handSign' | 'witnessVerify' | 'witnessSign', number> {
  return {
    // Commit → cards, all nodes on one thread: the commit at h-1 seats, h-1 pledges at the dealer,
    // at each of h-1 seats the PLEDGES and the h-1 pledges not its own, h-1 nonces, h-1 cards.
    // Then at each of the h seats the h-1 other seats' views (their COMMIT and PLEDGES are the ones
    // it checked itself: verify-memo.ts).
    pathVerify: (h - 1) * (h + 4) + h * (h - 1),
    // After the 'committed' event (the commit is signed by then): h pledges, the PLEDGES, h views,
    // h nonces, h cards messages (a RELAY is signed only when a VIEW could not go directly).
    pathSign: 3 * h + 1 + h,
    // The same path with a core per node: only the last pledge and nonce to arrive wait at the
    // dealer; a seat checks the commit, then the PLEDGES and h-1 pledges, then its cards.
    coreVerify: h + 4 + (h - 1),
    coreSign: h + 3 + h,
    // The whole hand, every node: each node checks the pledge, the VIEW, the NONCE and the ACK of
    // every seat but its own (at the dealer's node the other seats' pledges, nonces and acks once, as
    // the dealer; at a seat's node the pledges in the PLEDGES, the acks in the FINAL), and each seat
    // node the COMMIT, the PLEDGES, its CARDS, the REVEAL and the FINAL.
    handVerify: 4 * h * (h - 1) + 5 * (h - 1),
    // commit, pledges, reveal, final; per seat its pledge, VIEW, nonce, ack and the dealer's cards
    // message for it; per node a log entry and its head.
    handSign: 4 + 5 * h + 2 * h,
    // Witnessing (src/net/witness.ts): each of the h nodes sends its new head to the h-1 others,
    // which check it and cosign it; the node checks each cosignature's witness signature (its own
    // head inside is in its verify memo: it signed it). Counted in the bound as if every hand's
    // heads were witnessed, as they are at a table playing less than a hand a second: a node sends
    // a member at most one head a second, so at the bench's pace the heads of many hands go as one
    // (the per-hand counts show how many); the bound without it is printed beside.
    witnessVerify: 2 * h * (h - 1),
    witnessSign: h * (h - 1)
  }
}

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

/** Per hand, when each node saw what (the events' own times): filled from every node's feed as events arrive. */
class HandWatch {
  readonly #nodes: number
  readonly #committed = new Map<number, number>()
  readonly #cards = new Map<number, number[]>()
  readonly #receipts = new Map<number, number>()
  /** Per hand, when the seats' VIEWs left and when their NONCEs did: the peer check's leg. */
  readonly #viewing = new Map<number, number[]>()
  readonly #contributed = new Map<number, number[]>()
  readonly #waiters = new Map<number, Array<() => void>>()
  readonly aborted: string[] = []
  #failure: Error | undefined
  #running = true

  constructor (sources: EventSource[]) {
    this.#nodes = sources.length
    for (const source of sources) void this.#follow(source)
  }

  async #follow (source: EventSource): Promise<void> {
    let cursor = 0
    try {
      while (this.#running) {
        for (const e of await source(cursor, 200)) { cursor = e.seq; this.#see(e) }
      }
    } catch (err) {
      // A node gone (its process died): fail the waits now rather than at their deadline.
      if (this.#running) this.#failure = err as Error
      for (const list of this.#waiters.values()) for (const w of list) w()
    }
  }

  #see (e: NodeEvent): void {
    const ev = e.event
    if (e.role === 'dealer') {
      if (ev.type !== 'committed') return
      this.#committed.set(e.hand, e.time)
    } else if (ev.type === 'viewing' || ev.type === 'contributed') {
      // Each node's own events come in order, so once every seat holds its cards all of these are in.
      const map = ev.type === 'viewing' ? this.#viewing : this.#contributed
      map.set(e.hand, [...map.get(e.hand) ?? [], e.time])
      return
    } else if (ev.type === 'cards' && ev.stage === 'deal' && !ev.public) {
      this.#cards.set(e.hand, [...this.#cards.get(e.hand) ?? [], e.time])
    } else if (ev.type === 'receipt') {
      this.#receipts.set(e.hand, (this.#receipts.get(e.hand) ?? 0) + 1)
    } else if (ev.type === 'aborted') {
      this.aborted.push(`hand ${e.hand}: ${ev.reason} (${ev.detail})`)
    } else return
    const waiters = this.#waiters.get(e.hand)
    if (waiters !== undefined) { this.#waiters.delete(e.hand); for (const w of waiters) w() }
  }

  async #until (hand: number, done: () => boolean): Promise<void> {
    const deadline = Date.now() + 30_000
    while (!done()) {
      if (this.#failure !== undefined) throw this.#failure
      if (this.aborted.length > 0) throw new Error(`aborted: ${this.aborted[0]}`)
      if (Date.now() > deadline) throw new Error(`hand ${hand} stalled`)
      await new Promise<void>(resolve => {
        const list = this.#waiters.get(hand) ?? []
        list.push(resolve)
        this.#waiters.set(hand, list)
        setTimeout(resolve, 1_000).unref()
      })
    }
  }

  /** Resolves with ms from the dealer's commit to the last seat holding its cards. */
  async cards (hand: number): Promise<number> {
    await this.#until(hand, () => this.#committed.has(hand) && (this.#cards.get(hand)?.length ?? 0) === this.#nodes)
    const dealt = Math.max(...this.#cards.get(hand) as number[]) - (this.#committed.get(hand) as number)
    this.#cards.delete(hand)
    this.#committed.delete(hand)
    return dealt
  }

  /** Ms from the first seat's VIEW leaving to the last seat's NONCE leaving, for a dealt hand. */
  viewLeg (hand: number): number {
    const views = this.#viewing.get(hand) ?? []
    const nonces = this.#contributed.get(hand) ?? []
    this.#viewing.delete(hand)
    this.#contributed.delete(hand)
    return views.length === 0 || nonces.length === 0 ? NaN : Math.max(...nonces) - Math.min(...views)
  }

  async receipts (hand: number): Promise<void> {
    await this.#until(hand, () => (this.#receipts.get(hand) ?? 0) === this.#nodes)
    this.#receipts.delete(hand)
  }

  stop (): void { this.#running = false }
}

/** A running table as the figures need it, whichever way its nodes run. */
interface BenchTable {
  deal: () => Promise<number>
  end: (hand: number) => Promise<void>
  watch: HandWatch
  /** CPU ms used so far by each OS process involved: the nodes' and this driver's. */
  cpuMs: () => Promise<Record<string, Cpu>>
  rejections: () => Promise<number>
  /** Each node's status (its hands in play and their phases), printed when a hand stalls. */
  statuses: () => Promise<Array<Record<string, unknown>>>
  /** What the hands since the last call did (lib/hand-counts.ts), where the nodes run in this process. */
  counts?: () => HandCounts
  /** The last lines each node process wrote (its warnings), printed when a hand stalls. */
  outputs?: () => string[]
}

/**
 * The bounds measured in this run, in ms: the network's and the disk's at the start, the
 * signatures' from Ed25519's cost as measured beside each figure (cryptoBounds); and two unit
 * costs in CPU ms measured with the first, a frame through the messenger (both ends) and a synced
 * LevelDB batch (the kernel's part included), which price a hand's counts (pricedCounts).
 */
interface Bounds { network: number, disk: number, viewLeg: number, frameCpu: number, syncCpu: number }

type Ed25519Costs = ReturnType<typeof ed25519Costs>

/** The bounds that price signatures, for Ed25519 costs `ed` (ms per signature and per check). */
function cryptoBounds (b: Bounds, ed: Ed25519Costs): { onePath: number, corePath: number, handCrypto: number, handCryptoUnwitnessed: number } {
  const n = cryptoCounts(SEATS)
  const handCryptoUnwitnessed = n.handVerify * ed.verify + n.handSign * ed.sign
  return {
    onePath: b.network + b.disk + n.pathVerify * ed.verify + n.pathSign * ed.sign,
    corePath: b.network + b.disk + n.coreVerify * ed.verify + n.coreSign * ed.sign,
    handCrypto: handCryptoUnwitnessed + n.witnessVerify * ed.verify + n.witnessSign * ed.sign,
    handCryptoUnwitnessed
  }
}

/**
 * Runs `figure`, measuring Ed25519's cost just before and just after it: the bounds the figure is
 * set against price each signature at the mean of the two. The cost of a signature on this
 * machine moves with what else runs on it (measured once at the start, a check cost 82 to 143 µs
 * from one run to the next), so a bound measured minutes away from its figure says little.
 */
async function withCryptoBeside<T> (b: Bounds, figure: () => Promise<T>): Promise<{ result: T, bounds: ReturnType<typeof cryptoBounds>, ed: Ed25519Costs, text: string }> {
  const before = ed25519Costs()
  const result = await figure()
  const after = ed25519Costs()
  const ed = { sign: (before.sign + after.sign) / 2, verify: (before.verify + after.verify) / 2 }
  const us = (ms: number): string => (ms * 1000).toFixed(0)
  const text = `Ed25519 beside it: sign ${us(before.sign)}/${us(after.sign)} µs, verify ${us(before.verify)}/${us(after.verify)} µs (before/after)`
  return { result, bounds: cryptoBounds(b, ed), ed, text }
}

/**
 * A hand's counts at this run's unit costs: its table frames at the messenger's CPU a frame, its
 * synced writes (LevelDB's and the files') at a synced batch's, its signatures and checks at
 * Ed25519's. Each unit is what the thing costs on its own, without the protocol's work around it,
 * so the sum is about the least a hand with these counts can cost (with hands in flight, less: a
 * tick's frames to one peer share a socket write there): set beside the signature bound,
 * it says how much of the CPU goal the counts leave to everything else (parsing, encoding, hashing,
 * the machines, the driver) and so how far fewer frames or fewer synced writes would have to go.
 */
function pricedCounts (counted: HandCounts, hands: number, b: Bounds, ed: Ed25519Costs, bound: number): string {
  const perHand = (m: Record<string, number>): number => Object.values(m).reduce((x, y) => x + y, 0) / hands
  const frames = perHand(counted.wireParses)
  const syncs = (counted.syncedDbWrites + counted.fileSyncs) / hands
  const parts = { frames: frames * b.frameCpu, syncs: syncs * b.syncCpu, signatures: perHand(counted.signs) * ed.sign + perHand(counted.verifies) * ed.verify }
  const total = parts.frames + parts.syncs + parts.signatures
  const goal = BOUND_GOALS.cpuTimesSignatures * bound
  return `its counts at this run's unit costs: ${f1(frames)} table frames × ${(b.frameCpu * 1000).toFixed(0)} µs = ${f2(parts.frames)} ms,` +
    ` ${f1(syncs)} synced writes × ${(b.syncCpu * 1000).toFixed(0)} µs = ${f2(parts.syncs)} ms, its signatures and checks as counted ${f2(parts.signatures)} ms;` +
    ` together ${f2(total)} ms, ×${f2(total / bound)} the signature bound, which leaves ${f2(goal - total)} ms of the goal's ${f2(goal)} to all the rest`
}

/**
 * CPU ms per hand between two readings of BenchTable.cpuMs: the total, the nodes' alone (without
 * the driver's own process, when it is a part of its own), and each part when there are several.
 */
function cpuPerHand (before: Record<string, Cpu>, after: Record<string, Cpu>, hands: number): { total: number, nodes: number, text: string } {
  const parts = Object.keys(after).map(k => [k, (after[k].user + after[k].system - before[k].user - before[k].system) / hands] as const)
  const total = parts.reduce((sum, [, ms]) => sum + ms, 0)
  const nodes = parts.reduce((sum, [k, ms]) => k === DRIVER ? sum : sum + ms, 0)
  // The kernel's part (system time: socket reads and writes over loopback, fsyncs, wake-ups).
  const system = Object.keys(after).reduce((sum, k) => sum + (after[k].system - before[k].system) / hands, 0)
  const wakes = Object.keys(after).reduce((sum, k) => sum + (after[k].wakes - before[k].wakes) / hands, 0)
  const kernel = `; ${f1(system)} ms of it in the kernel; ${f1(wakes)} wake-ups of ${parts.length === 1 ? 'its main thread' : 'their main threads'}`
  const text = `${f1(total)} ms` + (parts.length === 1 ? ` (${parts[0][0]}${kernel})` : ` (${parts.map(([k, ms]) => `${k} ${f1(ms)}`).join(', ')}${kernel})`)
  return { total, nodes, text }
}

const DRIVER = 'driver'

/** CPU per hand against the signature bound: the total, and the nodes' alone when the driver is a process of its own. */
function cpuVersusBound (cpu: { total: number, nodes: number }, bound: number): string {
  const goal = BOUND_GOALS.cpuTimesSignatures
  const line = (ms: number): string => `×${f2(ms / bound)} its signature bound of ${f2(bound)} ms (goal ≤ ×${goal}: ${verdict(ms <= goal * bound)})`
  return cpu.nodes === cpu.total ? line(cpu.total) : `${line(cpu.total)}; the nodes alone ${f1(cpu.nodes)} ms, ${line(cpu.nodes)}`
}

/** One whole hand; returns ms from the commit to the last seat holding its cards. */
async function playHand (t: BenchTable, legs?: number[]): Promise<number> {
  const hand = await t.deal()
  const dealt = await t.watch.cards(hand)
  const leg = t.watch.viewLeg(hand)
  if (legs !== undefined && Number.isFinite(leg)) legs.push(leg)
  await t.end(hand)
  await t.watch.receipts(hand)
  return dealt
}

/** `hands` whole hands, `depth` of them in flight at once; returns each one's commit → cards ms. */
async function pipelined (t: BenchTable, hands: number, depth: number): Promise<number[]> {
  let next = 0
  const dealt: number[] = []
  await Promise.all(Array.from({ length: depth }, async () => {
    while (next < hands) { next++; dealt.push(await playHand(t)) }
  })).catch(async (err: unknown) => {
    // What each node still holds, and what it refused: where the stalled hand stopped.
    for (const [i, st] of (await t.statuses().catch(() => [])).entries()) {
      const hands = (h: unknown): string => (h as Array<{ hand: number, phase: string }>).map(x => `${x.hand}:${x.phase}`).join(' ')
      console.log(`  node ${i}: dealer hands [${hands(st.dealerHands ?? [])}], seat hands [${hands(st.seatHands ?? [])}], rejected messages ${String(st.rejectedMessages)}`)
    }
    for (const [i, out] of (t.outputs?.() ?? []).entries()) {
      if (out.trim() !== '') console.log(`  node ${i} wrote, last:\n${out.trim().split('\n').slice(-12).map(l => `    ${l}`).join('\n')}`)
    }
    throw err
  })
  return dealt
}

/**
 * Plays the table warm before anything is measured: batches of hands in flight until the CPU a
 * batch's hands cost stops falling. V8 compiles a function with its optimizing compiler only once
 * it has run it many times, and a node process runs each function a quarter as often as four nodes
 * in one process do. Measured with perf (`--perf-basic-prof`, one seat node's main thread): 59% of
 * its samples in baseline (unoptimized) code in its first 10 s, 12-14% from its 20th to its 40th
 * second, 5-6% from its 50th on; in one process, 28% in the first 10 s and 1-2% later. A daemon
 * that hosts tables runs warm: the first seconds of a process are not what a hand costs it.
 */
async function warmUp (t: BenchTable): Promise<string> {
  const perBatch: number[] = []
  for (let i = 0; i < WARMUP_BATCHES_MAX; i++) {
    const cpu0 = await t.cpuMs()
    await pipelined(t, WARMUP_BATCH, WARMUP_DEPTH)
    perBatch.push(cpuPerHand(cpu0, await t.cpuMs(), WARMUP_BATCH).total)
    const [before, last] = perBatch.slice(-2)
    if (perBatch.length >= WARMUP_BATCHES_MIN && last > before * (1 - WARMUP_STILL)) break
  }
  return `warmed up with ${perBatch.length * WARMUP_BATCH} hands, ${WARMUP_DEPTH} in flight, until a batch of ${WARMUP_BATCH} cost less than ` +
    `${100 * WARMUP_STILL}% below the one before (${WARMUP_BATCHES_MIN} to ${WARMUP_BATCHES_MAX} batches); cpu per hand by batch: ${perBatch.map(f1).join(', ')} ms`
}

/** The figures against the goals and the bounds; `cores` is what the nodes can use at once. */
async function measure (t: BenchTable, hands: number, b: Bounds, cores: number): Promise<void> {
  const latencies: number[] = []
  const legs: number[] = []
  const { result: { cpu, counted }, bounds: c, ed, text: beside } = await withCryptoBeside(b, async () => {
    const cpu0 = await t.cpuMs()
    t.counts?.()
    for (let i = 0; i < hands; i++) latencies.push(await playHand(t, legs))
    const counted = t.counts?.()
    return { cpu: cpuPerHand(cpu0, await t.cpuMs(), hands), counted }
  })
  latencies.sort((x, y) => x - y)
  legs.sort((x, y) => x - y)
  console.log(`  commit → every seat holds its cards (one hand at a time, ${hands} hands; cpu per hand ${cpu.text},` +
    ` ${cpuVersusBound(cpu, c.handCrypto)}; ${beside}):`)
  if (counted !== undefined) {
    for (const line of formatHandCounts(counted, hands)) console.log(`    per hand: ${line}`)
    console.log(`    priced: ${pricedCounts(counted, hands, b, ed, c.handCrypto)}`)
  }
  for (const [name, p, goal] of [['p50', 0.5, GOALS.p50], ['p99', 0.99, GOALS.p99]] as const) {
    const value = percentile(latencies, p)
    const leg = percentile(legs, p)
    const againstOneThread = name === 'p50' ? ` (goal ≤ ×${BOUND_GOALS.p50TimesOneThread}: ${verdict(value <= BOUND_GOALS.p50TimesOneThread * c.onePath)})` : ''
    console.log(`    ${name} ${f2(value).padStart(6)} ms  goal < ${String(goal).padEnd(2)} ms ${verdict(value < goal).padEnd(7)}` +
      `  ×${f2(value / b.network)} the network legs, ×${f2(value / c.onePath)} the one-thread bound of ${f2(c.onePath)} ms${againstOneThread}, ×${f2(value / c.corePath)} the core-per-node bound`)
    // The peer check's share (VIEWs out → last NONCE out): what the hand costs beside the protocol without it.
    console.log(`        of which the seats' view leg ${f2(leg).padStart(6)} ms (bound: one network leg + a synced write = ${f2(b.viewLeg)} ms);` +
      ` without the leg ≈ ${f2(value - leg)} ms`)
  }
  for (const depth of PIPELINE_DEPTHS) {
    const { result: { underLoad, seconds, cpu, counted }, bounds: c, ed, text: beside } = await withCryptoBeside(b, async () => {
      const t0 = performance.now()
      const cpu0 = await t.cpuMs()
      t.counts?.()
      const underLoad = await pipelined(t, hands, depth)
      const seconds = (performance.now() - t0) / 1000
      const counted = t.counts?.()
      return { underLoad, seconds, cpu: cpuPerHand(cpu0, await t.cpuMs(), hands), counted }
    })
    const signatureBound = cores * 1000 / c.handCrypto
    const rate = hands / seconds
    underLoad.sort((x, y) => x - y)
    console.log(`  pipelined, ${String(depth).padStart(2)} in flight: ${rate.toFixed(0).padStart(4)} hands/s  goal > ${GOALS.handsPerSecond}  ${verdict(rate > GOALS.handsPerSecond).padEnd(7)}` +
      `  ${(100 * rate / signatureBound).toFixed(0)}% of the ${cores}-core signature bound (${signatureBound.toFixed(0)} hands/s;` +
      ` goal ≥ ${100 * BOUND_GOALS.shareOfSignatureBound}%: ${verdict(rate >= BOUND_GOALS.shareOfSignatureBound * signatureBound)});` +
      ` cpu per hand ${cpu.text}, ${cpuVersusBound(cpu, c.handCrypto)}, ${(cpu.total * rate / 10).toFixed(0)}% of a core;` +
      ` commit → cards under load p50 ${f2(percentile(underLoad, 0.5))} ms, p99 ${f2(percentile(underLoad, 0.99))} ms; ${beside}`)
    // Hands in flight share synced batches (src/protocol/persist-join.ts) and socket writes (a
    // connection's frames of one tick, src/net/transport-patches.ts): the counts show how many.
    if (counted !== undefined) {
      console.log(`    per hand: ${formatHandCounts(counted, hands).filter(line => line.startsWith('socket writes') || line.startsWith('synced writes') || line.startsWith('garbage')).join('; ')}`)
      console.log(`    priced: ${pricedCounts(counted, hands, b, ed, c.handCrypto)}`)
    }
  }
  if (t.watch.aborted.length > 0) console.log(`  aborted hands: ${t.watch.aborted.length} (first: ${t.watch.aborted[0]})`)
  const rejected = await t.rejections()
  if (rejected > 0) console.log(`  rejected messages: ${rejected}`)
}

/** The benchmarks' table; `more` changes it (the nat bench: seats that listen nowhere). */
export async function localTable (root: string, more: Partial<LocalTableInit> = {}): Promise<LocalTable> {
  return await prepareLocalTable({
    ...more,
    root,
    game: 'coinche',
    scheme: 'atout-v1',
    seats: SEATS,
    beacon: 'none',
    transport: 'tcp',
    // Generous: a slow machine must not turn the benchmark into a test of the deadlines.
    timeouts: { contributeMs: 60_000, ackMs: 60_000, revealMs: 600_000 }
  })
}

const ownCpuMs = (): number => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }

const MACHINE_WARMUP = 300
const MACHINE_BATCHES = 9
const MACHINE_BATCH = 100

/**
 * The machines alone: the same table's dealer and seat machines wired in memory, every document
 * through the real wire encoding and schema check, with the daemon's native Ed25519 and one verify
 * memo per node (lib/memory-hands.ts): no network, disk, log or libp2p. The table's figures move
 * 15-30% from run to run on this shared machine, which hides a change of 10-20% in what the
 * machines do a hand. Batches here vary too (a neighbour's load, a major GC), so the figure is the
 * fastest batch, the one least disturbed, and its ratio to the signatures and checks those hands
 * made (no log, so no log or witness signatures) at Ed25519's cost measured just after, which
 * moves with the machine's speed as the batch does.
 */
async function machinesAlone (): Promise<string> {
  await installHandCounts()
  const table = memoryHands()
  for (let i = 0; i < MACHINE_WARMUP; i++) table.play()
  takeHandCounts()
  const perHand: number[] = []
  for (let b = 0; b < MACHINE_BATCHES; b++) {
    const t0 = ownCpuMs()
    for (let i = 0; i < MACHINE_BATCH; i++) table.play()
    perHand.push((ownCpuMs() - t0) / MACHINE_BATCH)
  }
  const counted = takeHandCounts()
  const ed = ed25519Costs()
  const hands = MACHINE_BATCHES * MACHINE_BATCH
  const total = (m: Record<string, number>): number => Object.values(m).reduce((x, y) => x + y, 0) / hands
  const signs = total(counted.signs)
  const verifies = total(counted.verifies)
  const bound = signs * ed.sign + verifies * ed.verify
  perHand.sort((x, y) => x - y)
  const [fastest, median] = [perHand[0], perHand[Math.floor(perHand.length / 2)]]
  return `the machines alone (this table's dealer and seat machines in memory, through the wire codec, no network, disk or log; one thread):` +
    ` ${f2(fastest)} ms CPU a hand in the fastest of ${MACHINE_BATCHES} batches of ${MACHINE_BATCH} hands (after ${MACHINE_WARMUP}; median ${f2(median)}, slowest ${f2(perHand[perHand.length - 1])}),` +
    ` ×${f2(fastest / bound)} their ${f1(signs)} signatures and ${f1(verifies)} checks at Ed25519's cost measured after them (sign ${(ed.sign * 1000).toFixed(0)} µs,` +
    ` verify ${(ed.verify * 1000).toFixed(0)} µs: ${f2(bound)} ms)`
}
/** CPU ms so far, user and system (the kernel's, on the process's behalf), apart. */
interface Cpu { user: number, system: number, wakes: number }
const ownCpu = async (): Promise<Cpu> => { const u = process.cpuUsage(); return { user: u.user / 1000, system: u.system / 1000, wakes: await mainThreadWakes(process.pid) } }

/**
 * How many times a process's main thread has gone to sleep and been woken (Linux's voluntary
 * context switches of the thread group's leader: the event loop waiting in epoll, mostly); NaN
 * where /proc does not say. Each costs a context switch and the event loop's turn.
 */
async function mainThreadWakes (pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '')
  const m = /^voluntary_ctxt_switches:\s*(\d+)$/m.exec(status)
  return m === null ? NaN : Number(m[1])
}

/** The four daemons in this process; measures the bounds on them and returns them for the other variant. */
async function inProcess (root: string): Promise<Bounds> {
  const logger = pino({ level: 'silent' })
  const daemons: Daemon[] = []
  let watch: HandWatch | undefined
  try {
    const table = await localTable(root)
    await installHandCounts()
    for (const config of table.configs) daemons.push(await Daemon.start({ config, logger }))
    for (const d of daemons) countStreams(d.node)
    const dealer = daemons[0]
    watch = new HandWatch(daemons.map(d => async (after, waitMs) => await d.events.wait(after, waitMs)))
    const t: BenchTable = {
      deal: async () => await dealer.deal(),
      end: async hand => { await dealer.end(hand) },
      watch,
      cpuMs: async () => ({ 'all nodes and the driver': await ownCpu() }),
      rejections: async () => daemons.reduce((sum, d) => sum + d.rejections, 0),
      statuses: async () => daemons.map(d => d.status()),
      counts: takeHandCounts
    }
    // Connections up, code warm.
    for (let i = 0; i < WARMUP_HANDS; i++) await playHand(t)
    const warm = await warmUp(t)

    const rtt = await messengerRtt(dealer, daemons[1])
    const raw = await rawTcpCpuPerFrame()
    const sync = await syncedPut(root)
    const ed = ed25519Costs()
    const n = cryptoCounts(SEATS)
    const network = rtt.p50 * LEGS / 2
    const b: Bounds = {
      network,
      disk: sync.p50 * SYNCED_WRITES,
      // The peer check: a VIEW crosses one leg, then the NONCE is saved (synced) before it leaves.
      viewLeg: rtt.p50 / 2 + sync.p50,
      frameCpu: rtt.cpuPerFrame,
      syncCpu: sync.cpu
    }
    const c = cryptoBounds(b, ed)
    console.log(`${SEATS}-node coinche table (atout-v1, no beacon) over loopback TCP; this machine has ${availableParallelism()} cores`)
    console.log(`measured: messenger rtt p50 ${f2(rtt.p50)} ms (p99 ${f2(rtt.p99)}), ${(rtt.cpuPerFrame * 1000).toFixed(0)} µs CPU a frame (both ends; ${(raw * 1000).toFixed(0)} µs over a bare TCP socket); synced LevelDB batch p50 ${f2(sync.p50)} ms (p99 ${f2(sync.p99)}, ${(sync.cpu * 1000).toFixed(0)} µs CPU);` +
      ` Ed25519 sign ${(ed.sign * 1000).toFixed(0)} µs, verify ${(ed.verify * 1000).toFixed(0)} µs (CPU time)`)
    console.log(`bounds, commit → cards: network ${LEGS} legs ${f2(network)} ms; + ${SYNCED_WRITES} synced writes + ${n.pathVerify} verifications and ${n.pathSign} signatures` +
      ` on one thread = ${f2(c.onePath)} ms; with a core per node (${n.coreVerify} + ${n.coreSign} on the path) = ${f2(c.corePath)} ms`)
    console.log(`bounds, throughput: ${n.handVerify} verifications + ${n.handSign} signatures per hand, and witnessing the ${SEATS} nodes' heads ${n.witnessVerify} + ${n.witnessSign},` +
      ` = ${f2(c.handCrypto)} ms of one core (the signature bound), at most ${(1000 / c.handCrypto).toFixed(0)} hands/s per core`)
    console.log(`  (witnessing counted as part of every hand: each node appends once a hand and sends its head to the ${SEATS - 1} others, each of which checks it and` +
      ` cosigns it (${n.witnessSign} signatures), and the node checks each cosignature (${n.witnessVerify} checks in all), as at a table playing less than a hand a second;` +
      ` a node sends a member at most one head a second, so at this pace the heads of many hands go as one (the per-hand counts below);` +
      ` without witnessing the bound is ${f2(c.handCryptoUnwitnessed)} ms; signatures priced at Node's native Ed25519 as measured above; each figure below` +
      ' is set against these bounds with Ed25519 measured again just before and after it)')
    console.log(await machinesAlone())
    console.log(`in one process: the four daemons share one JavaScript thread; ${warm}`)
    await measure(t, HANDS, b, 1)
    return b
  } finally {
    watch?.stop()
    for (const d of daemons.reverse()) await d.stop({ graceMs: 0 }).catch(() => {})
  }
}

interface NodeProcess { pid: number, client: ControlClient, stop: () => Promise<void>, output: () => string }

/** `fairdeal node --config FILE` as its own OS process, ready once it has written its control file. */
async function startNodeProcess (file: string, dataDir: string): Promise<NodeProcess> {
  const nodeArgs = (process.env.FAIRDEAL_BENCH_NODE_ARGS ?? '').split(' ').filter(a => a !== '')
  const child = spawn(process.execPath, [...nodeArgs, BIN, 'node', '--config', file], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FAIRDEAL_LOG_LEVEL: process.env.FAIRDEAL_BENCH_NODE_LOG ?? 'warn' }
  })
  let output = ''
  const keep = (chunk: string): void => { output = (output + chunk).slice(-4000) }
  child.stdout.setEncoding('utf8').on('data', keep)
  child.stderr.setEncoding('utf8').on('data', keep)
  child.once('error', err => { keep(err.message) })
  const exited = new Promise<void>(resolve => child.once('exit', () => { resolve() }))
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
    await exited
    clearTimeout(timer)
  }
  try {
    const client = await controlOfSpawnedNode(child, dataDir, { name: `${file}: fairdeal node`, detail: () => `: ${output.trim()}` })
    return { pid: child.pid as number, client, stop, output: () => output }
  } catch (err) {
    await stop()
    throw err
  }
}

/** User and system CPU ms of a process so far, from Linux's /proc (clock ticks of 10 ms), and its main thread's wake-ups; NaN elsewhere. */
async function processCpu (pid: number): Promise<Cpu> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const wakes = await mainThreadWakes(pid)
  return stat === '' ? { user: NaN, system: NaN, wakes } : { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10, wakes }
}

/** The four nodes as OS processes, driven only through their control endpoints. */
async function inProcesses (root: string, b: Bounds): Promise<void> {
  const nodes: NodeProcess[] = []
  let watch: HandWatch | undefined
  let streams: Array<ReturnType<ControlClient['eventStream']>> = []
  try {
    const table = await localTable(root)
    const started = await Promise.allSettled(table.files.map(async (file, i) => await startNodeProcess(file, table.configs[i].dataDir)))
    for (const s of started) if (s.status === 'fulfilled') nodes.push(s.value)
    for (const s of started) if (s.status === 'rejected') throw s.reason
    const dealer = nodes[0].client
    // Each node's events on one stream (GET /events?stream=1): a long poll would cost every node a
    // request and a response per event, about 8 a hand, and the driver as much again.
    streams = nodes.map(p => p.client.eventStream())
    watch = new HandWatch(streams.map(s => s.source))
    const t: BenchTable = {
      deal: async () => await dealer.deal(),
      end: async hand => { await dealer.end(hand) },
      watch,
      cpuMs: async () => ({ ...Object.fromEntries(await Promise.all(nodes.map(async (p, i) => [table.names[i], await processCpu(p.pid)]))), [DRIVER]: await ownCpu() }),
      rejections: async () => (await Promise.all(nodes.map(async p => Number((await p.client.status()).rejectedMessages)))).reduce((x, y) => x + y, 0),
      statuses: async () => await Promise.all(nodes.map(async p => await p.client.status())),
      outputs: () => nodes.map(p => p.output())
    }
    for (let i = 0; i < WARMUP_HANDS; i++) await playHand(t)
    const warm = await warmUp(t)
    const cores = Math.min(SEATS, availableParallelism())
    console.log(`as ${SEATS} OS processes (\`fairdeal node\`, driven over their control endpoints): ${SEATS} nodes and this driver share ${availableParallelism()} cores; ${warm}`)
    await measure(t, PROCESS_HANDS, b, cores)
  } finally {
    watch?.stop()
    for (const s of streams) s.close()
    await Promise.all(nodes.map(async p => { await p.stop() }))
  }
}

/** The frame the echoes send: about the size of a COMMIT frame. */
const ECHO_FRAME = new Uint8Array(1200).fill(0x61)

/**
 * RTT_WARMUP round trips of `echo`, then RTT_SAMPLES timed ones: their ms, sorted, and this
 * process's CPU ms a frame over the timed ones (a round trip is two frames, each through both ends).
 */
async function timedEchoes (echo: () => Promise<void>): Promise<{ sorted: number[], cpuPerFrame: number }> {
  for (let i = 0; i < RTT_WARMUP; i++) await echo()
  const sorted: number[] = []
  const cpu0 = ownCpuMs()
  for (let i = 0; i < RTT_SAMPLES; i++) {
    const t0 = performance.now()
    await echo()
    sorted.push(performance.now() - t0)
  }
  const cpuPerFrame = (ownCpuMs() - cpu0) / RTT_SAMPLES / 2
  sorted.sort((x, y) => x - y)
  return { sorted, cpuPerFrame }
}

/** Raw messenger round trip between the dealer's node and a seat's, on their existing connection. */
async function messengerRtt (a: Daemon, b: Daemon): Promise<{ p50: number, p99: number, cpuPerFrame: number }> {
  const logger = pino({ level: 'silent' })
  const protocol = '/fairdeal-bench/echo/1'
  const ma = await createMessenger(a.node, { protocol, maxFrameBytes: 4096, logger })
  const mb = await createMessenger(b.node, { protocol, maxFrameBytes: 4096, logger })
  try {
    mb.onFrame(async (from, frame) => { await mb.send(from, frame) })
    let pending: (() => void) | undefined
    ma.onFrame(() => { const p = pending; pending = undefined; p?.() })
    const { sorted, cpuPerFrame } = await timedEchoes(async () => {
      const back = new Promise<void>(resolve => { pending = resolve })
      await ma.send(b.peerId, ECHO_FRAME)
      await back
    })
    return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), cpuPerFrame }
  } finally {
    await ma.close()
    await mb.close()
  }
}

/**
 * CPU ms a frame of the same size costs over a bare loopback TCP socket, both ends, echoed as
 * messengerRtt echoes: the kernel's and Node's share of a frame, without noise, yamux and the
 * messenger (the rest of messengerRtt's figure is theirs).
 */
async function rawTcpCpuPerFrame (): Promise<number> {
  const server = createServer(socket => { socket.on('data', data => { socket.write(data) }) })
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', resolve) })
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1')
  client.setNoDelay(true)
  try {
    await new Promise<void>((resolve, reject) => { client.once('connect', resolve).once('error', reject) })
    let want = 0
    let got = 0
    let pending: (() => void) | undefined
    client.on('data', (data: Buffer) => {
      got += data.length
      if (got >= want) { const p = pending; pending = undefined; p?.() }
    })
    const { cpuPerFrame } = await timedEchoes(async () => {
      want += ECHO_FRAME.length
      const back = new Promise<void>(resolve => { pending = resolve })
      client.write(ECHO_FRAME)
      await back
    })
    return cpuPerFrame
  } finally {
    client.destroy()
    await new Promise<void>(resolve => { server.close(() => { resolve() }) })
  }
}

/** A synced LevelDB batch of a hand snapshot and the meta record, as the daemon's persist effects do. */
async function syncedPut (dir: string): Promise<{ p50: number, p99: number, cpu: number }> {
  const db = new Level<string, unknown>(join(dir, 'sync-db'), { valueEncoding: 'json' })
  await db.open()
  const value = { blob: 'x'.repeat(3000) }
  const samples: number[] = []
  let cpu0 = 0
  try {
    for (let i = 0; i < SYNC_SAMPLES + 20; i++) {
      if (i === 20) cpu0 = ownCpuMs()
      const t0 = performance.now()
      const ops: Array<{ type: 'put', key: string, value: unknown }> = [{ type: 'put', key: `k${i % 8}`, value }, { type: 'put', key: 'meta', value: { n: i } }]
      await db.batch(ops, { sync: true } as never)
      if (i >= 20) samples.push(performance.now() - t0)
    }
    // This process's CPU a batch, LevelDB's writer thread and the kernel's fsync included.
    const cpu = (ownCpuMs() - cpu0) / SYNC_SAMPLES
    samples.sort((x, y) => x - y)
    return { p50: percentile(samples, 0.5), p99: percentile(samples, 0.99), cpu }
  } finally {
    await db.close()
  }
}

/**
 * Mean ms of one native Ed25519 signature and one check, on a pledge-sized document, in CPU time
 * (this process's user + system), as the CPU per hand is counted: on a machine shared with other
 * work, wall time would count the time the process waited for a core as signature cost.
 */
function ed25519Costs (): { sign: number, verify: number } {
  const seed = new Uint8Array(32).fill(7)
  const signer = nativeSigner(seed, signerFromSeed(seed).peerId)
  const body = { table: 'demo-table', hand: 1, commit: 'ab'.repeat(32), seat: 1, nonceHash: 'cd'.repeat(32) }
  const doc = signDocument('pledge', body, signer)
  const time = (fn: () => unknown): number => {
    for (let i = 0; i < 200; i++) fn()
    const t0 = ownCpuMs()
    for (let i = 0; i < CRYPTO_SAMPLES; i++) fn()
    return (ownCpuMs() - t0) / CRYPTO_SAMPLES
  }
  const sign = time(() => signDocument('pledge', body, signer))
  const verify = time(() => { if (!nativeVerifyDocument(doc)) throw new Error('the bench document does not verify') })
  return { sign, verify }
}

const f1 = (x: number): string => Number.isNaN(x) ? 'n/a' : x.toFixed(1)
const f2 = (x: number): string => x.toFixed(2)
const verdict = (ok: boolean): string => ok ? 'met' : 'NOT met'

export async function run (): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'fairdeal-bench-table-'))
  try {
    const bounds = await inProcess(join(root, 'in-process'))
    if (process.env.FAIRDEAL_BENCH_PROCESSES !== '0') await inProcesses(join(root, 'processes'), bounds)
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}
