import fc from 'fast-check'
import * as z from 'zod'
import { afterEach, describe, expect, test } from 'vitest'
import { freezeDeep, isDeepFrozen, markChecked, wasChecked } from '../src/core/frozen.js'
import { docDigest } from '../src/core/hand/digest.js'
import { receiptSchema, signedCommitSchema, signedNonceSchema, signedPledgeSchema, signedPledgesSchema, signedRevealSchema } from '../src/core/hand/messages.js'
import { knownOr, recordingPassed } from '../src/core/known-schema.js'
import { sameJson } from '../src/core/same-json.js'
import type { Signed } from '../src/core/signed.js'
import { decodeFrame, encodeFrame, WireError } from '../src/protocol/wire.js'
import { memoryHands } from '../scripts/bench/lib/memory-hands.js'

// A document inside another (a COMMIT inside a VIEW) that passed its schema before is not walked
// again (src/core/known-schema.ts): the verdict must be the schema's in every case.

type Doc = Signed<Record<string, unknown>>
const SIG = 'a'.repeat(128)

/** One played hand's documents, and a PLEDGES and a VIEW built from them as the dealer and a seat send them. */
function handDocs (): { commit: Doc, pledges: Doc, view: Doc, reveal: Doc, final: Doc } {
  const receipt = memoryHands({ seats: 4 }).play()
  const c = receipt.commit.body
  const commitDigest = docDigest(receipt.commit)
  const pledges = { type: 'pledges', signer: c.dealer, body: { table: c.table, hand: c.hand, commit: commitDigest, pledges: receipt.pledges }, sig: SIG }
  const view = {
    type: 'view',
    signer: receipt.pledges[1].signer,
    body: { table: c.table, hand: c.hand, commit: commitDigest, seat: 1, pledges: docDigest(pledges), commitDoc: receipt.commit, pledgesDoc: pledges, again: false },
    sig: SIG
  }
  const final = { type: 'final', signer: c.dealer, body: { table: c.table, hand: c.hand, commit: commitDigest, receipt }, sig: SIG }
  return { commit: receipt.commit as unknown as Doc, pledges: pledges as Doc, view: view as Doc, reveal: receipt.reveal as unknown as Doc, final: final as Doc }
}

/** decodeFrame's answer, as a value to compare: the document, or the error's message. */
function outcome (frame: Uint8Array, intern?: Parameters<typeof decodeFrame>[1]): { doc?: unknown, error?: string } {
  try {
    return { doc: decodeFrame(frame, intern) }
  } catch (err) {
    if (!(err instanceof WireError)) throw err
    return { error: err.message }
  }
}

/**
 * A node that took these documents off the wire (decodeFrame) and found them valid: the interner
 * its verify memo gives decodeFrame (src/daemon/verify-memo.ts), here over the documents as decoded
 * (they carry no real signature, so the memo's own check is not what is tested).
 */
function nodeHolding (docs: Doc[]): NonNullable<Parameters<typeof decodeFrame>[1]> {
  const bySig = new Map(docs.map(d => decodeFrame(encodeFrame(d))).map(d => [d.sig, d]))
  return (candidate) => {
    const known = bySig.get(candidate.sig)
    return known !== undefined && sameJson(known, candidate) ? known : undefined
  }
}

const runs: Array<() => void> = []
afterEach(() => { for (const undo of runs.splice(0)) undo() })

/** Counts the walks of `schema` (its own parse, as knownOr calls it). */
function countWalks (schema: z.ZodType): () => number {
  const internals = schema._zod as { run: (...args: unknown[]) => unknown }
  const original = internals.run
  let n = 0
  internals.run = (...args) => { n++; return original(...args) }
  runs.push(() => { internals.run = original })
  return () => n
}

