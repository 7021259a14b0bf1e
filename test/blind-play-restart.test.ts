// A played blind-v1 hand across restarts (src/protocol/play-save.ts, docs/dealer-blind.md §15): the
// dealer's node or a seat's node stops in the middle of play and resumes from its save; each card's
// opening is checked on the restored deal, a restarted seat opens its next cards with the shares it
// kept, and the hand ends with every receipt verified.
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { blindTable, ids } from './helpers/blind-memory.js'

const receiptsOf = (t: ReturnType<typeof blindTable>, hand: number): any[] =>
  [...t.nodes.values()].map(n => n.log.find(l => l.entry === 'receipt' && l.payload.commit.body.hand === hand)?.payload)

describe('a played blind hand across restarts (src/protocol/play-save.ts)', () => {
  it('the dealer restarted in the middle of play resumes from its save, checks each opening on the restored deal, and the hand ends verified', () => {
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
    options.intercept = undefined
    t.restartDealer()
    const receipts = receiptsOf(t, hand)
    expect(receipts.every(r => r !== undefined)).toBe(true)
    for (const r of receipts) expect(canonicalJson(r)).toBe(canonicalJson(receipts[0]))
    const v = verifyReceipt(receipts[0])
    expect(v.problems).toEqual([])
    expect(v.status).toBe('verified')
    expect(receipts[0].play.actions.length).toBeGreaterThan(0)
    expect([...t.dealerNode.saved.keys()].filter(k => k.endsWith('/play'))).toEqual([])
  })

  it('a seat restarted in the middle of play resumes from its save, opens its next cards with the shares it kept, and countersigns', () => {
    const options: Parameters<typeof blindTable>[1] = { play: true }
    const t = blindTable(ids, options)
    // Nothing from the dealer reaches seat 3 once play began: it stops, saved.
    let cut = false
    options.intercept = (from, to, doc) => {
      if (doc.type === 'play' && to === ids[3]) cut = true
      return cut && to === ids[3] ? undefined : doc
    }
    let hand = 0
    for (let deals = 0; deals < 6 && !cut; deals++) hand = t.deal()
    expect(receiptsOf(t, hand)[3]).toBeUndefined()
    options.intercept = undefined
    t.restartSeat(ids[3])
    // The dealer sends the chain again to a seat whose turn stays quiet (RESEND_MS), and the hand goes on.
    for (let i = 0; i < 4 && receiptsOf(t, hand)[3] === undefined; i++) t.tick(5_001)
    const receipts = receiptsOf(t, hand)
    expect(receipts.every(r => r !== undefined)).toBe(true)
    expect(verifyReceipt(receipts[3]).problems).toEqual([])
    expect(canonicalJson(receipts[3])).toBe(canonicalJson(receipts[0]))
  })
})
