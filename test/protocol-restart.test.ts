// Restart correctness (docs/protocol.md §11), in memory on the injected clock: the dealer and a seat
// are crashed in every phase of a hand and restored from nothing but what they had persisted; the
// hand then finishes, or aborts, as §11 says. After every step, what each machine has persisted is
// the phase it is in.
import { describe, expect, test } from 'vitest'
import { memoryTable, type MemoryTable } from './helpers/memory-table.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { verifyAbort } from '../src/core/hand/abort-rules.js'
import { verifyRecovered, type SignedRecovered } from '../src/core/hand/recovered.js'
import { sha256Hex } from '../src/core/bytes.js'
import { localBeaconSecretKey, localChainInfo, parseChainInfo, signLocalRound, type ChainInfo } from '../src/core/beacon/index.js'
import type { CommitBody, Receipt, SignedAbort } from '../src/core/hand/messages.js'
import type { Signed } from '../src/core/signed.js'
import type { Effect } from '../src/protocol/types.js'

const beaconKey = localBeaconSecretKey(new Uint8Array(48).fill(7))
const chain: ChainInfo = parseChainInfo(localChainInfo({ secretKey: beaconKey, period: 3, genesisTime: 1_690_000_000 }))

/** The phase of each hand a machine has saved, by hand number. */
function savedPhases (t: MemoryTable, peer: string, prefix: string): Record<number, string> {
  const out: Record<number, string> = {}
  for (const [k, v] of t.persisted.get(peer) ?? []) {
    if (k.startsWith(prefix) && k.includes('/hand/')) out[(v as { hand: number }).hand] = (v as { phase: string }).phase
  }
  return out
}

/** What is on disk is what is in memory: every machine's saved phases are its phases. */
function expectSavedMatchesPhase (t: MemoryTable): void {
  const live = (list: Array<{ hand: number, phase: string }>): Record<number, string> => Object.fromEntries(list.map(h => [h.hand, h.phase]))
  expect(savedPhases(t, t.table.dealer, 'dealer/'), 'dealer').toEqual(live(t.dealer.status()))
  for (const [peer, seat] of t.seats) expect(savedPhases(t, peer, 'seat/'), `seat ${seat.seat}`).toEqual(live(seat.status()))
}

/** Runs effects, then checks that every machine's saved state matches its phase. */
function step (t: MemoryTable, from: string, effects: Effect[]): void {
  t.run(from, effects)
  expectSavedMatchesPhase(t)
}

/** Holds back the documents `match` picks (they are lost unless released). */
function hold (t: MemoryTable, match: (from: string, to: string, doc: Signed<unknown>) => boolean): { release: () => void } {
  const held: Array<{ from: string, to: string, doc: Signed<unknown> }> = []
  t.intercept = (from, to, doc) => {
    if (!match(from, to, doc)) return doc
    held.push({ from, to, doc })
    return undefined
  }
  return {
    release: () => {
      t.intercept = undefined
      for (const h of held.splice(0)) step(t, h.from, [{ kind: 'send', to: h.to, doc: h.doc }])
    }
  }
}

const peerOf = (t: MemoryTable, seat: number): string => t.signers[seat].peerId
const logOf = (t: MemoryTable, peer: string): Array<{ entry: string, hand: number, payload: unknown }> => t.appended.get(peer) ?? []

/** The dealer's node (dealer machine and seat 0) crashes and comes back. */
function restartDealerNode (t: MemoryTable): void {
  const effects = t.restartDealer()
  const asks = t.restartSeat(t.table.dealer)
  step(t, t.table.dealer, effects)
  step(t, t.table.dealer, asks)
}

function restartSeat (t: MemoryTable, seat: number): void {
  step(t, peerOf(t, seat), t.restartSeat(peerOf(t, seat)))
}

/** Every member ends the hand with the one receipt, countersigned by every seat. */
function expectSameFullReceipt (t: MemoryTable, hand: number): Receipt {
  const dealerReceipt = logOf(t, t.table.dealer).find(e => e.hand === hand && e.entry === 'receipt')?.payload as Receipt
  expect(dealerReceipt, 'the dealer logged a receipt').toBeDefined()
  const verdict = verifyReceipt(dealerReceipt)
  expect(verdict.problems).toEqual([])
  expect(verdict.summary?.acked).toEqual([0, 1, 2, 3])
  for (let s = 1; s < 4; s++) {
    const mine = logOf(t, peerOf(t, s)).filter(e => e.hand === hand)
    expect(mine.map(e => e.entry), `seat ${s}`).toEqual(['receipt'])
    expect(mine[0].payload, `seat ${s}`).toEqual(dealerReceipt)
  }
  return dealerReceipt
}

