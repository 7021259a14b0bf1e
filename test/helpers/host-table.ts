import { mkdtemp, rm } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { Level } from 'level'
import { prepareLocalTable, type LocalTable } from '../../src/daemon/local-table.js'
import { TableHost, type StateStore } from '../../src/daemon/table-host.js'
import { EventFeed } from '../../src/daemon/events.js'
import { verifyMemo } from '../../src/daemon/verify-memo.js'
import { loadIdentity } from '../../src/net/identity.js'
import { nativeSigner } from '../../src/crypto/native-crypto.js'
import { logDbPath, openLog, type Log } from '../../src/store/log.js'
import { stateValueEncoding } from '../../src/store/state-encoding.js'
import { machinesFor } from '../../src/protocol/machines.js'
import { decodeFrame } from '../../src/protocol/wire.js'
import { systemClock } from '../../src/beacon/clock.js'
import { dealerMetaKey, type DealerMeta, type LoggedOutcome } from '../../src/protocol/dealer.js'
import type { Timeouts } from '../../src/protocol/types.js'
import type { Signed } from '../../src/core/signed.js'
import { reservePort } from './table-nodes.js'

/**
 * A table's TableHosts, one per node, each on its own real LevelDB and log, as a daemon builds
 * them, with the frames between them carried in memory (encoded and decoded as on the wire). What
 * the network tests cannot do is done here: hold a node's state writes at a gate (so that lists of
 * effects queue behind one), see each synced write's keys, and crash a node at a chosen write.
 */
export interface HostNode {
  index: number
  peerId: string
  host: TableHost
  events: EventFeed
  /**
   * The keys of each synced state write through the state store, in order (one entry per put, del
   * or batch); not the state writes that go in a log append's own batch.
   */
  writes: string[][]
  /**
   * Called before each synced state write with its keys: a promise it returns holds the write;
   * `'crash-after'` lets it reach the disk, then crashes the node before anything else it does.
   */
  gate: ((keys: string[]) => Promise<void> | 'crash-after' | undefined) | undefined
  crashed: boolean
  /** Resolves when a gate's `'crash-after'` crashed the node. */
  whenCrashed: Promise<void>
  /** Each document the node sent, with the dealer's hand counter its head file held at that moment. */
  sent: Array<{ type: string, hand: unknown, counter: number | undefined }>
  /** Resolves once a document of this type and hand has been handed to the node's TableHost. */
  whenReceived: (type: string, hand: number) => Promise<void>
  /** Hands a document from another node to this node's TableHost (a frame arriving). */
  deliver: (from: string, doc: Signed<unknown>) => void
}

interface Running {
  db: Level<string, unknown>
  log: Log
}

export class HostTable {
  readonly nodes: HostNode[] = []
  readonly #running: Running[] = []

  private constructor (readonly root: string, readonly local: LocalTable) {}

  static async start (timeouts: Partial<Timeouts> = {}): Promise<HostTable> {
    const root = await mkdtemp(join(tmpdir(), 'fairdeal-hosts-'))
    const local = await prepareLocalTable({ root, game: 'coinche', scheme: 'atout-v1', seats: 4, beacon: 'none', transport: 'tcp', freePort: reservePort, timeouts: { contributeMs: 60_000, ackMs: 60_000, revealMs: 600_000, ...timeouts } })
    const t = new HostTable(root, local)
    for (let i = 0; i < local.configs.length; i++) await t.#open(i)
    return t
  }