describe('documents inside documents, parsed once', () => {
  test('knownOr takes only a schema whose output is its input', () => {
    expect(() => knownOr(z.object({ a: z.string() }))).toThrow(/strips unknown keys/)
    expect(() => knownOr(z.object({ a: z.string().trim() }).strict())).toThrow(/rewrites the value/)
    expect(() => knownOr(z.object({ a: z.string().default('x') }).strict())).toThrow(/default/)
    expect(() => knownOr(z.object({ a: z.string().transform(s => s.length) }).strict())).toThrow(/pipe|transform/)
    expect(() => knownOr(z.object({ a: z.array(z.object({ b: z.number() })) }).strict())).toThrow(/\$\.a\[\]: an object that strips/)
    // Every document a hand nests passes (they are wrapped at import).
    for (const s of [signedCommitSchema, signedPledgeSchema, signedPledgesSchema, signedNonceSchema, signedRevealSchema, receiptSchema]) expect(() => knownOr(s)).not.toThrow()
  })

  test('a VIEW whose COMMIT and PLEDGES the node holds carries those very objects, not walked again; one it does not hold is walked', () => {
    const docs = handDocs()
    const intern = nodeHolding([docs.commit, docs.pledges])
    const commitWalks = countWalks(signedCommitSchema)
    const pledgesWalks = countWalks(signedPledgesSchema)
    const view = decodeFrame(encodeFrame(docs.view), intern) as unknown as { body: { commitDoc: unknown, pledgesDoc: unknown } }
    expect(commitWalks()).toBe(0)
    expect(pledgesWalks()).toBe(0)
    expect(isDeepFrozen(view)).toBe(true)
    expect(intern(docs.commit as never)).toBe(view.body.commitDoc)
    expect(encodeFrame(view as never)).toEqual(encodeFrame(docs.view))
    // Without the node's copies: both walked, the same document.
    const plain = decodeFrame(encodeFrame(docs.view))
    expect(commitWalks()).toBe(1)
    expect(pledgesWalks()).toBe(1)
    expect(plain).toEqual(view)
    // And the copies it walked then are known from then on.
    expect(wasChecked((plain as unknown as typeof view).body.commitDoc, signedCommitSchema)).toBe(true)
  })

  test('a document the node holds that never passed the schema (as an abort record\'s evidence carries it) is walked, and refused as without it', () => {
    const docs = handDocs()
    const bad = structuredClone(docs.commit) as Doc & { body: { seats: unknown } }
    bad.body.seats = 'nobody'
    // Held deep-frozen, as the evidence of a record decoded earlier: that schema leaves bodies open.
    const held = freezeDeep(structuredClone(bad))
    const intern: NonNullable<Parameters<typeof decodeFrame>[1]> = (c) => sameJson(c, held) ? held : undefined
    const view = structuredClone(docs.view) as Doc & { body: { commitDoc: unknown } }
    view.body.commitDoc = bad
    const frame = encodeFrame(view)
    const plain = outcome(frame)
    expect(plain.error).toMatch(/^invalid message: body\.commitDoc\.body\.seats: /)
    expect(outcome(frame, intern)).toEqual(plain)
    expect(wasChecked(held, signedCommitSchema)).toBe(false)
  })

  test('a document that passed once inside a frame is known at its next sight, and a deep-frozen one the node made is kept as it is', () => {
    const docs = handDocs()
    const intern = nodeHolding([])
    const final = decodeFrame(encodeFrame(docs.final), intern) as unknown as { body: { receipt: { reveal: unknown, pledges: unknown[] } } }
    expect(wasChecked(final.body.receipt.reveal, signedRevealSchema)).toBe(true)
    expect(wasChecked(final.body.receipt.pledges[0], signedPledgeSchema)).toBe(true)
    // A deep-frozen document never parsed (a node's own, from signFrozen) passes once and stays itself.
    const own = freezeDeep(structuredClone(docs.commit))
    const parsed = receiptSchema.parse({ ...(docs.final.body as { receipt: object }).receipt, commit: own })
    expect(parsed.commit).toBe(own)
    expect(wasChecked(own, signedCommitSchema)).toBe(true)
    // A value that is not deep-frozen is never taken as known, marked or not.
    const loose = structuredClone(docs.commit)
    markChecked(loose, signedCommitSchema)
    expect(wasChecked(loose, signedCommitSchema)).toBe(false)
    const walks = countWalks(signedCommitSchema)
    receiptSchema.parse({ ...(docs.final.body as { receipt: object }).receipt, commit: loose })
    expect(walks()).toBe(1)
  })

  test('recordingPassed notes only what passed fresh during its parse, and marks it only once frozen', () => {
    const docs = handDocs()
    const { result, markPassed } = recordingPassed(() => signedPledgesSchema.safeParse(structuredClone(docs.pledges)))
    expect(result.success).toBe(true)
    const pledges = (result.data as unknown as { body: { pledges: unknown[] } }).body.pledges
    markPassed()
    expect(wasChecked(pledges[0], signedPledgeSchema)).toBe(false)
    freezeDeep(result.data)
    markPassed()
    expect(pledges.every(p => wasChecked(p, signedPledgeSchema))).toBe(true)
    // Outside it, nothing is noted.
    const again = signedPledgesSchema.parse(structuredClone(docs.pledges)) as unknown as { body: { pledges: unknown[] } }
    freezeDeep(again)
    markPassed()
    expect(wasChecked(again.body.pledges[0], signedPledgeSchema)).toBe(false)
  })

  test('fast-check: any change to a VIEW, a PLEDGES, a REVEAL or a FINAL decodes to the same document or the same refusal, whatever the node holds', () => {
    const docs = handDocs()
    const frames = [docs.view, docs.pledges, docs.reveal, docs.final]
    const intern = nodeHolding([docs.commit, docs.pledges, docs.reveal])
    // A path into the document, and a value to put there (or none: the key goes).
    const paths = (v: unknown, at: Array<string | number> = []): Array<Array<string | number>> => {
      if (v === null || typeof v !== 'object') return [at]
      const inner = Array.isArray(v) ? v.flatMap((x, i) => paths(x, [...at, i])) : Object.entries(v).flatMap(([k, x]) => paths(x, [...at, k]))
      return [at, ...inner]
    }
    const value = fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer({ min: -3, max: 70 }), fc.string({ maxLength: 6 }), fc.constant('f'.repeat(64)), fc.constant(SIG), fc.boolean(), fc.constant([]), fc.constant({}))
    fc.assert(fc.property(fc.integer({ min: 0, max: frames.length - 1 }), fc.nat(), value, (which, at, put) => {
      const doc = structuredClone(frames[which]) as unknown
      const all = paths(doc).filter(p => p.length > 0)
      const path = all[at % all.length]
      let parent = doc as Record<string | number, unknown>
      for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>
      const last = path[path.length - 1]
      if (put === undefined) {
        if (Array.isArray(parent)) parent.splice(last as number, 1)
        else delete parent[last]
      } else parent[last] = put
      const frame = new TextEncoder().encode(JSON.stringify(doc))
      const plain = outcome(frame)
      const held = outcome(frame, intern)
      expect(held.error).toBe(plain.error)
      if (plain.doc !== undefined) expect(sameJson(held.doc, plain.doc)).toBe(true)
    }), { seed: 24, numRuns: 600 })
  })
})
