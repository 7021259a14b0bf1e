// Each refusal code of the coinche, belote and duo engines (docs/games.md, "Refusal codes"), from a
// state built by legal actions; and the robots: they bid on strong hands and play hands to the end.
import { describe, expect, it } from 'vitest'
import { belote } from '../src/core/games/belote.js'
import { coinche } from '../src/core/games/coinche.js'
import { duo } from '../src/core/games/duo.js'
import { cardFault } from '../src/core/games/cards32.js'
import type { GameEngine } from '../src/core/games/types.js'

function run<S>(engine: GameEngine<S, any>, state: S, steps: [number, unknown][]): S {
  for (const [seat, action] of steps) {
    const r = engine.apply(state, seat, action)
    if (!r.ok) throw new Error(`${r.code}: ${r.message}`)
    state = r.state
  }
  return state
}
const code = (r: { ok: boolean, code?: string }) => (r.ok ? 'accepted' : r.code)

// Trump hearts, bid by seat 0. Seat 1 holds trumps and no spades; seat 2 holds JH above seat 1's 9H.
const hands = [
  ['7S', 'AS', '7H', '8C', '9C', 'TC', '7D', '8D'],
  ['9H', 'AH', 'AD', 'TD', 'KD', 'QD', 'JD', '9D'],
  ['JH', '8H', 'KS', 'QS', 'JS', '9S', '8S', 'AC'],
  ['TH', 'KH', 'QH', 'TS', 'JC', 'QC', 'KC', 'AC'.replace('A', '7')]
]
const start = () => coinche.start({ game: 'coinche', seats: 4, dealer: 3, hands })

