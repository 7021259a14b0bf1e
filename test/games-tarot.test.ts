import { readFileSync, readdirSync } from 'node:fs'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { halfPoints, isTrump, rankOf, suitOf } from '../src/core/games/tarot-cards.js'
import { count, tarot, trickWinner, type TarotAction, type TarotState } from '../src/core/games/tarot.js'
import type { GameSetup } from '../src/core/games/types.js'
import { dealTarot } from '../src/core/schemes/tarot.js'
import { must } from './helpers/game-step.js'

// The tarot engine (docs/games.md "## Tarot"): hands worked out by hand replayed, every refusal's
// code, and properties over random games dealt by tarot-v1 and played by random legal moves.

interface Fixture {
  name: string
  setup: GameSetup
  dog: string[]
  actions: Array<{ seat: number, action: TarotAction } | { deliver: string }>
  expected: Record<string, unknown> & { points: number[] }
}
const dir = new URL('./fixtures/games/', import.meta.url)
const fixtures: Fixture[] = readdirSync(dir).filter(f => f.startsWith('tarot-')).map(f => JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as Fixture)

function replay (f: Fixture): TarotState {
  let s = tarot.start(f.setup)
  for (const step of f.actions) {
    const r = 'deliver' in step ? tarot.deliver(s, step.deliver, { dog: f.dog }) : tarot.apply(s, step.seat, step.action)
    if (!r.ok) throw new Error(`${f.name}: ${JSON.stringify(step)} refused: ${r.code} ${r.message}`)
    s = r.state
  }
  return s
}


describe('tarot known-answer hands', () => {
  it('has the 3, 4 and 5 player hands', () => {
    expect(new Set(fixtures.map(f => f.setup.seats))).toEqual(new Set([3, 4, 5]))
  })
  for (const f of fixtures) {
    it(f.name, () => {
      const s = replay(f)
      expect(tarot.isOver(s)).toBe(true)
      const sc = tarot.score(s)
      expect(sc.points).toEqual(f.expected.points)
      const { points, ...detail } = f.expected
      expect(sc.detail).toMatchObject(detail)
      expect(sc.points.reduce((a, b) => a + b, 0)).toBe(0)
      const c = count(s)
      expect(c.attack + c.defence).toBe(182)
    })
  }
})

const fourHands = (): GameSetup => {
  const d = dealTarot('7', 4, 0)
  return { game: 'tarot', seats: 4, dealer: 0, hands: d.hands }
}

