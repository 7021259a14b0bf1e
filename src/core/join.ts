import * as z from 'zod'
import { ROBOT } from './hand/messages.js'
import { RECOVERED_RULES } from './hand/recovered.js'
import { peerIdSchema } from './peer-id-schema.js'
import { fromBase64, fromUtf8, sha256Hex, toBase64, utf8 } from './bytes.js'
import { InputError } from './errors.js'
import { signDocument, verifyDocument, type Signed } from './signed.js'
import type { Signer } from './identity.js'

/**
 * Joining a table from one link (docs/browser-seat.md, "One link per seat"). Pure, shared by the
 * CLI seat (`table join LINK`), the dealer's node and the seat page.
 *
 * A link is `http(s)://HOST:PORT/seat#INVITE`: the page the dealer's node serves, and in the
 * fragment (which a browser never sends to any server) the seat's invite, base64url(JSON). The
 * invite carries a one-time secret of 32 random bytes. The seat dials the dealer (noise proves the
 * dealer's key, which the invite names) on JOIN_PROTOCOL and sends the secret; the dealer, which
 * kept only the secret's SHA-256, binds the seat to the peer id that proved it. Once every seat is
 * bound it sends every seat the final table, signed (`table` document): no answer string, no table
 * line. A link works for one peer id only: the same peer may ask again, another is refused.
 */

export const JOIN_PROTOCOL = '/fairdeal/join/1.0.0'
/** The largest join message either way: a table block with an inline beacon config is a few KiB. */
export const MAX_JOIN_MESSAGE_BYTES = 64 * 1024
/** The path of the seat page in a link. */
export const SEAT_PAGE_PATH = '/seat'
/** The signed final table's document type. */
export const TABLE_DOC = 'table'

export class JoinInputError extends InputError {
  override name = 'JoinInputError'
}

const peerId = peerIdSchema
const address = z.string().min(1).max(256)

/** The table block as the config has it, a seat not yet taken being null. */
export const draftTableSchema = z.object({
  id: z.string().min(1).max(64),
  game: z.string().min(1).max(32),
  scheme: z.string().min(1).max(32),
  dealer: peerId,
  seats: z.array(z.union([peerId, z.literal(ROBOT), z.null()])).min(2).max(8),
  timeouts: z.record(z.string(), z.number()).optional(),
  beacon: z.union([z.string().min(1), z.record(z.string(), z.unknown())]),
  beaconMarginMs: z.number().int().min(0).optional(),
  /** The table's timelock rule (the config's `table.timelock`); absent: off. */
  timelock: z.enum(['off', ...RECOVERED_RULES]).optional(),
  /** A time-locked blind table's planned longest hand, ms (the config's `table.timelockHandMs`, docs/dealer-blind.md §14); absent: 30 minutes. */
  timelockHandMs: z.number().int().min(1_000).max(7 * 86_400_000).optional(),
  /** The table's relay (`…/p2p/RELAYID`), when its dealer is reached through one (docs/network.md). */
  relay: z.string().min(1).max(256).optional()
}).strict()
export type DraftTable = z.infer<typeof draftTableSchema>

const secretSchema = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be 32 bytes in base64url')

/** A link's invite: the table so far, the seat offered, its one-time secret, the dealer's addresses. */
export const linkInviteSchema = z.object({
  v: z.literal(2),
  table: draftTableSchema,
  seat: z.number().int().min(1).max(7),
  secret: secretSchema,
  /** Where the dealer listens, each ending in /p2p/<dealer> (a WebSockets one for the page). */
  dealerAddresses: z.array(address).min(1).max(8)
}).strict()
export type LinkInvite = z.infer<typeof linkInviteSchema>

/** Seat → dealer, the first message on a join stream. */
export const joinRequestSchema = z.object({
  v: z.literal(1),
  table: z.string().min(1).max(64),
  seat: z.number().int().min(0).max(7),
  secret: secretSchema,
  /**
   * At a table whose nodes are also its beacon group (src/core/own-group.ts): where the group
   * reaches this seat's node, checked by the dealer's desk (ownGroupMemberSchema).
   */
  group: z.object({ addrs: z.array(z.string().min(1).max(256)).min(1).max(4), url: z.string().min(1).max(256) }).strict().optional()
}).strict()
export type JoinRequest = z.infer<typeof joinRequestSchema>

