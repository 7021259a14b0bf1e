// The abort-record rules (docs/protocol.md §10, src/core/hand/abort-rules.ts), in memory: honest
// records of every reason, produced by the machines, verify; for each rule, a record that breaks it
// and only it, re-signed by its author's key (so its signatures are all good), fails with the
// rule's code.
import { describe, expect, test } from 'vitest'
import { memoryTable, type MemoryTable } from './helpers/memory-table.js'
import { checkAbortRecord } from '../src/core/hand/abort-rules.js'
import { rulesFamilyOf } from '../src/core/hand/family-of.js'
import { BLIND_V1 } from '../src/core/schemes/blind.js'
import { Reason, type ReasonCode } from '../src/core/hand/reasons.js'
import { docDigest } from '../src/core/hand/digest.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import { localBeaconSecretKey, localChainInfo, parseChainInfo } from '../src/core/beacon/index.js'
import type { AbortBody, CommitBody, PledgeBody, PledgesBody, Receipt, SignedAbort } from '../src/core/hand/messages.js'
import type { Signer } from '../src/core/identity.js'

const beaconKey = localBeaconSecretKey(new Uint8Array(48).fill(9))
const chain = parseChainInfo(localChainInfo({ secretKey: beaconKey, period: 3, genesisTime: 1_690_000_000 }))

/** The abort records a node logged, once each (the dealer node's seat machine logs the dealer's too). */
function aborts (t: MemoryTable, peer: string): SignedAbort[] {
  const all = (t.appended.get(peer) ?? []).filter(e => e.entry === 'abort').map(e => e.payload as SignedAbort)
  return all.filter((r, i) => all.findIndex(o => docDigest(o) === docDigest(r)) === i)
}
const signerOf = (t: MemoryTable, peer: string): Signer => t.signers.find(s => s.peerId === peer) as Signer
/** The record with its body changed, signed again by its author: only the rules can catch it. */
function resign (t: MemoryTable, record: SignedAbort, change: (body: AbortBody) => void): SignedAbort {
  const body = structuredClone(record.body)
  change(body)
  return signDocument('abort', body, signerOf(t, record.signer))
}
function codes (record: unknown): ReasonCode[] {
  return checkAbortRecord(record).problems.map(p => p.code)
}
function expectValid (record: unknown): void {
  expect(checkAbortRecord(record).problems).toEqual([])
}
const peer = (t: MemoryTable, seat: number): string => t.signers[seat].peerId

/**
 * Moves the clock on by `ms` and lets seat `seat` time out: it asks the dealer once (the answer may
 * have been lost), and when nothing comes of it, signs its record, returned here.
 */
function seatGivesUp (t: MemoryTable, seat: number, ms: number): SignedAbort {
  const id = peer(t, seat)
  const machine = t.seats.get(id) as NonNullable<ReturnType<MemoryTable['seats']['get']>>
  t.clock.now += ms
  t.run(id, machine.tick(t.clock.now))
  t.clock.now += 6_000
  t.run(id, machine.tick(t.clock.now))
  return aborts(t, id)[0]
}

function start (t: MemoryTable): number {
  const { hand, effects } = t.dealer.startHand({ dealer: 0 })
  t.run(t.table.dealer, effects)
  return hand
}

/** The dealer's record when `seat` never sends its `type` (pledge: missing-pledge; nonce: missing-nonce). */
function withheld (seat: number, type: 'pledge' | 'nonce'): { t: MemoryTable, record: SignedAbort } {
  const t = memoryTable()
  t.intercept = (from, _to, doc) => (from === peer(t, seat) && doc.type === type ? undefined : doc)
  start(t)
  t.clock.now += 6_000
  t.run(t.table.dealer, t.dealer.tick(t.clock.now))
  return { t, record: aborts(t, t.table.dealer)[0] }
}
const missingPledge = (): { t: MemoryTable, record: SignedAbort } => withheld(2, 'pledge')
const missingNonce = (): { t: MemoryTable, record: SignedAbort } => withheld(3, 'nonce')

function beaconUnavailable (): { t: MemoryTable, record: SignedAbort, hand: number } {
  const t = memoryTable({ scheme: 'atout-drand-v1', beacon: { chain, marginMs: 1_000 } })
  const hand = start(t)
  t.run(t.table.dealer, t.dealer.beaconResult(hand, { error: 'relays down' }))
  return { t, record: aborts(t, t.table.dealer)[0], hand }
}