describe('tarot refusals', () => {
  const f4 = fixtures.find(f => f.name.includes('garde made')) as Fixture
  const f3 = fixtures.find(f => f.setup.seats === 3) as Fixture
  const f5 = fixtures.find(f => f.setup.seats === 5) as Fixture
  const upTo = (f: Fixture, n: number): TarotState => replay({ ...f, actions: f.actions.slice(0, n) })

  it('refuses out of turn, a bid not covering the last, a bad bid', () => {
    const s = tarot.start(f4.setup)
    expect(tarot.apply(s, 2, { type: 'bid', bid: 'pass' })).toMatchObject({ ok: false, code: 'not-your-turn' })
    expect(tarot.apply(s, 1, { type: 'bid', bid: 'grande' as 'garde' })).toMatchObject({ ok: false, code: 'bad-bid' })
    const s1 = must(tarot.apply(s, 1, { type: 'bid', bid: 'garde' }))
    expect(tarot.apply(s1, 2, { type: 'bid', bid: 'petite' })).toMatchObject({ ok: false, code: 'bid-too-low' })
    expect(tarot.apply(s1, 2, { type: 'bid', bid: 'garde' })).toMatchObject({ ok: false, code: 'bid-too-low' })
    expect(tarot.apply(s1, 2, { type: 'play', card: 'AC' })).toMatchObject({ ok: false, code: 'wrong-phase' })
    expect(tarot.apply(s1, 2, null as unknown as TarotAction)).toMatchObject({ ok: false, code: 'bad-action' })
  })

  it('throws the hand in when all pass', () => {
    let s = tarot.start(fourHands())
    for (const seat of [1, 2, 3, 0]) s = must(tarot.apply(s, seat, { type: 'bid', bid: 'pass' }))
    expect(tarot.isOver(s)).toBe(true)
    expect(tarot.score(s).points).toEqual([0, 0, 0, 0])
  })

  it('waits for the dog and checks it', () => {
    const s = upTo(f4, 4)
    expect(tarot.pendingStage(s)).toEqual({ stage: 'dog' })
    expect(tarot.toAct(s)).toBe(null)
    expect(tarot.apply(s, 1, { type: 'ecart', cards: [] })).toMatchObject({ ok: false, code: 'awaiting-stage' })
    expect(tarot.deliver(s, 'take', { dog: f4.dog })).toMatchObject({ ok: false, code: 'bad-stage' })
    expect(tarot.deliver(s, 'dog', { dog: ['AS', ...f4.dog.slice(1)] })).toMatchObject({ ok: false, code: 'bad-stage' })
    expect(tarot.deliver(must(tarot.deliver(s, 'dog', { dog: f4.dog })), 'dog', { dog: f4.dog })).toMatchObject({ ok: false, code: 'stage-not-asked' })
  })

  it('refuses a king or an oudler in the écart, an unforced trump, a card not held, a wrong size', () => {
    const s = upTo(f4, 5)
    expect(tarot.apply(s, 1, { type: 'ecart', cards: ['9S', 'TS', 'JS', 'CS', 'KS', 'T04'] })).toMatchObject({ ok: false, code: 'ecart-forbidden' })
    expect(tarot.apply(s, 1, { type: 'ecart', cards: ['9S', 'TS', 'JS', 'CS', 'T21', 'T04'] })).toMatchObject({ ok: false, code: 'ecart-forbidden' })
    expect(tarot.apply(s, 1, { type: 'ecart', cards: ['9S', 'TS', 'JS', 'T05', 'QS', 'T04'] })).toMatchObject({ ok: false, code: 'ecart-trump' })
    expect(tarot.apply(s, 1, { type: 'ecart', cards: ['9S', 'TS', 'JS', 'CS', 'QS', 'AC'] })).toMatchObject({ ok: false, code: 'card-not-held' })
    expect(tarot.apply(s, 1, { type: 'ecart', cards: ['9S', 'TS', 'JS', 'CS', 'QS'] })).toMatchObject({ ok: false, code: 'bad-ecart' })
    const s3 = upTo(f3, 4)
    // Seat 1 at 3 players has 27 non-trumps besides its king: no trump may go.
    expect(must(tarot.apply(s3, 1, { type: 'ecart', cards: ['9S', 'TS', 'JS', 'CS', 'QS', '7H'] })).ecart).toHaveLength(6)
  })

  it('refuses a card that breaks following, trumping or over-trumping, and a card not held', () => {
    // 4 players, trick 1: seat 1 led T21 and seat 2 holds the petit, 2 and 3.
    const s = upTo(f4, 8)
    expect(tarot.apply(s, 2, { type: 'play', card: 'AC' })).toMatchObject({ ok: false, code: 'must-trump' })
    expect(tarot.apply(s, 2, { type: 'play', card: 'T05' })).toMatchObject({ ok: false, code: 'card-not-held' })
    expect(tarot.legal(s, 2).map(a => (a as { card: string }).card).sort()).toEqual(['EXC', 'T01', 'T02', 'T03'])
    // 3 players, trick 1: AC led, seat 2 must follow with a club.
    const s3 = upTo(f3, 7)
    expect(tarot.apply(s3, 2, { type: 'play', card: '8D' })).toMatchObject({ ok: false, code: 'must-follow' })
    // 4 players, garde contre, trick 1: seat 1 led T20 and seat 2 holds the 21: only it (or the excuse) may go.
    const fc4 = fixtures.find(f => f.name.includes('garde contre')) as Fixture
    const sc = upTo(fc4, 6)
    expect(tarot.apply(sc, 2, { type: 'play', card: 'T01' })).toMatchObject({ ok: false, code: 'must-overtrump' })
    expect(tarot.apply(sc, 2, { type: 'play', card: 'AC' })).toMatchObject({ ok: false, code: 'must-trump' })
    expect(tarot.apply(sc, 7, { type: 'play', card: 'T21' })).toMatchObject({ ok: false, code: 'bad-seat' })
    expect(tarot.legal(sc, 2).map(a => (a as { card?: string }).card)).toEqual(['T21', 'EXC'])
    // Seat 0 must over-trump a trump already played when it can.
    const s3b = must(tarot.apply(must(tarot.apply(s3, 2, { type: 'play', card: '8C' })), 0, { type: 'play', card: 'T05' }))
    expect(s3b.tricks[0].winner).toBe(0)
  })

  it('checks a poignée: the size, the cards, before the first card, the excuse only standing for a missing trump', () => {
    const s = upTo(f3, 8)
    expect(tarot.apply(s, 0, { type: 'poignee', cards: Array.from({ length: 17 }, (_, i) => 'T' + String(i + 2).padStart(2, '0')) })).toMatchObject({ ok: false, code: 'bad-poignee' })
    expect(tarot.apply(s, 0, { type: 'poignee', cards: ['EXC', ...Array.from({ length: 17 }, (_, i) => 'T' + String(i + 2).padStart(2, '0'))] })).toMatchObject({ ok: false, code: 'poignee-excuse' })
    expect(tarot.apply(s, 2, { type: 'poignee', cards: [] })).toMatchObject({ ok: false, code: 'not-your-turn' })
    const shown = upTo(f3, 9)
    expect(tarot.apply(shown, 0, (f3.actions[8] as { action: TarotAction }).action)).toMatchObject({ ok: false, code: 'poignee-twice' })
    const s4 = upTo(f4, 8)
    expect(tarot.apply(upTo(f4, 7), 1, { type: 'poignee', cards: ['T05', 'T06', 'T07', 'T08', 'T09', 'T10', 'T11', 'T12', 'T13', 'T14'] }).ok).toBe(true)
    expect(tarot.apply(s4, 1, { type: 'poignee', cards: ['T05', 'T06', 'T07', 'T08', 'T09', 'T10', 'T11', 'T12', 'T13', 'T14'] })).toMatchObject({ ok: false, code: 'not-your-turn' })
    const late = upTo(f4, 11)
    expect(tarot.apply(late, 1, { type: 'poignee', cards: ['T05', 'T06', 'T07', 'T08', 'T09', 'T10', 'T11', 'T12', 'T13', 'T14'] })).toMatchObject({ ok: false, code: 'poignee-late' })
  })

  it('checks the called king at 5 players', () => {
    const s = upTo(f5, 5)
    expect(tarot.apply(s, 1, { type: 'call', card: 'QH' })).toMatchObject({ ok: false, code: 'bad-call' })
    expect(tarot.legal(s, 1)).toHaveLength(4)
  })

  it('refuses anything once the hand is over, and the score before it', () => {
    const s = replay(f4)
    expect(tarot.apply(s, 1, { type: 'play', card: 'KS' })).toMatchObject({ ok: false, code: 'hand-over' })
    expect(() => tarot.score(tarot.start(f4.setup))).toThrow()
  })
})

