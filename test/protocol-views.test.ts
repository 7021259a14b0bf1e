// Seats check each other, peer to peer (issue 8; docs/protocol.md §6 step 4): before its NONCE
// leaves, each human seat's VIEW (the dealer-signed COMMIT and PLEDGES it received) reaches every
// other human seat, and a seat sends its NONCE only when every view matches its own. In memory,
// real wire encoding.
import { describe, expect, test } from 'vitest'
import { memoryTable, type MemoryTable } from './helpers/memory-table.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { verifyAbort } from '../src/core/hand/abort-rules.js'
import { sha256Hex, toHex } from '../src/core/bytes.js'
import { docDigest } from '../src/core/hand/digest.js'
import { signDocument, verifyDocument, type Signed } from '../src/core/signed.js'
import { receiptSchema, type PledgeBody, type PledgesBody, type Receipt, type SignedAbort, type SignedCommit, type SignedReveal } from '../src/core/hand/messages.js'
import type { ViewWireBody } from '../src/core/hand/view-messages.js'
import { wholeFinal, wholeView } from '../src/protocol/compact-docs.js'
import { decodeFrame, type FinalWireBody } from '../src/protocol/wire.js'
import { wasChecked } from '../src/core/frozen.js'
import { randomBytes } from 'node:crypto'
import { checkAbortRecord } from '../src/core/hand/abort-rules.js'
import { Reason } from '../src/core/hand/reasons.js'
import { verifyAsLog } from './helpers/verify-as-log.js'

/** The distinct abort records a peer logged for `hand` (the dealer node's seat and dealer log the same one). */
const recordsOf = (t: MemoryTable, peer: string, hand: number): SignedAbort[] => {
  const all = (t.appended.get(peer) ?? []).filter(e => e.hand === hand && e.entry === 'abort').map(e => e.payload as SignedAbort)
  return all.filter((r, i) => all.findIndex(o => docDigest(o) === docDigest(r)) === i)
}
/** Starts a hand, lets the dealer's contribution deadline (5 s) pass, and returns the hand and the dealer's record. */
function pastDeadline (t: MemoryTable): { hand: number, record: SignedAbort } {
  const { hand, effects } = t.dealer.startHand({ dealer: 0 })
  t.run(t.table.dealer, effects)
  t.clock.now += 5_001
  t.run(t.table.dealer, t.dealer.tick(t.clock.now))
  return { hand, record: recordsOf(t, t.table.dealer, hand)[0] }
}
const seatsOf = (t: MemoryTable, record: SignedAbort, type: string): number[] =>
  record.body.evidence.filter(e => e.type === type).map(e => t.signers.findIndex(s => s.peerId === e.signer))

const peerOf = (t: MemoryTable, seat: number): string => t.signers[seat].peerId
const docsTo = (t: MemoryTable, to: string, type: string): Array<Signed<unknown>> =>
  (t.frames.get(to) ?? []).map(f => JSON.parse(new TextDecoder().decode(f)) as Signed<unknown>).filter(d => d.type === type)

/**
 * The VIEWs delivered to `to`, whole: a VIEW goes without the COMMIT and PLEDGES its recipient holds
 * (docs/protocol.md §3), which are put back from those delivered to `to`, as its seat does.
 */
const viewsTo = (t: MemoryTable, to: string): Array<Signed<unknown>> => {
  const commits = docsTo(t, to, 'commit') as SignedCommit[]
  const pledges = docsTo(t, to, 'pledges') as Array<Signed<PledgesBody>>
  return docsTo(t, to, 'view').map(v => {
    const body = v.body as ViewWireBody
    const commit = commits.find(c => docDigest(c) === body.commit)
    if (commit === undefined) return v
    return wholeView(v as Signed<ViewWireBody>, { commit, commitDigest: body.commit, pledgesDoc: pledges.find(p => docDigest(p) === body.pledges) }) ?? v
  })
}

function expectFullReceipts (t: MemoryTable, hand: number): void {
  const receipt = (t.appended.get(t.table.dealer) ?? []).find(e => e.hand === hand && e.entry === 'receipt')?.payload as Receipt
  expect(verifyReceipt(receipt).summary?.acked).toEqual([0, 1, 2, 3])
  for (let s = 1; s < 4; s++) expect((t.appended.get(peerOf(t, s)) ?? []).find(e => e.hand === hand)?.payload, `seat ${s}`).toEqual(receipt)
}

