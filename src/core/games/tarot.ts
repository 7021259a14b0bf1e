import type { GameEngine, GameScore, GameSetup, GameStep, StageRequest } from './types.js'
import {
  EXCUSE, PETIT, cardOrder, halfPoints, isKing, isOudler, isTarotCard, isTrump, rankOf, sortCards, suitOf, sumHalfPoints
} from './tarot-cards.js'

/**
 * French tarot for 3, 4 and 5 players under the FFT's Règlement officiel (docs/games.md "## Tarot"
 * cites each rule). Seats play in seat order (seat s+1 after s), the order in which tarot-v1 deals;
 * the first to speak and to lead is the seat after the dealer.
 */

export const TAROT_BIDS = ['petite', 'garde', 'garde-sans', 'garde-contre'] as const
export type TarotBid = typeof TAROT_BIDS[number]
/** "La marque": each contract's multiplier. */
export const MULTIPLIER: Readonly<Record<TarotBid, number>> = Object.freeze({ petite: 1, garde: 2, 'garde-sans': 4, 'garde-contre': 6 })
/** "Points à réaliser" by the number of oudlers in the taker's side's cards (0, 1, 2, 3). */
export const POINTS_NEEDED: readonly number[] = Object.freeze([56, 51, 41, 36])
/** "La poignée": trumps to show for a simple, double and triple poignée, by number of players. */
export const POIGNEE_SIZES: Readonly<Record<number, readonly number[]>> = Object.freeze({ 3: [13, 15, 18], 4: [10, 13, 15], 5: [8, 10, 13] })
export const POIGNEE_BONUS: readonly number[] = Object.freeze([20, 30, 40])
const HAND_SIZE: Readonly<Record<number, number>> = { 3: 24, 4: 18, 5: 15 }
const DOG_SIZE: Readonly<Record<number, number>> = { 3: 6, 4: 6, 5: 3 }

export type TarotAction =
  | { type: 'bid', bid: TarotBid | 'pass' }
  | { type: 'call', card: string }
  | { type: 'ecart', cards: string[] }
  | { type: 'chelem', announce: boolean }
  | { type: 'poignee', cards: string[] }
  | { type: 'play', card: string }

export type TarotPhase = 'bidding' | 'call' | 'dog' | 'ecart' | 'chelem' | 'play' | 'count' | 'over'

export interface TarotPlay { seat: number, card: string }
export interface TarotTrick { leader: number, cards: TarotPlay[], winner: number }

export interface TarotState {
  players: number
  dealer: number
  /** Each seat's cards now (cards leave as they are played; the taker's gain the dog and lose the écart). */
  hands: string[][]
  phase: TarotPhase
  /** The seat to act, or -1 when nobody is (waiting for the dog, or over). */
  turn: number
  bids: Array<{ seat: number, bid: TarotBid | 'pass' }>
  taker: number | null
  contract: TarotBid | null
  /** 5 players: the card the taker called, and the seat that held it once the écart was made (null: the taker plays alone). */
  called: string | null
  partner: number | null
  dog: string[] | null
  ecart: string[] | null
  chelemAnnounced: boolean
  /** Poignées shown, in order: the seat, the trumps shown, and the level (0 simple, 1 double, 2 triple). */
  poignees: Array<{ seat: number, cards: string[], level: number }>
  /** Seats that have played their first card (a poignée is shown before it). */
  started: boolean[]
  trick: TarotPlay[]
  leader: number
  tricks: TarotTrick[]
  /** True when all passed: the hand is thrown in and scores nothing ("Les enchères"). */
  thrownIn: boolean
}

function refuse (code: string, message: string): GameStep<TarotState> {
  return { ok: false, code, message }
}

function clone (s: TarotState): TarotState {
  return JSON.parse(JSON.stringify(s)) as TarotState
}

const next = (s: TarotState, seat: number): number => (seat + 1) % s.players

/** The side of a seat: true for the taker's side (the taker and, at 5, the called partner). */
export function attacks (s: TarotState, seat: number): boolean {
  return seat === s.taker || (s.partner !== null && seat === s.partner)
}

