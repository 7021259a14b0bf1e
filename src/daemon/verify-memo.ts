import { createHash } from 'node:crypto'
import { isHex, toHex, utf8 } from '../core/bytes.js'
import { BoundedMap, BoundedSet } from '../core/bounded-set.js'
import { isDeepFrozen, type Interner } from '../core/frozen.js'
import { sameJson } from '../core/same-json.js'
import type { Signer } from '../core/identity.js'
import { signingBytes, type Signed } from '../core/signed.js'
import { nativeVerifyMessage } from '../crypto/native-crypto.js'

export interface VerifyMemo {
  /** Same contract as core verifyDocument. */
  verify: (doc: Signed<unknown>) => boolean
  /** The node's signer, wrapped so that what it signs is known valid without a check. */
  signer: (inner: Signer) => Signer
  /**
   * For decodeFrame: the deep-frozen copy this memo holds of a signed document (found valid here)
   * that is the same JSON value as `candidate`, or undefined. The copy takes the candidate's place
   * inside a document off the wire, so a COMMIT inside a VIEW is known by identity.
   */
  intern: Interner
}

/**
 * A node's document verifier that remembers which exact (signer, signed bytes, signature) triples
 * are valid: the ones it has checked, and the ones it made itself. A seat sees the same COMMIT,
 * pledges and nonces again in the reveal and in the final receipt, and its own pledge, nonce and
 * countersignature come back inside the dealer's documents: each repeat costs a hash instead of an
 * Ed25519 verification. Only valid triples are kept and the key covers every input of the check,
 * so nothing is accepted that a fresh check would refuse. One memo per node: a node relies only on
 * its own checks and its own key. A deep-frozen document of another party is not keyed so: the two
 * memos below find it again, and its triple's hash would cost more than it ever saved.
 *
 * Ahead of that, a memo of the verified objects themselves: a document that is deep-frozen
 * (src/core/frozen.ts: every document off the wire, and what the dealer's node hands its own seat)
 * and was found valid here is valid for as long as it lives, since none of its bytes can change.
 * Seeing it again (the COMMIT inside every VIEW, a pledge inside the PLEDGES, the documents inside
 * a receipt once parsed) costs a WeakSet lookup: no canonical encoding, no hash.
 *
 * Between the two, the verified documents by signature (a hit needs the same type and signer):
 * another copy of one (a receipt's COMMIT, pledges and nonces, parsed from the FINAL, are new
 * objects with the bytes this node checked in the hand) whose body is the same JSON value
 * (sameJson, a walk of the two values) is the same signed bytes under the same signature, valid
 * without encoding it. A body that differs in anything takes the long way, so nothing is accepted
 * that a fresh check would refuse.
 *
 * Those documents by signature also serve decodeFrame (intern): a signed document inside a frame
 * that is the same JSON value as one kept here is replaced by the kept copy, which the checks
 * above then find by identity (as do the digest and canonical encodings kept by object). Only
 * documents found valid are kept, so a peer cannot fill the memo with documents nobody signed;
 * a frame's document that matches none keeps its own copy.
 */
export function verifyMemo (capacity = 4096): VerifyMemo {
  const valid = new BoundedSet(capacity)
  // Weak: an object leaves it when nothing else holds it.
  const validObjects = new WeakSet<object>()
  // By signature alone, the oldest going first once `capacity` are kept: the signature string is
  // the document's own (no key to build, its hash computed once per string), and a hit counts only
  // when the document kept has the same type and signer too.
  const bySignature = new BoundedMap<string, Signed<unknown>>(capacity)
  // The peer ids whose signatures this memo's signers make (their triples go to `valid` as signed).
  const own = new Set<string>()
  // Signer length-prefixed, signature fixed at 128 hex characters, then the message: unambiguous.
  const keyOf = (signer: string, sig: string, message: Uint8Array): string =>
    createHash('sha256').update(`${signer.length}:${signer}${sig}`).update(message).digest('base64')
  return {
    verify: (doc) => {
      if (validObjects.has(doc)) return true
      if (typeof doc.type !== 'string' || typeof doc.signer !== 'string' || !isHex(doc.sig, 64)) return false
      const known = bySignature.get(doc.sig)
      if (known !== undefined && known.type === doc.type && known.signer === doc.signer && sameJson(known.body, doc.body)) {
        if (isDeepFrozen(doc)) validObjects.add(doc)
        return true
      }
      let message: Uint8Array
      try { message = signingBytes(doc.type, doc.signer, doc.body) } catch { return false }
      const frozen = isDeepFrozen(doc)
      if (frozen && !own.has(doc.signer)) {
        // Another party's deep-frozen document: once checked it is found by identity or by its
        // signature (below), never by the triple's hash, which is not worth computing for it.
        if (!nativeVerifyMessage(doc.signer, message, doc.sig)) return false
      } else {
        const key = keyOf(doc.signer, doc.sig, message)
        if (!valid.has(key)) {
          if (!nativeVerifyMessage(doc.signer, message, doc.sig)) return false
          valid.add(key)
        }
      }
      if (frozen) {
        validObjects.add(doc)
        // Only a deep-frozen copy is kept: its body cannot change after this check.
        bySignature.set(doc.sig, doc)
      }
      return true
    },
    intern: (candidate) => {
      const known = bySignature.get(candidate.sig)
      return known !== undefined && sameJson(known, candidate) ? known : undefined
    },
    signer: (inner) => {
      // Own signatures are taken as valid only if this key's signatures verify under this peer id.
      const probe = utf8(`fairdeal/verify-memo/probe\n${inner.peerId}`)
      const trusted = nativeVerifyMessage(inner.peerId, probe, toHex(inner.sign(probe)))
      if (trusted) own.add(inner.peerId)
      return {
        peerId: inner.peerId,
        sign: (message) => {
          const sig = inner.sign(message)
          if (trusted) valid.add(keyOf(inner.peerId, toHex(sig), message))
          return sig
        }
      }
    }
  }
}
