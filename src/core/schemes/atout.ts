import { sha256Hex } from '../bytes.js'
import { CoreInputError } from '../errors.js'
import { checkBeacon, checkKey, checkNonces, checkSeat, plainKeyText, preview, resolveSeats, secretCommitment } from './inputs.js'
import { CounterMessage, fisherYates, identity, readU32BE, type U32Source } from './streams.js'
import type { CardScheme, Deal, DealOptions, Delivery, KeyInputs } from './types.js'

/** The starting deck, index 0..31: clubs, diamonds, hearts, spades, each 7 8 9 T J Q K A. */
export const ATOUT_CARDS: readonly string[] = Object.freeze(
  ['C', 'D', 'H', 'S'].flatMap(suit => ['7', '8', '9', 'T', 'J', 'Q', 'K', 'A'].map(rank => rank + suit))
)

export const ATOUT_GAMES = Object.freeze(['coinche', 'belote', 'duo'] as const)
export type AtoutGame = typeof ATOUT_GAMES[number]

const SEATS: Record<AtoutGame, readonly number[]> = { coinche: [4], belote: [4], duo: [2] }
const STAGES: Record<AtoutGame, readonly string[]> = {
  coinche: ['deal'],
  belote: ['deal', 'turnUp', 'take'],
  duo: ['deal', 'faceUp']
}

/** `atout-v1|<secret>|<nonce 0>|…|<nonce n−1>` — atout-v1's published key text. */
export function atoutKeyText (inputs: KeyInputs): string {
  return plainKeyText('atout-v1', inputs, ' (use atout-drand-v1)')
}

/** atout-v1's text with the drand round appended: `…|<chain hash>|<round>|<randomness>`. */
export function atoutDrandKeyText (inputs: KeyInputs): string {
  const nonces = checkNonces(inputs, 'atout-drand-v1')
  const b = checkBeacon(inputs.beacon, 'atout-drand-v1')
  return 'atout-drand-v1|' + inputs.secret + '|' + nonces.join('|') + '|' + b.chainHash + '|' + String(b.round) + '|' + b.randomness
}

/**
 * atout-v1's number stream: SHA-256(key ":" k) for k = 0, 1, …, each digest read as eight
 * big-endian u32, in order. `digests` counts the hashes made (the benchmark divides by it).
 */
export class AtoutStream implements U32Source {
  digests = 0
  private readonly message: CounterMessage
  private digest: Uint8Array = NO_DIGEST
  private word = 8

  constructor (key: string) {
    this.message = new CounterMessage(key + ':')
  }

  next (): number {
    if (this.word === 8) {
      this.digest = this.message.digest(this.digests++)
      this.word = 0
    }
    return readU32BE(this.digest, 4 * this.word++)
  }
}

const NO_DIGEST = new Uint8Array(0)

/** The shuffled deck as indices into ATOUT_CARDS. `source` defaults to the key's stream. */
export function atoutPermutation (key: string, source: U32Source = new AtoutStream(key)): Uint16Array {
  const perm = identity(32)
  fisherYates(perm, source)
  return perm
}

export function atoutDeck (key: string, source?: U32Source): string[] {
  checkKey(key)
  const perm = atoutPermutation(key, source)
  const deck = new Array<string>(32)
  for (let i = 0; i < 32; i++) deck[i] = ATOUT_CARDS[perm[i]]
  return deck
}

/** Coinche: one card at a time from seat 0: seat s holds deck[s], deck[s+4], … */
export function dealCoinche (deck: readonly string[]): string[][] {
  const hands: string[][] = [[], [], [], []]
  for (let i = 0; i < 32; i++) hands[i & 3].push(deck[i])
  return hands
}

export interface BeloteDeal {
  firstFive: string[][]
  turnedUp: string
  /** Each seat's second-round cards (the taker's end with the turned-up card); undefined without a taker. */
  take: string[][] | undefined
  hands: string[][] | undefined
}

/**
 * Belote: five consecutive cards to each seat starting right of the dealer (seat dealer+1), deck[20]
 * turned up, then in the same order 2 cards + the turned-up card to the taker and 3 to the others.
 */
export function dealBelote (deck: readonly string[], dealer: number, taker?: number): BeloteDeal {
  checkSeat(dealer, 4, 'belote dealer')
  const firstFive: string[][] = [[], [], [], []]
  let pos = 0
  for (let o = 1; o <= 4; o++) {
    const seat = (dealer + o) & 3
    firstFive[seat] = deck.slice(pos, pos + 5)
    pos += 5
  }
  const turnedUp = deck[20]
  if (taker === undefined) return { firstFive, turnedUp, take: undefined, hands: undefined }
  checkSeat(taker, 4, 'belote taker')
  const take: string[][] = [[], [], [], []]
  pos = 21
  for (let o = 1; o <= 4; o++) {
    const seat = (dealer + o) & 3
    const n = seat === taker ? 2 : 3
    take[seat] = deck.slice(pos, pos + n)
    if (seat === taker) take[seat].push(turnedUp)
    pos += n
  }
  return { firstFive, turnedUp, take, hands: firstFive.map((f, s) => f.concat(take[s])) }
}

