import { randomBytes } from 'node:crypto'
import { describe, expect, test } from 'vitest'
import { signerFromSeed } from '../src/core/identity.js'
import { signDocument, verifyDocument } from '../src/core/signed.js'
import { nativePublicKey, nativeSigner, nativeVerifyDocument } from '../src/crypto/native-crypto.js'
import { peerIdFromPublicKey, publicKeyFromPeerId } from '../src/core/identity.js'

describe('native Ed25519 matches the pure core', () => {
  test('same signatures, both verifiers agree, tampering rejected by both', () => {
    for (let i = 0; i < 50; i++) {
      const seed = randomBytes(32)
      const pure = signerFromSeed(seed)
      const native = nativeSigner(seed, pure.peerId)
      const body = { n: i, text: 'é|x', list: [1, 2, 3] }
      const a = signDocument('test', body, pure)
      const b = signDocument('test', body, native)
      expect(b.sig).toBe(a.sig)
      expect(nativeVerifyDocument(a)).toBe(true)
      expect(verifyDocument(b)).toBe(true)
      const tampered = { ...a, body: { ...body, n: i + 1 } }
      expect(nativeVerifyDocument(tampered)).toBe(false)
      expect(verifyDocument(tampered)).toBe(false)
      expect(nativeVerifyDocument({ ...a, type: 'other' })).toBe(false)
    }
  })

  test('the same public key and peer id from a seed as the pure derivation; a seed of another length is refused', () => {
    for (const seed of [new Uint8Array(32), new Uint8Array(32).fill(255), ...Array.from({ length: 30 }, () => randomBytes(32))]) {
      const pure = signerFromSeed(seed)
      expect(nativePublicKey(seed)).toEqual(publicKeyFromPeerId(pure.peerId))
      const native = nativeSigner(seed, peerIdFromPublicKey(nativePublicKey(seed)))
      expect(native.peerId).toBe(pure.peerId)
      expect(native.sign(new Uint8Array([1, 2, 3]))).toEqual(pure.sign(new Uint8Array([1, 2, 3])))
    }
    expect(() => nativePublicKey(new Uint8Array(31))).toThrow(/32 bytes/)
    expect(() => nativePublicKey(new Uint8Array(33))).toThrow(/32 bytes/)
  })
})
