// Belote, duo and tarot played at a blind-v1 table, in memory (docs/dealer-blind.md §15.1): the
// stages a bid asks for (belote's take, duo's face-up packets, tarot's dog) dealt because of it, the
// cards a seat holds from them played with their openings, robots played by the dealer's node on
// their own cards; every receipt replays. (Coinche, the tampered cases: test/blind-play.test.ts.)
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import type { ActionDoc } from '../src/core/games/action-chain.js'
import { blindTable, dealUntilPlayed, ids, receiptsOf } from './helpers/blind-memory.js'


describe('belote, duo and tarot at a blind-v1 table, each card opened as it is played', () => {
  it('belote, two persons and two robots: the take dealt because of the bid, the taker plays the turned-up card with its opening, the robots play on their own cards', () => {
    const t = blindTable([ids[0], 'robot', ids[2], 'robot'], { play: true, game: 'belote' })
    const { hand, receipt } = dealUntilPlayed(t)
    expect(t.rejections).toEqual([])
    const v = verifyReceipt(receipt)
    expect(v.problems).toEqual([])
    expect(v.summary!.play!.tricks).toBe(8)
    // The take was dealt because of the bid: the reveal lists it, with the taker the bid named.
    const took = receipt.play.actions.find((a: any) => a.body.action.type === 'take')
    expect(receipt.reveal.body.stages).toEqual(['deal', 'turnUp', 'take'])
    expect(receipt.reveal.body.params.taker).toBe(took.body.seat)
    // The turned-up card is played by the taker, with an opening of its position.
    const turnUp = v.summary!.deliveries!.find(d => d.stage === 'turnUp')!.cards[0]
    const played = receipt.play.actions.find((a: any) => a.body.action.type === 'card' && a.body.action.card === turnUp)
    expect(played.body.seat).toBe(took.body.seat)
    expect(played.body.opening.card).toBe(turnUp)
    const robotCards = receipt.play.actions.filter((a: ActionDoc) => [1, 3].includes(a.body.seat) && (a.body.action as { type: string }).type === 'card')
    expect(robotCards).toHaveLength(16)
    for (const a of robotCards) expect(a.signer).toBe(ids[0])
    const receipts = receiptsOf(t, hand).filter(r => r !== undefined)
    expect(receipts).toHaveLength(2)
    for (const r of receipts) expect(canonicalJson(r)).toBe(canonicalJson(receipt))
  })

  it('duo, a person and a robot: each face-up card played with an opening of its owner\'s public packet, each turned-up one of its private position', () => {
    const t = blindTable([ids[0], 'robot'], { play: true, game: 'duo' })
    const { hand, receipt } = dealUntilPlayed(t)
    expect(t.rejections).toEqual([])
    const v = verifyReceipt(receipt)
    expect(v.problems).toEqual([])
    expect(v.summary!.play!.tricks).toBe(16)
    const faceUp = new Set(v.summary!.deliveries!.filter(d => d.stage === 'faceUp').flatMap(d => d.cards))
    const cards = receipt.play.actions.filter((a: ActionDoc) => (a.body.action as { type: string }).type === 'card')
    expect(cards).toHaveLength(32)
    expect(cards.filter((a: any) => faceUp.has(a.body.action.card))).toHaveLength(16)
    for (const a of cards) expect(a.body.opening.card).toBe(a.body.action.card)
  })

  it('tarot, two persons and two robots: the dog dealt because of the garde, held and played by its taker with openings of the dog\'s positions', () => {
    const t = blindTable([ids[0], 'robot', ids[2], 'robot'], { play: true, game: 'tarot' })
    const { hand, receipt } = dealUntilPlayed(t, 'play')
    expect(t.rejections).toEqual([])
    const v = verifyReceipt(receipt)
    expect(v.problems).toEqual([])
    expect(v.summary!.play!.tricks).toBe(18)
    const bid = receipt.play.actions.filter((a: any) => a.body.action.type === 'bid' && a.body.action.bid !== 'pass').at(-1)
    expect(['petite', 'garde']).toContain(bid.body.action.bid)
    expect(receipt.reveal.body.stages).toEqual(['deal', 'dog'])
    const dog = new Set(v.summary!.deliveries!.find(d => d.stage === 'dog')!.cards)
    const plays = receipt.play.actions.filter((a: any) => a.body.action.type === 'play')
    expect(plays).toHaveLength(72)
    for (const a of plays) expect(a.body.opening.card).toBe(a.body.action.card)
    // Every dog card played is the taker's (the others went to its écart).
    for (const a of plays.filter((p: any) => dog.has(p.body.action.card))) expect(a.body.seat).toBe(bid.body.seat)
  })

})
