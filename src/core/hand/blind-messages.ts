import * as z from 'zod'
import type { Signed } from '../signed.js'
import {
  beaconEntrySchema, dealParamsSchema, gameScoreSchema, handRef, hex32, index, MAX_ACTIONS, receiptPlaySchema, shortText, signedAckSchema,
  signedActionSchema, signedCommitSchema, signedOf, timelockText
} from './messages.js'

/**
 * The documents of a dealer-blind hand (scheme blind-v1; docs/dealer-blind.md). Like every
 * document they are Signed<Body>; each body names its table, hand and the docDigest of the hand's
 * COMMIT, and the proofs inside bind the same context, so nothing moves between hands or steps.
 * A robot seat's documents are signed by the dealer node, which holds the robot's key.
 */

const point = z.string().regex(/^[0-9a-f]{64}$/, 'must be a group element (64 lowercase hex)')
const scalar = z.string().regex(/^[0-9a-f]{64}$/, 'must be a scalar (64 lowercase hex)')
const ciphertext = z.string().regex(/^[0-9a-f]{128}$/, 'must be a ciphertext (128 lowercase hex)')
const MAX_CARDS = 78

const blindRef = { ...handRef, commit: hex32, seat: index }

/** BKEY, seat → dealer → every seat: the seat's public hand key and its Schnorr proof. */
export const bkeyBodySchema = z.object({
  ...blindRef,
  pub: point,
  proof: z.object({ c: scalar, s: scalar }).strict(),
  /** On a time-locked table: the hand key (hex, UTF-8) sealed to the COMMIT's keyRound (docs/dealer-blind.md §14). */
  timelock: timelockText.optional()
}).strict()
export type BkeyBody = z.infer<typeof bkeyBodySchema>
export const signedBkeySchema = signedOf('bkey', bkeyBodySchema)

/** BKEYS, dealer → every seat: every seat's BKEY, by seat (the joint key, and an equivocation check). */
export const bkeysBodySchema = z.object({
  ...handRef,
  commit: hex32,
  keys: z.array(signedBkeySchema).max(8)
}).strict()
export type BkeysBody = z.infer<typeof bkeysBodySchema>

export const shuffleProofSchema = z.object({
  commitments: z.array(point).max(MAX_CARDS),
  chain: z.array(point).max(MAX_CARDS),
  e: scalar,
  s1: scalar,
  s2: scalar,
  s3: scalar,
  s4: scalar,
  sHat: z.array(scalar).max(MAX_CARDS),
  sPrime: z.array(scalar).max(MAX_CARDS)
}).strict()

/** BSHUFFLE, seat → dealer → every seat: the seat's shuffled, re-encrypted deck and its proof. */
export const bshuffleBodySchema = z.object({
  ...blindRef,
  deck: z.array(ciphertext).max(MAX_CARDS),
  proof: shuffleProofSchema
}).strict()
export type BshuffleBody = z.infer<typeof bshuffleBodySchema>
export const signedBshuffleSchema = signedOf('bshuffle', bshuffleBodySchema)

/** One decryption share with its Chaum–Pedersen proof, for one position of the dealt deck. */
export const shareSchema = z.object({
  pos: z.number().int().min(0).max(MAX_CARDS - 1),
  d: point,
  c: scalar,
  s: scalar
}).strict()

/** BSHARES, seat → dealer → the owning seat (private cards) or every seat (public): shares for one stage. */
export const bsharesBodySchema = z.object({
  ...blindRef,
  stage: shortText,
  /** The seat whose cards these open, or null for cards on the table. */
  to: index.nullable(),
  shares: z.array(shareSchema).max(MAX_CARDS)
}).strict()
export type BsharesBody = z.infer<typeof bsharesBodySchema>
export const signedBsharesSchema = signedOf('bshares', bsharesBodySchema)

/** BSECRET, seat → dealer → every seat, after the hand: the seat's hand key, so anyone can open every card. */
export const bsecretBodySchema = z.object({
  ...blindRef,
  secret: scalar
}).strict()
export type BsecretBody = z.infer<typeof bsecretBodySchema>
export const signedBsecretSchema = signedOf('bsecret', bsecretBodySchema)

