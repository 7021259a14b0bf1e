import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Daemon } from '../../src/daemon/daemon.js'
import { isPortFree, prepareLocalTable, type LocalTable, type LocalTableInit } from '../../src/daemon/local-table.js'
import type { EventFeed, NodeEvent } from '../../src/daemon/events.js'
import { verifyDataDir } from '../../src/daemon/verify-data.js'
import { verifyLogPayload } from '../../src/core/receipt.js'
import { logDbPath, openLog } from '../../src/store/log.js'
import type { LogEntry, PayloadVerifier } from '../../src/core/log/index.js'
import { canonicalJson } from '../../src/core/canonical.js'
import { CapturedLogger } from './captured-logger.js'

/**
 * Real table nodes on 127.0.0.1 for the network tests: prepareLocalTable's identities and configs,
 * Daemon.start per node (its own LevelDB in a temp dir), a captured pino logger per node.
 */
export interface TableNode {
  index: number
  name: string
  peerId: string
  dataDir: string
  daemon: Daemon
  logs: CapturedLogger
}

export class TestTable {
  readonly nodes: Array<TableNode | undefined> = []

  private constructor (readonly root: string, readonly local: LocalTable) {}

  /** `root`: where the nodes' data directories go (ROOT/nodeI), when the test made them first (a beacon group of the table's own nodes). */
  static async prepare (init: Omit<LocalTableInit, 'root'>, root?: string): Promise<TestTable> {
    root ??= await mkdtemp(join(tmpdir(), 'fairdeal-table-'))
    return new TestTable(root, await prepareLocalTable({ ...init, root, freePort: reservePort }))
  }

  get peerIds (): string[] { return this.local.peerIds }
  get seats (): string[] { return this.local.configs[0].table.seats }
  dataDir (index: number): string { return this.local.configs[index].dataDir }
  /** The seat a node holds. */
  seatOf (index: number): number { return this.seats.indexOf(this.peerIds[index]) }

  node (index: number): TableNode {
    const n = this.nodes[index]
    if (n === undefined) throw new Error(`node ${index} is not running`)
    return n
  }

  async start (index: number, logs = new CapturedLogger()): Promise<TableNode> {
    const config = this.local.configs[index]
    const daemon = await Daemon.start({ config, logger: logs.logger, tickMs: 50 })
    const n: TableNode = { index, name: this.local.names[index], peerId: daemon.peerId, dataDir: config.dataDir, daemon, logs }
    this.nodes[index] = n
    return n
  }

  async startAll (): Promise<TableNode[]> {
    const out: TableNode[] = []
    for (let i = 0; i < this.local.configs.length; i++) out.push(await this.start(i))
    return out
  }

  async stop (index: number): Promise<void> {
    const n = this.nodes[index]
    this.nodes[index] = undefined
    await n?.daemon.stop({ graceMs: 500 })
  }

  /** Seats first, the dealer last, so the dealer's stop does not reveal to nodes already gone. */
  async stopAll (): Promise<void> {
    for (let i = this.nodes.length - 1; i >= 0; i--) await this.stop(i)
  }

  async cleanup (): Promise<void> {
    await this.stopAll()
    await rm(this.root, { recursive: true, force: true })
  }
}

// Each vitest worker draws from its own block of prepareLocalTable's range (below Linux's ephemeral
// range), so test files running side by side never pick the same port; within a worker no port is
// handed out twice. A test that needs a fixed port (a link that names it) takes one of 18000–18999,
// outside every random range (20000–31999, also freeLoopbackPort's, which spawned demos use).
const BLOCK = 1_000
const blockStart = 20_000 + (Number(process.env.VITEST_POOL_ID ?? 0) % 12) * BLOCK
const handedOut = new Set<number>()

/** A free loopback port of this worker's block, not handed out before. */
export async function reservePort (): Promise<number> {
  if (handedOut.size > BLOCK / 2) handedOut.clear()
  for (;;) {
    const port = blockStart + Math.floor(Math.random() * BLOCK)
    if (handedOut.has(port) || !await isPortFree(port)) continue
    handedOut.add(port)
    return port
  }
}

/** Resolves with the first event of `feed` (past or to come) that `match` accepts. */
export async function waitEvent (feed: EventFeed, match: (e: NodeEvent) => boolean, what: string, timeoutMs = 15_000): Promise<NodeEvent> {
  return await feed.watch().until(match, what, timeoutMs)
}

