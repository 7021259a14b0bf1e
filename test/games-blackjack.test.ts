import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { blackjack, handResult, playRound, total, type BlackjackAction, type BlackjackState } from '../src/core/games/blackjack.js'
import { shoeCards, shoeDraw } from '../src/core/games/blackjack-shoe.js'
import { BITJACK_CARDS } from '../src/core/schemes/bitjack21.js'
import { must } from './helpers/game-step.js'

// Blackjack (docs/games.md "## Blackjack"): draws from the bitjack21 shoe against the shared
// vectors, rounds worked out by hand, refusals, and random rounds on random keys.

const vectors = JSON.parse(readFileSync(new URL('./fixtures/vectors/bitjack21.json', import.meta.url), 'utf8')) as
  { vectors: Array<{ r1: string, r2: string, n: number, cards: number[] }> }
const rounds = JSON.parse(readFileSync(new URL('./fixtures/games/blackjack-rounds.json', import.meta.url), 'utf8')) as
  { rounds: Array<{ name: string, key: string, shoe: number, boxes: number, actions: Array<{ seat: number, action: BlackjackAction }>, expected: { points: number[], bank: string[], bankTotal: number, draws: number } }> }


describe('the shoe draws', () => {
  it('draw n is the vectors\' card n, for every vector and every n', () => {
    for (const v of vectors.vectors) {
      const expected = v.cards.map(c => BITJACK_CARDS[c])
      expect(shoeCards(v.r1 + v.r2, v.n)).toEqual(expected)
      for (const n of [0, 1, v.n - 1]) expect(shoeDraw(v.r1 + v.r2, n, v.n)).toBe(expected[n])
    }
    expect(() => shoeDraw('k', 2, 2)).toThrow(RangeError)
  })
})

describe('blackjack known-answer rounds', () => {
  for (const r of rounds.rounds) {
    it(r.name, () => {
      const shoe = shoeCards(r.key, r.shoe)
      let s = blackjack.start({ game: 'blackjack', seats: r.boxes, dealer: 0, hands: [], options: { cards: r.shoe } })
      const actions = [...r.actions]
      while (!blackjack.isOver(s)) {
        const stage = blackjack.pendingStage(s)
        if (stage !== null) {
          expect(stage.inputs?.n).toBe(s.draws)
          s = must(blackjack.deliver(s, 'draw', { card: [shoe[s.draws]] }))
          continue
        }
        const next = actions.shift()
        if (next === undefined) throw new Error(`${r.name}: box ${String(blackjack.toAct(s))} has no action left`)
        expect(blackjack.toAct(s)).toBe(next.seat)
        s = must(blackjack.apply(s, next.seat, next.action))
      }
      expect(actions).toEqual([])
      const sc = blackjack.score(s)
      expect(sc.points).toEqual(r.expected.points)
      expect(sc.detail).toMatchObject({ bank: r.expected.bank, bankTotal: r.expected.bankTotal, draws: r.expected.draws })
    })
  }
})

