/**
 * The Fiat–Shamir transcript of every blind-v1 proof. A challenge binds a label (which proof), the
 * context (table, hand, COMMIT digest, step, prover) and the proof's statement and commitments, so
 * a proof made for one hand, step, prover or input verifies nowhere else:
 *
 *   challenge = int_le(SHA-512( F("fairdeal/blind-v1/" + label) ‖ F(table) ‖ F(decimal hand) ‖
 *                               F(commit) ‖ F(step) ‖ F(prover) ‖ F(item₁) ‖ … ‖ F(itemₖ) )) mod ℓ
 *   F(x) = u32be(byte length of x) ‖ x;  texts in UTF-8.
 */
import { sha512 } from '@noble/hashes/sha2.js'
import { bytesToNumberLE } from '@noble/curves/utils.js'
import { utf8 } from '../bytes.js'
import { CoreInputError } from '../errors.js'
import { mod } from './group.js'

export interface ProofContext {
  table: string
  hand: number
  /** docDigest of the hand's COMMIT (64 lowercase hex); the COMMIT binds the beacon round too. */
  commit: string
  /** Which step of the hand: `key:<seat>`, `shuffle:<seat>`, `share:<position>:<seat>`. */
  step: string
  /** The prover's peer id (for a robot seat: the dealer's). */
  prover: string
}

export const DOMAIN = 'fairdeal/blind-v1/'

function frame (bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + bytes.length)
  new DataView(out.buffer).setUint32(0, bytes.length)
  out.set(bytes, 4)
  return out
}

export function u32be (n: number): Uint8Array {
  const out = new Uint8Array(4)
  new DataView(out.buffer).setUint32(0, n)
  return out
}

export function challenge (label: string, ctx: ProofContext, items: readonly Uint8Array[]): bigint {
  return challenges(label, ctx, items, [[]])[0]
}

/**
 * challenge(label, ctx, [...items, ...tail]) for each tail, the shared prefix hashed once: the
 * shuffle's N challenges uⱼ share a statement of both decks (~4 KB for 32 cards), so SHA-512's
 * state after it is cloned for each j instead of hashing it N times. Same values as `challenge`.
 */
export function challenges (label: string, ctx: ProofContext, items: readonly Uint8Array[], tails: ReadonlyArray<readonly Uint8Array[]>): bigint[] {
  if (!Number.isSafeInteger(ctx.hand) || ctx.hand < 0) throw new CoreInputError(`hand must be a non-negative integer, got ${String(ctx.hand)}`)
  const h = sha512.create()
  h.update(frame(utf8(DOMAIN + label)))
  for (const field of [ctx.table, String(ctx.hand), ctx.commit, ctx.step, ctx.prover]) h.update(frame(utf8(field)))
  for (const item of items) h.update(frame(item))
  return tails.map(tail => {
    const t = h.clone()
    for (const item of tail) t.update(frame(item))
    return mod(bytesToNumberLE(t.digest()))
  })
}
