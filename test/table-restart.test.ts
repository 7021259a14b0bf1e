import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { until } from './helpers/until.js'
import { sha256Hex } from '../src/core/bytes.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import type { AbortBody, Receipt } from '../src/core/hand/messages.js'
import type { Signed } from '../src/core/signed.js'
import type { NodeEvent } from '../src/daemon/events.js'
import { NodeProcess, requireBuild } from './helpers/node-process.js'
import { logEntries, ownCardsEvent, seatEvent, TestTable, verifyNodeLog, waitEvent } from './helpers/table-nodes.js'

// Guarantee 7: the dealer stores its secret before publishing its commitment, so a dealer killed
// (SIGKILL: no shutdown code runs) after dealing can still reveal once restarted, and one killed
// before dealing aborts the hand on restart with a signed record. The dealer runs as its own OS
// process (`fairdeal node --config FILE`) driven through its control endpoint; the seats are Daemons.

type Transport = 'tcp' | 'ws'
let table: TestTable | undefined
let dealer: NodeProcess | undefined

beforeAll(() => { requireBuild() })

afterEach(async () => {
  await dealer?.stop()
  dealer = undefined
  await table?.cleanup()
  table = undefined
})

/** Every file and directory under `dir` (itself included), with its mode. */
async function filesUnder (dir: string): Promise<Array<{ path: string, mode: number }>> {
  const out = [{ path: dir, mode: (await stat(dir)).mode }]
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, e.name)
    if (e.isDirectory()) out.push(...await filesUnder(path))
    else out.push({ path, mode: (await stat(path)).mode })
  }
  return out
}

const ownCards = ownCardsEvent

