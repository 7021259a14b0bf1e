/**
 * A decryption share with its Chaum–Pedersen proof (Fiat–Shamir, label "share"): seat k shows
 * that d = x·b uses the same x as its hand key pk = x·G.
 *   k ← random; T₁ = k·G; T₂ = k·b; c = H("share", ctx, [pk, b, d, T₁, T₂]); s = k + c·x.
 *   Share: (d, c, s).  Verify: T₁' = s·G − c·pk; T₂' = s·b − c·d; c = H("share", ctx, [pk, b, d, T₁', T₂']).
 * The context's step names the deck position, so a share for one card verifies for no other.
 */
import { CoreInputError } from '../errors.js'
import { G, type Point, combineToBytes, mod, mulSecret, pointFromHex, pointToBytes, pointToHex, scalarFromHex, scalarToHex } from './group.js'
import { randomScalar, type RandomBytes } from './random.js'
import { challenge, type ProofContext } from './transcript.js'

export interface Share { d: string, c: string, s: string }

export function proveShare (ctx: ProofContext, x: bigint, b: Point, random: RandomBytes): Share {
  const pk = mulSecret(G, x)
  const d = mulSecret(b, x)
  const k = randomScalar(random)
  const c = challenge('share', ctx, [pk, b, d, mulSecret(G, k), mulSecret(b, k)].map(pointToBytes))
  return { d: pointToHex(d), c: scalarToHex(c), s: scalarToHex(mod(k + c * x)) }
}

/** The share's point when its proof holds for (pk, b) in this context; undefined otherwise. */
export function verifyShare (ctx: ProofContext, pk: Point, b: Point, share: Share): Point | undefined {
  try {
    const d = pointFromHex(share.d, 'share')
    const c = scalarFromHex(share.c, 'c')
    const s = scalarFromHex(share.s, 's')
    const t1 = combineToBytes([[G, s], [pk, -c]])
    const t2 = combineToBytes([[b, s], [d, -c]])
    return challenge('share', ctx, [...[pk, b, d].map(pointToBytes), t1, t2]) === c ? d : undefined
  } catch (e) {
    if (e instanceof CoreInputError) return undefined
    throw e
  }
}