function twoPledges (t: MemoryTable): { first?: Signed<PledgesBody>, second?: Signed<PledgesBody> } {
  const out: { first?: Signed<PledgesBody>, second?: Signed<PledgesBody> } = {}
  const colluder = t.signers[1]
  t.intercept = (from, to, doc) => {
    if (doc.type !== 'pledges') return doc
    const body = doc.body as PledgesBody
    out.first = doc as Signed<PledgesBody>
    if (to !== peerOf(t, 2) && to !== peerOf(t, 3)) return doc
    if (out.second === undefined) {
      const other = signDocument('pledge', { ...(body.pledges[1].body as PledgeBody), nonceHash: sha256Hex(toHex(randomBytes(32))) }, colluder)
      out.second = signDocument('pledges', { ...body, pledges: body.pledges.map(p => p.body.seat === 1 ? other : p) }, t.signers[0])
    }
    return out.second
  }
  return out
}

describe('views', () => {
  test('an honest hand: every seat sends its view to the other three, and its NONCE to the dealer and to them', () => {
    const t = memoryTable()
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    for (let s = 1; s < 4; s++) {
      expect(docsTo(t, peerOf(t, s), 'view').map(v => (v.body as { seat: number }).seat).sort(), `views to seat ${s}`).toEqual([0, 1, 2, 3].filter(x => x !== s))
    }
    // The dealer's node (seat 0) gets every view: its seat compares the other three, its dealer keeps all four.
    expect(docsTo(t, t.table.dealer, 'view').map(v => (v.body as { seat: number }).seat).sort()).toEqual([0, 1, 2, 3])
    // Seats 1-3 each get the three other seats' nonces (seat 0's node is the dealer's: it gets them as the dealer).
    for (let s = 1; s < 4; s++) expect(docsTo(t, peerOf(t, s), 'nonce')).toHaveLength(3)
    t.run(t.table.dealer, t.dealer.end(hand))
    expect(t.rejections).toEqual([])
    expectFullReceipts(t, hand)
  })

  test('two seats that cannot reach each other exchange their views through the dealer', () => {
    const t = memoryTable()
    const [a, b] = [peerOf(t, 1), peerOf(t, 2)]
    t.unreachable = (from, to) => (from === a && to === b) || (from === b && to === a)
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    expect(docsTo(t, t.table.dealer, 'relay')).toHaveLength(2)
    t.run(t.table.dealer, t.dealer.end(hand))
    expect(t.rejections).toEqual([])
    expectFullReceipts(t, hand)
  })

  test('a seat restarted while comparing views sends its own again and gets theirs back', () => {
    const t = memoryTable()
    const late = peerOf(t, 3)
    // Seat 2's view never reaches seat 3 (lost), and seat 3 restarts before anything else.
    let lost = true
    t.intercept = (from, to, doc) => (lost && from === peerOf(t, 2) && to === late && doc.type === 'view' ? undefined : doc)
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    expect(t.seats.get(late)?.status()).toEqual([{ hand, phase: 'viewing' }])
    lost = false
    t.run(late, t.restartSeat(late))
    expect(t.seats.get(late)?.status()).toEqual([{ hand, phase: 'dealt' }])
    t.run(t.table.dealer, t.dealer.end(hand))
    expectFullReceipts(t, hand)
  })
})

describe('two deals for one hand are caught before any nonce leaves', () => {
  /**
   * A dealer colluding with seat 1: seat 1 signs a second pledge (another nonce hash) and the dealer
   * shows seats 2 and 3 a PLEDGES document holding it, seats 0 and 1 the first one: one COMMIT,
   * two PLEDGES, and each seat's own checks pass.
   */
  test('one COMMIT, two PLEDGES: no nonce is sent, and each honest seat records equivocation holding both documents', () => {
    const t = memoryTable()
    const docs = twoPledges(t)
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    expect(docs.first).toBeDefined()
    expect(docDigest(docs.first)).not.toBe(docDigest(docs.second))
    // No NONCE went anywhere: not to the dealer, not to any seat.
    for (const peer of [t.table.dealer, ...t.seats.keys()]) expect(docsTo(t, peer, 'nonce'), peer).toEqual([])
    for (const s of [0, 2, 3]) {
      const record = (t.appended.get(peerOf(t, s)) ?? []).find(e => e.hand === hand && e.entry === 'abort' && (e.payload as SignedAbort).signer === peerOf(t, s))?.payload as SignedAbort
      expect(record?.body, `seat ${s}`).toMatchObject({ reason: 'equivocation', blame: [t.table.dealer] })
      expect(record.body.evidence.map(e => docDigest(e)).sort()).toEqual([docDigest(docs.first), docDigest(docs.second)].sort())
      for (const e of record.body.evidence) expect(e.signer).toBe(t.table.dealer)
      expect(verifyAbort(record).problems, `seat ${s}`).toEqual([])
    }
  })

  test('a view whose documents are not the dealer\'s is refused and changes nothing (no seat can fake an equivocation)', () => {
    const t = memoryTable()
    let forged: Signed<unknown> | undefined
    const faker = t.signers[3]
    t.intercept = (from, to, doc) => {
      if (doc.type !== 'view' || from !== faker.peerId || to !== peerOf(t, 1)) return doc
      // Seat 3 re-signs its view with a PLEDGES document it signed itself (its VIEW goes without the
      // dealer's, docs/protocol.md §3: the one it was sent is its model).
      const held = docsTo(t, faker.peerId, 'pledges')[0] as Signed<PledgesBody>
      const pledgesDoc = signDocument('pledges', { ...held.body, pledges: held.body.pledges.slice(0, 3) }, faker)
      forged = signDocument('view', { ...(doc.body as object), pledgesDoc, pledges: docDigest(pledgesDoc) }, faker)
      return forged
    }
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    expect(forged).toBeDefined()
    expect(t.rejections).toEqual([{ to: peerOf(t, 1), reason: 'view of seat 3: its documents are not signed by the dealer' }])
    expect(t.seats.get(peerOf(t, 1))?.status()).toEqual([{ hand, phase: 'viewing' }])
    expect((t.appended.get(peerOf(t, 1)) ?? [])).toEqual([])
  })
})

