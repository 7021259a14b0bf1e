/**
 * The documents a blind-v1 party makes, pure: each takes the hand's COMMIT, the seat it acts for,
 * the signer (the seat's node; the dealer's node for a robot seat), its secret hand key and the
 * injected randomness. The checks of these documents are src/core/hand/blind.ts.
 */
import {
  type Ciphertext, type Point, type PreparedShuffle, encodeCiphertext, finishShuffle, proveKey, proveShare, scalarToHex, shuffleDeck
} from '../core/blind/index.js'
import type { RandomBytes } from '../core/blind/random.js'
import { blindContext, keyStep, shareStep, shuffleStep } from '../core/hand/blind.js'
import type { BkeyBody, BsecretBody, BsharesBody, BshuffleBody } from '../core/hand/blind-messages.js'
import type { CommitBody } from '../core/hand/messages.js'
import type { Signer } from '../core/identity.js'
import { signDocument, type Signed } from '../core/signed.js'
import { sealTimelockText } from '../core/timelock/index.js'

export interface BlindHandRef { commit: CommitBody, digest: string }

/** The reference a machine's hand state gives: its COMMIT's body and digest. */
export function href (hand: { commit: { body: CommitBody }, digest: string }): BlindHandRef {
  return { commit: hand.commit.body, digest: hand.digest }
}

const ref = (h: BlindHandRef, seat: number): { table: string, hand: number, commit: string, seat: number } =>
  ({ table: h.commit.table, hand: h.commit.hand, commit: h.digest, seat })

/**
 * A seat's BKEY. On a time-locked hand (the COMMIT names a key round; `chain` is its beacon's) the
 * hand key also goes sealed with tlock to that round (docs/dealer-blind.md §14).
 */
export function makeBkey (h: BlindHandRef, seat: number, signer: Signer, x: bigint, random: RandomBytes, chain?: TimelockChain): Signed<BkeyBody> {
  const { pub, proof } = proveKey(blindContext(h.commit, h.digest, keyStep(seat), signer.peerId), x, random)
  const body: BkeyBody = { ...ref(h, seat), pub, proof }
  if (h.commit.keyRound !== undefined) {
    if (chain === undefined) throw new Error(`hand ${h.commit.hand} is time-locked: its key needs the beacon's chain to be sealed`)
    body.timelock = sealTimelockText(scalarToHex(x), chain, h.commit.keyRound, random)
  }
  return signDocument('bkey', body, signer)
}

export type TimelockChain = Parameters<typeof sealTimelockText>[1]

/** `prepared`: made earlier with prepareShuffle for this key and deck size (then `random` is not read). */
export function makeBshuffle (h: BlindHandRef, seat: number, signer: Signer, pk: Point, input: readonly Ciphertext[], random: RandomBytes, prepared?: PreparedShuffle): { doc: Signed<BshuffleBody>, output: Ciphertext[] } {
  const ctx = blindContext(h.commit, h.digest, shuffleStep(seat), signer.peerId)
  const { output, proof } = prepared === undefined ? shuffleDeck(ctx, pk, input, random) : finishShuffle(ctx, prepared, input)
  return { doc: signDocument('bshuffle', { ...ref(h, seat), deck: output.map(encodeCiphertext), proof }, signer), output }
}

export function makeBshares (
  h: BlindHandRef, seat: number, signer: Signer, x: bigint, dealt: readonly Ciphertext[],
  positions: readonly number[], stage: string, to: number | null, random: RandomBytes
): Signed<BsharesBody> {
  const shares = positions.map(pos => ({ pos, ...proveShare(blindContext(h.commit, h.digest, shareStep(pos, seat), signer.peerId), x, dealt[pos].b, random) }))
  return signDocument('bshares', { ...ref(h, seat), stage, to, shares }, signer)
}

export function makeBsecret (h: BlindHandRef, seat: number, signer: Signer, x: bigint): Signed<BsecretBody> {
  return signDocument('bsecret', { ...ref(h, seat), secret: scalarToHex(x) }, signer)
}
