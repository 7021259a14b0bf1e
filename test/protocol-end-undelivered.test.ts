// A commit–reveal dealer never reveals a hand while a seat's own cards have not reached it (issue
// 18: an honest dealer must not be blamed): the seat's shield would rightly record invalid-reveal
// ("I never received my own deal cards"), so End is refused first, with the reason, and the cards
// are sent again until they arrive. In memory, injected clock; the host's delivery reports are
// given by hand (the in-memory table delivers every frame).
import { describe, expect, test } from 'vitest'
import { memoryTable } from './helpers/memory-table.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import type { Signed } from '../src/core/signed.js'
import type { CardsBody } from '../src/core/hand/messages.js'

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
