// Issue 9, item 5: a nonce that is not well-formed must be refused before it is accepted, and an
// unexpected error while handling a hand must end it with the right party named, never nobody.
// In memory, real wire encoding.
import { describe, expect, test } from 'vitest'
import { memoryTable, type MemoryTable } from './helpers/memory-table.js'
import { verifyAbort } from '../src/core/hand/abort-rules.js'
import { sha256Hex } from '../src/core/bytes.js'
import { signDocument, verifyDocument, type Signed } from '../src/core/signed.js'
import { CONTRIBUTION_PATTERN, contributionProblem } from '../src/core/contribution.js'
import type { CommitBody, NonceBody, PledgeBody, PledgesBody, SignedAbort } from '../src/core/hand/messages.js'
import type { ViewBody } from '../src/protocol/wire.js'
import { docDigest } from '../src/core/hand/digest.js'

const rogue = 3
const peerOf = (t: MemoryTable, seat: number): string => t.signers[seat].peerId
const dealerRecord = (t: MemoryTable, hand: number): SignedAbort =>
  (t.appended.get(t.table.dealer) ?? []).find(e => e.hand === hand && e.entry === 'abort' && (e.payload as SignedAbort).signer === t.table.dealer)?.payload as SignedAbort

/**
 * Seat 3 pledges the hash of `nonce` (hashed as UTF-8, as every pledge is) and, once the PLEDGES
 * are out, sends `nonce` itself, correctly signed.
 */
function playRogueNonce (t: MemoryTable, nonce: string): number {
  const signer = t.signers[rogue]
  let pledges: Signed<PledgesBody> | undefined
  t.intercept = (from, to, doc) => {
    if (from === signer.peerId && doc.type === 'pledge') return signDocument('pledge', { ...(doc.body as PledgeBody), nonceHash: sha256Hex(nonce) }, signer)
    if (to === signer.peerId && doc.type === 'pledges') { pledges = doc as Signed<PledgesBody>; return undefined } // its own machine would refuse the altered pledge
    return doc
  }
  const { hand, effects } = t.dealer.startHand({ dealer: 0 })
  t.run(t.table.dealer, effects)
  // The rogue seat's VIEW, made by hand (it shows what the dealer sent it): the others then send their nonces.
  const commitDoc = (t.persisted.get(t.table.dealer)?.get(`dealer/${t.table.id}/hand/${String(hand).padStart(16, '0')}`) as { commit: Signed<CommitBody> }).commit
  const p = pledges as Signed<PledgesBody>
  const view = signDocument('view', { table: t.table.id, hand, commit: docDigest(commitDoc), seat: rogue, pledges: docDigest(p), commitDoc, pledgesDoc: p, again: false } satisfies ViewBody, signer)
  t.run(signer.peerId, [0, 1, 2].map(s => ({ kind: 'send' as const, to: peerOf(t, s), doc: view })))
  expect(t.dealer.status()).toMatchObject([{ phase: 'contributing', contributed: 3 }])
  const body: NonceBody = { table: t.table.id, hand, commit: docDigest(commitDoc), seat: rogue, nonce }
  // (The honest seats' nonces reach the rogue seat's own machine, which refuses them: it never saw the PLEDGES.)
  t.run(signer.peerId, [{ kind: 'send', to: t.table.dealer, doc: signDocument('nonce', body, signer) }])
  return hand
}


