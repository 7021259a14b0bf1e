import * as z from 'zod'
import { fromUtf8, utf8 } from '../bytes.js'
import { decodeJson, fromBase64Url, JoinInputError, JoinRefusedError, secretDigest, toBase64Url, type JoinStream } from '../join.js'
import { peerIdSchema } from '../peer-id-schema.js'
import { signDocument, verifyDocument, type Signed } from '../signed.js'
import type { Signer } from '../identity.js'
import { MAX_GROUP_MEMBERS } from './threshold.js'
import { GROUP_ID } from './group-params.js'
import type { DocumentVerifier } from './dkg-documents.js'

/**
 * A beacon group set up by invites (docs/beacon-group.md, "A group by invites"), as a table is by
 * links: the creator (member 1) runs `beacon group new`, which prints one invite per other member,
 * each holding a one-time secret; each member runs `beacon group join INVITE`, which dials the
 * creator's node on GROUP_JOIN_PROTOCOL (noise proves the creator's key, which the invite names),
 * proves the secret and says where it listens and serves its drand API. The creator's node, which
 * kept only the secrets' SHA-256, binds each slot to the first peer that proves it; once every slot
 * is bound it signs the final group (members in slot order, their addresses, the DKG's start) and
 * sends it on every join stream. Nothing goes back by hand. Pure: schemas and checks.
 */

export const GROUP_JOIN_PROTOCOL = '/fairdeal/group-join/1.0.0'
export const GROUP_INVITE_PREFIX = 'fairdeal-group-invite:'
/** The signed final group's document type. */
export const GROUP_DOC = 'beacon-group/group'
/** The largest message either way: 64 members with 8 addresses each is a few tens of KiB. */
export const MAX_GROUP_JOIN_BYTES = 128 * 1024
/** The longest invite accepted. */
const MAX_INVITE = 8 * 1024

const secret = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be 32 bytes in base64url')
const groupId = z.string().regex(GROUP_ID, 'must be 1 to 64 letters, digits or . _ : -')
// Bounded, so that the final group (every member's addresses) always fits one message: 64 members
// × (4 addresses + a URL) × 256 characters is under MAX_GROUP_JOIN_BYTES.
const multiaddr = z.string().max(256).regex(/^\/(ip4|ip6|dns|dns4|dns6)\/[^/\s]+\/tcp\/\d{1,5}(\/ws)?(\/p2p\/[1-9A-HJ-NP-Za-km-z]+)?$/, 'must be a multiaddr like /ip4/192.0.2.1/tcp/7500')
const httpUrl = z.string().max(256).regex(/^https?:\/\/[^\s/]+(:\d{1,5})?$/, 'must be an http(s)://host:port URL')
const MAX_MEMBER_ADDRS = 4

/** Creator → one member: the group being set up, the slot offered, its secret, where to dial. */
export const groupInviteSchema = z.object({
  v: z.literal(1),
  id: groupId,
  members: z.number().int().min(2).max(MAX_GROUP_MEMBERS),
  threshold: z.number().int().min(1).max(MAX_GROUP_MEMBERS),
  period: z.number().int().min(1),
  /** The member index offered (2…members; the creator is 1). */
  slot: z.number().int().min(2).max(MAX_GROUP_MEMBERS),
  secret,
  creator: peerIdSchema,
  /** Where the creator's node listens while members join, each ending in /p2p/<creator>. */
  addresses: z.array(multiaddr).min(1).max(MAX_MEMBER_ADDRS),
  /** A reshare of an existing group (`beacon group reshare`): the hash of the chain it keeps. */
  reshare: z.string().regex(/^[0-9a-f]{64}$/).optional()
}).strict()
export type GroupInvite = z.infer<typeof groupInviteSchema>

/** Member → creator, the first message on a join stream. */
export const groupJoinRequestSchema = z.object({
  v: z.literal(1),
  id: groupId,
  slot: z.number().int().min(2).max(MAX_GROUP_MEMBERS),
  secret,
  /** Where the others reach this member (its announced libp2p addresses): a member must be reachable. */
  addrs: z.array(multiaddr).min(1).max(MAX_MEMBER_ADDRS),
  /** Its drand HTTP API, for tables and tlock clients to use as a relay. */
  url: httpUrl.optional()
}).strict()
export type GroupJoinRequest = z.infer<typeof groupJoinRequestSchema>

