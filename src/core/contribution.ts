/**
 * A contribution to a hand's key (the dealer's secret, a seat's nonce) as the table protocol takes
 * it: exactly 64 lowercase hexadecimal characters, `0-9` and `a-f` (the 32 random bytes every honest
 * node draws, written out).
 *
 * The schemes themselves hash any well-formed Unicode text (docs/schemes.md), but the protocol
 * accepts this one spelling only, before it hashes or stores anything: a contribution is then
 * plain ASCII, so it has one UTF-8 form (a lone surrogate, which UTF-8 encoders silently replace
 * with U+FFFD, would hash to the pledged hash of another string and then make the scheme throw), it
 * holds no `|` (the key texts' separator), and its length is fixed.
 */
export const CONTRIBUTION_PATTERN = /^[0-9a-f]{64}$/

/** Why `value` is not a well-formed contribution, or null if it is one. `what` names it in the message. */
export function contributionProblem (value: unknown, what: string): string | null {
  if (typeof value === 'string' && CONTRIBUTION_PATTERN.test(value)) return null
  if (typeof value !== 'string') return `${what} is not a string`
  return `${what} is not 64 lowercase hex characters (${value.length} characters${/\p{Cs}/u.test(value) ? ', with a lone surrogate' : ''})`
}
