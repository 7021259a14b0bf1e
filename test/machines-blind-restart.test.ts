// A blind dealer restarted mid-hand goes on from what it saved (issue 17): in the keys phase it
// sends the COMMIT again to the seats whose key it lacks; while the seats shuffle it sends the
// BKEYS and the shuffles it holds again, and a seat whose shuffle was lost sends it again; the hand
// ends with the same receipt everywhere, and it verifies. Later phases go on from the deal's
// documents saved (BDEALs, shares, BEND, hand keys, BREVEAL, acks); a snapshot saved before they
// were is aborted naming the dealer, as before. In memory, injected clock, duo.
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { verifyAbort } from '../src/core/hand/abort-rules.js'
import { localBeaconSecretKey, localChainInfo, parseChainInfo, signLocalRound } from '../src/core/beacon/index.js'
import { blindTable, ids } from './helpers/blind-memory.js'

type T = ReturnType<typeof blindTable>

/** A table where the dealer is "down" for the documents `lost` picks: they never reach it. */
function tableLosing (lost: (type: string, from: string) => boolean): { t: T, down: { on: boolean } } {
  const down = { on: true }
  const t = blindTable(ids.slice(0, 2), {
    game: 'duo',
    intercept: (from, to, doc) => down.on && to === ids[0] && from === ids[1] && lost(doc.type, from) ? undefined : doc
  })
  return { t, down }
}

/** The dealer ends the hand: one receipt everywhere, it verifies, nothing was refused on the way. */
function endWithOneReceipt (t: T, hand: number): void {
  t.end(hand)
  expectOneVerifiedReceipt(t)
  expect(t.rejections).toEqual([])
}

function expectOneVerifiedReceipt (t: T): void {
  const receipts = [...t.nodes.values()].map(n => n.log.find(l => l.entry === 'receipt')?.payload)
  for (const r of receipts) expect(canonicalJson(r)).toBe(canonicalJson(receipts[0]))
  expect(verifyReceipt(receipts[0]).problems).toEqual([])
  expect([...t.nodes.values()].flatMap(n => n.log.filter(l => l.entry === 'abort'))).toEqual([])
}

describe('a blind dealer restarted mid-hand', () => {
  it('while the seats shuffle (seat 1\'s shuffle lost): it sends the BKEYS and shuffles again, seat 1 sends its shuffle again, the hand finishes with a receipt that verifies', () => {
    const { t, down } = tableLosing(type => type === 'bshuffle')
    const hand = t.deal()
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'shuffling', contributed: 1 }])
    down.on = false
    t.restartDealer()
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'dealt', contributed: 2 }])
    for (const id of ids.slice(0, 2)) expect(t.nodes.get(id)!.seat!.cards(hand).length).toBeGreaterThan(0)
    endWithOneReceipt(t, hand)
  }, 60_000)

  it('while it waits for keys (seat 1\'s key lost): it sends the COMMIT again, seat 1 sends its key again, the hand finishes', () => {
    const { t, down } = tableLosing(type => type === 'bkey')
    const hand = t.deal()
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'keys', joined: 1 }])
    down.on = false
    t.restartDealer()
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'dealt' }])
    endWithOneReceipt(t, hand)
  }, 60_000)

  it('in dealt while seat 1\'s shares were lost: it sends the BDEAL again to seat 1, which answers with fresh shares; the cards open and the hand finishes with a receipt', () => {
    const { t, down } = tableLosing(type => type === 'bshares')
    const hand = t.deal()
    expect(t.nodes.get(ids[0])!.seat!.cards(hand).filter(c => !c.public && c.seat === 0)).toEqual([])
    down.on = false
    t.restartDealer()
    expect(t.nodes.get(ids[1])!.frames.filter(f => f.type === 'bdeal')).toHaveLength(2)
    expect(t.nodes.get(ids[0])!.seat!.cards(hand).filter(c => !c.public && c.seat === 0)).toHaveLength(1)
    endWithOneReceipt(t, hand)
  }, 60_000)

  it('waiting for the bound beacon round: it fetches the round again, deals from it, and the hand finishes with a receipt naming that round', () => {
    const beaconKey = localBeaconSecretKey(new Uint8Array(48).fill(7))
    const chain = parseChainInfo(localChainInfo({ secretKey: beaconKey, period: 3, genesisTime: 900 }))
    const t = blindTable(ids.slice(0, 2), { game: 'duo', beacon: { chain, marginMs: 1_000 } })
    const hand = t.deal()
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'beacon', contributed: 2 }])
    const key = [...t.dealerNode.saved.keys()].find(k => k.includes('/hand/'))!
    const round = (t.dealerNode.saved.get(key) as any).commit.body.beacon.round as number
    expect(t.restartDealer()).toEqual([{ kind: 'fetchBeacon', hand, round }])
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'beacon' }])
    t.run(t.dealerNode, 'dealer', t.dealerNode.dealer!.beaconResult(hand, { entry: signLocalRound(beaconKey, round) }))
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'dealt' }])
    endWithOneReceipt(t, hand)
    const receipt = t.dealerNode.log.find(l => l.entry === 'receipt')!.payload
    expect(verifyReceipt(receipt).summary?.beaconRound).toBe(round)
  }, 60_000)

  it('in dealt at a table with a robot: its openings of the robot\'s cards come back (from the saved shares and the robot\'s key), and the hand finishes', () => {
    const t = blindTable([ids[0], 'robot'], { game: 'duo' })
    const hand = t.deal()
    const robot = t.dealerNode.dealer!.robotCards(hand)
    expect(robot.length).toBeGreaterThan(0)
    t.restartDealer()
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'dealt' }])
    expect(t.dealerNode.dealer!.robotCards(hand)).toEqual(robot)
    endWithOneReceipt(t, hand)
  }, 60_000)

  it('a snapshot of the dealt phase saved before the deal\'s documents were (no deals): the hand is aborted dealer-stopped, as before, a record that verifies', () => {
    const t = blindTable(ids.slice(0, 2), { game: 'duo' })
    const hand = t.deal()
    const key = [...t.dealerNode.saved.keys()].find(k => k.includes('/hand/'))!
    const { deals, sharesIn, acks, bend, reveal, ...old } = t.dealerNode.saved.get(key) as any
    expect(old.phase).toBe('dealt')
    expect(deals.length).toBeGreaterThan(0)
    t.dealerNode.saved.set(key, old)
    t.restartDealer()
    const records = [...t.nodes.values()].map(n => n.log.find(l => l.entry === 'abort')?.payload)
    expect(records[0].body).toMatchObject({ reason: 'dealer-stopped', blame: [ids[0]] })
    expect(verifyAbort(records[0]).problems).toEqual([])
    for (const r of records) expect(canonicalJson(r)).toBe(canonicalJson(records[0]))
    expect(t.dealerNode.dealer!.status()).toEqual([])
    expect(hand).toBe(1)
  }, 60_000)
})

