import { canonicalJson } from './canonical.js'
import { fromHex, isHex, toHex, utf8 } from './bytes.js'
import { verifySignature, type Signer } from './identity.js'
import { freezeDeep, frozenCopy } from './frozen.js'

/**
 * A signed fairdeal document. The signature covers a domain tag naming the document type and the
 * canonical bytes of the body, so a signature made for one kind of document can never be replayed
 * as another, and every byte of the body is covered.
 */
export interface Signed<T> {
  type: string
  signer: string
  body: T
  sig: string
}

export function signingBytes (type: string, signer: string, body: unknown): Uint8Array {
  // One string, then one UTF-8 encoding: the same bytes as the prefix's and the body's joined.
  return utf8(`fairdeal/v1/${type}\n${signer}\n` + canonicalJson(body))
}

export function signDocument<T> (type: string, body: T, signer: Signer): Signed<T> {
  const sig = signer.sign(signingBytes(type, signer.peerId, body))
  return { type, signer: signer.peerId, body, sig: toHex(sig) }
}

/**
 * signDocument over a deep-frozen copy of `body` (src/core/frozen.ts: its deep-frozen parts shared,
 * the rest copied), the document deep-frozen too. A state machine signs its own documents so: like
 * the documents it takes off the wire, each is then encoded and hashed once (canonical.ts, digest.ts)
 * however often it is sent, saved or named, and no later change to what the machine holds can reach it.
 */
export function signFrozen<T> (type: string, body: T, signer: Signer): Signed<T> {
  return freezeDeep(signDocument(type, frozenCopy(body), signer))
}

/** True when `doc.sig` is `doc.signer`'s Ed25519 signature over `doc.type` and `doc.body`. */
export function verifyDocument (doc: Signed<unknown>): boolean {
  if (typeof doc.type !== 'string' || typeof doc.signer !== 'string' || !isHex(doc.sig, 64)) return false
  let message: Uint8Array
  try { message = signingBytes(doc.type, doc.signer, doc.body) } catch { return false }
  return verifySignature(doc.signer, message, fromHex(doc.sig))
}
