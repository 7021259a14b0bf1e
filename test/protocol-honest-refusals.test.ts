// Commit–reveal machines refuse, first, what would make a record its evidence cannot support
// (issue 18). A dealer never reveals a hand while a seat's own cards have not reached it (the
// seat's shield would rightly record invalid-reveal, blaming an honest dealer): End is refused with
// the reason, and the cards are sent again until they arrive. A seat never takes a PLEDGES that the
// abort rules would fail (its records carry it). And a seat whose node was up but unreachable
// for the table's first hand fetches that hand's record before its log can show a gap. In memory,
// injected clock; the host's delivery reports are given by hand (the in-memory table delivers
// every frame).
import { describe, expect, test } from 'vitest'
import { memoryTable } from './helpers/memory-table.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { verifyAsLog } from './helpers/verify-as-log.js'
import type { Signed } from '../src/core/signed.js'
import type { CardsBody, PledgesBody } from '../src/core/hand/messages.js'
import { signDocument } from '../src/core/signed.js'
import type { Signer } from '../src/core/identity.js'

describe('End while a seat\'s own cards are undelivered', () => {
  test('is refused naming the seat, its stage and the send error; the cards go again; once delivered, End gives a receipt with nobody blamed', () => {
    const t = memoryTable()
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    const seat1 = t.signers[1].peerId
    const cards = (t.frames.get(seat1) ?? []).map(f => JSON.parse(new TextDecoder().decode(f)) as Signed<CardsBody>)
      .find(d => d.type === 'cards' && !d.body.public && d.body.seat === 1) as Signed<CardsBody>
    expect(cards).toBeDefined()
    t.dealer.delivery(seat1, cards, { ok: false, reason: 'stream reset' })
    expect(() => t.dealer.end(hand)).toThrow(/hand 1 cannot end yet: not every seat holds its cards: seat 1's deal cards \(stream reset\) did not reach it/)
    // Refused without a trace: no REVEAL went out.
    expect([...t.frames.values()].flat().some(f => new TextDecoder().decode(f).includes('"type":"reveal"'))).toBe(false)
    t.clock.now += 1_000
    const again = t.dealer.tick(t.clock.now).filter(e => e.kind === 'send')
    expect(again).toEqual([{ kind: 'send', to: seat1, doc: cards }])
    t.run(t.table.dealer, again)
    t.dealer.delivery(seat1, cards, { ok: true })
    t.run(t.table.dealer, t.dealer.end(hand))
    const receipt = (t.appended.get(t.table.dealer) ?? []).find(e => e.entry === 'receipt')?.payload
    expect(verifyReceipt(receipt).status).toBe('verified')
    expect([...t.appended.values()].flat().filter(e => e.entry === 'abort')).toEqual([])
    expect(t.rejections).toEqual([])
  })
})

describe('a PLEDGES the abort rules would fail', () => {
  test('out of seat order: the seat refuses it with the rule\'s reason and signs nothing with it', () => {
    const t = memoryTable()
    const seat1 = t.signers[1].peerId
    const dealer = t.signers.find(s => s.peerId === t.table.dealer) as Signer
    t.intercept = (_from, to, doc) => to === seat1 && doc.type === 'pledges'
      ? signDocument('pledges', { ...(doc.body as PledgesBody), pledges: [...(doc.body as PledgesBody).pledges].reverse() }, dealer)
      : doc
    const { effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    expect(t.rejections.filter(r => r.to === seat1).map(r => r.reason)).toEqual(['pledges: the PLEDGES are not in strictly increasing seat order'])
    expect(t.seats.get(seat1)?.status()).toMatchObject([{ phase: 'pledged' }])
  })
})

describe('a seat unreachable for the table\'s first hand', () => {
  test('on the COMMIT of hand 2 it asks about hand 1, logs the dealer\'s record, and its log verifies whole', async () => {
    const t = memoryTable()
    const seat1 = t.signers[1].peerId
    let away = true
    t.intercept = (from, to, doc) => away && (to === seat1 || from === seat1) ? undefined : doc
    const first = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, first.effects)
    t.clock.now += 30_000
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    expect((t.appended.get(t.table.dealer) ?? []).filter(e => e.hand === first.hand).map(e => e.entry)).toContain('abort')
    away = false
    const second = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, second.effects)
    t.run(t.table.dealer, t.dealer.end(second.hand))
    const log = (t.appended.get(seat1) ?? []).map(e => ({ entry: e.entry, payload: e.payload }))
    expect((t.appended.get(seat1) ?? []).map(e => [e.entry, e.hand])).toEqual([['abort', 1], ['receipt', 2]])
    expect(await verifyAsLog(t.signers[1], log)).toEqual([])
  })
})