function start (setup: GameSetup): TarotState {
  const n = setup.seats
  if (setup.game !== 'tarot') throw new Error(`tarot engine: game ${setup.game}`)
  if (![3, 4, 5].includes(n)) throw new Error(`tarot is played by 3, 4 or 5, not ${n}`)
  if (!Number.isInteger(setup.dealer) || setup.dealer < 0 || setup.dealer >= n) throw new Error(`tarot dealer ${setup.dealer}`)
  if (setup.hands.length !== n || setup.hands.some(h => h.length !== HAND_SIZE[n] || !h.every(isTarotCard))) {
    throw new Error(`tarot for ${n}: ${n} hands of ${HAND_SIZE[n]} tarot cards`)
  }
  const all = setup.hands.flat()
  if (new Set(all).size !== all.length) throw new Error('tarot: a card dealt twice')
  const first = (setup.dealer + 1) % n
  return {
    players: n,
    dealer: setup.dealer,
    hands: setup.hands.map(h => [...h]),
    phase: 'bidding',
    turn: first,
    bids: [],
    taker: null,
    contract: null,
    called: null,
    partner: null,
    dog: null,
    ecart: null,
    chelemAnnounced: false,
    poignees: [],
    started: Array(n).fill(false),
    trick: [],
    leader: first,
    tricks: [],
    thrownIn: false
  }
}

/** The kings the taker may call, or queens when it holds the four kings, and so on ("Le roi appelé"). */
export function callable (s: TarotState): string[] {
  const hand = s.hands[s.taker ?? 0]
  for (const rank of ['K', 'Q', 'C', 'J']) {
    const cards = ['S', 'H', 'D', 'C'].map(suit => rank + suit)
    if (!cards.every(c => hand.includes(c))) return cards
    // The taker holds the four of this rank: it calls the next rank down (it may also call one of its own).
    if (rank !== 'J') continue
    return cards
  }
  return []
}

/** Cards the taker may put aside, and how many trumps it must put aside at least ("Le chien et l'écart"). */
export function ecartRules (s: TarotState): { allowed: string[], trumpsAllowed: number } {
  const hand = s.hands[s.taker ?? 0]
  const plain = hand.filter(c => !isKing(c) && !isOudler(c) && !isTrump(c))
  const dogSize = DOG_SIZE[s.players]
  const trumpsAllowed = Math.max(0, dogSize - plain.length)
  const allowed = hand.filter(c => !isKing(c) && !isOudler(c) && (!isTrump(c) || trumpsAllowed > 0))
  return { allowed, trumpsAllowed }
}

/** The cards `seat` may play now ("Le jeu de la carte"): follow suit, else trump, over-trumping when able; the excuse any time. */
export function playable (s: TarotState, seat: number): string[] {
  const hand = s.hands[seat]
  const led = s.trick.find(p => p.card !== EXCUSE)
  if (led === undefined) return [...hand]
  const suit = suitOf(led.card)
  const ofSuit = hand.filter(c => suitOf(c) === suit)
  const withExcuse = (cards: string[]): string[] => hand.includes(EXCUSE) && !cards.includes(EXCUSE) ? [...cards, EXCUSE] : cards
  if (suit !== 'T' && ofSuit.length > 0) return withExcuse(ofSuit)
  const trumps = hand.filter(isTrump)
  if (trumps.length === 0) return [...hand]
  const high = Math.max(0, ...s.trick.filter(p => isTrump(p.card)).map(p => rankOf(p.card)))
  const over = trumps.filter(c => rankOf(c) > high)
  return withExcuse(over.length > 0 ? over : trumps)
}

/** The winner of a complete trick: the highest trump, else the highest card of the suit led; the excuse never wins except in chelem (see `chelemExcuse`). */
export function trickWinner (cards: readonly TarotPlay[]): number {
  let best: TarotPlay | null = null
  const led = cards.find(p => p.card !== EXCUSE)
  if (led === undefined) return cards[0].seat
  for (const p of cards) {
    if (p.card === EXCUSE) continue
    if (best === null) { best = p; continue }
    const bt = isTrump(best.card)
    const pt = isTrump(p.card)
    if (pt && (!bt || rankOf(p.card) > rankOf(best.card))) best = p
    else if (!pt && !bt && suitOf(p.card) === suitOf(led.card) && rankOf(p.card) > rankOf(best.card)) best = p
  }
  return (best ?? cards[0]).seat
}

