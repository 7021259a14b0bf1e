import * as nodeCrypto from 'node:crypto'
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto'
import { fromHex, isHex } from '../core/bytes.js'
import { publicKeyFromPeerId, type Signer } from '../core/identity.js'
import { signingBytes, type Signed } from '../core/signed.js'

// Node's own Ed25519 (OpenSSL) signs and verifies several times faster than the pure one. Same
// signatures, same documents: the core stays pure; the daemon, the log commands and the check
// workers (given this module by URL) pass these in where speed matters.
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex')
const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex')

/** OpenSSL's key object for a 32-byte Ed25519 seed. */
function privateKeyObject (seed: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' })
}

export function nativeSigner (seed: Uint8Array, peerId: string): Signer {
  const key = privateKeyObject(seed)
  return { peerId, sign: (message) => new Uint8Array(sign(null, message, key)) }
}

/**
 * The Ed25519 public key (32 bytes) of a 32-byte seed, on OpenSSL: the same key as core
 * `signerFromSeed` derives. A process's first key derivation on the pure path builds noble's
 * base-point tables (about 60 ms idle, several hundred under load) for a single multiplication.
 */
export function nativePublicKey (seed: Uint8Array): Uint8Array {
  if (seed.length !== 32) throw new RangeError('an Ed25519 seed is 32 bytes')
  const spki = createPublicKey(privateKeyObject(seed)).export({ format: 'der', type: 'spki' })
  return new Uint8Array(spki.subarray(SPKI_ED25519.length))
}

const keys = new Map<string, KeyObject>()

function publicKeyObject (peerId: string): KeyObject {
  let key = keys.get(peerId)
  if (key === undefined) {
    key = createPublicKey({ key: Buffer.concat([SPKI_ED25519, publicKeyFromPeerId(peerId)]), format: 'der', type: 'spki' })
    if (keys.size > 10_000) keys.clear()
    keys.set(peerId, key)
  }
  return key
}

/** Same contract as core verifyDocument, on OpenSSL. */
export function nativeVerifyDocument (doc: Signed<unknown>): boolean {
  if (typeof doc.type !== 'string' || typeof doc.signer !== 'string' || !isHex(doc.sig, 64)) return false
  let message: Uint8Array
  try { message = signingBytes(doc.type, doc.signer, doc.body) } catch { return false }
  return nativeVerifyMessage(doc.signer, message, doc.sig)
}

/** `sig` (128 hex) is `peerId`'s Ed25519 signature over `message`; false for any malformed input. */
export function nativeVerifyMessage (peerId: string, message: Uint8Array, sig: string): boolean {
  try {
    return verify(null, message, publicKeyObject(peerId), fromHex(sig))
  } catch {
    return false
  }
}

/**
 * node:crypto's one-shot `hash` (Node 20.12 on): no Hash object per digest, about a third of the
 * cost of createHash for a document's few kilobytes. Older Node 20 releases take createHash.
 */
const oneShot = (nodeCrypto as { hash?: (algorithm: string, data: Uint8Array, encoding: 'buffer') => Buffer }).hash

/** SHA-256 on OpenSSL, for the core's `useSha256`: the same digest as the pure one. */
export function nativeSha256 (data: Uint8Array): Uint8Array {
  const digest = oneShot !== undefined ? oneShot('sha256', data, 'buffer') : createHash('sha256').update(data).digest()
  return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength)
}
