/**
 * Belote (docs/games.md, "Belote"): five cards each and a turned-up card; two take rounds opened by
 * the seat after the dealer (first round: take the turned-up card's suit; second: name another
 * suit); the take asks for the `take` stage with `taker`, which brings each seat to eight cards
 * (the taker's last card is the turned-up one); then eight tricks as in coinche.
 */
import { HAND_POINTS, isCard32, isSuit, legalCards, suitOf, type Suit } from './cards32.js'
import { checkSetup32, playFromHand, type CardAction } from './coinche.js'
import { bestSuit, handStrength, robotCard } from './robot32.js'
import { beloteOf, count, partnerOf, playOver, refuse, sideOf, startPlay, type PlayState } from './trick-play.js'
import type { GameEngine, GameScore, GameStep } from './types.js'

export type BeloteAction = { type: 'take', suit?: Suit } | { type: 'pass' } | CardAction

export interface BeloteState {
  game: 'belote'
  dealer: number
  turnUp: string
  hands: string[][]
  round: 1 | 2
  turn: number
  passes: number
  taker: number | null
  trump: Suit | null
  /** True once the take stage has been delivered. */
  dealt: boolean
  play: PlayState | null
  thrownIn: boolean
}

/** Capot at belote: the side that takes every trick scores 250 instead of the hand's 162. */
export const CAPOT_POINTS = 250

export const belote: GameEngine<BeloteState, BeloteAction> = {
  id: 'belote',
  start(setup) {
    checkSetup32(setup, 'belote', 4, 5)
    const turnUp = setup.table?.turnUp
    if (!Array.isArray(turnUp) || turnUp.length !== 1 || !isCard32(turnUp[0]) || setup.hands.flat().includes(turnUp[0])) throw new Error('belote: table.turnUp must hold the turned-up card')
    const first = (setup.dealer + 1) % 4
    return { game: 'belote', dealer: setup.dealer, turnUp: turnUp[0], hands: setup.hands.map((h) => [...h]), round: 1, turn: first, passes: 0, taker: null, trump: null, dealt: false, play: null, thrownIn: false }
  },
  apply(state, seat, action): GameStep<BeloteState> {
    if (belote.isOver(state)) return refuse('hand-over', 'the hand is over')
    if (typeof action !== 'object' || action === null || typeof action.type !== 'string') return refuse('bad-action', 'an action is an object with a type')
    if (state.taker !== null && !state.dealt) return refuse('waiting-stage', 'waiting for the take stage')
    if (seat !== belote.toAct(state)) return refuse('not-your-turn', `it is seat ${String(belote.toAct(state))}'s turn`)
    if (state.play === null) {
      const next = (seat + 1) % 4
      if (action.type === 'pass') {
        const passes = state.passes + 1
        if (passes < 4) return { ok: true, state: { ...state, passes, turn: next } }
        if (state.round === 1) return { ok: true, state: { ...state, round: 2, passes: 0, turn: next } }
        return { ok: true, state: { ...state, passes, thrownIn: true } }
      }
      if (action.type !== 'take') return refuse('wrong-phase', 'take or pass first')
      const turned = suitOf(state.turnUp)
      let trump: Suit
      if (state.round === 1) {
        if (action.suit !== undefined && action.suit !== turned) return refuse('bad-suit', `the first round takes the turned-up suit ${turned}`)
        trump = turned
      } else {
        if (!isSuit(action.suit) || action.suit === turned) return refuse('bad-suit', `the second round names a suit other than ${turned}`)
        trump = action.suit
      }
      return { ok: true, state: { ...state, taker: seat, trump } }
    }
    if (action.type !== 'card') return refuse('wrong-phase', 'the take is over: play a card')
    const played = playFromHand(state.hands, state.play, seat, action)
    return 'code' in played ? played : { ok: true, state: { ...state, ...played } }
  },
  deliver(state, stage, cards) {
    if (stage !== 'take' || state.taker === null || state.dealt) return refuse('no-stage', `belote does not wait for stage ${stage}`)
    const add = [0, 1, 2, 3].map((s) => cards[String(s)])
    if (add.some((c) => !Array.isArray(c) || c.length !== 3)) return refuse('bad-stage', 'the take stage gives three cards to each seat')
    const taken = add[state.taker]
    if (taken[2] !== state.turnUp) return refuse('bad-stage', 'the taker\'s last card is the turned-up card')
    const hands = state.hands.map((h, s) => [...h, ...add[s]])
    const all = hands.flat()
    if (new Set(all).size !== 32 || all.length !== 32) return refuse('bad-stage', 'the take stage must complete the 32 cards')
    const trump = state.trump as Suit
    return { ok: true, state: { ...state, hands, dealt: true, play: startPlay(trump, 4, 8, (state.dealer + 1) % 4, hands) } }
  },
  toAct(state) {
    if (belote.isOver(state) || (state.taker !== null && !state.dealt)) return null
    return state.play === null ? state.turn : state.play.turn
  },
  pendingStage(state) {
    return state.taker !== null && !state.dealt ? { stage: 'take', inputs: { taker: state.taker } } : null
  },
  legal(state, seat) {
    if (seat !== belote.toAct(state)) return []
    if (state.play === null) {
      const turned = suitOf(state.turnUp)
      if (state.round === 1) return [{ type: 'pass' }, { type: 'take' }]
      return [{ type: 'pass' }, ...(['S', 'H', 'D', 'C'] as Suit[]).filter((s) => s !== turned).map((suit) => ({ type: 'take' as const, suit }))]
    }
    return legalCards(state.hands[seat], state.play.trick, state.play.trump, seat, partnerOf(seat, 4)).map((card) => ({ type: 'card', card }))
  },
  isOver(state) {
    return state.thrownIn || (state.play !== null && playOver(state.play))
  },
  score(state) {
    if (!belote.isOver(state)) throw new Error('belote: the hand is not over')
    if (state.play === null || state.taker === null) return { points: [0, 0, 0, 0], summary: 'everyone passed twice: the hand is thrown in', detail: { thrownIn: true } }
    return scoreBelote(state.taker, state.play)
  },
  robot(state, seat, random) {
    const legal = belote.legal(state, seat)
    if (legal.length === 0) throw new Error('belote: not this seat\'s turn')
    if (state.play === null) {
      const turned = suitOf(state.turnUp)
      if (state.round === 1) return handStrength([...state.hands[seat], state.turnUp], turned) >= 70 ? { type: 'take' } : { type: 'pass' }
      const { suit, est } = bestSuit(state.hands[seat], turned)
      return est >= 70 ? { type: 'take', suit } : { type: 'pass' }
    }
    const cards = legal.map((a) => (a as CardAction).card)
    return { type: 'card', card: robotCard(cards, state.play.trick, state.play.trump, partnerOf(seat, 4), random) }
  }
}

