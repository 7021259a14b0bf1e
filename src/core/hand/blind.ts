/**
 * The rules of a dealer-blind hand (blind-v1) shared by the verifier and the protocol machines:
 * who proves each step, each proof's context, the check of each document, the beacon's final
 * permutation and the opening of the deck. One rule set; docs/dealer-blind.md states it.
 */
import { sha256, utf8 } from '../bytes.js'
import { CoreInputError } from '../errors.js'
import {
  type Ciphertext, type Point, type ProofContext, G, cardOf, decodeDeck, jointKey, mod, mulPublic, openWithShares,
  pointFromHex, randomPermutation, scalarFromHex, seededRandom, startingDeck, verifyKey, verifyShare, verifyShuffle
} from '../blind/index.js'
import { BLIND_V1, blindCards, blindPositions, type PositionDelivery } from '../schemes/blind.js'
import { getScheme } from '../schemes/registry.js'
import type { Delivery } from '../schemes/types.js'
import { ROBOT, type CommitBody, type DealParams } from './messages.js'
import type { BkeyBody, BsecretBody, BsharesBody, BshuffleBody } from './blind-messages.js'

/** The commitment field of a blind-v1 COMMIT: unused (no dealer secret), always 64 zeros. */
export const BLIND_COMMITMENT = '0'.repeat(64)

/** The party that signs and proves for a seat: the seat's peer, or the dealer for a robot. */
export function proverOf (commit: CommitBody, seat: number): string {
  const s = commit.seats[seat]
  if (s === undefined) throw new CoreInputError(`seat ${seat} is not at the table`)
  return s === ROBOT ? commit.dealer : s
}

export function blindContext (commit: CommitBody, commitDigest: string, step: string, prover: string): ProofContext {
  return { table: commit.table, hand: commit.hand, commit: commitDigest, step, prover }
}

export const keyStep = (seat: number): string => `key:${seat}`
export const shuffleStep = (seat: number): string => `shuffle:${seat}`
export const shareStep = (pos: number, seat: number): string => `share:${pos}:${seat}`

/** A blind-v1 COMMIT's own rules (beyond its schema); the problem, or null. */
export function checkBlindCommit (commit: CommitBody): string | null {
  if (commit.scheme !== BLIND_V1) return `scheme ${commit.scheme} is not ${BLIND_V1}`
  const scheme = getScheme(BLIND_V1)
  if (!scheme.games.includes(commit.game)) return `${BLIND_V1} has no game ${commit.game}`
  if (!scheme.seatsFor(commit.game).includes(commit.seats.length)) return `${commit.game} is not played by ${commit.seats.length} seats`
  if (commit.commitment !== BLIND_COMMITMENT) return `a ${BLIND_V1} commit's commitment must be 64 zeros (there is no dealer secret)`
  return null
}

interface Doc<T> { signer: string, body: T }

function sameHand (commit: CommitBody, commitDigest: string, body: { table: string, hand: number, commit: string }): string | null {
  if (body.table !== commit.table || body.hand !== commit.hand) return 'names another table or hand'
  if (body.commit !== commitDigest) return 'answers another commit'
  return null
}

function seatSigner (commit: CommitBody, doc: Doc<{ seat: number }>): string | null {
  if (doc.body.seat >= commit.seats.length) return `seat ${doc.body.seat} is not at the table`
  return doc.signer === proverOf(commit, doc.body.seat) ? null : 'not signed by that seat'
}

/** A BKEY: its seat's signer, this hand, a valid proof of knowledge. Returns the key, or a problem. */
export function checkBkey (commit: CommitBody, commitDigest: string, doc: Doc<BkeyBody>): { pub: Point } | { problem: string } {
  const bad = seatSigner(commit, doc) ?? sameHand(commit, commitDigest, doc.body)
  if (bad !== null) return { problem: bad }
  const ctx = blindContext(commit, commitDigest, keyStep(doc.body.seat), doc.signer)
  if (!verifyKey(ctx, doc.body.pub, doc.body.proof)) return { problem: 'its proof of knowledge of the hand key does not verify' }
  return { pub: pointFromHex(doc.body.pub, 'public key') }
}

/** The joint key from every seat's public key, seat order. */
export function blindJointKey (pubs: readonly Point[]): Point {
  return jointKey(pubs)
}

/** The encrypted starting deck every first shuffle takes as input. */
export function blindStartingDeck (game: string): Ciphertext[] {
  return startingDeck(blindCards(game))
}