// The crash is the same whatever carries the frames: each case runs over one transport.
describe('crash and restart', () => {
  it('over tcp: reveals after a restart if it had dealt, and aborts with a dealer-stopped record if it had not', async () => {
    const transport: Transport = 'tcp'
    const t = table = await TestTable.prepare({ game: 'coinche', scheme: 'atout-v1', seats: 4, transport, timeouts: { contributeMs: 4_000, ackMs: 3_000, revealMs: 60_000 } })
    const seats = [await t.start(1), await t.start(2), await t.start(3)]
    const dealerId = t.peerIds[0]
    const start = async (): Promise<NodeProcess> => (dealer = await NodeProcess.start(t.local.files[0], t.dataDir(0)))

    // Hand 1: dealt, then the dealer dies before the reveal.
    let d = await start()
    const hand = await d.client.deal(0)
    const held = new Map<number, string[]>()
    for (const s of seats) {
      const e = await waitEvent(s.daemon.events, ownCards(s, hand), `${s.name}: cards of hand ${hand}`)
      held.set(s.daemon.seat?.seat as number, e.event.type === 'cards' ? e.event.cards : [])
    }
    // The dealer's node holds seat 0 too: its seat announces its cards once they are on disk.
    await d.until(e => e.hand === hand && e.role === 'seat' && e.event.type === 'cards' && e.event.seat === 0, 'seat 0\'s cards in the dealer process')
    await d.kill()
    expect((await d.exited).signal).toBe('SIGKILL')
    d = await start()
    expect(d.lines.find(l => l.msg === 'dealer hands restored after restart')).toMatchObject({ hands: [hand] })
    await d.client.end(hand)
    for (const s of seats) {
      const shield = await waitEvent(s.daemon.events, seatEvent(hand, 'shield'), `${s.name}: shield of hand ${hand}`)
      expect(shield.event).toEqual({ type: 'shield', ok: true, problems: [] })
      await waitEvent(s.daemon.events, seatEvent(hand, 'receipt'), `${s.name}: receipt of hand ${hand}`)
    }
    const final = await d.until(e => e.hand === hand && e.role === 'dealer' && e.event.type === 'receipt', 'the dealer\'s receipt')
    expect(final.event).toMatchObject({ acked: [0, 1, 2, 3] })

    // Hand 2: seat 3 is down, so the hand waits for its pledge; the dealer dies right after its
    // COMMIT reached the others, before any deal.
    await t.stop(3)
    const up = seats.slice(0, 2)
    const hand2 = await d.client.deal(1)
    for (const s of up) await waitEvent(s.daemon.events, seatEvent(hand2, 'committed'), `${s.name}: commit of hand ${hand2}`)
    await d.kill()
    d = await start()
    for (const s of up) {
      const e = await waitEvent(s.daemon.events, seatEvent(hand2, 'aborted'), `${s.name}: abort of hand ${hand2}`)
      expect(e.event).toMatchObject({ reason: 'dealer-stopped', blame: [dealerId] })
    }
    await d.until(e => e.hand === hand2 && e.role === 'dealer' && e.event.type === 'aborted', 'the dealer\'s abort record')
    expect((await d.stop()).code).toBe(0)
    dealer = undefined
    await t.stopAll()
    // What `fairdeal node` wrote (its key, its LevelDB files with the secrets it saved, its control
    // file) is its owner's alone: no file or directory open to group or others.
    const open = (await filesUnder(t.dataDir(0))).filter(f => (f.mode & 0o077) !== 0)
    expect(open.map(f => `${f.path} ${(f.mode & 0o777).toString(8)}`)).toEqual([])

    // Every log verifies; the receipt is the one hand 1 was dealt with before the crash.
    const expected = [['receipt', 'abort'], ['receipt', 'abort'], ['receipt', 'abort'], ['receipt']]
    for (let i = 0; i < 4; i++) {
      const verdict = await verifyNodeLog(t.dataDir(i))
      expect(verdict.failures).toEqual([])
      const entries = await logEntries(t.dataDir(i))
      expect(entries.map(e => e.body.kind)).toEqual(expected[i])
      const summary = verifyReceipt(entries[0].body.payload).summary
      for (const [seat, cards] of held) expect(summary?.hands?.[seat]).toEqual(cards)
      if (i === 3) continue
      const abort = entries[1].body.payload as Signed<AbortBody>
      expect(abort.signer).toBe(dealerId)
      expect(abort.body).toMatchObject({ hand: hand2, reason: 'dealer-stopped', blame: [dealerId] })
      // The record publishes the secret behind the commitment: the deal was fixed before the crash.
      const secret = /the secret of hand \d+ was ([0-9a-f]{64})/.exec(abort.body.detail)?.[1]
      expect(sha256Hex(secret ?? '')).toBe(abort.body.commit?.body.commitment)
    }
    const receipt = (await logEntries(t.dataDir(0)))[0].body.payload as Receipt
    expect(receipt.acks.map(a => a.body.seat)).toEqual([0, 1, 2, 3])
  })

  it('over ws: a seat node restarted while holding its cards still checks the reveal and countersigns', async () => {
    const transport: Transport = 'ws'
    const t = table = await TestTable.prepare({ game: 'belote', scheme: 'atout-v1', seats: 4, transport, timeouts: { contributeMs: 4_000, ackMs: 3_000, revealMs: 60_000 } })
    const nodes = await t.startAll()
    const hand = await nodes[0].daemon.deal({ dealer: 0 })
    for (const n of nodes) await waitEvent(n.daemon.events, ownCards(n, hand), `${n.name}: cards of hand ${hand}`)
    await t.stop(2)
    const back = await t.start(2)
    // The take stage reaches it after the restart; the first five came before.
    await nodes[0].daemon.stage(hand, 'take', 2)
    await waitEvent(back.daemon.events, e => e.hand === hand && e.event.type === 'cards' && e.event.stage === 'take', 'the take cards after the restart')
    await nodes[0].daemon.end(hand)
    const shield = await waitEvent(back.daemon.events, seatEvent(hand, 'shield'), 'the restarted seat\'s shield')
    expect(shield.event).toEqual({ type: 'shield', ok: true, problems: [] })
    const done = await waitEvent(nodes[0].daemon.events, e => e.hand === hand && e.role === 'dealer' && e.event.type === 'receipt', 'the dealer\'s receipt')
    expect(done.event).toMatchObject({ acked: [0, 1, 2, 3] })
    await waitEvent(back.daemon.events, seatEvent(hand, 'receipt'), 'the restarted seat\'s receipt')
    await t.stopAll()
    const entries = await logEntries(t.dataDir(2))
    expect(entries.map(e => e.body.kind)).toEqual(['receipt'])
    expect((await verifyNodeLog(t.dataDir(2))).failures).toEqual([])
    const receipt = entries[0].body.payload as Receipt
    expect(receipt.reveal.body.stages).toEqual(['deal', 'turnUp', 'take'])
  })
})

