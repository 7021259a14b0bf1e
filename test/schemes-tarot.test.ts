// tarot-v1: the sha256-fisher-yates-v1 shuffle, deals for 3/4/5 players, the petit sec redeal and
// the allocation fingerprint. Expected values come from an independent Python implementation of
// docs/schemes.md (hashlib + json.dumps(sort_keys=True, separators=(',', ':'))), not from this code.
import { describe, expect, it } from 'vitest'
import { dealTarot, getCardScheme, layOut, petitSecSeat, seedFromKey, TAROT_CARDS, TAROT_LAYOUT, tarotDeck, tarotFingerprint } from '../src/core/schemes/index.js'
import { sha256Hex } from '../src/core/bytes.js'
import { CoreInputError } from '../src/core/errors.js'

const tarot = getCardScheme('tarot-v1')
const idx = (code: string): number => TAROT_CARDS.indexOf(code)

describe('tarot-v1 reference values (independent Python)', () => {
  it('seed 4242, 4 players, dealer 0: deck, hands, dog, fingerprint', () => {
    const d = dealTarot('4242', 4, 0)
    expect(d.deck).toEqual(['5C', '6D', '3C', 'CH', 'CS', 'T19', 'KD', 'AC', 'AH', 'T17', 'T09', '5S', 'T18', '4S', 'JD', 'T14', 'T21', '5H', 'T02', '7C', '4C', '5D', 'JS', 'T20', 'CC', 'JC', '2H', 'T03', 'T07', 'KH', '9D', 'T08', '3S', '6S', 'QD', '7D', '2S', 'JH', 'T01', 'T12', '9C', '3D', '8H', 'KC', 'QH', 'TH', '8S', '9H', 'QC', 'AD', 'KS', '4D', 'T06', 'TC', 'TD', 'EXC', 'AS', 'QS', 'T11', 'T04', '6H', '7H', '6C', 'TS', '2C', 'CD', 'T05', 'T15', '8C', '8D', '2D', '7S', '9S', '4H', 'T16', 'T10', 'T13', '3H'])
    expect(d.hands).toEqual([['T17', 'T09', '5S', '5D', 'JS', 'T20', '6S', 'QD', '7D', 'TH', '8S', '9H', 'QS', 'T11', 'T04', '8D', '2D', '7S'], ['5C', '6D', '3C', 'T18', '4S', 'JD', 'CC', 'JC', '2H', '2S', 'JH', 'T01', 'QC', 'AD', 'KS', '6H', '7H', '6C'], ['CH', 'CS', 'T19', 'T14', 'T21', '5H', 'T03', 'T07', 'KH', 'T12', '9C', '3D', '4D', 'T06', 'TC', 'TS', '2C', 'CD'], ['KD', 'AC', 'AH', 'T02', '7C', '4C', '9D', 'T08', '3S', '8H', 'KC', 'QH', 'TD', 'EXC', 'AS', 'T05', 'T15', '8C']])
    expect(d.dog).toEqual(['9S', '4H', 'T16', 'T10', 'T13', '3H'])
    expect(d.fingerprint).toBe('375cc2ca5463a04ee89d533106caa0deb49a9793eb78bd19caabd66bdf1ff141')
    expect(d.redeals).toEqual([])
    // the unpublished original's fingerprint for seed 4242 is not claimed (see docs/schemes.md)
    expect(d.fingerprint).not.toBe('7e9bacab34bbcedf4b2794c393956cfa219189d449b4c3acf995f89bf654dda1')
  })

  it('3 players (seed 7, dealer 2) and 5 players (a 30-digit seed, dealer 4)', () => {
    const d3 = dealTarot('7', 3, 2)
    expect(d3.hands).toEqual([['EXC', '9C', 'T16', 'JD', '8S', 'T03', '9D', 'AH', 'T17', 'TD', '6H', 'KC', '3H', '9H', 'T08', 'T18', '6D', 'T20', 'T19', 'TS', 'CD', '5D', '8H', 'AC'], ['2H', '7H', '7C', 'T09', '2D', 'JH', '2C', '6S', 'TC', '7D', '4C', 'T01', 'T13', '4D', 'KS', '4H', 'T02', 'JS', '6C', 'QD', 'TH', 'T14', 'AD', 'T05'], ['T11', 'QC', 'T12', 'KH', 'T06', 'T10', 'CH', '2S', 'T07', 'T15', '5H', 'CS', 'CC', 'QS', '9S', '7S', '4S', '3D', '8D', 'JC', '8C', 'T04', '5C', '3S']])
    expect(d3.dog).toEqual(['5S', 'QH', 'T21', 'KD', 'AS', '3C'])
    expect(d3.fingerprint).toBe('91c67c0aaf1c0d20a0b2c68b12bead23ca9e82a56176f840f30d274f55109fec')
    const d5 = dealTarot('123456789012345678901234567890', 5, 4)
    expect(d5.hands).toEqual([['AD', 'T09', '9H', 'T03', 'T06', '7H', '9S', '2C', 'AH', 'TC', '8S', 'T17', 'T16', 'CC', 'TD'], ['5D', '3H', '7C', 'JC', 'T10', 'QD', '4C', '6C', 'AS', 'TS', '7S', '4D', 'T05', 'EXC', '2D'], ['6D', 'T15', '5H', 'T08', 'T07', 'QC', 'JS', 'T13', 'CH', '9C', 'T04', '3C', 'T20', '4S', 'CS'], ['5C', 'KS', '3S', 'KC', '2H', '6S', 'JH', '2S', 'T02', '5S', 'JD', 'T19', 'T01', '8C', 'QS'], ['T18', 'QH', 'KD', '8D', 'TH', '8H', '7D', 'CD', 'T14', '4H', '3D', '9D', '6H', 'AC', 'T11']])
    expect(d5.dog).toEqual(['T12', 'KH', 'T21'])
    expect(d5.fingerprint).toBe('7834e5d1bff212ecc362acc0f9b9bbf674ed92f8c3b0a5d302c4997292a1379f')
  })

  it('petit sec: seed 484 gives seat 3 the petit sec, so seed 485 is dealt by the next dealer', () => {
    const first = layOut(Array.from(tarotDeck('484'), idx), 4, 1)
    expect(petitSecSeat(first.hands)).toBe(3)
    const d = dealTarot('484', 4, 1)
    expect(d.redeals).toEqual([{'seed': '484', 'dealer': 1, 'petitSec': 3}])
    expect(d.seed).toBe('485')
    expect(d.dealer).toBe(2)
    expect(d.hands).toEqual([['T07', 'JD', 'TC', 'T12', '2H', '7S', '6H', '4D', 'KD', '5H', '6S', 'EXC', 'T19', 'TH', 'TD', 'T03', '9C', '8C'], ['2C', '7H', '9H', '3C', 'AH', 'T17', 'T21', 'T18', '6D', 'T01', 'CD', '7C', '4H', '5S', '9S', '3D', '5C', 'T20'], ['2S', 'KS', '5D', 'T02', 'T08', 'QH', 'JS', '6C', '2D', 'T09', 'QD', 'QC', 'T04', 'T11', 'T13', '8S', 'KH', 'T05'], ['4S', 'T14', 'CH', '8H', 'JH', 'AD', 'CS', 'CC', '9D', '8D', 'QS', 'T16', '4C', 'AC', 'T15', 'T06', '7D', 'JC']])
    expect(d.fingerprint).toBe('5ddf5eafab052056c92d9b7b58a1ad92b8e50931b6afbf1c8c207732697e1f8c')
  })

  it('the registry: key text, key, seed from the key, deal', () => {
    const inputs = { secret: 'secret', nonces: ['1', '2', '3', '4'] }
    expect(tarot.keyText(inputs)).toBe('tarot-v1|secret|1|2|3|4')
    const key = tarot.key(inputs)
    expect(key).toBe('b2281131180fa314d1f651a7fa929c9d7430eab46051aed9ae7c25673b7627cc')
    expect(seedFromKey(key)).toBe('80582479583671762337327602428768655814645598766795419766575697623805406357452')
    const deal = tarot.deal('tarot', key, { seats: 4 })
    expect(deal.fingerprint).toBe('3cb62a22d4dc67f01b79e529eeeacde068287064027109da13e9e2dc4e65f6d3')
    expect(deal.dog).toEqual(['5H', '8H', 'CH', 'AC', '5S', 'TC'])
    expect(deal.deliveries.map(d => [d.stage, d.seat, d.public])).toEqual([
      ['deal', 0, false], ['deal', 1, false], ['deal', 2, false], ['deal', 3, false], ['dog', null, true]
    ])
  })
})