describe('coinche refusals', () => {
  it('auction: turn, bids, coinche, surcoinche, phase', () => {
    const s0 = start()
    expect(code(coinche.apply(s0, 1, { type: 'pass' }))).toBe('not-your-turn')
    expect(code(coinche.apply(s0, 0, { type: 'bid', value: 85, suit: 'H' }))).toBe('bad-bid')
    expect(code(coinche.apply(s0, 0, { type: 'bid', value: 80, suit: 'X' as never }))).toBe('bad-bid')
    expect(code(coinche.apply(s0, 0, { type: 'coinche' }))).toBe('coinche-not-allowed')
    expect(code(coinche.apply(s0, 0, { type: 'surcoinche' }))).toBe('surcoinche-not-allowed')
    expect(code(coinche.apply(s0, 0, { type: 'card', card: '7S' }))).toBe('wrong-phase')
    expect(code(coinche.apply(s0, 0, { kind: 'x' } as never))).toBe('bad-action')
    const s1 = run(coinche, s0, [[0, { type: 'bid', value: 90, suit: 'H' }]])
    expect(code(coinche.apply(s1, 1, { type: 'bid', value: 90, suit: 'S' }))).toBe('bid-too-low')
    const s2 = run(coinche, s1, [[1, { type: 'pass' }]])
    expect(code(coinche.apply(s2, 2, { type: 'coinche' }))).toBe('coinche-not-allowed')
    const s3 = run(coinche, s2, [[2, { type: 'pass' }], [3, { type: 'coinche' }]])
    expect(coinche.toAct(s3)).toBe(0)
    expect(coinche.legal(s3, 0)).toEqual([{ type: 'pass' }, { type: 'surcoinche' }])
    expect(code(coinche.apply(s3, 0, { type: 'bid', value: 100, suit: 'H' }))).toBe('after-coinche')
    const s4 = run(coinche, s3, [[0, { type: 'surcoinche' }]])
    expect(s4.auction.multiplier).toBe(4)
    expect(code(coinche.apply(s4, 0, { type: 'pass' }))).toBe('wrong-phase')
    expect(code(coinche.apply(s4, 0, { type: 'card', card: 'AH' }))).toBe('card-not-held')
    expect(code(coinche.apply(s4, 0, { type: 'card', card: 'ZZ' }))).toBe('bad-action')
  })
  it('play: follow, trump, over-trump, partner exception', () => {
    const s = run(coinche, start(), [[0, { type: 'bid', value: 80, suit: 'H' }], [1, { type: 'pass' }], [2, { type: 'pass' }], [3, { type: 'pass' }]])
    const t1 = run(coinche, s, [[0, { type: 'card', card: 'AS' }]])
    expect(code(coinche.apply(t1, 1, { type: 'card', card: 'AD' }))).toBe('must-trump')
    expect(coinche.legal(t1, 1)).toEqual([{ type: 'card', card: '9H' }, { type: 'card', card: 'AH' }])
    const t2 = run(coinche, t1, [[1, { type: 'card', card: '9H' }]])
    expect(code(coinche.apply(t2, 2, { type: 'card', card: 'JH' }))).toBe('must-follow')
    const u = run(coinche, s, [[0, { type: 'card', card: '7H' }], [1, { type: 'card', card: '9H' }]])
    expect(code(coinche.apply(u, 2, { type: 'card', card: '8H' }))).toBe('must-over-trump')
    expect(coinche.legal(u, 2)).toEqual([{ type: 'card', card: 'JH' }])
    const v = run(coinche, u, [[2, { type: 'card', card: 'JH' }]])
    // seat 3 cannot beat JH: any trump will do, but it must play one
    expect(coinche.legal(v, 3).map((a) => (a as { card: string }).card)).toEqual(['TH', 'KH', 'QH'])
  })
  it('the partner exception and over-trumping a trump already played (cardFault)', () => {
    // seat 2, void in spades with a trump: free while its partner seat 0 wins, must trump when seat 1 wins
    const trick = [{ seat: 0, card: 'AS' }, { seat: 1, card: '7S' }]
    expect(cardFault('9D', ['9D', '7H'], trick, 'H', 2, 0)).toBe(null)
    expect(cardFault('9D', ['9D', '7H'], [{ seat: 1, card: 'AS' }], 'H', 2, 0)).toBe('must-trump')
    const trumped = [{ seat: 1, card: 'AS' }, { seat: 2, card: '8H' }]
    expect(cardFault('KD', ['7H', '9H', 'KD'], trumped, 'H', 0, 2)).toBe(null)
    expect(cardFault('7H', ['7H', '9H', 'KD'], trumped, 'H', 3, 1)).toBe('must-over-trump')
    expect(cardFault('7H', ['7H', '9H', 'KD'], [{ seat: 0, card: 'AS' }, { seat: 1, card: '8H' }], 'H', 2, 0)).toBe('must-over-trump')
    expect(cardFault('KD', ['7H', 'KD'], [{ seat: 0, card: 'AS' }, { seat: 1, card: '8H' }], 'H', 2, 0)).toBe('must-trump')
    expect(cardFault('7H', ['7H', 'KD'], [{ seat: 0, card: 'AS' }, { seat: 1, card: '8H' }], 'H', 2, 0)).toBe(null)
  })
})

describe('belote refusals', () => {
  const setup = { game: 'belote', seats: 4, dealer: 3, hands: [['7S', '8S', '9S', 'TS', 'JS'], ['QS', 'KS', 'AS', '7H', '8H'], ['9H', 'TH', 'JH', 'QH', 'KH'], ['AH', '7D', '8D', '9D', 'TD']], table: { turnUp: ['JD'] } }
  it('the take rounds, the stage and the turn', () => {
    const s = belote.start(setup)
    expect(belote.legal(s, 0)).toEqual([{ type: 'pass' }, { type: 'take' }])
    expect(code(belote.apply(s, 0, { type: 'take', suit: 'S' }))).toBe('bad-suit')
    expect(code(belote.apply(s, 0, { type: 'card', card: '7S' }))).toBe('wrong-phase')
    const r2 = run(belote, s, [[0, { type: 'pass' }], [1, { type: 'pass' }], [2, { type: 'pass' }], [3, { type: 'pass' }]])
    expect(code(belote.apply(r2, 0, { type: 'take', suit: 'D' }))).toBe('bad-suit')
    expect(code(belote.apply(r2, 0, { type: 'take' }))).toBe('bad-suit')
    const t = run(belote, r2, [[0, { type: 'take', suit: 'S' }]])
    expect(belote.pendingStage(t)).toEqual({ stage: 'take', inputs: { taker: 0 } })
    expect(belote.toAct(t)).toBe(null)
    expect(code(belote.apply(t, 1, { type: 'card', card: 'QS' }))).toBe('waiting-stage')
    expect(code(belote.deliver(t, 'take', { 0: ['KD', 'QD', 'AD'], 1: ['AD', 'JC', 'QC'], 2: ['KC', 'AC', '7C'], 3: ['8C', '9C', 'TC'] }))).toBe('bad-stage')
    expect(code(belote.deliver(t, 'dog', {}))).toBe('no-stage')
    const all = run(belote, r2, [[0, { type: 'pass' }], [1, { type: 'pass' }], [2, { type: 'pass' }], [3, { type: 'pass' }]])
    expect(belote.isOver(all)).toBe(true)
    expect(belote.score(all).points).toEqual([0, 0, 0, 0])
    expect(code(belote.apply(all, 0, { type: 'pass' }))).toBe('hand-over')
  })
})

