import { sha256Hex } from '../bytes.js'
import { CoreInputError } from '../errors.js'
import { BITJACK_CARDS, BITJACK_MAX_CARDS, BitjackStream, checkShoeSize, shuffleShoe } from './bitjack21.js'
import { checkNonces, preview, resolveSeats, secretCommitment } from './inputs.js'
import type { CardScheme, DealOptions, Deal, KeyInputs } from './types.js'

/**
 * shoe-v1: bitjack21's shoe at a table of several boxes (docs/schemes.md, docs/games.md "Draws on
 * the chain"). bitjack21 takes exactly one player seed; a table has one nonce per seat, so shoe-v1
 * folds them into one: r1 is the dealer's secret, r2 = SHA-256 (hex) of the ASCII text
 * `shoe-v1|<nonce 0>|…|<nonce n−1>`, and the key is r1 ‖ r2, from which the shoe is shuffled
 * exactly as bitjack21 shuffles it (BitJack21's own verifier, given r1 and r2, gets the same shoe).
 */
const ID = 'shoe-v1'
/** Two to seven boxes (blackjack's table; a one-box table is bitjack21's own). */
const SEATS: readonly number[] = Object.freeze([2, 3, 4, 5, 6, 7])

function checkGame (game: string): void {
  if (game !== 'shoe') throw new CoreInputError(`${ID} has no game ${preview(game)} (it has shoe)`)
}

function keyOf (inputs: KeyInputs): string {
  if (inputs?.beacon !== undefined) throw new CoreInputError(`${ID} takes no beacon`)
  const nonces = checkNonces(inputs, ID)
  return inputs.secret + sha256Hex(`${ID}|${nonces.join('|')}`)
}

function shoeFromKey (key: string, options: DealOptions = {}): string[] {
  const shoe = shuffleShoe(checkShoeSize(options.cards ?? BITJACK_MAX_CARDS), new BitjackStream(key))
  return Array.from(shoe, v => BITJACK_CARDS[v])
}

export const shoeV1: CardScheme = Object.freeze({
  kind: 'cards' as const,
  id: ID,
  version: 1,
  title: 'shoe-v1: bitjack21\'s shoe for a table of 2 to 7 boxes (r2 = SHA-256 of the seats\' nonces)',
  beacon: false,
  family: 'commit-reveal',
  games: Object.freeze(['shoe']),
  seatsFor: (game: string) => { checkGame(game); return SEATS },
  stagesFor: (game: string) => { checkGame(game); return [] },
  commitment: (secret: string, salt?: string) => secretCommitment(ID, secret, salt),
  keyText: keyOf,
  key: keyOf,
  deck: (key: string, options?: DealOptions) => shoeFromKey(key, options),
  deal: (game: string, key: string, options: DealOptions = {}): Deal => {
    checkGame(game)
    const seats = resolveSeats(SEATS, options.seats, `${ID} shoe`)
    if (options.taker !== undefined) throw new CoreInputError('a taker applies only to belote')
    // Blackjack draws from the shoe during play: the deal is the shoe's order, and no cards are dealt.
    return { scheme: ID, game, seats, dealer: options.dealer ?? 0, deck: shoeFromKey(key, options), deliveries: [], hands: undefined }
  }
})
