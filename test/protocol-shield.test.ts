import { describe, expect, test } from 'vitest'
import { memoryTable } from './helpers/memory-table.js'
import { Reason } from '../src/core/hand/reasons.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { verifyAbort } from '../src/core/hand/abort-rules.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import type { CardsBody, Receipt, RevealBody } from '../src/core/hand/messages.js'

/** Plays a hand in memory with the dealer's outgoing documents rewritten (and re-signed) by `rewrite`. */
function cheatingDealer (rewrite: (doc: Signed<unknown>, to: string, table: ReturnType<typeof memoryTable>) => Signed<unknown>): ReturnType<typeof memoryTable> {
  const t = memoryTable()
  const dealerSigner = t.signers[0]
  t.intercept = (from, to, doc) => {
    if (from !== t.table.dealer || to === t.table.dealer) return doc
    const changed = rewrite(doc, to, t)
    return changed === doc ? doc : signDocument(changed.type, changed.body, dealerSigner)
  }
  const { hand, effects } = t.dealer.startHand({ dealer: 0 })
  t.run(t.table.dealer, effects)
  t.run(t.table.dealer, t.dealer.end(hand))
  return t
}

function seatAborts (t: ReturnType<typeof memoryTable>, seat: number): Array<ReturnType<typeof verifyAbort>> {
  return (t.appended.get(t.signers[seat].peerId) ?? []).filter(e => e.entry === 'abort').map(e => verifyAbort(e.payload))
}

describe('each seat\'s own check of the reveal (the shield)', () => {
  test('a reveal whose secret is not the committed one fails every seat\'s shield, with a signed record', () => {
    const t = cheatingDealer(doc => doc.type === 'reveal' ? { ...doc, body: { ...(doc.body as RevealBody), secret: 'f'.repeat(64) } } : doc)
    for (const seat of [1, 2, 3]) {
      const aborts = seatAborts(t, seat)
      expect(aborts).toHaveLength(1)
      expect(aborts[0].problems).toEqual([])
      expect(aborts[0].summary?.reason).toBe('invalid-reveal')
      expect(aborts[0].summary?.blame).toEqual([t.table.dealer])
      expect((t.appended.get(t.signers[seat].peerId) ?? []).some(e => e.entry === 'receipt')).toBe(false)
    }
  })

  test('a reveal that leaves out a seat\'s nonce fails the shield', () => {
    const t = cheatingDealer(doc => {
      if (doc.type !== 'reveal') return doc
      const body = doc.body as RevealBody
      return { ...doc, body: { ...body, nonces: body.nonces.filter(n => n.body.seat !== 2) } }
    })
    expect(seatAborts(t, 2)[0]?.summary?.reason).toBe('invalid-reveal')
    expect(seatAborts(t, 1)[0]?.summary?.reason).toBe('invalid-reveal')
  })

  test('cards that are not the deck\'s, sent to one seat, are caught by that seat at the reveal', () => {
    const t = cheatingDealer((doc, to, table) => {
      if (doc.type !== 'cards' || to !== table.signers[1].peerId) return doc
      const body = doc.body as CardsBody
      // Swap one card for another seat's: the seat holds a plausible hand that is not its deal.
      return { ...doc, body: { ...body, cards: [...body.cards.slice(1), body.cards[0] === 'AS' ? 'KS' : 'AS'] } }
    })
    const aborts = seatAborts(t, 1)
    expect(aborts[0]?.summary?.reason).toBe('invalid-reveal')
    expect(aborts[0]?.problems).toEqual([])
    // The honest seats verified and countersigned; seat 1 did not, so the dealer finalises at its deadline.
    t.clock.now += 6_000
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    const receipt = (t.appended.get(t.table.dealer) ?? []).find(e => e.entry === 'receipt')?.payload as Receipt
    const verdict = verifyReceipt(receipt)
    // Every check passes, but seat 1's countersignature is missing: incomplete, never a pass.
    expect(verdict).toMatchObject({ ok: false, status: 'incomplete', problems: [] })
    expect(verdict.summary?.acked).toEqual([0, 2, 3])
    expect(verdict.summary?.missingAcks).toEqual([1])
  })
})

describe('the offline verifier catches a dealer that re-signs a changed receipt', () => {
  const base = (): Receipt => {
    const t = memoryTable()
    const { hand, effects } = t.dealer.startHand({ dealer: 1 })
    t.run(t.table.dealer, effects)
    t.run(t.table.dealer, t.dealer.end(hand))
    return (t.appended.get(t.table.dealer) ?? []).find(e => e.entry === 'receipt')?.payload as Receipt
  }

  test('an honest receipt verifies; each single change below is named', () => {
    const receipt = base()
    expect(verifyReceipt(receipt).problems).toEqual([])
    const swapped = structuredClone(receipt)
    swapped.reveal.body.params = { dealer: 2 }
    expect(verifyReceipt(swapped).problems.map(p => p.message).join(';')).toMatch(/reveal: bad signature/)
    const noAck = structuredClone(receipt)
    noAck.acks[1].body.cards = '0'.repeat(64)
    expect(verifyReceipt(noAck).problems.map(p => p.message).join(';')).toMatch(/countersignature of seat 1: bad signature/)
    const dupPledge = structuredClone(receipt)
    dupPledge.pledges.push(dupPledge.pledges[0])
    expect(verifyReceipt(dupPledge).problems.map(p => p.message).join(';')).toMatch(/pledge: seat 0 appears twice/)
    // Tools match the typed codes, not the text.
    expect(verifyReceipt(swapped).problems.map(p => p.code)).toContain(Reason.BAD_SIGNATURE)
    expect(verifyReceipt(dupPledge).problems.map(p => p.code)).toContain(Reason.SEAT_SET)
  })
})