/** A BSHUFFLE of `input`: its seat's signer, this hand, a proof that verifies. Returns the output deck, or a problem. */
export function checkBshuffle (commit: CommitBody, commitDigest: string, doc: Doc<BshuffleBody>, pk: Point, input: readonly Ciphertext[]): { deck: Ciphertext[] } | { problem: string } {
  const bad = seatSigner(commit, doc) ?? sameHand(commit, commitDigest, doc.body)
  if (bad !== null) return { problem: bad }
  if (doc.body.deck.length !== input.length) return { problem: `its deck has ${doc.body.deck.length} cards, not ${input.length}` }
  let deck: Ciphertext[]
  try { deck = decodeDeck(doc.body.deck, 'deck') } catch (err) { return { problem: (err as Error).message } }
  const ctx = blindContext(commit, commitDigest, shuffleStep(doc.body.seat), doc.signer)
  if (!verifyShuffle(ctx, pk, input, deck, doc.body.proof)) return { problem: 'its shuffle proof does not verify' }
  return { deck }
}

/**
 * A BSHARES: its seat's signer, this hand, exactly the positions expected, and every share's
 * Chaum–Pedersen proof against the seat's key and that position's ciphertext. The shares by position, or a problem.
 */
export function checkBshares (
  commit: CommitBody, commitDigest: string, doc: Doc<BsharesBody>, pub: Point, dealt: readonly Ciphertext[], positions: readonly number[]
): { shares: Map<number, Point> } | { problem: string } {
  const bad = seatSigner(commit, doc) ?? sameHand(commit, commitDigest, doc.body)
  if (bad !== null) return { problem: bad }
  const got = doc.body.shares.map(s => s.pos)
  if (got.length !== positions.length || got.some((p, i) => p !== positions[i])) return { problem: `shares positions ${got.join(',')} instead of ${positions.join(',')}` }
  const shares = new Map<number, Point>()
  for (const s of doc.body.shares) {
    const ctx = blindContext(commit, commitDigest, shareStep(s.pos, doc.body.seat), doc.signer)
    const d = verifyShare(ctx, pub, dealt[s.pos].b, s)
    if (d === undefined) return { problem: `its decryption share for position ${s.pos} does not verify` }
    shares.set(s.pos, d)
  }
  return { shares }
}

/** A BSECRET: its seat's signer, this hand, and secret·G equal to the seat's public key. The scalar, or a problem. */
export function checkBsecret (commit: CommitBody, commitDigest: string, doc: Doc<BsecretBody>, pub: Point): { secret: bigint } | { problem: string } {
  const bad = seatSigner(commit, doc) ?? sameHand(commit, commitDigest, doc.body)
  if (bad !== null) return { problem: bad }
  let x: bigint
  try { x = scalarFromHex(doc.body.secret, 'secret') } catch (err) { return { problem: (err as Error).message } }
  if (!mulPublic(G, x).equals(pub)) return { problem: 'its hand key does not match its public key' }
  return { secret: x }
}

/**
 * The public final permutation a beacon round adds: σ = Fisher–Yates (src/core/blind/random.ts)
 * on the stream seeded by SHA-256("fairdeal/blind-v1/beacon\n" + randomness + "\n" + docDigest of
 * the last BSHUFFLE). Without a beacon σ is the identity. Position p of the dealt deck is the last
 * shuffle's position σ[p].
 */
export function beaconPermutation (randomness: string | null, lastShuffleDigest: string, n: number): number[] {
  if (randomness === null) return Array.from({ length: n }, (_, i) => i)
  const seed = sha256(utf8(`fairdeal/blind-v1/beacon\n${randomness}\n${lastShuffleDigest}`))
  return randomPermutation(seededRandom(seed), n)
}

export function dealtDeck (shuffled: readonly Ciphertext[], sigma: readonly number[]): Ciphertext[] {
  return sigma.map(j => shuffled[j])
}

/** Where each position of the dealt deck goes, for the stages asked. */
export function blindLayout (commit: CommitBody, params: DealParams): PositionDelivery[] {
  return blindPositions(commit.game, { seats: commit.seats.length, dealer: params.dealer, taker: params.taker })
}

/** A position's card once every share is in; CoreInputError when the result is no card of the game. */
export function openPosition (game: string, ct: Ciphertext, shares: readonly Point[]): string {
  const code = cardOf(openWithShares(ct, shares), blindCards(game))
  if (code === undefined) throw new CoreInputError('the shares open no card of the deck')
  return code
}

/**
 * Every position opened with every seat's hand key (what the verifier does after the hand):
 * Σₖ xₖ·b = (Σₖ xₖ)·b, so one multiplication per card.
 */
export function openDeckWithKeys (game: string, dealt: readonly Ciphertext[], secrets: readonly bigint[]): string[] {
  const x = mod(secrets.reduce((a, b) => a + b, 0n))
  return dealt.map(ct => openPosition(game, ct, [mulPublic(ct.b, x)]))
}

/** Position deliveries turned into card deliveries. */
export function cardDeliveries (layout: readonly PositionDelivery[], cards: readonly string[]): Delivery[] {
  return layout.map(d => ({ stage: d.stage, seat: d.seat, public: d.public, cards: d.positions.map(p => cards[p]) }))
}