describe('honest records of every reason verify', () => {
  test('the dealer\'s: missing-pledge, missing-nonce, beacon-unavailable, dealer-stopped', () => {
    const mp = missingPledge()
    expect(mp.record.body.reason).toBe('missing-pledge')
    expectValid(mp.record)
    const mn = missingNonce()
    expect(mn.record.body.reason).toBe('missing-nonce')
    expectValid(mn.record)
    const bu = beaconUnavailable()
    expect(bu.record.body.reason).toBe('beacon-unavailable')
    expectValid(bu.record)
    const t = memoryTable()
    t.intercept = (from, _to, doc) => (from === peer(t, 1) && doc.type === 'nonce' ? undefined : doc)
    const hand = start(t)
    t.run(t.table.dealer, t.dealer.abortHand(hand, 'the dealer node is stopping'))
    const stopped = aborts(t, t.table.dealer)[0]
    expect(stopped.body).toMatchObject({ reason: 'dealer-stopped', blame: [t.table.dealer] })
    expectValid(stopped)
    // Every seat took the dealer's record: it verified there too.
    for (const p of t.seats.keys()) if (p !== t.table.dealer) expect(aborts(t, p)).toHaveLength(1)
  })

  test('a seat\'s missing-deal, before and after the PLEDGES, carries what it held', () => {
    for (const drop of ['pledges', 'cards']) {
      const t = memoryTable()
      t.intercept = (from, _to, doc) => (from === t.table.dealer && doc.type === drop ? undefined : doc)
      start(t)
      const record = seatGivesUp(t, 1, 60_000)
      expect(record.body.reason).toBe('missing-deal')
      expect(record.body.evidence.map(e => e.type)).toEqual(drop === 'pledges' ? ['pledge'] : ['pledges', 'nonce'])
      expectValid(record)
    }
  })

  test('a seat\'s missing-reveal carries the PLEDGES, its NONCE and its CARDS', () => {
    const t = memoryTable()
    start(t)
    const record = seatGivesUp(t, 2, 70_000)
    expect(record.body.reason).toBe('missing-reveal')
    expect(record.body.evidence.map(e => e.type)).toEqual(['pledges', 'nonce', 'cards'])
    expectValid(record)
    // The dealer, the cards being out, logs it as the seat's claim: it verified there too.
    expect(aborts(t, t.table.dealer)).toHaveLength(1)
  })
})

describe('equivocation needs two conflicting documents signed by the dealer', () => {
  test('a PLEDGES relaying a pledge to another COMMIT: the honest seat\'s record verifies, with the PLEDGES as evidence', () => {
    const t = memoryTable()
    const dealer = signerOf(t, t.table.dealer)
    t.intercept = (from, to, doc) => {
      if (doc.type !== 'pledges' || to !== peer(t, 1)) return doc
      const body = structuredClone(doc.body) as PledgesBody
      // Seat 3 was shown another COMMIT: its real pledge names that one.
      body.pledges[3] = signDocument('pledge', { ...body.pledges[3].body, commit: 'e'.repeat(64) }, t.signers[3]) as PledgesBody['pledges'][number]
      return signDocument('pledges', body, dealer)
    }
    start(t)
    const record = aborts(t, peer(t, 1))[0]
    expect(record.body).toMatchObject({ reason: 'equivocation', blame: [t.table.dealer] })
    expect(record.body.evidence.map(e => e.type)).toEqual(['pledges'])
    expectValid(record)
  })

  test('two COMMITs, or two PLEDGES for one COMMIT, signed by the dealer, verify', () => {
    const { t, record } = missingNonce()
    const dealer = signerOf(t, t.table.dealer)
    const commit = record.body.commit as Signed<CommitBody>
    const other = signDocument('commit', { ...commit.body, deadline: commit.body.deadline + 1 }, dealer)
    const seat1 = signerOf(t, peer(t, 1))
    const make = (evidence: Array<Signed<unknown>>): SignedAbort => signDocument('abort', {
      table: commit.body.table, hand: commit.body.hand, reason: 'equivocation', blame: [t.table.dealer], commit, evidence: evidence as AbortBody['evidence'], detail: 'two deals'
    }, seat1)
    expectValid(make([other]))
    const pledges = record.body.evidence.filter(e => e.type === 'pledge') as Array<Signed<PledgeBody>>
    pledges.sort((a, b) => a.body.seat - b.body.seat)
    const digest = docDigest(commit)
    const a = signDocument('pledges', { table: commit.body.table, hand: commit.body.hand, commit: digest, pledges }, dealer)
    const altered = [...pledges]
    altered[3] = signDocument('pledge', { ...pledges[3].body, nonceHash: 'a'.repeat(64) }, t.signers[3])
    const b = signDocument('pledges', { table: commit.body.table, hand: commit.body.hand, commit: digest, pledges: altered }, dealer)
    expectValid(make([a, b]))
    // One PLEDGES alone is no conflict.
    expect(codes(make([a]))).toContain(Reason.ABORT_NO_CONFLICT)
    // A second COMMIT for another hand proves nothing about this one.
    const elsewhere = signDocument('commit', { ...commit.body, hand: commit.body.hand + 1 }, dealer)
    expect(codes(make([elsewhere]))).toEqual([Reason.ABORT_FOREIGN_EVIDENCE, Reason.ABORT_NO_CONFLICT])
  })

  test('fabricated: a seat\'s own pledge naming a made-up COMMIT is no evidence', () => {
    const { t, record } = missingNonce()
    const commit = record.body.commit as Signed<CommitBody>
    const seat1 = signerOf(t, peer(t, 1))
    const own = signDocument('pledge', { table: commit.body.table, hand: commit.body.hand, commit: 'f'.repeat(64), seat: 1, nonceHash: 'b'.repeat(64) }, seat1)
    const fake = signDocument('abort', {
      table: commit.body.table, hand: commit.body.hand, reason: 'equivocation', blame: [t.table.dealer], commit, evidence: [own] as AbortBody['evidence'], detail: 'made up'
    }, seat1)
    expect(codes(fake)).toEqual([Reason.ABORT_NO_CONFLICT])
  })
})

