import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { docDigest, ZERO_HASH } from '../src/core/hand/digest.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import type { Receipt } from '../src/core/hand/messages.js'
import type { Delivery } from '../src/core/schemes/types.js'
import { nativeVerifyDocument } from '../src/crypto/native-crypto.js'
import { memoryTable, type MemoryTable } from './helpers/memory-table.js'

// Guarantees 3 and 4 for every game, in memory (the machines wired through the real wire encoding
// and schema check, on the injected clock): many hands chain, every log holds the same verified
// receipts, each seat is shown exactly its share, and no frame a seat receives before the reveal
// carries another seat's private card, nor ever a robot's. The libp2p tests (table-play,
// table-privacy) prove the same over real sockets for one game per transport.

interface Stage { stage: string, taker?: number }

const GAMES: Array<{ game: string, stages: (h: number) => Stage[], revealed: string[] }> = [
  { game: 'coinche', stages: () => [], revealed: ['deal'] },
  // belote's take sends each seat 2 or 3 more private cards, and the turned-up card goes to the taker
  { game: 'belote', stages: h => [{ stage: 'take', taker: (h + 1) % 4 }], revealed: ['deal', 'turnUp', 'take'] },
  { game: 'duo', stages: () => [{ stage: 'faceUp' }], revealed: ['deal', 'faceUp'] },
  { game: 'tarot', stages: () => [{ stage: 'dog' }], revealed: ['deal', 'dog'] }
]

function play (t: MemoryTable, dealerSeat: number, stages: Stage[]): number {
  const { hand, effects } = t.dealer.startHand({ dealer: dealerSeat })
  t.run(t.table.dealer, effects)
  for (const s of stages) t.run(t.table.dealer, t.dealer.deliverStage(hand, s.stage, s.taker))
  t.run(t.table.dealer, t.dealer.end(hand))
  return hand
}

const decode = (frame: Uint8Array): { text: string, doc: { type: string, body: { hand?: number } } } => {
  const text = new TextDecoder().decode(frame)
  return { text, doc: JSON.parse(text) }
}

/** The quoted JSON string a card is on the wire; card names never occur inside other strings' quotes. */
const onWire = (card: string): string => `"${card}"`

const key = (d: { stage: string, seat: number | null, public: boolean, cards: string[] }): string =>
  canonicalJson({ stage: d.stage, seat: d.seat, public: d.public, cards: d.cards })

