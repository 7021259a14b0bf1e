import * as z from 'zod'
import { fromUtf8 } from '../core/bytes.js'
import { canonicalBytes, canonicalProblem } from '../core/canonical.js'
import { freezeDeep, internHeld, markChecked, type Interner } from '../core/frozen.js'
import { recordingPassed } from '../core/known-schema.js'
import {
  receiptSchema, signedAbortSchema, signedAckSchema, signedActionSchema, signedCardsSchema, signedCommitSchema,
  signedNonceSchema, signedOf, signedPledgeSchema, signedPledgesSchema, signedRevealSchema, MAX_ACTIONS
} from '../core/hand/messages.js'
import {
  signedBdealSchema, signedBendSchema, signedBfinalSchema, signedBkeySchema, signedBkeysSchema, signedBrevealSchema,
  signedBsecretSchema, signedBsharesSchema, signedBshuffleSchema, signedBunlockSchema
} from '../core/hand/blind-messages.js'
import type { Signed } from '../core/signed.js'
import { peerIdSchema } from '../core/peer-id-schema.js'
import { signedViewSchema, signedViewWireSchema } from '../core/hand/view-messages.js'
import { breceiptBodySchema } from './blind-receipt-parts.js'

/** The libp2p protocol id of the table protocol. */
// 1.1.0: a VIEW or a FINAL may leave out documents its recipient holds (docs/protocol.md §3), which
// a 1.0.0 node would refuse frame by frame; with the new id the two cannot open a table stream at
// all, and the dial says so.
export const TABLE_PROTOCOL = '/fairdeal/table/1.1.0'
/**
 * Largest frame accepted: every abort record fits (a dealer-blind record carries up to two 78-card
 * shuffles, ~66 KB, or a stage's decryption shares; docs/dealer-blind.md §13), and a commit-reveal
 * receipt of an 8-seat table with a beacon entry in well under this. A blind receipt need not fit:
 * each seat assembles it (BFINAL).
 */
export const MAX_FRAME_BYTES = 128 * 1024

const peerId = peerIdSchema

/** FINAL, dealer → seats: the finished receipt, countersigned by the seats that acknowledged. */
export const finalBodySchema = z.object({
  table: z.string().min(1).max(64).regex(/^[A-Za-z0-9._:-]+$/),
  hand: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  commit: z.string().regex(/^[0-9a-f]{64}$/),
  receipt: receiptSchema
}).strict()
export type FinalBody = z.infer<typeof finalBodySchema>

/**
 * A FINAL as a frame may carry it to a seat that countersigned the hand (docs/protocol.md §3, "A
 * FINAL without the documents its seat holds"): the same signed FINAL, its receipt without the
 * COMMIT, pledges and REVEAL, which that seat holds; it puts them back before any check. The
 * three are left out together or not at all (src/protocol/compact-docs.ts refuses any other).
 */
export const finalWireBodySchema = finalBodySchema.extend({
  receipt: receiptSchema.extend({
    commit: receiptSchema.shape.commit.optional(),
    pledges: receiptSchema.shape.pledges.optional(),
    reveal: receiptSchema.shape.reveal.optional()
  }).strict()
}).strict()
export type FinalWireBody = z.infer<typeof finalWireBodySchema>
export const signedFinalWireSchema = signedOf('final', finalWireBodySchema)

/** Whether a FINAL's receipt off the wire carries its COMMIT, pledges and REVEAL (else its seat puts its own back). */
export function isWholeReceipt (receipt: FinalWireBody['receipt']): receipt is FinalBody['receipt'] {
  return receipt.commit !== undefined && receipt.pledges !== undefined && receipt.reveal !== undefined
}

/**
 * ASK, seat → dealer: "what became of this hand?" A seat asks after a restart, for every hand it
 * had in play and for the hand after the last one it knows of (`commit: null`: it never saw that
 * COMMIT), and once more before it records anything against the dealer. The dealer answers with
 * what the seat is missing (docs/protocol.md §11).
 */
export const askBodySchema = z.object({
  table: finalBodySchema.shape.table,
  hand: finalBodySchema.shape.hand,
  commit: finalBodySchema.shape.commit.nullable(),
  seat: z.number().int().min(0).max(15)
}).strict()
export type AskBody = z.infer<typeof askBodySchema>

/**
 * LATEACK, dealer → seats: a seat's ACK that came after the hand's receipt was logged (the seat was
 * away), which the dealer took and logged as a `late-ack` entry; each seat logs it too
 * (docs/protocol.md §11, docs/log.md "Late acks").
 */
export const lateAckWireSchema = z.object({
  table: finalBodySchema.shape.table,
  hand: finalBodySchema.shape.hand,
  commit: finalBodySchema.shape.commit,
  ack: signedAckSchema
}).strict()
export type LateAckWireBody = z.infer<typeof lateAckWireSchema>