describe('tarot-v1 structure', () => {
  it('78 distinct cards: 56 suit cards, 21 trumps, the excuse', () => {
    expect(new Set(TAROT_CARDS).size).toBe(78)
    expect(TAROT_CARDS.filter(c => /^T\d\d$/.test(c))).toHaveLength(21)
    expect(TAROT_CARDS.filter(c => c.length === 2)).toHaveLength(56)
    expect(TAROT_CARDS.at(-1)).toBe('EXC')
  })

  it('every deal is a permutation and every seat gets 24/18/15 cards, dog 6/6/3', () => {
    const sorted = [...TAROT_CARDS].sort()
    for (const players of [3, 4, 5]) {
      for (let i = 0; i < 60; i++) {
        const key = sha256Hex(`tarot-perm:${players}:${i}`)
        const dealer = i % players
        const d = tarot.deal('tarot', key, { seats: players, dealer })
        expect(d.hands?.map(h => h.length)).toEqual(Array(players).fill(TAROT_LAYOUT[players].hand))
        expect(d.dog).toHaveLength(TAROT_LAYOUT[players].dog)
        expect([...d.hands!.flat(), ...d.dog!].sort()).toEqual(sorted)
        expect(d.deliveries.flatMap(x => x.cards).sort()).toEqual(sorted)
        expect(d.dealer).toBe((dealer + d.redeals!.length) % players)
      }
    }
  })

  it('the first packet goes to the seat right of the dealer, in packets of three', () => {
    const deck = tarotDeck('1')
    const { hands, dog } = layOut(Array.from(deck, idx), 5, 3)
    expect(hands[4].slice(0, 3).map(i => TAROT_CARDS[i])).toEqual(deck.slice(0, 3))
    expect(hands[0].slice(0, 3).map(i => TAROT_CARDS[i])).toEqual(deck.slice(3, 6))
    expect(hands[3].slice(0, 3).map(i => TAROT_CARDS[i])).toEqual(deck.slice(12, 15))
    expect(hands[4].slice(3, 6).map(i => TAROT_CARDS[i])).toEqual(deck.slice(15, 18))
    expect(dog.map(i => TAROT_CARDS[i])).toEqual(deck.slice(75))
  })

  it('petit sec means the 1 of trumps with no other trump and no excuse', () => {
    const h = (...codes: string[]): number[] => codes.map(idx)
    expect(petitSecSeat([h('AS', 'KH'), h('T01', 'KC', '2D')])).toBe(1)
    expect(petitSecSeat([h('T01', 'T21')])).toBe(-1)
    expect(petitSecSeat([h('T01', 'EXC')])).toBe(-1)
    expect(petitSecSeat([h('T02', 'KC')])).toBe(-1)
  })

  it('the fingerprint is order-independent within a hand but depends on every field', () => {
    const d = dealTarot('99', 4, 2)
    const hands = d.hands.map(h => h.map(idx))
    const dog = d.dog.map(idx)
    const fp = tarotFingerprint(4, d.dealer, hands, dog)
    expect(fp).toBe(d.fingerprint)
    expect(tarotFingerprint(4, d.dealer, hands.map(x => [...x].reverse()), [...dog].reverse())).toBe(fp)
    expect(tarotFingerprint(4, (d.dealer + 1) % 4, hands, dog)).not.toBe(fp)
    expect(tarotFingerprint(4, d.dealer, [hands[1], hands[0], hands[2], hands[3]], dog)).not.toBe(fp)
  })

  it('refuses bad input', () => {
    const key = sha256Hex('k')
    const cases: Array<[() => unknown, RegExp]> = [
      [() => tarot.deal('tarot', key), /tarot-v1 tarot needs the number of seats \(3, 4 or 5\)/],
      [() => tarot.deal('tarot', key, { seats: 6 }), /is for 3, 4 or 5 seats, got 6/],
      [() => tarot.deal('tarot', key, { seats: 4, dealer: 4 }), /tarot dealer must be a seat number from 0 to 3, got 4/],
      [() => tarot.deal('tarot', key, { seats: 4, taker: 1 }), /a taker applies only to belote/],
      [() => tarot.deal('coinche', key, { seats: 4 }), /tarot-v1 has no game "coinche"/],
      [() => dealTarot('042', 4), /a tarot seed is a non-negative decimal integer without leading zeros/],
      [() => dealTarot('-1', 4), /a tarot seed is a non-negative decimal integer/],
      [() => tarot.deck('zz'), /key must be 64 lowercase hex characters/]
    ]
    for (const [call, message] of cases) {
      expect(call, message.source).toThrow(CoreInputError)
      expect(call).toThrow(message)
    }
  })
})
