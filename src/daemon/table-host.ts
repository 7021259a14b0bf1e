import type { Logger } from 'pino'
import { ROBOT, type BeaconEntry } from '../core/hand/messages.js'
import type { Signed } from '../core/signed.js'
import type { BeaconClient, Clock } from '../beacon/index.js'
import { logDbPath, type AlongsideWrite, type Log } from '../store/log.js'
import { StoreDamagedError } from '../store/errors.js'
import { repairHint } from '../store/store-db.js'
import { dealerMetaKey, type DealerMeta, type LoggedOutcome } from '../protocol/dealer.js'
import { seatMetaKey } from '../protocol/seat.js'
import type { DealerSide, SeatSide } from '../protocol/contracts.js'
import { handKeyPrefix, machinesFor } from '../protocol/machines.js'
import { isAlsoForSeat, isForDealer } from '../protocol/route.js'
import { MachineFailure, persistRun, Rejection, type Effect, type HandEvent, type PersistEffect } from '../protocol/types.js'
import { joiningPersists } from '../protocol/persist-join.js'
import { encodeFrame, WireError } from '../protocol/wire.js'
import { freezeDeep, internHeld, isDeepFrozen, type Interner } from '../core/frozen.js'
import { fromUtf8 } from '../core/bytes.js'
import { SendError } from '../net/errors.js'
import { DIRECT_BEFORE_RELAY_MS } from '../net/limits.js'
import { loggedReceipt } from './logged-receipt.js'
import type { TableConfig } from './config.js'
import type { EventFeed } from './events.js'

/** The slice of a LevelDB sublevel the node keeps hand state in (JSON values, synced writes). */
export interface StateStore {
  get: (key: string) => Promise<unknown>
  put: (key: string, value: unknown, options: { sync: boolean }) => Promise<void>
  del: (key: string, options: { sync: boolean }) => Promise<void>
  batch: (ops: Array<{ type: 'put', key: string, value: unknown } | { type: 'del', key: string }>, options: { sync: boolean }) => Promise<void>
  values: (range: { gt: string, lt: string }) => AsyncIterable<unknown>
}

/** What every table of a node shares: the node's identity, store, log, network and event feed. */
export interface NodeServices {
  peerId: string
  dataDir: string
  logger: Logger
  clock: Clock
  state: StateStore
  log: Log
  events: EventFeed
  /** The node's verify memo's held documents (decodeFrame's `intern`). */
  intern?: Interner
  /** One frame to a peer over the node's table protocol connection (`signal` bounds a dial). */
  send: (to: string, frame: Uint8Array, options?: { signal?: AbortSignal }) => Promise<void>
  /** A message was refused: the node counts it and logs it in rate-limited summaries (src/net/rejection-log.ts). */
  rejected: (fields: { table: string, from: string, reason: string }) => void
}

type Role = 'dealer' | 'seat'

/** A list of effects in the table's queue; `written`: how many of its leading persists are on disk already (src/protocol/persist-join.ts). */
interface QueuedList {
  role: Role
  effects: Effect[]
  written: number
}

/** Documents a pending table holds for its machines (a hand's first few from each member are enough). */
const HELD_DOCS = 256

/**
 * One table a node serves: its machines (dealer and/or seat), and the queue in which their effects
 * are carried out, in order, one list after the other, so a persist is durable before anything after
 * it. Every table has its own queue, hand counter, chain and saved hands (their keys name the table);
 * the node's store, log, libp2p node and event feed are shared (src/daemon/daemon.ts routes each
 * incoming document here by its table id).
 */
export class TableHost {
  readonly id: string
  /** Every member of the table: its dealer and its human seats. */
  readonly members: ReadonlySet<string>
  #queue: Promise<void> = Promise.resolve()
  /** The lists enqueued and not begun yet, in queue order. */
  readonly #waiting: QueuedList[] = []
  #lastFrame: { doc: Signed<unknown>, frame: Uint8Array } | undefined
  readonly #warned = new WeakMap<Signed<unknown>, Set<string>>()
  #stopping = false
  readonly #beaconAborts = new Set<AbortController>()
  readonly #node: NodeServices
  #beacon: BeaconClient | undefined
  #config: TableConfig
  #dealer: DealerSide | undefined
  #seat: SeatSide | undefined
  /** Why the table deals nothing yet (its own group's chain is not bound), or undefined once it runs. */
  #pending: (() => string) | undefined
  /** Documents members sent while the table was pending, handed to its machines once it is bound. */
  #held: Array<{ from: string, doc: Signed<unknown> }> = []

