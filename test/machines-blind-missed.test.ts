// A blind seat away while a hand ended (issue 18): when it is back it asks the dealer about every
// hand it never saw and logs the dealer's answer (the abort record, or the whole receipt in BRECEIPT
// parts) before anything else can show a gap, so its log verifies whole. In memory, on the real
// wire encoding, duo (two seats, the dealer's node holds seat 0), injected clock.
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { blindSeatMetaKey } from '../src/protocol/blind-seat.js'
import { blindTable, ids, signers } from './helpers/blind-memory.js'
import { verifyAsLog } from './helpers/verify-as-log.js'

type T = ReturnType<typeof blindTable>

/** A duo table whose seat 1 is "paused" while `paused.on`: nothing reaches it, nothing leaves it. */
function pausable (): { t: T, paused: { on: boolean } } {
  const paused = { on: false }
  const t = blindTable(ids.slice(0, 2), {
    game: 'duo',
    intercept: (from, to, doc) => paused.on && (to === ids[1] || from === ids[1]) ? undefined : doc
  })
  return { t, paused }
}

const handsLogged = (t: T, id: string): Array<[string, number]> =>
  t.nodes.get(id)!.log.map(l => [l.entry, l.entry === 'receipt' ? l.payload.commit.body.hand : l.payload.body.hand])

describe('a blind seat away while a hand ended', () => {
  it('paused while hand 2 was aborted for want of its key: the COMMIT of hand 3 shows the gap, it asks, logs the dealer\'s record, and its log verifies', async () => {
    const { t, paused } = pausable()
    t.end(t.deal())
    paused.on = true
    const missed = t.deal()
    t.tick(60_000)
    const dealerLog = t.dealerNode.log.filter(l => l.entry === 'abort')
    expect(dealerLog.map(l => l.payload.body.hand)).toEqual([missed])
    paused.on = false
    t.end(t.deal())
    expect(handsLogged(t, ids[1])).toEqual([['receipt', 1], ['abort', 2], ['receipt', 3]])
    const record = t.nodes.get(ids[1])!.log.find(l => l.entry === 'abort')!.payload
    expect(canonicalJson(record)).toBe(canonicalJson(dealerLog[0].payload))
    expect(await verifyAsLog(signers[1], t.nodes.get(ids[1])!.log)).toEqual([])
    expect(t.rejections).toEqual([])
  }, 60_000)

  it('its store brought back from before hand 2, which ended with a receipt (the dealer restarted since): on restart it asks about hand 2, takes the whole receipt in parts, and logs the receipt every other log holds', async () => {
    const { t } = pausable()
    t.end(t.deal())
    const seat1 = t.nodes.get(ids[1])!
    const backup = new Map(seat1.saved)
    const logBefore = [...seat1.log]
    t.end(t.deal())
    // The seat's store as it was after hand 1: it never saw hand 2.
    seat1.saved = backup
    seat1.log = logBefore
    // The dealer restarted meanwhile: it remembers its ended hands from its log.
    t.restartDealer(true)
    t.restartSeat(ids[1])
    const parts = seat1.frames.filter(f => f.type === 'breceipt')
    expect(parts.length).toBeGreaterThan(0)
    expect(parts.every(p => p.body.hand === 2 && p.body.parts === parts.length)).toBe(true)
    expect(handsLogged(t, ids[1])).toEqual([['receipt', 1], ['receipt', 2]])
    const dealerReceipt = t.dealerNode.log.filter(l => l.entry === 'receipt')[1].payload
    expect(canonicalJson(seat1.log[1].payload)).toBe(canonicalJson(dealerReceipt))
    expect(await verifyAsLog(signers[1], seat1.log)).toEqual([])
    // It knows hand 2 now (a COMMIT of hand 3 must link to it), and nothing was refused.
    expect(seat1.saved.get(blindSeatMetaKey('blind-mem'))).toMatchObject({ lastHand: 2 })
    expect(t.rejections).toEqual([])
  }, 60_000)
})
