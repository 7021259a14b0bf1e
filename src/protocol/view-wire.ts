import { freezeDeep } from '../core/frozen.js'
import { docDigest } from '../core/hand/digest.js'
import type { PledgesBody, SignedCommit } from '../core/hand/messages.js'
import type { ViewBody, ViewWireBody } from '../core/hand/view-messages.js'
import type { Signed } from '../core/signed.js'

// A VIEW names the COMMIT and PLEDGES its seat was shown by digest and carries both, so that a seat
// shown other ones holds the dealer's two signed documents (docs/protocol.md §6 step 4). Nearly
// always its recipient holds those very documents already: sent whole, the VIEWs were about half of
// a hand's bytes (issue 24). So a VIEW goes without them (docs/protocol.md §3, "A VIEW without its
// documents"): the signature is still over the whole body, and the recipient puts back its own
// documents where the digests name them. Where they name others, it asks for the VIEW whole.

/** What a node holds of a hand to put a VIEW's documents back from: its COMMIT (and that COMMIT's digest), its PLEDGES once it has them. */
export interface HeldDocs { commit: SignedCommit, commitDigest: string, pledges?: Signed<PledgesBody> }

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
  const { commitDoc, pledgesDoc } = view.body
  if (commitDoc !== undefined && pledgesDoc !== undefined) return view as Signed<ViewBody>
  const commit = commitDoc ?? (view.body.commit === held.commitDigest ? held.commit : undefined)
  const pledges = pledgesDoc ?? (held.pledges !== undefined && view.body.pledges === docDigest(held.pledges) ? held.pledges : undefined)
  if (commit === undefined || pledges === undefined) return undefined
  return freezeDeep({ type: view.type, signer: view.signer, body: { ...view.body, commitDoc: commit, pledgesDoc: pledges }, sig: view.sig })
}