describe('blackjack rules', () => {
  const fixed = (cards: string[]) => (n: number): string => cards[n]
  const setup = (boxes: number) => ({ game: 'blackjack', seats: boxes, dealer: 0, hands: [] })

  it('pays a blackjack 3 to 2, pushes against the bank\'s, and a bank blackjack ends the round', () => {
    expect(handResult({ seat: 0, cards: ['AS', 'KD'], bet: 1, split: false, done: true }, ['9S', '8D'])).toMatchObject({ result: 3 })
    expect(handResult({ seat: 0, cards: ['AS', 'KD'], bet: 1, split: true, done: true }, ['9S', 'AD'])).toMatchObject({ result: 2 })
    const s = playRound(setup(2), fixed(['AS', '9C', 'AH', 'KD', '9D', 'QH']), () => { throw new Error('nobody acts') })
    expect(blackjack.score(s).points).toEqual([0, -2])
    expect(s.draws).toBe(6)
  })

  it('the bank stands on soft 17 and hits 16', () => {
    const soft = playRound(setup(1), fixed(['TS', 'AH', '8D', '6C']), () => ({ type: 'stand' }))
    expect(soft.bank).toEqual(['AH', '6C'])
    expect(blackjack.score(soft).points).toEqual([2])
    const hard = playRound(setup(1), fixed(['TS', '9H', '8D', '7C', '2D']), () => ({ type: 'stand' }))
    expect(hard.bank).toEqual(['9H', '7C', '2D'])
    expect(total(hard.bank)).toEqual({ total: 18, soft: false })
  })

  it('split aces take one card each; refusals carry their codes', () => {
    let s = blackjack.start(setup(1))
    for (const c of ['AS', '9H', 'AD', '7C']) s = must(blackjack.deliver(s, 'draw', { card: [c] }))
    expect(blackjack.apply(s, 1, { type: 'hit' })).toMatchObject({ ok: false, code: 'not-your-turn' })
    expect(blackjack.apply(s, 0, { type: 'surrender' } as unknown as BlackjackAction)).toMatchObject({ ok: false, code: 'bad-action' })
    s = must(blackjack.apply(s, 0, { type: 'split' }))
    expect(blackjack.apply(s, 0, { type: 'stand' })).toMatchObject({ ok: false, code: 'awaiting-stage' })
    expect(blackjack.deliver(s, 'draw', { card: ['ZZ'] })).toMatchObject({ ok: false, code: 'bad-stage' })
    expect(blackjack.deliver(s, 'deal', { card: ['AH'] })).toMatchObject({ ok: false, code: 'bad-stage' })
    s = must(blackjack.deliver(s, 'draw', { card: ['AH'] }))
    s = must(blackjack.deliver(s, 'draw', { card: ['KC'] }))
    // The first ace drew an ace: no resplit, no action; the bank (16) draws.
    expect(blackjack.pendingStage(s)?.inputs).toMatchObject({ n: 6, seat: -1 })
    s = must(blackjack.deliver(s, 'draw', { card: ['5S'] }))
    expect(blackjack.isOver(s)).toBe(true)
    // A-A (soft 12) loses to the bank's 21; A-K after a split is 21, not a blackjack: a push.
    expect(blackjack.score(s).points).toEqual([-2])
    expect(blackjack.apply(s, 0, { type: 'hit' })).toMatchObject({ ok: false, code: 'hand-over' })
    expect(blackjack.deliver(s, 'draw', { card: ['5S'] })).toMatchObject({ ok: false, code: 'stage-not-asked' })

    let t = blackjack.start(setup(1))
    for (const c of ['9S', '9H', '8D', '7C']) t = must(blackjack.deliver(t, 'draw', { card: [c] }))
    expect(blackjack.apply(t, 0, { type: 'split' })).toMatchObject({ ok: false, code: 'cannot-split' })
    t = must(blackjack.apply(t, 0, { type: 'hit' }))
    t = must(blackjack.deliver(t, 'draw', { card: ['2C'] }))
    expect(blackjack.apply(t, 0, { type: 'double' })).toMatchObject({ ok: false, code: 'cannot-double' })
    expect(blackjack.legal(t, 0).map(a => a.type)).toEqual(['hit', 'stand'])
  })
})

describe('blackjack properties', () => {
  it('every round ends and each result follows the totals', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 5 }), fc.string({ minLength: 1, maxLength: 12, unit: fc.constantFrom(...'0123456789abcdef') }), fc.infiniteStream(fc.nat()), (boxes, key, stream) => {
      const it = stream[Symbol.iterator]()
      const shoe = shoeCards(key, 416)
      const s = playRound({ game: 'blackjack', seats: boxes, dealer: 0, hands: [] }, n => shoe[n], (st, seat) => {
        const moves = blackjack.legal(st, seat)
        return it.next().value % 2 === 0 ? blackjack.robot(st, seat, n => it.next().value % n) : moves[it.next().value % moves.length]
      })
      expect(blackjack.isOver(s)).toBe(true)
      // Every card dealt is one of the shoe's first draws, each used once.
      expect([...s.bank, ...s.hands.flatMap(h => h.cards)].sort()).toEqual(shoe.slice(0, s.draws).sort())
      const bank = total(s.bank).total
      const bankBj = s.bank.length === 2 && bank === 21
      const live = s.hands.some(h => total(h.cards).total <= 21 && !(h.cards.length === 2 && !h.split && total(h.cards).total === 21))
      if (!bankBj && live) expect(bank).toBeGreaterThanOrEqual(17)
      // The bank never drew on 17 or more.
      if (s.bank.length > 2) expect(total(s.bank.slice(0, -1)).total).toBeLessThan(17)
      const sc = blackjack.score(s)
      let sum = 0
      for (const h of s.hands) {
        const mine = total(h.cards).total
        const { result } = handResult(h, s.bank)
        sum += result
        const natural = h.cards.length === 2 && !h.split && mine === 21
        const stake = 2 * h.bet
        if (bankBj) expect(result).toBe(natural ? 0 : -stake)
        else if (natural) expect(result).toBe(3)
        else if (mine > 21) expect(result).toBe(-stake)
        else if (bank > 21 || mine > bank) expect(result).toBe(stake)
        else expect(result).toBe(mine === bank ? 0 : -stake)
      }
      // Points are whole chips: the receipt's canonical JSON holds no fractions (a 1.5 once stalled a table).
      expect(sc.points.every(p => Number.isSafeInteger(p))).toBe(true)
      expect(sc.points.reduce((a, b) => a + b, 0)).toBe(sum)
      expect(sc.detail.bankResult).toBe(-sum)
    }), { numRuns: 80, seed: 25 })
  })
})