describe('a missing VIEW is blamed on its seat alone (docs/protocol.md §7, §10)', () => {
  const CONTRIBUTE_MS = 5_000

  test('seat 3 withholds its VIEW: the dealer\'s missing-view names seat 3 only, with the other views as evidence, and every seat logs it', () => {
    const t = memoryTable()
    const rogue = peerOf(t, 3)
    t.intercept = (from, _to, doc) => (from === rogue && doc.type === 'view' ? undefined : doc)
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    // Seats 0-2 wait for seat 3's VIEW; seat 3 has theirs, so its NONCE is out.
    for (let s = 0; s < 3; s++) expect(t.seats.get(peerOf(t, s))?.status(), `seat ${s}`).toEqual([{ hand, phase: 'viewing' }])
    t.clock.now += CONTRIBUTE_MS + 1
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    const [record] = recordsOf(t, t.table.dealer, hand)
    expect(record.body).toMatchObject({ reason: 'missing-view', blame: [rogue] })
    expect(seatsOf(t, record, 'view')).toEqual([0, 1, 2])
    expect(checkAbortRecord(record, { table: t.table }).problems).toEqual([])
    // Every seat, the one blamed included, logged that one record and nothing else.
    for (let s = 0; s < 4; s++) expect(recordsOf(t, peerOf(t, s), hand).map(r => docDigest(r)), `seat ${s}`).toEqual([docDigest(record)])
    for (const s of t.seats.values()) expect(s.status()).toEqual([])
  })

  test('VIEWs that reach a seat before its own PLEDGES are kept however many hands are committed meanwhile (many hands in flight)', () => {
    const t = memoryTable()
    const slow = peerOf(t, 3)
    // Seat 3's PLEDGES come after the other seats' VIEWs, each hand (the seats answer the dealer
    // faster than seat 3 hears it): hand 1's are held up on the way while six more hands are
    // committed and dealt, each hand's VIEWs reaching seat 3 before its PLEDGES.
    const held = new Map<number, Signed<unknown>>()
    t.intercept = (_from, to, doc) => {
      const hand = (doc.body as { hand: number }).hand
      if (to === slow && doc.type === 'pledges' && !held.has(hand)) { held.set(hand, doc); return undefined }
      return doc
    }
    const first = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, first.effects)
    expect(t.seats.get(slow)?.status()).toEqual([{ hand: first.hand, phase: 'pledged' }])
    for (let i = 0; i < 6; i++) {
      const { hand, effects } = t.dealer.startHand({ dealer: 0 })
      t.run(t.table.dealer, effects)
      t.run(t.table.dealer, [{ kind: 'send', to: slow, doc: held.get(hand) as Signed<unknown> }])
      expect(t.seats.get(slow)?.status().find(h => h.hand === hand)?.phase, `hand ${hand}`).toBe('dealt')
    }
    // Hand 1's PLEDGES come at last, before anything is passed on (no clock has moved): seat 3
    // compares the VIEWs it kept, sends its own VIEW and its NONCE, and hand 1 is dealt.
    t.run(t.table.dealer, [{ kind: 'send', to: slow, doc: held.get(first.hand) as Signed<unknown> }])
    expect(t.seats.get(slow)?.status().find(h => h.hand === first.hand)?.phase).toBe('dealt')
    t.run(t.table.dealer, t.dealer.end(first.hand))
    expect(t.rejections).toEqual([])
    expectFullReceipts(t, first.hand)
  })

  test('a VIEW sent to the dealer alone is passed on halfway to the deadline, and the hand is dealt', () => {
    const t = memoryTable()
    const rogue = peerOf(t, 3)
    t.intercept = (from, to, doc) => (from === rogue && doc.type === 'view' && to !== t.table.dealer ? undefined : doc)
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    expect(t.seats.get(peerOf(t, 1))?.status()).toEqual([{ hand, phase: 'viewing' }])
    // Nothing is passed on before the forwarding time…
    t.clock.now += CONTRIBUTE_MS / 2 - 1
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    expect(docsTo(t, peerOf(t, 1), 'view').filter(v => v.signer === rogue)).toEqual([])
    // …then seat 3's VIEW goes to seats 1 and 2 (they still owe their nonce), once each.
    t.clock.now += 1
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    for (const s of [1, 2]) expect(docsTo(t, peerOf(t, s), 'view').filter(v => v.signer === rogue), `seat ${s}`).toHaveLength(1)
    t.run(t.table.dealer, t.dealer.end(hand))
    expect(t.rejections).toEqual([])
    expectFullReceipts(t, hand)
  })

  test('passed-on VIEWs that cannot be delivered are sent again; still undelivered at the deadline, the waiting seat is not blamed (unreachable)', () => {
    const t = memoryTable({ dealerSeat: false })
    const rogue = peerOf(t, 3)
    const cut = peerOf(t, 2)
    const failed: Array<Signed<unknown>> = []
    // Seat 3's VIEW reaches the dealer only; nothing the dealer passes on reaches seat 2 (its host reports each failure).
    t.intercept = (from, to, doc) => {
      if (from === rogue && doc.type === 'view' && to !== t.table.dealer) return undefined
      if (from === t.table.dealer && to === cut && doc.type === 'view') { failed.push(doc); return undefined }
      return doc
    }
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    t.clock.now += CONTRIBUTE_MS / 2
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    // Every VIEW the dealer holds but seat 2's own goes to seat 2 (it cannot tell which ones seat 2 lacks).
    expect(failed.map(v => (v.body as { seat: number }).seat).sort()).toEqual([0, 1, 3])
    for (const v of failed) t.dealer.delivery(cut, v, { ok: false, reason: 'connect ECONNREFUSED 127.0.0.1:7402' })
    // Seat 1 got seat 3's and went on; seat 2 is sent all three again a second later.
    expect(t.seats.get(peerOf(t, 1))?.status()).toEqual([{ hand, phase: 'contributed' }])
    t.clock.now += 1_001
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    expect(failed).toHaveLength(6)
    t.clock.now += CONTRIBUTE_MS
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    const [record] = recordsOf(t, t.table.dealer, hand)
    expect(record.body).toMatchObject({ reason: 'unreachable', blame: [] })
    expect(record.body.detail).toContain('seat 2 (connect ECONNREFUSED 127.0.0.1:7402)')
    expect(checkAbortRecord(record).problems).toEqual([])
  })

  test('the dealer\'s record lost too: each waiting seat records missing-view naming seat 3 only, with the PLEDGES and the views it held', () => {
    const t = memoryTable()
    const rogue = peerOf(t, 3)
    // Seat 3 withholds its VIEW; nothing the dealer's node says about the hand's end reaches seats 1 and 2.
    t.intercept = (from, to, doc) => (from === rogue && doc.type === 'view') || (from === t.table.dealer && to !== t.table.dealer && doc.type === 'abort') ? undefined : doc
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    t.clock.now += CONTRIBUTE_MS + 1
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    const dealerRecord = recordsOf(t, t.table.dealer, hand)[0]
    // Past the seats' own deadline: each asks the dealer once (the answer is lost), then records.
    t.clock.now += 2 * CONTRIBUTE_MS
    for (const s of [1, 2]) t.run(peerOf(t, s), (t.seats.get(peerOf(t, s)) as NonNullable<ReturnType<MemoryTable['seats']['get']>>).tick(t.clock.now))
    t.clock.now += 6_000
    for (const s of [1, 2]) t.run(peerOf(t, s), (t.seats.get(peerOf(t, s)) as NonNullable<ReturnType<MemoryTable['seats']['get']>>).tick(t.clock.now))
    for (const s of [1, 2]) {
      const [record] = recordsOf(t, peerOf(t, s), hand)
      expect(record.signer, `seat ${s}`).toBe(peerOf(t, s))
      expect(record.body).toMatchObject({ reason: 'missing-view', blame: [rogue] })
      expect(record.body.evidence[0].type).toBe('pledges')
      expect(seatsOf(t, record, 'view'), `seat ${s}`).toEqual([0, 1, 2].filter(x => x !== s))
      expect(checkAbortRecord(record, { table: t.table }).problems, `seat ${s}`).toEqual([])
    }
    // The dealer had ended the hand: it logged its own record only.
    expect(recordsOf(t, t.table.dealer, hand).map(r => docDigest(r))).toEqual([docDigest(dealerRecord)])
    // Seat 1's record re-signed to blame a seat whose VIEW it holds (seat 2; seat 0, the dealer's node), or itself, fails.
    const [own] = recordsOf(t, peerOf(t, 1), hand)
    const codes = (blame: string[]): string[] => checkAbortRecord(signDocument('abort', { ...own.body, blame }, t.signers[1])).problems.map(p => p.code)
    expect(codes([peerOf(t, 2)])).toEqual([Reason.ABORT_BLAME])
    expect(codes([t.table.dealer, rogue])).toEqual([Reason.ABORT_BLAME])
    expect(codes([peerOf(t, 1), rogue])).toEqual([Reason.ABORT_BLAME])
    // Dropping the PLEDGES it held: the record no longer shows what it was shown.
    expect(checkAbortRecord(signDocument('abort', { ...own.body, evidence: own.body.evidence.slice(1) }, t.signers[1])).problems.map(p => p.code)).toEqual([Reason.ABORT_EVIDENCE])
  })

  test('a missing-view record that blames a seat whose VIEW it holds, or a missing-nonce without every VIEW, fails with its code', () => {
    const t = memoryTable()
    const rogue = peerOf(t, 3)
    t.intercept = (from, _to, doc) => (from === rogue && doc.type === 'view' ? undefined : doc)
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    t.clock.now += CONTRIBUTE_MS + 1
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    const [record] = recordsOf(t, t.table.dealer, hand)
    const dealer = t.signers[0]
    const resigned = (change: (b: SignedAbort['body']) => void): SignedAbort => {
      const body = structuredClone(record.body)
      change(body)
      return signDocument('abort', body, dealer)
    }
    const codes = (r: unknown): string[] => checkAbortRecord(r).problems.map(p => p.code)
    // Blaming a waiting seat, whose VIEW is in the evidence.
    expect(codes(resigned(b => { b.blame = [peerOf(t, 1), rogue] }))).toEqual([Reason.ABORT_BLAME])
    expect(codes(resigned(b => { b.blame = [peerOf(t, 1)] }))).toEqual([Reason.ABORT_BLAME])
    // The same evidence as missing-nonce, blaming the waiting seats whose nonces are absent: seat 3's VIEW is not there.
    expect(codes(resigned(b => { b.reason = 'missing-nonce'; b.blame = [0, 1, 2].map(s => peerOf(t, s)) }))).toEqual([Reason.ABORT_EVIDENCE])
    // Dropping a held VIEW to blame its seat: the seat's own record (it sent its VIEW to the others) shows it; the rule
    // alone sees a record that is consistent. A VIEW of another COMMIT is not evidence of this hand.
    const foreignView = resigned(b => {
      const i = b.evidence.findIndex(e => e.type === 'view')
      const v = b.evidence[i] as Signed<{ commitDoc: Signed<unknown> }>
      const commitDoc = signDocument('commit', { ...(v.body.commitDoc.body as object), deadline: 1 }, dealer)
      b.evidence[i] = signDocument('view', { ...v.body, commitDoc, commit: docDigest(commitDoc) }, t.signers[0]) as typeof b.evidence[number]
    })
    expect(codes(foreignView)).toContain(Reason.ABORT_FOREIGN_EVIDENCE)
  })
})

