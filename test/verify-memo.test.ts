import { randomBytes } from 'node:crypto'
import { describe, expect, test } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { CoreInputError } from '../src/core/errors.js'
import { signerFromSeed } from '../src/core/identity.js'
import { signDocument, verifyDocument, type Signed } from '../src/core/signed.js'
import { nativeSigner } from '../src/crypto/native-crypto.js'
import { verifyMemo } from '../src/daemon/verify-memo.js'
import { freezeDeep } from '../src/core/frozen.js'
import { installHandCounts, takeHandCounts } from '../scripts/bench/lib/hand-counts.js'

function party (): { peerId: string, signer: ReturnType<typeof nativeSigner> } {
  const seed = randomBytes(32)
  const peerId = signerFromSeed(seed).peerId
  return { peerId, signer: nativeSigner(seed, peerId) }
}

/** Every way of changing one input of the check. */
function tamperings (doc: Signed<{ hand: number, text: string }>, other: string): Array<Signed<unknown>> {
  const flipped = (doc.sig[0] === 'a' ? 'b' : 'a') + doc.sig.slice(1)
  return [
    { ...doc, body: { ...doc.body, hand: doc.body.hand + 1 } },
    { ...doc, body: { ...doc.body, extra: 1 } },
    { ...doc, type: 'nonce' },
    { ...doc, signer: other },
    { ...doc, sig: flipped },
    { ...doc, sig: doc.sig.toUpperCase() }
  ]
}