function partnerOf (s: TarotState): number | null {
  if (s.called === null) return null
  const holder = s.hands.findIndex(h => h.includes(s.called as string))
  return holder < 0 || holder === s.taker ? null : holder
}

function afterTaking (s: TarotState): void {
  const contract = s.contract as TarotBid
  if (s.players === 5 && s.called === null) { s.phase = 'call'; s.turn = s.taker as number; return }
  if (contract === 'petite' || contract === 'garde') { s.phase = 'dog'; s.turn = -1; return }
  s.partner = partnerOf(s)
  s.phase = 'chelem'
  s.turn = s.taker as number
}

function startPlay (s: TarotState): void {
  s.phase = 'play'
  s.leader = s.chelemAnnounced ? s.taker as number : (s.dealer + 1) % s.players
  s.turn = s.leader
}

function apply (state: TarotState, seat: number, action: TarotAction): GameStep<TarotState> {
  if (typeof action !== 'object' || action === null || typeof (action as { type?: unknown }).type !== 'string') {
    return refuse('bad-action', 'an action is an object with a type')
  }
  if (state.phase === 'over' || state.phase === 'count') return refuse('hand-over', 'the hand is over')
  if (state.phase === 'dog') return refuse('awaiting-stage', 'the hand waits for the dog')
  if (!Number.isInteger(seat) || seat < 0 || seat >= state.players) return refuse('bad-seat', `no seat ${seat}`)
  if (action.type === 'poignee') return poignee(state, seat, action.cards)
  if (seat !== state.turn) return refuse('not-your-turn', `seat ${state.turn} is to act, not seat ${seat}`)
  switch (state.phase) {
    case 'bidding': return action.type === 'bid' ? bid(state, seat, action.bid) : wrong(state, action)
    case 'call': return action.type === 'call' ? call(state, action.card) : wrong(state, action)
    case 'ecart': return action.type === 'ecart' ? ecart(state, action.cards) : wrong(state, action)
    case 'chelem': return action.type === 'chelem' ? chelem(state, action.announce) : wrong(state, action)
    case 'play': return action.type === 'play' ? play(state, seat, action.card) : wrong(state, action)
  }
}

function wrong (s: TarotState, action: { type: string }): GameStep<TarotState> {
  return refuse('wrong-phase', `a ${action.type} action is not allowed during ${s.phase}`)
}

function bid (state: TarotState, seat: number, b: unknown): GameStep<TarotState> {
  if (b !== 'pass' && !TAROT_BIDS.includes(b as TarotBid)) return refuse('bad-bid', `no bid ${String(b)}`)
  if (b !== 'pass') {
    const best = state.contract === null ? -1 : TAROT_BIDS.indexOf(state.contract)
    if (TAROT_BIDS.indexOf(b as TarotBid) <= best) return refuse('bid-too-low', `${String(b)} does not cover ${String(state.contract)}`)
  }
  const s = clone(state)
  s.bids.push({ seat, bid: b as TarotBid | 'pass' })
  if (b !== 'pass') { s.contract = b as TarotBid; s.taker = seat }
  if (s.bids.length < s.players) { s.turn = next(s, seat); return { ok: true, state: s } }
  if (s.taker === null) { s.thrownIn = true; s.phase = 'over'; s.turn = -1; return { ok: true, state: s } }
  afterTaking(s)
  return { ok: true, state: s }
}

function call (state: TarotState, card: unknown): GameStep<TarotState> {
  if (typeof card !== 'string' || !callable(state).includes(card)) {
    return refuse('bad-call', `${String(card)} may not be called (callable: ${callable(state).join(' ')})`)
  }
  const s = clone(state)
  s.called = card
  afterTaking(s)
  return { ok: true, state: s }
}

