// Property tests of the coinche, belote and duo engines: random deals played out by robots and by
// random legal choices always end; legal() is never empty for the seat to act and every action it
// lists is accepted; every trick goes to the card the rules say; the points add up (162 per hand,
// + 20 belote, or 250 for a belote capot); illegal actions are refused with their codes.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { belote } from '../src/core/games/belote.js'
import { strength, suitOf } from '../src/core/games/cards32.js'
import { coinche } from '../src/core/games/coinche.js'
import { duo } from '../src/core/games/duo.js'
import type { GameEngine, GameSetup } from '../src/core/games/types.js'

const DECK = [...'SHDC'].flatMap((s) => [...'789TJQKA'].map((r) => r + s))

function shuffled(seed: number[]): string[] {
  const d = [...DECK]
  for (let i = d.length - 1; i > 0; i--) {
    const j = seed[i] % (i + 1)
    ;[d[i], d[j]] = [d[j], d[i]]
  }
  return d
}

function setupFor(game: string, deck: string[], dealer: number): { setup: GameSetup, take?: (taker: number) => Record<string, string[]> } {
  if (game === 'coinche') return { setup: { game, seats: 4, dealer, hands: [0, 1, 2, 3].map((s) => deck.slice(8 * s, 8 * s + 8)) } }
  if (game === 'duo') return { setup: { game, seats: 2, dealer, hands: [deck.slice(0, 8), deck.slice(8, 16)], table: { 0: deck.slice(16, 24), 1: deck.slice(24, 32) } } }
  return {
    setup: { game, seats: 4, dealer, hands: [0, 1, 2, 3].map((s) => deck.slice(5 * s, 5 * s + 5)), table: { turnUp: [deck[20]] } },
    take: (taker) => {
      const out: Record<string, string[]> = {}
      let k = 21
      for (let s = 0; s < 4; s++) {
        if (s === taker) { out[s] = [deck[k], deck[k + 1], deck[20]]; k += 2 } else { out[s] = deck.slice(k, k + 3); k += 3 }
      }
      return out
    }
  }
}

/** The trick's winner by a direct reading of the rule: any trump → the highest trump; else the highest card of the suit led. */
function expectedWinner(cards: { seat: number, card: string }[], trump: string): number {
  const trumps = cards.filter((c) => suitOf(c.card) === trump)
  const pool = trumps.length > 0 ? trumps : cards.filter((c) => suitOf(c.card) === suitOf(cards[0].card))
  return pool.reduce((a, b) => (strength(b.card, trump as never) > strength(a.card, trump as never) ? b : a)).seat
}

function playOut(engine: GameEngine<any, any>, game: string, seed: number[], dealer: number, choose: 'robot' | number[]): void {
  const { setup, take } = setupFor(game, shuffled(seed), dealer)
  let state = engine.start(setup)
  let k = 0
  const random = (n: number) => (seed[k++ % seed.length] % n)
  for (let steps = 0; !engine.isOver(state); steps++) {
    if (steps >= 200) throw new Error('the hand does not end')
    const pending = engine.pendingStage(state)
    if (pending !== null) {
      const r = engine.deliver(state, pending.stage, take!(pending.inputs!.taker))
      if (!r.ok) throw new Error(`${r.code}: ${r.message}`)
      state = r.state
      continue
    }
    const seat = engine.toAct(state)!
    const legal = engine.legal(state, seat)
    if (legal.length === 0) throw new Error(`legal() is empty for seat ${seat} to act`)
    for (let other = 0; other < setup.seats; other++) if (other !== seat && engine.legal(state, other).length > 0) throw new Error(`seat ${other} has legal actions out of turn`)
    const action = choose === 'robot' ? engine.robot(state, seat, random) : legal[choose[k++ % choose.length] % legal.length]
    if (!legal.some((l) => JSON.stringify(l) === JSON.stringify(action))) throw new Error(`robot chose ${JSON.stringify(action)}, not in legal()`)
    const r = engine.apply(state, seat, action)
    if (!r.ok) throw new Error(`${r.code}: ${r.message}`)
    state = r.state
  }
  const score = engine.score(state)
  // Whole numbers: the points go into the receipt's canonical JSON.
  expect(score.points.every((p: number) => Number.isSafeInteger(p))).toBe(true)
  if (state.play === null) { expect(score.points.every((p: number) => p === 0)).toBe(true); return }
  let sum = 0
  for (const t of state.play.tricks) {
    expect(t.winner).toBe(expectedWinner(t.cards, state.play.trump))
    sum += t.points
  }
  expect(sum).toBe(162)
  expect(state.play.tricks.length).toBe(game === 'duo' ? 16 : 8)
  const cp = score.detail.cardPoints as number[]
  expect(cp[0] + cp[1]).toBe(162)
  const belote = state.play.beloteSeat === null ? 0 : 20
  const total = score.points[0] + score.points[1]
  if (game === 'belote') {
    const capot = (score.detail.tricks as number[]).includes(0)
    if (score.detail.result === 'litige') expect(total).toBe(162 - (score.detail.litige as number) + belote)
    else expect(total).toBe((capot ? 250 : 162) + belote)
  } else {
    const c = score.detail.contract as { value: number | string }
    const value = c.value === 'capot' ? 250 : c.value === 'generale' ? 500 : (c.value as number)
    const m = score.detail.multiplier as number
    const made = score.detail.made as boolean
    expect(total).toBe(m === 1 && made ? 162 + value + belote : (162 + value) * m + belote)
  }
}

const seedArb = fc.array(fc.nat(1_000_000), { minLength: 40, maxLength: 40 })
for (const [game, engine] of [['coinche', coinche], ['belote', belote], ['duo', duo]] as const) {
  describe(`${game}: random legal hands`, () => {
    it('robots play every hand to a score that adds up', () => {
      fc.assert(fc.property(seedArb, fc.nat(3), (seed, d) => { playOut(engine, game, seed, d % (game === 'duo' ? 2 : 4), 'robot') }), { numRuns: 25 })
    })
    it('random legal choices always end, with the right trick winners and totals', () => {
      fc.assert(fc.property(seedArb, fc.nat(3), seedArb, (seed, d, choices) => { playOut(engine, game, seed, d % (game === 'duo' ? 2 : 4), choices) }), { numRuns: 25 })
    })
  })
}