export interface DuoDeal {
  receiver: number
  faceDown: string[][]
  faceUp: string[][]
}

/**
 * Duo: packets of four consecutive cards go receiver, dealer, receiver, dealer face down
 * (deck[0..15]), then the same face up (deck[16..31]); the receiver is the non-dealer.
 */
export function dealDuo (deck: readonly string[], dealer: number): DuoDeal {
  checkSeat(dealer, 2, 'duo dealer')
  const receiver = 1 - dealer
  const order = [receiver, dealer, receiver, dealer]
  const faceDown: string[][] = [[], []]
  const faceUp: string[][] = [[], []]
  for (let p = 0; p < 4; p++) {
    for (let c = 0; c < 4; c++) {
      faceDown[order[p]].push(deck[4 * p + c])
      faceUp[order[p]].push(deck[16 + 4 * p + c])
    }
  }
  return { receiver, faceDown, faceUp }
}

/** Deals a shuffled atout deck for a game; shared by atout-v1 and atout-drand-v1. */
export function dealAtout (scheme: string, game: string, deck: string[], options: DealOptions = {}): Deal {
  const g = checkGame(game, scheme)
  const seats = resolveSeats(SEATS[g], options.seats, `${scheme} ${g}`)
  const dealer = options.dealer === undefined ? 0 : checkSeat(options.dealer, seats, `${g} dealer`)
  if (options.taker !== undefined && g !== 'belote') throw new CoreInputError(`a taker applies only to belote, not ${g}`)
  if (options.cards !== undefined) throw new CoreInputError(`${scheme} always deals 32 cards (no shoe size)`)
  const deliveries: Delivery[] = []
  if (g === 'coinche') {
    const hands = dealCoinche(deck)
    hands.forEach((cards, seat) => deliveries.push({ stage: 'deal', seat, public: false, cards }))
    return { scheme, game: g, seats, dealer, deck, deliveries, hands }
  }
  if (g === 'belote') {
    const b = dealBelote(deck, dealer, options.taker)
    b.firstFive.forEach((cards, seat) => deliveries.push({ stage: 'deal', seat, public: false, cards }))
    deliveries.push({ stage: 'turnUp', seat: null, public: true, cards: [b.turnedUp] })
    b.take?.forEach((cards, seat) => deliveries.push({ stage: 'take', seat, public: false, cards }))
    return { scheme, game: g, seats, dealer, deck, deliveries, hands: b.hands, turnedUp: b.turnedUp }
  }
  const d = dealDuo(deck, dealer)
  d.faceDown.forEach((cards, seat) => deliveries.push({ stage: 'deal', seat, public: false, cards }))
  d.faceUp.forEach((cards, seat) => deliveries.push({ stage: 'faceUp', seat, public: true, cards }))
  const hands = d.faceDown.map((f, s) => f.concat(d.faceUp[s]))
  return { scheme, game: g, seats, dealer, deck, deliveries, hands, receiver: d.receiver }
}

function checkGame (game: string, scheme: string): AtoutGame {
  if (!(ATOUT_GAMES as readonly string[]).includes(game)) {
    throw new CoreInputError(`${scheme} has no game ${preview(game)} (it has ${ATOUT_GAMES.join(', ')})`)
  }
  return game as AtoutGame
}

function atoutScheme (id: string, version: number, title: string, beacon: boolean, keyText: (i: KeyInputs) => string): CardScheme {
  return Object.freeze({
    kind: 'cards' as const,
    id,
    version,
    title,
    beacon,
    family: 'commit-reveal',
    games: ATOUT_GAMES,
    seatsFor: (game: string) => SEATS[checkGame(game, id)],
    stagesFor: (game: string) => STAGES[checkGame(game, id)],
    commitment: (secret: string, salt?: string) => secretCommitment(id, secret, salt),
    keyText,
    key: (inputs: KeyInputs) => sha256Hex(keyText(inputs)),
    deck: (key: string) => atoutDeck(key),
    deal: (game: string, key: string, options?: DealOptions) => {
      checkGame(game, id)
      return dealAtout(id, game, atoutDeck(key), options)
    }
  })
}

export const atoutV1: CardScheme = atoutScheme(
  'atout-v1', 1, 'atout-v1: 32-card deals for coinche, belote and duo (published algorithm)', false, atoutKeyText)

export const atoutDrandV1: CardScheme = atoutScheme(
  'atout-drand-v1', 1, 'atout-drand-v1: atout-v1 with a drand round bound into the key', true, atoutDrandKeyText)
