import { canonicalBytes } from './canonical.js'
import { concatBytes, fromHex, isHex, toHex, utf8 } from './bytes.js'
import { verifySignature, type Signer } from './identity.js'

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
  return concatBytes(utf8(`fairdeal/v1/${type}\n${signer}\n`), canonicalBytes(body))
}

export function signDocument<T> (type: string, body: T, signer: Signer): Signed<T> {
  const sig = signer.sign(signingBytes(type, signer.peerId, body))
  return { type, signer: signer.peerId, body, sig: toHex(sig) }
}

/** True when `doc.sig` is `doc.signer`'s Ed25519 signature over `doc.type` and `doc.body`. */
export function verifyDocument (doc: Signed<unknown>): boolean {
  if (typeof doc.type !== 'string' || typeof doc.signer !== 'string' || !isHex(doc.sig, 64)) return false
  let message: Uint8Array
  try { message = signingBytes(doc.type, doc.signer, doc.body) } catch { return false }
  return verifySignature(doc.signer, message, fromHex(doc.sig))
}