describe('the per-node verification memo', () => {
  test('agrees with the core verifier on valid and tampered documents, before and after remembering', () => {
    const a = party()
    const b = party()
    const memo = verifyMemo()
    for (let i = 0; i < 20; i++) {
      const doc = signDocument('pledge', { hand: i, text: 'é|x' }, a.signer)
      const bad = tamperings(doc, b.peerId)
      for (const d of bad) expect(memo.verify(d)).toBe(verifyDocument(d))
      expect(memo.verify(doc)).toBe(true)
      expect(memo.verify(doc)).toBe(true)
      // The valid one is remembered now: none of its variants rides on it.
      for (const d of bad) expect(memo.verify(d)).toBe(false)
      expect(memo.verify(JSON.parse(JSON.stringify(doc)) as Signed<unknown>)).toBe(true)
    }
  })

  test('a copy of a document it checked (same type, signer and signature) is valid only with the same body, whatever its key order', () => {
    const a = party()
    const memo = verifyMemo()
    const body = { hand: 3, text: 'é|x', list: [1, 'two', { three: null }], flag: true, zero: 0 }
    const doc = freezeDeep(signDocument('nonce', body, a.signer))
    expect(memo.verify(doc)).toBe(true)
    const copies: Array<Signed<unknown>> = [
      JSON.parse(JSON.stringify(doc)),
      { ...doc, body: { zero: 0, flag: true, list: [1, 'two', { three: null }], text: 'é|x', hand: 3 } },
      { ...doc, body: { ...body, hand: 4 } },
      { ...doc, body: { ...body, zero: -0 } },
      { ...doc, body: { ...body, extra: 1 } },
      { ...doc, body: { ...body, list: [1, 'two', { three: 0 }] } },
      { ...doc, body: { ...body, list: [1, 'two'] } },
      { ...doc, body: { ...body, list: { 0: 1, 1: 'two', 2: { three: null } } } },
      { ...doc, body: { ...body, flag: 'true' } },
      { ...doc, body: { ...body, text: undefined } },
      { ...doc, type: 'pledge' },
      { ...doc, signer: party().peerId },
      freezeDeep({ ...doc, type: 'pledge' }),
      freezeDeep({ ...doc, body: { ...body, hand: '3' } })
    ]
    for (const c of copies) expect(memo.verify(c), JSON.stringify(c.body)).toBe(verifyDocument(c))
  })

  test('what the node signs itself is valid without a check, and only exactly that', () => {
    const a = party()
    const memo = verifyMemo()
    const signer = memo.signer(a.signer)
    const doc = signDocument('ack', { hand: 7, text: 'mine' }, signer)
    expect(verifyDocument(doc)).toBe(true)
    expect(memo.verify(doc)).toBe(true)
    for (const d of tamperings(doc, party().peerId)) expect(memo.verify(d)).toBe(false)
  })

  test('a signer whose key is not its peer id gets no free pass', () => {
    const a = party()
    const b = party()
    const memo = verifyMemo()
    // b's key under a's name: its signatures verify under neither name's check.
    const wrong = memo.signer({ peerId: a.peerId, sign: b.signer.sign })
    const doc = signDocument('commit', { hand: 1, text: 'x' }, wrong)
    expect(verifyDocument(doc)).toBe(false)
    expect(memo.verify(doc)).toBe(false)
  })

  test('a full memo forgets the oldest and still answers correctly', () => {
    const a = party()
    const memo = verifyMemo(3)
    const docs = Array.from({ length: 10 }, (_, i) => signDocument('cards', { hand: i, text: 't' }, a.signer))
    for (const d of docs) expect(memo.verify(d)).toBe(true)
    for (const d of docs) expect(memo.verify(d)).toBe(true)
    expect(memo.verify({ ...docs[0], body: { hand: 99, text: 't' } })).toBe(false)
  })

  test('a full memo of deep-frozen documents forgets the oldest and still answers correctly', () => {
    const a = party()
    const memo = verifyMemo(3)
    const docs = Array.from({ length: 10 }, (_, i) => freezeDeep(signDocument('cards', { hand: i, text: 't' }, a.signer)))
    for (const d of docs) expect(memo.verify(d)).toBe(true)
    // Copies (other objects, the same bytes), the oldest long forgotten and the newest still kept.
    for (const d of docs) expect(memo.verify(freezeDeep(structuredClone(d)))).toBe(true)
    expect(memo.verify(freezeDeep({ ...docs[9], body: { hand: 9, text: 'u' } }))).toBe(false)
    expect(memo.verify(freezeDeep({ ...docs[0], body: { hand: 0, text: 'u' } }))).toBe(false)
  })

  test('a deep-frozen document costs one Ed25519 check, then none in any copy; its own signer\'s cost none; a changed one is refused', async () => {
    await installHandCounts()
    const a = party()
    const own = party()
    const memo = verifyMemo()
    const signer = memo.signer(own.signer)
    const checks = (): number => Object.values(takeHandCounts().verifies).reduce((x, y) => x + y, 0)
    const theirs = freezeDeep(signDocument('pledge', { hand: 1, text: 'x' }, a.signer))
    const mine = freezeDeep(signDocument('pledge', { hand: 2, text: 'y' }, signer))
    checks()
    expect(memo.verify(theirs)).toBe(true)
    expect(checks()).toBe(1)
    expect(memo.verify(theirs)).toBe(true)
    expect(memo.verify(freezeDeep(structuredClone(theirs)))).toBe(true)
    expect(memo.verify(structuredClone(theirs))).toBe(true)
    expect(memo.verify(mine)).toBe(true)
    expect(memo.verify(structuredClone(mine))).toBe(true)
    expect(checks()).toBe(0)
    for (const d of tamperings(theirs as Signed<{ hand: number, text: string }>, own.peerId)) {
      expect(memo.verify(freezeDeep(d))).toBe(false)
      expect(memo.verify(d)).toBe(false)
    }
  })

  test('refuses malformed documents like the core verifier', () => {
    const a = party()
    const memo = verifyMemo()
    const doc = signDocument('pledge', { hand: 1, text: 'x' }, a.signer)
    const malformed = [
      { ...doc, sig: doc.sig.slice(2) },
      { ...doc, signer: 'not-a-peer-id' },
      { ...doc, body: { hand: 1.5 } },
      { ...doc, type: 3 }
    ] as Array<Signed<unknown>>
    for (const d of malformed) {
      expect(memo.verify(d)).toBe(false)
      expect(verifyDocument(d)).toBe(false)
    }
  })
})

describe('canonical JSON, fast path and careful path', () => {
  test('gives the same bytes and the same errors naming the field', () => {
    const value = { b: [1, { z: 'é\n"', a: null }], a: true, u: undefined, n: -7 }
    expect(canonicalJson(value)).toBe('{"a":true,"b":[1,{"a":null,"z":"é\\n\\""}],"n":-7}')
    const cases: Array<[unknown, RegExp]> = [
      [{ a: [1, { b: 0.5 }] }, /\$\.a\[1\]\.b is 0\.5/],
      [{ a: -0 }, /\$\.a is 0/],
      [{ k: new Uint8Array(2) }, /encode \$\.k as hex/],
      [{ f: () => 1 }, /cannot encode function at \$\.f/],
      [[1, undefined], /cannot encode undefined at \$\[1\]/]
    ]
    for (const [v, message] of cases) {
      expect(() => canonicalJson(v)).toThrow(CoreInputError)
      expect(() => canonicalJson(v)).toThrow(message)
    }
  })
})