/**
 * Belote's count: a side taking every trick scores 250 (capot); otherwise the takers must make more
 * than the defenders (belote included on both sides): made, each side scores its points; failed
 * (dedans), the defenders score 162; equal (litige), the defenders score theirs and the takers' are
 * held (detail.litige). Belote (20) always stays with the side that held it.
 */
export function scoreBelote(taker: number, play: PlayState): GameScore {
  const c = count(play)
  const t = sideOf(taker)
  const mine = c.points[t] + beloteOf(c, t)
  const theirs = c.points[1 - t] + beloteOf(c, 1 - t)
  const sides: [number, number] = [beloteOf(c, 0), beloteOf(c, 1)]
  let result: 'capot' | 'made' | 'dedans' | 'litige'
  if (c.tricks[1 - t] === 0 || c.tricks[t] === 0) {
    const winner = c.tricks[1 - t] === 0 ? t : 1 - t
    sides[winner] += CAPOT_POINTS
    result = winner === t ? 'capot' : 'dedans'
  } else if (mine > theirs) {
    sides[t] += c.points[t]
    sides[1 - t] += c.points[1 - t]
    result = 'made'
  } else if (mine < theirs) {
    sides[1 - t] += HAND_POINTS
    result = 'dedans'
  } else {
    sides[1 - t] += c.points[1 - t]
    result = 'litige'
  }
  return {
    points: [0, 1, 2, 3].map((s) => sides[sideOf(s)]),
    summary: `seat ${taker} took at ${play.trump}: ${result} with ${c.points[t]} of ${HAND_POINTS}`,
    detail: { taker, trump: play.trump, result, made: result === 'made' || result === 'capot', cardPoints: c.points, tricks: c.tricks, beloteSide: c.beloteSide, ...(result === 'litige' ? { litige: c.points[t] } : {}) }
  }
}
