// Duo on a blind table (issue 19): the face-up packets are public deliveries that each belong to
// a seat; every seat gives its shares for both and opens both, as on a commit–reveal table, and the
// receipt verifies. In memory.
import { describe, expect, it } from 'vitest'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { blindTable, ids } from './helpers/blind-memory.js'

describe('blind duo: both face-up packets', () => {
  it.each([1])('dealer seat %i (the non-dealer, seat 0, receives first): both seats open both face-up packets, nothing refused, the receipt verifies', (dealerSeat) => {
    const t = blindTable(ids.slice(0, 2), { game: 'duo' })
    const { hand, effects } = t.dealerNode.dealer!.startHand({ dealer: dealerSeat })
    t.run(t.dealerNode, 'dealer', effects)
    t.run(t.dealerNode, 'dealer', t.dealerNode.dealer!.deliverStage(hand, 'faceUp'))
    expect(t.rejections).toEqual([])
    const faceUp = ids.slice(0, 2).map(id => t.nodes.get(id)!.seat!.cards(hand).filter(c => c.stage === 'faceUp'))
    for (const f of faceUp) expect(f.map(c => [c.seat, c.public, c.cards.length])).toEqual([[0, true, 8], [1, true, 8]])
    t.end(hand)
    const receipt = t.dealerNode.log.find(l => l.entry === 'receipt')?.payload
    const v = verifyReceipt(receipt)
    expect(v.problems).toEqual([])
    const revealed = v.summary!.deliveries!.filter(d => d.stage === 'faceUp')
    for (const f of faceUp) {
      for (const c of f) expect(c.cards).toEqual(revealed.find(d => d.seat === c.seat)?.cards)
    }
  }, 60_000)
})