describe('each rule, broken alone, fails with its code', () => {
  test('blame: missing-pledge blaming a seat whose pledge it holds; missing-nonce likewise; beacon-unavailable blaming anyone', () => {
    const mp = missingPledge()
    expect(codes(resign(mp.t, mp.record, b => { b.blame = [peer(mp.t, 1)] }))).toContain(Reason.ABORT_BLAME)
    expect(codes(resign(mp.t, mp.record, b => { b.blame = [peer(mp.t, 2), peer(mp.t, 3)] }))).toEqual([Reason.ABORT_BLAME])
    const mn = missingNonce()
    // 13 in a row were accepted: a dealer blaming a seat whose nonce it received.
    expect(codes(resign(mn.t, mn.record, b => { b.blame = [peer(mn.t, 1)] }))).toContain(Reason.ABORT_BLAME)
    // …or one whose nonce it simply leaves out of the evidence: every pledge is there, so its nonce was due, and the
    // seat can show it sent it (seat-to-seat); the record itself must at least name every absent nonce.
    expect(codes(resign(mn.t, mn.record, b => { b.blame = [] }))).toEqual([Reason.ABORT_BLAME])
    const bu = beaconUnavailable()
    expect(codes(resign(bu.t, bu.record, b => { b.blame = [peer(bu.t, 2)] }))).toEqual([Reason.ABORT_BLAME])
  })

  test('signer: a seat cannot sign the dealer\'s reasons, nor the dealer a seat\'s', () => {
    const mp = missingPledge()
    const bySeat = signDocument('abort', mp.record.body, mp.t.signers[1])
    expect(codes(bySeat)).toEqual([Reason.ABORT_SIGNER])
    const t = memoryTable({ dealerSeat: false })
    t.intercept = (from, _to, doc) => (from === t.table.dealer && doc.type === 'pledges' ? undefined : doc)
    start(t)
    const record = seatGivesUp(t, 1, 60_000)
    expectValid(record)
    expect(codes(signDocument('abort', record.body, signerOf(t, t.table.dealer)))).toContain(Reason.ABORT_SIGNER)
  })

  test('evidence from another hand, or another COMMIT, is refused', () => {
    const t = memoryTable({ scheme: 'atout-drand-v1', beacon: { chain, marginMs: 1_000 } })
    const h1 = start(t)
    t.run(t.table.dealer, t.dealer.beaconResult(h1, { error: 'relays down' }))
    const h2 = start(t)
    t.run(t.table.dealer, t.dealer.beaconResult(h2, { error: 'relays down' }))
    const [r1, r2] = aborts(t, t.table.dealer)
    expectValid(r1)
    expectValid(r2)
    // Hand 1's record with a pledge of hand 2 in place of seat 1's own.
    const foreign = resign(t, r1, b => {
      const i = b.evidence.findIndex(e => e.type === 'pledge' && (e.body as PledgeBody).seat === 1)
      b.evidence[i] = r2.body.evidence.find(e => e.type === 'pledge' && (e.body as PledgeBody).seat === 1) as AbortBody['evidence'][number]
    })
    expect(codes(foreign)).toContain(Reason.ABORT_FOREIGN_EVIDENCE)
    // A pledge of this hand re-signed by its seat for another COMMIT digest.
    const otherCommit = resign(t, r1, b => {
      const i = b.evidence.findIndex(e => e.type === 'pledge' && (e.body as PledgeBody).seat === 2)
      b.evidence[i] = signDocument('pledge', { ...(b.evidence[i].body as PledgeBody), commit: 'c'.repeat(64) }, t.signers[2]) as AbortBody['evidence'][number]
    })
    expect(codes(otherCommit)).toContain(Reason.ABORT_FOREIGN_EVIDENCE)
  })

  test('absence: a claim carries what its author held', () => {
    const t = memoryTable()
    t.intercept = (from, _to, doc) => (from === t.table.dealer && doc.type === 'cards' ? undefined : doc)
    start(t)
    const record = seatGivesUp(t, 1, 60_000)
    // The missing-deal record that drops the dealer-signed documents it held.
    expect(codes(resign(t, record, b => { b.evidence = [] }))).toEqual([Reason.ABORT_EVIDENCE])
    expect(codes(resign(t, record, b => { b.evidence = b.evidence.filter(e => e.type !== 'nonce') }))).toEqual([Reason.ABORT_EVIDENCE])
    // A nonce of another seat is never something a seat holds.
    const toDealer = (t.frames.get(t.table.dealer) ?? []).map(f => JSON.parse(new TextDecoder().decode(f)) as Signed<{ seat?: number }>)
    const otherNonce = toDealer.find(d => d.type === 'nonce' && d.body.seat === 2) as AbortBody['evidence'][number]
    expect(codes(resign(t, record, b => { b.evidence.push(otherNonce) }))).toEqual([Reason.ABORT_EVIDENCE])
    const mn = missingNonce()
    // missing-nonce without every pledge.
    expect(codes(resign(mn.t, mn.record, b => { b.evidence = b.evidence.filter(e => !(e.type === 'pledge' && (e.body as PledgeBody).seat === 0)) }))).toContain(Reason.ABORT_EVIDENCE)
  })

  test('commit: null is refused for every reason', () => {
    const mp = missingPledge()
    expect(codes(resign(mp.t, mp.record, b => { b.commit = null }))).toEqual([Reason.ABORT_NO_COMMIT])
    const t = memoryTable()
    t.intercept = (from, _to, doc) => (from === t.table.dealer && doc.type === 'pledges' ? undefined : doc)
    start(t)
    expect(codes(resign(t, seatGivesUp(t, 1, 60_000), b => { b.commit = null }))).toEqual([Reason.ABORT_NO_COMMIT])
  })

  test('dealer-stopped: the published secret must open the commitment', () => {
    const t = memoryTable()
    t.intercept = (from, _to, doc) => (from === peer(t, 2) && doc.type === 'nonce' ? undefined : doc)
    const h2 = start(t)
    t.run(t.table.dealer, t.dealer.abortHand(h2, 'stopping'))
    const record = aborts(t, t.table.dealer)[0]
    expectValid(record)
    expect(codes(resign(t, record, b => { b.secret = '0'.repeat(64) }))).toEqual([Reason.ABORT_SECRET])
    expect(codes(resign(t, record, b => { delete b.secret }))).toEqual([Reason.ABORT_SECRET])
  })

  test('invalid-reveal: a record whose REVEAL passes the shield is refuted', () => {
    const t = memoryTable()
    const hand = start(t)
    t.run(t.table.dealer, t.dealer.end(hand))
    const receipt = (t.appended.get(t.table.dealer) ?? []).find(e => e.entry === 'receipt')?.payload as Receipt
    const seat2 = signerOf(t, peer(t, 2))
    const frames = (t.frames.get(peer(t, 2)) ?? []).map(f => JSON.parse(new TextDecoder().decode(f)) as Signed<unknown>)
    const pledges = frames.find(d => d.type === 'pledges') as Signed<unknown>
    const cards = frames.filter(d => d.type === 'cards')
    const lie = signDocument('abort', {
      table: t.table.id, hand, reason: 'invalid-reveal', blame: [t.table.dealer], commit: receipt.commit, evidence: [receipt.reveal, pledges, ...cards] as AbortBody['evidence'], detail: 'it lies'
    }, seat2)
    expect(codes(lie)).toEqual([Reason.ABORT_REFUTED])
  })
})

