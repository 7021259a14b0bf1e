import * as z from 'zod'
import type { Signed } from '../signed.js'
import { MAX_TIMELOCK_CHARS, TIMELOCK_ARMOR } from '../timelock/format.js'
import { peerIdSchema } from '../peer-id-schema.js'
import { knownOr } from '../known-schema.js'

/**
 * The bodies of the signed documents a hand is made of. They are both the wire messages of the
 * table protocol and the parts of a receipt, so a receipt is nothing but the hand's own evidence.
 * Every document is a Signed<Body> (src/core/signed.ts): the signature covers a type tag and the
 * canonical bytes of the body.
 */

export const ROBOT = 'robot'
export const HEX32 = /^[0-9a-f]{64}$/

export const hex32 = z.string().regex(HEX32, 'must be 64 lowercase hex characters')
export const peerId = peerIdSchema
const seatRef = z.union([peerId, z.literal(ROBOT)])
export const shortText = z.string().min(1).max(64).regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : - only')
export const index = z.number().int().min(0).max(15)
export const handNo = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)
const card = z.string().min(1).max(8)
const nonce = z.string().max(256)
/** An armored tlock ciphertext (docs/protocol.md §5, src/core/timelock/): shape here, content in the verifier. */
/** The field rules, for documents defined beside this file (recovered.ts). */
export const fields = { hex32, peerId, shortText, index, handNo, nonce }

export const timelockText = z.string().max(MAX_TIMELOCK_CHARS).regex(TIMELOCK_ARMOR, 'must be an armored age file (tlock)')

/** Game-level parameters that choose who gets which cards; they never change the deck. */
export const dealParamsSchema = z.object({
  dealer: index,
  taker: index.optional(),
  /** The hand is played at the table: its receipt must carry the action chain (docs/games.md "Playing a dealt hand"). */
  play: z.literal(true).optional()
}).strict()
export type DealParams = z.infer<typeof dealParamsSchema>

export const beaconBindingSchema = z.object({
  chainHash: hex32,
  round: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  /** drand's chain info JSON: with it the receipt verifies offline; its hash must equal chainHash. */
  info: z.record(z.string(), z.unknown())
}).strict()
export type BeaconBinding = z.infer<typeof beaconBindingSchema>

export const beaconEntrySchema = z.object({
  round: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  randomness: hex32,
  signature: z.string().regex(/^[0-9a-f]{96,512}$/),
  previous_signature: z.string().regex(/^[0-9a-f]{96,512}$/).optional()
}).strict()
export type BeaconEntry = z.infer<typeof beaconEntrySchema>

export const handRef = {
  table: shortText,
  hand: handNo
}

/** COMMIT, dealer → seats: everything the deal depends on except the secret and the nonces. */
export const commitBodySchema = z.object({
  ...handRef,
  prev: hex32,
  scheme: shortText,
  game: shortText,
  seats: z.array(seatRef).min(2).max(8),
  dealer: peerId,
  params: dealParamsSchema,
  commitment: hex32,
  beacon: beaconBindingSchema.nullable(),
  /** Epoch ms: contributions after this are refused and the hand aborts. */
  deadline: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  /** On a time-locked table: the secret encrypted to the bound round, so anyone can open it once it is out. */
  timelock: timelockText.optional(),
  /** On a time-locked blind-v1 table: the round every seat's hand key is sealed to (docs/dealer-blind.md §14). */
  keyRound: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional()
}).strict()
export type CommitBody = z.infer<typeof commitBodySchema>

/** PLEDGE, seat → dealer: the hash of the seat's nonce, answering one exact COMMIT. */
export const pledgeBodySchema = z.object({
  ...handRef,
  commit: hex32,
  seat: index,
  nonceHash: hex32,
  /** On a time-locked table: the nonce encrypted to the COMMIT's round. */
  timelock: timelockText.optional()
}).strict()
export type PledgeBody = z.infer<typeof pledgeBodySchema>

