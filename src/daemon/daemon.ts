import { chmod } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import type { Level } from 'level'
import type { Libp2p } from '@libp2p/interface'
import type { Logger } from 'pino'
import type { Signed } from '../core/signed.js'
import type { Interner } from '../core/frozen.js'
import { sealTimelockText } from '../core/timelock/index.js'
import { createBeaconClient, systemClock, type BeaconClient, type Clock } from '../beacon/index.js'
import { BeaconUnavailableError } from '../core/beacon/errors.js'
import { loadIdentity } from '../net/identity.js'
import { createNode } from '../net/node.js'
import { parseRelayAddress } from '../net/relay.js'
import { createMessenger, type Messenger } from '../net/messenger.js'
import { createRejectionLog, type RejectionLog } from '../net/rejection-log.js'
import { keepConnected, tagMembers, type KeptConnection } from '../net/keep-connected.js'
import { logDbPath, openLog, type Log } from '../store/log.js'
import { registerLogFetch } from '../net/log-fetch.js'
import { createHeadAnnouncer, registerWitness } from '../net/witness.js'
import { WitnessStore } from '../store/witness-store.js'
import { LogInUseError } from '../store/errors.js'
import { openStoreDb } from '../store/store-db.js'
import { stateValueEncoding } from '../store/state-encoding.js'
import { ENDED_KEPT, type LoggedOutcome } from '../protocol/dealer.js'
import type { DealerSide, SeatSide } from '../protocol/contracts.js'
import { machinesFor } from '../protocol/machines.js'
import { Rejection } from '../protocol/types.js'
import { decodeFrame, MAX_FRAME_BYTES, TABLE_PROTOCOL, WireError } from '../protocol/wire.js'
import { NodeInputError, TableChoiceError } from './errors.js'
import { addressBookOf, beaconProblem, nodeMembers, type NodeConfig, type TableConfig } from './config.js'
import type { BeaconConfig } from '../core/beacon/index.js'
import { EventFeed } from './events.js'
import { nativeSha256, nativeSigner } from '../crypto/native-crypto.js'
import { useSha256 } from '../core/bytes.js'
import { verifyMemo } from './verify-memo.js'
import { TableHost, type NodeServices, type StateStore } from './table-host.js'
import { InputError } from '../core/errors.js'

export interface DaemonOptions {
  config: NodeConfig
  logger: Logger
  /** The protocol's clock (deadlines, beacon rounds); Date.now by default. Tests move it. */
  clock?: Clock
  /** How often deadlines are checked. */
  tickMs?: number
  /**
   * For a table on its own beacon group: where the group stands (its DKG not started, running,
   * failed), said to anyone asking the table to deal before its chain is bound (bindOwnGroup).
   */
  ownGroupState?: () => string
}

type StateDb = Level<string, unknown>

/** The error for a data directory another process has open. */
export class DataDirInUseError extends InputError {
  override name = 'DataDirInUseError'
}

/**
 * A running fairdeal node: identity, LevelDB (hand state + receipt log), libp2p, the beacon
 * clients, and one TableHost per table it serves (its protocol machines and the queue that carries
 * out their effects). The store, the log (one hash chain holding every table's entries), the
 * libp2p node and the event feed are the node's; each incoming document goes to the table its body
 * names.
 */
/** How long the start's beacon check waits for an answer. */
export const BEACON_CHECK_MS = 10_000

/** What the start's beacon check found: `reachable` null while it runs. */
export interface BeaconReach { reachable: boolean | null, reason?: string, checkedAt?: number }