describe('a seat killed right after its ACK (issue 9, item 4)', () => {
  it('ends, after its restart, with the same receipt as the dealer; a seat down at the end learns it too', async () => {
    const t = table = await TestTable.prepare({ game: 'coinche', scheme: 'atout-v1', seats: 4, transport: 'tcp', timeouts: { contributeMs: 4_000, ackMs: 1_500, revealMs: 60_000 } })
    const d = await t.start(0)
    const others = [await t.start(2), await t.start(3)]
    let seat = dealer = await NodeProcess.start(t.local.files[1], t.dataDir(1))
    const seat1 = t.seatOf(1)
    const hand = await d.daemon.deal({ dealer: 0 })
    for (const n of [d, ...others]) await waitEvent(n.daemon.events, ownCards(n, hand), `${n.name}: cards`)
    await seat.until(e => e.hand === hand && e.role === 'seat' && e.event.type === 'cards' && e.event.seat === seat1, 'the process seat\'s cards')
    // Seat 3 goes down holding its cards: the dealer then waits ackMs for its ACK.
    await t.stop(3)
    await d.daemon.end(hand)
    // SIGKILL the process seat once its ACK is in the dealer: the FINAL will find it down.
    await until(() => d.daemon.dealer?.status().find(h => h.hand === hand)?.acks === 3, 'the dealer holds three ACKs', 15_000, 10)
    await seat.kill()
    const done = await waitEvent(d.daemon.events, e => e.hand === hand && e.role === 'dealer' && e.event.type === 'receipt', 'the dealer\'s receipt')
    expect(done.event).toMatchObject({ acked: [0, seat1, t.seatOf(2)].sort() })
    // Back, each asks the dealer what became of the hand, and logs the dealer's receipt.
    seat = dealer = await NodeProcess.start(t.local.files[1], t.dataDir(1))
    // Watched from before seat 3 is back: its late ack reaches every node soon after.
    const watching = [d, others[0]].map(n => ({ n, w: n.daemon.events.watch() })) // others[1] is seat 3, stopped
    const back = await t.start(3)
    watching.push({ n: back, w: back.daemon.events.watch() })
    await seat.until(e => e.hand === hand && e.role === 'seat' && e.event.type === 'receipt', 'the restarted seat\'s receipt')
    await waitEvent(back.daemon.events, seatEvent(hand, 'receipt'), 'seat 3\'s receipt')
    // Seat 3 held its cards: it countersigns the receipt late, and every node logs that late ack
    // (the receipt event comes again with every seat; docs/protocol.md §11, late acks).
    const everyone = (e: { hand: number, role: string, event: { type: string, acked?: number[] } }): boolean => e.hand === hand && e.role === 'seat' && e.event.type === 'receipt' && e.event.acked?.length === 4
    await seat.until(everyone, 'the restarted seat logs seat 3\'s late ack')
    for (const { n, w } of watching) await w.until(everyone, `${n.name}: seat 3's late ack`, 15_000)
    expect((await seat.stop()).code).toBe(0)
    dealer = undefined
    await t.stopAll()
    const receipts = await Promise.all([0, 1, 2, 3].map(async i => (await logEntries(t.dataDir(i))).map(e => e.body)))
    for (let i = 0; i < 4; i++) {
      expect(receipts[i].map(b => b.kind), `node ${i}`).toEqual(['receipt', 'late-ack'])
      expect(receipts[i][0].payload, `node ${i}`).toEqual(receipts[0][0].payload)
      // Seat 3 was down when the dealer completed the receipt: the receipt alone is incomplete,
      // naming it (reported where it is read), and seat 3's late ack completes it: every log is complete.
      const verdict = await verifyNodeLog(t.dataDir(i))
      expect(verdict.failures).toEqual([`seq 0: incomplete: no countersignature from seat 3 (${t.peerIds[3]})`])
      expect(verdict, `node ${i}`).toMatchObject({ passed: 2, failed: 0, incomplete: 0 })
    }
  })
})