const memberSchema = z.object({ peer: peerIdSchema, addrs: z.array(multiaddr).min(1).max(MAX_MEMBER_ADDRS), url: httpUrl.optional() }).strict()
// The old group of a reshare as its members' configs name it (docs/beacon-group.md "Resharing");
// its fields are checked as a group's parameters (parseGroupParams) where a member takes it.
const reshareFromSchema = z.object({
  session: z.string().regex(/^[0-9a-f]{64}$/),
  members: z.array(z.object({ peer: peerIdSchema, addrs: z.array(z.string().max(256)).max(8), url: z.string().max(256).optional() }).strict()).min(1).max(MAX_GROUP_MEMBERS),
  threshold: z.number().int().min(1).max(MAX_GROUP_MEMBERS),
  commitments: z.array(z.string().regex(/^[0-9a-f]{192}$/)).min(1).max(MAX_GROUP_MEMBERS),
  chain: z.record(z.string(), z.unknown()),
  transition: z.number().int().min(2)
}).strict()

/** The final group, signed by its creator: everything of a member's `group` config block but its own listen and HTTP settings. */
export const finalGroupBodySchema = z.object({
  id: groupId,
  members: z.array(memberSchema).min(2).max(MAX_GROUP_MEMBERS),
  threshold: z.number().int().min(1).max(MAX_GROUP_MEMBERS),
  period: z.number().int().min(1),
  genesisTime: z.number().int().min(0),
  dkg: z.object({ start: z.number().int().min(0), phaseMs: z.number().int().min(1) }).strict(),
  reshare: reshareFromSchema.optional()
}).strict()
export type FinalGroupBody = z.infer<typeof finalGroupBodySchema>

const signedGroupSchema = z.object({
  type: z.literal(GROUP_DOC),
  signer: peerIdSchema,
  body: finalGroupBodySchema,
  sig: z.string().regex(/^[0-9a-f]{128}$/)
}).strict()

/** Creator → member: refused; bound (and which slots are still awaited); then the final group. */
export const groupJoinReplySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('refused'), reason: z.string().min(1).max(500) }).strict(),
  z.object({ kind: z.literal('bound'), slot: z.number().int().min(2).max(MAX_GROUP_MEMBERS), waiting: z.array(z.number().int().min(2).max(MAX_GROUP_MEMBERS)).max(MAX_GROUP_MEMBERS) }).strict(),
  z.object({ kind: z.literal('group'), doc: signedGroupSchema }).strict()
])
export type GroupJoinReply = z.infer<typeof groupJoinReplySchema>

export function encodeGroupInvite (invite: GroupInvite): string {
  return GROUP_INVITE_PREFIX + toBase64Url(utf8(JSON.stringify(invite)))
}

/** The invite in a string; a JoinInputError in one sentence otherwise. */
export function decodeGroupInvite (text: string): GroupInvite {
  const s = text.trim()
  if (s.length > MAX_INVITE) throw new JoinInputError(`this group invite is too long (${s.length} characters)`)
  if (!s.startsWith(GROUP_INVITE_PREFIX)) throw new JoinInputError(`not a fairdeal group invite: it should start with ${GROUP_INVITE_PREFIX}`)
  let value: unknown
  try { value = JSON.parse(fromUtf8(fromBase64Url(s.slice(GROUP_INVITE_PREFIX.length), 'this group invite'))) } catch (err) {
    if (err instanceof JoinInputError) throw err
    throw new JoinInputError('this group invite is damaged (it does not decode): copy it again, whole')
  }
  const parsed = groupInviteSchema.safeParse(value)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new JoinInputError(`this group invite is damaged or from another fairdeal version: ${issue.path.join('.') || '(root)'}: ${issue.message}`)
  }
  const invite = parsed.data
  if (invite.slot > invite.members) throw new JoinInputError(`this group invite offers member ${invite.slot} of a ${invite.members}-member group`)
  if (invite.threshold > invite.members) throw new JoinInputError(`this group invite names threshold ${invite.threshold} for ${invite.members} members`)
  return invite
}

