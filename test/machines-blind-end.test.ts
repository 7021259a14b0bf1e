// Ending a blind hand before every seat holds its cards (issue 18): the hand keys open the whole
// deck, so the dealer refuses End while any share a BDEAL asked for is still due (the reason names
// whose cards and who owes them), and a seat whose own shares were still on their way when an
// honest REVEAL came takes its cards from the checked keys instead of blaming the dealer. In memory,
// on the real wire encoding, duo (two seats, the dealer's node holds seat 0).
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import type { Signed } from '../src/core/signed.js'
import { blindTable, ids } from './helpers/blind-memory.js'

const receiptsOf = (t: ReturnType<typeof blindTable>): unknown[] => [...t.nodes.values()].map(n => n.log.find(l => l.entry === 'receipt')?.payload)

describe('blind End before every seat holds its cards', () => {
  it('the dealer refuses End while shares are due, naming whose cards; once they are in, the hand ends with a receipt that verifies', () => {
    const held: Array<Signed<any>> = []
    let hold = true
    const t = blindTable(ids.slice(0, 2), {
      game: 'duo',
      // Seat 1's shares for seat 0's cards are slow to reach the dealer.
      intercept: (from, to, doc) => {
        if (hold && from === ids[1] && to === ids[0] && doc.type === 'bshares' && doc.body.to === 0) { held.push(doc); return undefined }
        return doc
      }
    })
    const hand = t.deal()
    expect(held.length).toBeGreaterThan(0)
    expect(t.nodes.get(ids[0])!.seat!.cards(hand)).toEqual([])
    expect(() => { t.end(hand) }).toThrow(/hand 1 cannot end yet: not every seat holds its cards: seat 0's cards \(shares due from seat 1\)/)
    // Refused without a trace: no BEND went out, nothing logged, the hand still dealt.
    expect([...t.nodes.values()].flatMap(n => n.frames.filter(f => f.type === 'bend'))).toEqual([])
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'dealt' }])
    hold = false
    t.run(t.nodes.get(ids[1])!, 'seat', held.map(doc => ({ kind: 'send' as const, to: ids[0], doc })))
    expect(t.nodes.get(ids[0])!.seat!.cards(hand).length).toBeGreaterThan(0)
    t.end(hand)
    const receipts = receiptsOf(t)
    for (const r of receipts) expect(canonicalJson(r)).toBe(canonicalJson(receipts[0]))
    expect(verifyReceipt(receipts[0]).problems).toEqual([])
    expect(t.rejections).toEqual([])
    expect([...t.nodes.values()].flatMap(n => n.log.filter(l => l.entry === 'abort'))).toEqual([])
  }, 60_000)

  it('a seat whose shares were still on their way when the REVEAL came takes its cards from the keys and countersigns: nobody blamed', () => {
    const late: Array<Signed<any>> = []
    const t = blindTable(ids.slice(0, 2), {
      game: 'duo',
      // The dealer has every share, but the ones it relays to seat 1 arrive after the REVEAL.
      intercept: (from, to, doc) => {
        if (from === ids[0] && to === ids[1] && doc.type === 'bshares' && doc.body.to === 1) { late.push(doc); return undefined }
        return doc
      }
    })
    const hand = t.deal()
    expect(late.length).toBeGreaterThan(0)
    expect(t.nodes.get(ids[1])!.seat!.cards(hand)).toEqual([])
    t.end(hand)
    const seat1 = t.nodes.get(ids[1])!
    expect(seat1.events.filter(e => e.type === 'aborted' || (e.type === 'shield' && e.ok !== true))).toEqual([])
    const receipts = receiptsOf(t)
    for (const r of receipts) expect(canonicalJson(r)).toBe(canonicalJson(receipts[0]))
    const v = verifyReceipt(receipts[0])
    expect(v.problems).toEqual([])
    // Its cards (event and ack) are the ones the keys open.
    const mine = v.summary!.deliveries!.filter(d => !d.public && d.seat === 1)
    expect(seat1.events.filter(e => e.type === 'cards' && e.seat === 1).map(e => e.cards)).toEqual(mine.map(d => d.cards))
    expect((receipts[0] as any).acks.map((a: any) => a.body.seat)).toEqual([0, 1])
    // The shares that come after the hand ended are refused, changing nothing.
    t.run(t.dealerNode, 'dealer', late.map(doc => ({ kind: 'send' as const, to: ids[1], doc })))
    expect(seat1.log.map(l => l.entry)).toEqual(['receipt'])
  }, 60_000)

  it('a seat that opened a later stage before its first one (belote: take before deal) countersigns its cards in the layout\'s order, and its ack is taken (issue 18)', () => {
    const t = blindTable(ids, {
      game: 'belote',
      // The dealer's relay of seat 1's deal shares never reaches seat 1: it opens turnUp and take, then deal from the keys.
      intercept: (_from, to, doc) => (to === ids[1] && doc.type === 'bshares' && doc.body.stage === 'deal' && doc.body.to === 1 ? undefined : doc)
    })
    const hand = t.deal()
    t.run(t.dealerNode, 'dealer', t.dealerNode.dealer!.deliverStage(hand, 'take', 2))
    expect(t.nodes.get(ids[1])!.seat!.cards(hand).filter(c => !c.public && c.seat === 1).map(c => c.stage)).toEqual(['take'])
    t.end(hand)
    expect(t.rejections).toEqual([])
    const receipts = receiptsOf(t)
    for (const r of receipts) expect(canonicalJson(r)).toBe(canonicalJson(receipts[0]))
    const v = verifyReceipt(receipts[0])
    expect([v.status, v.problems]).toEqual(['verified', []])
    expect((receipts[0] as any).acks.map((a: any) => a.body.seat)).toEqual([0, 1, 2, 3])
  }, 60_000)
})
