import type { GameEngine, GameScore, GameSetup, GameStep, StageRequest } from './types.js'

/**
 * Blackjack against the bank, one box per seat, under the rules docs/games.md "## Blackjack" lists:
 * the bank deals itself a hole card and checks it for blackjack under an ace or a ten, stands on
 * every 17 (soft 17 included), blackjack pays 3 to 2, a double on any first two cards (after a split
 * too), a split of two cards of the same rank up to four hands per box, split aces one card each.
 * Cards come one at a time through the stage `draw` (`pendingStage` names the draw's number and
 * whom it goes to); the caller takes them from the hand's shoe (blackjack-shoe.ts) and the engine
 * never sees the key.
 *
 * The bank's hole card may be delivered hidden (a `draw` with no card: at a table every seat gets
 * each draw as it is made, and nobody may see the hole card before the bank plays). The round then
 * asks for it twice more: `peek` after the deal when the up card is an ace or worth ten (`blackjack`
 * "1" with the card, which ends the round, or "0"), and `turn` when the bank plays (the card).
 */

export type BlackjackAction = { type: 'hit' } | { type: 'stand' } | { type: 'double' } | { type: 'split' }

export interface BlackjackHand {
  seat: number
  cards: string[]
  /** The stake in box units: 1, or 2 once doubled. */
  bet: number
  /** Made by a split: 21 in two cards is then 21, not a blackjack. */
  split: boolean
  done: boolean
}

/** Who the next card goes to: a hand (index into `hands`) or the bank, and whether it is dealt face up. */
export interface BlackjackTarget { hand: number, faceUp: boolean }

export interface BlackjackState {
  boxes: number
  shoeSize: number
  hands: BlackjackHand[]
  bank: string[]
  /** The next draw's number in the shoe. */
  draws: number
  phase: 'deal' | 'play' | 'bank' | 'over'
  /** The initial deal still to come (hand −1 is the bank). */
  queue: BlackjackTarget[]
  /** The hand being played, or −1. */
  current: number
  /** A card this hand (or the bank, −1) waits for, or null. */
  waiting: number | null
  /** The draw number of the bank's hole card while it is hidden (delivered without its card), else null. */
  hole?: number | null
  /** A hidden hole card the round waits on: looked at for a blackjack (`peek`), or turned over (`turn`). */
  needs?: 'peek' | 'turn' | null
}

export const BANK = -1
export const MAX_HANDS_PER_BOX = 4

function refuse (code: string, message: string): GameStep<BlackjackState> {
  return { ok: false, code, message }
}

const clone = (s: BlackjackState): BlackjackState => JSON.parse(JSON.stringify(s)) as BlackjackState

const RANK_VALUE: Readonly<Record<string, number>> = { A: 1, T: 10, J: 10, Q: 10, K: 10 }

function cardValue (card: string): number {
  return RANK_VALUE[card[0]] ?? Number(card[0])
}

/** The best total (an ace counts 11 when that does not bust) and whether an ace counts 11 in it. */
export function total (cards: readonly string[]): { total: number, soft: boolean } {
  let sum = 0
  let aces = 0
  for (const c of cards) { sum += cardValue(c); if (c[0] === 'A') aces++ }
  const soft = aces > 0 && sum + 10 <= 21
  return { total: soft ? sum + 10 : sum, soft }
}

export function isBlackjack (cards: readonly string[], split = false): boolean {
  return !split && cards.length === 2 && total(cards).total === 21
}

function isCard (c: unknown): c is string {
  return typeof c === 'string' && /^[2-9TJQKA][DHCS]$/.test(c)
}

function start (setup: GameSetup): BlackjackState {
  if (setup.game !== 'blackjack') throw new Error(`blackjack engine: game ${setup.game}`)
  const boxes = setup.seats
  if (!Number.isInteger(boxes) || boxes < 1 || boxes > 7) throw new Error(`blackjack: 1 to 7 boxes, not ${boxes}`)
  const shoeSize = (setup.options?.cards as number | undefined) ?? 416
  if (!Number.isInteger(shoeSize) || shoeSize < 1 || shoeSize > 416) throw new Error(`blackjack: a shoe of 1 to 416 cards, not ${shoeSize}`)
  const hands = Array.from({ length: boxes }, (_, seat): BlackjackHand => ({ seat, cards: [], bet: 1, split: false, done: false }))
  // One card face up to each box in seat order, the bank's face up, a second to each box, the bank's hole card face down.
  const queue: BlackjackTarget[] = [
    ...hands.map((_, hand) => ({ hand, faceUp: true })), { hand: BANK, faceUp: true },
    ...hands.map((_, hand) => ({ hand, faceUp: true })), { hand: BANK, faceUp: false }
  ]
  return { boxes, shoeSize, hands, bank: [], draws: 0, phase: 'deal', queue, current: -1, waiting: null }
}