export class Daemon {
  readonly peerId: string
  readonly config: NodeConfig
  readonly events = new EventFeed()
  readonly log: Log
  /** The cosigned heads this node witnessed for a peer (docs/log.md, "Witnessed heads"). */
  witnessedHeads: (owner: string) => Promise<string[]> = async () => []
  readonly node: Libp2p
  /** Every table this node serves, in config order. */
  readonly tables: readonly TableHost[]
  readonly #byId: ReadonlyMap<string, TableHost>
  readonly #logger: Logger
  readonly #db: StateDb
  readonly #messenger: Messenger
  readonly #clock: Clock
  #timer: NodeJS.Timeout | undefined
  #stopping = false
  /** The connections this node keeps to the dealers of its tables (by dealer peer id). */
  #kept: ReadonlyMap<string, KeptConnection> = new Map()
  #rejections = 0
  /** Whether each table's beacon answered this node's check at start (null until it is done). */
  readonly #beaconReach = new Map<string, BeaconReach>()
  /** Rejected messages, members' and strangers' alike, in rate-limited summaries. */
  readonly #rejectionLog: RejectionLog
  /** Members of any of the node's tables: the peers whose table frames are read at all. */
  readonly #members: ReadonlySet<string>
  /** The verify memo's documents, which take the place of their copies inside frames off the wire (decodeFrame). */
  readonly #intern: Interner
  /** A table's machines and beacon client from its config (at start, or when its own group's chain is bound). */
  #build: (t: TableConfig) => { dealer: DealerSide | undefined, seat: SeatSide | undefined, beacon: BeaconClient | undefined } = () => { throw new Error('not started') }
  #beaconFor: (t: TableConfig) => BeaconClient | undefined = () => undefined
  #random: (n: number) => Uint8Array = n => new Uint8Array(randomBytes(n))

