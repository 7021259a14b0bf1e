/**
 * Coinche (docs/games.md, "Coinche"): four seats in two sides (0/2 and 1/3), eight cards each, an
 * auction opened by the seat after the dealer, then eight tricks led first by that seat.
 */
import { isCard32 } from './cards32.js'
import { auctionLegal, auctionStep, startAuction, bidPoints, type AuctionAction, type AuctionState } from './auction.js'
import { auctionHandOver, scoreAuctionHand } from './contract-score.js'
import { bestSuit, robotCard } from './robot32.js'
import { partnerOf, playCard, refuse, sideOf, startPlay, type PlayState } from './trick-play.js'
import { cardFault, legalCards } from './cards32.js'
import type { GameEngine, GameSetup, GameStep } from './types.js'

export type CardAction = { type: 'card', card: string }
export type CoincheAction = AuctionAction | CardAction

export interface CoincheState {
  game: 'coinche'
  dealer: number
  hands: string[][]
  auction: AuctionState
  play: PlayState | null
}

function checkSetup(setup: GameSetup, game: string, seats: number, cards: number): void {
  if (setup.seats !== seats || setup.hands.length !== seats) throw new Error(`${game}: ${seats} seats expected`)
  if (!Number.isInteger(setup.dealer) || setup.dealer < 0 || setup.dealer >= seats) throw new Error(`${game}: bad dealer`)
  const all = setup.hands.flat()
  if (setup.hands.some((h) => h.length !== cards) || !all.every(isCard32) || new Set(all).size !== all.length) throw new Error(`${game}: bad hands`)
}
export { checkSetup as checkSetup32 }

/** Checks a card action of the seat to play against `available` (the cards it may play from); null when legal. */
export function cardRefusal(play: PlayState, seat: number, action: { card?: unknown }, held: readonly string[], available: readonly string[]): ReturnType<typeof refuse> | null {
  if (!isCard32(action.card)) return refuse('bad-action', 'a card action names a card of the 32-card deck')
  if (!held.includes(action.card)) return refuse('card-not-held', `seat ${seat} does not hold ${action.card}`)
  if (!available.includes(action.card)) return refuse('card-not-playable', `${action.card} is covered`)
  const fault = cardFault(action.card, available, play.trick, play.trump, seat, partnerOf(seat, play.seats))
  return fault === null ? null : refuse(fault, `${action.card}: ${fault}`)
}

/** A card played from a hand (coinche, belote): checked, removed from the hand and laid on the trick. */
export function playFromHand(hands: string[][], play: PlayState, seat: number, action: CardAction): { hands: string[][], play: PlayState } | ReturnType<typeof refuse> {
  const bad = cardRefusal(play, seat, action, hands[seat], hands[seat])
  if (bad !== null) return bad
  return { hands: hands.map((h, s) => (s === seat ? h.filter((c) => c !== action.card) : h)), play: playCard(play, seat, action.card) }
}

export const coinche: GameEngine<CoincheState, CoincheAction> = {
  id: 'coinche',
  start(setup) {
    checkSetup(setup, 'coinche', 4, 8)
    return { game: 'coinche', dealer: setup.dealer, hands: setup.hands.map((h) => [...h]), auction: startAuction(4, (setup.dealer + 1) % 4), play: null }
  },
  apply(state, seat, action): GameStep<CoincheState> {
    if (coinche.isOver(state)) return refuse('hand-over', 'the hand is over')
    if (typeof action !== 'object' || action === null || typeof action.type !== 'string') return refuse('bad-action', 'an action is an object with a type')
    if (seat !== coinche.toAct(state)) return refuse('not-your-turn', `it is seat ${String(coinche.toAct(state))}'s turn`)
    if (state.play === null) {
      if (action.type === 'card') return refuse('wrong-phase', 'the auction is not over')
      const a = auctionStep(state.auction, seat, action)
      if ('ok' in a) return a
      let play: PlayState | null = null
      if (a.done && a.best !== null) play = startPlay(a.best.suit, 4, 8, (state.dealer + 1) % 4, state.hands)
      return { ok: true, state: { ...state, auction: a, play } }
    }
    if (action.type !== 'card') return refuse('wrong-phase', 'the auction is over: play a card')
    const played = playFromHand(state.hands, state.play, seat, action)
    return 'code' in played ? played : { ok: true, state: { ...state, ...played } }
  },
  deliver() {
    return refuse('no-stage', 'coinche has no later stage')
  },
  toAct(state) {
    if (coinche.isOver(state)) return null
    return state.play === null ? state.auction.turn : state.play.turn
  },
  pendingStage() {
    return null
  },
  legal(state, seat) {
    if (seat !== coinche.toAct(state)) return []
    if (state.play === null) return auctionLegal(state.auction, seat)
    return legalCards(state.hands[seat], state.play.trick, state.play.trump, seat, partnerOf(seat, 4)).map((card) => ({ type: 'card', card }))
  },
  isOver(state) {
    return auctionHandOver(state.auction, state.play)
  },
  score(state) {
    return scoreAuctionHand('coinche', state.auction, state.play)
  },
  robot(state, seat, random) {
    const legal = coinche.legal(state, seat)
    if (legal.length === 0) throw new Error('coinche: not this seat\'s turn')
    if (state.play === null) return robotBid(state.auction, state.hands[seat], seat, legal)
    const cards = legal.map((a) => (a as CardAction).card)
    return { type: 'card', card: robotCard(cards, state.play.trick, state.play.trump, partnerOf(seat, 4), random) }
  }
}

/**
 * A robot's auction move (coinche and duo): bid its best suit at its estimate rounded down to ten
 * (up to 160) when that is above the current bid and its partner has not already bid; coinche an
 * opponent's contract when it holds the jack and nine of that trump; never surcoinche.
 */
export function robotBid(a: AuctionState, hand: readonly string[], seat: number, legal: CoincheAction[]): CoincheAction {
  if (a.toAnswer.length > 0) return { type: 'pass' }
  if (a.best !== null && sideOf(a.best.seat) !== sideOf(seat) && hand.includes(`J${a.best.suit}`) && hand.includes(`9${a.best.suit}`) && legal.some((l) => l.type === 'coinche')) return { type: 'coinche' }
  const { suit, est } = bestSuit(hand)
  const value = Math.min(160, Math.floor(est / 10) * 10)
  const partnerBid = a.best !== null && a.best.seat !== seat && sideOf(a.best.seat) === sideOf(seat)
  if (!partnerBid && value >= 80 && (a.best === null || value > bidPoints(a.best.value))) return { type: 'bid', value, suit }
  return { type: 'pass' }
}
