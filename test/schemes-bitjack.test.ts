// BitJack21: the shoe shuffle (vectors in schemes-vectors.test.ts), its bit stream and its limits.
import { describe, expect, it } from 'vitest'
import { BITJACK_CARDS, BitjackStream, bitjackCommitment, bitjackShoe, getCardScheme } from '../src/core/schemes/index.js'
import { sha256 } from '../src/core/bytes.js'
import { CoreInputError } from '../src/core/errors.js'

const scheme = getCardScheme('bitjack21')

describe('bitjack21', () => {
  it('every shoe is a permutation of n cards i mod 52', () => {
    for (const n of [1, 2, 51, 52, 53, 104, 311, 416]) {
      for (let i = 0; i < 10; i++) {
        const shoe = Array.from(bitjackShoe(`r1-${i}`, `r2-${n}`, n))
        const want = Array.from({ length: n }, (_, k) => k % 52).sort((a, b) => a - b)
        expect([...shoe].sort((a, b) => a - b)).toEqual(want)
      }
    }
  })

  it('reads each digest most significant bit first and spans digests', () => {
    const s = new BitjackStream('p')
    const d0 = sha256('p0')
    const d1 = sha256('p1')
    expect(s.take(4)).toBe(d0[0] >> 4)
    expect(s.take(12)).toBe(((d0[0] & 15) << 8) | d0[1])
    for (let i = 2; i < 31; i++) expect(s.take(8)).toBe(d0[i])
    expect(s.take(3)).toBe(d0[31] >> 5)
    // 5 bits left in digest 0, then 4 from digest 1: a new digest only when more bits are needed
    expect(s.take(9)).toBe(((d0[31] & 31) << 4) | (d1[0] >> 4))
    expect(s.digests).toBe(2)
  })

  it('through the registry: secret r1, nonce r2, salt rx', () => {
    const key = scheme.key({ secret: 'aa', nonces: ['bb'] })
    expect(key).toBe('aabb')
    expect(scheme.deck(key, { cards: 52 })).toEqual(Array.from(bitjackShoe('aa', 'bb', 52), v => BITJACK_CARDS[v]))
    expect(scheme.deal('shoe', key).deck).toHaveLength(416)
    expect(scheme.commitment('aa', 'cc')).toBe(bitjackCommitment('aa', 'cc'))
    expect(BITJACK_CARDS.slice(0, 3)).toEqual(['2D', '3D', '4D'])
    expect(BITJACK_CARDS[12]).toBe('AD')
    expect(BITJACK_CARDS[51]).toBe('AS')
  })

  it('refuses bad input', () => {
    const cases: Array<[() => unknown, RegExp]> = [
      [() => bitjackShoe('a', 'b', 417), /a BitJack21 shoe holds 1 to 416 cards \(8 decks\), got 417/],
      [() => bitjackShoe('a', 'b', 0), /holds 1 to 416 cards/],
      [() => scheme.deal('shoe', 'ab', { cards: 500 }), /holds 1 to 416 cards/],
      [() => bitjackShoe('é', 'b', 52), /r1 must be printable ASCII text/],
      [() => scheme.key({ secret: 'a', nonces: ['b', 'c'] }), /exactly one nonce/],
      [() => scheme.deal('blackjack', 'ab'), /bitjack21 has no game "blackjack" \(it has shoe\)/]
    ]
    for (const [call, message] of cases) {
      expect(call, message.source).toThrow(CoreInputError)
      expect(call).toThrow(message)
    }
  })
})