  private constructor (parts: {
    peerId: string, config: NodeConfig, logger: Logger, db: StateDb, log: Log, node: Libp2p, messenger: Messenger,
    members: ReadonlySet<string>, clock: Clock, intern: Interner, tables: (services: NodeServices) => TableHost[]
  }) {
    this.peerId = parts.peerId
    this.config = parts.config
    this.#logger = parts.logger
    this.#db = parts.db
    this.log = parts.log
    this.node = parts.node
    this.#messenger = parts.messenger
    this.#clock = parts.clock
    this.#members = parts.members
    this.#intern = parts.intern
    this.#rejectionLog = createRejectionLog(parts.logger)
    const services: NodeServices = {
      peerId: parts.peerId,
      dataDir: parts.config.dataDir,
      logger: parts.logger,
      clock: parts.clock,
      state: parts.db.sublevel('state', { valueEncoding: stateValueEncoding }) as unknown as StateStore,
      log: parts.log,
      events: this.events,
      intern: parts.intern,
      send: async (to, frame, options) => { await this.#messenger.send(to, frame, options) },
      rejected: (fields) => {
        this.#rejections++
        this.#rejectionLog({ table: fields.table, peer: fields.from, from: fields.from, reason: fields.reason }, 'message rejected')
      }
    }
    this.tables = parts.tables(services)
    this.#byId = new Map(this.tables.map(t => [t.id, t]))
  }

  static async start (options: DaemonOptions): Promise<Daemon> {
    const { config, logger } = options
    const clock: Clock = options.clock ?? systemClock
    // Never created here: a config whose data path has a typo must not start a node with a new key.
    const identity = await loadIdentity(config.dataDir)
    // A data directory made by hand (or by an older version) may be open to others: it holds the key,
    // the log and the dealer's unrevealed secrets, so it is the owner's alone.
    await chmod(config.dataDir, 0o700)
    for (const { table } of config.tables) {
      if (identity.peerId !== table.dealer && !table.seats.includes(identity.peerId)) {
        // The usual cause is a config whose peer ids were not replaced with the ones `fairdeal init` printed.
        throw new NodeInputError(`this node (${identity.peerId}, the key in ${config.dataDir}) is neither the dealer nor a seat of table ${table.id}: put the peer ids printed by 'fairdeal init' in the config`)
      }
    }
    let db: StateDb
    try {
      // Refuses a damaged store (and never creates one over the remains of another): see store-db.ts.
      db = await openStoreDb(logDbPath(config.dataDir), { valueEncoding: 'json', readAll: true })
    } catch (err) {
      if (err instanceof LogInUseError) throw new DataDirInUseError(`data directory ${config.dataDir} is already in use by another process`)
      throw err
    }
    const signer = nativeSigner(identity.seed, identity.peerId)
    // Every digest the node takes (documents, log entries) on OpenSSL's SHA-256.
    useSha256(nativeSha256)
    // The machines' signatures and checks and the witnessing share one memo (see verify-memo.ts):
    // the log's heads are signed through it, so its own head in each cosignature that comes back
    // costs a hash, not a check.
    const memo = verifyMemo()
    const memoSigner = memo.signer(signer)
    const cleanup: Array<() => Promise<void>> = [async () => { await db.close() }]
    try {
      let log: Log
      try {
        log = await openLog({ db, signer: memoSigner })
      } catch (err) {
        if (err instanceof LogInUseError) throw new DataDirInUseError(err.message)
        throw err
      }
      cleanup.unshift(async () => { await log.close() })
      // A member of any of the node's tables is a member of the node (connection slots, log access,
      // witnessing); which table a frame may touch is checked per table (#onFrame).
      const members = new Set(nodeMembers(config.tables))
      // With a public log non-members may connect too (to fetch the log), bounded so that members
      // always find room; the table protocol still takes frames from members only (#onFrame).
      // Each table's relay: every member holds a reservation on it, so that every member reaches every
      // other through it, the seats each other too (their VIEWs and NONCEs go seat to seat, not
      // through the dealer: docs/protocol.md §6), where nobody can dial them.
      const relays = config.tables.flatMap(t => t.relay === null ? [] : [{ address: t.relay, reserve: true }])
      const node = await createNode({ privateKey: identity.privateKey, listen: config.listen, members, strangers: config.logAccess === 'anyone' ? 'admit' : 'refuse', logger, relays })
      cleanup.unshift(async () => { await node.stop() })
      await tagMembers(node, members)
      const addressBook = addressBookOf(config.tables)
      // This node keeps a connection to the dealer of every table where it does not deal, and the
      // dealer sends on it: a seat behind a home router (NAT) needs no open port (docs/network.md).
      const keptConnections = new Map<string, KeptConnection>()
      for (const dealer of new Set(config.tables.map(t => t.table.dealer))) {
        if (dealer === identity.peerId) continue
        const kept = keepConnected(node, { peer: dealer, addresses: addressBook.get(dealer) ?? [], logger, name: 'the dealer' })
        keptConnections.set(dealer, kept)
        cleanup.unshift(async () => { kept.close() })
      }
      // A member of a relayed table keeps its connection to the relay: its reservation rides on it,
      // and is made again when the connection comes back (docs/network.md, the relay).
      for (const relay of new Set(relays.filter(r => r.reserve).map(r => r.address))) {
        const kept = keepConnected(node, { peer: parseRelayAddress(relay).peerId, addresses: [relay], logger, name: 'the relay' })
        cleanup.unshift(async () => { kept.close() })
      }
      const messenger = await createMessenger(node, { protocol: TABLE_PROTOCOL, maxFrameBytes: MAX_FRAME_BYTES, logger, addressBook })
      cleanup.unshift(async () => { await messenger.close() })
      // Witnessed heads (docs/log.md): this node cosigns the other members' heads and serves them
      // with its log; its own head goes to every other member after each append.
      const witnessStore = new WitnessStore(db, signer, Date.now, memo.verify)
      const stopLogService = await registerLogFetch(node, log, { policy: config.logAccess, members, logger, witnessed: async owner => await witnessStore.heldFor(owner) })
      cleanup.unshift(stopLogService)
      cleanup.unshift(await registerWitness(node, witnessStore, { members, logger }))
      const announcer = createHeadAnnouncer(node, { self: identity.peerId, members, addressBook, logger, onCosigned: (peer, line) => { log.noteCosignature(peer, line) }, current: () => log.headLine(), verifyDoc: memo.verify })
      cleanup.unshift(announcer.close)
      log.onAppend(headLine => { announcer.announce(headLine) })

      const now = (): number => clock.now()
      const random = (n: number): Uint8Array => new Uint8Array(randomBytes(n))
      // Tables with the same beacon share its client (one fetch of a round, one cache).
      const beacons = new Map<string, BeaconClient>()
      const beaconFor = (t: TableConfig): BeaconClient | undefined => {
        if (t.beacon.kind !== 'drand') return undefined
        const key = JSON.stringify([t.beacon.chain.hash, t.beacon.relays])
        let client = beacons.get(key)
        if (client === undefined) {
          client = createBeaconClient({
            chain: t.beacon.chain,
            relays: t.beacon.relays,
            clock,
            onRelayFailure: (f) => { logger.warn({ relay: f.url, round: f.round, kind: f.kind, reason: f.message }, 'beacon relay failed') }
          })
          beacons.set(key, client)
        }
        return client
      }
      const build = (t: TableConfig): { dealer: DealerSide | undefined, seat: SeatSide | undefined, beacon: BeaconClient | undefined } => {
        const { table } = t
        const beaconBinding = t.beacon.kind === 'drand' ? { chain: t.beacon.chain, marginMs: t.beaconMarginMs } : null
        const common = { table, signer: memoSigner, timeouts: t.timeouts, beacon: beaconBinding, now, random, verifyDoc: memo.verify, timelock: t.timelock }
        // Each hand family has its own machines; the host uses only their contracts.
        const machines = machinesFor(table.scheme)
        const dealer = identity.peerId === table.dealer ? machines.dealer(common) : undefined
        const seat = table.seats.includes(identity.peerId) ? machines.seat(common) : undefined
        return { dealer, seat, beacon: beaconFor(t) }
      }
      const hosts = (services: NodeServices): TableHost[] => config.tables.map(t => {
        // A table on its own group runs no machine before the group's chain is bound (bindOwnGroup).
        if (t.ownGroup !== null) {
          const group = t.ownGroup
          return TableHost.pending(t, services, () => `table ${t.table.id} takes its beacon from its own group ${group.group} (${group.threshold} of its nodes make a round), ` +
            `whose chain is not known yet: ${options.ownGroupState?.() ?? 'its DKG is not done'}; the table deals once it is`)
        }
        const { dealer, seat, beacon } = build(t)
        return new TableHost(t, dealer, seat, services, beacon)
      })
      // Sealing's first run builds noble's precomputed tables (~0.5 s here): done now, not on a hand's path.
      const locked = config.tables.find(t => t.timelock !== null && t.beacon.kind === 'drand')
      if (locked !== undefined && locked.beacon.kind === 'drand') sealTimelockText('', locked.beacon.chain, 1, random)
      const daemon = new Daemon({ peerId: identity.peerId, config, logger, db, log, node, messenger, members, clock, intern: memo.intern, tables: hosts })
      daemon.#build = build
      daemon.#beaconFor = beaconFor
      daemon.#random = random
      daemon.#kept = keptConnections
      daemon.witnessedHeads = async owner => await witnessStore.heldFor(owner)
      await daemon.#restore()
      messenger.onFrame((from, frame) => { daemon.#onFrame(from, frame) })
      // A seat whose connection came back gets again what may have been lost with the old one.
      const onConnect = (evt: CustomEvent<{ toString: () => string }>): void => {
        const peer = evt.detail.toString()
        for (const t of daemon.tables) t.peerConnected(peer)
      }
      node.addEventListener('peer:connect', onConnect)
      cleanup.unshift(async () => { node.removeEventListener('peer:connect', onConnect) })
      daemon.#timer = setInterval(() => { daemon.#tick() }, options.tickMs ?? 100)
      daemon.#timer.unref()
      logger.info({ peerId: identity.peerId, tables: daemon.tables.map(t => t.id), role: daemon.role, addresses: daemon.addresses() }, 'node started')
      daemon.#checkBeacons(config.tables, beaconFor)
      return daemon
    } catch (err) {
      for (const c of cleanup) await c().catch(() => {})
      throw err
    }
  }

  /**
   * The table a request names, or the node's only table when it names none. A node serving several
   * tables needs the id: without it, or with an id it does not serve, a TableChoiceError lists them.
   */
  table (id?: string): TableHost {
    const ids = (): string => this.tables.map(t => t.id).join(', ')
    if (id === undefined) {
      if (this.tables.length === 1) return this.tables[0]
      throw new TableChoiceError(`this node serves ${this.tables.length} tables (${ids()}): name one with --table ID`, 'missing')
    }
    const host = this.#byId.get(id)
    if (host === undefined) throw new TableChoiceError(`this node serves no table ${JSON.stringify(id.slice(0, 64))} (it serves: ${ids()})`, 'unknown')
    return host
  }

  /** The only table's dealer machine (undefined when this node deals none); see table(id) for a node with several. */
  get dealer (): DealerSide | undefined { return this.table().dealer }
  /** The only table's seat machine (undefined when this node holds no seat there). */
  get seat (): SeatSide | undefined { return this.table().seat }

  get role (): string {
    if (this.tables.length === 1) return this.tables[0].role
    return this.tables.map(t => `${t.role} at ${t.id}`).join(', ')
  }

  addresses (): string[] {
    return this.node.getMultiaddrs().map(a => a.toString())
  }

  get rejections (): number { return this.#rejections }

  /** Starts a hand (dealer only). Resolves once the COMMIT is durable and handed to the network. */
  async deal (params: { dealer?: number, table?: string, play?: boolean } = {}): Promise<number> {
    if (this.#stopping) throw new Rejection('the node is stopping')
    return await this.table(params.table).deal(params)
  }

  async stage (hand: number, stage: string, taker?: number, table?: string): Promise<void> {
    if (this.#stopping) throw new Rejection('the node is stopping')
    await this.table(table).stage(hand, stage, taker)
  }

  async end (hand: number, table?: string): Promise<void> {
    if (this.#stopping) throw new Rejection('the node is stopping')
    await this.table(table).end(hand)
  }

  async act (hand: number, action: unknown, table?: string): Promise<void> {
    if (this.#stopping) throw new Rejection('the node is stopping')
    await this.table(table).act(hand, action)
  }

  cards (hand: number, table?: string): ReturnType<SeatSide['cards']> {
    return this.table(table).cards(hand)
  }

  /** The node and one of its tables (the only one when `table` is not given): role, peers, hands in play. */
  status (table?: string): Record<string, unknown> {
    const host = this.table(table)
    const head = this.log.head()
    // Either side may have dialled: a seat behind NAT is connected inbound (it dialled the dealer).
    const open = new Map<string, 'inbound' | 'outbound'>()
    const direct = new Set<string>()
    for (const c of this.node.getConnections()) {
      if (c.status !== 'open') continue
      open.set(c.remotePeer.toString(), c.direction)
      if (!c.remoteAddr.toString().includes('/p2p-circuit')) direct.add(c.remotePeer.toString())
    }
    const relayedOnly = new Set([...open.keys()].filter(p => !direct.has(p)))
    const { table: spec, role, seat, dealerHands, seatHands, peers, beacon } = host.status(open)
    return {
      peerId: this.peerId,
      table: spec,
      role,
      seat,
      addresses: this.addresses(),
      dealerHands,
      seatHands,
      log: { entries: head === null ? 0 : head.body.seq + 1 },
      // For a dealer this node cannot reach: why its last dial failed (what to check).
      // Which path a connected peer uses: direct, or only through the table's relay.
      peers: (peers as Array<{ peer: string, connected: boolean }>).map(p => {
        if (p.connected) return { ...p, path: relayedOnly.has(p.peer) ? 'relayed' : 'direct' }
        const error = this.#kept.get(p.peer)?.lastError ?? null
        return error === null ? p : { ...p, lastDialError: error }
      }),
      // Whether the beacon answered at start: reachable true/false (and why), null while asking.
      beacon: beacon === null || beacon === undefined ? beacon : { ...beacon as object, reach: this.#beaconReach.get(host.id) ?? { reachable: null } },
      rejectedMessages: this.#rejections,
      tables: this.tableList()
    }
  }

  /**
   * Asks each drand beacon the node's tables use for its latest round, once, at start, without
   * holding the start up: a beacon this machine cannot reach (no network, a blocked relay) would
   * otherwise show only as every hand waiting for its round and aborting. Said in one line with
   * what to do; `status().beacon.reach` shows it (`hand status`).
   */
  #checkBeacons (tables: readonly TableConfig[], beaconFor: (t: TableConfig) => BeaconClient | undefined): void {
    const byClient = new Map<BeaconClient, { name: string, tables: string[] }>()
    for (const t of tables) {
      const client = beaconFor(t)
      if (client === undefined || t.beacon.kind !== 'drand') continue
      this.#beaconReach.set(t.table.id, { reachable: null })
      const entry = byClient.get(client) ?? { name: t.beacon.name ?? t.beacon.chain.hash.slice(0, 16), tables: [] }
      entry.tables.push(t.table.id)
      byClient.set(client, entry)
    }
    for (const [client, { name, tables: ids }] of byClient) {
      const signal = AbortSignal.timeout(BEACON_CHECK_MS)
      // Its own client, without the relay-failure log: one line says it all, and a relay that
      // answers without the round (not there yet, a recorded beacon) is no failure to log.
      const probe = createBeaconClient({ chain: client.chain, relays: [...client.relays], clock: this.#clock })
      // Before the chain's genesis (a group or local beacon starting later) round 1 is asked for: a
      // relay that answers without it is reachable, as one that answers without any round not out.
      void probe.fetchRound(Math.max(1, client.currentRound() - 1), { signal }).then(() => {
        for (const id of ids) this.#beaconReach.set(id, { reachable: true, checkedAt: this.#clock.now() })
      }, (err: unknown) => {
        if (this.#stopping) return
        // A relay that answered (a round not there yet, an entry that fails) is reachable: only
        // "every relay down" (no connection, no answer, a DNS failure) is said here.
        if (!signal.aborted && !(err instanceof BeaconUnavailableError)) {
          for (const id of ids) this.#beaconReach.set(id, { reachable: true, checkedAt: this.#clock.now() })
          return
        }
        const reason = (signal.aborted ? `no answer within ${BEACON_CHECK_MS / 1000} s` : (err as Error).message).split('\n')[0].slice(0, 300)
        for (const id of ids) this.#beaconReach.set(id, { reachable: false, reason, checkedAt: this.#clock.now() })
        this.#logger.warn({ beacon: name, tables: ids, relays: client.relays, reason },
          `beacon ${name} cannot be reached from this node (${reason}): each hand of table ${ids.join(', ')} would wait for its round and abort. ` +
          'Use a beacon this machine reaches: a local one (fairdeal beacon serve) or your own group (fairdeal beacon group create), as table.beacon')
      })
    }
  }

  /**
   * Binds a table on its own beacon group to the group's chain, once this node's group member has it
   * (its DKG done, or reloaded): `beacon` is the group as a table beacon (groupTableBeacon: the
   * chain, the members' URLs as relays). Checked as a config's beacon is (a drand chain of the
   * group's period, with timelock encryption for a time-locked table); the table's machines then
   * start, its saved hands are restored and the documents held meanwhile reach them.
   */
  async bindOwnGroup (tableId: string, beacon: BeaconConfig): Promise<void> {
    const host = this.table(tableId)
    const t = host.config
    if (t.ownGroup === null || host.pending === undefined) throw new NodeInputError(`table ${tableId} is not waiting for its own group's chain`)
    if (this.#stopping) return
    if (beacon.kind !== 'drand') throw new NodeInputError(`table ${tableId}: its own group ${t.ownGroup.group} gave no drand chain`)
    if (beacon.chain.period !== t.ownGroup.period) throw new NodeInputError(`table ${tableId}: its own group's chain has a round every ${beacon.chain.period} s, not every ${t.ownGroup.period} s as the table's beacon names`)
    const problem = beaconProblem({ scheme: t.table.scheme, timelock: t.timelock?.rule ?? 'off' }, beacon, 'table')
    if (problem !== undefined) throw new NodeInputError(`table ${tableId}: its own group's chain: ${problem.message}`)
    const config: TableConfig = { ...t, beacon }
    let logged: Promise<LoggedOutcome[]> | undefined
    const recent = async (): Promise<LoggedOutcome[]> => await (logged ??= this.#recentlyLogged(ENDED_KEPT * 4 * this.tables.length))
    await host.bind({ config, ...this.#build(config) }, recent)
    // Sealing's first run builds noble's precomputed tables: done now, not on the first hand's path.
    if (config.timelock !== null) sealTimelockText('', beacon.chain, 1, this.#random)
    this.#logger.info({ table: tableId, group: t.ownGroup.group, chainHash: beacon.chain.hash, relays: beacon.relays },
      `table ${tableId} is bound to its own group ${t.ownGroup.group}'s chain ${beacon.chain.hash}: it deals`)
    this.#checkBeacons([config], this.#beaconFor)
  }

  /** Every table the node serves: id, game, scheme and this node's role there. */
  tableList (): Array<{ id: string, game: string, scheme: string, role: string }> {
    return this.tables.map(t => ({ id: t.id, game: t.config.table.game, scheme: t.config.table.scheme, role: t.role }))
  }

  /** Finishes what can be finished (a dealt hand is revealed), aborts the rest, then closes everything. */
  async stop (options: { graceMs?: number } = {}): Promise<void> {
    if (this.#stopping) return
    this.#stopping = true
    await Promise.all(this.tables.map(async t => { await t.stop(options.graceMs) }))
    clearInterval(this.#timer)
    await this.#messenger.close().catch(() => {})
    try { await this.node.stop() } catch {}
    await this.log.close().catch(() => {})
    await this.#db.close().catch(() => {})
    this.#logger.info({ peerId: this.peerId }, 'node stopped')
  }

  async #restore (): Promise<void> {
    // The end of the log is read once, however many tables ask for it: each dealer keeps the
    // outcomes of its own table's last hands (ENDED_KEPT of them) and skips the rest.
    let logged: Promise<LoggedOutcome[]> | undefined
    const recent = async (): Promise<LoggedOutcome[]> => await (logged ??= this.#recentlyLogged(ENDED_KEPT * 4 * this.tables.length))
    for (const t of this.tables) await t.restore(recent)
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
    let doc, host
    try {
      doc = decodeFrame(frame, this.#intern)
      host = tableFor(this.#byId, from, doc)
    } catch (err) {
      this.#reject(from, err)
      return
    }
    host.receive(from, doc)
  }

  #reject (from: string, err: unknown): void {
    if (!(err instanceof Rejection) && !(err instanceof WireError)) {
      this.#logger.error({ from, err }, 'unexpected error handling a message')
      return
    }
    this.#rejections++
    this.#rejectionLog({ peer: from, from, reason: err.message }, 'message rejected')
  }

  #tick (): void {
    if (this.#stopping) return
    const now = this.#clock.now()
    for (const t of this.tables) t.tick(now)
  }
}

/**
 * The table a document is for. Every document's body names its table (the wire schema requires
 * it): that table's machines take it, and nothing else sees it. A table the node does not serve, or
 * a sender who is no member of that table, is a Rejection, and nothing is changed.
 */
export function tableFor<T extends { members: ReadonlySet<string> }> (tables: ReadonlyMap<string, T>, from: string, doc: Signed<unknown>): T {
  const id = (doc.body as { table: string }).table
  const host = tables.get(id)
  if (host === undefined) throw new Rejection(`${doc.type} for table ${id}, which this node does not serve`)
  if (!host.members.has(from)) throw new Rejection(`${doc.type} for table ${id} from a peer who is not at that table`)
  return host
}
