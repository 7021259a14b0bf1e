import * as z from 'zod'
import { draftTableSchema, type DraftTable } from '../core/join.js'
import { NodeInputError } from './errors.js'

/**
 * Invites: how a table is set up without copying peer ids by hand. Three kinds of one-line
 * strings, each a prefix and base64url(JSON), none holding anything secret:
 *
 * - an invite (dealer → one player): the table block with the seats known so far, the seat offered,
 *   the dealer's peer id and addresses;
 * - an answer (player → dealer): the seat taken, the player's peer id and addresses;
 * - a table (dealer → every player, once every seat is taken): the same as an invite with every
 *   seat filled in, which `table join` turns into the player's node config.
 */

export const INVITE_PREFIX = 'fairdeal-invite:'
export const ANSWER_PREFIX = 'fairdeal-answer:'

/** Longest string accepted: a table block with an inline beacon config is a few KiB. */
const MAX_STRING = 64 * 1024

const peerId = z.string().regex(/^12D3KooW[1-9A-HJ-NP-Za-km-z]{44}$/, 'must be an Ed25519 libp2p peer id')
const address = z.string().min(1).max(256)

// The table block is the link invites' too (src/core/join.ts): one schema.
export { draftTableSchema, type DraftTable } from '../core/join.js'

const inviteSchema = z.object({
  v: z.literal(1),
  table: draftTableSchema,
  /** The seat this invite offers; null in the final table string (every seat is taken). */
  seat: z.number().int().min(0).max(7).nullable(),
  /** Where the dealer listens, each ending in /p2p/<dealer>. */
  dealerAddresses: z.array(address).max(8),
  /** Every other member's addresses known to the dealer (the final table string). */
  peers: z.record(peerId, z.array(address).max(8)).default({})
}).strict()
export type Invite = z.infer<typeof inviteSchema>

const answerSchema = z.object({
  v: z.literal(1),
  table: z.string().min(1).max(64),
  seat: z.number().int().min(0).max(7),
  peer: peerId,
  addresses: z.array(address).max(8)
}).strict()
export type Answer = z.infer<typeof answerSchema>

function encode (prefix: string, value: unknown): string {
  return prefix + Buffer.from(JSON.stringify(value), 'utf8').toString('base64url')
}

function decode<T> (text: string, prefix: string, schema: z.ZodType<T>, what: string): T {
  const s = text.trim()
  if (s.length > MAX_STRING) throw new NodeInputError(`this ${what} is too long (${s.length} characters)`)
  if (!s.startsWith(prefix)) throw new NodeInputError(`not a fairdeal ${what}: it should start with ${prefix}`)
  const body = s.slice(prefix.length)
  if (!/^[A-Za-z0-9_-]*$/.test(body)) throw new NodeInputError(`this ${what} is damaged (characters outside base64url): copy it again, whole`)
  let value: unknown
  try { value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) } catch {
    throw new NodeInputError(`this ${what} is damaged (not JSON once decoded): copy it again, whole`)
  }
  const parsed = schema.safeParse(value)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new NodeInputError(`this ${what} is damaged or from another fairdeal version: ${issue.path.join('.') || '(root)'}: ${issue.message}`)
  }
  return parsed.data
}

export function encodeInvite (invite: Invite): string { return encode(INVITE_PREFIX, invite) }
export function decodeInvite (text: string): Invite {
  const invite = decode(text, INVITE_PREFIX, inviteSchema, 'invite')
  if (invite.seat !== null && invite.seat >= invite.table.seats.length) throw new NodeInputError(`this invite offers seat ${invite.seat} of a ${invite.table.seats.length}-seat table`)
  return invite
}
export function encodeAnswer (answer: Answer): string { return encode(ANSWER_PREFIX, answer) }
export function decodeAnswer (text: string): Answer { return decode(text, ANSWER_PREFIX, answerSchema, 'answer') }

/** The seats still waiting for a player. */
export function openSeats (table: DraftTable): number[] {
  return table.seats.flatMap((s, i) => s === null ? [i] : [])
}