  constructor (
    config: TableConfig,
    dealer: DealerSide | undefined,
    seat: SeatSide | undefined,
    node: NodeServices,
    beacon: BeaconClient | undefined
  ) {
    this.#config = config
    this.#dealer = dealer
    this.#seat = seat
    this.#node = node
    this.#beacon = beacon
    this.id = config.table.id
    this.members = new Set([config.table.dealer, ...config.table.seats.filter(s => s !== ROBOT)])
  }

  /**
   * A table that runs no machine yet: its beacon, its own group's chain, is known only once the
   * group's DKG is done. `why` says so to anyone asking it to deal; the members' documents are held
   * (at most HELD_DOCS) until `bind`.
   */
  static pending (config: TableConfig, node: NodeServices, why: () => string): TableHost {
    const host = new TableHost(config, undefined, undefined, node, undefined)
    host.#pending = why
    return host
  }

  /** Why this table deals nothing yet, or undefined when it runs. */
  get pending (): string | undefined { return this.#pending?.() }

  get config (): TableConfig { return this.#config }
  get dealer (): DealerSide | undefined { return this.#dealer }
  get seat (): SeatSide | undefined { return this.#seat }

  /**
   * A pending table's machines, once its beacon is known (`config` with it), restored from the store
   * (`logged`), then the documents held meanwhile handed to them in the order they came.
   */
  async bind (parts: { config: TableConfig, dealer: DealerSide | undefined, seat: SeatSide | undefined, beacon: BeaconClient | undefined }, logged: () => Promise<LoggedOutcome[]>): Promise<void> {
    if (this.#pending === undefined) throw new Error(`table ${this.id} runs already`)
    this.#config = parts.config
    this.#dealer = parts.dealer
    this.#seat = parts.seat
    this.#beacon = parts.beacon
    await this.restore(logged)
    this.#pending = undefined
    const held = this.#held
    this.#held = []
    for (const { from, doc } of held) this.receive(from, doc)
  }

  get role (): string {
    if (this.#pending !== undefined) {
      const { table } = this.#config
      const seat = table.seats.indexOf(this.#node.peerId)
      return [table.dealer === this.#node.peerId ? 'dealer' : '', seat !== -1 ? `seat ${seat}` : ''].filter(Boolean).join(' + ')
    }
    return [this.dealer !== undefined ? 'dealer' : '', this.seat !== undefined ? `seat ${this.seat.seat}` : ''].filter(Boolean).join(' + ')
  }

  /** Starts a hand (dealer only). Resolves once the COMMIT is durable and handed to the network. */
  async deal (params: { dealer?: number, play?: boolean } = {}): Promise<number> {
    const dealer = this.#requireDealer()
    const seats = this.config.table.seats.length
    const dealerSeat = params.dealer ?? 0
    if (!Number.isInteger(dealerSeat) || dealerSeat < 0 || dealerSeat >= seats) throw new Rejection(`dealer seat must be 0 to ${seats - 1}`)
    const { hand, effects } = dealer.startHand({ dealer: dealerSeat, ...(params.play === true ? { play: true as const } : {}) })
    await this.#enqueue('dealer', effects)
    return hand
  }

  async stage (hand: number, stage: string, taker?: number): Promise<void> {
    await this.#enqueue('dealer', this.#requireDealer().deliverStage(hand, stage, taker))
  }

  async end (hand: number): Promise<void> {
    await this.#enqueue('dealer', this.#requireDealer().end(hand))
  }

  /** This node's seat acts in a played hand (checked first: a Rejection, and nothing signed, if it is not legal now). */
  async act (hand: number, action: unknown): Promise<void> {
    if (this.#pending !== undefined) throw new Rejection(this.#pending())
    if (this.seat?.act === undefined) throw new Rejection(`this node holds no seat that plays at table ${this.id}`)
    if (this.#stopping) throw new Rejection('the node is stopping')
    await this.#enqueue('seat', this.seat.act(hand, action))
  }

  /** A played hand as this node's seat sees it. */
  playView (hand: number): ReturnType<NonNullable<SeatSide['playView']>> {
    return this.seat?.playView?.(hand)
  }

  cards (hand: number): ReturnType<SeatSide['cards']> {
    if (this.#pending !== undefined) throw new Rejection(this.#pending())
    if (this.seat === undefined) throw new Rejection(`this node holds no seat at table ${this.id}`)
    return this.seat.cards(hand)
  }

  /**
   * The table's part of the node's status: its hands, and which of its members are connected now
   * and who opened the connection (a seat behind NAT is connected inbound: it dialled the dealer).
   */
  status (connected: ReadonlyMap<string, 'inbound' | 'outbound'>): Record<string, unknown> {
    const { table, beacon } = this.config
    return {
      table,
      role: this.role,
      seat: this.seat?.seat ?? null,
      dealerHands: this.dealer?.status() ?? [],
      seatHands: this.seat?.status() ?? [],
      peers: [...this.members].filter(p => p !== this.#node.peerId).map(peer => ({
        peer,
        seats: table.seats.flatMap((s, i) => s === peer ? [i] : []),
        dealer: peer === table.dealer,
        connected: connected.has(peer),
        direction: connected.get(peer) ?? null
      })),
      beacon: this.#pending !== undefined && this.config.ownGroup !== null
        ? { name: this.config.ownGroup.group, pending: this.#pending() }
        : beacon.kind === 'drand'
        ? {
            name: beacon.name,
            trust: beacon.trust,
            chainHash: beacon.chain.hash,
            // With these a client tells when a bound round is due (core roundTime).
            genesisTime: beacon.chain.genesis_time,
            period: beacon.chain.period
          }
        : null
    }
  }

  /**
   * Takes the table's machines back to where they were: every hand saved in the store, the
   * dealer's hand counter (checked against the head file, which never goes back) and the outcomes
   * of its last hands, read from `logged` (the end of the node's log, every table's entries).
   */
  async restore (logged: () => Promise<LoggedOutcome[]>): Promise<void> {
    const table = this.id
    const machines = machinesFor(this.config.table.scheme)
    const { state, log, dataDir, logger } = this.#node
    const read = async <T>(prefix: string): Promise<T[]> => {
      const out: T[] = []
      for await (const v of state.values({ gt: prefix, lt: prefix + '\xff' })) out.push(v as T)
      return out
    }
    if (this.dealer !== undefined) {
      const meta = await state.get(dealerMetaKey(table)) as DealerMeta | undefined
      // The hand counter never goes back: the head file keeps it outside LevelDB.
      const kept = log.mark(dealerMetaKey(table)) as DealerMeta | undefined
      if (kept !== undefined && (meta === undefined || meta.nextHand < kept.nextHand)) {
        throw new StoreDamagedError(`the store in ${dataDir} lost the dealer's hand counter of table ${table} (LevelDB: next hand ${meta?.nextHand ?? 'none'}, head file: ${kept.nextHand}): ${repairHint(logDbPath(dataDir))}`)
      }
      // Each hand family keeps its hands under its own keys, the counter under the same one.
      const hands = await read<{ hand: number }>(handKeyPrefix(machines.dealerHandKey, table))
      const effects = this.dealer.restore(meta, hands, await logged())
      if (hands.length > 0) logger.info({ table, hands: hands.map(h => h.hand) }, 'dealer hands restored after restart')
      // A hand saved while waiting for its beacon round asks for the round again (a fetchBeacon effect).
      void this.#enqueue('dealer', effects).catch(() => {})
    }
    if (this.seat !== undefined) {
      const meta = await state.get(seatMetaKey(table))
      const hands = await read<unknown>(handKeyPrefix(machines.seatHandKey, table))
      // Its ASKs about the hands it had in play and the next one: they go out once the node is up.
      void this.#enqueue('seat', this.seat.restore(meta, hands)).catch(() => {})
    }
  }

  /** A schema-checked document of this table from a member of it, off the network. */
  receive (from: string, doc: Signed<unknown>): void {
    if (this.#pending !== undefined) {
      // Another member's group may finish its DKG a moment before this one's: its first documents wait.
      if (this.#held.length < HELD_DOCS) this.#held.push({ from, doc })
      else this.#node.rejected({ table: this.id, from, reason: `${doc.type} while the table waits for its beacon: ${this.#pending()}` })
      return
    }
    this.dispatch(from, doc)
    // A VIEW reaching the dealer's node is for its own seat as well (src/protocol/route.ts).
    if (this.seat !== undefined && this.dealer !== undefined && isAlsoForSeat(doc.type, from, this.config.table.dealer, this.#node.peerId)) this.dispatch(from, doc, false)
  }

  /** A document of this table to the machine it is for (`toDealer`: which one, when the type cannot say). */
  dispatch (from: string, doc: Signed<unknown>, toDealer = isForDealer(doc.type, from, this.config.table.dealer, this.#node.peerId)): void {
    const machine = toDealer ? this.dealer : this.seat
    if (machine === undefined) {
      this.#reject(from, new Rejection(`${doc.type} is for a ${toDealer ? 'dealer' : 'seat'}, and this node is none at table ${this.id}`))
      return
    }
    try {
      void this.#enqueue(toDealer ? 'dealer' : 'seat', machine.receive(from, doc)).catch(() => {})
    } catch (err) {
      this.#reject(from, err)
    }
  }

  #reject (from: string, err: unknown): void {
    const { logger } = this.#node
    if (err instanceof MachineFailure) {
      // The machine ended the hand naming itself; its record still goes out and into the log.
      logger.error({ table: this.id, from, err: err.cause }, 'unexpected error handling a message; the hand was ended')
      void this.#enqueue(this.dealer !== undefined ? 'dealer' : 'seat', err.effects).catch(() => {})
      return
    }
    if (!(err instanceof Rejection) && !(err instanceof WireError)) {
      logger.error({ table: this.id, from, err }, 'unexpected error handling a message')
      return
    }
    this.#node.rejected({ table: this.id, from, reason: err.message })
  }

  tick (now: number): void {
    if (this.#stopping) return
    if (this.dealer !== undefined) void this.#enqueue('dealer', this.dealer.tick(now)).catch(() => {})
    if (this.seat !== undefined) void this.#enqueue('seat', this.seat.tick(now)).catch(() => {})
  }

  /**
   * A peer's first connection to this node opened (again, or for the first time while a hand is in
   * play). If this node deals and the peer holds a seat, what that seat may lack of each hand in play
   * goes again (DealerSide.resync): a frame written just before a connection died is lost, and a
   * document sent while the seat had no connection (a seat that dials in) never left. A document in
   * flight on the new connection may so go twice: the seat and the dealer take the same one again
   * as a duplicate.
   */
  peerConnected (peer: string): void {
    if (this.#stopping || this.dealer === undefined || !this.config.table.seats.includes(peer)) return
    void this.#enqueue('dealer', this.dealer.resync(peer)).catch(() => {})
  }

  /** The node stops: a dealt hand is revealed (its seats get `graceMs` to countersign), the rest aborted. */
  async stop (graceMs: number | undefined): Promise<void> {
    // From now on no deal and no tick; what is queued still runs.
    this.#stopping = true
    if (this.dealer !== undefined) {
      for (const h of this.dealer.status()) {
        try {
          await this.#enqueue('dealer', this.dealer.abortHand(h.hand, 'the dealer node was stopped'))
        } catch (err) {
          this.#node.logger.warn({ table: this.id, hand: h.hand, err: (err as Error).message }, 'could not close hand on stop')
        }
      }
      // Give the seats a moment to countersign what was just revealed.
      const until = Date.now() + (graceMs ?? Math.min(this.config.timeouts.ackMs, 3_000))
      while (this.dealer.status().some(h => h.phase === 'revealed') && Date.now() < until) {
        await new Promise(resolve => setTimeout(resolve, 20))
      }
      await this.#enqueue('dealer', this.dealer.finalizeRevealed())
    }
    for (const a of this.#beaconAborts) a.abort()
    await this.#queue
  }

  #requireDealer (): DealerSide {
    if (this.#pending !== undefined) throw new Rejection(this.#pending())
    if (this.dealer === undefined) throw new Rejection(`this node is not the dealer of table ${this.id}`)
    if (this.#stopping) throw new Rejection('the node is stopping')
    return this.dealer
  }

  /** Runs one list of effects after every list enqueued before it. */
  async #enqueue (role: Role, effects: Effect[]): Promise<void> {
    if (effects.length === 0) return await this.#queue
    const list: QueuedList = { role, effects, written: 0 }
    this.#waiting.push(list)
    const run = this.#queue.then(async () => {
      // Lists begin in the order they were enqueued: this one is the first still waiting.
      const at = this.#waiting.indexOf(list)
      if (at !== -1) this.#waiting.splice(at, 1)
      await this.#execute(list)
    })
    this.#queue = run.catch((err: unknown) => { this.#node.logger.error({ table: this.id, err }, 'effect failed') })
    await run
  }

  async #execute ({ role, effects, written }: QueuedList): Promise<void> {
    // Persists already written in an append's batch (see 'append').
    const done = new Set<number>()
    // Its leading persists may be on disk already, written with a list ahead of it (see 'persist').
    for (let i = written; i < effects.length; i++) {
      const e = effects[i]
      if (done.has(i)) continue
      switch (e.kind) {
        case 'persist': {
          // Persists in a row go to disk as one synced batch: one fsync instead of several, and all
          // of them still durable (atomically, too) before the effect that follows them. The
          // leading persists of lists waiting behind it go in the same batch where that changes
          // nothing a crash can leave (src/protocol/persist-join.ts): other hands', one fsync for all.
          const run = persistRun(effects, i)
          const joining = this.#joining(effects, i)
          await this.#persist([...run, ...joining.writes])
          joining.written()
          i += run.length - 1
          break
        }
        case 'send':
          this.#send(e.to, e.doc, role, e.fallback)
          break
        case 'append': {
          // On the dealer's node the dealer machine logs every hand (its receipt holds the own seat's
          // countersignature); the seat machine's copy would only repeat it.
          if (role === 'seat' && this.dealer !== undefined) break
          const alongside = this.#persistsAfter(effects, i, done)
          // The lists waiting behind it may have their leading persists in the same batch, as for a persist.
          const joining = this.#node.log.sharesBatch(this.#node.state) ? this.#joining(effects, i) : undefined
          const appended = await this.#node.log.append(e.entry, e.payload, [...alongside, ...(joining?.writes ?? []).map(w => this.#alongside(w))])
          if (joining !== undefined) {
            await this.#keepCounter(joining.writes)
            joining.written()
          }
          this.#node.logger.info({ table: this.id, hand: e.hand, entry: e.entry, seq: appended.entry.body.seq, role }, 'logged')
          break
        }
        case 'fetchBeacon':
          this.#fetchBeacon(role, e.hand, e.round)
          break
        case 'recall':
          void this.#recall(e.hand, e.to)
          break
        case 'event':
          this.#event(role, e.hand, e.event)
          break
      }
    }
  }

  /**
   * The persists that follow the append at `index` with only events between them (a hand's saved
   * state leaving once its record is logged), as writes for the append's own synced batch: one
   * write instead of two, and the record and the state's removal on disk together or not at all.
   * Their indices go into `done`. None when the state store is not in the log's database, and never
   * the dealer's hand counter (it also goes to the head file: #persist).
   */
  #persistsAfter (effects: Effect[], index: number, done: Set<number>): AlongsideWrite[] {
    const { state, log } = this.#node
    if (!log.sharesBatch(state)) return []
    const writes: AlongsideWrite[] = []
    const metaKey = dealerMetaKey(this.id)
    for (let j = index + 1; j < effects.length; j++) {
      const e = effects[j]
      if (e.kind === 'event') continue
      if (e.kind !== 'persist' || e.key === metaKey) break
      writes.push(this.#alongside(e))
      done.add(j)
    }
    return writes
  }

  #alongside (e: PersistEffect): AlongsideWrite {
    const { state } = this.#node
    return e.value === null ? { type: 'del', sublevel: state, key: e.key } : { type: 'put', sublevel: state, key: e.key, value: e.value }
  }

  /**
   * The leading persists of the lists waiting behind the running one (`effects`, writing from
   * `index`) that may go in its synced batch (src/protocol/persist-join.ts), and `written`, to call
   * once that batch is on disk: those lists then skip them.
   */
  #joining (effects: Effect[], index: number): { writes: PersistEffect[], written: () => void } {
    const counts = joiningPersists(effects, index, this.#waiting)
    const lists = this.#waiting.slice(0, counts.length)
    return {
      writes: lists.flatMap((l, k) => persistRun(l.effects, 0).slice(0, counts[k])),
      written: () => { lists.forEach((l, k) => { l.written = counts[k] }) }
    }
  }

  async #persist (writes: PersistEffect[]): Promise<void> {
    await this.#persistState(writes)
    await this.#keepCounter(writes)
  }

  /** The dealer's hand counter also goes to the head file, after LevelDB and before the COMMIT that uses it leaves. */
  async #keepCounter (writes: PersistEffect[]): Promise<void> {
    const metaKey = dealerMetaKey(this.id)
    const meta = writes.findLast(w => w.key === metaKey)
    if (meta !== undefined && meta.value !== null) await this.#node.log.keepMark(metaKey, meta.value)
  }

  async #persistState (writes: PersistEffect[]): Promise<void> {
    const { state } = this.#node
    if (writes.length === 1) {
      const [w] = writes
      if (w.value === null) await state.del(w.key, { sync: true })
      else await state.put(w.key, w.value, { sync: true })
      return
    }
    // The last write of a key is the one that stands; earlier ones in the same batch need no encoding.
    const last = new Map(writes.map(w => [w.key, w.value]))
    const ops = [...last].map(([key, value]) => value === null ? { type: 'del' as const, key } : { type: 'put' as const, key, value })
    await state.batch(ops, { sync: true })
  }

  /** A frame's document read back from its bytes, with the documents this node holds in place, deep-frozen. */
  #readBack (frame: Uint8Array): Signed<unknown> {
    const value = JSON.parse(fromUtf8(frame)) as Signed<unknown>
    const intern = this.#node.intern
    if (intern !== undefined) internHeld(value, intern)
    return freezeDeep(value)
  }

  #send (to: string, doc: Signed<unknown>, role: Role, fallback?: () => Signed<unknown>): void {
    // A document sent to every seat is the same object each time: encode it once.
    if (this.#lastFrame?.doc !== doc) this.#lastFrame = { doc, frame: encodeFrame(doc) }
    const frame = this.#lastFrame.frame
    const { peerId, logger } = this.#node
    if (to === peerId) {
      // The dealer's own seat, in memory, with the same machine checks as any document. A
      // deep-frozen document (src/core/frozen.ts: a JSON tree, and it was just encoded) is the
      // very value its frame reads back as: the seat takes it as it is. Any other is read back
      // from the bytes the other seats get, into a deep-frozen copy (so the verify memo and the
      // digests keep what they learn about it). No schema pass: the wire schema guards against
      // what peers send, and this is this node's own machine's output.
      const copy = isDeepFrozen(doc) ? doc : this.#readBack(frame)
      // Both machines share this peer id, so the sender's role, not the document, says which one
      // it is for: the own seat's abort record goes to the dealer machine, the dealer's to the seat.
      queueMicrotask(() => { this.dispatch(peerId, copy, role === 'seat') })
      return
    }
    // The dealer machine hears whether its COMMIT and PLEDGES arrived: it sends them again, and a
    // seat it never reached is recorded as unreachable rather than blamed for not answering. It
    // hears of its CARDS too: it refuses End while a seat's own cards have not reached it.
    const report = role === 'dealer' && (doc.type === 'commit' || doc.type === 'pledges' || doc.type === 'view' || doc.type === 'cards') ? this.dealer : undefined
    // A document with a fallback does not wait out a long dial to a seat behind NAT: its RELAY goes.
    const options = fallback !== undefined ? { signal: AbortSignal.timeout(DIRECT_BEFORE_RELAY_MS) } : undefined
    this.#node.send(to, frame, options).then(() => { report?.delivery(to, doc, { ok: true }) }, (err: unknown) => {
      // A seat with no address, seen from another seat, is the usual case (NAT), not a fault; a seat
      // that has not dialled in yet is worth one warning per document, not one per retry.
      const unrouted = err instanceof SendError && err.unrouted
      const expected = unrouted && ((to !== this.config.table.dealer && role === 'seat') || this.#alreadyWarned(doc, to))
      logger[expected ? 'debug' : 'warn']({ table: this.id, to, type: doc.type, err: (err as Error).message, relay: fallback !== undefined }, 'send failed')
      report?.delivery(to, doc, { ok: false, reason: (err as Error).message })
      // A seat that cannot reach another seat sends its document through the dealer instead.
      if (fallback !== undefined) this.#send(this.config.table.dealer, fallback(), role)
    })
  }

  /** Whether a failed send of `doc` to `to` was logged already (the dealer's delivery retries send the same document). */
  #alreadyWarned (doc: Signed<unknown>, to: string): boolean {
    const peers = this.#warned.get(doc) ?? new Set<string>()
    this.#warned.set(doc, peers)
    if (peers.has(to)) return true
    peers.add(to)
    return false
  }

  /** A recall of the dealer machine: the hand's receipt read back from this node's log, handed to the machine (it answers the seat). */
  async #recall (hand: number, to: string): Promise<void> {
    const { dealer } = this
    if (dealer === undefined) return
    const receipt = await loggedReceipt(this.#node.log, this.id, hand).catch((err: unknown) => {
      this.#node.logger.warn({ table: this.id, hand, err: (err as Error).message }, 'could not read a receipt back from the log')
      return undefined
    })
    await this.#enqueue('dealer', dealer.recalled(hand, to, receipt)).catch(() => {})
  }

  /** Fetches the bound round for a machine: the dealer to deal, or either machine to finish a time-locked hand. */
  #fetchBeacon (role: Role, hand: number, round: number): void {
    const beacon = this.#beacon
    const machine = role === 'dealer' ? this.dealer : this.seat
    if (beacon === undefined || machine === undefined) return
    const { clock, logger } = this.#node
    const abort = new AbortController()
    this.#beaconAborts.add(abort)
    // From now when the round is already out (a hand being finished from its timelocks, long after R).
    const deadline = Math.max(beacon.roundTime(round), clock.now()) + this.config.timeouts.contributeMs
    logger.info({ table: this.id, hand, round, due: new Date(beacon.roundTime(round)).toISOString() }, 'waiting for the bound beacon round')
    const result = (r: { entry: BeaconEntry } | { error: string }): Effect[] => {
      try {
        return machine.beaconResult(hand, r)
      } catch (err) {
        if (!(err instanceof MachineFailure)) throw err
        logger.error({ table: this.id, hand, err: err.cause }, 'unexpected error handling the beacon round; the hand was ended')
        return err.effects
      }
    }
    beacon.waitAndFetchRound(round, { deadline, signal: abort.signal })
      .then(entry => result({ entry }), (err: unknown) => {
        // The node's own stop cancelled the wait: no fault of the beacon, nothing to record. The
        // hand stays saved as it is (a time-locked one is finished after the restart, or by the
        // seats from its timelocks, docs/protocol.md §16.4; stop() has closed any other).
        if (abort.signal.aborted) return []
        const e = err as Error & { kind?: string }
        logger.warn({ table: this.id, hand, round, err: e.message }, 'beacon round unavailable')
        return result({ error: `${e.kind ?? e.name}: ${e.message}` })
      })
      .then(async effects => { await this.#enqueue(role, effects) })
      .catch(() => {})
      .finally(() => this.#beaconAborts.delete(abort))
  }

  #event (role: Role, hand: number, event: HandEvent): void {
    // High-resolution wall clock: event times from different node processes are compared to the
    // sub-millisecond (the table benchmark), which Date.now's whole milliseconds cannot do.
    this.#node.events.push(role, hand, event, performance.timeOrigin + performance.now(), this.id)
    const level = event.type === 'aborted' || (event.type === 'shield' && !event.ok) || (event.type === 'recovered' && event.faults.length > 0) ? 'warn' : 'debug'
    this.#node.logger[level]({ table: this.id, hand, role, ...event }, `hand ${event.type}`)
  }
}