/** The target of the card the hand waits for now, or null. */
export function nextTarget (s: BlackjackState): BlackjackTarget | null {
  if (s.needs != null) return null
  if (s.phase === 'deal') return s.queue[0] ?? null
  if (s.waiting !== null) return { hand: s.waiting, faceUp: true }
  return null
}

/** A ten or a picture: with an ace, the up cards under which the bank looks at its hole card. */
const peeksUnder = (card: string): boolean => card[0] === 'A' || cardValue(card) === 10

function pendingStage (s: BlackjackState): StageRequest | null {
  if (s.needs != null) return { stage: s.needs, inputs: { n: s.hole as number } }
  const t = nextTarget(s)
  if (t === null) return null
  return { stage: 'draw', inputs: { n: s.draws, seat: t.hand === BANK ? BANK : s.hands[t.hand].seat, hand: t.hand, faceUp: t.faceUp ? 1 : 0 } }
}

/** Moves to the next hand to play, dealing a split hand its second card first; then to the bank. */
function advance (s: BlackjackState): void {
  for (let i = Math.max(0, s.current); i < s.hands.length; i++) {
    const h = s.hands[i]
    if (h.done) continue
    s.current = i
    if (h.cards.length < 2) { s.waiting = i; return }
    if (total(h.cards).total >= 21) { h.done = true; continue }
    return
  }
  s.current = -1
  bankPlays(s)
}

function bankPlays (s: BlackjackState): void {
  s.phase = 'bank'
  // A hidden hole card is turned over first: the bank's total needs it, and the round's record shows it.
  if (s.hole != null) { s.needs = 'turn'; s.waiting = null; return }
  const live = s.hands.some(h => total(h.cards).total <= 21 && !isBlackjack(h.cards, h.split))
  // The bank draws to 17 and stands on every 17, soft ones too; it draws nothing when no hand is left to beat.
  if (live && total(s.bank).total < 17) { s.waiting = BANK; return }
  s.waiting = null
  s.phase = 'over'
}

/** The players' turns begin (the bank has no blackjack). */
function startPlay (s: BlackjackState): void {
  s.phase = 'play'
  for (const h of s.hands) if (isBlackjack(h.cards)) h.done = true
  s.current = 0
  advance(s)
}

/** The bank's blackjack ends the round at once. */
function bankBlackjack (s: BlackjackState): void {
  s.phase = 'over'
  for (const h of s.hands) h.done = true
}

/** `peek` and `turn`: the hidden hole card looked at, or turned over. */
function deliverHole (state: BlackjackState, stage: 'peek' | 'turn', cards: Record<string, string[]>): GameStep<BlackjackState> {
  if (state.needs !== stage) return refuse('stage-not-asked', `the round does not ask for ${stage} now`)
  const s = clone(state)
  const keys = Object.keys(cards).sort().join()
  if (stage === 'peek' && keys === 'blackjack' && cards.blackjack.length === 1 && cards.blackjack[0] === '0') {
    s.needs = null
    startPlay(s)
    return { ok: true, state: s }
  }
  const shown = stage === 'peek' ? (keys === 'blackjack,card' && cards.blackjack.length === 1 && cards.blackjack[0] === '1' ? cards.card : null) : (keys === 'card' ? cards.card : null)
  if (shown === null || shown.length !== 1 || !isCard(shown[0])) {
    return refuse('bad-stage', stage === 'peek' ? 'a peek is {"blackjack":["0"]}, or {"blackjack":["1"],"card":[the hole card]}' : 'a turn is {"card":[the hole card]}')
  }
  s.bank.push(shown[0])
  s.hole = null
  s.needs = null
  if (stage === 'peek') {
    if (!isBlackjack(s.bank)) return refuse('bad-stage', `a peek shows a blackjack, and ${s.bank.join(' ')} is none`)
    bankBlackjack(s)
    return { ok: true, state: s }
  }
  bankPlays(s)
  return { ok: true, state: s }
}

