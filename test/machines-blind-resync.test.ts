// blind-v1, a connection that came back (docs/dealer-blind.md §9 "A connection that came back"):
// a frame lost just before a connection died, either way, and the dealer's node told that the
// seat's peer connected again (DealerSide.resync): it sends the seat what it may lack, the seat
// answers with what the dealer may lack of it, and the hand ends in one receipt with nothing
// refused and nobody named. In memory, injected clock, duo and coinche.
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import type { Signed } from '../src/core/signed.js'
import { RESYNCS_PER_SEAT_HAND } from '../src/protocol/dealer.js'
import { blindTable, ids } from './helpers/blind-memory.js'

type T = ReturnType<typeof blindTable>

/** A table whose first document of `type` from `from` to `to` is lost; `lost()` says whether it was. */
function tableLosingOnce (seats: string[], game: string, type: string, from: string, to: string): { t: T, lost: () => boolean } {
  let lost = false
  const t = blindTable(seats, {
    game,
    intercept: (f: string, d: string, doc: Signed<unknown>) => {
      if (lost || doc.type !== type || f !== from || d !== to) return doc
      lost = true
      return undefined
    }
  })
  return { t, lost: () => lost }
}

function resync (t: T, peer: string): void {
  t.run(t.dealerNode, 'dealer', t.dealerNode.dealer!.resync(peer))
}

/** The dealer ends the hand: one receipt everywhere, it verifies, no abort, nothing refused. */
function endWithOneReceipt (t: T, hand: number): void {
  t.end(hand)
  const receipts = [...t.nodes.values()].map(n => n.log.find(l => l.entry === 'receipt' && l.payload.commit.body.hand === hand)?.payload)
  for (const r of receipts) expect(canonicalJson(r)).toBe(canonicalJson(receipts[0]))
  expect(receipts[0]).toBeDefined()
  expect(verifyReceipt(receipts[0]).problems).toEqual([])
  expect([...t.nodes.values()].flatMap(n => n.log.filter(l => l.entry === 'abort'))).toEqual([])
  expect(t.rejections).toEqual([])
}