/** The final table: every seat taken, signed by the dealer. */
export const finalTableBodySchema = z.object({
  table: draftTableSchema,
  /** How to reach the dealer (…/p2p/DEALER) and the members that listen somewhere. */
  dealerAddresses: z.array(address).max(8),
  peers: z.record(peerId, z.array(address).max(8)).default({}),
  /**
   * At a table whose nodes are also its beacon group: the final group (a `beacon-group/group`
   * body), checked by each seat with checkOwnGroup (src/core/own-group.ts).
   */
  group: z.record(z.string(), z.unknown()).optional()
}).strict()
export type FinalTableBody = z.infer<typeof finalTableBodySchema>

const signedTableSchema = z.object({
  type: z.literal(TABLE_DOC),
  signer: peerId,
  body: finalTableBodySchema,
  sig: z.string().regex(/^[0-9a-f]{128}$/)
}).strict()

/** Dealer → seat, on the join stream: refused; bound (and who is still awaited); then the final table. */
export const joinReplySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('refused'), reason: z.string().min(1).max(500) }).strict(),
  z.object({ kind: z.literal('bound'), seat: z.number().int().min(0).max(7), waiting: z.array(z.number().int().min(0).max(7)).max(8) }).strict(),
  z.object({ kind: z.literal('table'), doc: signedTableSchema }).strict()
])
export type JoinReply = z.infer<typeof joinReplySchema>

export function toBase64Url (bytes: Uint8Array): string {
  return toBase64(bytes, true).replace(/\+/g, '-').replace(/\//g, '_')
}

export function fromBase64Url (text: string, what: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new JoinInputError(`${what} is damaged (characters outside base64url): copy it again, whole`)
  return fromBase64(text.replace(/-/g, '+').replace(/_/g, '/'), what)
}

/**
 * What a seat hears when the dealer's node hung up on it while it joined: past joining, the node
 * lets in only the table's members, so the link's seat is someone else's (the CLI and the page).
 */
export function linkUsedUp (table: string): string {
  return `this link was used already: every seat of table ${table} is taken and the dealer's node lets in only its players; ask the dealer for a new link`
}

/** A fresh one-time secret (32 bytes from `random`). */
export function newJoinSecret (random: (n: number) => Uint8Array): string {
  return toBase64Url(random(32))
}

/** What the dealer keeps of a secret: its SHA-256, so its data directory holds no usable link. */
export function secretDigest (secret: string): string {
  return sha256Hex(utf8(`fairdeal/join/v1\n${secret}`))
}

/** `PAGE#INVITE`: PAGE the seat page's URL (`http://127.0.0.1:7402/seat`, or wherever it is hosted). */
export function formatLink (page: string, invite: LinkInvite): string {
  return `${page}#${toBase64Url(utf8(JSON.stringify(invite)))}`
}

/** The longest link accepted (a table block with an inline beacon config is a few KiB). */
const MAX_LINK = 64 * 1024

/** Whether `text` looks like a link (an http(s) URL), rather than an invite string. */
export function isLink (text: string): boolean {
  return /^https?:\/\//i.test(text.trim())
}

/** The invite in a link's fragment, or in the fragment alone; a JoinInputError in one sentence otherwise. */
export function parseLink (text: string): LinkInvite {
  const s = text.trim()
  if (s.length > MAX_LINK) throw new JoinInputError(`this link is too long (${s.length} characters)`)
  const hash = s.indexOf('#')
  const fragment = hash === -1 ? (isLink(s) ? '' : s) : s.slice(hash + 1)
  if (fragment === '') throw new JoinInputError('this link has no invite after its # (copy the whole link)')
  let value: unknown
  try { value = JSON.parse(fromUtf8(fromBase64Url(fragment, 'this link'))) } catch (err) {
    if (err instanceof JoinInputError) throw err
    throw new JoinInputError('this link is damaged (its invite does not decode): copy the whole link again')
  }
  const parsed = linkInviteSchema.safeParse(value)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new JoinInputError(`this link is damaged or from another fairdeal version: ${issue.path.join('.') || '(root)'}: ${issue.message}`)
  }
  if (parsed.data.seat >= parsed.data.table.seats.length) throw new JoinInputError(`this link offers seat ${parsed.data.seat} of a ${parsed.data.table.seats.length}-seat table`)
  return parsed.data
}

export function signFinalTable (body: FinalTableBody, signer: Signer): Signed<FinalTableBody> {
  return signDocument(TABLE_DOC, body, signer)
}

/**
 * The final table a seat accepts: signed by the dealer its invite names, the table its invite
 * showed with every seat taken, and `self` at the seat the invite offered. The reason otherwise.
 */
