/**
 * The scheme registry: a receipt names a scheme id, the verifier finds the code here.
 * Schemes are immutable; a changed algorithm is a new id (`…-v2`), so old receipts keep verifying.
 */
import { CoreInputError } from '../errors.js'
import { atoutDrandV1, atoutV1 } from './atout.js'
import { bitjack21 } from './bitjack21.js'
import { blindV1 } from './blind.js'
import { diceV1 } from './dice.js'
import { preview } from './inputs.js'
import { tarotV1 } from './tarot.js'
import { shoeV1 } from './shoe.js'
import type { CardScheme, DiceScheme, Scheme } from './types.js'
import type { HandFamily } from '../hand/family.js'

const SCHEMES: ReadonlyMap<string, Scheme> = new Map<string, Scheme>(
  [atoutV1, atoutDrandV1, tarotV1, bitjack21, shoeV1, diceV1, blindV1].map(s => [s.id, s])
)

/** The scheme a receipt names; CoreInputError for an id this build does not know. */
export function getScheme (id: string): Scheme {
  const scheme = SCHEMES.get(id)
  if (scheme === undefined) throw new CoreInputError(`unknown scheme ${preview(id)} (known: ${[...SCHEMES.keys()].join(', ')})`)
  return scheme
}

/** As getScheme, for callers that deal cards: CoreInputError for a dice scheme too. */
export function getCardScheme (id: string): CardScheme {
  const scheme = getScheme(id)
  if (scheme.kind !== 'cards') throw new CoreInputError(`${id} rolls dice; it deals no cards`)
  return scheme
}

export function getDiceScheme (id: string): DiceScheme {
  const scheme = getScheme(id)
  if (scheme.kind !== 'dice') throw new CoreInputError(`${id} deals cards; it rolls no dice`)
  return scheme
}

export function listSchemes (): Scheme[] {
  return [...SCHEMES.values()]
}

/** The hand family a scheme id names (src/core/hand/family.ts); undefined for an id this build does not know. */
export function familyOfScheme (id: string): HandFamily | undefined {
  return SCHEMES.get(id)?.family
}
