// blind-v1 cryptography against the known-answer vectors of test/fixtures/blind-*.json, written
// before the code by an independent Python reference on libsodium (scripts/blind-vectors/), and
// the ways a shuffle, a key proof or a decryption share can be wrong, each refused.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import * as fc from 'fast-check'
import { fromHex, toHex, utf8 } from '../src/core/bytes.js'
import {
  type Ciphertext, type ProofContext, G, cardOf, cardPoint, challenge, decodeDeck, encodeCiphertext, generator,
  jointKey, mulSecret, openWithShares, pointFromHex, proveKey, proveShare, publicKey, randomPermutation,
  randomScalar, reEncrypt, scalarFromHex, scalarToHex, seededRandom, shuffleDeck, startingDeck, verifyKey,
  verifyShare, verifyShuffle, type ShuffleProof, pointToHex, proveShuffle
} from '../src/core/blind/index.js'

const load = (name: string): any => JSON.parse(readFileSync(new URL(`./fixtures/blind-${name}.json`, import.meta.url), 'utf8'))
const encodings = load('encodings')
const schnorr = load('schnorr')
const kat = load('shuffle')
const seed = (text: string): Uint8Array => { const b = new Uint8Array(32); b.set(utf8(text)); return b }

describe('blind-v1 known answers', () => {
  it('card points, generators, the seeded stream and a transcript challenge', () => {
    for (const c of encodings.cards) expect(pointToHex(cardPoint(c.code))).toBe(c.point)
    for (const g of encodings.generators) expect(pointToHex(generator(g.name))).toBe(g.point)
    const random = seededRandom(fromHex(encodings.random.seed))
    expect(toHex(random(80))).toBe(encodings.random.bytes)
    expect(encodings.random.scalars).toEqual([scalarToHex(randomScalar(random)), scalarToHex(randomScalar(random))])
    expect(randomPermutation(random, 8)).toEqual(encodings.random.permutation8)
    const ch = encodings.challenge
    expect(scalarToHex(challenge(ch.label, ch.context, ch.items.map((h: string) => fromHex(h))))).toBe(ch.scalar)
  })

  it('Schnorr key proofs', () => {
    const random = seededRandom(fromHex(schnorr.seed))
    for (const k of schnorr.keys) {
      const x = randomScalar(random)
      expect(scalarToHex(x)).toBe(k.secret)
      const made = proveKey(k.context, x, random)
      expect(made).toEqual({ pub: k.public, proof: k.proof })
      expect(verifyKey(k.context, k.public, k.proof)).toBe(true)
    }
  })

  it('three shuffles, every share and the opened cards', () => {
    const random = seededRandom(fromHex(kat.seed))
    const xs = [0, 1, 2].map(() => randomScalar(random))
    expect(xs.map(scalarToHex)).toEqual(kat.secrets)
    expect(xs.map(x => pointToHex(publicKey(x)))).toEqual(kat.publics)
    const pk = jointKey(xs.map(publicKey))
    expect(pointToHex(pk)).toBe(kat.joint)
    let deck = startingDeck(kat.cards)
    for (const s of kat.shuffles) {
      expect(deck.map(encodeCiphertext)).toEqual(s.input)
      const made = shuffleDeck(s.context, pk, deck, random)
      expect(made.permutation).toEqual(s.permutation)
      expect(made.reencryption.map(scalarToHex)).toEqual(s.reencryption)
      expect(made.output.map(encodeCiphertext)).toEqual(s.output)
      expect(made.proof).toEqual(s.proof)
      expect(verifyShuffle(s.context, pk, deck, decodeDeck(s.output, 'output'), s.proof)).toBe(true)
      deck = made.output
    }
    deck.forEach((c, pos) => {
      const row = kat.shares[pos]
      const ds = row.map((r: any, seat: number) => {
        expect(proveShare(r.context, xs[seat], c.b, random)).toEqual(r.share)
        const d = verifyShare(r.context, publicKey(xs[seat]), c.b, r.share)
        expect(d).toBeDefined()
        return d!
      })
      expect(cardOf(openWithShares(c, ds), kat.cards)).toBe(kat.opened[pos])
    })
  })
})

