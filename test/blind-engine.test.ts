// The secret-scalar engine: libsodium's ristretto255 once loaded (src/polyfill.ts, the vitest
// setup, awaits it), noble's ladder otherwise. Both must give the same element for every scalar
// the protocol uses, the edge cases included (0, 1, ℓ−1, the identity point), and the known-answer
// shuffle must come out byte-identical on either engine.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import * as fc from 'fast-check'
import { fromHex } from '../src/core/bytes.js'
import {
  G, IDENTITY, ORDER, blindEngine, blindEngineReady, cardPoint, encodeCiphertext, forgetVerifiedShuffles, jointKey, mulSecret, pointToHex,
  RistrettoPoint, pointFromHex, publicKey, randomScalar, samePoint, seededRandom, shuffleDeck, startingDeck, verifyShuffle, withNobleEngine
} from '../src/core/blind/index.js'

const kat = JSON.parse(readFileSync(new URL('./fixtures/blind-shuffle.json', import.meta.url), 'utf8'))

describe('blind-v1 engine', () => {
  it('is libsodium once ready', async () => {
    await blindEngineReady()
    expect(blindEngine()).toBe('libsodium')
    expect(withNobleEngine(() => blindEngine())).toBe('noble')
    expect(blindEngine()).toBe('libsodium')
  })

  it('libsodium and noble agree on every scalar, the edge cases and the identity included', async () => {
    await blindEngineReady()
    const points = [G, IDENTITY, cardPoint('AS'), mulSecret(G, 12345n)]
    const both = (p: typeof G, x: bigint): [string, string] => [pointToHex(mulSecret(p, x)), pointToHex(withNobleEngine(() => mulSecret(p, x)))]
    for (const p of points) {
      for (const x of [0n, 1n, 2n, ORDER - 1n, ORDER, ORDER + 1n, -1n, 2n ** 252n, 2n ** 255n - 1n]) {
        const [a, b] = both(p, x)
        expect(a).toBe(b)
      }
    }
    expect(both(IDENTITY, 5n)[0]).toBe(pointToHex(IDENTITY))
    expect(both(G, ORDER)[0]).toBe(pointToHex(IDENTITY))
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 2n ** 256n }), fc.constantFrom(...points), (x, p) => {
      const [a, b] = both(p, x)
      return a === b
    }), { numRuns: 40 })
  })

  it('points from libsodium (decoded by its check, products) are the same elements to noble', async () => {
    await blindEngineReady()
    // A point whose coordinates noble has not read yet (decoded by libsodium's check) adds, compares
    // and encodes in noble exactly as the point noble decodes itself.
    const x = mulSecret(cardPoint('7C'), 99n)
    const viaHex = pointFromHex(pointToHex(x), 'p')
    const noble = RistrettoPoint.fromHex(pointToHex(x))
    expect(viaHex.add(G).toHex()).toBe(noble.add(G).toHex())
    expect(viaHex.equals(noble)).toBe(true)
    expect(samePoint(viaHex, x)).toBe(true)
    expect(samePoint(viaHex, G)).toBe(false)
    expect(pointToHex(withNobleEngine(() => mulSecret(viaHex, 3n)))).toBe(pointToHex(mulSecret(x, 3n)))
    expect(() => pointFromHex('ff'.repeat(32), 'p')).toThrow(/canonical/)
  })

  it('the known-answer shuffle is byte-identical on noble', () => {
    withNobleEngine(() => {
      const random = seededRandom(fromHex(kat.seed))
      const xs = [0, 1, 2].map(() => randomScalar(random))
      const pk = jointKey(xs.map(publicKey))
      expect(pointToHex(pk)).toBe(kat.joint)
      const made = shuffleDeck(kat.shuffles[0].context, pk, startingDeck(kat.cards), random)
      expect(made.output.map(encodeCiphertext)).toEqual(kat.shuffles[0].output)
      expect(made.proof).toEqual(kat.shuffles[0].proof)
      forgetVerifiedShuffles()
      expect(verifyShuffle(kat.shuffles[0].context, pk, startingDeck(kat.cards), made.output, made.proof)).toBe(true)
      const bad = { ...made.proof, s1: made.proof.s2 }
      expect(verifyShuffle(kat.shuffles[0].context, pk, startingDeck(kat.cards), made.output, bad)).toBe(false)
    })
  })
})
