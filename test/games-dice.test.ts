import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { dice, rollDelivery, type DiceState } from '../src/core/games/dice.js'
import { checkSeries, seriesEngineSeed, seriesRoll } from '../src/core/games/dice-series.js'
import { getInt, Xoshiro256StarStar } from '../src/core/schemes/xoshiro256starstar.js'
import { fromHex, toHex } from '../src/core/bytes.js'
import { must } from './helpers/game-step.js'

// Dice series (docs/games.md "## Dice"): roll n of an expression under one key, checked against
// rolls computed independently, the PHP engine vectors, and the dice table's rules.

const fixture = JSON.parse(readFileSync(new URL('./fixtures/games/dice-series.json', import.meta.url), 'utf8')) as
  { key: string, rolls: Array<{ n: number, expression: string, engineSeed: string, rolls: number[], total: number }> }
const php = JSON.parse(readFileSync(new URL('./fixtures/vectors/php-xoshiro256starstar.json', import.meta.url), 'utf8')) as
  { vectors: Array<{ engineSeed: string, ranges: number[][], values: number[] }> }
const key = fixture.key


describe('roll n of an expression under a key', () => {
  it('matches the independently computed rolls, seed by seed', () => {
    for (const r of fixture.rolls) {
      expect(toHex(seriesEngineSeed(key, r.n, r.expression))).toBe(r.engineSeed)
      expect(createHmac('sha256', Buffer.from(key, 'hex')).update(`${r.expression}:${r.n}`).digest('hex')).toBe(r.engineSeed)
      expect(seriesRoll(key, r.n, r.expression)).toEqual({ n: r.n, expression: r.expression, engineSeed: r.engineSeed, rolls: r.rolls, total: r.total })
    }
  })

  it('rolls on the PHP engine the shared vectors pin', () => {
    for (const v of php.vectors) {
      const engine = new Xoshiro256StarStar(fromHex(v.engineSeed))
      expect(v.ranges.map(([a, b]) => getInt(engine, a, b))).toEqual(v.values)
    }
  })

  it('checks a series: a changed, skipped or repeated roll is named', () => {
    const series = fixture.rolls.map(r => ({ n: r.n, expression: r.expression, rolls: r.rolls }))
    expect(checkSeries(key, series)).toBe(null)
    const changed = series.map((r, i) => i === 2 ? { ...r, rolls: [r.rolls[0], r.rolls[1] % 6 + 1] } : r)
    expect(checkSeries(key, changed)).toMatchObject({ index: 2, code: 'roll-mismatch' })
    expect(checkSeries(key, [series[0], series[2]])).toMatchObject({ index: 1, code: 'roll-skipped' })
    expect(checkSeries(key, [series[0], series[0], series[1]])).toMatchObject({ index: 1, code: 'roll-repeated' })
    expect(checkSeries(key.replace(/^6/, '7'), series)).toMatchObject({ index: 0, code: 'roll-mismatch' })
  })
})

describe('the dice table', () => {
  const setup = (options: Record<string, unknown>) => ({ game: 'dice', seats: 3, dealer: 0, hands: [], options })

  it('plays the fixture series and ends with the reveal', () => {
    let s = dice.start(setup({ rolls: fixture.rolls.length }))
    for (const [i, r] of fixture.rolls.entries()) {
      const seat = (i * 2) % 3
      s = must(dice.apply(s, seat, { type: 'roll', n: r.n, expression: r.expression }))
      expect(dice.pendingStage(s)).toEqual({ stage: 'roll', inputs: { n: r.n, seat } })
      s = must(dice.deliver(s, 'roll', rollDelivery(key, r.n, r.expression)))
    }
    expect(dice.pendingStage(s)).toEqual({ stage: 'reveal' })
    expect(dice.deliver(s, 'reveal', { key: [key.replace(/^6/, '7')] })).toMatchObject({ ok: false, code: 'roll-mismatch' })
    s = must(dice.deliver(s, 'reveal', { key: [key] }))
    expect(dice.isOver(s)).toBe(true)
    const sc = dice.score(s)
    expect(sc.points).toEqual([0, 1, 2].map(seat => fixture.rolls.filter((_, i) => (i * 2) % 3 === seat).reduce((a, r) => a + r.total, 0)))
  })

  it('refuses a skipped or repeated number, a roll out of turn, bad dice, a bad expression', () => {
    let s = dice.start(setup({ rule: 'turns', rolls: 5 }))
    expect(dice.apply(s, 0, { type: 'roll', n: 1, expression: '1d6' })).toMatchObject({ ok: false, code: 'roll-skipped' })
    expect(dice.apply(s, 1, { type: 'roll', n: 0, expression: '1d6' })).toMatchObject({ ok: false, code: 'not-your-turn' })
    expect(dice.apply(s, 0, { type: 'roll', n: 0, expression: '01d6' })).toMatchObject({ ok: false, code: 'bad-expression' })
    s = must(dice.apply(s, 0, { type: 'roll', n: 0, expression: '1d6' }))
    expect(dice.apply(s, 0, { type: 'roll', n: 1, expression: '1d6' })).toMatchObject({ ok: false, code: 'awaiting-stage' })
    expect(dice.deliver(s, 'roll', { n: ['0'], dice: ['7'] })).toMatchObject({ ok: false, code: 'bad-stage' })
    expect(dice.deliver(s, 'roll', { n: ['1'], dice: ['3'] })).toMatchObject({ ok: false, code: 'bad-stage' })
    expect(dice.deliver(s, 'reveal', { key: [key] })).toMatchObject({ ok: false, code: 'stage-not-asked' })
    s = must(dice.deliver(s, 'roll', rollDelivery(key, 0, '1d6')))
    expect(dice.toAct(s)).toBe(1)
    expect(dice.apply(s, 1, { type: 'roll', n: 0, expression: '1d6' })).toMatchObject({ ok: false, code: 'roll-repeated' })
    s = must(dice.apply(s, 1, { type: 'end' }))
    expect(dice.apply(s, 2, { type: 'roll', n: 1, expression: '1d6' })).toMatchObject({ ok: false, code: 'hand-over' })
    // A delivered roll that the key does not give is caught at the reveal.
    let t = dice.start(setup({ rolls: 1 }))
    t = must(dice.apply(t, 2, { type: 'roll', n: 0, expression: '2d6' }))
    const honest = rollDelivery(key, 0, '2d6')
    t = must(dice.deliver(t, 'roll', { n: ['0'], dice: honest.dice.map(v => String(Number(v) % 6 + 1)) }))
    expect(dice.deliver(t, 'reveal', { key: [key] })).toMatchObject({ ok: false, code: 'roll-mismatch' })
  })

  it('under the rule any, every seat may roll; robots roll a series of 20 to its end', () => {
    let s = dice.start(setup({}))
    let x = 7
    while (dice.pendingStage(s)?.stage !== 'reveal') {
      if (dice.pendingStage(s) !== null) { const a = s.asked as { n: number, expression: string }; s = must(dice.deliver(s, 'roll', rollDelivery(key, a.n, a.expression))); continue }
      x = (x * 48271) % 2147483647
      const seat = x % 3
      expect(dice.legal(s, seat).length).toBeGreaterThan(0)
      s = must(dice.apply(s, seat, dice.robot(s, seat, n => x % n)))
    }
    expect(s.rolls).toHaveLength(20)
    s = must(dice.deliver(s, 'reveal', { key: [key] }))
    expect(dice.score(s).points.reduce((a, b) => a + b, 0)).toBe(s.rolls.reduce((a, r) => a + r.total, 0))
  })
})