// A four-seat, eight-card table for the refusals.
const ctx = (step: string, hand = 7): ProofContext => ({ table: 't', hand, commit: 'ab'.repeat(32), step, prover: '12D3KooWprover' })
const CARDS = ['7C', '8C', '9C', 'TC', 'JC', 'QC', 'KC', 'AC']
function table (seedText: string): { xs: bigint[], pk: ReturnType<typeof publicKey>, input: Ciphertext[], random: ReturnType<typeof seededRandom> } {
  const random = seededRandom(seed(seedText))
  const xs = [0, 1, 2, 3].map(() => randomScalar(random))
  const pk = jointKey(xs.map(publicKey))
  const input = shuffleDeck(ctx('shuffle:0'), pk, startingDeck(CARDS), random).output
  return { xs, pk, input, random }
}

describe('blind-v1 refusals', () => {
  const { xs, pk, input, random } = table('refusals')
  const good = shuffleDeck(ctx('shuffle:1'), pk, input, random)

  it('an honest shuffle verifies', () => {
    expect(verifyShuffle(ctx('shuffle:1'), pk, input, good.output, good.proof)).toBe(true)
  })

  it('a shuffle that drops a card (another one duplicated) is refused, even with a proof made for it', () => {
    const output = [...good.output]; output[3] = reEncrypt(output[5], pk, 9n)
    expect(verifyShuffle(ctx('shuffle:1'), pk, input, output, good.proof)).toBe(false)
    const proof = proveShuffle(ctx('shuffle:1'), pk, input, output, good.permutation, good.reencryption, random)
    expect(verifyShuffle(ctx('shuffle:1'), pk, input, output, proof)).toBe(false)
    // The prover cannot even state a "permutation" that maps two outputs to one input.
    const perm = [...good.permutation]; perm[3] = perm[5]
    expect(() => proveShuffle(ctx('shuffle:1'), pk, input, output, perm, good.reencryption, random)).toThrow(/permutation/)
  })

  it('a shuffle that swaps in a card from outside the deck is refused', () => {
    const foreign = reEncrypt({ a: cardPoint('AS'), b: G.subtract(G) }, pk, 5n)
    const output = [...good.output]; output[0] = foreign
    expect(verifyShuffle(ctx('shuffle:1'), pk, input, output, good.proof)).toBe(false)
    // Proving "output[0] = input[π(0)]" with the foreign card in place cannot succeed either.
    const proof = proveShuffle(ctx('shuffle:1'), pk, input, output, good.permutation, good.reencryption, random)
    expect(verifyShuffle(ctx('shuffle:1'), pk, input, output, proof)).toBe(false)
  })

  it('a re-encryption under a key other than the joint key is refused', () => {
    const other = publicKey(12345n)
    const output = good.permutation.map((j, i) => reEncrypt(input[j], other, good.reencryption[i]))
    const proof = proveShuffle(ctx('shuffle:1'), pk, input, output, good.permutation, good.reencryption, random)
    expect(verifyShuffle(ctx('shuffle:1'), pk, input, output, proof)).toBe(false)
  })

  it('a proof made for another input, another step, hand or prover is refused', () => {
    const other = shuffleDeck(ctx('shuffle:0'), pk, startingDeck(CARDS), random).output
    expect(verifyShuffle(ctx('shuffle:1'), pk, other, good.output, good.proof)).toBe(false)
    expect(verifyShuffle(ctx('shuffle:2'), pk, input, good.output, good.proof)).toBe(false)
    expect(verifyShuffle(ctx('shuffle:1', 8), pk, input, good.output, good.proof)).toBe(false)
    expect(verifyShuffle({ ...ctx('shuffle:1'), prover: '12D3KooWother' }, pk, input, good.output, good.proof)).toBe(false)
    expect(verifyShuffle({ ...ctx('shuffle:1'), commit: 'cd'.repeat(32) }, pk, input, good.output, good.proof)).toBe(false)
  })

  it('any changed proof field, or a malformed one, is refused without throwing', () => {
    const fields: Array<keyof ShuffleProof> = ['commitments', 'chain', 'e', 's1', 's2', 's3', 's4', 'sHat', 'sPrime']
    for (const f of fields) {
      const p = structuredClone(good.proof) as any
      if (Array.isArray(p[f])) p[f][2] = Array.isArray(p.sHat) && f.startsWith('s') ? scalarToHex(scalarFromHex(p[f][2], f) + 1n) : pointToHex(pointFromHex(p[f][2], f).add(G))
      else p[f] = scalarToHex(scalarFromHex(p[f], f) + 1n)
      expect(verifyShuffle(ctx('shuffle:1'), pk, input, good.output, p), f).toBe(false)
    }
    expect(verifyShuffle(ctx('shuffle:1'), pk, input, good.output, { ...good.proof, sHat: good.proof.sHat.slice(1) })).toBe(false)
    expect(verifyShuffle(ctx('shuffle:1'), pk, input, good.output, { ...good.proof, e: 'ff'.repeat(32) })).toBe(false)
    expect(verifyShuffle(ctx('shuffle:1'), pk, input, good.output, { ...good.proof, chain: good.proof.chain.map(() => 'zz') })).toBe(false)
    expect(verifyShuffle(ctx('shuffle:1'), pk, input, good.output, null as unknown as ShuffleProof)).toBe(false)
    expect(verifyShuffle(ctx('shuffle:1'), pk, input, good.output.slice(1), good.proof)).toBe(false)
  })

  it('key proofs: another context, another key or a changed response is refused', () => {
    const { pub, proof } = proveKey(ctx('key:2'), xs[2], random)
    expect(verifyKey(ctx('key:2'), pub, proof)).toBe(true)
    expect(verifyKey(ctx('key:3'), pub, proof)).toBe(false)
    expect(verifyKey(ctx('key:2', 8), pub, proof)).toBe(false)
    expect(verifyKey(ctx('key:2'), pointToHex(publicKey(xs[1])), proof)).toBe(false)
    expect(verifyKey(ctx('key:2'), pub, { ...proof, s: scalarToHex(scalarFromHex(proof.s, 's') + 1n) })).toBe(false)
    expect(verifyKey(ctx('key:2'), '00'.repeat(32), proof)).toBe(false)
    expect(verifyKey(ctx('key:2'), pub, { c: 'x', s: proof.s })).toBe(false)
  })

  it('decryption shares: a wrong share and a share for another card are refused; the right ones open the card', () => {
    const deck = good.output
    const ds = xs.map((x, seat) => verifyShare(ctx(`share:4:${seat}`), publicKey(x), deck[4].b, proveShare(ctx(`share:4:${seat}`), x, deck[4].b, random)))
    expect(ds.every(d => d !== undefined)).toBe(true)
    expect(cardOf(openWithShares(deck[4], ds as any), CARDS)).toBeDefined()
    // A wrong share: d = x'·b with a proof made for the seat's real key.
    const honest = proveShare(ctx('share:4:1'), xs[1], deck[4].b, random)
    const wrong = { ...honest, d: pointToHex(mulSecret(deck[4].b, xs[1] + 1n)) }
    expect(verifyShare(ctx('share:4:1'), publicKey(xs[1]), deck[4].b, wrong)).toBeUndefined()
    // A share made with another key than the seat's published one.
    const forged = proveShare(ctx('share:4:1'), xs[1] + 1n, deck[4].b, random)
    expect(verifyShare(ctx('share:4:1'), publicKey(xs[1]), deck[4].b, forged)).toBeUndefined()
    // A share for another card (position 5) presented for position 4, and vice versa.
    const for5 = proveShare(ctx('share:5:1'), xs[1], deck[5].b, random)
    expect(verifyShare(ctx('share:4:1'), publicKey(xs[1]), deck[4].b, for5)).toBeUndefined()
    expect(verifyShare(ctx('share:5:1'), publicKey(xs[1]), deck[4].b, for5)).toBeUndefined()
    expect(verifyShare(ctx('share:5:1', 8), publicKey(xs[1]), deck[5].b, for5)).toBeUndefined()
    expect(verifyShare(ctx('share:5:1'), publicKey(xs[1]), deck[5].b, for5)).toBeDefined()
  })

  it('without every share a card does not open', () => {
    const deck = good.output
    const three = xs.slice(0, 3).map(x => mulSecret(deck[0].b, x))
    expect(cardOf(openWithShares(deck[0], three), CARDS)).toBeUndefined()
  })
})

describe('blind-v1 property: random valid shuffles always verify', () => {
  it('any deck size 1–8, any key, any seed', () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 8 }), fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.integer({ min: 0, max: 1000 }),
      (n, seedBytes, hand) => {
        const random = seededRandom(seedBytes)
        const pk = publicKey(randomScalar(random))
        const input = startingDeck(CARDS.slice(0, n))
        const c = { ...ctx('shuffle:0'), hand }
        const { output, proof, permutation } = shuffleDeck(c, pk, input, random)
        expect([...permutation].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i))
        return verifyShuffle(c, pk, input, output, proof)
      }), { numRuns: 12 })
  })
})