describe('duo refusals', () => {
  const faceDown = [['7S', '8S', '9S', 'TS', 'JS', 'QS', 'KS', 'AS'], ['7H', '8H', '9H', 'TH', 'JH', 'QH', 'KH', 'AH']]
  const faceUp = { 0: ['7D', '8D', '9D', 'TD', 'JD', 'QD', 'KD', 'AD'], 1: ['7C', '8C', '9C', 'TC', 'JC', 'QC', 'KC', 'AC'] }
  it('waits for the face-up packets, then only uncovered cards are playable', () => {
    const s = duo.start({ game: 'duo', seats: 2, dealer: 0, hands: faceDown })
    expect(duo.pendingStage(s)).toEqual({ stage: 'faceUp' })
    expect(code(duo.apply(s, 1, { type: 'pass' }))).toBe('waiting-stage')
    expect(code(duo.deliver(s, 'faceUp', { 0: faceUp[0] }))).toBe('bad-stage')
    const d = duo.deliver(s, 'faceUp', faceUp)
    if (!d.ok) throw new Error(d.code)
    expect(code(duo.apply(d.state, 1, { type: 'bid', value: 'generale', suit: 'S' }))).toBe('bad-bid')
    const p = run(duo, d.state, [[1, { type: 'bid', value: 80, suit: 'D' }], [0, { type: 'pass' }]])
    expect(duo.toAct(p)).toBe(1)
    expect(code(duo.apply(p, 1, { type: 'card', card: '7H' }))).toBe('card-not-playable')
    const q = run(duo, p, [[1, { type: 'card', card: '7C' }]])
    // seat 0 must trump (diamonds) the club led: its uncovered cards are its face-up diamonds
    expect(code(duo.apply(q, 0, { type: 'card', card: '7S' }))).toBe('card-not-playable')
    const r = run(duo, q, [[0, { type: 'card', card: '7D' }]])
    // seat 0 won with trump; the spade under its 7D is now turned up and playable
    expect(duo.toAct(r)).toBe(0)
    expect(duo.legal(r, 0).map((a) => (a as { card: string }).card)).toContain('7S')
    expect(duo.legal(r, 1).length).toBe(0)
  })
})

describe('robots', () => {
  it('bid a strong hand at its estimate (JH 9H AH TH: 55 + 4 x 10, two side aces: 22; 117 → 110)', () => {
    const strong = [['JH', '9H', 'AH', 'TH', 'AS', 'AD', '7C', '8C'], ['7S', '8S', '9S', 'TS', 'JS', 'QS', 'KS', '7D'], ['8D', '9D', 'TD', 'JD', 'QD', 'KD', '9C', 'TC'], ['JC', 'QC', 'KC', 'AC', 'KH', 'QH', '8H', '7H']]
    const s = coinche.start({ game: 'coinche', seats: 4, dealer: 3, hands: strong })
    const bid = coinche.robot(s, 0, () => 0)
    expect(bid).toEqual({ type: 'bid', value: 110, suit: 'H' })
    const after = run(coinche, s, [[0, bid]])
    // seat 1's seven spades: 51 trump points + 70 = 121, above 110
    expect(coinche.robot(after, 1, () => 0)).toEqual({ type: 'bid', value: 120, suit: 'S' })
  })
})

