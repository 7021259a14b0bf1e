import * as z from 'zod'
import { canonicalJson } from '../core/canonical.js'
import { signDocument, type Signed } from '../core/signed.js'
import type { Signer } from '../core/identity.js'
import { handRef, hex32 } from '../core/hand/messages.js'
import { blindReceiptSchema, type BlindReceipt } from '../core/hand/blind-messages.js'

/**
 * BRECEIPT (docs/protocol.md §11): a dealer-blind hand's whole receipt, for a seat that asks about a
 * hand it never saw. The receipt carries every seat's shuffle and is too large for one frame, so the
 * dealer cuts its canonical JSON into at most MAX_RECEIPT_PARTS parts of at most RECEIPT_PART_CHARS
 * characters, each a signed document of its own; the seat joins them and checks the receipt as any
 * verifier would (the documents inside carry their own signatures).
 */
export const RECEIPT_PART_CHARS = 96 * 1024
export const MAX_RECEIPT_PARTS = 16

export const breceiptBodySchema = z.object({
  ...handRef,
  commit: hex32,
  part: z.number().int().min(0).max(MAX_RECEIPT_PARTS - 1),
  parts: z.number().int().min(1).max(MAX_RECEIPT_PARTS),
  data: z.string().max(RECEIPT_PART_CHARS)
}).strict()
export type BreceiptBody = z.infer<typeof breceiptBodySchema>

/** The dealer's BRECEIPT parts of one receipt (`commit`: the docDigest of its COMMIT). */
export function receiptParts (receipt: BlindReceipt, commit: string, signer: Signer): Array<Signed<BreceiptBody>> {
  const json = canonicalJson(receipt)
  const parts = Math.max(1, Math.ceil(json.length / RECEIPT_PART_CHARS))
  if (parts > MAX_RECEIPT_PARTS) throw new Error(`a receipt of ${json.length} characters does not fit ${MAX_RECEIPT_PARTS} parts`)
  const { table, hand } = receipt.commit.body
  return Array.from({ length: parts }, (_, part) => signDocument('breceipt', {
    table, hand, commit, part, parts, data: json.slice(part * RECEIPT_PART_CHARS, (part + 1) * RECEIPT_PART_CHARS)
  }, signer))
}

/**
 * Joins the parts of one receipt, for one hand at a time (a part of another hand or COMMIT starts
 * over: at most MAX_RECEIPT_PARTS × RECEIPT_PART_CHARS characters are held). Returns the receipt,
 * schema-checked, once every part is in; undefined while parts are missing; throws on a malformed one.
 */
export class ReceiptJoiner {
  #held: { hand: number, commit: string, parts: Array<string | undefined> } | undefined

  add (body: BreceiptBody): BlindReceipt | undefined {
    if (body.part >= body.parts) throw new Error(`part ${body.part} of ${body.parts}`)
    const held = this.#held
    if (held === undefined || held.hand !== body.hand || held.commit !== body.commit || held.parts.length !== body.parts) {
      this.#held = { hand: body.hand, commit: body.commit, parts: new Array<string | undefined>(body.parts).fill(undefined) }
    }
    const parts = (this.#held as { parts: Array<string | undefined> }).parts
    parts[body.part] = body.data
    if (parts.some(p => p === undefined)) return undefined
    this.#held = undefined
    let value: unknown
    try { value = JSON.parse(parts.join('')) } catch { throw new Error('the joined parts are not JSON') }
    const parsed = blindReceiptSchema.safeParse(value)
    if (!parsed.success) throw new Error(`the joined parts are not a blind receipt: ${parsed.error.issues[0].path.join('.')}: ${parsed.error.issues[0].message}`)
    return parsed.data
  }
}
