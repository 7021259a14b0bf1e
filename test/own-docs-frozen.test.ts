import { describe, expect, test } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { freezeDeep, frozenCopy, isDeepFrozen } from '../src/core/frozen.js'
import { docDigest } from '../src/core/hand/digest.js'
import type { Receipt } from '../src/core/hand/messages.js'
import { shieldProblems } from '../src/core/hand/shield.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { signerFromSeed } from '../src/core/identity.js'
import { signDocument, signFrozen, verifyDocument, type Signed } from '../src/core/signed.js'
import { memoryTable } from './helpers/memory-table.js'

// A state machine's own documents are deep-frozen copies (signFrozen), as documents off the wire
// are (src/core/frozen.ts): each is encoded and hashed once, and nothing the machine still holds is
// frozen with it. A receipt made of deep-frozen documents is checked as those very objects.
describe('own documents deep-frozen', () => {
  const signer = signerFromSeed(new Uint8Array(32).fill(9))

  test('frozenCopy shares what is deep-frozen, copies the rest, and freezes nothing the caller holds', () => {
    const held = freezeDeep({ type: 'x', signer: 's', body: { n: 1 }, sig: 'ab' })
    const list = [held, { k: [1, 2] }]
    const value = { list, stages: ['a'], nested: { held } }
    const copy = frozenCopy(value)
    expect(isDeepFrozen(copy)).toBe(true)
    expect(canonicalJson(copy)).toBe(canonicalJson(value))
    // The deep-frozen document is the same object; everything else is new.
    expect(copy.list[0]).toBe(held)
    expect(copy.nested.held).toBe(held)
    expect(copy.list).not.toBe(list)
    expect(copy.stages).not.toBe(value.stages)
    // What the caller holds can still change, and the copy does not.
    value.stages.push('b')
    list.push({ k: [3] })
    expect(copy.stages).toEqual(['a'])
    expect(copy.list).toHaveLength(2)
    expect(Object.isFrozen(value)).toBe(false)
    // A typed array cannot be frozen: kept as it is, and the copy is not deep-frozen.
    expect(isDeepFrozen(frozenCopy({ bytes: new Uint8Array(1) }))).toBe(false)
  })

  test('signFrozen signs the same bytes as signDocument; the document is deep-frozen, the body given is not', () => {
    const body = { table: 't', hand: 3, seats: ['a', 'b'], params: { dealer: 1 } }
    const doc = signFrozen('commit', body, signer)
    expect(doc).toEqual(signDocument('commit', body, signer))
    expect(verifyDocument(doc)).toBe(true)
    expect(isDeepFrozen(doc)).toBe(true)
    expect(Object.isFrozen(body)).toBe(false)
    expect(Object.isFrozen(body.seats)).toBe(false)
    body.seats.push('c')
    expect(doc.body.seats).toEqual(['a', 'b'])
    expect(docDigest(doc)).toBe(docDigest(structuredClone(doc)))
  })

  /** One hand dealt and ended on a memory table; `sent` collects every document sent (as they are, not re-read). */
  const playOne = (sent?: Array<Signed<unknown>>): ReturnType<typeof memoryTable> => {
    const t = memoryTable()
    if (sent !== undefined) t.intercept = (_from, _to, doc) => { sent.push(doc); return doc }
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    t.run(t.table.dealer, t.dealer.end(hand))
    return t
  }

  test('every document the dealer and seat machines send is deep-frozen, with the digest of its plain copy', () => {
    const sent: Array<Signed<unknown>> = []
    const t = playOne(sent)
    expect(t.rejections).toEqual([])
    const types = new Set(sent.map(d => d.type))
    for (const type of ['commit', 'pledge', 'pledges', 'view', 'nonce', 'cards', 'reveal', 'ack', 'final']) expect(types.has(type)).toBe(true)
    for (const doc of sent) {
      expect(isDeepFrozen(doc), doc.type).toBe(true)
      expect(docDigest(doc)).toBe(docDigest(structuredClone(doc)))
      expect(canonicalJson(doc)).toBe(canonicalJson(structuredClone(doc)))
    }
  })

  test('a deep-frozen receipt is checked as its own documents, with the verdict of its plain copy', () => {
    const t = playOne()
    const logged = (t.appended.get(t.table.dealer) ?? []).find(e => e.entry === 'receipt')?.payload as Receipt
    const plain = structuredClone(logged)
    const frozen = freezeDeep(structuredClone(logged))
    const seen: unknown[] = []
    const verifyDoc = (d: Signed<unknown>): boolean => { seen.push(d); return verifyDocument(d) }
    const verdict = verifyReceipt(frozen, { verifyDoc })
    expect(verdict).toEqual(verifyReceipt(plain))
    expect(verdict.status).toBe('verified')
    // The very objects given: the COMMIT, REVEAL, every pledge, nonce and ack.
    expect(seen).toContain(frozen.commit)
    expect(seen).toContain(frozen.reveal)
    for (const d of [...frozen.pledges, ...frozen.reveal.body.nonces, ...frozen.acks]) expect(seen).toContain(d)
    // The shield on deep-frozen documents: the same problems as on plain copies, here none.
    const input = { commit: frozen.commit, pledges: frozen.pledges, reveal: frozen.reveal, cards: [], seat: 1 }
    const copies = structuredClone(input)
    expect(shieldProblems(input)).toEqual(shieldProblems(copies))
    // A changed copy still fails in both forms.
    const changed = structuredClone(logged)
    changed.reveal.body.secret = (changed.reveal.body.secret[0] === '0' ? '1' : '0') + changed.reveal.body.secret.slice(1)
    expect(verifyReceipt(freezeDeep(changed)).problems.map(p => p.code)).toEqual(verifyReceipt(structuredClone(changed)).problems.map(p => p.code))
    expect(verifyReceipt(freezeDeep(structuredClone(changed))).status).toBe('failed')
  })
})
