import { randomBytes } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { freezeDeep, frozenCopy, isDeepFrozen, markChecked, wasChecked } from '../src/core/frozen.js'
import { sameJson } from '../src/core/same-json.js'
import { docDigest } from '../src/core/hand/digest.js'
import { receiptSchema } from '../src/core/hand/messages.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { signerFromSeed } from '../src/core/identity.js'
import { signDocument } from '../src/core/signed.js'
import { nativeSigner } from '../src/crypto/native-crypto.js'
import { verifyMemo } from '../src/daemon/verify-memo.js'
import { decodeFrame, encodeFrame } from '../src/protocol/wire.js'
import { memoryHands } from '../scripts/bench/lib/memory-hands.js'

// What a node remembers of a document by its identity (src/core/frozen.ts): only of deep-frozen
// ones, whose bytes cannot change after the fact.
describe('deep-frozen documents', () => {
  test('freezeDeep freezes every object inside; a typed array keeps the value from counting as deep-frozen', () => {
    const doc = freezeDeep({ a: { b: [1, { c: 'x' }] } })
    expect(isDeepFrozen(doc)).toBe(true)
    expect(isDeepFrozen(doc.a.b[1])).toBe(true)
    expect(() => { (doc.a.b as unknown[]).push(2) }).toThrow(TypeError)
    const mixed = freezeDeep({ bytes: new Uint8Array(2), n: 1 })
    expect(isDeepFrozen(mixed)).toBe(false)
    expect(isDeepFrozen({ a: 1 })).toBe(false)
    // Recorded as checked only when it cannot change afterwards.
    const loose = { x: 1 }
    markChecked(loose, receiptSchema)
    expect(wasChecked(loose, receiptSchema)).toBe(false)
  })

  test('the verify memo remembers a frozen document it found valid, never an unfrozen one, and a digest is the same either way', () => {
    const seed = randomBytes(32)
    const signer = nativeSigner(seed, signerFromSeed(seed).peerId)
    const memo = verifyMemo()
    const doc = signDocument('pledge', { hand: 1, text: 'x' }, signer)
    const frozen = freezeDeep(structuredClone(doc))
    expect(isDeepFrozen(frozen)).toBe(true)
    expect(docDigest(frozen)).toBe(docDigest(doc))
    expect(memo.verify(frozen)).toBe(true)
    // An unfrozen valid document changed after its check is checked again, and fails.
    expect(memo.verify(doc)).toBe(true)
    ;(doc.body as { text: string }).text = 'y'
    expect(memo.verify(doc)).toBe(false)
    expect(memo.verify(frozen)).toBe(true)
  })

  test('a FINAL\'s receipt, checked by the wire schema, verifies without a second parse and with the same verdict', () => {
    const table = memoryHands({ seats: 4 })
    const receipt = table.play()
    const final = { type: 'final', signer: receipt.commit.signer, body: { table: receipt.commit.body.table, hand: receipt.commit.body.hand, commit: docDigest(receipt.commit), receipt }, sig: 'a'.repeat(128) }
    const decoded = decodeFrame(encodeFrame(final)) as { body: { receipt: unknown } }
    expect(wasChecked(decoded.body.receipt, receiptSchema)).toBe(true)
    expect(verifyReceipt(decoded.body.receipt)).toEqual(verifyReceipt(receipt))
    expect(verifyReceipt(decoded.body.receipt).status).toBe('verified')
  })

  test('inside a frame, the documents the node found valid before are its own copies; the value and every verdict stay the same', () => {
    const table = memoryHands({ seats: 4 })
    const receipt = table.play()
    const memo = verifyMemo()
    // The COMMIT and one pledge came off the wire earlier and were checked; another pledge came but failed its check.
    const commit = decodeFrame(encodeFrame(receipt.commit))
    const pledge = decodeFrame(encodeFrame(receipt.pledges[1]))
    expect(memo.verify(commit)).toBe(true)
    expect(memo.verify(pledge)).toBe(true)
    const badPledge = decodeFrame(encodeFrame({ ...receipt.pledges[2], sig: 'b'.repeat(128) }))
    expect(memo.verify(badPledge)).toBe(false)
    const final = { type: 'final', signer: receipt.commit.signer, body: { table: receipt.commit.body.table, hand: receipt.commit.body.hand, commit: docDigest(receipt.commit), receipt }, sig: 'a'.repeat(128) }
    type Final = { body: { receipt: typeof receipt } }
    const plain = decodeFrame(encodeFrame(final)) as unknown as Final
    const interned = decodeFrame(encodeFrame(final), memo.intern) as unknown as Final
    expect(interned).toEqual(plain)
    expect(encodeFrame(interned as never)).toEqual(encodeFrame(final))
    expect(isDeepFrozen(interned)).toBe(true)
    expect(interned.body.receipt.commit).toBe(commit)
    expect(interned.body.receipt.pledges[1]).toBe(pledge)
    // Never one the memo did not find valid, nor one it never saw.
    expect(interned.body.receipt.pledges[2]).not.toBe(badPledge)
    expect(interned.body.receipt.pledges[0]).toEqual(receipt.pledges[0])
    expect(wasChecked(interned.body.receipt, receiptSchema)).toBe(true)
    expect(verifyReceipt(interned.body.receipt)).toEqual(verifyReceipt(receipt))
    expect(verifyReceipt(interned.body.receipt).status).toBe('verified')

    // The same signature over another body: the frame's own copy, with its own (wrong) value.
    const altered = structuredClone(final)
    const hash = altered.body.receipt.pledges[1].body.nonceHash
    altered.body.receipt.pledges[1].body.nonceHash = (hash[0] === '0' ? '1' : '0') + hash.slice(1)
    const forged = decodeFrame(encodeFrame(altered), memo.intern) as unknown as Final
    expect(forged.body.receipt.pledges[1]).not.toBe(pledge)
    expect(forged.body.receipt.pledges[1].body.nonceHash).toBe(altered.body.receipt.pledges[1].body.nonceHash)
    expect(forged.body.receipt.commit).toBe(commit)
    expect(memo.verify(forged.body.receipt.pledges[1])).toBe(false)
    expect(verifyReceipt(forged.body.receipt).status).not.toBe('verified')
  })

  test('a deep-frozen value encodes to the same canonical bytes as a plain copy, the first time and after, alone and inside other values', () => {
    const receipt = memoryHands({ seats: 4 }).play()
    const plain = structuredClone(receipt)
    const frozen = freezeDeep(structuredClone(receipt))
    for (let i = 0; i < 2; i++) {
      expect(canonicalJson(frozen)).toBe(canonicalJson(plain))
      expect(canonicalJson(frozen.pledges)).toBe(canonicalJson(plain.pledges))
      expect(canonicalJson({ z: frozen.commit, a: [frozen.reveal, 1] })).toBe(canonicalJson({ z: plain.commit, a: [plain.reveal, 1] }))
      expect(docDigest(frozen.commit)).toBe(docDigest(plain.commit))
    }
    // A frozen value with no canonical form is refused, naming the field, each time.
    const float = freezeDeep({ sig: 'x', body: { n: 1.5 } })
    for (let i = 0; i < 2; i++) expect(() => canonicalJson({ doc: float })).toThrow(/\$\.doc\.body\.n is 1\.5/)
  })

  test('only a JSON tree is deep-frozen: no undefined member or element, function, class instance, prototype-less object or typed array; frozenCopy leaves undefined members out', () => {
    class Point { x = 1 }
    const notJson: unknown[] = [
      { a: undefined }, [1, undefined], { a: [{ b: undefined }] }, { f: () => 1 }, { p: new Point() }, { d: new Date(0) },
      { m: new Map() }, { bytes: new Uint8Array(1) }, { s: Symbol('s') }, { n: 1n }, { o: Object.create(null) as object }
    ]
    for (const v of notJson) expect(isDeepFrozen(freezeDeep(v))).toBe(false)
    expect(isDeepFrozen(freezeDeep({ a: [1, 'x', true, null, { b: {} }], c: { d: 1 } }))).toBe(true)
    const copy = frozenCopy({ table: 't', params: { dealer: 0, taker: undefined }, list: [{ k: undefined, v: 1 }] })
    expect(isDeepFrozen(copy)).toBe(true)
    expect(Object.keys(copy.params)).toEqual(['dealer'])
    expect(Object.keys(copy.list[0])).toEqual(['v'])
  })

  test('fast-check: a deep-frozen value with a canonical encoding is the very JSON value its encoding reads back as', () => {
    const leaf = fc.oneof(fc.constant(undefined), fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 4 }), fc.constant(new Uint8Array(1)), fc.constant(() => 0))
    const tree = fc.letrec(tie => ({
      value: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 3 }), tie('value'), { maxKeys: 3 }))
    })).value
    fc.assert(fc.property(tree, (v) => {
      const frozen = freezeDeep(v)
      if (!isDeepFrozen(frozen)) return
      expect(sameJson(JSON.parse(canonicalJson(frozen)), frozen)).toBe(true)
      expect(sameJson(JSON.parse(JSON.stringify(frozen)), frozen)).toBe(true)
    }), { seed: 7, numRuns: 2000 })
  })
})