/** BUNLOCK, dealer → every seat: hand keys opened from their timelock, naming the seats that withheld them (docs/dealer-blind.md §14). */
export const bunlockBodySchema = z.object({
  ...handRef,
  commit: hex32,
  beacon: beaconEntrySchema,
  keys: z.array(z.object({
    seat: index,
    secret: scalar,
    reason: z.enum(['missing-shares', 'missing-secret'])
  }).strict()).min(1).max(8)
}).strict()
export type BunlockBody = z.infer<typeof bunlockBodySchema>
export const signedBunlockSchema = signedOf('bunlock', bunlockBodySchema)

/** BREVEAL, dealer → every seat at the end of the hand: the beacon entry, the deal parameters, the stages, every hand key. */
export const brevealBodySchema = z.object({
  ...handRef,
  commit: hex32,
  beacon: beaconEntrySchema.nullable(),
  params: dealParamsSchema,
  stages: z.array(shortText).max(8),
  secrets: z.array(signedBsecretSchema).max(8),
  /** The hand's last BUNLOCK, when a hand key was opened from its timelock (those seats have no BSECRET). */
  unlock: signedBunlockSchema.optional(),
  /**
   * A played hand (docs/dealer-blind.md §15): the chain its receipt carries (length, last digest)
   * and how it ended: the score, or the refused action or the seat whose turn ran out.
   */
  play: z.object({
    actions: z.number().int().min(0).max(MAX_ACTIONS),
    head: hex32,
    score: gameScoreSchema.nullable(),
    refused: signedActionSchema.optional(),
    waiting: z.object({ seat: z.number().int().min(0).max(7) }).strict().optional()
  }).strict().optional()
}).strict()
export type BrevealBody = z.infer<typeof brevealBodySchema>
export const signedBrevealSchema = signedOf('breveal', brevealBodySchema)

/** BDEAL, dealer → every seat: deal these stages (every seat sends its shares); the beacon entry and the deal parameters. */
export const bdealBodySchema = z.object({
  ...handRef,
  commit: hex32,
  beacon: beaconEntrySchema.nullable(),
  params: dealParamsSchema,
  stages: z.array(shortText).min(1).max(8)
}).strict()
export type BdealBody = z.infer<typeof bdealBodySchema>
export const signedBdealSchema = signedOf('bdeal', bdealBodySchema)

/** BEND, dealer → every seat: the hand is over; publish your hand key. */
export const bendBodySchema = z.object({ ...handRef, commit: hex32 }).strict()
export type BendBody = z.infer<typeof bendBodySchema>
export const signedBendSchema = signedOf('bend', bendBodySchema)

/** BFINAL, dealer → every seat: the countersignatures; each seat assembles the receipt (too large for one frame) itself. */
export const bfinalBodySchema = z.object({
  ...handRef,
  commit: hex32,
  reveal: hex32,
  acks: z.array(signedAckSchema).max(8)
}).strict()
export type BfinalBody = z.infer<typeof bfinalBodySchema>
export const signedBfinalSchema = signedOf('bfinal', bfinalBodySchema)
export const signedBkeysSchema = signedOf('bkeys', bkeysBodySchema)

/** A finished dealer-blind hand (receipt version 2): everything needed to re-check it offline. */
export const blindReceiptSchema = z.object({
  v: z.literal(2),
  commit: signedCommitSchema,
  keys: z.array(signedBkeySchema).max(8),
  shuffles: z.array(signedBshuffleSchema).max(8),
  reveal: signedBrevealSchema,
  acks: z.array(signedAckSchema).max(8),
  /** A played hand's action chain and its end, as its BREVEAL names them (docs/dealer-blind.md §15). */
  play: receiptPlaySchema.optional()
}).strict()
export type BlindReceipt = z.infer<typeof blindReceiptSchema>

export type SignedBkey = Signed<BkeyBody>
export type SignedBshuffle = Signed<BshuffleBody>
export type SignedBshares = Signed<BsharesBody>
export type SignedBsecret = Signed<BsecretBody>
export type SignedBreveal = Signed<BrevealBody>
export type SignedBunlock = Signed<BunlockBody>
