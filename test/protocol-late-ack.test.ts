// Late acks between the machines (docs/protocol.md §11, docs/log.md "Late acks"), in memory on the
// injected clock: a seat that pressed Ctrl-C in the middle of a hand (its cards in, the REVEAL and
// FINAL missed) comes back, countersigns the dealer's receipt late, the dealer logs a `late-ack`
// entry and sends it on, and every node's log verifies complete.
import { describe, expect, test } from 'vitest'
import { memoryTable, type MemoryTable } from './helpers/memory-table.js'
import { docDigest } from '../src/core/hand/digest.js'
import { verifyLogPayload } from '../src/core/receipt.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import { inThreadChecker, verifyLog, type LogVerdict } from '../src/core/log/index.js'
import { signedLogLines } from './helpers/verify-as-log.js'
import type { AckBody, CardsBody, Receipt } from '../src/core/hand/messages.js'
import type { Signer } from '../src/core/identity.js'

const down = 2
const peerOf = (t: MemoryTable, seat: number): string => t.signers[seat].peerId
const logOf = (t: MemoryTable, peer: string): Array<{ entry: string, hand: number, payload: unknown }> => {
  // The dealer's node holds a seat too: its seat machine's copies are not logged twice (table-host).
  const seen = new Set<string>()
  return (t.appended.get(peer) ?? []).filter(e => { const d = `${e.entry}/${docDigest(e.payload)}`; if (seen.has(d)) return false; seen.add(d); return true })
}

async function verdictOf (t: MemoryTable, peer: string): Promise<LogVerdict> {
  const owner = t.signers.find(s => s.peerId === peer) as Signer
  const lines = signedLogLines(owner, logOf(t, peer).map(e => ({ kind: e.entry, payload: e.payload })))
  return await verifyLog(lines, { verifyPayload: verifyLogPayload, checker: inThreadChecker(verifyLogPayload) })
}

/** Seat `down` gets its cards, then is cut off (Ctrl-C) until the dealer has logged the receipt without it. */
function handWithSeatAway (): { t: MemoryTable, hand: number, receipt: Receipt } {
  const t = memoryTable()
  const { hand, effects } = t.dealer.startHand({ dealer: 0 })
  t.run(t.table.dealer, effects)
  const peer = peerOf(t, down)
  t.intercept = (from, to, doc) => (from === peer || to === peer ? undefined : doc)
  t.run(t.table.dealer, t.dealer.end(hand))
  t.clock.now += 6_000
  t.run(t.table.dealer, t.dealer.tick(t.clock.now))
  const receipt = logOf(t, t.table.dealer).find(e => e.entry === 'receipt')?.payload as Receipt
  expect(receipt.acks.map(a => a.body.seat)).toEqual([0, 1, 3])
  t.intercept = undefined
  return { t, hand, receipt }
}

