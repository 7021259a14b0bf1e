import { signDocument, type Signed } from '../core/signed.js'
import type { Signer } from '../core/identity.js'
import type { AbortBody, AbortReason, BeaconEntry, SignedAbort, SignedCommit } from '../core/hand/messages.js'
import type { Effect } from './types.js'

/**
 * A signed abort record for the hand `commit` opened: who stopped it, why, and the documents that
 * show it; `secret` is published by a `dealer-stopped` record (src/core/hand/abort-rules.ts), and
 * `keyRound` carried by a time-locked blind hand's missing-shares or missing-secret record.
 */
export function signAbort (
  commit: SignedCommit, reason: AbortReason, blame: string[], detail: string, evidence: Array<Signed<unknown>>, signer: Signer, secret?: string, keyRound?: BeaconEntry
): SignedAbort {
  const body: AbortBody = {
    table: commit.body.table, hand: commit.body.hand, reason, blame, commit, evidence: evidence as AbortBody['evidence'], detail,
    ...(secret === undefined ? {} : { secret }),
    ...(keyRound === undefined ? {} : { keyRound })
  }
  return signDocument('abort', body, signer)
}

/** What every machine does to log an abort record of hand `hand`: the log entry, then the `aborted` event naming its reason, blame and detail. */
export function logAbort (hand: number, doc: SignedAbort): Effect[] {
  const { reason, blame, detail } = doc.body
  return [
    { kind: 'append', entry: 'abort', hand, payload: doc },
    { kind: 'event', hand, event: { type: 'aborted', reason, blame, detail } }
  ]
}