describe.each(GAMES)('$game in memory', ({ game, stages, revealed }) => {
  it('many hands: chained, the same verified receipts in every log, each seat shown exactly its share', () => {
    const hands = game === 'coinche' ? 30 : 6
    const t = memoryTable({ game })
    const nSeats = t.table.seats.length
    for (let h = 0; h < hands; h++) play(t, h % nSeats, stages(h))
    expect(t.rejections).toEqual([])

    const receipts = (t.appended.get(t.table.dealer) ?? []).filter(e => e.entry === 'receipt')
    // The dealer's node logs its dealer receipt and its own seat's: the very same document.
    expect(receipts).toHaveLength(2 * hands)
    const byHand = receipts.filter((_, i) => i % 2 === 0).map(e => e.payload as Receipt)
    for (const peer of t.seats.keys()) {
      const log = t.appended.get(peer) ?? []
      expect(log.every(e => e.entry === 'receipt')).toBe(true)
      const own = log.map(e => canonicalJson(e.payload))
      if (peer !== t.table.dealer) expect(own).toEqual(byHand.map(r => canonicalJson(r)))
    }
    byHand.forEach((r, k) => {
      expect(r.commit.body.hand).toBe(k + 1)
      expect(r.commit.body.prev).toBe(k === 0 ? ZERO_HASH : docDigest(byHand[k - 1].commit))
      const verdict = verifyReceipt(r, { verifyDoc: nativeVerifyDocument })
      expect(verdict.problems).toEqual([])
      expect(verdict.summary?.acked).toEqual(t.table.seats.map((_, i) => i))
      expect(r.reveal.body.stages).toEqual(revealed)
      const deliveries = verdict.summary?.deliveries ?? []
      for (const [peer] of t.seats) {
        const seat = t.table.seats.indexOf(peer)
        const shown = (t.events.get(peer) ?? []).filter(e => e.hand === k + 1 && e.event.type === 'cards').map(e => e.event)
        const expected = deliveries.filter(d => d.public || d.seat === seat)
        expect(shown.map(e => key(e as Delivery)).sort(), `hand ${k + 1} seat ${seat}`).toEqual(expected.map(key).sort())
      }
    })
    if (game === 'belote') expect(byHand.map(r => r.reveal.body.params.taker)).toEqual([1, 2, 3, 0, 1, 2])
  })

  it('no frame a seat receives before the reveal holds another seat\'s private card', () => {
    const t = memoryTable({ game })
    const nSeats = t.table.seats.length
    const hands = 4
    for (let h = 0; h < hands; h++) play(t, h % nSeats, stages(h))
    expect(t.rejections).toEqual([])
    const receipts = (t.appended.get(t.table.dealer) ?? []).filter(e => e.entry === 'receipt').filter((_, i) => i % 2 === 0)
    for (const [peer] of t.seats) {
      if (peer === t.table.dealer) continue
      const seat = t.table.seats.indexOf(peer)
      const frames = (t.frames.get(peer) ?? []).map(decode)
      receipts.forEach((r, k) => {
        const hand = k + 1
        const dealt = verifyReceipt(r.payload, { verifyDoc: nativeVerifyDocument }).summary?.deliveries ?? []
        const ofHand = frames.filter(f => f.doc.body.hand === hand)
        const before = ofHand.slice(0, ofHand.findIndex(f => f.doc.type === 'reveal'))
        expect(new Set(before.map(f => f.doc.type))).toEqual(new Set(['commit', 'pledges', 'view', 'nonce', 'cards']))
        const shownToAll = new Set(dealt.filter(d => d.public).flatMap(d => d.cards))
        const mine = dealt.filter(d => !d.public && d.seat === seat).flatMap(d => d.cards)
        const others = dealt.filter(d => !d.public && d.seat !== seat).flatMap(d => d.cards).filter(c => !shownToAll.has(c))
        expect(mine.length).toBeGreaterThan(0)
        expect(others.length).toBeGreaterThan(0)
        // The search does see cards in these frames: every card of the seat's own is there.
        for (const c of mine) expect(before.some(f => f.text.includes(onWire(c))), `hand ${hand}: own card ${c}`).toBe(true)
        for (const c of others) {
          const leak = before.find(f => f.text.includes(onWire(c)))
          expect(leak, `hand ${hand}: another seat's card ${c} reached seat ${seat} in a ${leak?.doc.type} frame`).toBeUndefined()
        }
      })
    }
  })
})

describe('robot seats in memory', () => {
  it.each(['coinche', 'tarot'])('%s: a robot\'s cards never leave the dealer, not even after the reveal', (game) => {
    const t = memoryTable({ game, robots: [3] })
    const hands = 4
    for (let h = 0; h < hands; h++) play(t, h % 4, game === 'tarot' ? [{ stage: 'dog' }] : [])
    expect(t.rejections).toEqual([])
    const receipts = (t.appended.get(t.table.dealer) ?? []).filter(e => e.entry === 'receipt').filter((_, i) => i % 2 === 0)
    expect(receipts).toHaveLength(hands)
    receipts.forEach((r, k) => {
      const verdict = verifyReceipt(r.payload, { verifyDoc: nativeVerifyDocument })
      expect(verdict.problems).toEqual([])
      const robotCards = verdict.summary?.hands?.[3] ?? []
      expect(robotCards.length).toBeGreaterThan(0)
      for (const peer of [t.signers[1].peerId, t.signers[2].peerId]) {
        const all = (t.frames.get(peer) ?? []).map(decode).filter(f => f.doc.body.hand === k + 1)
        // commit, pledges, cards, reveal and final: the whole hand as this seat saw it
        expect(new Set(all.map(f => f.doc.type))).toEqual(new Set(['commit', 'pledges', 'view', 'nonce', 'cards', 'reveal', 'final']))
        for (const c of robotCards) {
          const leak = all.find(f => f.text.includes(onWire(c)))
          expect(leak, `hand ${k + 1}: robot card ${c} in a ${leak?.doc.type} frame`).toBeUndefined()
        }
      }
    })
  })
})