export const signedOf = <T extends z.ZodType>(type: string, body: T) => z.object({
  type: z.literal(type),
  signer: peerId,
  body,
  sig: z.string().regex(/^[0-9a-f]{128}$/)
}).strict()

export const signedCommitSchema = signedOf('commit', commitBodySchema)
export const signedPledgeSchema = signedOf('pledge', pledgeBodySchema)

/** PLEDGES, dealer → seats: every seat's pledge, so each seat sees them all before it reveals. */
export const pledgesBodySchema = z.object({
  ...handRef,
  commit: hex32,
  pledges: z.array(knownOr(signedPledgeSchema)).max(8)
}).strict()
export type PledgesBody = z.infer<typeof pledgesBodySchema>
export const signedPledgesSchema = signedOf('pledges', pledgesBodySchema)

/** NONCE, seat → dealer: the nonce itself, sent only once the seat has seen every pledge. */
export const nonceBodySchema = z.object({
  ...handRef,
  commit: hex32,
  seat: index,
  nonce
}).strict()
export type NonceBody = z.infer<typeof nonceBodySchema>
export const signedNonceSchema = signedOf('nonce', nonceBodySchema)

/** CARDS, dealer → one seat (private) or every seat (public): one stage of the deal. */
export const cardsBodySchema = z.object({
  ...handRef,
  commit: hex32,
  stage: shortText,
  /** The seat the cards belong to; null for cards that lie on the table (turned-up card, dog). */
  seat: index.nullable(),
  public: z.boolean(),
  cards: z.array(card).max(416),
  params: dealParamsSchema
}).strict()
export type CardsBody = z.infer<typeof cardsBodySchema>
export const signedCardsSchema = signedOf('cards', cardsBodySchema)

/** REVEAL, dealer → seats at the end of the hand: all that is needed to recompute the deal. */
export const revealBodySchema = z.object({
  ...handRef,
  commit: hex32,
  secret: z.string().max(256),
  nonces: z.array(knownOr(signedNonceSchema)).max(8),
  beacon: beaconEntrySchema.nullable(),
  params: dealParamsSchema,
  /** Stages delivered during the hand, in order. */
  stages: z.array(shortText).max(8),
  /** Nonces of seats that pledged but never sent them, opened by the dealer from their pledges' timelock. */
  recovered: z.array(z.object({ seat: index, nonce }).strict()).max(8).optional(),
  /**
   * A played hand (params.play): how many actions its chain holds and the digest of the last (64
   * zeros for none), so that each seat's ACK countersigns the chain (docs/games.md "Verifying a
   * played hand").
   */
  play: z.object({ actions: z.number().int().min(0).max(400), head: hex32 }).strict().optional()
}).strict()
export type RevealBody = z.infer<typeof revealBodySchema>
export const signedRevealSchema = signedOf('reveal', revealBodySchema)

/** ACK, seat → dealer: the seat's own check passed (its "shield"); digest of the cards it held. */
export const ackBodySchema = z.object({
  ...handRef,
  commit: hex32,
  reveal: hex32,
  seat: index,
  cards: hex32
}).strict()
export type AckBody = z.infer<typeof ackBodySchema>
export const signedAckSchema = signedOf('ack', ackBodySchema)

export const ABORT_REASONS = [
  'missing-pledge', 'missing-nonce', 'missing-reveal', 'missing-deal', 'equivocation', 'beacon-unavailable',
  'invalid-reveal', 'dealer-stopped',
  // The dealer could not deliver its COMMIT or PLEDGES to a seat: nobody is blamed (docs/protocol.md).
  'unreachable',
  // A seat's VIEW never came (the dealer's or a waiting seat's record); the dealer broke its hand
  // chain (a seat holding both COMMITs); a seat holds the NONCE or VIEW a dealer's record said never came.
  'missing-view', 'broken-chain', 'released',
  // Dealer-blind hands (blind-v1, docs/dealer-blind.md): a silent or a faulty key, shuffle, share or hand key.
  'missing-key', 'missing-shuffle', 'missing-shares', 'missing-secret', 'invalid-key', 'invalid-shuffle', 'invalid-shares'
] as const
export type AbortReason = typeof ABORT_REASONS[number]

