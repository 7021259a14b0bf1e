import { concatBytes, sha256Hex, utf8 } from '../bytes.js'
import { canonicalJson } from '../canonical.js'
import { CoreInputError } from '../errors.js'
import { checkKey, checkSeat, plainKeyText, preview, resolveSeats, secretCommitment } from './inputs.js'
import { CounterMessage, fisherYates, identity, readU32BE, type U32Source } from './streams.js'
import type { CardScheme, Deal, DealOptions, Delivery, KeyInputs, Redeal } from './types.js'

/** The shuffle's version string, hashed into every draw. */
export const TAROT_SHUFFLE = 'sha256-fisher-yates-v1'

/**
 * The starting deck, index 0..77: the four suits (clubs, diamonds, hearts, spades), each
 * A 2 … 9 T J C Q K (C = Cavalier, the knight), then trumps T01 … T21, then the excuse EXC.
 */
export const TAROT_CARDS: readonly string[] = Object.freeze([
  ...['C', 'D', 'H', 'S'].flatMap(suit => ['A', '2', '3', '4', '5', '6', '7', '8', '9', 'T', 'J', 'C', 'Q', 'K'].map(rank => rank + suit)),
  ...Array.from({ length: 21 }, (_, i) => 'T' + String(i + 1).padStart(2, '0')),
  'EXC'
])

const PETIT = 56
const FIRST_TRUMP = 56
const PACKET = 3
/** Cards per seat and in the dog, by number of players. */
export const TAROT_LAYOUT: Readonly<Record<number, { hand: number, dog: number }>> = Object.freeze({
  3: { hand: 24, dog: 6 },
  4: { hand: 18, dog: 6 },
  5: { hand: 15, dog: 3 }
})
const PLAYERS: readonly number[] = Object.freeze([3, 4, 5])
/** A petit sec is rare (well under 1% of deals), so this many in a row means something is broken. */
const MAX_ATTEMPTS = 64

/**
 * The draw stream: SHA-256(version ‖ 0x00 ‖ seed ‖ 0x00 ‖ decimal counter), counter = 0, 1, …,
 * one per draw (rejected ones included); each draw is the digest's first 4 bytes, big-endian.
 */
export class TarotStream implements U32Source {
  digests = 0
  private readonly message: CounterMessage

  constructor (seed: string) {
    this.message = new CounterMessage(concatBytes(utf8(TAROT_SHUFFLE), new Uint8Array(1), utf8(checkSeed(seed)), new Uint8Array(1)))
  }

  next (): number {
    return readU32BE(this.message.digest(this.digests++), 0)
  }
}

/** A seed is a non-negative integer in decimal without leading zeros, so "the next seed" is seed + 1. */
export function checkSeed (seed: unknown): string {
  if (typeof seed !== 'string' || !/^(0|[1-9][0-9]{0,99})$/.test(seed)) {
    throw new CoreInputError(`a tarot seed is a non-negative decimal integer without leading zeros (up to 100 digits), got ${preview(seed)}`)
  }
  return seed
}

export function nextSeed (seed: string): string {
  return (BigInt(checkSeed(seed)) + 1n).toString()
}

/** tarot-v1's seed for a key: the 32 key bytes read as one big-endian integer, in decimal. */
export function seedFromKey (key: string): string {
  return BigInt('0x' + checkKey(key)).toString()
}

/** The shuffled deck as indices into TAROT_CARDS (Fisher–Yates with rejection, as atout-v1). */
export function tarotPermutation (seed: string, source: U32Source = new TarotStream(seed)): Uint16Array {
  const perm = identity(78)
  fisherYates(perm, source)
  return perm
}

export function tarotDeck (seed: string): string[] {
  return Array.from(tarotPermutation(seed), i => TAROT_CARDS[i])
}

/**
 * Packets of three consecutive cards from deck[0], seat after seat starting right of the dealer
 * (seat dealer+1) until every seat has its 24/18/15 cards; the 6/6/3 cards left are the dog.
 */
export function layOut (perm: ArrayLike<number>, players: number, dealer: number): { hands: number[][], dog: number[] } {
  const { hand } = TAROT_LAYOUT[players]
  const hands: number[][] = Array.from({ length: players }, () => [])
  let pos = 0
  for (let round = 0; round < hand / PACKET; round++) {
    for (let o = 1; o <= players; o++) {
      const h = hands[(dealer + o) % players]
      for (let c = 0; c < PACKET; c++) h.push(perm[pos++])
    }
  }
  const dog: number[] = []
  while (pos < 78) dog.push(perm[pos++])
  return { hands, dog }
}