describe('time-locked hands (docs/protocol.md §16.4)', () => {
  test('the dealer\'s missing-nonce or missing-view on a time-locked hand fails with abort-timelocked, and only with it', async () => {
    const { timelockedHand, DEALER, SEAT1, SEAT2 } = await import('./helpers/timelock-hand.js')
    const h = await timelockedHand()
    const digest = docDigest(h.commit)
    const pledgesDoc = signDocument('pledges', { table: 'tl-test', hand: 1, commit: digest, pledges: h.pledges }, DEALER)
    const view = (seat: number, signer: Signer): Signed<unknown> => signDocument('view', {
      table: 'tl-test', hand: 1, commit: digest, seat, pledges: docDigest(pledgesDoc), commitDoc: h.commit, pledgesDoc, again: false
    }, signer)
    const nonce = signDocument('abort', {
      table: 'tl-test', hand: 1, reason: 'missing-nonce', blame: [SEAT2.peerId], commit: h.commit,
      evidence: [...h.pledges, ...h.nonces.filter(n => n.body.seat !== 3), view(0, DEALER), view(1, SEAT1)] as AbortBody['evidence'], detail: 'no nonce'
    }, DEALER)
    expect(codes(nonce)).toEqual([Reason.ABORT_TIMELOCKED])
    const viewRecord = signDocument('abort', {
      table: 'tl-test', hand: 1, reason: 'missing-view', blame: [SEAT2.peerId], commit: h.commit,
      evidence: [...h.pledges, view(0, DEALER), view(1, SEAT1)] as AbortBody['evidence'], detail: 'no view'
    }, DEALER)
    expect(codes(viewRecord)).toEqual([Reason.ABORT_TIMELOCKED])
  })
})

