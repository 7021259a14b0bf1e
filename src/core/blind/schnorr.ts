/**
 * A seat's hand key and its Schnorr proof of knowledge (Fiat–Shamir, label "key"):
 *   pk = x·G; T = k·G; c = H("key", ctx, [pk, T]); s = k + c·x.  Proof: (c, s).
 *   Verify: pk is not the identity; T' = s·G − c·pk; c = H("key", ctx, [pk, T']).
 */
import { CoreInputError } from '../errors.js'
import { G, type Point, combineToBytes, mod, mulSecret, pointFromHex, pointToBytes, pointToHex, scalarFromHex, scalarToHex } from './group.js'
import { randomScalar, type RandomBytes } from './random.js'
import { challenge, type ProofContext } from './transcript.js'

export interface KeyProof { c: string, s: string }

export function publicKey (x: bigint): Point {
  return mulSecret(G, x)
}

export function proveKey (ctx: ProofContext, x: bigint, random: RandomBytes): { pub: string, proof: KeyProof } {
  const pk = publicKey(x)
  const k = randomScalar(random)
  const c = challenge('key', ctx, [pointToBytes(pk), pointToBytes(mulSecret(G, k))])
  return { pub: pointToHex(pk), proof: { c: scalarToHex(c), s: scalarToHex(mod(k + c * x)) } }
}

/** True when `proof` shows knowledge of log_G(pub) in this context. Malformed input is false. */
export function verifyKey (ctx: ProofContext, pub: string, proof: KeyProof): boolean {
  try {
    const pk = pointFromHex(pub, 'public key')
    if (pk.is0()) return false
    const c = scalarFromHex(proof.c, 'c')
    const s = scalarFromHex(proof.s, 's')
    const t = combineToBytes([[G, s], [pk, -c]])
    return challenge('key', ctx, [pointToBytes(pk), t]) === c
  } catch (e) {
    if (e instanceof CoreInputError) return false
    throw e
  }
}