function deliver (state: BlackjackState, stage: string, cards: Record<string, string[]>): GameStep<BlackjackState> {
  if (stage === 'peek' || stage === 'turn') return deliverHole(state, stage, cards)
  if (stage !== 'draw') return refuse('bad-stage', `blackjack has no stage ${stage}`)
  const target = nextTarget(state)
  if (target === null) return refuse('stage-not-asked', 'no card is asked for now')
  const dealt = Object.values(cards).flat()
  // The hole card alone may come hidden (no card): it is shown later by peek or turn.
  const hidden = target.hand === BANK && !target.faceUp && dealt.length === 0
  if (!hidden && (dealt.length !== 1 || !isCard(dealt[0]))) return refuse('bad-stage', 'a draw is one card')
  if (state.draws >= state.shoeSize) return refuse('shoe-empty', `the ${state.shoeSize}-card shoe is used up`)
  const s = clone(state)
  if (hidden) s.hole = s.draws
  else if (target.hand === BANK) s.bank.push(dealt[0]); else s.hands[target.hand].cards.push(dealt[0])
  s.draws++
  if (s.phase === 'deal') {
    s.queue.shift()
    if (s.queue.length > 0) return { ok: true, state: s }
    // The bank looks at its hole card under an ace or a ten: a blackjack ends the round at once.
    if (s.hole != null) {
      if (peeksUnder(s.bank[0])) s.needs = 'peek'
      else startPlay(s)
      return { ok: true, state: s }
    }
    if (isBlackjack(s.bank)) { bankBlackjack(s); return { ok: true, state: s } }
    startPlay(s)
    return { ok: true, state: s }
  }
  if (s.phase === 'bank') { bankPlays(s); return { ok: true, state: s } }
  // A card for the hand in play: after a hit, a double, or a split hand's second card.
  s.waiting = null
  const h = s.hands[target.hand]
  const t = total(h.cards).total
  const splitAce = h.split && h.cards[0][0] === 'A'
  if (t >= 21 || h.bet === 2 || (splitAce && h.cards.length === 2)) h.done = true
  advance(s)
  return { ok: true, state: s }
}

function apply (state: BlackjackState, seat: number, action: BlackjackAction): GameStep<BlackjackState> {
  if (typeof action !== 'object' || action === null || typeof (action as { type?: unknown }).type !== 'string') return refuse('bad-action', 'an action is an object with a type')
  if (state.phase === 'over') return refuse('hand-over', 'the round is over')
  if (pendingStage(state) !== null) return refuse('awaiting-stage', `the round waits for ${state.needs ?? `draw ${state.draws}`}`)
  if (state.phase !== 'play') return refuse('wrong-phase', `no player acts during ${state.phase}`)
  const h = state.hands[state.current]
  if (seat !== h.seat) return refuse('not-your-turn', `box ${h.seat} is to act, not ${seat}`)
  const s = clone(state)
  const hand = s.hands[s.current]
  switch (action.type) {
    case 'stand':
      hand.done = true
      advance(s)
      return { ok: true, state: s }
    case 'hit':
      s.waiting = s.current
      return { ok: true, state: s }
    case 'double':
      if (hand.cards.length !== 2) return refuse('cannot-double', 'a double is made on the first two cards only')
      hand.bet = 2
      s.waiting = s.current
      return { ok: true, state: s }
    case 'split': {
      if (hand.cards.length !== 2 || hand.cards[0][0] !== hand.cards[1][0]) return refuse('cannot-split', 'a split needs two cards of the same rank')
      if (s.hands.filter(x => x.seat === seat).length >= MAX_HANDS_PER_BOX) return refuse('cannot-split', `a box splits into ${MAX_HANDS_PER_BOX} hands at most`)
      if (hand.split && hand.cards[0][0] === 'A') return refuse('cannot-split', 'split aces are not split again')
      const second: BlackjackHand = { seat, cards: [hand.cards[1]], bet: 1, split: true, done: false }
      hand.cards = [hand.cards[0]]
      hand.split = true
      s.hands.splice(s.current + 1, 0, second)
      s.waiting = s.current
      return { ok: true, state: s }
    }
    default: return refuse('bad-action', `no blackjack action ${String((action as { type: unknown }).type)}`)
  }
}

function toAct (s: BlackjackState): number | null {
  return s.phase === 'play' && pendingStage(s) === null && s.current >= 0 ? s.hands[s.current].seat : null
}

function legal (s: BlackjackState, seat: number): BlackjackAction[] {
  if (toAct(s) !== seat) return []
  return (['hit', 'stand', 'double', 'split'] as const).map(type => ({ type })).filter(a => apply(s, seat, a).ok)
}

