import { freezeDeep, markChecked, wasChecked } from '../core/frozen.js'
import { docDigest } from '../core/hand/digest.js'
import { receiptSchema, signedCommitSchema, signedPledgeSchema, signedRevealSchema, type PledgesBody, type SignedCommit, type SignedPledge, type SignedReveal } from '../core/hand/messages.js'
import type { ViewBody, ViewWireBody } from '../core/hand/view-messages.js'
import type { Signed } from '../core/signed.js'
import { isWholeReceipt, signedFinalWireSchema, type FinalBody, type FinalWireBody } from './wire.js'

// A VIEW names the COMMIT and PLEDGES its seat was shown by digest and carries both, so that a seat
// shown other ones holds the dealer's two signed documents (docs/protocol.md §6 step 4). Nearly
// always its recipient holds those very documents already: sent whole, the VIEWs were about half of
// a hand's bytes (issue 24). So a VIEW goes without them (docs/protocol.md §3, "A VIEW without its
// documents"): the signature is still over the whole body, and the recipient puts back its own
// documents where the digests name them. Where they name others, it asks for the VIEW whole.

/**
 * What a node holds of a hand to put a VIEW's or a FINAL's documents back from: its COMMIT (and that
 * COMMIT's digest); its PLEDGES and their pledges once it has them (a seat keeps both, and after a
 * restart reads both back from its save); the REVEAL a seat countersigned.
 */
export interface HeldDocs { commit: SignedCommit, commitDigest: string, pledgesDoc?: Signed<PledgesBody>, pledges?: SignedPledge[], reveal?: SignedReveal }

/** Whether a VIEW off the wire carries both its documents (else its recipient puts its own back). */
export function isWholeView (view: Signed<ViewWireBody>): view is Signed<ViewBody> {
  return view.body.commitDoc !== undefined && view.body.pledgesDoc !== undefined
}

/** The same signed VIEW without its two documents, for a frame (deep-frozen: one encoding for every recipient). */
export function compactView (view: Signed<ViewBody>): Signed<ViewWireBody> {
  const { commitDoc: _commit, pledgesDoc: _pledges, ...body } = view.body
  return freezeDeep({ type: view.type, signer: view.signer, body, sig: view.sig })
}

/**
 * The whole VIEW that a VIEW off the wire stands for: the view itself when it carries both
 * documents; otherwise the same view with each missing document put back from `held`, where its
 * digest in the view is that of the held one. Undefined when a missing document is not one held
 * here: other documents (the dealer may have shown two seats two of them) or none yet. Nothing is
 * checked here: the whole view is then checked as any VIEW is, on its own signature.
 */
export function wholeView (view: Signed<ViewWireBody>, held: HeldDocs): Signed<ViewBody> | undefined {
  if (isWholeView(view)) return view
  const { commitDoc, pledgesDoc } = view.body
  const commit = commitDoc ?? (view.body.commit === held.commitDigest ? held.commit : undefined)
  const pledges = pledgesDoc ?? (held.pledgesDoc !== undefined && view.body.pledges === docDigest(held.pledgesDoc) ? held.pledgesDoc : undefined)
  if (commit === undefined || pledges === undefined) return undefined
  return freezeDeep({ type: view.type, signer: view.signer, body: { ...view.body, commitDoc: commit, pledgesDoc: pledges }, sig: view.sig })
}

// A FINAL's receipt carries the hand's COMMIT, pledges and REVEAL, which a seat that countersigned
// the hand holds (it saved the REVEAL before its ACK left): sent whole, the FINALs were over 40% of
// a hand's bytes once VIEWs went without their documents. So the dealer sends a seat whose ACK it
// holds the FINAL without those three (docs/protocol.md §3, "A FINAL without the documents its seat
// holds"); the seat puts its own back. Its signature is still over the whole body, so a receipt
// put back from other documents than the dealer's fails on it.

/** The same signed FINAL, its receipt without the COMMIT, pledges and REVEAL (deep-frozen: one encoding for every such seat). */
export function compactFinal (final: Signed<FinalBody>): Signed<FinalWireBody> {
  const { commit: _commit, pledges: _pledges, reveal: _reveal, ...receipt } = final.body.receipt
  return freezeDeep({ type: final.type, signer: final.signer, body: { ...final.body, receipt }, sig: final.sig })
}

/**
 * The whole FINAL that a FINAL off the wire stands for: itself when its receipt is whole; else
 * its receipt with the three documents put back from `held`, when the FINAL names `held`'s COMMIT
 * and the seat holds the pledges and the REVEAL. A string (why not) when the receipt leaves out
 * some of the three but not all, or `held` lacks what it needs. Nothing is checked here: the whole
 * FINAL is then checked as any FINAL is, its signature first.
 */
export function wholeFinal (final: Signed<FinalWireBody>, held: HeldDocs | undefined): Signed<FinalBody> | string {
  const { commit, pledges, reveal } = final.body.receipt
  if (isWholeReceipt(final.body.receipt)) return final as Signed<FinalBody>
  if (commit !== undefined || pledges !== undefined || reveal !== undefined) return 'its receipt leaves out some of its COMMIT, pledges and REVEAL but not all'
  if (held === undefined || final.body.commit !== held.commitDigest) return 'its receipt leaves out a COMMIT this seat does not hold'
  if (held.pledges === undefined || held.reveal === undefined) return 'its receipt leaves out the pledges or the REVEAL, which this seat does not hold'
  const receipt = freezeDeep({ ...final.body.receipt, commit: held.commit, pledges: held.pledges, reveal: held.reveal })
  // One schema pass per message (issue 24): a receipt whose every part passed its own schema here
  // (the FINAL's frame, and each held document off its own frame) passes the receipt schema, which
  // is those parts' schemas in a strict object, so it is recorded as having passed it. Documents
  // read back from a save after a restart were not: their receipt goes through the schema.
  const parts = wasChecked(final, signedFinalWireSchema) && wasChecked(held.commit, signedCommitSchema) && wasChecked(held.reveal, signedRevealSchema) &&
    held.pledges.length <= 8 && held.pledges.every(p => wasChecked(p, signedPledgeSchema))
  if (parts) markChecked(receipt, receiptSchema)
  return freezeDeep({ type: final.type, signer: final.signer, body: { ...final.body, receipt }, sig: final.sig })
}
