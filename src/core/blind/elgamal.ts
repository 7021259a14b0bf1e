/**
 * ElGamal over ristretto255 as Barnett–Smart use it: a card is a group element M, encrypted under
 * the joint key PK = Σ pkₖ as (a, b) = (M + r·PK, r·G); anyone re-encrypts (re-randomises) it with
 * (a + r'·PK, b + r'·G); seat k's decryption share is dₖ = xₖ·b and M = a − Σ dₖ.
 * A ciphertext travels as 128 lowercase hex characters: a's encoding then b's.
 */
import { CoreInputError } from '../errors.js'
import { G, IDENTITY, type Point, cardPoint, combineSecretToPoint, combineToBytes, differenceToPoint, pointFromHex, pointToHex, pointsToBytes, samePoint, sumPoints } from './group.js'

export interface Ciphertext { a: Point, b: Point }

const HEX128 = /^[0-9a-f]{128}$/

export function encodeCiphertext (c: Ciphertext): string {
  return pointToHex(c.a) + pointToHex(c.b)
}

export function decodeCiphertext (hex: unknown, what: string): Ciphertext {
  if (typeof hex !== 'string' || !HEX128.test(hex)) throw new CoreInputError(`${what} must be a ciphertext: 128 lowercase hex characters`)
  return { a: pointFromHex(hex.slice(0, 64), `${what} (a)`), b: pointFromHex(hex.slice(64), `${what} (b)`) }
}

export function decodeDeck (hexes: unknown, what: string): Ciphertext[] {
  if (!Array.isArray(hexes)) throw new CoreInputError(`${what} must be a list of ciphertexts`)
  return hexes.map((h, i) => decodeCiphertext(h, `${what}[${i}]`))
}

/** The bytes a transcript holds for a deck: a₀ ‖ b₀ ‖ a₁ ‖ b₁ ‖ … (32 bytes each). */
export function deckBytes (deck: readonly Ciphertext[]): Uint8Array {
  return pointsToBytes(deck.flatMap(c => [c.a, c.b]))
}

/** The public starting deck: each card's point, "encrypted" with r = 0, i.e. (M, identity). */
export function startingDeck (cards: readonly string[]): Ciphertext[] {
  return cards.map(code => ({ a: cardPoint(code), b: IDENTITY }))
}

/** (a + r·PK, b + r·G), each sum kept as an encoding on libsodium (no decode, no encode). */
export function reEncrypt (c: Ciphertext, pk: Point, r: bigint): Ciphertext {
  return { a: combineSecretToPoint([[pk, r]], [c.a]), b: combineSecretToPoint([[G, r]], [c.b]) }
}

export function jointKey (publics: readonly Point[]): Point {
  return sumPoints(publics)
}

/** M = a − Σ dₖ: the card's point once every seat's share is in. */
export function openWithShares (c: Ciphertext, shares: readonly Point[]): Point {
  return differenceToPoint(c.a, combineToBytes([], shares))
}

/** The card code whose point is M, or undefined when M is no card of the list. */
export function cardOf (m: Point, cards: readonly string[]): string | undefined {
  return cards.find(code => samePoint(cardPoint(code), m))
}
