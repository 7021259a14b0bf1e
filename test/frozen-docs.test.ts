import { randomBytes } from 'node:crypto'
import { describe, expect, test } from 'vitest'
import { freezeDeep, isDeepFrozen, markChecked, wasChecked } from '../src/core/frozen.js'
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
})