describe('a VIEW the seats hold refutes a dealer\'s missing-view; a seat that sent nothing but its VIEW to the seats is blamed for its nonce', () => {
  const CONTRIBUTE_MS = 5_000

  test('seat 3 sends its VIEW to the seats only and no NONCE at all: the dealer\'s missing-nonce names it, with every other VIEW, and nobody refutes it', () => {
    const t = memoryTable({ dealerSeat: false })
    const rogue = peerOf(t, 3)
    t.intercept = (from, to, doc) => (from === rogue && (doc.type === 'nonce' || (doc.type === 'view' && to === t.table.dealer)) ? undefined : doc)
    const { hand, record } = pastDeadline(t)
    expect(record.body).toMatchObject({ reason: 'missing-nonce', blame: [rogue] })
    expect(seatsOf(t, record, 'view')).toEqual([0, 1, 2])
    expect(checkAbortRecord(record).problems).toEqual([])
    // Blaming a seat whose VIEW, among the others', the record lacks fails: that seat may have waited for it.
    const more = signDocument('abort', { ...record.body, blame: [peerOf(t, 2), rogue] }, t.signers[4])
    expect(checkAbortRecord(more).problems.map(p => p.code)).toContain(Reason.ABORT_EVIDENCE)
    for (let s = 0; s < 3; s++) expect(recordsOf(t, peerOf(t, s), hand).map(r => r.body.reason), `seat ${s}`).toEqual(['missing-nonce'])
  })

  test('seat 3\'s VIEW lost on its way to the dealer while seat 2 withholds its NONCE: the seats holding seat 3\'s VIEW log released, and in their logs the dealer\'s missing-view fails as refuted', async () => {
    const t = memoryTable({ dealerSeat: false })
    const lost = peerOf(t, 3)
    const withholder = peerOf(t, 2)
    t.intercept = (from, to, doc) => ((from === lost && doc.type === 'view' && to === t.table.dealer) || (from === withholder && doc.type === 'nonce') ? undefined : doc)
    const { hand, record: claim } = pastDeadline(t)
    expect(claim.body).toMatchObject({ reason: 'missing-view', blame: [lost] })
    expect(checkAbortRecord(claim).problems).toEqual([])
    for (const s of [0, 1, 2]) {
      const logged = (t.appended.get(peerOf(t, s)) ?? []).filter(e => e.hand === hand)
      expect(logged.map(e => (e.payload as SignedAbort).body.reason), `seat ${s}`).toEqual(['missing-view', 'released'])
      const counter = logged[1].payload as SignedAbort
      expect(counter.body.evidence.map(e => e.type)).toEqual(['pledges', 'view'])
      expect(checkAbortRecord(counter, { table: t.table }).problems).toEqual([])
      const failures = await verifyAsLog(t.signers[s], logged)
      expect(failures.map(f => ({ seq: f.seq, codes: f.codes })), `seat ${s}`).toEqual([{ seq: 0, codes: [Reason.ABORT_REFUTED] }])
    }
    // A released record showing a VIEW of other PLEDGES, or its author's own VIEW, fails.
    const counter = (t.appended.get(peerOf(t, 0)) ?? []).filter(e => e.hand === hand)[1].payload as SignedAbort
    const own = viewsTo(t, peerOf(t, 1)).find(v => v.signer === peerOf(t, 0)) as SignedAbort['body']['evidence'][number]
    expect(checkAbortRecord(signDocument('abort', { ...counter.body, evidence: [counter.body.evidence[0], own] }, t.signers[0])).problems.map(p => p.code)).toEqual([Reason.ABORT_EVIDENCE])
  })
})

