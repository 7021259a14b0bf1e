/**
 * blind-v1: dealer-blind deals for coinche, belote, duo and tarot. No key makes the deck: the seats
 * shuffle and re-encrypt an encrypted starting deck in turn (src/core/blind/, docs/dealer-blind.md),
 * and the deal hands out deck POSITIONS exactly as atout-v1 and tarot-v1 hand out cards. A seat's
 * cards are opened only with every seat's decryption share, so nobody sees a card before its seat.
 *
 * The registry entry exists so a table config can choose it like any scheme; `key`, `keyText`,
 * `deck` and `deal` refuse (there is no key), and `positions` gives the layout instead.
 */
import { CoreInputError } from '../errors.js'
import { ATOUT_CARDS, dealAtout } from './atout.js'
import { checkSeat, preview, resolveSeats } from './inputs.js'
import { TAROT_CARDS, TAROT_LAYOUT, layOut } from './tarot.js'
import type { CardScheme, DealOptions } from './types.js'

export const BLIND_V1 = 'blind-v1'
const GAMES = Object.freeze(['coinche', 'belote', 'duo', 'tarot'])
const SEATS: Record<string, readonly number[]> = { coinche: [4], belote: [4], duo: [2], tarot: [3, 4, 5] }
const STAGES: Record<string, readonly string[]> = { coinche: ['deal'], belote: ['deal', 'turnUp', 'take'], duo: ['deal', 'faceUp'], tarot: ['deal', 'dog'] }

/**
 * The stages whose cards every seat sees: belote's turned-up card, duo's face-up packets (each
 * owned by a seat, shown to both) and tarot's dog. Which stages are public depends on the game
 * alone, never on the deal's params, so a seat can tell a public delivery's shares from another
 * seat's private ones before the BDEAL that names the params has reached it.
 */
const PUBLIC_STAGES: Record<string, readonly string[]> = { coinche: [], belote: ['turnUp'], duo: ['faceUp'], tarot: ['dog'] }

export function isPublicStage (game: string, stage: string): boolean {
  return PUBLIC_STAGES[checkGame(game)].includes(stage)
}

function checkGame (game: string): string {
  if (!GAMES.includes(game)) throw new CoreInputError(`${BLIND_V1} has no game ${preview(game)} (it has ${GAMES.join(', ')})`)
  return game
}

/** The public starting deck of a game, in order (position i holds card i before any shuffle). */
export function blindCards (game: string): readonly string[] {
  return checkGame(game) === 'tarot' ? TAROT_CARDS : ATOUT_CARDS
}

/** One delivery of positions of the dealt deck: `positions[k]` is the k-th card handed out. */
export interface PositionDelivery {
  stage: string
  seat: number | null
  public: boolean
  positions: number[]
}

/**
 * Which positions of the dealt deck go where: atout-v1's coinche/belote/duo rules and tarot-v1's
 * layout (packets of 3 from the dealer's right, the rest to the dog), applied to positions.
 * blind-v1 never redeals a tarot petit sec by itself: that is a new hand.
 */
export function blindPositions (game: string, options: DealOptions = {}): PositionDelivery[] {
  checkGame(game)
  if (options.cards !== undefined) throw new CoreInputError(`${BLIND_V1} has no shoe size`)
  if (game === 'tarot') {
    if (options.taker !== undefined) throw new CoreInputError('a taker applies only to belote (the tarot dog is dealt whoever takes)')
    const seats = resolveSeats(SEATS.tarot, options.seats, `${BLIND_V1} tarot`)
    const dealer = options.dealer === undefined ? 0 : checkSeat(options.dealer, seats, 'tarot dealer')
    const { hands, dog } = layOut(Array.from({ length: 78 }, (_, i) => i), seats, dealer)
    return [
      ...hands.map((positions, seat) => ({ stage: 'deal', seat, public: false, positions })),
      { stage: 'dog', seat: null, public: true, positions: dog }
    ]
  }
  const deal = dealAtout(BLIND_V1, game, Array.from({ length: 32 }, (_, i) => String(i)), options)
  return deal.deliveries.map(d => ({ stage: d.stage, seat: d.seat, public: d.public, positions: d.cards.map(Number) }))
}

const noKey = (): never => { throw new CoreInputError(`${BLIND_V1} has no key: its deck comes from the seats' verifiable shuffles (docs/dealer-blind.md)`) }

export const blindV1: CardScheme = Object.freeze({
  kind: 'cards' as const,
  id: BLIND_V1,
  version: 1,
  title: 'blind-v1: dealer-blind deals (ElGamal shuffles on ristretto255) for coinche, belote, duo and tarot',
  beacon: false,
  family: 'blind',
  games: GAMES,
  seatsFor: (game: string) => SEATS[checkGame(game)],
  stagesFor: (game: string) => STAGES[checkGame(game)],
  commitment: noKey,
  keyText: noKey,
  key: noKey,
  deck: noKey,
  deal: noKey
})
