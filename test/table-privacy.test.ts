import { afterEach, describe, expect, it } from 'vitest'
import { verifyReceipt } from '../src/core/hand/verify.js'
import type { Delivery } from '../src/core/schemes/types.js'
import { RawSeat, type ReceivedFrame } from './helpers/raw-seat.js'
import { logEntries, playHand, TestTable, verifyNodeLog, type PlayOptions } from './helpers/table-nodes.js'

// Guarantee 3 on the bytes: one seat of a real table is a plain libp2p node that keeps every frame
// it receives. After the hands, the receipts tell what every seat was dealt; no frame that reached
// that seat before the reveal may carry another seat's private card, and no frame ever carries a
// robot's card.

type Transport = 'tcp' | 'ws'
let table: TestTable | undefined
let raw: RawSeat | undefined

afterEach(async () => {
  await raw?.stop()
  raw = undefined
  await table?.cleanup()
  table = undefined
})

/** The quoted JSON string a card is on the wire; card names never occur inside other strings' quotes. */
const onWire = (card: string): string => `"${card}"`

/** Frames of `hand`, in arrival order, up to (not including) its REVEAL; throws if no reveal came. */
function framesBeforeReveal (frames: ReceivedFrame[], hand: number): ReceivedFrame[] {
  const ofHand = frames.filter(f => f.doc !== undefined && (f.doc.body as { hand: number }).hand === hand)
  const reveal = ofHand.findIndex(f => f.doc?.type === 'reveal')
  if (reveal < 0) throw new Error(`hand ${hand}: the seat never got the reveal`)
  return ofHand.slice(0, reveal)
}

async function runTable (transport: Transport, game: string, scheme: string, rawNode: number, hands: number,
  plan: (h: number) => PlayOptions, robots: number[] = []): Promise<{ t: TestTable, seat: RawSeat, deliveries: Delivery[][] }> {
  const t = table = await TestTable.prepare({ game, scheme, seats: 4, robots, transport, timeouts: { contributeMs: 10_000, ackMs: 10_000, revealMs: 60_000 } })
  const daemons = []
  for (let i = 0; i < t.peerIds.length; i++) {
    if (i === rawNode) raw = await RawSeat.start({ config: t.local.configs[i] })
    else daemons.push(await t.start(i))
  }
  const seat = raw as RawSeat
  for (let h = 0; h < hands; h++) {
    const hand = await playHand(daemons[0], daemons, plan(h))
    await seat.until(() => seat.appended.some(a => a.hand === hand), `raw seat's receipt of hand ${hand}`)
  }
  expect(seat.refused).toEqual([])
  // The raw seat countersigned every hand like any seat, with the cards it was shown.
  const deliveries: Delivery[][] = []
  for (const [k, a] of seat.appended.entries()) {
    expect(a.entry).toBe('receipt')
    const verdict = verifyReceipt(a.payload)
    expect(verdict.problems).toEqual([])
    expect(verdict.summary?.acked).toContain(seat.seat)
    expect(verdict.summary?.hand).toBe(k + 1)
    deliveries.push(verdict.summary?.deliveries ?? [])
  }
  expect(deliveries).toHaveLength(hands)
  return { t, seat, deliveries }
}

// Every game (belote's take, tarot's dog) and robots are checked frame by frame in memory
// (protocol-games.test.ts); this proves it on the bytes a real seat receives over libp2p.
describe('seat privacy on the bytes over tcp', () => {
  it('no frame before the reveal holds another seat\'s private card, and a robot\'s cards never leave the dealer', async () => {
    const hands = 4
    // Seat 0 is the dealer's node, seat 1 a Daemon, seat 2 the recording seat, seat 3 a robot.
    const { t, seat, deliveries } = await runTable('tcp', 'coinche', 'atout-v1', 2, hands, h => ({ dealerSeat: h % 4 }), [3])
    expect(t.seats[3]).toBe('robot')
    expect(seat.seat).toBe(2)
    const dealer = t.peerIds[0]
    for (const [k, dealt] of deliveries.entries()) {
      const hand = k + 1
      const before = framesBeforeReveal(seat.frames, hand)
      // Before the reveal the dealer commits, gathers pledges and deals; the other human seat (seat
      // 1; seat 0 is the dealer's node) shows its view and its nonce, which hold no card.
      expect(new Set(before.map(f => f.from))).toEqual(new Set([dealer, t.peerIds[1]]))
      expect(new Set(before.map(f => f.doc?.type))).toEqual(new Set(['commit', 'pledges', 'view', 'nonce', 'cards']))
      const mine = dealt.filter(d => !d.public && d.seat === seat.seat).flatMap(d => d.cards)
      const others = dealt.filter(d => !d.public && d.seat !== seat.seat).flatMap(d => d.cards)
      expect(mine.length).toBeGreaterThan(0)
      expect(others.length).toBeGreaterThan(0)
      const text = before.map(f => f.text)
      // The search does see cards in these frames: every card of the seat's own is there.
      for (const c of mine) expect(text.some(x => x.includes(onWire(c))), `hand ${hand}: own card ${c}`).toBe(true)
      for (const c of others) {
        const leak = before.find(f => f.text.includes(onWire(c)))
        expect(leak, `hand ${hand}: another seat's card ${c} reached seat ${seat.seat} in a ${leak?.doc?.type} frame`).toBeUndefined()
      }
      const robotCards = dealt.filter(d => d.seat === 3).flatMap(d => d.cards)
      expect(robotCards).toHaveLength(8)
      const all = seat.frames.filter(f => (f.doc?.body as { hand?: number } | undefined)?.hand === hand)
      // commit, pledges, views, nonces, cards, reveal and final: the whole hand as this seat saw it
      expect(new Set(all.map(f => f.doc?.type))).toEqual(new Set(['commit', 'pledges', 'view', 'nonce', 'cards', 'reveal', 'final']))
      for (const c of robotCards) {
        const leak = all.find(f => f.text.includes(onWire(c)))
        expect(leak, `hand ${hand}: robot card ${c} in a ${leak?.doc?.type} frame`).toBeUndefined()
      }
    }
    // The robot's nonce is the empty string; every node's log still verifies in full.
    const nodes = t.nodes.filter(n => n !== undefined).map(n => n.index)
    await t.stopAll()
    for (const i of nodes) {
      const verdict = await verifyNodeLog(t.dataDir(i))
      expect(verdict.failures).toEqual([])
      expect(verdict.passed).toBe(hands)
      expect((await logEntries(t.dataDir(i))).map(e => e.body.kind)).toEqual(Array(hands).fill('receipt'))
    }
  })
})
