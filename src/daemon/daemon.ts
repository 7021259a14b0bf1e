import { chmod } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import type { Level } from 'level'
import type { Libp2p } from '@libp2p/interface'
import type { Logger } from 'pino'
import { ROBOT, type BeaconEntry } from '../core/hand/messages.js'
import { sealTimelockText } from '../core/timelock/index.js'
import type { Signed } from '../core/signed.js'
import { createBeaconClient, systemClock, type BeaconClient, type Clock } from '../beacon/index.js'
import { loadIdentity } from '../net/identity.js'
import { createNode } from '../net/node.js'
import { createMessenger, type Messenger } from '../net/messenger.js'
import { logDbPath, openLog, type Log } from '../store/log.js'
import { registerLogFetch } from '../net/log-fetch.js'
import { createHeadAnnouncer, registerWitness } from '../net/witness.js'
import { WitnessStore } from '../store/witness-store.js'
import { LogInUseError, StoreDamagedError } from '../store/errors.js'
import { openStoreDb, repairHint } from '../store/store-db.js'
import { DealerMachine, dealerHandKey, dealerMetaKey, ENDED_KEPT, type DealerHandSnapshot, type DealerMeta, type LoggedOutcome } from '../protocol/dealer.js'
import { BlindDealerMachine, blindDealerHandKey, type BlindDealerSnapshot } from '../protocol/blind-dealer.js'
import { BlindSeatMachine, blindSeatHandKey, type BlindSeatSnapshot } from '../protocol/blind-seat.js'
import { getScheme } from '../core/schemes/registry.js'
import { SeatMachine, seatHandKey, seatMetaKey, type SeatHandSnapshot, type SeatMeta } from '../protocol/seat.js'
import { isAlsoForSeat, isForDealer } from '../protocol/route.js'
import { MachineFailure, Rejection, type Effect, type HandEvent } from '../protocol/types.js'
import { decodeFrame, encodeFrame, MAX_FRAME_BYTES, TABLE_PROTOCOL, WireError } from '../protocol/wire.js'
import { NodeInputError } from './errors.js'
import type { NodeConfig } from './config.js'
import { EventFeed } from './events.js'
import { nativeSigner } from './native-crypto.js'
import { verifyMemo } from './verify-memo.js'

export interface DaemonOptions {
  config: NodeConfig
  logger: Logger
  /** The protocol's clock (deadlines, beacon rounds); Date.now by default. Tests move it. */
  clock?: Clock
  /** How often deadlines are checked. */
  tickMs?: number
}

type StateDb = Level<string, unknown>

/** The slice of a LevelDB sublevel the daemon keeps hand state in (JSON values, synced writes). */
interface StateStore {
  get: (key: string) => Promise<unknown>
  put: (key: string, value: unknown, options: { sync: boolean }) => Promise<void>
  del: (key: string, options: { sync: boolean }) => Promise<void>
  batch: (ops: Array<{ type: 'put', key: string, value: unknown } | { type: 'del', key: string }>, options: { sync: boolean }) => Promise<void>
  values: (range: { gt: string, lt: string }) => AsyncIterable<unknown>
}

/** The error for a data directory another process has open. */
export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError'
}

/**
 * A running fairdeal node: identity, LevelDB (hand state + receipt log), libp2p, the table
 * protocol machines, the beacon client. Everything the machines ask for (effects) is carried out
 * here, in order, one list after the other, so a persist is durable before anything after it.
 */
export class Daemon {
  readonly peerId: string
  readonly config: NodeConfig
  readonly events = new EventFeed()
  readonly log: Log
  /** The cosigned heads this node witnessed for a peer (docs/log.md, "Witnessed heads"). */
  witnessedHeads: (owner: string) => Promise<string[]> = async () => []
  readonly node: Libp2p
  readonly dealer: DealerMachine | BlindDealerMachine | undefined
  readonly seat: SeatMachine | BlindSeatMachine | undefined
  readonly #logger: Logger
  readonly #db: StateDb
  readonly #state: StateStore
  readonly #messenger: Messenger
  readonly #beacon: BeaconClient | undefined
  readonly #clock: Clock
  #queue: Promise<void> = Promise.resolve()
  #timer: NodeJS.Timeout | undefined
  #beaconAborts = new Set<AbortController>()
  #stopping = false
  #rejections = 0
  readonly #members: ReadonlySet<string>
  #lastFrame: { doc: Signed<unknown>, frame: Uint8Array } | undefined