// One duo hand, restarted at every later phase in turn (a blind hand costs seconds: the restart
// points share it). Each restart is the node's machine rebuilt from what it saved, with a new random
// stream; `blocked` holds back the documents that keep a party in the phase to be restarted.
describe('one blind hand restarted at each phase in turn (seat keyed, dealer dealt, seat and dealer ending/ended, seat acked, dealer revealed)', () => {
  it('resumes after every restart and ends with one receipt everywhere, which verifies', () => {
    const blocked = new Set<string>()
    const t = blindTable(ids.slice(0, 2), {
      game: 'duo',
      intercept: (from, to, doc) => blocked.has(`${doc.type}>${to === ids[0] ? 'dealer' : 'seat1'}`) && (to === ids[1] || from === ids[1]) ? undefined : doc
    })
    const seat1 = (): any => t.nodes.get(ids[1])!.seat!
    const dealer = (): any => t.dealerNode.dealer!

    // Seat 1 keyed: the BKEYS and seat 0's shuffle never reach it; restarted, it asks and takes them from the dealer's answer.
    blocked.add('bkeys>seat1').add('bshuffle>seat1')
    const hand = t.deal()
    expect(seat1().status()).toEqual([{ hand, phase: 'keyed', shuffled: 0 }])
    expect(dealer().status()).toMatchObject([{ hand, phase: 'shuffling', contributed: 1 }])
    blocked.clear()
    t.restartSeat(ids[1])
    expect(dealer().status()).toMatchObject([{ hand, phase: 'dealt', contributed: 2 }])
    const cards = seat1().cards(hand)
    expect(cards.length).toBeGreaterThan(0)

    // The dealer in dealt, every share in: back with the dealt deck and its openings, nothing owed.
    t.restartDealer()
    expect(dealer().status()).toMatchObject([{ hand, phase: 'dealt' }])

    // Seat 1's hand key held back: the dealer waits in ending, seat 1 is ended. Seat 1 restarts
    // (it asks; the dealer answers with the BEND; its key goes again, held back), then the dealer.
    blocked.add('bsecret>dealer')
    t.end(hand)
    expect(dealer().status()).toMatchObject([{ hand, phase: 'ending' }])
    t.restartSeat(ids[1])
    expect(seat1().status()).toEqual([{ hand, phase: 'ended' }])
    expect(seat1().cards(hand)).toEqual(cards)
    blocked.clear()
    blocked.add('ack>dealer')
    t.restartDealer()
    // The BEND went again, seat 1 answered with its key, the dealer revealed; seat 0's ack is in, seat 1's held back.
    expect(dealer().status()).toMatchObject([{ hand, phase: 'revealed', acks: 1 }])
    expect(seat1().status()).toEqual([{ hand, phase: 'acked' }])

    // Seat 1 acked restarts (its ack goes again when the dealer answers its ASK with the BREVEAL: held back), then the dealer revealed.
    t.restartSeat(ids[1])
    expect(seat1().status()).toEqual([{ hand, phase: 'acked' }])
    blocked.clear()
    t.restartDealer()
    expect(dealer().status()).toEqual([])
    expect(seat1().status()).toEqual([])
    expectOneVerifiedReceipt(t)
    expect(t.rejections).toEqual([])
    const receipt = t.dealerNode.log.find(l => l.entry === 'receipt')!.payload
    expect(receipt.acks.map((a: any) => a.body.seat)).toEqual([0, 1])
  }, 60_000)
})

