import { readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { lpStream } from '@libp2p/utils'
import type { Connection, Libp2p, PrivateKey, Stream } from '@libp2p/interface'
import type { Logger } from 'pino'
import type { Signer } from '../core/identity.js'
import type { Signed } from '../core/signed.js'
import { bytesEqual, fromHex } from '../core/bytes.js'
import {
  decodeJoinRequest, encodeJoinMessage, JOIN_PROTOCOL, joinAsSeat, MAX_JOIN_MESSAGE_BYTES, secretDigest, signFinalTable,
  type DraftTable, type FinalTableBody, type JoinReply, type LinkInvite
} from '../core/join.js'
import { checkOwnGroup, finalOwnGroup, ownGroupBeaconOf, ownGroupMemberSchema, type OwnGroupMember } from '../core/own-group.js'
import { createRejectionLog } from '../net/rejection-log.js'
import { createNode } from '../net/node.js'
import { keepConnected } from '../net/keep-connected.js'
import { circuitAddress, parseRelayAddress } from '../net/relay.js'
import { startWebServer } from './web-server.js'
import { NodeInputError } from './errors.js'

/** The node config `table new` writes in the data directory; `fairdeal node --config DIR/node.json` runs it. */
export const CONFIG_FILE = 'node.json'
/** The table being set up, until every seat is taken (and, for a table joined by links, after). */
export const DRAFT_FILE = 'table-draft.json'
/** How long a seat has to send its join request once its stream is open. */
const JOIN_REQUEST_MS = 10_000
/** How long the joining node waits, once every seat is taken, for the final table to reach the seats. */
const JOIN_DRAIN_MS = 5_000
/** Join streams open at once: one per seat is the need; a few more for seats that try again. */
const MAX_JOIN_STREAMS = 32

/** The one-time links of a table joined by links (docs/browser-seat.md). */
export interface DraftLinks {
  /** Seat → SHA-256 of its link's secret (secretDigest): the secret itself is not kept. */
  digests: Record<string, string>
  /** The table page's port, named by the links. */
  webPort: number
  /** Where the node's web server listens (`web.host`; absent: 127.0.0.1). */
  webHost?: '0.0.0.0' | '::'
  /** The signed final table, once every seat is taken. */
  final?: Signed<FinalTableBody>
}

/**
 * A table whose nodes are also its beacon group (`table new --beacon own`, src/core/own-group.ts):
 * this node's settings as a member, and on the dealer's side what each seat said when it joined.
 */
export interface DraftGroup {
  /** Where this node's group member listens (libp2p) and serves its drand API: its group block's `listen` and `http`. */
  listen: string[]
  http: { host: string, port: number }
  /** Where the others reach this node's member. */
  member: OwnGroupMember
  /** The dealer's: each DKG phase, and how long after the last seat joined the DKG starts. */
  phaseMs?: number
  startInMs?: number
  /** The dealer's: seat → where the group reaches that seat's node, as it said when it joined. */
  seats?: Record<string, OwnGroupMember>
  /** The final group (every seat taken): the `group` block of the node's config, with `listen` and `http`. */
  final?: Record<string, unknown>
}

export interface Draft {
  listen: string[]
  /** What goes into invites and answers (absent in drafts written before --announce: the listen addresses). */
  announce?: string[]
  table: DraftTable
  peers: Record<string, string[]>
  /** Present for a table joined by links (`table new` without --answers). */
  links?: DraftLinks
  /** Present for a table whose nodes are also its beacon group. */
  group?: DraftGroup
}

/** Written whole or not at all. */
export async function writeJson (path: string, value: unknown): Promise<void> {
  const temp = `${path}.${process.pid}.tmp`
  await writeFile(temp, JSON.stringify(value, null, 2) + '\n', { mode: 0o600 })
  await rename(temp, path)
}

export async function readDraft (dir: string): Promise<Draft | undefined> {
  let text: string
  try { text = await readFile(join(dir, DRAFT_FILE), 'utf8') } catch { return undefined }
  return JSON.parse(text) as Draft
}

/**
 * The dealer's addresses as the invites name them (…/p2p/DEALER): its own, then, for a table with a
 * relay, its address through the relay (…/p2p/RELAY/p2p-circuit/p2p/DEALER), which a joining seat
 * uses when it cannot dial the dealer (the relay lets it through while the table takes seats).
 */
export function dealerAddressesOf (draft: Draft): string[] {
  const own = (draft.announce ?? draft.listen).map(a => `${a}/p2p/${draft.table.dealer}`)
  return draft.table.relay === undefined ? own : [...own, circuitAddress(draft.table.relay, draft.table.dealer)]
}

/** The node config of a draft; a table still joining by links has `null` at the seats not yet taken. */
export function configFor (draft: Draft): unknown {
  const { table } = draft
  return {
    data: '.',
    listen: draft.listen,
    ...(draft.links !== undefined ? { web: { port: draft.links.webPort, ...(draft.links.webHost !== undefined ? { host: draft.links.webHost } : {}) } } : {}),
    table: {
      id: table.id,
      game: table.game,
      scheme: table.scheme,
      dealer: table.dealer,
      seats: table.seats,
      peers: draft.peers,
      beacon: table.beacon,
      ...(table.timeouts !== undefined ? { timeouts: table.timeouts } : {}),
      ...(table.beaconMarginMs !== undefined ? { beaconMarginMs: table.beaconMarginMs } : {}),
      ...(table.timelock !== undefined ? { timelock: table.timelock } : {}),
      ...(table.timelockHandMs !== undefined ? { timelockHandMs: table.timelockHandMs } : {}),
      ...(table.relay !== undefined ? { relay: table.relay } : {})
    },
    // A table on its own group: once every seat is taken, the group block of this node's member.
    ...(draft.group?.final !== undefined ? { group: { ...draft.group.final, listen: draft.group.listen, http: draft.group.http } } : {})
  }
}

/** Whether a node config's JSON is a table still joining by links (seats not yet taken are null). */
export function joiningTable (raw: unknown): boolean {
  const seats = (raw as { table?: { seats?: unknown } } | null)?.table?.seats
  return Array.isArray(seats) && seats.includes(null)
}

/**
 * The dealer's desk for seats joining by link. It binds each seat to the first peer id that proves
 * the seat's secret, keeps the binding in the draft file before answering, and once every seat is
 * bound signs the final table and sends it on every join stream still open; a bound peer that asks
 * again gets it at once. Everything else is refused with one sentence, and changes nothing.
 */
export class JoinDesk {
  readonly #dir: string
  readonly #signer: Signer
  readonly #logger: Logger
  readonly #refused: ReturnType<typeof createRejectionLog>
  #draft: Draft
  #links: DraftLinks
  readonly #waiting = new Set<(doc: Signed<FinalTableBody>) => void>()
  #write: Promise<void> = Promise.resolve()
  readonly #serving = new Set<Promise<void>>()
  readonly #complete: { promise: Promise<Signed<FinalTableBody>>, resolve: (doc: Signed<FinalTableBody>) => void }

  constructor (dir: string, draft: Draft, signer: Signer, logger: Logger) {
    if (draft.links === undefined) throw new NodeInputError(`${join(dir, DRAFT_FILE)} is not a table joined by links`)
    this.#dir = dir
    this.#draft = draft
    this.#links = draft.links
    this.#signer = signer
    this.#logger = logger
    this.#refused = createRejectionLog(logger)
    let resolve: (doc: Signed<FinalTableBody>) => void = () => {}
    this.#complete = { promise: new Promise(r => { resolve = r }), resolve: (doc) => { resolve(doc) } }
    if (this.#links.final !== undefined) this.#complete.resolve(this.#links.final)
  }

  /** Resolves with the signed final table once every seat is taken. */
  get complete (): Promise<Signed<FinalTableBody>> { return this.#complete.promise }

  /** The seats still waiting for their player. */
  open (): number[] {
    return this.#draft.table.seats.flatMap((s, i) => s === null ? [i] : [])
  }

  /** The dealer's answer to one join request from `peer` (already schema-checked). */
  async request (peer: string, req: { table: string, seat: number, secret: string, group?: unknown }): Promise<JoinReply> {
    const { table } = this.#draft
    const refuse = (reason: string): JoinReply => {
      this.#refused({ peer, seat: req.seat, reason }, 'join refused')
      return { kind: 'refused', reason }
    }
    if (req.table !== table.id) return refuse(`this node deals table ${table.id}, not ${req.table}: the link is for another table`)
    const digest = this.#links.digests[String(req.seat)]
    if (digest === undefined || !bytesEqual(fromHex(digest), fromHex(secretDigest(req.secret)))) {
      return refuse(`this link is not valid for seat ${req.seat} of table ${table.id}: it was altered, or replaced by a later 'table new'; ask the dealer for a new one`)
    }
    const holder = table.seats[req.seat]
    if (holder !== null && holder !== peer) return refuse(`this link was used already: seat ${req.seat} of table ${table.id} is taken by another player (${String(holder)}); ask the dealer for a new one`)
    const elsewhere = table.seats.indexOf(peer)
    if (elsewhere !== -1 && elsewhere !== req.seat) return refuse(`this player (${peer}) already holds seat ${elsewhere} of table ${table.id}`)
    // A table whose nodes are also its beacon group: every seat's node is a member, reachable by the others.
    const group = this.#draft.group
    let member: OwnGroupMember | undefined
    if (group !== undefined) {
      const parsed = ownGroupMemberSchema.safeParse(req.group)
      if (req.group === undefined) return refuse(`table ${table.id}'s nodes are also its beacon group: every seat runs a node the others reach; join with 'fairdeal table join LINK --data DIR --group-listen ADDR' (the seat page cannot be a member)`)
      if (!parsed.success) return refuse(`where the group reaches this seat is malformed: ${parsed.error.issues[0].path.join('.') || '(root)'}: ${parsed.error.issues[0].message}`)
      member = parsed.data
      const kept = group.seats?.[String(req.seat)]
      if (holder === peer && kept !== undefined && JSON.stringify(kept) !== JSON.stringify(member)) {
        return refuse(`seat ${req.seat} joined the group at ${kept.addrs.join(', ')} (${kept.url}): join again with the --group-listen, --group-announce and --group-url of the first time`)
      }
    }
    if (holder === null) {
      // Kept before the answer: a restarted dealer still knows who holds the seat.
      table.seats[req.seat] = peer
      if (group !== undefined && member !== undefined) group.seats = { ...group.seats, [String(req.seat)]: member }
      const open = this.open()
      if (open.length === 0) {
        const ownGroup = group === undefined ? undefined : this.#finalGroup(group)
        this.#links.final = signFinalTable({ table, dealerAddresses: dealerAddressesOf(this.#draft), peers: this.#draft.peers, ...(ownGroup !== undefined ? { group: ownGroup } : {}) }, this.#signer)
      }
      await this.#save()
      this.#logger.info({ table: table.id, seat: req.seat, peer, waiting: open }, `seat ${req.seat} of table ${table.id} joined: ${peer}${open.length > 0 ? `; waiting for seat ${open.join(', ')}` : '; every seat is taken'}`)
      if (this.#links.final !== undefined) {
        const final = this.#links.final
        for (const w of this.#waiting) w(final)
        this.#complete.resolve(final)
      }
    }
    return { kind: 'bound', seat: req.seat, waiting: this.open() }
  }

  /**
   * The table's own group once every seat is taken: the dealer and each seat's node at the
   * addresses it gave, its DKG `startInMs` from now. Kept in the draft (the dealer's group block).
   */
  #finalGroup (group: DraftGroup): Record<string, unknown> {
    const { table } = this.#draft
    const beacon = ownGroupBeaconOf(table.beacon)
    if (beacon === undefined) throw new NodeInputError(`table ${table.id}'s beacon is not its own group`)
    const members = new Map<string, OwnGroupMember>([[table.dealer, group.member]])
    for (const [seat, m] of Object.entries(group.seats ?? {})) {
      const peer = table.seats[Number(seat)]
      if (typeof peer === 'string' && !members.has(peer)) members.set(peer, m)
    }
    const phaseMs = group.phaseMs ?? 10_000
    const final = finalOwnGroup({ table, beacon, members, start: Date.now() + (group.startInMs ?? 60_000), phaseMs })
    const problem = checkOwnGroup(final, table)
    if (problem !== undefined) throw new NodeInputError(`table ${table.id}'s own group: ${problem}`)
    group.final = final
    return final
  }

  /** Serves one join stream: the request, the answer, and the final table when it is there. */
  async serve (stream: Stream, connection: Connection): Promise<void> {
    const done = this.#serve(stream, connection)
    this.#serving.add(done)
    try { await done } finally { this.#serving.delete(done) }
  }

  /** Waits (at most `ms`) for the streams being served to finish: the last seats get the final table before the node stops. */
  async drain (ms: number): Promise<void> {
    await Promise.race([Promise.allSettled([...this.#serving]), new Promise(resolve => setTimeout(resolve, ms).unref())])
  }

  async #serve (stream: Stream, connection: Connection): Promise<void> {
    const peer = connection.remotePeer.toString()
    const lp = lpStream(stream, { maxDataLength: MAX_JOIN_MESSAGE_BYTES })
    const write = async (reply: JoinReply): Promise<void> => { await lp.write(encodeJoinMessage(reply)) }
    try {
      let req
      try {
        req = decodeJoinRequest((await lp.read({ signal: AbortSignal.timeout(JOIN_REQUEST_MS) })).subarray())
      } catch (err) {
        await write({ kind: 'refused', reason: `bad join request: ${(err as Error).message}` })
        await stream.close()
        return
      }
      const reply = await this.request(peer, req)
      await write(reply)
      if (reply.kind !== 'bound') { await stream.close(); return }
      const final = this.#links.final ?? await new Promise<Signed<FinalTableBody> | undefined>(resolve => {
        const w = (doc: Signed<FinalTableBody>): void => { this.#waiting.delete(w); resolve(doc) }
        this.#waiting.add(w)
        // The seat hung up before the table was complete: it asks again when it comes back.
        stream.addEventListener('close', () => { this.#waiting.delete(w); resolve(undefined) }, { once: true })
      })
      if (final === undefined) return
      await write({ kind: 'table', doc: final as Extract<JoinReply, { kind: 'table' }>['doc'] })
      await stream.close()
    } catch (err) {
      this.#logger.debug({ peer, err: (err as Error).message }, 'join stream failed')
      stream.abort(err as Error)
    }
  }

  async #save (): Promise<void> {
    const draft = this.#draft
    this.#write = this.#write.then(async () => {
      await writeJson(join(this.#dir, DRAFT_FILE), draft)
      await writeJson(join(this.#dir, CONFIG_FILE), configFor(draft))
    })
    await this.#write
  }
}

/** Registers the join protocol on a node for `desk`; returns the function that removes it. */
export async function registerJoinDesk (node: Libp2p, desk: JoinDesk): Promise<() => Promise<void>> {
  await node.handle(JOIN_PROTOCOL, async (stream: Stream, connection: Connection) => { await desk.serve(stream, connection) }, { maxInboundStreams: MAX_JOIN_STREAMS })
  return async () => { await node.unhandle(JOIN_PROTOCOL) }
}

/** The seat's side over libp2p: joinAsSeat on a join stream to the dealer (`group`: where its own beacon group reaches this seat), closed after. */
export async function joinOverStream (stream: Stream, invite: LinkInvite, self: string, onBound?: (waiting: number[]) => void, group?: OwnGroupMember): Promise<Signed<FinalTableBody>> {
  try {
    return await joinAsSeat(lpStream(stream, { maxDataLength: MAX_JOIN_MESSAGE_BYTES }), invite, self, onBound, group)
  } finally {
    stream.abort(new Error('join done'))
  }
}

/**
 * The dealer's node while its table is joining by links (`fairdeal node` on a config whose seats are
 * not all taken): a libp2p node on the table's listen addresses that serves only the join protocol
 * (anyone may connect: a joining seat's peer id is not known yet), and the seat page on the links'
 * port. Resolves once every seat is taken (node.json then holds the whole table), or with
 * undefined when `signal` stops it first.
 */
export async function gatherSeats (options: {
  dir: string, draft: Draft, privateKey: PrivateKey, signer: Signer, logger: Logger, signal: AbortSignal
}): Promise<Signed<FinalTableBody> | undefined> {
  const { draft, logger } = options
  const desk = new JoinDesk(options.dir, draft, options.signer, logger)
  const relay = draft.table.relay
  const node = await createNode({ privateKey: options.privateKey, listen: draft.listen, members: 'anyone', logger, relays: relay !== undefined ? [{ address: relay, reserve: true }] : [] })
  const stops: Array<() => Promise<void>> = [async () => { await node.stop() }]
  try {
    stops.unshift(await registerJoinDesk(node, desk))
    if (relay !== undefined) {
      const kept = keepConnected(node, { peer: parseRelayAddress(relay).peerId, addresses: [relay], logger, name: 'the relay' })
      stops.unshift(async () => { kept.close() })
    }
    const web = await startWebServer({ port: draft.links?.webPort ?? 0, host: draft.links?.webHost })
    stops.unshift(web.close)
    logger.info({ table: draft.table.id, waiting: desk.open(), web: web.url, addresses: node.getMultiaddrs().map(String) },
      `table ${draft.table.id} is joining: waiting for seat ${desk.open().join(', ')} to open their links (the seat page is at ${web.url}/seat)`)
    const stopped = new Promise<undefined>(resolve => {
      if (options.signal.aborted) resolve(undefined)
      options.signal.addEventListener('abort', () => { resolve(undefined) }, { once: true })
    })
    const final = await Promise.race([desk.complete, stopped])
    // The seats whose join completed the table get it on their streams before this node stops.
    if (final !== undefined) await desk.drain(JOIN_DRAIN_MS)
    return final
  } finally {
    for (const stop of stops) await stop().catch(() => {})
  }
}