describe('contributions are well-formed before they are accepted', () => {
  test('the rule: exactly 64 lowercase hex characters', () => {
    expect(CONTRIBUTION_PATTERN.source).toBe('^[0-9a-f]{64}$')
    expect(contributionProblem('ab'.repeat(32), 'n')).toBeNull()
    for (const bad of ['AB'.repeat(32), 'ab'.repeat(31), 'ab'.repeat(33), 'x|y', '', 'é'.repeat(64), '\uD800' + 'a'.repeat(63), 42]) {
      expect(contributionProblem(bad, 'n'), JSON.stringify(bad)).toMatch(/^n is not/)
    }
    expect(contributionProblem('\uD800' + 'a'.repeat(63), 'n')).toMatch(/lone surrogate/)
  })

  test('a lone-surrogate nonce matching its pledge is refused, and the hand ends naming the seat that sent it', () => {
    const t = memoryTable()
    // A lone surrogate hashes like U+FFFD: the pledge matches, yet the scheme cannot take the nonce.
    const evil = '\uD800' + 'a'.repeat(63)
    expect(sha256Hex(evil)).toBe(sha256Hex('\uFFFD' + 'a'.repeat(63)))
    const hand = playRogueNonce(t, evil)
    expect(t.rejections.filter(r => r.to !== peerOf(t, rogue))).toEqual([{ to: t.table.dealer, reason: `nonce of seat ${rogue} for hand ${hand} is not 64 lowercase hex characters (64 characters, with a lone surrogate)` }])
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'contributing', contributed: 3 }])
    t.clock.now += 6_000
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    const record = dealerRecord(t, hand)
    expect(record.body).toMatchObject({ reason: 'missing-nonce', blame: [peerOf(t, rogue)] })
    expect(verifyAbort(record).problems).toEqual([])
  })

  test('a nonce with a key-text separator, or upper case, is refused the same way', () => {
    for (const nonce of ['a|b', 'AB'.repeat(32)]) {
      const t = memoryTable()
      const hand = playRogueNonce(t, nonce)
      expect(t.rejections.filter(r => r.to !== peerOf(t, rogue)).map(r => r.reason)).toEqual([expect.stringMatching(new RegExp(`^nonce of seat ${rogue} for hand ${hand} is not 64 lowercase hex`))])
    }
  })
})

describe('an unexpected error while handling a hand ends it with someone named', () => {
  test('the dealer machine failing on a step ends the hand at once with dealer-stopped naming the dealer, secret published', () => {
    // A fault of the dealer's own (here its signature check throws on the last nonce).
    const t = memoryTable({
      dealerVerifyDoc: (doc) => {
        if (doc.type === 'nonce' && (doc.body as NonceBody).seat === rogue) throw new TypeError('boom')
        return verifyDocument(doc)
      }
    })
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    // (The seats' nonces to one another and to the dealer then come for a hand no longer in play.)
    expect(t.rejections.map(r => r.reason)).toContain('machine failure: boom')
    const record = dealerRecord(t, hand)
    expect(record.body).toMatchObject({ reason: 'dealer-stopped', blame: [t.table.dealer] })
    expect(record.body.detail).toMatch(/boom/)
    expect(verifyAbort(record).problems).toEqual([])
    // Every seat has the record; nothing of the hand is left in play.
    for (const [peer, seat] of t.seats) {
      expect(seat.status(), peer).toEqual([])
      expect((t.appended.get(peer) ?? []).some(e => e.entry === 'abort' && e.hand === hand), peer).toBe(true)
    }
    expect(t.dealer.status()).toEqual([])
  })
})

describe('a member cannot poison the dealer\'s log with records (issue 9, item 1)', () => {
  test('after the deal: one record per seat and hand is logged, copies and a forged record are refused', () => {
    const t = memoryTable()
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    const peer = peerOf(t, rogue)
    const seat = t.seats.get(peer)
    // Seat 3 claims the dealer never revealed (it asks first, then records).
    t.clock.now = (seat?.nextDeadline() as number) + 1
    t.run(peer, seat?.tick(t.clock.now) ?? [])
    t.clock.now = (seat?.nextDeadline() as number) + 1
    const claim = (seat?.tick(t.clock.now) ?? []).find(e => e.kind === 'send' && e.doc.type === 'abort')
    expect(claim).toBeDefined()
    const record = (claim as { doc: SignedAbort }).doc
    const logged = (): number => (t.appended.get(t.table.dealer) ?? []).filter(e => e.entry === 'abort' && (e.payload as SignedAbort).signer === peer).length
    t.run(peer, [claim!])
    expect(logged()).toBe(1)
    // 40 more copies: refused, each with its reason; the log holds one.
    for (let i = 0; i < 40; i++) t.run(peer, [{ kind: 'send', to: t.table.dealer, doc: record }])
    expect(logged()).toBe(1)
    expect(t.rejections.filter(r => r.reason === `seat ${rogue} already filed a record for hand ${hand}`)).toHaveLength(40)
    // A record blaming someone who is not at the table is refused by the core's rules.
    const stranger = signDocument('abort', { ...record.body, blame: [t.signers[4].peerId] }, t.signers[rogue])
    t.run(peer, [{ kind: 'send', to: t.table.dealer, doc: stranger }])
    expect(logged()).toBe(1)
    expect(t.rejections.at(-1)?.reason).toMatch(/^abort of seat 3 does not verify: /)
    // The hand goes on: the dealer still reveals and the other seats countersign.
    t.run(t.table.dealer, t.dealer.end(hand))
    expect(verifyAbort(record).problems).toEqual([])
  })
})