describe('a seat back from Ctrl-C countersigns the receipt late', () => {
  test('every log ends complete: the receipt, then the late ack of seat 2, in every node\'s log', async () => {
    const { t, hand, receipt } = handWithSeatAway()
    // Before it comes back every log holds an incomplete receipt.
    expect(await verdictOf(t, t.table.dealer)).toMatchObject({ passed: 0, failed: 0, incomplete: 1 })
    t.run(peerOf(t, down), t.restartSeat(peerOf(t, down)))
    expect(t.rejections).toEqual([])
    for (let s = 0; s < 4; s++) {
      const log = logOf(t, peerOf(t, s))
      expect(log.map(e => e.entry), `seat ${s}`).toEqual(['receipt', 'late-ack'])
      expect(log[0].payload, `seat ${s}`).toEqual(receipt)
      const ack = (log[1].payload as { ack: Signed<AckBody> }).ack
      expect(ack).toMatchObject({ signer: peerOf(t, down), body: { hand, seat: down, commit: docDigest(receipt.commit) } })
      expect(await verdictOf(t, peerOf(t, s)), `seat ${s}`).toMatchObject({ passed: 2, failed: 0, incomplete: 0 })
      // The receipt event again, every seat now countersigned.
      expect(t.events.get(peerOf(t, s))?.filter(e => e.event.type === 'receipt').at(-1)?.event, `seat ${s}`).toEqual({ type: 'receipt', acked: [0, 1, 2, 3] })
    }
  })

  test('the dealer takes one late ack per seat and hand; a forged or second one is refused and logged nowhere', () => {
    const { t, hand, receipt } = handWithSeatAway()
    t.run(peerOf(t, down), t.restartSeat(peerOf(t, down)))
    const logged = logOf(t, t.table.dealer).length
    const ack = (logOf(t, t.table.dealer)[1].payload as { ack: Signed<AckBody> }).ack
    // The same ACK again: that seat acked late already.
    expect(() => t.dealer.receive(peerOf(t, down), ack)).toThrow(/already countersigns/)
    // Seat 1, which acked in time, cannot add a late one; nor can a seat sign another's.
    const other = signDocument('ack', { ...ack.body, seat: 1, cards: receipt.acks[1].body.cards } satisfies AckBody, t.signers[1])
    expect(() => t.dealer.receive(peerOf(t, 1), other)).toThrow(/already holds seat 1/)
    expect(() => t.dealer.receive(peerOf(t, 1), ack)).toThrow(/not sent by that seat/)
    // Third try of seat 2: over its bound, refused before any check.
    expect(() => t.dealer.receive(peerOf(t, down), ack)).toThrow(/already sent a late countersignature/)
    expect(logOf(t, t.table.dealer)).toHaveLength(logged)
    expect(hand).toBe(1)
  })

  test('a wrong cards digest is refused by the dealer; the seats log a LATEACK only when it completes their receipt', () => {
    const { t, receipt } = handWithSeatAway()
    const body: AckBody = { table: t.table.id, hand: 1, commit: docDigest(receipt.commit), reveal: docDigest(receipt.reveal), seat: down, cards: receipt.acks[0].body.cards }
    const wrong = signDocument('ack', body, t.signers[down])
    expect(() => t.dealer.receive(peerOf(t, down), wrong)).toThrow(/not that seat's cards/)
    // A LATEACK signed by the dealer around that ACK: seat 1 refuses it (its log stays as it was).
    const dealer = t.signers.find(s => s.peerId === t.table.dealer) as Signer
    const lateack = signDocument('lateack', { table: t.table.id, hand: 1, commit: body.commit, ack: wrong }, dealer)
    const seat1 = t.seats.get(peerOf(t, 1))
    expect(() => seat1?.receive(t.table.dealer, lateack)).toThrow(/not that seat's cards/)
    expect(logOf(t, peerOf(t, 1)).map(e => e.entry)).toEqual(['receipt'])
  })

  test('an honest seat does not countersign a receipt that fails, nor one its shield refuses (cards not the deal\'s)', () => {
    const { t, receipt } = handWithSeatAway()
    const dealer = t.signers.find(s => s.peerId === t.table.dealer) as Signer
    // The dealer's FINAL with a REVEAL whose secret was changed (re-signed): the receipt fails, the
    // seat refuses the FINAL and sends no ACK.
    const reveal = signDocument('reveal', { ...receipt.reveal.body, secret: 'ab'.repeat(32) }, dealer) as Receipt['reveal']
    const bad = { ...receipt, reveal }
    const final = signDocument('final', { table: t.table.id, hand: 1, commit: docDigest(receipt.commit), receipt: bad }, dealer)
    const seat = t.seats.get(peerOf(t, down))
    expect(() => seat?.receive(t.table.dealer, final)).toThrow(/does not verify/)

    // A receipt that verifies, but the dealer had sent seat 2 another seat's cards: its shield refuses.
    const r = memoryTable()
    const peer = peerOf(r, down)
    const rogue = r.signers.find(s => s.peerId === r.table.dealer) as Signer
    let swapped = false
    r.intercept = (from, to, doc) => {
      const body = doc.body as CardsBody
      if (doc.type === 'cards' && to === peer && !body.public) {
        swapped = true
        return signDocument('cards', { ...body, cards: [...body.cards].reverse() }, rogue)
      }
      return doc
    }
    const { hand, effects } = r.dealer.startHand({ dealer: 0 })
    r.run(r.table.dealer, effects)
    expect(swapped).toBe(true)
    r.intercept = (from, to, doc) => (from === peer || to === peer ? undefined : doc)
    r.run(r.table.dealer, r.dealer.end(hand))
    r.clock.now += 6_000
    r.run(r.table.dealer, r.dealer.tick(r.clock.now))
    r.intercept = undefined
    r.run(peer, r.restartSeat(peer))
    expect(logOf(r, peer).map(e => e.entry)).toEqual(['receipt'])
    expect(logOf(r, r.table.dealer).map(e => e.entry)).toEqual(['receipt'])
    expect(r.events.get(peer)?.filter(e => e.event.type === 'shield').at(-1)?.event).toMatchObject({ type: 'shield', ok: false })
  })
})

describe('a seat whose saved ACK was lost as it went down sends that ACK late', () => {
  test('the ACK never reaches the dealer; back, the seat takes the receipt without it and its saved ACK completes every log', async () => {
    const t = memoryTable()
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    const peer = peerOf(t, down)
    // Its ACK is signed and saved, then lost with the crash; nothing reaches it after.
    t.intercept = (from, to, doc) => (from === peer || to === peer ? (to === peer && doc.type === 'reveal' ? doc : undefined) : doc)
    t.run(t.table.dealer, t.dealer.end(hand))
    expect(t.seats.get(peer)?.status()).toMatchObject([{ hand, phase: 'acked' }])
    t.clock.now += 6_000
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    t.intercept = undefined
    t.run(peer, t.restartSeat(peer))
    expect(t.rejections).toEqual([])
    for (let s = 0; s < 4; s++) {
      expect(logOf(t, peerOf(t, s)).map(e => e.entry), `seat ${s}`).toEqual(['receipt', 'late-ack'])
      expect(await verdictOf(t, peerOf(t, s)), `seat ${s}`).toMatchObject({ passed: 2, failed: 0, incomplete: 0 })
    }
  })
})

describe('a dealer restarted after a late ack', () => {
  test('reads it back from its log: the same ACK is refused again, and a seat that asks gets the FINAL and the LATEACK', () => {
    const { t, hand } = handWithSeatAway()
    t.run(peerOf(t, down), t.restartSeat(peerOf(t, down)))
    const ack = (logOf(t, t.table.dealer)[1].payload as { ack: Signed<AckBody> }).ack
    t.run(t.table.dealer, t.restartDealer())
    expect(() => t.dealer.receive(peerOf(t, down), ack)).toThrow(/already countersigns/)
    const ask = signDocument('ask', { table: t.table.id, hand, commit: ack.body.commit, seat: 1 }, t.signers[1])
    const answer = t.dealer.receive(peerOf(t, 1), ask)
    expect(answer.map(e => e.kind === 'send' ? e.doc.type : e.kind)).toEqual(['final', 'lateack'])
  })
})