  private constructor (parts: {
    peerId: string, config: NodeConfig, logger: Logger, db: StateDb, log: Log, node: Libp2p, messenger: Messenger,
    members: ReadonlySet<string>, dealer?: DealerMachine | BlindDealerMachine, seat?: SeatMachine | BlindSeatMachine, beacon?: BeaconClient, clock: Clock
  }) {
    this.peerId = parts.peerId
    this.config = parts.config
    this.#logger = parts.logger
    this.#db = parts.db
    this.#state = parts.db.sublevel('state', { valueEncoding: 'json' }) as unknown as StateStore
    this.log = parts.log
    this.node = parts.node
    this.#messenger = parts.messenger
    this.dealer = parts.dealer
    this.seat = parts.seat
    this.#beacon = parts.beacon
    this.#clock = parts.clock
    this.#members = parts.members
  }

  static async start (options: DaemonOptions): Promise<Daemon> {
    const { config, logger } = options
    const clock: Clock = options.clock ?? systemClock
    // Never created here: a config whose data path has a typo must not start a node with a new key.
    const identity = await loadIdentity(config.dataDir)
    // A data directory made by hand (or by an older version) may be open to others: it holds the key,
    // the log and the dealer's unrevealed secrets, so it is the owner's alone.
    await chmod(config.dataDir, 0o700)
    const { table } = config
    if (identity.peerId !== table.dealer && !table.seats.includes(identity.peerId)) {
      // The usual cause is a config whose peer ids were not replaced with the ones `fairdeal init` printed.
      throw new NodeInputError(`this node (${identity.peerId}, the key in ${config.dataDir}) is neither the dealer nor a seat of table ${table.id}: put the peer ids printed by 'fairdeal init' in the config`)
    }
    let db: StateDb
    try {
      // Refuses a damaged store (and never creates one over the remains of another): see store-db.ts.
      db = await openStoreDb(logDbPath(config.dataDir), { valueEncoding: 'json' })
    } catch (err) {
      if (err instanceof LogInUseError) throw new DataDirInUseError(`data directory ${config.dataDir} is already in use by another process`)
      throw err
    }
    const signer = nativeSigner(identity.seed, identity.peerId)
    const cleanup: Array<() => Promise<void>> = [async () => { await db.close() }]
    try {
      let log: Log
      try {
        log = await openLog({ db, signer })
      } catch (err) {
        if (err instanceof LogInUseError) throw new DataDirInUseError(err.message)
        throw err
      }
      cleanup.unshift(async () => { await log.close() })
      const members = new Set([table.dealer, ...table.seats.filter(s => s !== ROBOT)])
      // With a public log non-members may connect too (to fetch the log), bounded so that members
      // always find room; the table protocol still takes frames from members only (#onFrame).
      const node = await createNode({ privateKey: identity.privateKey, listen: config.listen, members, strangers: config.logAccess === 'anyone' ? 'admit' : 'refuse', logger })
      cleanup.unshift(async () => { await node.stop() })
      const addressBook = new Map(Object.entries(config.peers))
      const messenger = await createMessenger(node, { protocol: TABLE_PROTOCOL, maxFrameBytes: MAX_FRAME_BYTES, logger, addressBook })
      cleanup.unshift(async () => { await messenger.close() })
      // Witnessed heads (docs/log.md): this node cosigns the other members' heads and serves them
      // with its log; its own head goes to every other member after each append.
      const witnessStore = new WitnessStore(db, signer)
      const stopLogService = await registerLogFetch(node, log, { policy: config.logAccess, members, logger, witnessed: async owner => await witnessStore.heldFor(owner) })
      cleanup.unshift(stopLogService)
      cleanup.unshift(await registerWitness(node, witnessStore, { members, logger }))
      const announcer = createHeadAnnouncer(node, { self: identity.peerId, members, addressBook, logger, onCosigned: (peer, line) => { log.noteCosignature(peer, line) } })
      cleanup.unshift(announcer.close)
      log.onAppend(headLine => { announcer.announce(headLine) })

      const beaconBinding = config.beacon.kind === 'drand' ? { chain: config.beacon.chain, marginMs: config.beaconMarginMs } : null
      const beacon = config.beacon.kind === 'drand'
        ? createBeaconClient({
          chain: config.beacon.chain,
          relays: config.beacon.relays,
          clock,
          onRelayFailure: (f) => { logger.warn({ relay: f.url, round: f.round, kind: f.kind, reason: f.message }, 'beacon relay failed') }
        })
        : undefined
      const now = (): number => clock.now()
      const random = (n: number): Uint8Array => new Uint8Array(randomBytes(n))
      // The machines' signatures and checks share one memo (see verify-memo.ts); the log signs on its own.
      const memo = verifyMemo()
      const common = { table, signer: memo.signer(signer), timeouts: config.timeouts, beacon: beaconBinding, now, random, verifyDoc: memo.verify, timelock: config.timelock }
      // Sealing's first run builds noble's precomputed tables (~0.5 s here): done now, not on a hand's path.
      if (config.timelock !== null && beaconBinding !== null) sealTimelockText('', beaconBinding.chain, 1, random)
      // A dealer-blind scheme (blind-v1) has its own machines; the host treats both kinds alike.
      const blind = getScheme(table.scheme).blind === true
      const dealer = identity.peerId === table.dealer ? (blind ? new BlindDealerMachine(common) : new DealerMachine(common)) : undefined
      const seat = table.seats.includes(identity.peerId) ? (blind ? new BlindSeatMachine(common) : new SeatMachine(common)) : undefined
      const daemon = new Daemon({ peerId: identity.peerId, config, logger, db, log, node, messenger, members, dealer, seat, beacon, clock })
      daemon.witnessedHeads = async owner => await witnessStore.heldFor(owner)
      await daemon.#restore()
      messenger.onFrame((from, frame) => { daemon.#onFrame(from, frame) })
      daemon.#timer = setInterval(() => { daemon.#tick() }, options.tickMs ?? 100)
      daemon.#timer.unref()
      logger.info({ peerId: identity.peerId, table: table.id, role: daemon.role, addresses: daemon.addresses() }, 'node started')
      return daemon
    } catch (err) {
      for (const c of cleanup) await c().catch(() => {})
      throw err
    }
  }

  get role (): string {
    return [this.dealer !== undefined ? 'dealer' : '', this.seat !== undefined ? `seat ${this.seat.seat}` : ''].filter(Boolean).join(' + ')
  }

  addresses (): string[] {
    return this.node.getMultiaddrs().map(a => a.toString())
  }

  get rejections (): number { return this.#rejections }

  /** Starts a hand (dealer only). Resolves once the COMMIT is durable and handed to the network. */
  async deal (params: { dealer?: number } = {}): Promise<number> {
    const dealer = this.#requireDealer()
    const seats = this.config.table.seats.length
    const dealerSeat = params.dealer ?? 0
    if (!Number.isInteger(dealerSeat) || dealerSeat < 0 || dealerSeat >= seats) throw new Rejection(`dealer seat must be 0 to ${seats - 1}`)
    const { hand, effects } = dealer.startHand({ dealer: dealerSeat })
    await this.#enqueue('dealer', effects)
    return hand
  }

  async stage (hand: number, stage: string, taker?: number): Promise<void> {
    await this.#enqueue('dealer', this.#requireDealer().deliverStage(hand, stage, taker))
  }

  async end (hand: number): Promise<void> {
    await this.#enqueue('dealer', this.#requireDealer().end(hand))
  }

  status (): Record<string, unknown> {
    const head = this.log.head()
    return {
      peerId: this.peerId,
      table: this.config.table,
      role: this.role,
      seat: this.seat?.seat ?? null,
      addresses: this.addresses(),
      dealerHands: this.dealer?.status() ?? [],
      seatHands: this.seat?.status() ?? [],
      log: { entries: head === null ? 0 : head.body.seq + 1 },
      peers: this.#peerStates(),
      beacon: this.config.beacon.kind === 'drand'
        ? {
            name: this.config.beacon.name,
            trust: this.config.beacon.trust,
            chainHash: this.config.beacon.chain.hash,
            // With these a client tells when a bound round is due (core roundTime).
            genesisTime: this.config.beacon.chain.genesis_time,
            period: this.config.beacon.chain.period
          }
        : null,
      rejectedMessages: this.#rejections
    }
  }

  /** Every other member of the table, its seats, and whether this node has an open connection to it now. */
  #peerStates (): Array<{ peer: string, seats: number[], dealer: boolean, connected: boolean }> {
    const { table } = this.config
    const open = new Set(this.node.getConnections().filter(c => c.status === 'open').map(c => c.remotePeer.toString()))
    const members = [...new Set([table.dealer, ...table.seats.filter(s => s !== ROBOT)])].filter(p => p !== this.peerId)
    return members.map(peer => ({
      peer,
      seats: table.seats.flatMap((s, i) => s === peer ? [i] : []),
      dealer: peer === table.dealer,
      connected: open.has(peer)
    }))
  }

  cards (hand: number): ReturnType<SeatMachine['cards']> {
    if (this.seat === undefined) throw new Rejection('this node holds no seat')
    return this.seat.cards(hand)
  }

  /** Finishes what can be finished (a dealt hand is revealed), aborts the rest, then closes everything. */
  async stop (options: { graceMs?: number } = {}): Promise<void> {
    if (this.#stopping) return
    this.#stopping = true
    if (this.dealer !== undefined) {
      for (const h of this.dealer.status()) {
        try {
          await this.#enqueue('dealer', this.dealer.abortHand(h.hand, 'the dealer node was stopped'))
        } catch (err) {
          this.#logger.warn({ hand: h.hand, err: (err as Error).message }, 'could not close hand on stop')
        }
      }
      // Give the seats a moment to countersign what was just revealed.
      const until = Date.now() + (options.graceMs ?? Math.min(this.config.timeouts.ackMs, 3_000))
      while (this.dealer.status().some(h => h.phase === 'revealed') && Date.now() < until) {
        await new Promise(resolve => setTimeout(resolve, 20))
      }
      await this.#enqueue('dealer', this.dealer.finalizeRevealed())
    }
    clearInterval(this.#timer)
    for (const a of this.#beaconAborts) a.abort()
    await this.#queue
    await this.#messenger.close().catch(() => {})
    try { await this.node.stop() } catch {}
    await this.log.close().catch(() => {})
    await this.#db.close().catch(() => {})
    this.#logger.info({ peerId: this.peerId }, 'node stopped')
  }

  #requireDealer (): DealerMachine | BlindDealerMachine {
    if (this.dealer === undefined) throw new Rejection('this node is not the dealer of the table')
    if (this.#stopping) throw new Rejection('the node is stopping')
    return this.dealer
  }

  async #restore (): Promise<void> {
    const table = this.config.table.id
    const read = async <T>(prefix: string): Promise<T[]> => {
      const out: T[] = []
      for await (const v of this.#state.values({ gt: prefix, lt: prefix + '\xff' })) out.push(v as T)
      return out
    }
    if (this.dealer !== undefined) {
      const meta = await this.#state.get(dealerMetaKey(table)) as DealerMeta | undefined
      // The hand counter never goes back: the head file keeps it outside LevelDB.
      const kept = this.log.mark(dealerMetaKey(table)) as DealerMeta | undefined
      if (kept !== undefined && (meta === undefined || meta.nextHand < kept.nextHand)) {
        throw new StoreDamagedError(`the store in ${this.config.dataDir} lost the dealer's hand counter of table ${table} (LevelDB: next hand ${meta?.nextHand ?? 'none'}, head file: ${kept.nextHand}): ${repairHint(logDbPath(this.config.dataDir))}`)
      }
      // A dealer-blind table (blind-v1) keeps its hands under its own keys, the counter under the same one.
      const blind = this.dealer instanceof BlindDealerMachine
      const hands = await read<DealerHandSnapshot & BlindDealerSnapshot>((blind ? blindDealerHandKey : dealerHandKey)(table, 0).slice(0, -16))
      const effects = this.dealer instanceof BlindDealerMachine
        ? this.dealer.restore(meta, hands)
        : this.dealer.restore(meta, hands, await this.#recentlyLogged(ENDED_KEPT * 4))
      if (hands.length > 0) this.#logger.info({ hands: hands.map(h => h.hand) }, 'dealer hands restored after restart')
      // A hand saved while waiting for its beacon round asks for the round again (a fetchBeacon effect).
      void this.#enqueue('dealer', effects).catch(() => {})
    }
    if (this.seat !== undefined) {
      const meta = await this.#state.get(seatMetaKey(table)) as SeatMeta | undefined
      if (this.seat instanceof BlindSeatMachine) {
        this.seat.restore(meta, await read<BlindSeatSnapshot>(blindSeatHandKey(table, 0).slice(0, -16)))
      } else {
        const hands = await read<SeatHandSnapshot>(seatHandKey(table, 0).slice(0, -16))
        // Its ASKs about the hands it had in play and the next one: they go out once the node is up.
        void this.#enqueue('seat', this.seat.restore(meta, hands)).catch(() => {})
      }
    }
  }

  /** The last `count` entries of the log (kind and payload), oldest first. */
  async #recentlyLogged (count: number): Promise<LoggedOutcome[]> {
    const head = this.log.head()
    if (head === null) return []
    const out: LoggedOutcome[] = []
    for await (const e of this.log.read({ from: Math.max(0, head.body.seq - count + 1) })) out.push({ kind: e.body.kind, payload: e.body.payload })
    return out
  }

  #onFrame (from: string, frame: Uint8Array): void {
    if (!this.#members.has(from)) {
      this.#reject(from, new Rejection('table message from a peer who is not at the table'))
      return
    }
    let doc
    try {
      doc = decodeFrame(frame)
    } catch (err) {
      this.#reject(from, err)
      return
    }
    this.#dispatch(from, doc)
    // A VIEW reaching the dealer's node is for its own seat as well (src/protocol/route.ts).
    if (this.seat !== undefined && this.dealer !== undefined && isAlsoForSeat(doc.type, from, this.config.table.dealer, this.peerId)) this.#dispatch(from, doc, false)
  }

  #dispatch (from: string, doc: Signed<unknown>, toDealer = isForDealer(doc.type, from, this.config.table.dealer, this.peerId)): void {
    const machine = toDealer ? this.dealer : this.seat
    if (machine === undefined) {
      this.#reject(from, new Rejection(`${doc.type} is for a ${toDealer ? 'dealer' : 'seat'}, and this node is none`))
      return
    }
    try {
      void this.#enqueue(toDealer ? 'dealer' : 'seat', machine.receive(from, doc)).catch(() => {})
    } catch (err) {
      this.#reject(from, err)
    }
  }

  #reject (from: string, err: unknown): void {
    if (err instanceof MachineFailure) {
      // The machine ended the hand naming itself; its record still goes out and into the log.
      this.#logger.error({ from, err: err.cause }, 'unexpected error handling a message; the hand was ended')
      void this.#enqueue(this.dealer !== undefined ? 'dealer' : 'seat', err.effects).catch(() => {})
      return
    }
    if (!(err instanceof Rejection) && !(err instanceof WireError)) {
      this.#logger.error({ from, err }, 'unexpected error handling a message')
      return
    }
    this.#rejections++
    this.#logger.warn({ from, reason: err.message }, 'message rejected')
  }

  #tick (): void {
    if (this.#stopping) return
    const now = this.#clock.now()
    if (this.dealer !== undefined) void this.#enqueue('dealer', this.dealer.tick(now)).catch(() => {})
    if (this.seat !== undefined) void this.#enqueue('seat', this.seat.tick(now)).catch(() => {})
  }

  /** Runs one list of effects after every list enqueued before it. */
  async #enqueue (role: 'dealer' | 'seat', effects: Effect[]): Promise<void> {
    if (effects.length === 0) return await this.#queue
    const run = this.#queue.then(async () => { await this.#execute(role, effects) })
    this.#queue = run.catch((err: unknown) => { this.#logger.error({ err }, 'effect failed') })
    await run
  }

  async #execute (role: 'dealer' | 'seat', effects: Effect[]): Promise<void> {
    for (let i = 0; i < effects.length; i++) {
      const e = effects[i]
      switch (e.kind) {
        case 'persist': {
          // Persists in a row go to disk as one synced batch: one fsync instead of several, and all
          // of them still durable (atomically, too) before the effect that follows them.
          let end = i + 1
          while (end < effects.length && effects[end].kind === 'persist') end++
          await this.#persist(effects.slice(i, end) as PersistEffect[])
          i = end - 1
          break
        }
        case 'send':
          this.#send(e.to, e.doc, role, e.fallback)
          break
        case 'append': {
          // On the dealer's node the dealer machine logs every hand (its receipt holds the own seat's
          // countersignature); the seat machine's copy would only repeat it.
          if (role === 'seat' && this.dealer !== undefined) break
          const appended = await this.log.append(e.entry, e.payload)
          this.#logger.info({ hand: e.hand, entry: e.entry, seq: appended.entry.body.seq, role }, 'logged')
          break
        }
        case 'fetchBeacon':
          this.#fetchBeacon(role, e.hand, e.round)
          break
        case 'event':
          this.#event(role, e.hand, e.event)
          break
      }
    }
  }

