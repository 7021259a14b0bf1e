// A connection that came back (docs/protocol.md §7 "A connection that came back"): a frame written
// just before a connection dies is lost, either way. The dealer's node, told that a seat's peer
// connected again (DealerSide.resync), sends that seat what it may lack of each hand in play, and
// the seat answers with what the dealer may lack of it: the hand goes on, nobody is named, and no
// repeat is refused. In memory, on the injected clock; the daemon's wiring is in
// test/table-resync.test.ts.
import { describe, expect, test } from 'vitest'
import { memoryTable, type MemoryTable } from './helpers/memory-table.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import type { Signed } from '../src/core/signed.js'
import type { Receipt } from '../src/core/hand/messages.js'
import { RESYNCS_PER_SEAT_HAND } from '../src/protocol/dealer.js'

const peerOf = (t: MemoryTable, seat: number): string => t.signers[seat].peerId
const CONTRIBUTE_MS = 5_000

/** Drops the first document of `type` from `from` to `to` (any sender or recipient when absent); returns whether it did. */
function loseOnce (t: MemoryTable, type: string, from?: string, to?: string): { lost: () => boolean } {
  let lost = false
  t.intercept = (f, d, doc) => {
    if (lost || doc.type !== type || (from !== undefined && f !== from) || (to !== undefined && d !== to)) return doc
    lost = true
    return undefined
  }
  return { lost: () => lost }
}

function receiptOf (t: MemoryTable, hand: number): Receipt | undefined {
  return (t.appended.get(t.table.dealer) ?? []).find(e => e.hand === hand && e.entry === 'receipt')?.payload as Receipt | undefined
}

/** Ends the hand (the dealer's End) and checks that every seat countersigned and logged the receipt, with nothing refused and no abort. */
function expectWholeHand (t: MemoryTable, hand: number): void {
  t.run(t.table.dealer, t.dealer.end(hand))
  const receipt = receiptOf(t, hand)
  expect(receipt, 'receipt').toBeDefined()
  expect(verifyReceipt(receipt as Receipt).summary?.acked).toEqual([0, 1, 2, 3])
  for (let s = 1; s < 4; s++) expect((t.appended.get(peerOf(t, s)) ?? []).filter(e => e.hand === hand).map(e => e.entry), `seat ${s}`).toEqual(['receipt'])
  expect(t.rejections).toEqual([])
}

