// atout-v1 and atout-drand-v1: structure of every deal, the beacon-bound key, and bad input.
import { describe, expect, it } from 'vitest'
import { ATOUT_CARDS, getCardScheme, listSchemes, getScheme, type CardScheme } from '../src/core/schemes/index.js'
import { sha256Hex } from '../src/core/bytes.js'
import { CoreInputError } from '../src/core/errors.js'

const v1 = getCardScheme('atout-v1')
const drand = getCardScheme('atout-drand-v1')
const QUICKNET = '52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971'

/** Deterministic keys for property checks: SHA-256 of a label, so a failure names its key. */
const keys = (n: number, label: string): string[] => Array.from({ length: n }, (_, i) => sha256Hex(`${label}:${i}`))

describe('atout-drand-v1', () => {
  // Computed independently with Python's hashlib (the reference in docs/schemes.md, section
  // atout-drand-v1): text = 'atout-drand-v1|' + secret + ''.join('|'+n for n in nonces) + '|' +
  // chain + '|' + str(round) + '|' + randomness; key = sha256(text).hexdigest(); then atout-v1's shuffle.
  const examples = [
    {
      secret: 's3cr3t',
      nonces: ['a', '', 'c', 'd'],
      beacon: { chainHash: QUICKNET, round: 1000, randomness: 'ab'.repeat(32) },
      text: `atout-drand-v1|s3cr3t|a||c|d|${QUICKNET}|1000|${'ab'.repeat(32)}`,
      key: '3335d770fb07d9658739f366a6a011b452a95e2bf1996771ffdd513deded987d',
      commitment: '4e738ca5563c06cfd0018299933d58db1dd8bf97f6973dc99bf6cdc64b5550bd',
      deck: ['7D', 'TH', '7S', 'AS', 'QH', '7H', 'QD', 'KC', 'TD', 'QS', 'JC', 'JS', 'JD', 'JH', 'AD', '8C', 'QC', '9D', '8S', 'TS', '9S', '9H', '8D', 'AC', '9C', 'KS', 'KD', '8H', '7C', 'KH', 'TC', 'AH'],
      coinche: [['7D', 'QH', 'TD', 'JD', 'QC', '9S', '9C', '7C'], ['TH', '7H', 'QS', 'JH', '9D', '9H', 'KS', 'KH'], ['7S', 'QD', 'JC', 'AD', '8S', '8D', 'KD', 'TC'], ['AS', 'KC', 'JS', '8C', 'TS', 'AC', '8H', 'AH']]
    },
    {
      secret: '0'.repeat(64),
      nonces: ['0', '0'],
      beacon: { chainHash: 'f'.repeat(64), round: Number.MAX_SAFE_INTEGER, randomness: '0'.repeat(64) },
      text: `atout-drand-v1|${'0'.repeat(64)}|0|0|${'f'.repeat(64)}|9007199254740991|${'0'.repeat(64)}`,
      key: '32725b886153feb644563c7526fc21a4ba91083d8813fa3fec50ffb10949cc88',
      deck: ['TC', 'TH', 'JD', 'KS', 'JH', 'QD', 'AD', 'AC', 'QC', 'JC', '7S', 'TD', '7D', 'TS', 'AS', 'QS', 'JS', '8S', '9H', 'QH', 'KD', '9S', '7H', 'AH', 'KH', '8C', '9C', '7C', '9D', '8D', 'KC', '8H']
    }
  ]

  it('matches the independently computed examples', () => {
    for (const x of examples) {
      const inputs = { secret: x.secret, nonces: x.nonces, beacon: x.beacon }
      expect(drand.keyText(inputs)).toBe(x.text)
      expect(drand.key(inputs)).toBe(x.key)
      expect(drand.deck(x.key)).toEqual(x.deck)
      if ('commitment' in x) expect(drand.commitment(x.secret)).toBe(x.commitment)
      if ('coinche' in x) expect(drand.deal('coinche', x.key).hands).toEqual(x.coinche)
    }
  })

  it('deals exactly as atout-v1 from the same key; only the key text differs', () => {
    for (const key of keys(20, 'same-deal')) {
      for (const game of ['coinche', 'belote', 'duo']) {
        const opts = { dealer: 1, taker: game === 'belote' ? 0 : undefined }
        expect(drand.deal(game, key, opts).deliveries).toEqual(v1.deal(game, key, opts).deliveries)
      }
    }
    const inputs = { secret: 's', nonces: ['1', '2', '3', '4'] }
    const beacon = { chainHash: QUICKNET, round: 7, randomness: 'cd'.repeat(32) }
    expect(drand.keyText({ ...inputs, beacon })).toBe(v1.keyText(inputs).replace(/^atout-v1/, 'atout-drand-v1') + `|${QUICKNET}|7|${'cd'.repeat(32)}`)
  })

  it('changes the key with every beacon field', () => {
    const base = { secret: 's', nonces: ['1', '2'], beacon: { chainHash: QUICKNET, round: 5, randomness: '11'.repeat(32) } }
    const k = drand.key(base)
    expect(drand.key({ ...base, beacon: { ...base.beacon, round: 6 } })).not.toBe(k)
    expect(drand.key({ ...base, beacon: { ...base.beacon, randomness: '12'.repeat(32) } })).not.toBe(k)
    expect(drand.key({ ...base, beacon: { ...base.beacon, chainHash: 'a'.repeat(64) } })).not.toBe(k)
  })

  it('refuses a missing or malformed beacon with a message naming the field', () => {
    const ok = { chainHash: QUICKNET, round: 1, randomness: 'ab'.repeat(32) }
    const cases: Array<[unknown, RegExp]> = [
      [undefined, /needs a beacon/],
      [{ ...ok, chainHash: QUICKNET.toUpperCase() }, /chain hash must be 64 lowercase hex characters/],
      [{ ...ok, chainHash: QUICKNET.slice(2) }, /chain hash must be 64 lowercase hex/],
      [{ ...ok, randomness: 'xy'.repeat(32) }, /randomness must be 64 lowercase hex/],
      [{ ...ok, round: 0 }, /round must be a positive integer, got 0/],
      [{ ...ok, round: 1.5 }, /round must be a positive integer/],
      [{ ...ok, round: '7' }, /round must be a positive integer/],
      [{ ...ok, round: 2 ** 53 }, /round must be a positive integer/]
    ]
    for (const [beacon, message] of cases) {
      expect(() => drand.key({ secret: 's', nonces: ['1'], beacon: beacon as any }), message.source).toThrow(message)
    }
    expect(() => v1.key({ secret: 's', nonces: ['1'], beacon: ok })).toThrow(/atout-v1 takes no beacon/)
  })
})