function ecart (state: TarotState, cards: unknown): GameStep<TarotState> {
  const dogSize = DOG_SIZE[state.players]
  if (!Array.isArray(cards) || cards.length !== dogSize || new Set(cards).size !== dogSize) {
    return refuse('bad-ecart', `the écart is ${dogSize} different cards`)
  }
  const hand = state.hands[state.taker as number]
  const missing = cards.find(c => typeof c !== 'string' || !hand.includes(c))
  if (missing !== undefined) return refuse('card-not-held', `the taker does not hold ${String(missing)}`)
  const bad = (cards as string[]).find(c => isKing(c) || isOudler(c))
  if (bad !== undefined) return refuse('ecart-forbidden', `${bad}: no king and no oudler may be put aside`)
  const { trumpsAllowed } = ecartRules(state)
  const trumps = (cards as string[]).filter(isTrump).length
  if (trumps > trumpsAllowed) return refuse('ecart-trump', `a trump may be put aside only when there are not enough other cards (${trumpsAllowed} here)`)
  const s = clone(state)
  s.ecart = sortCards(cards as string[])
  s.hands[s.taker as number] = hand.filter(c => !(cards as string[]).includes(c))
  s.partner = partnerOf(s)
  s.phase = 'chelem'
  s.turn = s.taker as number
  return { ok: true, state: s }
}

function chelem (state: TarotState, announce: unknown): GameStep<TarotState> {
  if (typeof announce !== 'boolean') return refuse('bad-action', 'a chelem action says announce: true or false')
  const s = clone(state)
  s.chelemAnnounced = announce
  startPlay(s)
  return { ok: true, state: s }
}

function poignee (state: TarotState, seat: number, cards: unknown): GameStep<TarotState> {
  if (state.phase !== 'play') return refuse('wrong-phase', 'a poignée is shown during the play, before the first card')
  if (seat !== state.turn) return refuse('not-your-turn', `seat ${state.turn} is to act, not seat ${seat}`)
  if (state.started[seat]) return refuse('poignee-late', 'a poignée is shown before the player\'s first card')
  if (state.poignees.some(p => p.seat === seat)) return refuse('poignee-twice', 'one poignée per player')
  const sizes = POIGNEE_SIZES[state.players]
  if (!Array.isArray(cards) || new Set(cards).size !== cards.length || !sizes.includes(cards.length)) {
    return refuse('bad-poignee', `a poignée shows exactly ${sizes.join(', ')} different trumps`)
  }
  const hand = state.hands[seat]
  const missing = cards.find(c => typeof c !== 'string' || !hand.includes(c))
  if (missing !== undefined) return refuse('card-not-held', `seat ${seat} does not hold ${String(missing)}`)
  if (cards.some(c => !isTrump(c) && c !== EXCUSE)) return refuse('bad-poignee', 'a poignée shows trumps (and the excuse only in place of one)')
  if (cards.includes(EXCUSE) && hand.filter(isTrump).length >= cards.length) {
    return refuse('poignee-excuse', 'the excuse may stand for a trump only when the player has no other trump')
  }
  const s = clone(state)
  s.poignees.push({ seat, cards: sortCards(cards as string[]), level: sizes.indexOf(cards.length) })
  return { ok: true, state: s }
}

function play (state: TarotState, seat: number, card: unknown): GameStep<TarotState> {
  if (typeof card !== 'string' || !state.hands[seat].includes(card)) return refuse('card-not-held', `seat ${seat} does not hold ${String(card)}`)
  if (!playable(state, seat).includes(card)) {
    const led = state.trick.find(p => p.card !== EXCUSE)
    const suit = led === undefined ? '' : suitOf(led.card)
    const code = suit !== 'T' && state.hands[seat].some(c => suitOf(c) === suit) ? 'must-follow'
      : state.trick.some(p => isTrump(p.card)) && isTrump(card) ? 'must-overtrump' : 'must-trump'
    return refuse(code, `${card} breaks the rule of play here (${code})`)
  }
  const s = clone(state)
  s.hands[seat] = s.hands[seat].filter(c => c !== card)
  s.started[seat] = true
  s.trick.push({ seat, card })
  if (s.trick.length < s.players) { s.turn = next(s, seat); return { ok: true, state: s } }
  const last = s.hands.every(h => h.length === 0)
  let winner = trickWinner(s.trick)
  const exc = s.trick.find(p => p.card === EXCUSE)
  // The excuse wins the last trick of a side that has won every other trick ("Le chelem").
  if (last && exc !== undefined && s.tricks.every(t => attacks(s, t.winner) === attacks(s, exc.seat))) winner = exc.seat
  s.tricks.push({ leader: s.leader, cards: s.trick, winner })
  s.trick = []
  s.leader = winner
  if (!last) { s.turn = winner; return { ok: true, state: s } }
  s.turn = -1
  s.phase = s.contract === 'garde-sans' || s.contract === 'garde-contre' ? 'count' : 'over'
  return { ok: true, state: s }
}

