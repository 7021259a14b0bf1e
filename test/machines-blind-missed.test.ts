// A blind seat away while a hand ended (issue 18): when it is back it asks the dealer about every
// hand it never saw and logs the dealer's answer (the abort record, or the whole receipt in BRECEIPT
// parts) before anything else can show a gap, so its log verifies whole. In memory, on the real
// wire encoding, duo (two seats, the dealer's node holds seat 0), injected clock.
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { blindSeatMetaKey } from '../src/protocol/blind-seat.js'
import { WHOLE_RECEIPTS_KEPT } from '../src/protocol/blind-dealer.js'
import { blindTable, ids, signers } from './helpers/blind-memory.js'
import { verifyAsLog } from './helpers/verify-as-log.js'

type T = ReturnType<typeof blindTable>

/** A duo table whose seat 1 is "paused" while `paused.on`: nothing reaches it, nothing leaves it. */
function pausable (wholeReceiptsKept?: number): { t: T, paused: { on: boolean } } {
  const paused = { on: false }
  const t = blindTable(ids.slice(0, 2), {
    game: 'duo',
    wholeReceiptsKept,
    intercept: (from, to, doc) => paused.on && (to === ids[1] || from === ids[1]) ? undefined : doc
  })
  return { t, paused }
}

const handsLogged = (t: T, id: string): Array<[string, number]> =>
  t.nodes.get(id)!.log.map(l => [l.entry, l.entry === 'receipt' ? l.payload.commit.body.hand : l.payload.body.hand])

describe('a blind seat away while a hand ended', () => {
  it('paused while hand 2 was aborted: the COMMIT of hand 3 shows the gap and it logs the record; its store later brought back from hand 1, it takes hand 2\'s record and hand 3\'s whole receipt in parts from a restarted dealer; each time its log verifies', async () => {
    const { t, paused } = pausable()
    t.end(t.deal())
    const seat1 = t.nodes.get(ids[1])!
    const backup = { saved: new Map(seat1.saved), log: [...seat1.log] }
    paused.on = true
    t.deal()
    t.tick(60_000) // the dealer gives hand 2 up for want of seat 1's key
    const record = t.dealerNode.log.find(l => l.entry === 'abort')!.payload
    expect(record.body.hand).toBe(2)
    paused.on = false
    t.end(t.deal())
    expect(handsLogged(t, ids[1])).toEqual([['receipt', 1], ['abort', 2], ['receipt', 3]])
    expect(canonicalJson(seat1.log[1].payload)).toBe(canonicalJson(record))
    expect(await verifyAsLog(signers[1], seat1.log)).toEqual([])

    // The seat's store as it was after hand 1; the dealer restarted meanwhile (it remembers its ended hands from its log).
    seat1.saved = backup.saved
    seat1.log = backup.log
    seat1.frames = []
    t.restartDealer(true)
    t.restartSeat(ids[1])
    const parts = seat1.frames.filter(f => f.type === 'breceipt')
    expect(parts.length).toBeGreaterThan(0)
    expect(parts.every(p => p.body.hand === 3 && p.body.parts === parts.length)).toBe(true)
    expect(handsLogged(t, ids[1])).toEqual([['receipt', 1], ['abort', 2], ['receipt', 3]])
    const dealerReceipt = t.dealerNode.log.filter(l => l.entry === 'receipt')[1].payload
    expect(canonicalJson(seat1.log[2].payload)).toBe(canonicalJson(dealerReceipt))
    expect(await verifyAsLog(signers[1], seat1.log)).toEqual([])
    // It knows hand 3 now (a COMMIT of hand 4 must link to it), and nothing was refused.
    expect(seat1.saved.get(blindSeatMetaKey('blind-mem'))).toMatchObject({ lastHand: 3 })
    expect(t.rejections).toEqual([])
  }, 60_000)

  it('its store brought back from hand 1 after more hands than the dealer keeps whole in memory: the older receipts are read back from the dealer\'s log, and it logs every hand it missed, in order', () => {
    // The dealer keeps 2 receipts whole here (WHOLE_RECEIPTS_KEPT in a node): the same path, in 5 hands, not 19.
    const kept = 2
    expect(kept).toBeLessThan(WHOLE_RECEIPTS_KEPT)
    const { t } = pausable(kept)
    t.end(t.deal())
    const seat1 = t.nodes.get(ids[1])!
    const backup = { saved: new Map(seat1.saved), log: [...seat1.log] }
    const last = kept + 3
    for (let h = 2; h <= last; h++) t.end(t.deal())
    seat1.saved = backup.saved
    seat1.log = backup.log
    seat1.frames = []
    t.restartSeat(ids[1])
    expect(handsLogged(t, ids[1])).toEqual(Array.from({ length: last }, (_, i) => ['receipt', i + 1]))
    const dealerReceipts = t.dealerNode.log.filter(l => l.entry === 'receipt').map(l => canonicalJson(l.payload))
    // The dealer's receipts, each verified by the seat before it logged it (the first test verifies such a log whole).
    expect(seat1.log.map(l => canonicalJson(l.payload))).toEqual(dealerReceipts)
    expect(seat1.saved.get(blindSeatMetaKey('blind-mem'))).toMatchObject({ lastHand: last })
    expect(t.rejections).toEqual([])
  }, 60_000)

  it('restarted before the hand it missed is logged (its asks lost): the saved gap makes it ask again, and it logs the record', async () => {
    const paused = { on: false, asks: false }
    const t = blindTable(ids.slice(0, 2), {
      game: 'duo',
      intercept: (from, to, doc) => (paused.on && (to === ids[1] || from === ids[1])) || (paused.asks && from === ids[1] && doc.type === 'ask') ? undefined : doc
    })
    t.end(t.deal())
    paused.on = true
    t.deal()
    t.tick(60_000)
    paused.on = false
    paused.asks = true
    t.end(t.deal())
    expect(handsLogged(t, ids[1])).toEqual([['receipt', 1], ['receipt', 3]])
    paused.asks = false
    t.restartSeat(ids[1])
    expect(handsLogged(t, ids[1])).toEqual([['receipt', 1], ['receipt', 3], ['abort', 2]])
    expect(await verifyAsLog(signers[1], t.nodes.get(ids[1])!.log)).toEqual([])
    expect(t.nodes.get(ids[1])!.saved.get(blindSeatMetaKey('blind-mem'))).not.toHaveProperty('gap')
    expect(t.rejections).toEqual([])
  }, 60_000)
})
