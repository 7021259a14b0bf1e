import { familyOfScheme } from '../schemes/registry.js'
import { familyOfReceiptVersion, type HandFamily } from './family.js'

/** A hand document whose family is asked: a receipt as received (unparsed), or a COMMIT's body. */
export type FamilyQuery = { receipt: unknown } | { commit: { scheme: string } }

/**
 * Which family's rules check a hand document: the one place receipt verification (verifyReceipt)
 * and the abort-record rules (checkAbortRecord) pick it. A receipt by its version `v`
 * (RECEIPT_VERSION); a COMMIT, such as the one an abort record carries, by its scheme
 * (familyOfScheme). A document naming no known family goes to commit–reveal, whose own checks then
 * refuse it (an unknown `v`, an unknown scheme).
 */
export function rulesFamilyOf (query: FamilyQuery): HandFamily {
  if ('commit' in query) return familyOfScheme(query.commit.scheme) ?? 'commit-reveal'
  const r = query.receipt
  const v = typeof r === 'object' && r !== null ? (r as { v?: unknown }).v : undefined
  return familyOfReceiptVersion(v) ?? 'commit-reveal'
}