function deliver (state: TarotState, stage: string, cards: Record<string, string[]>): GameStep<TarotState> {
  if (stage !== 'dog') return refuse('bad-stage', `tarot has no stage ${stage} to deliver`)
  if (state.phase !== 'dog' && state.phase !== 'count') return refuse('stage-not-asked', 'the dog is not asked for now')
  const dog = Object.values(cards).flat()
  const held = new Set([...state.hands.flat(), ...state.tricks.flatMap(t => t.cards.map(p => p.card)), ...(state.ecart ?? [])])
  if (dog.length !== DOG_SIZE[state.players] || !dog.every(isTarotCard) || new Set(dog).size !== dog.length || dog.some(c => held.has(c))) {
    return refuse('bad-stage', `the dog is ${DOG_SIZE[state.players]} cards nobody was dealt`)
  }
  const s = clone(state)
  s.dog = [...dog]
  if (s.phase === 'count') { s.phase = 'over'; return { ok: true, state: s } }
  s.partner = null
  s.hands[s.taker as number].push(...dog)
  s.phase = 'ecart'
  s.turn = s.taker as number
  return { ok: true, state: s }
}

function pendingStage (s: TarotState): StageRequest | null {
  return s.phase === 'dog' || s.phase === 'count' ? { stage: 'dog' } : null
}

function toAct (s: TarotState): number | null {
  return s.turn < 0 || s.phase === 'over' || s.phase === 'count' || s.phase === 'dog' ? null : s.turn
}

function legal (s: TarotState, seat: number): TarotAction[] {
  if (toAct(s) !== seat) return []
  switch (s.phase) {
    case 'bidding': {
      const best = s.contract === null ? -1 : TAROT_BIDS.indexOf(s.contract)
      return [{ type: 'bid', bid: 'pass' }, ...TAROT_BIDS.slice(best + 1).map(b => ({ type: 'bid' as const, bid: b }))]
    }
    case 'call': return callable(s).map(card => ({ type: 'call' as const, card }))
    // The écarts are too many to list (C(30,6) at 3 players): one, the robot's, stands for them; ecartRules says which cards may go.
    case 'ecart': return [robotEcart(s)]
    case 'chelem': return [{ type: 'chelem', announce: false }, { type: 'chelem', announce: true }]
    case 'play': {
      const plays: TarotAction[] = playable(s, seat).map(card => ({ type: 'play' as const, card }))
      if (!s.started[seat] && !s.poignees.some(p => p.seat === seat)) plays.push(...poigneesOf(s, seat))
      return plays
    }
    default: return []
  }
}

/** The poignées `seat` may show: for each size it reaches, its lowest trumps of that number (the excuse only if it lacks a trump). */
function poigneesOf (s: TarotState, seat: number): TarotAction[] {
  const trumps = sortCards(s.hands[seat].filter(isTrump))
  const excuse = s.hands[seat].includes(EXCUSE)
  const out: TarotAction[] = []
  for (const size of POIGNEE_SIZES[s.players]) {
    if (trumps.length >= size) out.push({ type: 'poignee', cards: trumps.slice(0, size) })
    else if (excuse && trumps.length === size - 1) out.push({ type: 'poignee', cards: [...trumps, EXCUSE] })
  }
  return out
}

function isOver (s: TarotState): boolean {
  return s.phase === 'over'
}