describe('commit–reveal: what a lost frame kept from its recipient comes when the connection comes back', () => {
  // A document lost on its way, the dealer's state it leaves, then the connection back.
  test.each([
    { lost: 'PLEDGE', type: 'pledge', seat: 2, toDealer: true, left: { phase: 'pledging', joined: 3 }, answer: 'the COMMIT goes again, the seat pledges again' },
    { lost: 'COMMIT', type: 'commit', seat: 1, toDealer: false, left: { phase: 'pledging', joined: 3 }, answer: 'it goes again, and the seat joins the hand' },
    { lost: 'NONCE', type: 'nonce', seat: 1, toDealer: true, left: { phase: 'contributing', contributed: 3 }, answer: 'the PLEDGES go again, the seat sends its NONCE again' }
  ])('a $lost lost on its way: $answer', ({ type, seat, toDealer, left }) => {
    const t = memoryTable()
    const peer = peerOf(t, seat)
    const drop = toDealer ? loseOnce(t, type, peer, t.table.dealer) : loseOnce(t, type, t.table.dealer, peer)
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    expect(drop.lost()).toBe(true)
    expect(t.dealer.status()[0]).toMatchObject(left)
    t.run(t.table.dealer, t.dealer.resync(peer))
    expectWholeHand(t, hand)
  })

  test('a VIEW lost to the dealer and to every seat (the seat itself went on): it goes again, and the seat is not named missing-view', () => {
    const t = memoryTable()
    const seat = peerOf(t, 3)
    let dropping = true
    t.intercept = (from, _to, doc) => (dropping && from === seat && doc.type === 'view' ? undefined : doc)
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    // Seat 3 holds every other VIEW and sent its NONCE; the others wait for its VIEW.
    expect(t.seats.get(seat)?.status()).toEqual([{ hand, phase: 'contributed' }])
    dropping = false
    t.run(t.table.dealer, t.dealer.resync(seat))
    // The dealer passes the VIEW on to the seats still waiting when its time to pass VIEWs on comes.
    t.clock.now += CONTRIBUTE_MS / 2
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    expect(t.dealer.status()[0]).toMatchObject({ phase: 'dealt' })
    expectWholeHand(t, hand)
  })

  test('cards lost on the way to a seat, then its ACK: each goes again', () => {
    const t = memoryTable()
    const seat = peerOf(t, 2)
    const cards = loseOnce(t, 'cards', t.table.dealer, seat)
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    expect(cards.lost()).toBe(true)
    expect(t.seats.get(seat)?.status()).toEqual([{ hand, phase: 'contributed' }])
    t.run(t.table.dealer, t.dealer.resync(seat))
    expect(t.seats.get(seat)?.status()).toEqual([{ hand, phase: 'dealt' }])
    const ack = loseOnce(t, 'ack', seat, t.table.dealer)
    t.run(t.table.dealer, t.dealer.end(hand))
    expect(ack.lost()).toBe(true)
    expect(t.dealer.status()[0]).toMatchObject({ phase: 'revealed', acks: 3 })
    t.run(t.table.dealer, t.dealer.resync(seat))
    expect(verifyReceipt(receiptOf(t, hand) as Receipt).summary?.acked).toEqual([0, 1, 2, 3])
    expect(t.rejections).toEqual([])
  })

  test('nothing lost: every phase resynced sends only repeats, none is refused, and the receipt is the same', () => {
    const plain = memoryTable({ seed: 'resync' })
    const { hand, effects } = plain.dealer.startHand({ dealer: 0 })
    plain.run(plain.table.dealer, effects)
    plain.run(plain.table.dealer, plain.dealer.end(hand))

    const t = memoryTable({ seed: 'resync' })
    // Every seat resynced as each document reaches the dealer's node (queued behind it: t.run
    // takes effects lists in order), until the quota of each seat and hand is spent.
    let resyncs = 0
    t.intercept = (_from, to, doc) => {
      if (to === t.table.dealer) {
        for (let s = 1; s < 4; s++) {
          const effects = t.dealer.resync(peerOf(t, s))
          resyncs += effects.length
          t.run(t.table.dealer, effects)
        }
      }
      return doc
    }
    const started = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, started.effects)
    t.run(t.table.dealer, t.dealer.end(started.hand))
    expect(resyncs).toBeGreaterThan(3)
    expect(t.rejections).toEqual([])
    expect(receiptOf(t, started.hand)).toEqual(receiptOf(plain, hand))
  })

  test(`at most ${RESYNCS_PER_SEAT_HAND} resyncs a seat and hand: a peer that reconnects over and over gets no more`, () => {
    const t = memoryTable()
    const seat = peerOf(t, 1)
    loseOnce(t, 'pledge', peerOf(t, 2), t.table.dealer)
    const { effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    t.intercept = (_f, _t, doc: Signed<unknown>) => doc
    // Seat 1 has pledged: it lacks nothing, yet each resync counts.
    for (let i = 0; i < RESYNCS_PER_SEAT_HAND; i++) expect(t.dealer.resync(seat)).toEqual([])
    const lacking = peerOf(t, 2)
    for (let i = 0; i < RESYNCS_PER_SEAT_HAND; i++) expect(t.dealer.resync(lacking).map(e => e.kind === 'send' ? e.doc.type : e.kind)).toEqual(['commit'])
    expect(t.dealer.resync(lacking)).toEqual([])
    // The dealer's own peer and a stranger get nothing.
    expect(t.dealer.resync(t.table.dealer)).toEqual([])
    expect(t.dealer.resync(t.signers[4].peerId)).toEqual([])
  })
})