describe('a VIEW goes without the documents its recipient holds (docs/protocol.md §3)', () => {
  const viewBody = (v: Signed<unknown>): ViewWireBody => v.body as ViewWireBody

  test('an honest hand: every VIEW frame names the COMMIT and PLEDGES by digest alone, and each is a fraction of the whole VIEW', () => {
    const t = memoryTable()
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    for (const peer of [t.table.dealer, ...t.seats.keys()]) {
      const frames = (t.frames.get(peer) ?? []).filter(f => (JSON.parse(new TextDecoder().decode(f)) as Signed<unknown>).type === 'view')
      for (const v of docsTo(t, peer, 'view')) expect(Object.keys(viewBody(v)).sort(), peer).toEqual(['again', 'commit', 'hand', 'pledges', 'seat', 'table'])
      // The same VIEWs put back together are what each seat signed (their signatures hold).
      for (const v of viewsTo(t, peer)) expect(verifyDocument(v), `${peer} view of ${v.signer}`).toBe(true)
      const whole = viewsTo(t, peer).map(v => JSON.stringify(v).length)
      frames.forEach((f, i) => expect(f.length * 3, `${peer} view ${i}`).toBeLessThan(whole[i]))
    }
    t.run(t.table.dealer, t.dealer.end(hand))
    expect(t.rejections).toEqual([])
    expectFullReceipts(t, hand)
  })

  test('one COMMIT, two PLEDGES: a seat shown other documents asks each such seat once for its VIEW whole, and both sides end the hand with the two documents', () => {
    const t = memoryTable()
    const colluder = t.signers[1]
    let second: Signed<PledgesBody> | undefined
    t.intercept = (_from, to, doc) => {
      if (doc.type !== 'pledges' || (to !== peerOf(t, 2) && to !== peerOf(t, 3))) return doc
      const body = doc.body as PledgesBody
      const other = signDocument('pledge', { ...(body.pledges[1].body as PledgeBody), nonceHash: sha256Hex(toHex(randomBytes(32))) }, colluder)
      second ??= signDocument('pledges', { ...body, pledges: body.pledges.map(p => p.body.seat === 1 ? other : p) }, t.signers[0])
      return second
    }
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    expect(second).toBeDefined()
    // Seat 2 holds the second PLEDGES, seat 0 the first: each asked the other once, whole and
    // `again`, and each answered the other's ask with its VIEW whole.
    for (const [from, to, pledgesDoc] of [[2, 0, second], [0, 2, undefined]] as const) {
      const whole = docsTo(t, peerOf(t, to), 'view').filter(v => v.signer === peerOf(t, from) && viewBody(v).pledgesDoc !== undefined)
      expect(whole.map(v => viewBody(v).again), `seat ${from} to seat ${to}`).toEqual([true, false])
      if (pledgesDoc !== undefined) expect(viewBody(whole[0]).pledgesDoc).toEqual(pledgesDoc)
    }
    for (const s of [0, 2]) {
      const record = recordsOf(t, peerOf(t, s), hand).find(r => r.signer === peerOf(t, s))
      expect(record?.body, `seat ${s}`).toMatchObject({ reason: 'equivocation', blame: [t.table.dealer] })
      expect(verifyAbort(record as SignedAbort).problems, `seat ${s}`).toEqual([])
    }
    for (const peer of [t.table.dealer, ...t.seats.keys()]) expect(docsTo(t, peer, 'nonce'), peer).toEqual([])
  })

  test('one COMMIT, two PLEDGES, and a seat whose PLEDGES come after the seats shown the other ones have ended the hand: each sent it its VIEW whole first, so it records equivocation too (nobody is left to answer its ask)', () => {
    const t = memoryTable()
    const docs = twoPledges(t)
    const shown = t.intercept as NonNullable<MemoryTable['intercept']>
    // Seat 3's PLEDGES (the second) are held back until every other seat has ended the hand, and
    // the dealer passes no seat's record on to it.
    let held: Signed<unknown> | undefined
    t.intercept = (from, to, doc) => {
      if (doc.type === 'abort' && to === peerOf(t, 3)) return undefined
      const out = shown(from, to, doc)
      if (out?.type !== 'pledges' || to !== peerOf(t, 3) || held !== undefined) return out
      held = out
      return undefined
    }
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    for (const s of [0, 1, 2]) expect(recordsOf(t, peerOf(t, s), hand).find(r => r.signer === peerOf(t, s))?.body.reason, `seat ${s}`).toBe('equivocation')
    expect(held).toBeDefined()
    const both = [docDigest(docs.first!), docDigest(docs.second!)].sort()
    t.intercept = undefined
    t.run(t.table.dealer, [{ kind: 'send', to: peerOf(t, 3), doc: held as Signed<unknown> }])
    const record = recordsOf(t, peerOf(t, 3), hand).find(r => r.signer === peerOf(t, 3))
    expect(record?.body).toMatchObject({ reason: 'equivocation', blame: [t.table.dealer] })
    expect((record as SignedAbort).body.evidence.map(e => docDigest(e)).sort()).toEqual(both)
    expect(verifyAbort(record as SignedAbort).problems).toEqual([])
    for (const peer of [t.table.dealer, ...t.seats.keys()]) expect(docsTo(t, peer, 'nonce'), peer).toEqual([])
  })

  test('a VIEW without its documents passed on by the dealer is refused: only its own seat sends one so', () => {
    const t = memoryTable()
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    const target = peerOf(t, 1)
    const compact = docsTo(t, target, 'view').find(v => v.signer === peerOf(t, 3)) as Signed<unknown>
    expect(viewBody(compact).commitDoc).toBeUndefined()
    t.run(t.table.dealer, [{ kind: 'send', to: target, doc: compact }])
    expect(t.rejections).toEqual([{ to: target, reason: 'view of seat 3 passed on without its documents' }])
    t.rejections.length = 0
    t.run(t.table.dealer, t.dealer.end(hand))
    expect(t.rejections).toEqual([])
    expectFullReceipts(t, hand)
  })

  test('a VIEW without its documents that came before the seat\'s PLEDGES and does not verify is dropped then: that seat\'s VIEW is still missing', () => {
    const t = memoryTable()
    const late = peerOf(t, 1)
    let held: Signed<unknown> | undefined
    t.intercept = (from, to, doc) => {
      if (to !== late) return doc
      if (doc.type === 'pledges') { held = doc; return undefined }
      if (doc.type !== 'view' || from !== peerOf(t, 3)) return doc
      // Seat 3's VIEW, its signature spoiled: it cannot be checked before seat 1 holds the PLEDGES.
      const sig = (doc as Signed<unknown>).sig
      return { ...doc, sig: (sig[0] === '0' ? '1' : '0') + sig.slice(1) }
    }
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    expect(t.seats.get(late)?.status()).toEqual([{ hand, phase: 'pledged' }])
    expect(t.rejections).toEqual([])
    t.intercept = undefined
    t.run(t.table.dealer, [{ kind: 'send', to: late, doc: held as Signed<unknown> }])
    // Seats 0 and 2 agree with it; seat 3's VIEW is missing, so seat 1's NONCE has not left.
    expect(t.seats.get(late)?.status()).toEqual([{ hand, phase: 'viewing' }])
    expect(docsTo(t, t.table.dealer, 'nonce').filter(n => n.signer === late)).toEqual([])
    expect((t.appended.get(late) ?? [])).toEqual([])
  })
})

