/**
 * The hand families: how a scheme's hands are played and proven. Every scheme names exactly one
 * family; machines, receipt verification, abort rules and log checks ask this module (never a
 * scheme id's prefix, a flag or a receipt's version number on their own). Receipt verification and
 * the abort-record rules pick the family whose rules check a document in one place, rulesFamilyOf
 * (src/core/hand/family-of.ts, apart so that this module imports nothing).
 *
 * - `commit-reveal`: the dealer commits to a secret, the seats pledge and reveal nonces, the key
 *   shuffles the deck (docs/protocol.md). Receipts are version 1.
 * - `blind`: the seats shuffle an encrypted deck in turn with proofs (docs/dealer-blind.md).
 *   Receipts are version 2.
 */
export const HAND_FAMILIES = ['commit-reveal', 'blind'] as const
export type HandFamily = typeof HAND_FAMILIES[number]

/** The receipt version (`v`) each family writes. */
export const RECEIPT_VERSION: Readonly<Record<HandFamily, number>> = Object.freeze({ 'commit-reveal': 1, blind: 2 })

/** The family of a receipt or abort-bearing document by its `v` field; undefined for an unknown one. */
export function familyOfReceiptVersion (v: unknown): HandFamily | undefined {
  for (const family of HAND_FAMILIES) if (RECEIPT_VERSION[family] === v) return family
  return undefined
}
