// PHP's Xoshiro256** + Randomizer::getInt semantics, and dice-v1 on top of it. dice-v1 expected
// values come from an independent Python implementation (hashlib, hmac, a Python Xoshiro256**
// checked against the shared PHP vectors first).
import { describe, expect, it } from 'vitest'
import { getDiceScheme, getInt, parseRoll, rollWithEngineSeed, Xoshiro256StarStar } from '../src/core/schemes/index.js'
import { fromHex, sha256 } from '../src/core/bytes.js'
import { CoreInputError } from '../src/core/errors.js'

const dice = getDiceScheme('dice-v1')
const engine = (label: string): Xoshiro256StarStar => new Xoshiro256StarStar(sha256(label))

describe('dice-v1 (independent Python values)', () => {
  const inputs = { secret: 'secret', nonces: ['n1', 'n2'] }
  const key = '61dd913140b1218c72baf5d2f127257207d310e094b5e45eea716cef68a67fda'

  it('key text and key', () => {
    expect(dice.keyText(inputs)).toBe('dice-v1|secret|n1|n2')
    expect(dice.key(inputs)).toBe(key)
  })

  const expected: Record<string, { engineSeed: string, rolls: number[], total: number }> = {"3d20": {"engineSeed": "d51683151318e182e1c96c28644e8610e19afba31596242918b66db04d875f40", "rolls": [6, 1, 5], "total": 12}, "1d6": {"engineSeed": "fa479419d6312b72b6b52870191cc49597b52d897de3bc1763e739aba111a809", "rolls": [1], "total": 1}, "10d1000000000000": {"engineSeed": "f4115b05ccd24dd4afc4440c5810e6b02d8b78426e49cd299dd0b1fb22d97966", "rolls": [882325201803, 719860040010, 720589934175, 838095761060, 437010174438, 793762994412, 48726645921, 647022590055, 547504800929, 132218818577], "total": 5767116961380}, "2d2": {"engineSeed": "8ca16aea183c97a465caecdcd15c18de7626c346c1788a9c7993937bb3095c6e", "rolls": [2, 2], "total": 4}}
  for (const [expression, want] of Object.entries(expected)) {
    it(`rolls ${expression}`, () => {
      const r = dice.roll(key, expression)
      expect(r.engineSeed).toBe(want.engineSeed)
      expect(r.rolls).toEqual(want.rolls)
      expect(r.total).toBe(want.total)
      expect(r.expression).toBe(expression)
    })
  }
})

describe('getInt semantics', () => {
  it('a range of 2^32 values returns the low 32 bits unchanged; 2^32+1 values switch to 64-bit outputs', () => {
    const a = engine('full'); const b = engine('full')
    for (let i = 0; i < 20; i++) expect(getInt(a, 0, 4294967295)).toBe(Number(b.next64() & 0xffffffffn))
    const c = engine('wide'); const d = engine('wide')
    for (let i = 0; i < 20; i++) {
      const v = getInt(c, 0, 4294967296)
      expect(v).toBeLessThanOrEqual(4294967296)
      // no 64-bit value is rejected for this range except above 2^64 − (2^64 mod (2^32+1)): compare directly
      expect(BigInt(v)).toBe(d.next64() % 4294967297n)
    }
  })

  it('power-of-two ranges mask and never redraw; others redraw and stay in range', () => {
    const a = engine('mask'); const b = engine('mask')
    for (let i = 0; i < 50; i++) expect(getInt(a, 10, 17)).toBe(10 + Number(b.next64() & 7n))
    const e = engine('range')
    for (let i = 0; i < 2000; i++) {
      const v = getInt(e, -5, 5)
      expect(v).toBeGreaterThanOrEqual(-5)
      expect(v).toBeLessThanOrEqual(5)
    }
    // min = max still consumes one output, as PHP does
    const f = engine('one'); const g = engine('one')
    expect(getInt(f, 3, 3)).toBe(3)
    g.next64()
    expect(f.next64()).toBe(g.next64())
  })

  it('a range just above 2^31 rejects about half the draws, and each rejection consumes one output', () => {
    // umax+1 = 2^31+1: outputs >= 2^32 − (2^32 mod m) = 2^32 − (2^31 − 1) are redrawn
    const m = 2 ** 31 + 1
    const limit = 2 ** 32 - (2 ** 32 % m)
    const a = engine('reject'); const b = engine('reject')
    let rejections = 0
    for (let i = 0; i < 200; i++) {
      const got = getInt(a, 0, m - 1)
      let x = Number(b.next64() & 0xffffffffn)
      while (x >= limit) { rejections++; x = Number(b.next64() & 0xffffffffn) }
      expect(got).toBe(x % m)
    }
    expect(rejections).toBeGreaterThan(50)
  })

  it('refuses bad engine seeds and bounds', () => {
    expect(() => new Xoshiro256StarStar(new Uint8Array(32))).toThrow(/must not be all zero bytes/)
    expect(() => new Xoshiro256StarStar(new Uint8Array(31))).toThrow(/seed is 32 bytes, got 31/)
    expect(() => getInt(engine('x'), 2, 1)).toThrow(/min must be less than or equal to max, got 2 > 1/)
    expect(() => getInt(engine('x'), 0, 2 ** 53)).toThrow(/safe integers/)
  })
})

describe('dice expressions', () => {
  it('parses NdS in its one canonical spelling', () => {
    expect(parseRoll('3d20')).toEqual({ count: 3, sides: 20, text: '3d20' })
    for (const [bad, message] of [
      ['d20', /a roll is written NdS/], ['3D20', /NdS/], ['03d20', /NdS/], ['3d020', /NdS/], ['3d20+1', /NdS/], [' 3d20', /NdS/],
      ['0d6', /NdS/], ['1001d6', /at most 1000 dice, got 1001/], ['1d1', /2 to 1000000000000 sides, got 1/],
      ['1d1000000000001', /2 to 1000000000000 sides/]
    ] as const) {
      expect(() => parseRoll(bad), bad).toThrow(CoreInputError)
      expect(() => parseRoll(bad)).toThrow(message)
    }
  })

  it('rolls on an engine seeded with exactly the given bytes', () => {
    const seed = fromHex('0101010101010101010101010101010101010101010101010101010101010101', 'seed', 32)
    // the shared PHP vector's first two getInt(1, 6) values on this seed are 3 and 3
    expect(rollWithEngineSeed(seed, '2d6').rolls).toEqual([3, 3])
  })

  it('every die lands in 1..S, and each face comes up', () => {
    const key = dice.key({ secret: 'faces', nonces: ['x'] })
    const r = dice.roll(key, '600d6')
    expect(r.rolls).toHaveLength(600)
    expect(new Set(r.rolls)).toEqual(new Set([1, 2, 3, 4, 5, 6]))
    expect(r.total).toBe(r.rolls.reduce((a, b) => a + b, 0))
  })

  it('refuses a key that is not 64 lowercase hex', () => {
    expect(() => dice.roll('ab', '1d6')).toThrow(/key must be 64 lowercase hex characters/)
  })
})