describe('a FINAL goes without the documents its seat holds (docs/protocol.md §3)', () => {
  type Final = Signed<{ table: string, hand: number, commit: string, receipt: Record<string, unknown> }>
  const finalsTo = (t: MemoryTable, to: string): Final[] => docsTo(t, to, 'final') as Final[]

  test('an honest hand: every seat that countersigned gets its FINAL\'s receipt without the COMMIT, pledges and REVEAL, and logs the dealer\'s receipt byte for byte', () => {
    const t = memoryTable()
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    t.run(t.table.dealer, t.dealer.end(hand))
    expect(t.rejections).toEqual([])
    for (let s = 1; s < 4; s++) {
      const [final] = finalsTo(t, peerOf(t, s))
      expect(Object.keys(final.body.receipt).sort(), `seat ${s}`).toEqual(['acks', 'v'])
    }
    expectFullReceipts(t, hand)
  })

  test('a FINAL put back from documents that each passed their own schema off the wire passes the receipt schema without another pass; one put back from a saved copy does not', () => {
    const t = memoryTable()
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    t.run(t.table.dealer, t.dealer.end(hand))
    const seat = peerOf(t, 1)
    const decoded = (type: string): Signed<unknown> => decodeFrame((t.frames.get(seat) ?? []).find(f => (JSON.parse(new TextDecoder().decode(f)) as Signed<unknown>).type === type) as Uint8Array)
    const [commit, pledges, reveal, final] = ['commit', 'pledges', 'reveal', 'final'].map(decoded)
    const held = { commit: commit as SignedCommit, commitDigest: docDigest(commit), pledges: (pledges as Signed<PledgesBody>).body.pledges, reveal: reveal as SignedReveal }
    const whole = wholeFinal(final as Signed<FinalWireBody>, held)
    if (typeof whole === 'string') throw new Error(whole)
    expect(wasChecked(whole.body.receipt, receiptSchema)).toBe(true)
    expect(verifyDocument(whole)).toBe(true)
    const fromSave = wholeFinal(final as Signed<FinalWireBody>, { ...held, commit: structuredClone(held.commit) })
    if (typeof fromSave === 'string') throw new Error(fromSave)
    expect(wasChecked(fromSave.body.receipt, receiptSchema)).toBe(false)
    expect(receiptSchema.safeParse(fromSave.body.receipt).success).toBe(true)
  })

  test('a seat whose ACK the dealer lacks gets the FINAL whole, and countersigns it late', () => {
    const t = memoryTable()
    const away = peerOf(t, 3)
    t.intercept = (from, to, doc) => (from === away && to === t.table.dealer && doc.type === 'ack' ? undefined : doc)
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    t.run(t.table.dealer, t.dealer.end(hand))
    // The dealer waits for seat 3's ACK until its time runs out, then sends the FINAL with three.
    t.clock.now += 5_001
    t.intercept = undefined
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    expect(Object.keys(finalsTo(t, away)[0].body.receipt).sort()).toEqual(['acks', 'commit', 'pledges', 'reveal', 'v'])
    for (const s of [1, 2]) expect(Object.keys(finalsTo(t, peerOf(t, s))[0].body.receipt).sort(), `seat ${s}`).toEqual(['acks', 'v'])
    expect(t.rejections).toEqual([])
    // Its ACK, sent again on the whole FINAL, comes back as the dealer's LATEACK, which it logs.
    expect((t.appended.get(away) ?? []).filter(e => e.hand === hand).map(e => e.entry)).toEqual(['receipt', 'late-ack'])
  })

  test('a FINAL that leaves out only some of the three, or whose receipt put back is not the one the dealer signed, is refused and changes nothing; the seat\'s ASK then gets it whole', () => {
    const t = memoryTable()
    const target = peerOf(t, 2)
    const spoil = [
      // The REVEAL back in, the COMMIT and pledges still out.
      (r: Record<string, unknown>) => ({ ...r, reveal: docsTo(t, target, 'reveal').at(-1) }),
      (r: Record<string, unknown>) => ({ ...r, acks: (r.acks as unknown[]).slice(1) })
    ]
    for (const [i, change] of spoil.entries()) {
      t.intercept = (_from, to, doc) => {
        if (doc.type !== 'final' || to !== target) return doc
        const receipt = JSON.parse(JSON.stringify(change((doc.body as { receipt: Record<string, unknown> }).receipt))) as Record<string, unknown>
        return { ...doc, body: { ...(doc.body as object), receipt } }
      }
      const { hand, effects } = t.dealer.startHand({ dealer: i })
      t.run(t.table.dealer, effects)
      t.run(t.table.dealer, t.dealer.end(hand))
      expect(t.rejections.map(r => r.reason), `spoil ${i}`).toEqual([i === 0 ? 'final: its receipt leaves out some of its COMMIT, pledges and REVEAL but not all' : 'final: bad signature'])
      expect(t.seats.get(target)?.status(), `spoil ${i}`).toEqual([{ hand, phase: 'acked' }])
      t.rejections.length = 0
      t.intercept = undefined
      // Waiting for the FINAL, the seat asks the dealer, which answers with the whole FINAL.
      t.clock.now += 10_001
      t.run(target, t.seats.get(target)?.tick(t.clock.now) ?? [])
      expect(t.seats.get(target)?.status(), `spoil ${i}`).toEqual([])
      expect(t.rejections).toEqual([])
      expectFullReceipts(t, hand)
    }
  })
})