/** Every seat's log ends the hand with the dealer's own dealer-stopped record, whose secret opens the commitment. */
function expectDealerStopped (t: MemoryTable, hand: number, evidence: number): void {
  for (const peer of t.seats.keys()) {
    const aborts = logOf(t, peer).filter(e => e.hand === hand)
    expect(aborts.map(e => e.entry), peer).toEqual(peer === t.table.dealer ? ['abort', 'abort'] : ['abort'])
    const record = aborts[0].payload as SignedAbort
    expect(verifyAbort(record).problems).toEqual([])
    expect(record.body).toMatchObject({ reason: 'dealer-stopped', blame: [t.table.dealer] })
    expect(record.body.evidence).toHaveLength(evidence)
    const secret = /was ([0-9a-f]{64})$/.exec(record.body.detail)?.[1] as string
    expect(sha256Hex(secret)).toBe(record.body.commit?.body.commitment)
  }
}

function start (t: MemoryTable): number {
  const { hand, effects } = t.dealer.startHand({ dealer: 0 })
  step(t, t.table.dealer, effects)
  return hand
}

describe('dealer restarted in every phase', () => {
  test('pledging: the hand aborts dealer-stopped with its secret published; the next hand links to it', () => {
    const t = memoryTable()
    const late = hold(t, (from, _to, doc) => doc.type === 'pledge' && from === peerOf(t, 3))
    const hand = start(t)
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'pledging' }])
    restartDealerNode(t)
    expectDealerStopped(t, hand, 0) // pledges are not saved one by one
    // The pledge that comes late is for a hand no longer in play.
    late.release()
    expect(t.rejections.map(r => r.reason)).toEqual([expect.stringMatching(/not in play/)])
    // The counter came back: the next hand is hand 2, chained to hand 1, and every seat plays it.
    const next = start(t)
    expect(next).toBe(hand + 1)
    step(t, t.table.dealer, t.dealer.end(next))
    expectSameFullReceipt(t, next)
  })

  test('pledging, one seat never reached: after the restart the hand ends dealer-stopped naming the dealer alone, never the unreached seat', () => {
    // The dealer's marks of seats it could not reach live in memory only. Nothing needs them after a
    // restart: a hand still collecting pledges (or nonces) is ended in the dealer's own name.
    const t = memoryTable()
    const away = peerOf(t, 3)
    t.unreachable = (_from, to) => to === away
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    step(t, t.table.dealer, effects)
    const commit = (effects.find(e => e.kind === 'send' && e.to === away) as Extract<Effect, { kind: 'send' }>).doc
    t.dealer.delivery(away, commit, { ok: false, reason: 'connect ECONNREFUSED 127.0.0.1:7400' })
    restartDealerNode(t)
    t.unreachable = undefined
    // Seat 3 never saw the hand: the three others logged the record, which blames the dealer only.
    for (const peer of [...t.seats.keys()].filter(p => p !== away)) {
      const [record] = logOf(t, peer).filter(e => e.hand === hand && e.entry === 'abort').map(e => e.payload as SignedAbort)
      expect(record.body, peer).toMatchObject({ reason: 'dealer-stopped', blame: [t.table.dealer] })
      expect(verifyAbort(record).problems).toEqual([])
    }
    // Past the old deadline nothing more is recorded against anyone.
    t.clock.now = (commit.body as { deadline: number }).deadline + 1
    step(t, t.table.dealer, t.dealer.tick(t.clock.now))
    expect(logOf(t, t.table.dealer).filter(e => e.hand === hand).map(e => (e.payload as SignedAbort).body.reason)).toEqual(['dealer-stopped', 'dealer-stopped'])
  })

  test('contributing: the hand aborts dealer-stopped, with the pledges it had saved', () => {
    const t = memoryTable()
    hold(t, (from, _to, doc) => doc.type === 'nonce' && from === peerOf(t, 3))
    const hand = start(t)
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'contributing' }])
    restartDealerNode(t)
    expectDealerStopped(t, hand, 4)
  })

  test('beacon: the bound round is fetched again and the hand is dealt and finished', () => {
    const t = memoryTable({ scheme: 'atout-drand-v1', beacon: { chain, marginMs: 1_000 } })
    const hand = start(t)
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'beacon' }])
    const round = ((t.persisted.get(t.table.dealer)?.get(`dealer/${t.table.id}/hand/${String(hand).padStart(16, '0')}`)) as { commit: Signed<CommitBody> }).commit.body.beacon?.round as number
    const effects = t.restartDealer()
    const asks = t.restartSeat(t.table.dealer)
    expect(effects).toEqual([{ kind: 'fetchBeacon', hand, round }])
    step(t, t.table.dealer, effects)
    step(t, t.table.dealer, asks)
    step(t, t.table.dealer, t.dealer.beaconResult(hand, { entry: signLocalRound(beaconKey, round) }))
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'dealt' }])
    step(t, t.table.dealer, t.dealer.end(hand))
    expect(t.rejections).toEqual([])
    expect(verifyReceipt(expectSameFullReceipt(t, hand)).summary?.beaconRound).toBe(round)
  })

  test('recovering (a time-locked hand whose bound round could not be had): it fetches the round again and ends the hand with its RECOVERED record, which verifies', () => {
    const t = memoryTable({ scheme: 'atout-drand-v1', beacon: { chain, marginMs: 1_000 }, timelock: { rule: 'open' } })
    const hand = start(t)
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'beacon' }])
    step(t, t.table.dealer, t.dealer.beaconResult(hand, { error: 'AbortError: This operation was aborted' }))
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'recovering' }])
    const round = ((t.persisted.get(t.table.dealer)?.get(`dealer/${t.table.id}/hand/${String(hand).padStart(16, '0')}`)) as { commit: Signed<CommitBody> }).commit.body.beacon?.round as number
    const effects = t.restartDealer()
    expect(effects.filter(e => e.kind === 'fetchBeacon')).toEqual([{ kind: 'fetchBeacon', hand, round }])
    step(t, t.table.dealer, effects)
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'recovering' }])
    step(t, t.table.dealer, t.dealer.beaconResult(hand, { entry: signLocalRound(beaconKey, round) }))
    const logged = logOf(t, t.table.dealer).filter(e => e.hand === hand)
    expect(logged.map(e => e.entry)).toEqual(['recovered'])
    expect(verifyRecovered(logged[0].payload as SignedRecovered).problems).toEqual([])
    expect(t.dealer.status()).toEqual([])
    expect(t.rejections).toEqual([])
  })

  test('dealt: the hand is revealed on request, with the cards the seats were shown', () => {
    const t = memoryTable({ game: 'belote', scheme: 'atout-v1' })
    const hand = start(t)
    step(t, t.table.dealer, t.dealer.deliverStage(hand, 'take', 2))
    const shown = [...t.seats.values()].map(s => s.cards(hand))
    restartDealerNode(t)
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'dealt', stages: ['deal', 'turnUp', 'take'] }])
    expect([...t.seats.values()].map(s => s.cards(hand))).toEqual(shown)
    step(t, t.table.dealer, t.dealer.end(hand))
    expect(t.rejections).toEqual([])
    expectSameFullReceipt(t, hand)
  })

  test('revealed: the same REVEAL goes out again and the seats that had acknowledged answer with the same ACK', () => {
    const t = memoryTable()
    hold(t, (_from, _to, doc) => doc.type === 'ack')
    const hand = start(t)
    step(t, t.table.dealer, t.dealer.end(hand))
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'revealed', acks: 0 }])
    for (const s of t.seats.values()) expect(s.status()).toEqual([{ hand, phase: 'acked' }])
    t.intercept = undefined // the held ACKs are lost with the crash
    restartDealerNode(t)
    expect(t.rejections).toEqual([])
    expectSameFullReceipt(t, hand)
    expect(t.dealer.status()).toEqual([])
  })

  test('revealed, and no seat answers again: the receipt is completed at the ack deadline', () => {
    const t = memoryTable()
    hold(t, (_from, _to, doc) => doc.type === 'ack')
    const hand = start(t)
    step(t, t.table.dealer, t.dealer.end(hand))
    t.restartDealer() // restore asks to reveal again; those messages are lost too
    t.clock.now += 6_000
    step(t, t.table.dealer, t.dealer.tick(t.clock.now))
    const receipt = logOf(t, t.table.dealer).find(e => e.entry === 'receipt')?.payload
    expect(verifyReceipt(receipt).summary?.acked).toEqual([])
  })
})

