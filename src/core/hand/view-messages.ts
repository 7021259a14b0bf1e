import * as z from 'zod'
import { knownOr } from '../known-schema.js'
import { handRef, hex32, index, signedCommitSchema, signedOf, signedPledgesSchema } from './messages.js'

/**
 * VIEW, seat → every other human seat and the dealer: what this seat was shown of the hand,
 * carrying the two dealer-signed documents themselves (a seat that sees a conflict then holds
 * both). A seat sends its NONCE only once every other human seat's view matches its own
 * (docs/protocol.md §6 step 4). The dealer keeps the views it receives: they are the evidence that
 * says who held up a hand (`missing-view`, `missing-nonce`: §10). `again`: sent after a restart,
 * asking each seat for its view once more.
 */
export const viewBodySchema = z.object({
  ...handRef,
  commit: hex32,
  seat: index,
  /** docDigest of the PLEDGES document this seat received. */
  pledges: hex32,
  commitDoc: knownOr(signedCommitSchema),
  pledgesDoc: knownOr(signedPledgesSchema),
  again: z.boolean()
}).strict()
export type ViewBody = z.infer<typeof viewBodySchema>
export const signedViewSchema = signedOf('view', viewBodySchema)

/**
 * A VIEW as a frame may carry it (docs/protocol.md §3, "A VIEW without its documents"): the same
 * signed document, with `commitDoc` and `pledgesDoc` left out where its recipient holds them. The
 * signature is over the whole body: a recipient puts back the documents it holds under the digests
 * the view names (`commit`, `pledges`) before any check, and a view whose documents it does not
 * hold is checked only once they are. Abort records carry whole views only (signedViewSchema).
 */
export const viewWireBodySchema = viewBodySchema.extend({
  commitDoc: viewBodySchema.shape.commitDoc.optional(),
  pledgesDoc: viewBodySchema.shape.pledgesDoc.optional()
}).strict()
export type ViewWireBody = z.infer<typeof viewWireBodySchema>
export const signedViewWireSchema = signedOf('view', viewWireBodySchema)