export function signFinalGroup (body: FinalGroupBody, signer: Signer): Signed<FinalGroupBody> {
  return signDocument(GROUP_DOC, body, signer)
}

/** Whether `secret` is the one whose digest the creator kept for a slot. */
export function groupSecretMatches (secretText: string, digest: string): boolean {
  return secretDigest(secretText) === digest
}

/**
 * The final group a member accepts: signed by the creator its invite names, the group its invite
 * described (id, size, threshold, period), the creator as member 1, and this member, with the
 * addresses it gave, at the slot the invite offered. The reason otherwise. `verify` replaces the pure
 * Ed25519 check (a node passes Node's own).
 */
export function checkFinalGroup (doc: Signed<FinalGroupBody>, invite: GroupInvite, self: string, addrs: readonly string[], verify: DocumentVerifier = verifyDocument): string | undefined {
  if (doc.signer !== invite.creator) return `the group is signed by ${doc.signer}, not by its creator ${invite.creator}`
  if (!verify(doc)) return 'the group\'s signature does not verify'
  const g = doc.body
  if (g.id !== invite.id) return `the creator's final group is ${g.id}, not ${invite.id}`
  if (g.members.length !== invite.members || g.threshold !== invite.threshold || g.period !== invite.period) return 'the creator\'s final group changed its size, threshold or period from the invite\'s'
  if (invite.reshare !== g.reshare?.chain.hash) return invite.reshare === undefined ? 'the creator\'s final group is a reshare, the invite was for a new group' : 'the creator\'s final group is not a reshare of the invite\'s chain'
  if (g.members[0].peer !== invite.creator) return 'the creator\'s final group does not have its creator as member 1'
  if (new Set(g.members.map(m => m.peer)).size !== g.members.length) return 'the creator\'s final group names a member twice'
  const mine = g.members[invite.slot - 1]
  if (mine.peer !== self) return `the creator's final group gives member ${invite.slot} to ${mine.peer}, not to this node (${self})`
  if (JSON.stringify(mine.addrs) !== JSON.stringify(addrs)) return `the group lists this member at ${mine.addrs.join(', ')}, not at ${addrs.join(', ')}: join again with the --listen and --announce of the first time`
  return undefined
}

export function encodeGroupJoinMessage (value: GroupJoinRequest | GroupJoinReply): Uint8Array {
  return utf8(JSON.stringify(value))
}
export function decodeGroupJoinRequest (bytes: Uint8Array): GroupJoinRequest { return decodeJson(bytes, groupJoinRequestSchema, 'group join request', MAX_GROUP_JOIN_BYTES) }
export function decodeGroupJoinReply (bytes: Uint8Array): GroupJoinReply { return decodeJson(bytes, groupJoinReplySchema, 'group join reply', MAX_GROUP_JOIN_BYTES) as GroupJoinReply }

/**
 * The member's side of a join: sends the invite's secret with its addresses, then reads the
 * creator's answers until the signed final group, which it checks (checkFinalGroup). A refusal, or
 * a final group that fails its check, is a JoinRefusedError. `verify` checks its signature (checkFinalGroup).
 */
export async function joinAsMember (stream: JoinStream, invite: GroupInvite, self: string, addrs: string[], url: string | undefined, onBound?: (waiting: number[]) => void, verify?: DocumentVerifier): Promise<Signed<FinalGroupBody>> {
  const read = async (): Promise<Uint8Array> => {
    try { return (await stream.read()).subarray() } catch (err) {
      throw new JoinRefusedError(`the creator's node hung up before sending the group (${String((err as Error)?.message ?? err).split('\n')[0]}): try again`)
    }
  }
  await stream.write(encodeGroupJoinMessage({ v: 1, id: invite.id, slot: invite.slot, secret: invite.secret, addrs, ...(url !== undefined ? { url } : {}) }))
  for (;;) {
    const reply = decodeGroupJoinReply(await read())
    if (reply.kind === 'refused') throw new JoinRefusedError(reply.reason)
    if (reply.kind === 'bound') { onBound?.(reply.waiting); continue }
    const doc = reply.doc as Signed<FinalGroupBody>
    const problem = checkFinalGroup(doc, invite, self, addrs, verify)
    if (problem !== undefined) throw new JoinRefusedError(`the creator's group is refused: ${problem}`)
    return doc
  }
}