describe('seat restarted in every phase', () => {
  const restarted = 2

  test('pledged: the seat contributes once the PLEDGES come and the hand finishes', () => {
    const t = memoryTable()
    const late = hold(t, (from, _to, doc) => doc.type === 'pledge' && from === peerOf(t, 3))
    const hand = start(t)
    expect(t.seats.get(peerOf(t, restarted))?.status()).toEqual([{ hand, phase: 'pledged' }])
    restartSeat(t, restarted)
    late.release()
    step(t, t.table.dealer, t.dealer.end(hand))
    expect(t.rejections).toEqual([])
    expectSameFullReceipt(t, hand)
  })

  test('viewing: it sends its VIEW again asking for the others\', takes the one it lacked, contributes, and the hand finishes', () => {
    const t = memoryTable()
    const late = hold(t, (from, to, doc) => doc.type === 'view' && from === peerOf(t, 3) && to === peerOf(t, restarted))
    const hand = start(t)
    expect(t.seats.get(peerOf(t, restarted))?.status()).toEqual([{ hand, phase: 'viewing' }])
    restartSeat(t, restarted)
    late.release()
    expect(t.seats.get(peerOf(t, restarted))?.status()).toEqual([{ hand, phase: 'dealt' }])
    step(t, t.table.dealer, t.dealer.end(hand))
    expect(t.rejections).toEqual([])
    expectSameFullReceipt(t, hand)
  })

  test('contributed: the seat takes its cards and countersigns', () => {
    const t = memoryTable()
    const late = hold(t, (from, _to, doc) => doc.type === 'nonce' && from === peerOf(t, 3))
    const hand = start(t)
    expect(t.seats.get(peerOf(t, restarted))?.status()).toEqual([{ hand, phase: 'contributed' }])
    restartSeat(t, restarted)
    late.release()
    step(t, t.table.dealer, t.dealer.end(hand))
    expect(t.rejections).toEqual([])
    expectSameFullReceipt(t, hand)
  })

  test('contributed, and the dealer never deals: missing-deal, blaming the dealer, at the deal deadline', () => {
    const t = memoryTable()
    hold(t, (_from, _to, doc) => doc.type === 'cards')
    const hand = start(t)
    restartSeat(t, restarted)
    const seat = t.seats.get(peerOf(t, restarted))
    t.clock.now = (seat?.nextDeadline() as number) + 1
    // It asks the dealer first (the answer is lost: the dealer holds the cards back), then records.
    step(t, peerOf(t, restarted), seat?.tick(t.clock.now) ?? [])
    expect(logOf(t, peerOf(t, restarted))).toEqual([])
    t.clock.now = (seat?.nextDeadline() as number) + 1
    step(t, peerOf(t, restarted), seat?.tick(t.clock.now) ?? [])
    const record = logOf(t, peerOf(t, restarted)).find(e => e.hand === hand)?.payload as SignedAbort
    expect(record.body).toMatchObject({ reason: 'missing-deal', blame: [t.table.dealer] })
    expect(verifyAbort(record).problems).toEqual([])
  })

  test('dealt: the seat still checks the REVEAL against the cards it kept, and countersigns', () => {
    const t = memoryTable()
    const hand = start(t)
    const cards = t.seats.get(peerOf(t, restarted))?.cards(hand)
    restartSeat(t, restarted)
    expect(t.seats.get(peerOf(t, restarted))?.cards(hand)).toEqual(cards)
    step(t, t.table.dealer, t.dealer.end(hand))
    expect(t.rejections).toEqual([])
    expectSameFullReceipt(t, hand)
  })

  test('acked: the seat knows its ACK after the restart and takes the FINAL that holds it', () => {
    const t = memoryTable()
    const late = hold(t, (from, _to, doc) => doc.type === 'ack' && from === peerOf(t, 3))
    const hand = start(t)
    step(t, t.table.dealer, t.dealer.end(hand))
    expect(t.seats.get(peerOf(t, restarted))?.status()).toEqual([{ hand, phase: 'acked' }])
    restartSeat(t, restarted)
    late.release()
    expect(t.rejections).toEqual([])
    expectSameFullReceipt(t, hand)
  })
})

