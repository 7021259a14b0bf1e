import { signerFromSeed } from '../../core/identity.js'

/** The PKCS#8 wrapping of an Ed25519 private key (RFC 8410): these 16 bytes, then the 32-byte seed. */
const PKCS8_ED25519_PREFIX = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]

/**
 * A new Ed25519 seed for the seat's key, made in the page: by WebCrypto where the browser has
 * Ed25519 (the key generated there, exported once as PKCS#8 to keep its seed), otherwise 32 bytes of
 * `crypto.getRandomValues` (the pure fallback). Either way the seed is checked to give a working key
 * (`signerFromSeed`), and the page signs with @noble/curves: the protocol machines sign synchronously.
 */
export async function newSeatSeed (): Promise<{ seed: Uint8Array, made: 'webcrypto' | 'pure' }> {
  try {
    const pair = await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify']) as CryptoKeyPair
    const pkcs8 = new Uint8Array(await crypto.subtle.exportKey('pkcs8', pair.privateKey))
    if (pkcs8.length === 48 && PKCS8_ED25519_PREFIX.every((b, i) => pkcs8[i] === b)) {
      const seed = pkcs8.slice(16)
      signerFromSeed(seed)
      return { seed, made: 'webcrypto' }
    }
  } catch {}
  return { seed: crypto.getRandomValues(new Uint8Array(32)), made: 'pure' }
}