/** VIEW (src/core/hand/view-messages.ts): the verifier checks views in abort records, so its schema lives in the core. */
export { viewBodySchema, type ViewBody, type ViewWireBody } from '../core/hand/view-messages.js'

/** RELAY, seat → dealer: a VIEW the seat could not deliver to seat `to` directly; the dealer passes it on. */
export const relayBodySchema = z.object({
  table: finalBodySchema.shape.table,
  hand: finalBodySchema.shape.hand,
  to: peerId,
  view: signedViewSchema
}).strict()
export type RelayBody = z.infer<typeof relayBodySchema>

/** PLAY, seat → dealer and dealer → seats: actions of a played hand (docs/games.md "Playing a dealt hand"). */
export const playBodySchema = z.object({
  table: finalBodySchema.shape.table,
  hand: finalBodySchema.shape.hand,
  commit: finalBodySchema.shape.commit,
  actions: z.array(signedActionSchema).min(1).max(MAX_ACTIONS)
}).strict()
export type PlayBody = z.infer<typeof playBodySchema>

/**
 * Every document that may arrive on the table protocol, one schema per type tag. The documents a
 * hand's other documents carry (a COMMIT inside each VIEW, the pledges inside the PLEDGES...) are
 * these very schema objects, in src/core/hand/messages.ts, so that a document that passed one as a
 * frame is known to pass it where it comes again (src/core/known-schema.ts).
 */
const WIRE_DOCUMENTS = [
  signedCommitSchema,
  signedPledgeSchema,
  signedPledgesSchema,
  signedNonceSchema,
  signedCardsSchema,
  signedRevealSchema,
  signedAckSchema,
  signedAbortSchema,
  // A FINAL may come without the documents its seat holds (docs/protocol.md §3).
  signedFinalWireSchema,
  signedOf('ask', askBodySchema),
  signedOf('lateack', lateAckWireSchema),
  // Dealer-blind hands (docs/dealer-blind.md §8).
  signedBkeySchema, signedBkeysSchema, signedBshuffleSchema, signedBdealSchema, signedBsharesSchema, signedBendSchema,
  signedBsecretSchema, signedBrevealSchema, signedBfinalSchema, signedBunlockSchema,
  signedOf('breceipt', breceiptBodySchema),
  // A VIEW may come without the two documents its recipient holds (docs/protocol.md §3); one
  // inside a RELAY is whole.
  signedViewWireSchema,
  signedOf('relay', relayBodySchema),
  signedOf('play', playBodySchema)
] as const
export const wireSchema = z.discriminatedUnion('type', WIRE_DOCUMENTS)
const documentSchema = new Map<string, object>(WIRE_DOCUMENTS.map(s => [s.shape.type.value, s]))
export type WireDoc = z.infer<typeof wireSchema>

export class WireError extends Error {
  override name = 'WireError'
}

/**
 * Bytes from the network → a schema-checked document, or a WireError saying what is wrong. The
 * document is deep-frozen (src/core/frozen.ts), so what is learnt about it once (its signatures,
 * its digest) holds for as long as it lives; a FINAL's receipt is recorded as having passed the
 * receipt schema, which verifyReceipt then does not run again. The document, and each document
 * inside it that passed its schema, is recorded as having passed it (src/core/known-schema.ts).
 * With `intern` (a node's verify memo: VerifyMemo.intern), documents inside it that the node
 * already checked are its own copies, put in place before the schema runs: one recorded as having
 * passed its schema is not walked again.
 */
export function decodeFrame (frame: Uint8Array, intern?: Interner): WireDoc {
  if (frame.length > MAX_FRAME_BYTES) throw new WireError(`frame of ${frame.length} bytes is over the ${MAX_FRAME_BYTES}-byte limit`)
  let value: unknown
  try {
    value = JSON.parse(fromUtf8(frame))
  } catch {
    throw new WireError('frame is not UTF-8 JSON')
  }
  // Every document is signed over its canonical form: one that has none is refused here, with its reason.
  const uncanonical = canonicalProblem(value)
  if (uncanonical !== undefined) throw new WireError(`not canonical JSON: ${uncanonical}`)
  // Documents inside it that this node holds already take the place of their copies first: the
  // schema then need not walk those it knows them to pass.
  if (intern !== undefined) internHeld(value, intern)
  const { result: parsed, markPassed } = recordingPassed(() => wireSchema.safeParse(value))
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new WireError(`invalid message: ${issue.path.join('.') || '(root)'}: ${issue.message}`)
  }
  const doc = freezeDeep(parsed.data)
  markPassed()
  markChecked(doc, documentSchema.get(doc.type) as object)
  // A whole receipt only: one without its documents passed only the frame's own schema.
  if (doc.type === 'final' && isWholeReceipt((doc.body as FinalWireBody).receipt)) markChecked((doc.body as FinalWireBody).receipt, receiptSchema)
  return doc
}

export function encodeFrame (doc: Signed<unknown>): Uint8Array {
  return canonicalBytes(doc)
}