describe('atout deals: every deal is a permutation, every seat gets its count', () => {
  const schemes: CardScheme[] = [v1, drand]
  it.each(schemes.map(s => [s.id, s] as const))('%s', (_id, scheme) => {
    const sorted = [...ATOUT_CARDS].sort()
    for (const key of keys(200, scheme.id)) {
      const deck = scheme.deck(key)
      expect([...deck].sort()).toEqual(sorted)
      const coinche = scheme.deal('coinche', key)
      expect(coinche.hands?.map(h => h.length)).toEqual([8, 8, 8, 8])
      expect(coinche.hands?.flat().sort()).toEqual(sorted)
      const dealer = key.charCodeAt(0) % 4
      const taker = key.charCodeAt(1) % 4
      const belote = scheme.deal('belote', key, { dealer, taker })
      expect(belote.hands?.map(h => h.length)).toEqual([8, 8, 8, 8])
      expect(belote.hands?.flat().sort()).toEqual(sorted)
      expect(belote.hands?.[taker].at(-1)).toBe(belote.turnedUp)
      const duo = scheme.deal('duo', key, { dealer: dealer % 2 })
      expect(duo.hands?.map(h => h.length)).toEqual([16, 16])
      expect(duo.hands?.flat().sort()).toEqual(sorted)
      expect(duo.receiver).toBe(1 - dealer % 2)
      for (const d of [coinche, belote, duo]) {
        // deliveries cover the deck exactly once (belote's turned-up card is shown, then taken)
        const cards = d.deliveries.filter(x => x.stage !== 'turnUp').flatMap(x => x.cards)
        expect(cards.sort()).toEqual(sorted)
      }
    }
  })
})

describe('registry and bad input', () => {
  it('lists every scheme and finds each by id', () => {
    const ids = listSchemes().map(s => s.id)
    expect(ids).toEqual(['atout-v1', 'atout-drand-v1', 'tarot-v1', 'bitjack21', 'shoe-v1', 'dice-v1', 'blind-v1'])
    for (const id of ids) expect(getScheme(id).id).toBe(id)
    expect(() => getScheme('atout-v2')).toThrow(CoreInputError)
    expect(() => getScheme('atout-v2')).toThrow(/unknown scheme "atout-v2" \(known: atout-v1, /)
    expect(() => getCardScheme('dice-v1')).toThrow(/dice-v1 rolls dice; it deals no cards/)
  })

  it('describes games, seats and stages', () => {
    expect(v1.games).toEqual(['coinche', 'belote', 'duo'])
    expect(v1.seatsFor('coinche')).toEqual([4])
    expect(v1.seatsFor('duo')).toEqual([2])
    expect(v1.stagesFor('belote')).toEqual(['deal', 'turnUp', 'take'])
    expect(v1.stagesFor('duo')).toEqual(['deal', 'faceUp'])
    expect(drand.beacon).toBe(true)
    expect(v1.beacon).toBe(false)
  })

  it('refuses bad input with one specific message each', () => {
    const key = sha256Hex('k')
    const cases: Array<[() => unknown, RegExp]> = [
      [() => v1.deal('tarot', key), /atout-v1 has no game "tarot" \(it has coinche, belote, duo\)/],
      [() => v1.seatsFor('poker'), /atout-v1 has no game "poker"/],
      [() => v1.deal('coinche', key, { seats: 3 }), /atout-v1 coinche is for 4 seats, got 3/],
      [() => v1.deal('duo', key, { seats: 4 }), /duo is for 2 seats, got 4/],
      [() => v1.deal('belote', key, { dealer: 4 }), /belote dealer must be a seat number from 0 to 3, got 4/],
      [() => v1.deal('belote', key, { dealer: 0, taker: -1 }), /belote taker must be a seat number from 0 to 3, got -1/],
      [() => v1.deal('duo', key, { dealer: 2 }), /duo dealer must be a seat number from 0 to 1, got 2/],
      [() => v1.deal('coinche', key, { taker: 1 }), /a taker applies only to belote, not coinche/],
      [() => v1.deal('coinche', key.toUpperCase()), /key must be 64 lowercase hex characters/],
      [() => v1.deck('abc'), /key must be 64 lowercase hex characters, got "abc"/],
      [() => v1.key({ secret: 's', nonces: [] }), /needs one nonce per seat/],
      [() => v1.key({ secret: 's', nonces: ['a', 7 as any] }), /nonce of seat 1 must be a string, got number/],
      [() => v1.key({ secret: 'a\ud800b', nonces: ['x'] }), /secret is not well-formed Unicode/],
      [() => v1.commitment('s', 'salt'), /commits to the secret alone/]
    ]
    for (const [call, message] of cases) {
      expect(call, message.source).toThrow(CoreInputError)
      expect(call).toThrow(message)
    }
  })
})