/** Tricks' cards that end with each side, in half-points, with the excuse's exchange ("L'Excuse"). */
export function count (s: TarotState): { attack: number, defence: number, attackOudlers: number, excuse: string } {
  let attack = 0
  let defence = 0
  let attackOudlers = 0
  let excuse = 'not played'
  const lastIndex = s.tricks.length - 1
  s.tricks.forEach((t, i) => {
    const wonByAttack = attacks(s, t.winner)
    for (const p of t.cards) {
      let toAttack = wonByAttack
      if (p.card === EXCUSE) {
        const ownerAttack = attacks(s, p.seat)
        // Kept by its owner's side, except at the last trick, where it goes to the trick's winner.
        const keptByOwner = i !== lastIndex || t.winner === p.seat
        toAttack = keptByOwner ? ownerAttack : wonByAttack
        if (keptByOwner && ownerAttack !== wonByAttack) {
          // The owner's side gives a half-point card for it: 4 points stay, 0.5 goes to the winner.
          if (ownerAttack) { attack += 8; defence += 1 } else { defence += 8; attack += 1 }
          if (ownerAttack) attackOudlers++
          excuse = 'exchanged'
          continue
        }
        excuse = keptByOwner ? 'kept' : 'lost at the last trick'
      }
      if (toAttack) { attack += halfPoints(p.card); if (isOudler(p.card)) attackOudlers++ } else defence += halfPoints(p.card)
    }
  })
  // The écart counts for the taker; the dog unseen for the taker in a garde sans, for the defence in a garde contre.
  const aside = s.contract === 'garde-contre' ? [] : s.contract === 'garde-sans' ? (s.dog ?? []) : (s.ecart ?? [])
  const defenceAside = s.contract === 'garde-contre' ? (s.dog ?? []) : []
  attack += sumHalfPoints(aside)
  attackOudlers += aside.filter(isOudler).length
  defence += sumHalfPoints(defenceAside)
  return { attack, defence, attackOudlers, excuse }
}

/** The trick whose petit counts as "au bout": the last, or the one before when the last is a chelem's excuse ("Le petit au bout"). */
function petitAuBout (s: TarotState): number {
  const last = s.tricks[s.tricks.length - 1]
  const exc = last.cards.find(p => p.card === EXCUSE)
  const slam = s.tricks.every(t => attacks(s, t.winner)) || s.tricks.every(t => !attacks(s, t.winner))
  const t = exc !== undefined && slam && last.winner === exc.seat ? s.tricks[s.tricks.length - 2] : last
  if (t === undefined || !t.cards.some(p => p.card === PETIT)) return 0
  return attacks(s, t.winner) ? 1 : -1
}

function score (s: TarotState): GameScore {
  if (!isOver(s)) throw new Error('the tarot hand is not over')
  const n = s.players
  if (s.thrownIn) return { points: Array(n).fill(0), summary: 'all passed: the hand is thrown in', detail: { thrownIn: true } }
  const contract = s.contract as TarotBid
  const taker = s.taker as number
  const c = count(s)
  const needed = POINTS_NEEDED[c.attackOudlers]
  const made = c.attack >= 2 * needed
  // The difference in whole points, a half-point counted as a whole one (see docs/games.md).
  const diff = Math.ceil(Math.abs(c.attack - 2 * needed) / 2)
  const mult = MULTIPLIER[contract]
  const sign = made ? 1 : -1
  const pab = petitAuBout(s)
  const poigneeBonus = s.poignees.reduce((sum, p) => sum + POIGNEE_BONUS[p.level], 0)
  const attackAll = s.tricks.every(t => attacks(s, t.winner))
  const defenceAll = s.tricks.every(t => !attacks(s, t.winner))
  const chelem = s.chelemAnnounced ? (attackAll ? 400 : -200) : attackAll ? 200 : defenceAll ? -200 : 0
  const unit = sign * (25 + diff) * mult + pab * 10 * mult + sign * poigneeBonus + chelem
  const points = Array(n).fill(-unit) as number[]
  if (n === 5 && s.partner !== null) { points[taker] = 2 * unit; points[s.partner] = unit } else points[taker] = (n - 1) * unit
  const summary = `seat ${taker} ${contract}${s.partner !== null ? ` with seat ${s.partner}` : ''}: ${c.attack / 2} points with ${c.attackOudlers} oudler${c.attackOudlers === 1 ? '' : 's'} for ${needed}, ${made ? 'made' : 'down'} by ${diff}`
  return {
    points: points.map(p => p + 0),
    summary,
    detail: {
      contract, taker, partner: s.partner, called: s.called, attackPoints: c.attack / 2, defencePoints: c.defence / 2,
      oudlers: c.attackOudlers, needed, made, difference: diff, multiplier: mult, petitAuBout: pab * 10 * mult,
      poignees: s.poignees.map(p => ({ seat: p.seat, level: p.level, bonus: POIGNEE_BONUS[p.level] })),
      chelem, chelemAnnounced: s.chelemAnnounced, excuse: c.excuse, unit
    }
  }
}