/** The seat holding the petit sec — the 1 of trumps with no other trump and no excuse — or −1. */
export function petitSecSeat (hands: readonly (readonly number[])[]): number {
  for (let s = 0; s < hands.length; s++) {
    let petit = false
    let other = false
    for (const c of hands[s]) {
      if (c === PETIT) petit = true
      else if (c > FIRST_TRUMP) other = true // every index above the petit is a trump or the excuse
    }
    if (petit && !other) return s
  }
  return -1
}

const byDeckOrder = (a: number, b: number): number => a - b

/**
 * SHA-256 (hex) of the canonical JSON of {game, versions, players, dealer, hands, dog}, each hand
 * and the dog sorted in starting-deck order (see TAROT_CARDS).
 */
export function tarotFingerprint (players: number, dealer: number, hands: readonly (readonly number[])[], dog: readonly number[]): string {
  return sha256Hex(canonicalJson({
    game: 'tarot',
    versions: { scheme: 'tarot-v1', shuffle: TAROT_SHUFFLE },
    players,
    dealer,
    hands: hands.map(h => [...h].sort(byDeckOrder).map(i => TAROT_CARDS[i])),
    dog: [...dog].sort(byDeckOrder).map(i => TAROT_CARDS[i])
  }))
}

export interface TarotDeal {
  seed: string
  dealer: number
  deck: string[]
  hands: string[][]
  dog: string[]
  fingerprint: string
  redeals: Redeal[]
}

/**
 * Deals from `seed`; while a seat holds the petit sec the hand is redealt from the next seed
 * (seed + 1) by the next dealer (dealer + 1 mod players).
 */
export function dealTarot (seed: string, players: number, dealer = 0): TarotDeal {
  checkSeed(seed)
  const n = resolveSeats(PLAYERS, players, 'tarot')
  checkSeat(dealer, n, 'tarot dealer')
  const redeals: Redeal[] = []
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const perm = tarotPermutation(seed)
    const { hands, dog } = layOut(perm, n, dealer)
    const petitSec = petitSecSeat(hands)
    if (petitSec < 0) {
      return {
        seed,
        dealer,
        deck: Array.from(perm, i => TAROT_CARDS[i]),
        hands: hands.map(h => h.map(i => TAROT_CARDS[i])),
        dog: dog.map(i => TAROT_CARDS[i]),
        fingerprint: tarotFingerprint(n, dealer, hands, dog),
        redeals
      }
    }
    redeals.push({ seed, dealer, petitSec })
    seed = nextSeed(seed)
    dealer = (dealer + 1) % n
  }
  throw new Error(`tarot: ${MAX_ATTEMPTS} deals in a row had a petit sec; the shuffle is broken`)
}

export function tarotKeyText (inputs: KeyInputs): string {
  return plainKeyText('tarot-v1', inputs)
}

function checkGame (game: string): void {
  if (game !== 'tarot') throw new CoreInputError(`tarot-v1 has no game ${preview(game)} (it has tarot)`)
}

export const tarotV1: CardScheme = Object.freeze({
  kind: 'cards' as const,
  id: 'tarot-v1',
  version: 1,
  title: 'tarot-v1: 78-card tarot for 3, 4 or 5 players, sha256-fisher-yates-v1 shuffle, petit sec redeal',
  beacon: false,
  family: 'commit-reveal',
  games: Object.freeze(['tarot']),
  seatsFor: (game: string) => { checkGame(game); return PLAYERS },
  stagesFor: (game: string) => { checkGame(game); return ['deal', 'dog'] },
  commitment: (secret: string, salt?: string) => secretCommitment('tarot-v1', secret, salt),
  keyText: tarotKeyText,
  key: (inputs: KeyInputs) => sha256Hex(tarotKeyText(inputs)),
  deck: (key: string) => tarotDeck(seedFromKey(key)),
  deal: (game: string, key: string, options: DealOptions = {}): Deal => {
    checkGame(game)
    if (options.taker !== undefined) throw new CoreInputError('a taker applies only to belote (the tarot dog is dealt whoever takes)')
    if (options.cards !== undefined) throw new CoreInputError('tarot-v1 always deals 78 cards (no shoe size)')
    const seats = resolveSeats(PLAYERS, options.seats, 'tarot-v1 tarot')
    const d = dealTarot(seedFromKey(key), seats, options.dealer ?? 0)
    const deliveries: Delivery[] = d.hands.map((cards, seat) => ({ stage: 'deal', seat, public: false, cards }))
    deliveries.push({ stage: 'dog', seat: null, public: true, cards: d.dog })
    return {
      scheme: 'tarot-v1',
      game,
      seats,
      dealer: d.dealer,
      deck: d.deck,
      deliveries,
      hands: d.hands,
      dog: d.dog,
      fingerprint: d.fingerprint,
      redeals: d.redeals
    }
  }
})
