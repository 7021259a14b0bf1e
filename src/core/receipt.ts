import { verifyAbort, verifyReceipt, type VerifyOptions } from './hand/verify.js'
import { verifyRecovered } from './hand/recovered.js'

/**
 * The semantic check of one log entry's payload, used by the log verifier: a 'receipt' is a whole
 * hand (src/core/hand/messages.ts Receipt), an 'abort' a signed abort record, a
 * 'recovered' a time-locked hand finished without a missing party (src/core/hand/recovered.ts). Problems found, empty
 * when it verifies.
 */
export function verifyLogPayload (kind: string, payload: unknown, options?: VerifyOptions): string[] {
  if (kind === 'receipt') return verifyReceipt(payload, options).problems
  if (kind === 'abort') return verifyAbort(payload, options).problems
  if (kind === 'recovered') return verifyRecovered(payload, options).problems
  return [`unknown entry kind ${JSON.stringify(kind)}`]
}