/** Hand strength for a robot's bid: trumps, oudlers twice more, kings, scaled to a 4-player hand of 18 cards. */
function strength (hand: readonly string[]): number {
  const raw = hand.filter(isTrump).length + 2 * hand.filter(isOudler).length + hand.filter(isKing).length
  return raw * 18 / hand.length
}

function robotEcart (s: TarotState): TarotAction {
  const { allowed, trumpsAllowed } = ecartRules(s)
  const plain = allowed.filter(c => !isTrump(c))
  // Short suits first (to cut them later), high cards of them before low ones; then the lowest trumps when forced.
  const hand = s.hands[s.taker as number]
  const length = (c: string): number => hand.filter(h => suitOf(h) === suitOf(c)).length
  plain.sort((a, b) => length(a) - length(b) || halfPoints(b) - halfPoints(a) || cardOrder(a) - cardOrder(b))
  const trumps = sortCards(allowed.filter(isTrump)).slice(0, trumpsAllowed)
  return { type: 'ecart', cards: [...plain, ...trumps].slice(0, DOG_SIZE[s.players]) }
}

function robot (s: TarotState, seat: number, random: (n: number) => number): TarotAction {
  const moves = legal(s, seat)
  if (moves.length === 0) throw new Error(`seat ${seat} has nothing to do`)
  switch (s.phase) {
    case 'bidding': {
      const st = strength(s.hands[seat])
      const want: TarotBid | 'pass' = st >= 21 ? 'garde-contre' : st >= 18 ? 'garde-sans' : st >= 14 ? 'garde' : st >= 10 ? 'petite' : 'pass'
      return moves.find(m => m.type === 'bid' && m.bid === want) ?? { type: 'bid', bid: 'pass' }
    }
    case 'call': {
      // A king of the suit it holds fewest of, among equals by the hand's key.
      const hand = s.hands[seat]
      const len = (c: string): number => hand.filter(h => suitOf(h) === suitOf(c)).length
      const best = Math.min(...moves.map(m => len((m as { card: string }).card)))
      const ties = moves.filter(m => len((m as { card: string }).card) === best)
      return ties[random(ties.length)]
    }
    case 'chelem': return { type: 'chelem', announce: false }
    case 'play': {
      const poignee = moves.find(m => m.type === 'poignee')
      if (poignee !== undefined && attacks(s, seat)) return poignee
      const cards = moves.filter((m): m is { type: 'play', card: string } => m.type === 'play').map(m => m.card)
      const nonExcuse = cards.filter(c => c !== EXCUSE)
      // Keep the excuse for a trick it saves, but never to the last trick.
      if (nonExcuse.length === 0 || (cards.includes(EXCUSE) && s.hands[seat].length === 2)) return { type: 'play', card: EXCUSE }
      // Win the trick with the lowest card that wins it, else throw the cheapest card.
      const winners = nonExcuse.filter(c => trickWinner([...s.trick, { seat, card: c }]) === seat)
      const pool = winners.length > 0 && s.trick.length > 0 ? winners : nonExcuse
      const key = (c: string): number => (winners.length > 0 && s.trick.length > 0 ? 0 : halfPoints(c) * 100) + (isTrump(c) ? 50 : 0) + rankOf(c)
      const low = Math.min(...pool.map(key))
      const ties = pool.filter(c => key(c) === low)
      return { type: 'play', card: ties[random(ties.length)] }
    }
    default: return moves[random(moves.length)]
  }
}

export const tarot: GameEngine<TarotState, TarotAction> = { id: 'tarot', start, apply, deliver, toAct, pendingStage, legal, isOver, score, robot }