describe('invalid-reveal: own private cards per stage (docs/protocol.md §8)', () => {
  test('a belote seat that never received its take cards records invalid-reveal and is not refuted', () => {
    const t = memoryTable({ game: 'belote' })
    const hand = start(t)
    t.run(t.table.dealer, t.dealer.deliverStage(hand, 'take', 2))
    t.run(t.table.dealer, t.dealer.end(hand))
    const receipt = (t.appended.get(t.table.dealer) ?? []).find(e => e.entry === 'receipt')?.payload as Receipt
    expect(receipt.reveal.body.stages).toContain('take')
    const seat1 = signerOf(t, peer(t, 1))
    const frames = (t.frames.get(peer(t, 1)) ?? []).map(f => JSON.parse(new TextDecoder().decode(f)) as Signed<any>)
    const pledges = frames.find(d => d.type === 'pledges') as Signed<unknown>
    const cards = frames.filter(d => d.type === 'cards')
    const record = (shown: Array<Signed<any>>): SignedAbort => signDocument('abort', {
      table: t.table.id, hand, reason: 'invalid-reveal', blame: [t.table.dealer], commit: receipt.commit, evidence: [receipt.reveal, pledges, ...shown] as AbortBody['evidence'], detail: 'no take cards'
    }, seat1)
    expect(codes(record(cards))).toEqual([Reason.ABORT_REFUTED])
    const withoutTake = cards.filter(c => !(c.body.stage === 'take' && c.body.seat === 1))
    expect(withoutTake.length).toBeLessThan(cards.length)
    expectValid(record(withoutTake))
  })
})

describe('the family whose rules check a document is picked in one place (src/core/hand/family-of.ts)', () => {
  test('a receipt by its v, a COMMIT by its scheme; one naming no known family goes to commit-reveal', () => {
    expect(rulesFamilyOf({ receipt: { v: 1 } })).toBe('commit-reveal')
    expect(rulesFamilyOf({ receipt: { v: 2 } })).toBe('blind')
    expect(rulesFamilyOf({ receipt: { v: 7 } })).toBe('commit-reveal')
    expect(rulesFamilyOf({ receipt: null })).toBe('commit-reveal')
    expect(rulesFamilyOf({ commit: { scheme: BLIND_V1 } })).toBe('blind')
    expect(rulesFamilyOf({ commit: { scheme: 'tarot-v1' } })).toBe('commit-reveal')
    expect(rulesFamilyOf({ commit: { scheme: 'no-such-scheme' } })).toBe('commit-reveal')
  })
})