describe('a seat that was down learns how the hand ended (it asks before it blames)', () => {
  const down = 2
  const isolate = (t: MemoryTable): void => {
    const peer = peerOf(t, down)
    t.intercept = (from, to, doc) => (from === peer || to === peer ? undefined : doc)
  }

  test('killed right after its ACK left, back after the FINAL: it takes the dealer\'s receipt, which holds its ACK', () => {
    const t = memoryTable()
    const peer = peerOf(t, down)
    // Its ACK reaches the dealer; everything after (the FINAL) is lost while it is down.
    t.intercept = (from, to, doc) => (to === peer && doc.type === 'final' ? undefined : doc)
    const hand = start(t)
    step(t, t.table.dealer, t.dealer.end(hand))
    expect(t.dealer.status()).toEqual([])
    t.intercept = undefined
    restartSeat(t, down)
    expect(t.rejections).toEqual([])
    expectSameFullReceipt(t, hand)
  })

  test('down from its cards to the end (no REVEAL, no FINAL): it takes the receipt and never records missing-reveal', () => {
    const t = memoryTable()
    const hand = start(t)
    isolate(t)
    step(t, t.table.dealer, t.dealer.end(hand))
    t.clock.now += 6_000
    step(t, t.table.dealer, t.dealer.tick(t.clock.now))
    const dealerReceipt = logOf(t, t.table.dealer).find(e => e.entry === 'receipt')?.payload as Receipt
    expect(dealerReceipt.acks.map(a => a.body.seat)).toEqual([0, 1, 3])
    t.intercept = undefined
    restartSeat(t, down)
    // The dealer's receipt, then its own late ACK as the dealer took it (test/protocol-late-ack.test.ts).
    expect(logOf(t, peerOf(t, down))[0]).toEqual({ entry: 'receipt', hand, payload: dealerReceipt })
    expect(logOf(t, peerOf(t, down)).map(e => e.entry)).toEqual(['receipt', 'late-ack'])
    expect(t.rejections).toEqual([])
  })

  test('cut off (not restarted) when the FINAL went out: at its deadline it asks, and logs the dealer\'s receipt, not its own', () => {
    const t = memoryTable()
    const peer = peerOf(t, down)
    t.intercept = (from, to, doc) => (to === peer && doc.type === 'final' ? undefined : doc)
    const hand = start(t)
    step(t, t.table.dealer, t.dealer.end(hand))
    t.intercept = undefined
    const seat = t.seats.get(peer)
    t.clock.now = (seat?.nextDeadline() as number) + 1
    step(t, peer, seat?.tick(t.clock.now) ?? [])
    expectSameFullReceipt(t, hand)
  })

  test('its cards and the REVEAL lost: asking brings them, it checks them and countersigns', () => {
    const t = memoryTable()
    const peer = peerOf(t, down)
    t.intercept = (from, to, doc) => (to === peer && (doc.type === 'cards' || doc.type === 'reveal') ? undefined : doc)
    const hand = start(t)
    step(t, t.table.dealer, t.dealer.end(hand))
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'revealed', acks: 3 }])
    t.intercept = undefined
    restartSeat(t, down)
    expect(t.rejections).toEqual([])
    expectSameFullReceipt(t, hand)
  })

  test('down for a whole hand: back, it logs the dealer\'s record of it and then plays the next hand', () => {
    const t = memoryTable()
    isolate(t)
    const hand = start(t)
    t.clock.now += 6_000
    step(t, t.table.dealer, t.dealer.tick(t.clock.now))
    const record = logOf(t, t.table.dealer).find(e => e.entry === 'abort')?.payload as SignedAbort
    expect(record.body).toMatchObject({ reason: 'missing-pledge', blame: [peerOf(t, down)] })
    t.intercept = undefined
    // A dealer restart in between: it still knows the hand's record, from its log.
    step(t, t.table.dealer, t.restartDealer())
    restartSeat(t, down)
    expect(logOf(t, peerOf(t, down))).toEqual([{ entry: 'abort', hand, payload: record }])
    const next = start(t)
    step(t, t.table.dealer, t.dealer.end(next))
    expect(t.rejections).toEqual([])
    expectSameFullReceipt(t, next)
  })

  test('hands it never saw are learnt in order only: one that skips a hand is refused', () => {
    const t = memoryTable()
    isolate(t)
    const hands = [start(t), 0]
    t.clock.now += 6_000
    step(t, t.table.dealer, t.dealer.tick(t.clock.now))
    hands[1] = start(t)
    t.clock.now += 6_000
    step(t, t.table.dealer, t.dealer.tick(t.clock.now))
    t.intercept = undefined
    const peer = peerOf(t, down)
    const second = logOf(t, t.table.dealer).find(e => e.entry === 'abort' && e.hand === hands[1])?.payload as SignedAbort
    expect(() => t.seats.get(peer)?.receive(t.table.dealer, second)).toThrow(/the next hand this seat can learn of is 1/)
    restartSeat(t, down)
    expect(logOf(t, peer).map(e => e.hand)).toEqual(hands)
    expect(t.rejections).toEqual([])
  })
})