  /** Opens node `index` from its data directory, restoring what it saved (a restart after a crash). */
  async #open (index: number): Promise<HostNode> {
    const config = this.local.configs[index]
    const tableConfig = config.tables[0]
    const identity = await loadIdentity(config.dataDir)
    const db = new Level<string, unknown>(logDbPath(config.dataDir), { valueEncoding: 'json' })
    await db.open()
    const memo = verifyMemo()
    const signer = memo.signer(nativeSigner(identity.seed, identity.peerId))
    const log = await openLog({ db, signer })
    // The daemon's state store is this sublevel itself, which the log can write in its own batches
    // (Log.sharesBatch: a hand's saved state leaving with its record). So the very object goes to
    // the TableHost, its writes wrapped in place rather than behind another object: writes made
    // alongside a log append reach the disk with the entry, as in the daemon, and are not seen here.
    const state = db.sublevel('state', { valueEncoding: stateValueEncoding }) as unknown as StateStore
    const real = { put: state.put.bind(state), del: state.del.bind(state), batch: state.batch.bind(state) }
    const events = new EventFeed()
    let crash = (): void => {}
    const whenCrashed = new Promise<void>(resolve => { crash = resolve })
    // Which documents arrived (`<type> <hand>`), and who waits for which.
    const received = new Set<string>()
    const awaited = new Map<string, Array<() => void>>()
    const whenReceived = async (type: string, hand: number): Promise<void> => {
      const what = `${type} ${hand}`
      if (received.has(what)) return
      await new Promise<void>(resolve => { awaited.set(what, [...(awaited.get(what) ?? []), resolve]) })
    }
    const deliver = (from: string, doc: Signed<unknown>): void => {
      if (node.crashed) return
      node.host.receive(from, doc)
      const what = `${doc.type} ${String((doc.body as { hand?: unknown }).hand)}`
      received.add(what)
      for (const resolve of awaited.get(what) ?? []) resolve()
      awaited.delete(what)
    }
    const node: HostNode = { index, peerId: identity.peerId, host: undefined as unknown as TableHost, events, writes: [], gate: undefined, crashed: false, whenCrashed, sent: [], whenReceived, deliver }
    const write = async (keys: string[], run: () => Promise<void>): Promise<void> => {
      if (node.crashed) throw new Error('the node crashed')
      const held = node.gate?.(keys)
      if (held instanceof Promise) await held
      if (node.crashed) throw new Error('the node crashed')
      node.writes.push(keys)
      await run()
      if (held === 'crash-after') {
        node.crashed = true
        crash()
      }
    }
    state.put = async (key, value, options) => { await write([key], async () => { await real.put(key, value, options) }) }
    state.del = async (key, options) => { await write([key], async () => { await real.del(key, options) }) }
    state.batch = async (ops, options) => { await write(ops.map(o => o.key), async () => { await real.batch(ops, options) }) }
    const table = tableConfig.table
    const common = { table, signer, timeouts: tableConfig.timeouts, beacon: null, now: () => Date.now(), random: (n: number) => new Uint8Array(randomBytes(n)), verifyDoc: memo.verify, timelock: tableConfig.timelock }
    const machines = machinesFor(table.scheme)
    const host = new TableHost(tableConfig,
      identity.peerId === table.dealer ? machines.dealer(common) : undefined,
      table.seats.includes(identity.peerId) ? machines.seat(common) : undefined,
      {
        peerId: identity.peerId,
        dataDir: config.dataDir,
        logger: pino({ level: 'silent' }),
        clock: systemClock,
        state,
        log,
        events,
        intern: memo.intern,
        // A crashed node sends nothing, and nothing reaches it.
        send: async (to, frame) => {
          if (node.crashed) return
          const target = this.nodes.find(n => n.peerId === to)
          if (target === undefined || target.crashed) throw new Error(`no route to ${to}`)
          const doc = decodeFrame(frame, undefined)
          node.sent.push({ type: doc.type, hand: (doc.body as { hand?: unknown }).hand, counter: (log.mark(dealerMetaKey(table.id)) as DealerMeta | undefined)?.nextHand })
          setImmediate(() => { target.deliver(identity.peerId, doc) })
        },
        rejected: () => {}
      },
      undefined)
    node.host = host
    this.nodes[index] = node
    this.#running[index] = { db, log }
    const logged = async (): Promise<LoggedOutcome[]> => {
      const out: LoggedOutcome[] = []
      for await (const e of log.read()) out.push({ kind: e.body.kind, payload: e.body.payload })
      return out
    }
    await host.restore(logged)
    return node
  }

  /** Node `index` after a crash: its queue left to fail, its store closed and opened again. */
  async restart (index: number): Promise<HostNode> {
    const node = this.nodes[index]
    node.crashed = true
    await node.host.stop(0)
    const { db, log } = this.#running[index]
    await log.close()
    await db.close()
    return await this.#open(index)
  }

  async close (): Promise<void> {
    for (const [i, r] of this.#running.entries()) {
      this.nodes[i].crashed = true
      await r.log.close().catch(() => {})
      await r.db.close().catch(() => {})
    }
    await rm(this.root, { recursive: true, force: true })
  }
}
