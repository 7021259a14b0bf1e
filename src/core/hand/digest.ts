import { sha256Hex } from '../bytes.js'
import { canonicalBytes } from '../canonical.js'
import { isDeepFrozen } from '../frozen.js'
import type { Delivery } from '../schemes/types.js'

/** Digests of deep-frozen documents (src/core/frozen.ts): their bytes cannot change, nor can their digest. */
const frozenDigests = new WeakMap<object, string>()

/** The digest other documents use to name a signed document: SHA-256 of its canonical bytes. */
export function docDigest (doc: unknown): string {
  if (!isDeepFrozen(doc)) return sha256Hex(canonicalBytes(doc))
  let digest = frozenDigests.get(doc as object)
  if (digest === undefined) {
    digest = sha256Hex(canonicalBytes(doc))
    frozenDigests.set(doc as object, digest)
  }
  return digest
}

/**
 * What a seat countersigns about its own cards: SHA-256 of the canonical list of the private
 * deliveries it received, `[{stage, cards}]` in delivery order, limited to the stages dealt.
 */
export function seatCardsDigest (deliveries: readonly Delivery[], seat: number, stages: readonly string[]): string {
  return sha256Hex(canonicalBytes(privateCardsOf(deliveries, seat, stages)))
}

export function privateCardsOf (deliveries: readonly Delivery[], seat: number, stages: readonly string[]): Array<{ stage: string, cards: string[] }> {
  return deliveries
    .filter(d => !d.public && d.seat === seat && stages.includes(d.stage))
    .map(d => ({ stage: d.stage, cards: d.cards }))
}

export const ZERO_HASH = '0'.repeat(64)