/** ABORT: who stopped the hand and why, with the signed documents that show it. */
export const abortBodySchema = z.object({
  ...handRef,
  reason: z.enum(ABORT_REASONS),
  /** Peer ids of the parties that failed to act (or whose documents conflict). */
  blame: z.array(peerId).max(8),
  commit: knownOr(signedCommitSchema).nullable(),
  evidence: z.array(z.object({ type: z.string(), signer: peerId, body: z.unknown(), sig: z.string() }).strict()).max(64),
  detail: z.string().max(512),
  /** `dealer-stopped` only: the hand's secret, published so anyone can check it opens the commitment. */
  secret: nonce.optional(),
  /**
   * A time-locked blind hand's `missing-shares` or `missing-secret` only (docs/dealer-blind.md §13):
   * the key round's entry, with which the timelock of each seat it blames does not open to its key.
   */
  keyRound: beaconEntrySchema.optional()
}).strict()
export type AbortBody = z.infer<typeof abortBodySchema>
export const signedAbortSchema = signedOf('abort', abortBodySchema)

/** The most actions a hand's chain may hold (a 5-seat tarot hand takes under 100). */
export const MAX_ACTIONS = 400

/** One action of a hand in play (src/core/games/action-chain.ts): `hand` is the digest of the hand's COMMIT. */
export const actionBodySchema = z.object({
  hand: hex32,
  n: z.number().int().min(1).max(MAX_ACTIONS),
  prev: hex32,
  /** The acting seat, or −1: the dealer's stage action (a draw: docs/games.md "Draws on the chain"). */
  seat: z.number().int().min(-1).max(15),
  action: z.record(z.string(), z.unknown()),
  /** A card played at a blind-v1 table: its opening (docs/dealer-blind.md §15), checked by src/core/hand/blind-card-opening.ts. */
  opening: z.record(z.string(), z.unknown()).optional()
}).strict()
export const signedActionSchema = signedOf('game-action', actionBodySchema)

/**
 * A hand's outcome as the game engine scores it (src/core/games/types.ts GameScore): its points per
 * seat and its summary line. The engine's detail is not carried (tarot's counts run in half
 * points, which canonical JSON does not hold); the verifier replays it.
 */
export const gameScoreSchema = z.object({
  points: z.array(z.number().int()).max(8),
  summary: z.string().max(500)
}).strict()

/** What a played hand's receipt adds: the whole action chain, and the score (null: the hand stopped before its end). */
export const receiptPlaySchema = z.object({
  actions: z.array(signedActionSchema).max(MAX_ACTIONS),
  score: gameScoreSchema.nullable(),
  /** The action that ended the hand: the next link of the chain, signed by its seat, which the rules refuse (docs/games.md "A refused action"). */
  refused: signedActionSchema.optional(),
  /** The seat whose turn ran out (the table's time to play), which ended the hand (docs/games.md "Time to play"). */
  waiting: z.object({ seat: z.number().int().min(0).max(7) }).strict().optional()
}).strict()
export type ReceiptPlay = z.infer<typeof receiptPlaySchema>

/** A finished hand: the dealer's commit and reveal, every pledge and every seat's countersignature. */
export const receiptSchema = z.object({
  v: z.literal(1),
  commit: knownOr(signedCommitSchema),
  pledges: z.array(knownOr(signedPledgeSchema)).max(8),
  reveal: knownOr(signedRevealSchema),
  acks: z.array(knownOr(signedAckSchema)).max(8),
  /** A played hand's action chain and score (docs/games.md "Verifying a played hand"). */
  play: receiptPlaySchema.optional()
}).strict()
export type Receipt = z.infer<typeof receiptSchema>

export type SignedCommit = Signed<CommitBody>
export type SignedPledge = Signed<PledgeBody>
export type SignedNonce = Signed<NonceBody>
export type SignedReveal = Signed<RevealBody>
export type SignedAck = Signed<AckBody>
export type SignedAbort = Signed<AbortBody>
