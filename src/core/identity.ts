import { ed25519 } from '@noble/curves/ed25519.js'
import { CoreInputError } from './errors.js'
import { concatBytes, bytesEqual } from './bytes.js'

// A libp2p Ed25519 peer id is base58btc(identity multihash(protobuf PublicKey{Type: Ed25519, Data})).
// Decoding it here keeps signature verification pure: a receipt names its signers by peer id and the
// verifier needs nothing else to check them.
const PEER_ID_PREFIX = new Uint8Array([0x00, 0x24, 0x08, 0x01, 0x12, 0x20])
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'
const ALPHABET_MAP = new Map([...ALPHABET].map((c, i) => [c, i]))

function base58Decode (text: string): Uint8Array | undefined {
  const bytes: number[] = [0]
  for (const char of text) {
    const value = ALPHABET_MAP.get(char)
    if (value === undefined) return undefined
    let carry = value
    for (let i = 0; i < bytes.length; i++) {
      carry += bytes[i] * 58
      bytes[i] = carry & 0xff
      carry >>= 8
    }
    while (carry > 0) { bytes.push(carry & 0xff); carry >>= 8 }
  }
  for (const char of text) { if (char === '1') bytes.push(0); else break }
  return new Uint8Array(bytes.reverse().slice(bytes.length > 1 && bytes[0] === 0 && text[0] !== '1' ? 1 : 0))
}

function base58Encode (bytes: Uint8Array): string {
  const digits: number[] = [0]
  for (const byte of bytes) {
    let carry = byte
    for (let i = 0; i < digits.length; i++) {
      carry += digits[i] << 8
      digits[i] = carry % 58
      carry = (carry / 58) | 0
    }
    while (carry > 0) { digits.push(carry % 58); carry = (carry / 58) | 0 }
  }
  let out = ''
  for (const byte of bytes) { if (byte === 0) out += '1'; else break }
  for (let i = digits.length - 1; i >= 0; i--) {
    if (i === digits.length - 1 && digits[i] === 0 && digits.length > 1) continue
    out += ALPHABET[digits[i]]
  }
  return out
}

const keyCache = new Map<string, Uint8Array>()

/** The raw 32-byte Ed25519 public key inside a libp2p peer id string ("12D3KooW…"). */
export function publicKeyFromPeerId (peerId: string): Uint8Array {
  const cached = keyCache.get(peerId)
  if (cached !== undefined) return cached
  const bytes = typeof peerId === 'string' ? base58Decode(peerId) : undefined
  if (bytes === undefined || bytes.length !== 38 || !bytesEqual(bytes.subarray(0, 6), PEER_ID_PREFIX)) {
    throw new CoreInputError(`not an Ed25519 libp2p peer id: ${JSON.stringify(String(peerId).slice(0, 80))}`)
  }
  const key = bytes.slice(6)
  // A peer id is only an identity if its key is a point of the curve: checked once per id (cached).
  try { ed25519.Point.fromBytes(key) } catch {
    throw new CoreInputError(`not an Ed25519 libp2p peer id (its key is not an Ed25519 public key): ${JSON.stringify(String(peerId).slice(0, 80))}`)
  }
  if (keyCache.size > 10_000) keyCache.clear()
  keyCache.set(peerId, key)
  return key
}

export function peerIdFromPublicKey (publicKey: Uint8Array): string {
  if (publicKey.length !== 32) throw new CoreInputError('an Ed25519 public key is 32 bytes')
  return base58Encode(concatBytes(PEER_ID_PREFIX, publicKey))
}

export function isPeerId (value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 64) return false
  try { publicKeyFromPeerId(value); return true } catch { return false }
}

/** A signing identity: the 32-byte Ed25519 seed and the peer id it belongs to. */
export interface Signer {
  peerId: string
  sign: (message: Uint8Array) => Uint8Array
}

export function signerFromSeed (seed: Uint8Array): Signer {
  if (seed.length !== 32) throw new CoreInputError('an Ed25519 seed is 32 bytes')
  const peerId = peerIdFromPublicKey(ed25519.getPublicKey(seed))
  return { peerId, sign: (message) => ed25519.sign(message, seed) }
}

export function verifySignature (peerId: string, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64) return false
  let key: Uint8Array
  try { key = publicKeyFromPeerId(peerId) } catch { return false }
  try { return ed25519.verify(signature, message, key) } catch { return false }
}
