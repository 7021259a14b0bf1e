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