function randomGame (players: number, seed: number, pick: (n: number) => number): { state: TarotState, dog: string[] } {
  const d = dealTarot(String(seed), players, seed % players)
  let s = tarot.start({ game: 'tarot', seats: players, dealer: d.dealer, hands: d.hands })
  for (let steps = 0; steps < 400 && !tarot.isOver(s); steps++) {
    if (tarot.pendingStage(s) !== null) { s = must(tarot.deliver(s, 'dog', { dog: d.dog })); continue }
    const seat = tarot.toAct(s) as number
    const moves = tarot.legal(s, seat)
    const action = pick(3) === 0 ? tarot.robot(s, seat, pick) : moves[pick(moves.length)]
    s = must(tarot.apply(s, seat, action))
  }
  return { state: s, dog: d.dog }
}

describe('tarot properties', () => {
  it('random legal games end; each trick goes to the right card; 91 points; zero-sum scores', () => {
    fc.assert(fc.property(fc.constantFrom(3, 4, 5), fc.nat(1_000_000), fc.infiniteStream(fc.nat()), (players, seed, stream) => {
      const it = stream[Symbol.iterator]()
      const pick = (n: number): number => it.next().value % n
      const { state } = randomGame(players, seed, pick)
      expect(tarot.isOver(state)).toBe(true)
      const sc = tarot.score(state)
      expect(sc.points.reduce((a, b) => a + b, 0)).toBe(0)
      // Whole numbers: the points go into the receipt's canonical JSON (the half-points stay in detail).
      expect(sc.points.every(p => Number.isSafeInteger(p))).toBe(true)
      if (state.thrownIn) return
      expect(state.tricks).toHaveLength(({ 3: 24, 4: 18, 5: 15 } as Record<number, number>)[players])
      const c = count(state)
      expect(c.attack + c.defence).toBe(182)
      for (const [i, t] of state.tricks.entries()) {
        // Independent check: the highest trump, else the highest card of the first suit card's suit.
        const cards = t.cards.filter(p => p.card !== 'EXC')
        const trumps = cards.filter(p => isTrump(p.card))
        const led = cards[0]
        const pool = trumps.length > 0 ? trumps : cards.filter(p => suitOf(p.card) === suitOf(led.card))
        const best = pool.reduce((a, b) => rankOf(b.card) > rankOf(a.card) ? b : a)
        const excuseWins = i === state.tricks.length - 1 && t.winner !== best.seat
        if (!excuseWins) expect(t.winner).toBe(best.seat)
        else expect(t.cards.find(p => p.seat === t.winner)?.card).toBe('EXC')
        expect(trickWinner(t.cards)).toBe(best.seat)
      }
      const all = state.tricks.flatMap(t => t.cards.map(p => p.card))
      expect(new Set(all).size).toBe(all.length)
      expect(all.reduce((a, c2) => a + halfPoints(c2), 0)).toBeLessThanOrEqual(182)
    }), { numRuns: 60, seed: 21 })
  })

  it('robots alone finish every hand', () => {
    for (const players of [3, 4, 5]) {
      for (let seed = 0; seed < 4; seed++) {
        let x = seed
        const { state } = randomGame(players, seed, n => { x = (x * 1103515245 + 12345) % 2147483648; return n === 3 ? 0 : x % n })
        expect(tarot.isOver(state)).toBe(true)
      }
    }
  })
})