/** Each seat's own cards of `hand`, by seat number, once every one of them has them (on disk by then). */
export async function seatsCards (seats: TableNode[], hand: number, timeoutMs = 20_000): Promise<Map<number, string[]>> {
  const held = new Map<number, string[]>()
  for (const s of seats) {
    const e = await waitEvent(s.daemon.events, ownCardsEvent(s, hand), `${s.name}: cards of hand ${hand}`, timeoutMs)
    held.set(s.daemon.seat?.seat as number, e.event.type === 'cards' ? e.event.cards : [])
  }
  return held
}

/** A seat's event announcing its own private cards of `hand` (on disk by then). */
export function ownCardsEvent (n: TableNode, hand: number): (e: NodeEvent) => boolean {
  return e => e.hand === hand && e.role === 'seat' && e.event.type === 'cards' && !e.event.public && e.event.seat === n.daemon.seat?.seat
}

export function seatEvent (hand: number, type: NodeEvent['event']['type']): (e: NodeEvent) => boolean {
  return e => e.hand === hand && e.role === 'seat' && e.event.type === type
}

export interface PlayOptions {
  dealerSeat?: number
  stages?: Array<{ stage: string, taker?: number }>
  timeoutMs?: number
}

/**
 * Plays one hand to the end: deal, wait until every node's seat holds its private cards, later
 * stages, reveal, then every seat's own check (shield) and receipt, and the dealer's receipt.
 * Throws when any node aborts the hand or a shield fails.
 */
export async function playHand (dealer: TableNode, nodes: TableNode[], options: PlayOptions = {}): Promise<number> {
  const timeoutMs = options.timeoutMs ?? 15_000
  const hand = await dealer.daemon.deal({ dealer: options.dealerSeat ?? 0 })
  const failed = (e: NodeEvent): boolean => e.hand === hand && e.event.type === 'aborted'
  for (const n of nodes) {
    const seat = n.daemon.seat?.seat
    const e = await waitEvent(n.daemon.events, x => failed(x) ||
      (x.hand === hand && x.role === 'seat' && x.event.type === 'cards' && x.event.seat === seat && !x.event.public), `${n.name}: cards of hand ${hand}`, timeoutMs)
    if (e.event.type === 'aborted') throw new Error(`${n.name}: hand ${hand} aborted: ${e.event.reason}: ${e.event.detail}`)
  }
  for (const s of options.stages ?? []) await dealer.daemon.stage(hand, s.stage, s.taker)
  await dealer.daemon.end(hand)
  for (const n of nodes) {
    const shield = await waitEvent(n.daemon.events, x => failed(x) || seatEvent(hand, 'shield')(x), `${n.name}: shield of hand ${hand}`, timeoutMs)
    if (shield.event.type !== 'shield' || !shield.event.ok) throw new Error(`${n.name}: hand ${hand}: ${JSON.stringify(shield.event)}`)
    await waitEvent(n.daemon.events, seatEvent(hand, 'receipt'), `${n.name}: receipt of hand ${hand}`, timeoutMs)
  }
  await waitEvent(dealer.daemon.events, e => e.hand === hand && e.role === 'dealer' && e.event.type === 'receipt', `dealer receipt of hand ${hand}`, timeoutMs)
  return hand
}

/** Every entry of a stopped node's log, as stored. */
export async function logEntries (dataDir: string): Promise<LogEntry[]> {
  const log = await openLog({ path: logDbPath(dataDir), create: false, checkOnOpen: false, signer: null })
  try {
    const out: LogEntry[] = []
    for await (const e of log.read()) out.push(e)
    return out
  } finally {
    await log.close()
  }
}

/**
 * The core's payload check, remembered by the exact payload: every member's log holds the very same
 * receipt, whose verdict is a function of its bytes alone, so a table's N logs cost one receipt
 * check, not N (a blind-v1 receipt is seconds of CPU). Each log's chain, signatures and head are
 * still checked log by log.
 */
const verdicts = new Map<string, ReturnType<PayloadVerifier>>()
const rememberedPayloadCheck: PayloadVerifier = (kind, payload, options) => {
  if (options?.verifyDoc !== undefined) return verifyLogPayload(kind, payload, options)
  let key: string
  try { key = `${kind}\n${canonicalJson(payload)}` } catch { return verifyLogPayload(kind, payload) }
  let verdict = verdicts.get(key)
  if (verdict === undefined) {
    verdict = verifyLogPayload(kind, payload)
    if (verdicts.size >= 256) verdicts.delete(verdicts.keys().next().value as string)
    verdicts.set(key, verdict)
  }
  return structuredClone(verdict)
}

/** Re-verifies a stopped node's whole log (chain, signatures, every receipt and abort, offline). */
export async function verifyNodeLog (dataDir: string): Promise<{ passed: number, failed: number, failures: string[] }> {
  return await verifyDataDir(dataDir, rememberedPayloadCheck)
}
