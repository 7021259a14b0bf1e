import { describe, expect, test } from 'vitest'
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js'
import { sha256, sha256Hex, useSha256 } from '../src/core/bytes.js'
import { nativeSha256 } from '../src/crypto/native-crypto.js'

// A node takes its digests on OpenSSL (useSha256(nativeSha256), src/daemon/daemon.ts): the same bytes as the pure one.
describe('SHA-256 on OpenSSL', () => {
  test('gives the pure implementation\'s digests, through the core\'s sha256 too', () => {
    const inputs = [new Uint8Array(0), new Uint8Array([0x61, 0x62, 0x63]), new Uint8Array(100_000).map((_, i) => i * 7)]
    for (const data of inputs) expect(nativeSha256(data)).toEqual(nobleSha256(data))
    const pure = sha256Hex('abc')
    useSha256(nativeSha256)
    try {
      expect(sha256Hex('abc')).toBe(pure)
      expect(sha256('abc')).toBeInstanceOf(Uint8Array)
    } finally {
      useSha256(nobleSha256)
    }
  })
})
