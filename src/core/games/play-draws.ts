/**
 * Games that draw during the hand (docs/games.md "Draws on the chain"): blackjack from bitjack21's
 * shoe, the dice table from dice-v1's numbered rolls. Their stages are not dealt from a deal: the
 * dealer computes each from the hand's key and its number, exactly as shoeDraw and seriesRoll do,
 * and signs it as a stage action of the chain; once the key is revealed anyone recomputes it.
 */
import { canonicalJson } from '../canonical.js'
import { shoeCards } from './blackjack-shoe.js'
import { isBlackjack, type BlackjackState } from './blackjack.js'
import { rollDelivery, type DiceState } from './dice.js'
import type { GameSetup, StageRequest } from './types.js'

/** Table games whose stages are draws from the key: bitjack21's `shoe` (played by the blackjack engine) and dice-v1's `dice`. */
export const DRAW_GAMES: ReadonlySet<string> = new Set(['shoe', 'dice'])

/** The engine that plays a table's game: bitjack21 names its game `shoe`. */
export function engineIdOf (game: string): string {
  return game === 'shoe' ? 'blackjack' : game
}

/** bitjack21's shoe: 416 cards (eight decks), as `fairdeal deal` shuffles it by default. */
export const SHOE_CARDS = 416

/** The setup of a draw game's hand: nothing is dealt before play; a dice series is 20 rolls, anyone rolling. */
export function drawSetup (game: string, seats: number): GameSetup {
  return {
    game: engineIdOf(game),
    seats,
    dealer: 0,
    hands: Array.from({ length: seats }, () => []),
    options: game === 'shoe' ? { cards: SHOE_CARDS } : { rolls: 20, rule: 'any' }
  }
}

let lastShoe: { key: string, cards: string[] } | undefined

/**
 * The cards of the stage a draw game asks for, from the hand's key: blackjack's `draw` n is
 * `{ "card": [shoe[n]] }` (shoeDraw), or `{}` for the bank's hole card (dealt face down: every seat
 * gets the draw, so it carries no card); its `peek` n is `{ "blackjack": ["1"], "card": [shoe[n]] }`
 * when the hole card makes the bank a blackjack and `{ "blackjack": ["0"] }` otherwise; its `turn`
 * n is `{ "card": [shoe[n]] }`; the dice table's `roll` n of expression E is
 * `{ "n": ["n"], "dice": [...] }` (seriesRoll), its `reveal` is `{ "key": [key] }`.
 */
export function drawCards (game: string, key: string, request: StageRequest, state: unknown): Record<string, string[]> {
  if (game === 'shoe' && (request.stage === 'draw' || request.stage === 'peek' || request.stage === 'turn')) {
    const n = request.inputs?.n as number
    if (lastShoe?.key !== key) lastShoe = { key, cards: shoeCards(key, SHOE_CARDS) }
    if (!Number.isSafeInteger(n) || n < 0 || n >= lastShoe.cards.length) throw new RangeError(`draw ${String(n)} is outside the shoe`)
    const card = lastShoe.cards[n]
    if (request.stage === 'draw') return request.inputs?.faceUp === 0 ? {} : { card: [card] }
    if (request.stage === 'turn') return { card: [card] }
    const up = (state as BlackjackState).bank[0]
    return isBlackjack([up, card]) ? { blackjack: ['1'], card: [card] } : { blackjack: ['0'] }
  }
  if (game === 'dice' && request.stage === 'roll') {
    const asked = (state as DiceState).asked
    if (asked === null) throw new Error('no roll is asked for')
    return rollDelivery(key, asked.n, asked.expression)
  }
  if (game === 'dice' && request.stage === 'reveal') return { key: [key] }
  throw new Error(`${game} draws no stage ${request.stage}`)
}

/** The verifier's check of a dealer's stage action (ChainContext.checkStage): null when its cards are the key's. */
export function checkDraw (game: string, key: string): (request: StageRequest, cards: Record<string, string[]>, state: unknown) => string | null {
  return (request, cards, state) => {
    let want: Record<string, string[]>
    try { want = drawCards(game, key, request, state) } catch (e) { return (e as Error).message }
    return canonicalJson(want) === canonicalJson(cards) ? null : `${request.stage} ${canonicalJson(request.inputs ?? null)} is ${canonicalJson(want)} under the key, not ${canonicalJson(cards)}`
  }
}