/**
 * Chips a box stakes on each hand, doubled by `double`. Two, so that a blackjack's 3 to 2 is a whole
 * number of chips: a score's points go into the receipt, whose canonical JSON holds whole numbers only.
 */
export const CHIPS_PER_BET = 2

/** A hand's result in chips: 3 for a blackjack (3 to 2 on 2), ±its stake for a win or a loss, 0 for a push. */
export function handResult (h: BlackjackHand, bank: readonly string[]): { result: number, outcome: string } {
  const stake = CHIPS_PER_BET * h.bet
  const bj = isBlackjack(h.cards, h.split)
  const bankBj = isBlackjack(bank)
  if (bj && bankBj) return { result: 0, outcome: 'push (both blackjack)' }
  if (bankBj) return { result: -stake, outcome: 'bank blackjack' }
  if (bj) return { result: stake * 3 / 2, outcome: 'blackjack' }
  const mine = total(h.cards).total
  if (mine > 21) return { result: -stake, outcome: 'bust' }
  const theirs = total(bank).total
  if (theirs > 21) return { result: stake, outcome: 'bank busts' }
  if (mine > theirs) return { result: stake, outcome: 'win' }
  if (mine < theirs) return { result: -stake, outcome: 'lose' }
  return { result: 0, outcome: 'push' }
}

function score (s: BlackjackState): GameScore {
  if (s.phase !== 'over') throw new Error('the blackjack round is not over')
  const hands = s.hands.map(h => ({ seat: h.seat, cards: h.cards, total: total(h.cards).total, bet: CHIPS_PER_BET * h.bet, ...handResult(h, s.bank) }))
  const points = Array(s.boxes).fill(0) as number[]
  for (const h of hands) points[h.seat] += h.result
  const bankTotal = total(s.bank).total
  return {
    points,
    summary: `bank ${bankTotal}${bankTotal > 21 ? ' (bust)' : ''}; ` + hands.map(h => `box ${h.seat}: ${h.total} ${h.outcome} ${h.result >= 0 ? '+' : ''}${h.result}`).join(', '),
    detail: { bank: s.bank, bankTotal, bankResult: -points.reduce((a, b) => a + b, 0), hands, draws: s.draws }
  }
}

/** Basic-strategy lite: split aces and eights, double 10 and 11 over a lower bank card, hit to 12–16 against 7 or more, else stand. */
function robot (s: BlackjackState, seat: number, _random: (n: number) => number): BlackjackAction {
  const moves = legal(s, seat)
  if (moves.length === 0) throw new Error(`box ${seat} has nothing to do`)
  const h = s.hands[s.current]
  const up = cardValue(s.bank[0]) === 1 ? 11 : cardValue(s.bank[0])
  const { total: t, soft } = total(h.cards)
  const can = (type: BlackjackAction['type']): boolean => moves.some(m => m.type === type)
  if (can('split') && (h.cards[0][0] === 'A' || h.cards[0][0] === '8')) return { type: 'split' }
  if (can('double') && !soft && (t === 11 || (t === 10 && up < 10))) return { type: 'double' }
  if (t <= 11) return { type: 'hit' }
  if (soft) return t >= 19 || (t === 18 && up < 9) ? { type: 'stand' } : { type: 'hit' }
  if (t >= 17) return { type: 'stand' }
  if (up >= 7) return { type: 'hit' }
  return t === 12 && up < 4 ? { type: 'hit' } : { type: 'stand' }
}

export const blackjack: GameEngine<BlackjackState, BlackjackAction> = { id: 'blackjack', start, apply, deliver, toAct, pendingStage, legal, isOver: s => s.phase === 'over', score, robot }

/** Plays a round to its end from a shoe (draw n = shoe[n]), asking `choose` for each action. */
export function playRound (setup: GameSetup, shoe: (n: number) => string, choose: (s: BlackjackState, seat: number) => BlackjackAction): BlackjackState {
  let s = start(setup)
  for (let steps = 0; steps < 2000 && s.phase !== 'over'; steps++) {
    const stage = pendingStage(s)
    const r = stage !== null ? deliver(s, 'draw', { card: [shoe(s.draws)] }) : apply(s, toAct(s) as number, choose(s, toAct(s) as number))
    if (!r.ok) throw new Error(`blackjack round: ${r.code}: ${r.message}`)
    s = r.state
  }
  return s
}