describe('blind-v1: what a lost frame kept from its recipient comes when the connection comes back', () => {
  // A document lost on its way (from, to by node), then the connection back; the dealer deals.
  it.each([
    { lost: 'COMMIT', type: 'commit', seats: 2, game: 'duo', from: 0, to: 1, left: 'keys', answer: 'it goes when the seat connects, and the seat sends its key' },
    { lost: 'key', type: 'bkey', seats: 2, game: 'duo', from: 1, to: 0, left: 'keys', answer: 'the COMMIT goes again, the seat sends its key again' },
    { lost: 'shuffle', type: 'bshuffle', seats: 4, game: 'coinche', from: 1, to: 0, left: 'shuffling', answer: 'the BKEYS go again, the seat sends its shuffle again' }
  ])('a $lost lost on its way: $answer', ({ type, seats, game, from, to, left }) => {
    const { t, lost } = tableLosingOnce(ids.slice(0, seats), game, type, ids[from], ids[to])
    const hand = t.deal()
    expect(lost()).toBe(true)
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: left }])
    resync(t, ids[from === 0 ? to : from])
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'dealt' }])
    endWithOneReceipt(t, hand)
  })

  it('the BKEYS lost on the way to a seat: they go again with the shuffles held, and the seats shuffle', () => {
    const { t, lost } = tableLosingOnce(ids, 'coinche', 'bkeys', ids[0], ids[2])
    const hand = t.deal()
    expect(lost()).toBe(true)
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'shuffling' }])
    // Without the keys, seat 2 refused the shuffles relayed to it meanwhile: they come again with the BKEYS.
    expect(t.rejections).toEqual([`${ids[2].slice(-4)}: message for hand ${hand} arrived in phase keyed`, `${ids[2].slice(-4)}: message for hand ${hand} arrived in phase keyed`])
    t.rejections.length = 0
    resync(t, ids[2])
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'dealt' }])
    endWithOneReceipt(t, hand)
  })

  it('shares lost on the way to the dealer: the BDEAL goes again, fresh shares come, and those it held already change nothing', () => {
    const { t, lost } = tableLosingOnce(ids, 'coinche', 'bshares', ids[2], ids[0])
    const hand = t.deal()
    expect(lost()).toBe(true)
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'dealt' }])
    resync(t, ids[2])
    for (const id of ids) expect(t.nodes.get(id)!.seat!.cards(hand).filter(c => !c.public), id).toHaveLength(1)
    endWithOneReceipt(t, hand)
  })

  it('shares relayed to their owner lost: they go again, and the seat opens its cards', () => {
    const { t, lost } = tableLosingOnce(ids, 'coinche', 'bshares', ids[0], ids[3])
    const hand = t.deal()
    expect(lost()).toBe(true)
    expect(t.nodes.get(ids[3])!.seat!.cards(hand).filter(c => !c.public)).toEqual([])
    resync(t, ids[3])
    expect(t.nodes.get(ids[3])!.seat!.cards(hand).filter(c => !c.public)).toHaveLength(1)
    endWithOneReceipt(t, hand)
  })

  it('an ACK lost on the way to the dealer: the BEND and BREVEAL go again, the seat countersigns again', () => {
    const { t, lost } = tableLosingOnce(ids.slice(0, 2), 'duo', 'ack', ids[1], ids[0])
    const hand = t.deal()
    t.end(hand)
    expect(lost()).toBe(true)
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'revealed' }])
    resync(t, ids[1])
    const receipts = [...t.nodes.values()].map(n => n.log.find(l => l.entry === 'receipt')?.payload)
    expect(receipts[0]).toBeDefined()
    expect(verifyReceipt(receipts[0]).summary?.acked).toEqual([0, 1])
    expect(t.rejections).toEqual([])
  })

  it('nothing lost: a resync of every seat in every phase sends repeats only, none refused', () => {
    const t = blindTable(ids, { game: 'coinche' })
    let resyncs = 0
    const all = (): void => {
      for (const id of ids.slice(1)) {
        const effects = t.dealerNode.dealer!.resync(id)
        resyncs += effects.length
        t.run(t.dealerNode, 'dealer', effects)
      }
    }
    const hand = t.deal()
    // Dealt: each seat gets the shares of its cards again, and opens nothing twice.
    const state = (): unknown[] => [...t.nodes.values()].map(n => [n.events.length, canonicalJson([...n.saved])])
    const before = state()
    all()
    expect(resyncs).toBeGreaterThan(0)
    expect(state()).toEqual(before)
    t.end(hand)
    all()
    const receipts = [...t.nodes.values()].map(n => n.log.find(l => l.entry === 'receipt')?.payload)
    for (const r of receipts) expect(canonicalJson(r)).toBe(canonicalJson(receipts[0]))
    expect(verifyReceipt(receipts[0]).problems).toEqual([])
    expect(t.rejections).toEqual([])
  })

  it('a played hand: every seat resynced as the first card reaches the dealer gets repeats only; the hand is played out to one receipt', () => {
    let t: T | undefined
    let done = false
    t = blindTable(ids.slice(0, 2), {
      game: 'duo',
      play: true,
      intercept: (_from: string, to: string, doc: Signed<unknown>) => {
        if (!done && t !== undefined && to === ids[0] && doc.type === 'play') {
          done = true
          t.run(t.dealerNode, 'dealer', t.dealerNode.dealer!.resync(ids[1]))
        }
        return doc
      }
    })
    const hand = t.deal()
    expect(done).toBe(true)
    const receipts = [...t.nodes.values()].map(n => n.log.find(l => l.entry === 'receipt' && l.payload.commit.body.hand === hand)?.payload)
    expect(receipts[0]?.play?.actions.length).toBeGreaterThan(0)
    for (const r of receipts) expect(canonicalJson(r)).toBe(canonicalJson(receipts[0]))
    expect(verifyReceipt(receipts[0]).problems).toEqual([])
    expect(t.rejections).toEqual([])
  })

  it(`at most ${RESYNCS_PER_SEAT_HAND} resyncs a seat and hand`, () => {
    const { t } = tableLosingOnce(ids.slice(0, 2), 'duo', 'bkey', ids[1], ids[0])
    t.deal()
    const types = (): string[] => t.dealerNode.dealer!.resync(ids[1]).map(e => e.kind === 'send' ? e.doc.type : e.kind)
    for (let i = 0; i < RESYNCS_PER_SEAT_HAND; i++) expect(types()).toEqual(['commit'])
    expect(types()).toEqual([])
    expect(t.dealerNode.dealer!.resync(ids[0])).toEqual([])
  })
})
