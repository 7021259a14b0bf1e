// The shared reference vectors (computed by independent implementations, see
// /work/shared/vectors/README.md): every field must come out bit for bit, through the vector checker
// and through the registry API the protocol uses.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { checkVectorFile } from '../src/core/vectors.js'
import { ATOUT_CARDS, atoutPermutation, getCardScheme, getInt, Xoshiro256StarStar } from '../src/core/schemes/index.js'
import { fromHex } from '../src/core/bytes.js'
import { CoreInputError } from '../src/core/errors.js'

const load = (name: string): any => JSON.parse(readFileSync(new URL(`./fixtures/vectors/${name}.json`, import.meta.url), 'utf8'))
const FILES = ['atout-v1', 'bitjack21', 'php-xoshiro256starstar']

describe('shared vectors through the checker', () => {
  for (const name of FILES) {
    it(`${name}: every vector passes`, () => {
      const doc = load(name)
      const report = checkVectorFile(doc)
      expect(report.results.filter(r => r.mismatches.length > 0)).toEqual([])
      expect(report.failed).toBe(0)
      // every vector is reported, plus atout's starting deck and rejection stream
      expect(report.passed).toBe(doc.vectors.length + (name === 'atout-v1' ? 2 : 0))
    })
  }

  it('fails a vector whose expected value is wrong, naming the field', () => {
    const mutations: Array<[string, (d: any) => void, string, string]> = [
      ['atout-v1', d => { d.vectors[2].key = d.vectors[2].key.replace(/^./, (c: string) => c === '0' ? '1' : '0') }, 'vectors[2]', 'key'],
      ['atout-v1', d => { d.vectors[0].text += ' ' }, 'vectors[0]', 'text'],
      ['atout-v1', d => { d.vectors[1].commitment = d.vectors[0].commitment }, 'vectors[1]', 'commitment'],
      ['atout-v1', d => { d.vectors[3].deck.reverse() }, 'vectors[3]', 'deck'],
      ['atout-v1', d => { d.vectors[4].coinche[0][7] = d.vectors[4].coinche[1][7] }, 'vectors[4]', 'coinche'],
      ['atout-v1', d => { d.vectors[5].belote.turnedUp = 'AS' === d.vectors[5].belote.turnedUp ? 'KS' : 'AS' }, 'vectors[5]', 'belote.turnedUp'],
      ['atout-v1', d => { d.vectors[0].belote.hands[1].push('7C') }, 'vectors[0]', 'belote.hands'],
      ['atout-v1', d => { d.vectors[1].belote.firstFive.reverse() }, 'vectors[1]', 'belote.firstFive'],
      ['atout-v1', d => { d.vectors[6].duo.receiver = 0 }, 'vectors[6]', 'duo.receiver'],
      ['atout-v1', d => { d.vectors[7].duo.faceUp = d.vectors[7].duo.faceDown }, 'vectors[7]', 'duo.faceUp'],
      ['atout-v1', d => { d.vectors[7].duo.faceDown[0].sort() }, 'vectors[7]', 'duo.faceDown'],
      ['atout-v1', d => { d.vectors[0].belote.taker = (d.vectors[0].belote.taker + 1) % 4 }, 'vectors[0]', 'belote.hands'],
      ['atout-v1', d => { d.vectors[0].keys = d.vectors[0].key }, 'vectors[0]', 'keys'],
      ['atout-v1', d => { d.rejection.deck[0] = d.rejection.deck[1] }, 'rejection', 'rejection.deck'],
      ['atout-v1', d => { d.rejection.numbers.pop() }, 'rejection', 'rejection.deck'],
      ['atout-v1', d => { d.cards[0] = '8C' }, 'cards', 'cards'],
      ['bitjack21', d => { d.vectors[1].cards[415] = (d.vectors[1].cards[415] + 1) % 52 }, 'vectors[1]', 'cards'],
      ['bitjack21', d => { d.vectors[2].commitment = d.vectors[0].commitment }, 'vectors[2]', 'commitment'],
      ['bitjack21', d => { d.vectors[3].rx = 'x' }, 'vectors[3]', 'commitment'],
      ['php-xoshiro256starstar', d => { d.vectors[0].values[10] += 1 }, 'vectors[0]', 'values'],
      ['php-xoshiro256starstar', d => { d.vectors[1].firstOutputs[3] = d.vectors[1].firstOutputs[3].toUpperCase() }, 'vectors[1]', 'firstOutputs'],
      ['php-xoshiro256starstar', d => { d.version = 2 }, 'file', 'version']
    ]
    for (const [file, mutate, vector, field] of mutations) {
      const doc = load(file)
      mutate(doc)
      const report = checkVectorFile(doc)
      expect(report.failed, `${file} ${vector} ${field}`).toBe(1)
      const bad = report.results.find(r => r.mismatches.length > 0)
      expect(bad?.name).toBe(vector)
      expect(bad?.mismatches.map(m => m.field)).toContain(field)
    }
  })

  it('refuses files that are not in the format', () => {
    const cases: Array<[unknown, RegExp]> = [
      [[], /must be a JSON object/],
      [{ vectors: [] }, /no "scheme"/],
      [{ scheme: 'atout-v1' }, /no "vectors" array/],
      [{ scheme: 'atout-v9', vectors: [] }, /no checker for scheme "atout-v9"/],
      [{ scheme: 'atout-v1', vectors: [{ secret: 1, nonces: ['a'], key: 'x' }] }, /vectors\[0\]: secret must be a string/],
      [{ scheme: 'atout-v1', vectors: [{ secret: 's', nonces: [] }] }, /nonces must be a non-empty array/],
      [{ scheme: 'atout-v1', vectors: [{ secret: 's', nonces: ['a'] }] }, /vectors\[0\] has no output field/],
      [{ scheme: 'atout-v1', vectors: [{ secret: 's', nonces: ['a', 'b', 'c', 'd'], belote: { dealer: 4, taker: 0 } }] }, /belote.dealer must be a seat number from 0 to 3, got 4/],
      [{ scheme: 'atout-v1', vectors: [], rejection: { numbers: [-1], deck: [] } }, /rejection.numbers must be an array of unsigned 32-bit/],
      [{ scheme: 'bitjack21', vectors: [{ r1: 'a', r2: 'b', rx: '', n: 417, cards: [] }] }, /n must be a shoe size from 1 to 416, got 417/],
      [{ scheme: 'php-xoshiro256starstar', vectors: [{ engineSeed: 'zz', values: [] }] }, /engineSeed must be hex/],
      [{ scheme: 'php-xoshiro256starstar', vectors: [{ engineSeed: '01'.repeat(31), values: [] }] }, /engineSeed must be 32 bytes/],
      [{ scheme: 'php-xoshiro256starstar', vectors: [{ engineSeed: '01'.repeat(32), ranges: [[2, 1]], values: [1] }] }, /ranges must be an array of \[min, max\]/]
    ]
    for (const [doc, message] of cases) {
      expect(() => checkVectorFile(doc), message.source).toThrow(CoreInputError)
      expect(() => checkVectorFile(doc)).toThrow(message)
    }
  })
})