describe('a blind seat restarted mid-hand', () => {
  it('holding its cards: it comes back with them, answers the End, checks the reveal and countersigns; one receipt that verifies', () => {
    const t = blindTable(ids.slice(0, 2), { game: 'duo' })
    const hand = t.deal()
    const cards = t.nodes.get(ids[1])!.seat!.cards(hand)
    expect(cards.length).toBeGreaterThan(0)
    t.restartSeat(ids[1])
    expect(t.nodes.get(ids[1])!.seat!.status()).toEqual([{ hand, phase: 'dealt' }])
    expect(t.nodes.get(ids[1])!.seat!.cards(hand)).toEqual(cards)
    endWithOneReceipt(t, hand)
  }, 60_000)

  it('before its turn to shuffle: it comes back with the keys and shuffles it holds, shuffles in turn, and the hand finishes', () => {
    let hold = true
    const held: any[] = []
    const t = blindTable(ids.slice(0, 2), {
      game: 'duo',
      // Seat 0's shuffle reaches seat 1 only after seat 1's restart.
      intercept: (from, to, doc) => { if (hold && to === ids[1] && doc.type === 'bshuffle') { held.push(doc); return undefined } return doc }
    })
    const hand = t.deal()
    expect(t.nodes.get(ids[1])!.seat!.status()).toEqual([{ hand, phase: 'shuffling', shuffled: 0 }])
    t.restartSeat(ids[1])
    expect(t.nodes.get(ids[1])!.seat!.status()).toEqual([{ hand, phase: 'shuffling', shuffled: 0 }])
    hold = false
    t.run(t.dealerNode, 'dealer', held.map(doc => ({ kind: 'send' as const, to: ids[1], doc })))
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'dealt' }])
    endWithOneReceipt(t, hand)
  }, 60_000)
})

describe('a blind seat that was away when the hand ended asks the dealer (issue 18: no gap in its log)', () => {
  it('paused before the REVEAL: back, it asks, takes the dealer\'s BEND, BREVEAL and BFINAL, and logs the same receipt as the dealer', () => {
    let away = true
    const t = blindTable(ids.slice(0, 2), {
      game: 'duo',
      intercept: (_from, to, doc) => away && to === ids[1] && (doc.type === 'breveal' || doc.type === 'bfinal') ? undefined : doc
    })
    const hand = t.deal()
    t.end(hand)
    // The dealer finalises without seat 1's countersignature.
    t.tick(10_001)
    expect(t.dealerNode.log.map(l => l.entry)).toEqual(['receipt'])
    const seat1 = t.nodes.get(ids[1])!
    expect(seat1.log).toEqual([])
    away = false
    // Past its wait for the REVEAL it asks before it records anything; the answer ends the hand.
    t.tick(60_000)
    expect(seat1.frames.filter(f => f.type === 'bfinal')).toHaveLength(1)
    expect(seat1.log.map(l => l.entry)).toEqual(['receipt'])
    expect(canonicalJson(seat1.log[0].payload)).toBe(canonicalJson(t.dealerNode.log[0].payload))
    expect(seat1.seat!.status()).toEqual([])
    t.tick(120_000)
    expect([...t.nodes.values()].flatMap(n => n.log.filter(l => l.entry === 'abort'))).toEqual([])
  }, 60_000)

  it('paused while the hand was aborted: back, it asks and logs the dealer\'s record instead of signing its own', () => {
    let away = true
    const t = blindTable(ids.slice(0, 2), {
      game: 'duo',
      // Seat 1 hears nothing after the keys: it never shuffles, and the dealer's record does not reach it.
      intercept: (from, to, doc) => away && ((to === ids[1] && doc.type !== 'commit') || (from === ids[1] && doc.type === 'bshuffle')) ? undefined : doc
    })
    const hand = t.deal()
    t.tick(21_000)
    const record = t.dealerNode.log.find(l => l.entry === 'abort')?.payload
    expect(record.body).toMatchObject({ reason: 'missing-shuffle' })
    away = false
    t.tick(40_000)
    const seat1 = t.nodes.get(ids[1])!
    expect(seat1.log.map(l => l.entry)).toEqual(['abort'])
    expect(canonicalJson(seat1.log[0].payload)).toBe(canonicalJson(record))
    expect(seat1.seat!.status()).toEqual([])
    expect(hand).toBe(1)
  }, 60_000)
})
