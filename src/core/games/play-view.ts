/**
 * A seat's view of a hand in play (docs/games.md, "Playing a dealt hand"). A seat knows its own
 * cards, the public ones and every card an action names, not the other seats' hands, yet it runs
 * the same engine to know whose turn it is and which of its own actions are legal. Its state holds
 * {@link HIDDEN} where another seat's unknown cards are: a hidden card is of no suit and never
 * trump, so an other seat's card is accepted as far as the public state allows (the turn, the phase,
 * the auction), and its hand-dependent rules (held, follow suit, trump) are checked by the dealer's
 * node, which knows the deal, and by every node once the hand is revealed. The engines' own
 * checks on a setup or a stage need real cards: `unhide` lends the unknown cards (any not known,
 * in deck order) for the call and `hide` takes them back.
 */
import type { GameEngine, GameSetup, GameStep } from './types.js'

export const HIDDEN = '??'

const RANKS32 = '789TJQKA'
const SUITS32 = 'SHDC'
const TAROT_RANKS = 'A23456789TJCQK'
const TAROT_SUITS = 'CDHS'

/** Every card of the game's deck, in a fixed order. */
export function deckOf (game: string): string[] {
  if (game === 'tarot') {
    const trumps = Array.from({ length: 21 }, (_, i) => `T${String(i + 1).padStart(2, '0')}`)
    return [...[...TAROT_SUITS].flatMap(s => [...TAROT_RANKS].map(r => r + s)), ...trumps, 'EXC']
  }
  return [...SUITS32].flatMap(s => [...RANKS32].map(r => r + s))
}

/** Where each engine keeps seats' cards: `hands` (coinche, belote, tarot) or duo's face-down cards and piles. */
type Holdings = Record<string, unknown> & { hands?: string[][], faceDown?: string[][], piles?: Array<Array<{ down: string | null, up: string | null }>> | null }

function mapOthers (state: unknown, seat: number, f: (card: string | null) => string | null): unknown {
  const s = JSON.parse(JSON.stringify(state)) as Holdings
  if (Array.isArray(s.hands)) s.hands = s.hands.map((h, o) => (o === seat ? h : h.map(c => f(c) as string)))
  if (Array.isArray(s.faceDown)) s.faceDown = s.faceDown.map((h, o) => (o === seat ? h : h.map(c => f(c) as string)))
  if (Array.isArray(s.piles)) s.piles = s.piles.map((ps, o) => (o === seat ? ps : ps.map(p => ({ ...p, down: p.down === null ? null : f(p.down) }))))
  return s
}

/** Every card in `state` that is not hidden (for the unknown pool). */
function visible (state: unknown): Set<string> {
  const out = new Set<string>()
  JSON.stringify(state, (_k, v: unknown) => { if (typeof v === 'string' && v !== HIDDEN) out.add(v); return v })
  return out
}

export class SeatView {
  /** Cards this seat knows where they are or were: its own, the public ones, every one an action named. */
  readonly known = new Set<string>()
  constructor (readonly game: string, readonly seat: number) {}

  learn (cards: Iterable<string>): void { for (const c of cards) this.known.add(c) }

  /** Others' unknown cards → HIDDEN. */
  hide<S>(state: S): S {
    return mapOthers(state, this.seat, c => (c === null || this.known.has(c) ? c : HIDDEN)) as S
  }

  /** HIDDEN → cards nobody can know about from here, in deck order (for an engine's checks only). */
  unhide<S>(state: S, extra: Iterable<string> = []): S {
    const taken = new Set([...visible(state), ...this.known, ...extra])
    const pool = deckOf(this.game).filter(c => !taken.has(c))
    return mapOthers(state, this.seat, c => (c === HIDDEN ? (pool.shift() ?? HIDDEN) : c)) as S
  }

  /** The seat's setup with the other seats' hands lent from the unknown cards. */
  setup (setup: GameSetup): GameSetup {
    const own = setup.hands[this.seat] ?? []
    this.learn(own)
    this.learn(Object.values(setup.table ?? {}).flat())
    const pool = deckOf(this.game).filter(c => !this.known.has(c))
    // An other seat's hand is as long as its own; or, for a node that holds no seat (a blind table's
    // dealer: seat −1), as long as the setup's placeholder (HIDDEN cards) for it.
    return { ...setup, hands: setup.hands.map((h, o) => (o === this.seat ? h : pool.splice(0, own.length > 0 ? own.length : h.length))) }
  }

  start<S>(engine: GameEngine<S, unknown>, setup: GameSetup): S {
    return this.hide(engine.start(this.setup(setup)))
  }

  /**
   * A stage as the seat received it (its own private cards, the public ones): the cards of other
   * seats' deliveries it did not see are lent (belote's take: the taker's last card is the
   * turned-up one), the stage delivered, and what is unknown hidden again.
   */
  deliver<S>(engine: GameEngine<S, unknown>, state: S, stage: string, cards: Record<string, string[]>, seats: number): GameStep<S> {
    for (const c of Object.values(cards).flat()) if (c !== HIDDEN) this.known.add(c)
    const full = this.unhide(state)
    const taken = new Set([...visible(full), ...this.known])
    const pool = deckOf(this.game).filter(c => !taken.has(c))
    const size = cards[String(this.seat)]?.length ?? 0
    // A node that knows none of the stage's cards (a blind table's dealer) passes every delivery
    // with HIDDEN where a card is unknown: those are lent from the unknown cards too.
    const all: Record<string, string[]> = Object.fromEntries(Object.entries(cards).map(([k, list]) => [k, list.map(c => (c === HIDDEN ? (pool.shift() ?? HIDDEN) : c))]))
    if (size > 0) {
      const turnUp = (state as { turnUp?: string }).turnUp
      const taker = (state as { taker?: number | null }).taker
      for (let o = 0; o < seats; o++) {
        if (all[String(o)] !== undefined) continue
        all[String(o)] = o === taker && turnUp !== undefined ? [...pool.splice(0, size - 1), turnUp] : pool.splice(0, size)
      }
    }
    const r = engine.deliver(full, stage, all)
    return r.ok ? { ok: true, state: this.hide(r.state) } : r
  }

  /** Before an other seat's action: the cards it names go into that seat's holdings in place of hidden ones. */
  admit<S>(state: S, seat: number, action: unknown): S {
    if (seat === this.seat || typeof action !== 'object' || action === null) return state
    const a = action as { type?: unknown, card?: unknown, cards?: unknown }
    // Tarot's call names a king the caller does not hold: it shows no card of the caller's.
    if (a.type === 'call') return state
    const named = [a.card, ...(Array.isArray(a.cards) ? a.cards : [])].filter((c): c is string => typeof c === 'string' && c !== HIDDEN)
    const s = JSON.parse(JSON.stringify(state)) as Holdings
    for (const card of named) {
      this.known.add(card)
      if (Array.isArray(s.piles)) {
        const pile = s.piles[seat]?.find(p => p.up === null && p.down === HIDDEN)
        if (pile !== undefined && !s.piles[seat].some(p => p.up === card || p.down === card)) pile.down = card
      } else if (Array.isArray(s.hands) && Array.isArray(s.hands[seat]) && !s.hands[seat].includes(card)) {
        const i = s.hands[seat].indexOf(HIDDEN)
        if (i >= 0) s.hands[seat][i] = card
      }
    }
    return s as S
  }
}
