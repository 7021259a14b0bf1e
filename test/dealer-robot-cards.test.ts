// The dealer node plays the robot seats, so it may show their cards to its operator (`hand cards`
// on the dealer node): only robots', only the stages delivered, never a person's.
import { describe, expect, it } from 'vitest'
import { memoryTable } from './helpers/memory-table.js'

describe('robot seats\' cards at the dealer', () => {
  it('are the robots\' own deliveries of the stages dealt so far, and nobody else\'s', () => {
    const t = memoryTable({ game: 'belote', robots: [2, 3] })
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    const robots = t.dealer.robotCards(hand)
    expect(robots.map(r => [r.stage, r.seat, r.cards.length])).toEqual([['deal', 2, 5], ['deal', 3, 5]])
    // Disjoint from every person's cards.
    const people = [...t.seats.values()].flatMap(s => s.cards(hand)).filter(c => !c.public).flatMap(c => c.cards)
    expect(people.length).toBe(10)
    expect(robots.flatMap(r => r.cards).filter(c => people.includes(c))).toEqual([])
    t.run(t.table.dealer, t.dealer.deliverStage(hand, 'take', 1))
    expect(t.dealer.robotCards(hand).map(r => [r.stage, r.seat, r.cards.length])).toEqual([['deal', 2, 5], ['deal', 3, 5], ['take', 2, 3], ['take', 3, 3]])
    expect(t.dealer.robotCards(hand + 1)).toEqual([])
  })
})