  async #persist (writes: PersistEffect[]): Promise<void> {
    await this.#persistState(writes)
    // The dealer's hand counter also goes to the head file, before the COMMIT that uses it leaves.
    const metaKey = dealerMetaKey(this.config.table.id)
    const meta = writes.findLast(w => w.key === metaKey)
    if (meta !== undefined && meta.value !== null) await this.log.keepMark(metaKey, meta.value)
  }

  async #persistState (writes: PersistEffect[]): Promise<void> {
    if (writes.length === 1) {
      const [w] = writes
      if (w.value === null) await this.#state.del(w.key, { sync: true })
      else await this.#state.put(w.key, w.value, { sync: true })
      return
    }
    // The last write of a key is the one that stands; earlier ones in the same batch need no encoding.
    const last = new Map(writes.map(w => [w.key, w.value]))
    const ops = [...last].map(([key, value]) => value === null ? { type: 'del' as const, key } : { type: 'put' as const, key, value })
    await this.#state.batch(ops, { sync: true })
  }

  #send (to: string, doc: Signed<unknown>, role: 'dealer' | 'seat', fallback?: Signed<unknown>): void {
    // A document sent to every seat is the same object each time: encode it once.
    if (this.#lastFrame?.doc !== doc) this.#lastFrame = { doc, frame: encodeFrame(doc) }
    const frame = this.#lastFrame.frame
    if (to === this.peerId) {
      // The dealer's own seat: same bytes, same checks, no network.
      const decoded = decodeFrame(frame)
      // Both machines share this peer id, so the sender's role, not the document, says which one
      // it is for: the own seat's abort record goes to the dealer machine, the dealer's to the seat.
      queueMicrotask(() => { this.#dispatch(this.peerId, decoded, role === 'seat') })
      return
    }
    // The dealer machine hears whether its COMMIT and PLEDGES arrived: it sends them again, and a
    // seat it never reached is recorded as unreachable rather than blamed for not answering.
    const report = role === 'dealer' && (doc.type === 'commit' || doc.type === 'pledges' || doc.type === 'view') && this.dealer instanceof DealerMachine ? this.dealer : undefined
    this.#messenger.send(to, frame).then(() => { report?.delivery(to, doc, { ok: true }) }, (err: unknown) => {
      this.#logger.warn({ to, type: doc.type, err: (err as Error).message, relay: fallback !== undefined }, 'send failed')
      report?.delivery(to, doc, { ok: false, reason: (err as Error).message })
      // A seat that cannot reach another seat sends its document through the dealer instead.
      if (fallback !== undefined) this.#send(this.config.table.dealer, fallback, role)
    })
  }

  /** Fetches the bound round for a machine: the dealer to deal, or either machine to finish a time-locked hand. */
  #fetchBeacon (role: 'dealer' | 'seat', hand: number, round: number): void {
    const beacon = this.#beacon
    const machine = role === 'dealer' ? this.dealer : this.seat
    if (beacon === undefined || machine === undefined) return
    const abort = new AbortController()
    this.#beaconAborts.add(abort)
    // From now when the round is already out (a hand being finished from its timelocks, long after R).
    const deadline = Math.max(beacon.roundTime(round), this.#clock.now()) + this.config.timeouts.contributeMs
    this.#logger.info({ hand, round, due: new Date(beacon.roundTime(round)).toISOString() }, 'waiting for the bound beacon round')
    const result = (r: { entry: BeaconEntry } | { error: string }): Effect[] => {
      try {
        return machine.beaconResult(hand, r)
      } catch (err) {
        if (!(err instanceof MachineFailure)) throw err
        this.#logger.error({ hand, err: err.cause }, 'unexpected error handling the beacon round; the hand was ended')
        return err.effects
      }
    }
    beacon.waitAndFetchRound(round, { deadline, signal: abort.signal })
      .then(entry => result({ entry }), (err: unknown) => {
        const e = err as Error & { kind?: string }
        this.#logger.warn({ hand, round, err: e.message }, 'beacon round unavailable')
        return result({ error: `${e.kind ?? e.name}: ${e.message}` })
      })
      .then(async effects => { await this.#enqueue(role, effects) })
      .catch(() => {})
      .finally(() => this.#beaconAborts.delete(abort))
  }

  #event (role: 'dealer' | 'seat', hand: number, event: HandEvent): void {
    // High-resolution wall clock: event times from different node processes are compared to the
    // sub-millisecond (the table benchmark), which Date.now's whole milliseconds cannot do.
    this.events.push(role, hand, event, performance.timeOrigin + performance.now())
    const level = event.type === 'aborted' || (event.type === 'shield' && !event.ok) || (event.type === 'recovered' && event.faults.length > 0) ? 'warn' : 'debug'
    this.#logger[level]({ hand, role, ...event }, `hand ${event.type}`)
  }
}

type PersistEffect = Extract<Effect, { kind: 'persist' }>