describe('the bank\'s hole card, hidden (a table: every seat gets each draw as it is made)', () => {
  /** Plays `r` drawing from its shoe, the hole card delivered hidden and shown only by peek or turn. */
  function hiddenRound (r: (typeof rounds.rounds)[number]): { s: BlackjackState, stages: string[] } {
    const shoe = shoeCards(r.key, r.shoe)
    let s = blackjack.start({ game: 'blackjack', seats: r.boxes, dealer: 0, hands: [], options: { cards: r.shoe } })
    const actions = [...r.actions]
    const stages: string[] = []
    while (!blackjack.isOver(s)) {
      const stage = blackjack.pendingStage(s)
      if (stage === null) {
        const a = actions.shift() as { seat: number, action: BlackjackAction }
        s = must(blackjack.apply(s, a.seat, a.action))
        continue
      }
      stages.push(stage.stage)
      const n = stage.inputs?.n as number
      if (stage.stage === 'draw') s = must(blackjack.deliver(s, 'draw', stage.inputs?.faceUp === 0 ? {} : { card: [shoe[n]] }))
      else if (stage.stage === 'turn') s = must(blackjack.deliver(s, 'turn', { card: [shoe[n]] }))
      else {
        const bj = total([s.bank[0], shoe[n]]).total === 21
        s = must(blackjack.deliver(s, 'peek', bj ? { blackjack: ['1'], card: [shoe[n]] } : { blackjack: ['0'] }))
      }
      // While it is hidden, the hole card is in no state a seat holds.
      if (s.hole != null) expect(s.bank).toHaveLength(1)
    }
    return { s, stages }
  }

  for (const r of rounds.rounds) {
    it(`${r.name}: the same round and score as with the card dealt face up; the hole card shown once, by peek or turn`, () => {
      const { s, stages } = hiddenRound(r)
      expect(blackjack.score(s).points).toEqual(r.expected.points)
      expect(s.bank).toEqual(r.expected.bank)
      expect(s.draws).toBe(r.expected.draws)
      expect(stages.filter(x => x === 'peek' || x === 'turn').length).toBeGreaterThanOrEqual(1)
      expect(stages.filter(x => x === 'turn').length).toBeLessThanOrEqual(1)
    })
  }

  it('a peek or turn not asked for, a peek showing no blackjack, or a hidden card that is not the hole card: refused', () => {
    let s = blackjack.start({ game: 'blackjack', seats: 1, dealer: 0, hands: [], options: { cards: 416 } })
    expect(blackjack.deliver(s, 'turn', { card: ['5H'] })).toMatchObject({ ok: false, code: 'stage-not-asked' })
    expect(blackjack.deliver(s, 'draw', {})).toMatchObject({ ok: false, code: 'bad-stage' }) // the box's first card
    for (const card of ['9C', 'AS', '8D']) s = must(blackjack.deliver(s, 'draw', { card: [card] }))
    s = must(blackjack.deliver(s, 'draw', {}))
    expect(blackjack.pendingStage(s)).toEqual({ stage: 'peek', inputs: { n: 3 } })
    expect(blackjack.toAct(s)).toBeNull()
    expect(blackjack.apply(s, 0, { type: 'stand' })).toMatchObject({ ok: false, code: 'awaiting-stage' })
    expect(blackjack.deliver(s, 'peek', { blackjack: ['1'], card: ['5H'] })).toMatchObject({ ok: false, code: 'bad-stage' })
    expect(blackjack.deliver(s, 'peek', { card: ['KH'] })).toMatchObject({ ok: false, code: 'bad-stage' })
    const ended = must(blackjack.deliver(s, 'peek', { blackjack: ['1'], card: ['KH'] }))
    expect(blackjack.isOver(ended)).toBe(true)
    expect(blackjack.score(ended).points).toEqual([-2])
  })
})
