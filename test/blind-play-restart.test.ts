// A played blind-v1 hand across restarts (src/protocol/play-save.ts, docs/dealer-blind.md §15): the
// dealer's node or a seat's node stops in the middle of play and resumes from its save; each card's
// opening is checked on the restored deal, a restarted seat opens its next cards with the shares it
// kept, and the hand ends with every receipt verified.
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { blindTable, ids, receiptsOf } from './helpers/blind-memory.js'


describe('a played blind hand across restarts (src/protocol/play-save.ts)', () => {
  it('the dealer, then a seat, restarted in the middle of play resume from their saves: each opening checked on the restored deal, the seat\'s next cards opened with the shares it kept, every receipt verified', () => {
    const options: Parameters<typeof blindTable>[1] = { play: true }
    const t = blindTable(ids, options)
    // Seat 2's actions never reach the dealer: the hand waits for it, saved.
    options.intercept = (from, to, doc) => (doc.type === 'play' && from === ids[2] && to === ids[0] ? undefined : doc)
    let hand = 0
    for (let deals = 0; deals < 6; deals++) {
      hand = t.deal()
      if (receiptsOf(t, hand)[0] === undefined) break
    }
    expect(receiptsOf(t, hand)[0]).toBeUndefined()
    expect([...t.dealerNode.saved.keys()].some(k => k.endsWith('/play'))).toBe(true)
    const before = t.nodes.get(ids[1])!.events.filter((e: any) => e.hand === hand && e.type === 'action').length
    // The dealer's node restarts; from then on nothing reaches seat 3, which stops once its turn comes, saved.
    options.intercept = (_from, to, doc) => (to === ids[3] ? undefined : doc)
    t.restartDealer()
    const after = t.nodes.get(ids[1])!.events.filter((e: any) => e.hand === hand && e.type === 'action').length
    expect(after).toBeGreaterThan(before)
    expect(receiptsOf(t, hand)[3]).toBeUndefined()
    // Seat 3's node restarts; the dealer sends the chain again to a seat whose turn stays quiet (RESEND_MS).
    options.intercept = undefined
    t.restartSeat(ids[3])
    for (let i = 0; i < 4 && receiptsOf(t, hand)[3] === undefined; i++) t.tick(5_001)
    const receipts = receiptsOf(t, hand)
    expect(receipts.every(r => r !== undefined)).toBe(true)
    for (const r of receipts) expect(canonicalJson(r)).toBe(canonicalJson(receipts[0]))
    const v = verifyReceipt(receipts[0])
    expect(v.problems).toEqual([])
    expect(v.status).toBe('verified')
    expect(receipts[0].play.actions.length).toBeGreaterThan(after)
    for (const n of t.nodes.values()) expect([...n.saved.keys()].filter(k => k.endsWith('/play'))).toEqual([])
  })
})
