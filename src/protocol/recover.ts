import { signDocument, type Signed } from '../core/signed.js'
import type { Signer } from '../core/identity.js'
import { openHand, type RecoveredBody, type RecoveredRule, type SignedRecovered } from '../core/hand/recovered.js'
import type { BeaconEntry, CardsBody, SignedCommit, SignedPledge } from '../core/hand/messages.js'
import type { HandEvent } from './types.js'

/**
 * The RECOVERED record a node signs for a time-locked hand it finishes without the missing party:
 * every ciphertext opened with R's entry by the core (the very function the verifier runs), so
 * what a node signs is exactly what any verifier finds. One function for both machines.
 */
export function signRecovered (
  commit: SignedCommit, pledges: readonly SignedPledge[], entry: BeaconEntry, cards: ReadonlyArray<Signed<CardsBody>>,
  rule: RecoveredRule, detail: string, signer: Signer
): { doc: SignedRecovered, event: HandEvent } {
  const opened = openHand(commit, pledges, entry, cards)
  const body: RecoveredBody = {
    table: commit.body.table,
    hand: commit.body.hand,
    commit,
    pledges: [...pledges].sort((a, b) => a.body.seat - b.body.seat),
    beacon: entry,
    secret: opened.secret,
    nonces: opened.nonces,
    cards: [...cards],
    faults: opened.faults,
    rule,
    detail: detail.slice(0, 512)
  }
  const doc = signDocument('recovered', body, signer)
  return { doc, event: { type: 'recovered', rule, faults: opened.faults, blame: [...new Set(opened.faults.map(f => f.party))] } }
}
