import { sha256Hex } from '../bytes.js'
import { CoreInputError } from '../errors.js'
import { preview, resolveSeats } from './inputs.js'
import { CounterMessage } from './streams.js'
import type { CardScheme, Deal, DealOptions, KeyInputs } from './types.js'

/** Eight 52-card decks. */
export const BITJACK_MAX_CARDS = 416

/** Card value v (0..51): rank = v mod 13 over 2..A, suit = ⌊v/13⌋ over diamonds, hearts, clubs, spades. */
export const BITJACK_CARDS: readonly string[] = Object.freeze(
  ['D', 'H', 'C', 'S'].flatMap(suit => ['2', '3', '4', '5', '6', '7', '8', '9', 'T', 'J', 'Q', 'K', 'A'].map(rank => rank + suit))
)

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/

/** r1, r2 and rx are hashed as ASCII: anything else would make the byte form ambiguous. */
export function checkAscii (value: unknown, what: string): string {
  if (typeof value !== 'string' || !PRINTABLE_ASCII.test(value)) {
    throw new CoreInputError(`${what} must be printable ASCII text, got ${preview(value)}`)
  }
  return value
}

export function checkShoeSize (n: unknown): number {
  if (!Number.isSafeInteger(n) || (n as number) < 1 || (n as number) > BITJACK_MAX_CARDS) {
    throw new CoreInputError(`a BitJack21 shoe holds 1 to ${BITJACK_MAX_CARDS} cards (8 decks), got ${preview(n)}`)
  }
  return n as number
}

/** commitment = SHA-256(ASCII r1 ‖ rx). */
export function bitjackCommitment (r1: string, rx = ''): string {
  return sha256Hex(checkAscii(r1, 'r1') + checkAscii(rx, 'rx'))
}

/**
 * The bit stream: SHA-256(r1 ‖ r2 ‖ decimal k) for k = 0, 1, …, read most significant bit first;
 * a digest is appended only when a draw needs more bits than are left, and a draw may span two.
 */
export class BitjackStream {
  digests = 0
  private readonly message: CounterMessage
  private digest: Uint8Array = new Uint8Array(32)
  private bit = 256

  constructor (prefix: string) {
    this.message = new CounterMessage(prefix)
  }

  /** The next `count` bits (1..31) as an unsigned integer. */
  take (count: number): number {
    let x = 0
    while (count > 0) {
      if (this.bit === 256) {
        this.digest = this.message.digest(this.digests++)
        this.bit = 0
      }
      const avail = 8 - (this.bit & 7)
      const n = avail < count ? avail : count
      const byte = this.digest[this.bit >> 3]
      x = (x << n) | ((byte >> (avail - n)) & ((1 << n) - 1))
      this.bit += n
      count -= n
    }
    return x >>> 0
  }
}

/** The shoe as card values 0..51: cards[i] = i mod 52, then for i = n−1 … 1 swap with a bit-drawn j ≤ i. */
export function bitjackShoe (r1: string, r2: string, n: number): Uint8Array {
  return shuffleShoe(checkShoeSize(n), new BitjackStream(checkAscii(r1, 'r1') + checkAscii(r2, 'r2')))
}

/** The shuffle itself, on any bit stream: j takes bitLength(i) bits, redrawn while j > i. */
export function shuffleShoe (n: number, stream: BitjackStream): Uint8Array {
  const cards = new Uint8Array(n)
  for (let i = 0; i < n; i++) cards[i] = i % 52
  for (let i = n - 1; i >= 1; i--) {
    const bits = 32 - Math.clz32(i)
    let j = stream.take(bits)
    while (j > i) j = stream.take(bits)
    const t = cards[i]; cards[i] = cards[j]; cards[j] = t
  }
  return cards
}

function inputsOf (inputs: KeyInputs): { r1: string, r2: string } {
  if (inputs?.beacon !== undefined) throw new CoreInputError('bitjack21 takes no beacon')
  if (!Array.isArray(inputs?.nonces) || inputs.nonces.length !== 1) {
    throw new CoreInputError('bitjack21 takes exactly one nonce: the player seed r2')
  }
  return { r1: checkAscii(inputs.secret, 'r1 (the secret)'), r2: checkAscii(inputs.nonces[0], 'r2 (the player nonce)') }
}

function checkGame (game: string): void {
  if (game !== 'shoe') throw new CoreInputError(`bitjack21 has no game ${preview(game)} (it has shoe)`)
}

/**
 * BitJack21 in the registry: the secret is r1, the one seat's nonce is r2, the commitment's salt is
 * rx, and the "key" is the stream prefix r1 ‖ r2 itself (the published scheme hashes no key text).
 * Blackjack draws from the shoe during play, so a deal gives the shoe order and no hands.
 */
export const bitjack21: CardScheme = Object.freeze({
  kind: 'cards' as const,
  id: 'bitjack21',
  version: 1,
  title: 'bitjack21: BitJack21 CryptoProof blackjack shoe, up to 8 decks (published algorithm)',
  beacon: false,
  family: 'commit-reveal',
  games: Object.freeze(['shoe']),
  seatsFor: (game: string) => { checkGame(game); return [1] },
  stagesFor: (game: string) => { checkGame(game); return [] },
  commitment: (secret: string, salt?: string) => bitjackCommitment(secret, salt),
  keyText: (inputs: KeyInputs) => { const { r1, r2 } = inputsOf(inputs); return r1 + r2 },
  key: (inputs: KeyInputs) => { const { r1, r2 } = inputsOf(inputs); return r1 + r2 },
  deck: (key: string, options?: DealOptions) => shoeFromKey(key, options),
  deal: (game: string, key: string, options: DealOptions = {}): Deal => {
    checkGame(game)
    const seats = resolveSeats([1], options.seats, 'bitjack21 shoe')
    if (options.dealer !== undefined && options.dealer !== 0) throw new CoreInputError('bitjack21 has one seat: the dealer is the house')
    if (options.taker !== undefined) throw new CoreInputError('a taker applies only to belote')
    return { scheme: 'bitjack21', game, seats, dealer: 0, deck: shoeFromKey(key, options), deliveries: [], hands: undefined }
  }
})

function shoeFromKey (key: string, options: DealOptions = {}): string[] {
  const n = checkShoeSize(options.cards ?? BITJACK_MAX_CARDS)
  const shoe = shuffleShoe(n, new BitjackStream(checkAscii(key, 'bitjack21 key (r1 ‖ r2)')))
  return Array.from(shoe, v => BITJACK_CARDS[v])
}