describe('atout-v1 through the registry', () => {
  const scheme = getCardScheme('atout-v1')
  const doc = load('atout-v1')

  it('computes text, key, commitment, deck and every deal of every vector', () => {
    expect([...ATOUT_CARDS]).toEqual(doc.cards)
    for (const v of doc.vectors) {
      const inputs = { secret: v.secret, nonces: v.nonces }
      expect(scheme.keyText(inputs)).toBe(v.text)
      expect(scheme.key(inputs)).toBe(v.key)
      expect(scheme.commitment(v.secret)).toBe(v.commitment)
      expect(scheme.deck(v.key)).toEqual(v.deck)
      if (v.coinche !== undefined) {
        const deal = scheme.deal('coinche', v.key, { seats: 4 })
        expect(deal.hands).toEqual(v.coinche)
        expect(deal.deliveries.map(d => d.cards)).toEqual(v.coinche)
      }
      if (v.belote !== undefined) {
        const b = v.belote
        const before = scheme.deal('belote', v.key, { dealer: b.dealer })
        expect(before.hands).toBeUndefined()
        expect(before.deliveries.map(d => d.stage)).toEqual(['deal', 'deal', 'deal', 'deal', 'turnUp'])
        expect(before.deliveries.filter(d => d.stage === 'deal').map(d => d.cards)).toEqual(b.firstFive)
        expect(before.deliveries[4]).toEqual({ stage: 'turnUp', seat: null, public: true, cards: [b.turnedUp] })
        const after = scheme.deal('belote', v.key, { dealer: b.dealer, taker: b.taker })
        expect(after.turnedUp).toBe(b.turnedUp)
        expect(after.hands).toEqual(b.hands)
        // a seat's deliveries, in order, make up its hand
        for (let s = 0; s < 4; s++) {
          expect(after.deliveries.filter(d => d.seat === s).flatMap(d => d.cards)).toEqual(b.hands[s])
        }
      }
      if (v.duo !== undefined) {
        const u = v.duo
        const deal = scheme.deal('duo', v.key, { dealer: u.dealer })
        expect(deal.receiver).toBe(u.receiver)
        expect(deal.deliveries.filter(d => d.stage === 'deal').map(d => d.cards)).toEqual(u.faceDown)
        expect(deal.deliveries.filter(d => d.stage === 'faceUp').map(d => d.cards)).toEqual(u.faceUp)
        expect(deal.deliveries.every(d => d.public === (d.stage === 'faceUp'))).toBe(true)
      }
    }
  })

  it('forced-rejection stream: takes every rejection path and consumes exactly the numbers given', () => {
    const numbers: number[] = doc.rejection.numbers
    let pos = 0
    const perm = atoutPermutation('', { next: () => { if (pos >= numbers.length) throw new Error('ran out'); return numbers[pos++] } })
    expect(Array.from(perm, i => ATOUT_CARDS[i])).toEqual(doc.rejection.deck)
    expect(pos).toBe(numbers.length)
    // the stream really exercises rejection: more numbers than swaps
    expect(numbers.length).toBeGreaterThan(31)
  })
})

describe('PHP Xoshiro256** engine', () => {
  const doc = load('php-xoshiro256starstar')
  it('reproduces first outputs and getInt values of every vector', () => {
    for (const v of doc.vectors) {
      const e = new Xoshiro256StarStar(fromHex(v.engineSeed, 'seed', 32))
      expect(Array.from({ length: 4 }, () => e.next64().toString(16).padStart(16, '0'))).toEqual(v.firstOutputs)
      const g = new Xoshiro256StarStar(fromHex(v.engineSeed, 'seed', 32))
      expect(v.ranges.map(([a, b]: number[]) => getInt(g, a, b))).toEqual(v.values)
    }
  })
})
