// Duo in blind-v1: each seat's face-up packet is public (docs/dealer-blind.md), so both seats open
// both packets, and no seat refuses the shares relayed for the other seat's face-up cards (the
// seat machine used to reject them as "shares for another seat's cards").
import { describe, expect, it } from 'vitest'
import { isPublicStage } from '../src/core/schemes/blind.js'
import { blindTable as table, ids } from './helpers/blind-memory.js'

describe('blind-v1 duo face-up packets', () => {
  it('public stages are the game\'s shown cards', () => {
    expect(['coinche', 'belote', 'duo', 'tarot'].map(g => ['deal', 'faceUp', 'turnUp', 'take', 'dog'].filter(s => isPublicStage(g, s)))).toEqual([[], ['turnUp'], ['faceUp'], ['dog']])
  })

  it('both seats see both face-up packets, with no rejected message, in two hands', () => {
    const t = table(ids.slice(0, 2), { game: 'duo' })
    for (let n = 0; n < 2; n++) {
      const hand = t.deal()
      t.run(t.dealerNode, 'dealer', t.dealerNode.dealer!.deliverStage(hand, 'faceUp'))
      expect(t.rejections).toEqual([])
      const faceUp = ids.slice(0, 2).map(id => t.nodes.get(id)!.seat!.cards(hand).filter(c => c.stage === 'faceUp'))
      for (const seen of faceUp) {
        expect(seen.map(c => [c.seat, c.public, c.cards.length]).sort()).toEqual([[0, true, 8], [1, true, 8]])
      }
      // Both seats opened the same cards for each packet.
      expect(faceUp[0].find(c => c.seat === 0)!.cards).toEqual(faceUp[1].find(c => c.seat === 0)!.cards)
      expect(faceUp[0].find(c => c.seat === 1)!.cards).toEqual(faceUp[1].find(c => c.seat === 1)!.cards)
      t.end(hand)
      expect(t.rejections).toEqual([])
    }
  }, 120_000)
})