export function checkFinalTable (doc: Signed<FinalTableBody>, invite: LinkInvite, self: string): string | undefined {
  if (doc.signer !== invite.table.dealer) return `the table is signed by ${doc.signer}, not by the dealer ${invite.table.dealer}`
  if (!verifyDocument(doc)) return 'the table\'s signature does not verify'
  const t = doc.body.table
  const same = (k: keyof DraftTable): boolean => JSON.stringify(t[k]) === JSON.stringify(invite.table[k])
  const changed = (['id', 'game', 'scheme', 'dealer', 'beacon', 'timelock', 'timelockHandMs', 'relay', 'timeouts', 'beaconMarginMs'] as const).find(k => !same(k))
  if (changed !== undefined) return `the dealer's final table changed ${changed} from the invite's`
  if (t.seats.length !== invite.table.seats.length) return 'the dealer\'s final table has another number of seats'
  if (t.seats.some(s => s === null)) return 'the dealer\'s final table has a seat not taken'
  if (t.seats[invite.seat] !== self) return `the dealer's final table gives seat ${invite.seat} to ${String(t.seats[invite.seat])}, not to this player (${self})`
  const clash = invite.table.seats.findIndex((s, i) => s !== null && s !== t.seats[i])
  if (clash !== -1) return `the dealer's final table changed seat ${clash}`
  return undefined
}

/** A join message's bytes (JSON), bounded. */
export function encodeJoinMessage (value: JoinRequest | JoinReply): Uint8Array {
  return utf8(JSON.stringify(value))
}

export function decodeJoinRequest (bytes: Uint8Array): JoinRequest {
  return decodeJson(bytes, joinRequestSchema, 'join request')
}

export function decodeJoinReply (bytes: Uint8Array): JoinReply {
  return decodeJson(bytes, joinReplySchema, 'join reply') as JoinReply
}

/** A join message (table or group) off the network: bounded, JSON, schema-checked; a JoinInputError in one sentence otherwise. */
export function decodeJson<T> (bytes: Uint8Array, schema: z.ZodType<T>, what: string, maxBytes = MAX_JOIN_MESSAGE_BYTES): T {
  if (bytes.length > maxBytes) throw new JoinInputError(`${what} over ${maxBytes} bytes`)
  let value: unknown
  try { value = JSON.parse(fromUtf8(bytes)) } catch { throw new JoinInputError(`${what} is not JSON`) }
  const parsed = schema.safeParse(value)
  if (!parsed.success) throw new JoinInputError(`${what}: ${parsed.error.issues[0].path.join('.') || '(root)'}: ${parsed.error.issues[0].message}`)
  return parsed.data
}

/**
 * One join stream, as the seat's side sees it: length-prefixed messages. libp2p's `lpStream` is one
 * (its reads return a Uint8ArrayList, which has `subarray`).
 */
export interface JoinStream {
  write: (bytes: Uint8Array) => Promise<unknown>
  read: () => Promise<{ subarray: () => Uint8Array }>
}

/** Why the dealer or the final table refused this seat: one sentence for the player. */
export class JoinRefusedError extends InputError {
  override name = 'JoinRefusedError'
}

function hungUp (err: unknown): JoinRefusedError {
  return new JoinRefusedError(`the dealer's node hung up before sending the table (${String((err as Error)?.message ?? err).split('\n')[0]}): try again`)
}

/**
 * The seat's side of a join: sends the invite's secret, then reads the dealer's answers until the
 * signed final table, which it checks (checkFinalTable). `onBound` hears which seats are still
 * awaited; `group`: where a table's own beacon group reaches this seat (the caller checks the
 * final table's group with checkOwnGroup). A refusal, or a final table that fails its check, is a JoinRefusedError.
 */
export async function joinAsSeat (stream: JoinStream, invite: LinkInvite, self: string, onBound?: (waiting: number[]) => void, group?: JoinRequest['group']): Promise<Signed<FinalTableBody>> {
  const read = async (): Promise<Uint8Array> => {
    try { return (await stream.read()).subarray() } catch (err) { throw hungUp(err) }
  }
  await stream.write(encodeJoinMessage({ v: 1, table: invite.table.id, seat: invite.seat, secret: invite.secret, ...(group !== undefined ? { group } : {}) }))
  for (;;) {
    const reply = decodeJoinReply(await read())
    if (reply.kind === 'refused') throw new JoinRefusedError(reply.reason)
    if (reply.kind === 'bound') { onBound?.(reply.waiting); continue }
    const doc = reply.doc as Signed<FinalTableBody>
    const problem = checkFinalTable(doc, invite, self)
    if (problem !== undefined) throw new JoinRefusedError(`the dealer's table is refused: ${problem}`)
    return doc
  }
}
