/**
 * Duo, belote for two (docs/games.md, "Duo"): each seat has eight piles on the table, a face-up
 * card (the `faceUp` stage, public) lying on a face-down one (the `deal` stage): face-up card i on
 * face-down card i, in the order the scheme delivers them. Only a pile's top card is playable; when
 * a face-up card is played, the card under it is turned up and becomes playable. The auction is
 * coinche's for two seats (no générale); the non-dealer opens it and leads; sixteen tricks of two.
 */
import { isCard32, legalCards } from './cards32.js'
import { auctionLegal, auctionStep, startAuction, type AuctionState } from './auction.js'
import { cardRefusal, checkSetup32, robotBid, type CoincheAction, type CardAction } from './coinche.js'
import { auctionHandOver, scoreAuctionHand } from './contract-score.js'
import { robotCard } from './robot32.js'
import { playCard, refuse, startPlay, type PlayState } from './trick-play.js'
import type { GameEngine, GameStep } from './types.js'

export type DuoAction = CoincheAction

export interface DuoPile { down: string | null, up: string | null }

export interface DuoState {
  game: 'duo'
  dealer: number
  /** piles[seat][i]: face-up card i on face-down card i; null once played. */
  piles: DuoPile[][] | null
  /** The face-down cards, kept until the face-up stage arrives. */
  faceDown: string[][]
  auction: AuctionState
  play: PlayState | null
}

/** The cards a seat may play from: each pile's top card (the face-up one, or the turned-up one under it). */
export function uncovered(piles: readonly DuoPile[]): string[] {
  return piles.map((p) => p.up ?? p.down).filter((c): c is string => c !== null)
}
const held = (piles: readonly DuoPile[]): string[] => piles.flatMap((p) => [p.up, p.down]).filter((c): c is string => c !== null)

function buildPiles(faceDown: string[][], faceUp: unknown): DuoPile[][] | null {
  if (typeof faceUp !== 'object' || faceUp === null) return null
  const up = [0, 1].map((s) => (faceUp as Record<string, unknown>)[String(s)])
  if (!up.every((u): u is string[] => Array.isArray(u) && u.length === 8 && u.every(isCard32))) return null
  const all = [...faceDown.flat(), ...up.flat()]
  if (new Set(all).size !== 32) return null
  return [0, 1].map((s) => faceDown[s].map((down, i) => ({ down, up: up[s][i] })))
}

export const duo: GameEngine<DuoState, DuoAction> = {
  id: 'duo',
  start(setup) {
    checkSetup32(setup, 'duo', 2, 8)
    const faceDown = setup.hands.map((h) => [...h])
    let piles: DuoPile[][] | null = null
    if (setup.table !== undefined && setup.table['0'] !== undefined) {
      piles = buildPiles(faceDown, setup.table)
      if (piles === null) throw new Error('duo: table must hold eight face-up cards for seats "0" and "1"')
    }
    return { game: 'duo', dealer: setup.dealer, piles, faceDown, auction: startAuction(2, 1 - setup.dealer), play: null }
  },
  apply(state, seat, action): GameStep<DuoState> {
    if (duo.isOver(state)) return refuse('hand-over', 'the hand is over')
    if (typeof action !== 'object' || action === null || typeof action.type !== 'string') return refuse('bad-action', 'an action is an object with a type')
    if (state.piles === null) return refuse('waiting-stage', 'waiting for the face-up packets')
    if (seat !== duo.toAct(state)) return refuse('not-your-turn', `it is seat ${String(duo.toAct(state))}'s turn`)
    if (state.play === null) {
      if (action.type === 'card') return refuse('wrong-phase', 'the auction is not over')
      const a = auctionStep(state.auction, seat, action)
      if ('ok' in a) return a
      const piles = state.piles
      const play = a.done && a.best !== null ? startPlay(a.best.suit, 2, 16, 1 - state.dealer, piles.map(held)) : null
      return { ok: true, state: { ...state, auction: a, play } }
    }
    if (action.type !== 'card') return refuse('wrong-phase', 'the auction is over: play a card')
    const mine = state.piles[seat]
    const bad = cardRefusal(state.play, seat, action, held(mine), uncovered(mine))
    if (bad !== null) return bad
    const piles = state.piles.map((ps, s) => (s !== seat ? ps : ps.map((p) => (p.up === action.card ? { ...p, up: null } : p.up === null && p.down === action.card ? { ...p, down: null } : p))))
    return { ok: true, state: { ...state, piles, play: playCard(state.play, seat, action.card) } }
  },
  deliver(state, stage, cards) {
    if (stage !== 'faceUp' || state.piles !== null) return refuse('no-stage', `duo does not wait for stage ${stage}`)
    const piles = buildPiles(state.faceDown, cards)
    if (piles === null) return refuse('bad-stage', 'the face-up stage gives eight cards to seats "0" and "1", completing the 32')
    return { ok: true, state: { ...state, piles } }
  },
  toAct(state) {
    if (duo.isOver(state) || state.piles === null) return null
    return state.play === null ? state.auction.turn : state.play.turn
  },
  pendingStage(state) {
    return state.piles === null ? { stage: 'faceUp' } : null
  },
  legal(state, seat) {
    if (seat !== duo.toAct(state) || state.piles === null) return []
    if (state.play === null) return auctionLegal(state.auction, seat)
    return legalCards(uncovered(state.piles[seat]), state.play.trick, state.play.trump, seat, null).map((card) => ({ type: 'card', card }))
  },
  isOver(state) {
    return auctionHandOver(state.auction, state.play)
  },
  score(state) {
    return scoreAuctionHand('duo', state.auction, state.play)
  },
  robot(state, seat, random) {
    const legal = duo.legal(state, seat)
    if (legal.length === 0 || state.piles === null) throw new Error('duo: not this seat\'s turn')
    if (state.play === null) return robotBid(state.auction, uncovered(state.piles[seat]), seat, legal)
    const cards = legal.map((a) => (a as CardAction).card)
    return { type: 'card', card: robotCard(cards, state.play.trick, state.play.trump, null, random) }
  }
}
