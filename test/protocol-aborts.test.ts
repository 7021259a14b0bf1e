import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { docDigest } from '../src/core/hand/digest.js'
import { verifyAbort } from '../src/core/hand/abort-rules.js'
import { Reason } from '../src/core/hand/reasons.js'
import type { AbortBody, Receipt } from '../src/core/hand/messages.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import { DELIVERY_RETRY_MS } from '../src/protocol/dealer.js'
import type { Effect } from '../src/protocol/types.js'
import { memoryTable, type MemoryTable } from './helpers/memory-table.js'
import { verifyAsLog } from './helpers/verify-as-log.js'

// Guarantee 5 in memory, on the injected clock: a seat that does not contribute leaves a signed
// abort record naming exactly that seat, recorded only once its deadline has passed, kept by the
// dealer and by every other seat, verifiable alone. table-aborts.test.ts proves it over libp2p.

const CONTRIBUTE_MS = 5_000

function entriesOf (t: MemoryTable, peer: string): Array<{ entry: string, hand: number, payload: unknown }> {
  return t.appended.get(peer) ?? []
}

/** The dealer's abort of `hand` as each peer logged it: the same signed document everywhere. */
function abortsOf (t: MemoryTable, hand: number, peers: string[]): Array<Signed<AbortBody>> {
  return peers.map(p => {
    const e = entriesOf(t, p).find(x => x.entry === 'abort' && x.hand === hand)
    expect(e, `${p}: abort of hand ${hand}`).toBeDefined()
    return e?.payload as Signed<AbortBody>
  })
}

function expectSameVerifiedRecords (docs: Array<Signed<AbortBody>>, dealer: string): void {
  for (const doc of docs) {
    expect(verifyAbort(doc).problems).toEqual([])
    expect(doc.signer).toBe(dealer)
    expect(canonicalJson(doc)).toBe(canonicalJson(docs[0]))
  }
}

describe('refusals leave evidence (in memory)', () => {
  it('a seat that never answers: nothing before the deadline, then a verified missing-pledge naming exactly it, with the others\' pledges', () => {
    const t = memoryTable({ timeouts: { contributeMs: CONTRIBUTE_MS } })
    const absent = t.signers[3].peerId
    t.intercept = (from, to, doc) => (from === absent || to === absent ? undefined : doc)
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    // At the deadline itself the seat still has time: nothing is recorded.
    t.clock.now += CONTRIBUTE_MS
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    expect([...t.appended.values()].flat()).toEqual([])
    t.clock.now += 1
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    const present = t.signers.slice(0, 3).map(s => s.peerId)
    const docs = abortsOf(t, hand, present)
    expectSameVerifiedRecords(docs, t.table.dealer)
    const doc = docs[0]
    expect(doc.body).toMatchObject({ hand, reason: 'missing-pledge', blame: [absent] })
    // The evidence: the pledges of every seat that did answer this very commit.
    expect(doc.body.evidence).toHaveLength(3)
    expect(new Set(doc.body.evidence.map(e => e.signer))).toEqual(new Set(present))
    expect(doc.body.evidence.every(e => e.type === 'pledge' && (e.body as { commit: string }).commit === docDigest(doc.body.commit))).toBe(true)
    expect(t.clock.now).toBeGreaterThan(doc.body.commit?.body.deadline as number)
    expect(entriesOf(t, absent)).toEqual([])
  })

  it('a seat that pledges but withholds its nonce is named in a verified missing-nonce abort, and is told too', () => {
    const t = memoryTable({ timeouts: { contributeMs: CONTRIBUTE_MS } })
    const withholder = t.signers[3].peerId
    t.intercept = (from, _to, doc) => (from === withholder && doc.type === 'nonce' ? undefined : doc)
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    t.clock.now += CONTRIBUTE_MS + 1
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    const docs = abortsOf(t, hand, t.signers.slice(0, 4).map(s => s.peerId))
    expectSameVerifiedRecords(docs, t.table.dealer)
    expect(docs[0].body).toMatchObject({ hand, reason: 'missing-nonce', blame: [withholder] })
    // Four pledges (the withholder's too), the three nonces that came, and every seat's VIEW (the
    // withholder's too: it had every view, so nothing kept it from sending its nonce).
    const kinds = docs[0].body.evidence.map(e => `${e.type}:${t.signers.findIndex(s => s.peerId === e.signer)}`).sort()
    expect(kinds).toEqual(['nonce:0', 'nonce:1', 'nonce:2', 'pledge:0', 'pledge:1', 'pledge:2', 'pledge:3', 'view:0', 'view:1', 'view:2', 'view:3'])
  })

  it('a seat away for one hand is named; back, it plays the next hand, which links to the aborted one, and logs the record of the hand it missed (no gap)', () => {
    const t = memoryTable({ timeouts: { contributeMs: CONTRIBUTE_MS } })
    const play = (): number => {
      const { hand, effects } = t.dealer.startHand({ dealer: 0 })
      t.run(t.table.dealer, effects)
      t.run(t.table.dealer, t.dealer.end(hand))
      return hand
    }
    expect(play()).toBe(1)
    const away = t.signers[3].peerId
    t.intercept = (from, to, doc) => (from === away || to === away ? undefined : doc)
    const { hand: hand2, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    t.clock.now += CONTRIBUTE_MS + 1
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    t.intercept = undefined
    expect(play()).toBe(3)
    expect(t.rejections).toEqual([])
    const seats = t.signers.slice(0, 4).map(s => s.peerId)
    for (const p of seats.slice(1)) {
      expect(entriesOf(t, p).map(e => `${e.entry} ${e.hand}`), p).toEqual(['receipt 1', 'abort 2', 'receipt 3'])
    }
    const [abort] = abortsOf(t, hand2, [seats[1]])
    expect(abort.body).toMatchObject({ hand: 2, reason: 'missing-pledge', blame: [away] })
    // The one it logged is the dealer's, asked for when the COMMIT of hand 3 showed it had missed hand 2.
    expect(docDigest(entriesOf(t, away)[1].payload as Signed<AbortBody>)).toBe(docDigest(abortsOf(t, hand2, [seats[0]])[0]))
    const third = entriesOf(t, away)[2].payload as Receipt
    expect(third.commit.body.prev).toBe(docDigest(abort.body.commit))
  })
})

describe('a seat restarted before the hands it missed are logged (issue 18)', () => {
  it('its gap is saved: back from the restart it asks about the first hand still missing, logs it, and its log has no gap', async () => {
    const t = memoryTable({ timeouts: { contributeMs: CONTRIBUTE_MS } })
    const away = t.signers[3].peerId
    const start = (): number => { const { hand, effects } = t.dealer.startHand({ dealer: 0 }); t.run(t.table.dealer, effects); return hand }
    t.run(t.table.dealer, t.dealer.end(start()))
    // Away for hands 2 and 3 (each given up for want of its pledge).
    t.intercept = (from, to, doc) => (from === away || to === away ? undefined : doc)
    for (let i = 0; i < 2; i++) { start(); t.clock.now += CONTRIBUTE_MS + 1; t.run(t.table.dealer, t.dealer.tick(t.clock.now)) }
    // Back for hand 4, whose COMMIT shows the gap; its asks about hands 2 and 3 are lost, and it stops.
    t.intercept = (from, _to, doc) => (from === away && doc.type === 'ask' ? undefined : doc)
    const hand4 = start()
    t.run(t.table.dealer, t.dealer.end(hand4))
    expect(entriesOf(t, away).map(e => `${e.entry} ${e.hand}`)).toEqual(['receipt 1', 'receipt 4'])
    t.intercept = undefined
    t.run(away, t.restartSeat(away))
    expect(t.rejections).toEqual([])
    expect(entriesOf(t, away).map(e => `${e.entry} ${e.hand}`)).toEqual(['receipt 1', 'receipt 4', 'abort 2', 'abort 3'])
    for (const h of [2, 3]) expect(docDigest(entriesOf(t, away).find(e => e.hand === h)?.payload as Signed<AbortBody>)).toBe(docDigest(abortsOf(t, h, [t.table.dealer])[0]))
    expect(await verifyAsLog(t.signers[3], entriesOf(t, away))).toEqual([])
    // Closed, the gap is no longer saved.
    expect(t.persisted.get(away)?.get('seat/test-table/meta')).not.toHaveProperty('gap')
  })
})

describe('a seat the dealer cannot reach is not blamed (issue 9, item 2)', () => {
  /** Starts a hand whose COMMIT cannot reach `away`: the send is dropped and the host reports it failed. */
  function startUnreached (t: MemoryTable, away: string, silent?: string): { hand: number, commit: Signed<unknown> } {
    t.intercept = (from, to, doc) => (from === away || to === away || from === silent ? undefined : doc)
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    const commit = (effects.find(e => e.kind === 'send' && e.to === away) as Extract<Effect, { kind: 'send' }>).doc
    t.run(t.table.dealer, effects)
    t.dealer.delivery(away, commit, { ok: false, reason: 'connect ECONNREFUSED 127.0.0.1:7400' })
    return { hand, commit }
  }
  const resends = (effects: Effect[], to: string): Effect[] => effects.filter(e => e.kind === 'send' && e.to === to)

  it('the COMMIT is sent again each second; never delivered by the deadline, the hand ends unreachable, blaming nobody', () => {
    const t = memoryTable({ timeouts: { contributeMs: CONTRIBUTE_MS } })
    const away = t.signers[3].peerId
    const { hand, commit } = startUnreached(t, away)
    t.clock.now += DELIVERY_RETRY_MS - 1
    expect(resends(t.dealer.tick(t.clock.now), away)).toEqual([])
    t.clock.now += 1
    const again = t.dealer.tick(t.clock.now)
    expect(resends(again, away)).toEqual([{ kind: 'send', to: away, doc: commit }])
    t.run(t.table.dealer, again)
    t.dealer.delivery(away, commit, { ok: false, reason: 'connect ECONNREFUSED 127.0.0.1:7400' })
    t.clock.now = (commit.body as { deadline: number }).deadline + 1
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    const docs = abortsOf(t, hand, t.signers.slice(0, 3).map(s => s.peerId))
    expectSameVerifiedRecords(docs, t.table.dealer)
    expect(docs[0].body).toMatchObject({ hand, reason: 'unreachable', blame: [] })
    expect(docs[0].body.detail).toBe('the dealer could not reach seat 3 (connect ECONNREFUSED 127.0.0.1:7400) before the deadline')
    expect((t.events.get(t.table.dealer) ?? []).find(e => e.event.type === 'aborted')?.event).toMatchObject({ reason: 'unreachable', blame: [] })
  })

  it('reached on a later try, the seat pledges and the hand goes on', () => {
    const t = memoryTable({ timeouts: { contributeMs: CONTRIBUTE_MS } })
    const away = t.signers[3].peerId
    const { hand, commit } = startUnreached(t, away)
    t.intercept = undefined
    t.clock.now += DELIVERY_RETRY_MS
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    t.dealer.delivery(away, commit, { ok: true })
    t.run(t.table.dealer, t.dealer.end(hand))
    expect(t.rejections).toEqual([])
    for (const s of t.signers.slice(0, 4)) expect(entriesOf(t, s.peerId).map(e => e.entry)).toContain('receipt')
    // Nothing more is sent once it arrived, and no abort comes at the deadline.
    t.clock.now = (commit.body as { deadline: number }).deadline + 1
    expect(t.dealer.tick(t.clock.now)).toEqual([])
  })

  it('a seat reached but silent is blamed; one not reached beside it is only named', () => {
    const t = memoryTable({ timeouts: { contributeMs: CONTRIBUTE_MS } })
    const away = t.signers[3].peerId
    const silent = t.signers[2].peerId
    const { hand, commit } = startUnreached(t, away, silent)
    t.clock.now = (commit.body as { deadline: number }).deadline + 1
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    const [doc] = abortsOf(t, hand, [t.signers[1].peerId])
    expect(doc.body).toMatchObject({ reason: 'missing-pledge', blame: [silent] })
    expect(doc.body.detail).toBe('no pledge from seat 2 by the deadline; the dealer could not reach seat 3 (connect ECONNREFUSED 127.0.0.1:7400)')
    expect(verifyAbort(doc).problems).toEqual([])
  })

  it('an unreachable record that blames someone, or is not the dealer\'s, does not verify', () => {
    const t = memoryTable({ timeouts: { contributeMs: CONTRIBUTE_MS } })
    const away = t.signers[3].peerId
    const { hand, commit } = startUnreached(t, away)
    t.clock.now = (commit.body as { deadline: number }).deadline + 1
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    const [doc] = abortsOf(t, hand, [t.signers[1].peerId])
    const blaming = signDocument('abort', { ...doc.body, blame: [away] }, t.signers[0])
    expect(verifyAbort(blaming).problems.map(p => p.code)).toEqual([Reason.ABORT_BLAME])
    const bySeat = signDocument('abort', doc.body, t.signers[1])
    expect(verifyAbort(bySeat).problems.map(p => p.code)).toEqual([Reason.ABORT_SIGNER])
  })
})

describe('a COMMIT whose prev skips a hand the seat knows of is recorded (docs/protocol.md §8, §10)', () => {
  /**
   * Hand 1 is played; then the dealer shows seat 1 a COMMIT for hand 2 that does not link to hand
   * 1's (a history in which hand 1 was dropped or rewritten), signed with its own key.
   */
  function dropHandOne (): { t: MemoryTable, record: Signed<AbortBody>, known: Signed<unknown>, forged: Signed<{ prev: string }> } {
    const t = memoryTable({ timeouts: { contributeMs: CONTRIBUTE_MS } })
    const first = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, first.effects)
    t.run(t.table.dealer, t.dealer.end(first.hand))
    const receipt = entriesOf(t, t.table.dealer).find(e => e.entry === 'receipt')?.payload as Receipt
    const victim = t.signers[1].peerId
    let forged: Signed<{ prev: string }> | undefined
    t.intercept = (_from, to, doc) => {
      if (doc.type !== 'commit' || to !== victim) return doc
      forged = signDocument('commit', { ...(doc.body as object), prev: 'ab'.repeat(32) }, t.signers[0]) as Signed<{ prev: string }>
      return forged
    }
    const second = t.dealer.startHand({ dealer: 1 })
    t.run(t.table.dealer, second.effects)
    t.intercept = undefined
    const record = entriesOf(t, victim).find(e => e.entry === 'abort' && e.hand === second.hand)?.payload as Signed<AbortBody>
    return { t, record, known: receipt.commit, forged: forged as Signed<{ prev: string }> }
  }

  it('the seat does not pledge; it records broken-chain blaming the dealer, both dealer-signed COMMITs as evidence, and the record verifies', () => {
    const { t, record, known, forged } = dropHandOne()
    expect(record.signer).toBe(t.signers[1].peerId)
    expect(record.body).toMatchObject({ hand: 2, reason: 'broken-chain', blame: [t.table.dealer] })
    expect(record.body.commit).toEqual(forged)
    expect(record.body.evidence.map(e => docDigest(e))).toEqual([docDigest(known), docDigest(forged)])
    expect(verifyAbort(record, { table: t.table }).problems).toEqual([])
    // No pledge of seat 1 for that COMMIT; its last hand is still hand 1.
    expect(t.seats.get(t.signers[1].peerId)?.status()).toEqual([])
    // The same COMMIT again (a resend) is not recorded twice.
    t.run(t.table.dealer, [{ kind: 'send', to: t.signers[1].peerId, doc: forged }])
    expect(entriesOf(t, t.signers[1].peerId).filter(e => e.entry === 'abort')).toHaveLength(1)
  })

  it('a tampered broken-chain record fails with its code', () => {
    const { t, record, known, forged } = dropHandOne()
    const seat1 = t.signers[1]
    const resigned = (change: (b: AbortBody) => void): Signed<AbortBody> => {
      const body = structuredClone(record.body)
      change(body)
      return signDocument('abort', body, seat1)
    }
    const codes = (r: unknown): string[] => verifyAbort(r).problems.map(p => p.code)
    // A COMMIT for hand 2 that does link to hand 1 (the dealer's real one): no break.
    const real = (t.frames.get(t.signers[2].peerId) ?? []).map(f => JSON.parse(new TextDecoder().decode(f)) as Signed<{ hand: number }>).find(d => d.type === 'commit' && d.body.hand === 2)
    expect(real).toBeDefined()
    expect(codes(resigned(b => { b.commit = real as AbortBody['commit']; b.evidence = [known, real] as AbortBody['evidence'] }))).toEqual([Reason.ABORT_NO_BREAK])
    // The earlier COMMIT left out: nothing shows the break.
    expect(codes(resigned(b => { b.evidence = [forged] as AbortBody['evidence'] }))).toEqual([Reason.ABORT_EVIDENCE])
    // An earlier COMMIT that is not the hand before (hand 1's COMMIT re-signed as hand 0).
    const hand0 = signDocument('commit', { ...(known.body as object), hand: 0 }, t.signers[0])
    expect(codes(resigned(b => { b.evidence = [hand0] as AbortBody['evidence'] }))).toEqual([Reason.ABORT_NO_BREAK])
    // An "earlier COMMIT" signed by the seat itself, not the dealer.
    const bySeat = signDocument('commit', known.body, seat1)
    expect(codes(resigned(b => { b.evidence = [bySeat] as AbortBody['evidence'] }))).toContain(Reason.WRONG_SIGNER)
    // Only the dealer is blamed, and only a seat signs it (signers[4] holds no seat here).
    expect(codes(resigned(b => { b.blame = [t.signers[2].peerId] }))).toEqual([Reason.ABORT_BLAME])
    expect(codes(signDocument('abort', record.body, t.signers[4]))).toEqual([Reason.ABORT_SIGNER])
  })
})

describe('peer NONCEs refute a dealer\'s missing-nonce (docs/protocol.md §10)', () => {
  /** Seat 3's NONCE reaches seats 1 and 2 but (the dealer says) never the dealer, which records missing-nonce against it. */
  function claimAgainstSeat3 (): { t: MemoryTable, hand: number, claim: Signed<AbortBody> } {
    const t = memoryTable({ timeouts: { contributeMs: CONTRIBUTE_MS } })
    const accused = t.signers[3].peerId
    t.intercept = (from, to, doc) => (from === accused && to === t.table.dealer && doc.type === 'nonce' ? undefined : doc)
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    t.clock.now += CONTRIBUTE_MS + 1
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    const claim = entriesOf(t, t.table.dealer).find(e => e.entry === 'abort' && e.hand === hand)?.payload as Signed<AbortBody>
    return { t, hand, claim }
  }


  it('each seat holding the NONCE logs released beside the dealer\'s record, and in its log the dealer\'s record fails as refuted', async () => {
    const { t, hand, claim } = claimAgainstSeat3()
    const accused = t.signers[3].peerId
    expect(claim.body).toMatchObject({ reason: 'missing-nonce', blame: [accused] })
    // Alone the dealer's record keeps every rule: the nonce is absent from its own evidence.
    expect(verifyAbort(claim).problems).toEqual([])
    for (const s of [1, 2]) {
      const logged = entriesOf(t, t.signers[s].peerId).filter(e => e.hand === hand)
      expect(logged.map(e => (e.payload as Signed<AbortBody>).body.reason), `seat ${s}`).toEqual(['missing-nonce', 'released'])
      const counter = logged[1].payload as Signed<AbortBody>
      expect(counter.signer).toBe(t.signers[s].peerId)
      expect(counter.body.blame).toEqual([])
      expect(counter.body.evidence.map(e => `${e.type}:${e.signer === accused ? 3 : '-'}`)).toEqual(['pledges:-', 'nonce:3'])
      expect(verifyAbort(counter, { table: t.table }).problems).toEqual([])
      const failures = await verifyAsLog(t.signers[s], logged)
      expect(failures.map(f => ({ seq: f.seq, codes: f.codes })), `seat ${s}`).toEqual([{ seq: 0, codes: [Reason.ABORT_REFUTED] }])
    }
    // The dealer's own log holds no refutation: it verifies.
    expect(await verifyAsLog(t.signers[0], entriesOf(t, t.table.dealer))).toEqual([])
  })

  it('a released record that shows its author\'s own nonce, a nonce that is not the pledged one, or blames anyone, fails with its code', () => {
    const { t, hand } = claimAgainstSeat3()
    const counter = entriesOf(t, t.signers[1].peerId).find(e => e.hand === hand && (e.payload as Signed<AbortBody>).body.reason === 'released')?.payload as Signed<AbortBody>
    const resigned = (change: (b: AbortBody) => void): Signed<AbortBody> => {
      const body = structuredClone(counter.body)
      change(body)
      return signDocument('abort', body, t.signers[1])
    }
    const codes = (r: unknown): string[] => verifyAbort(r).problems.map(p => p.code)
    const own = (t.frames.get(t.signers[2].peerId) ?? []).map(f => JSON.parse(new TextDecoder().decode(f)) as Signed<{ seat: number, nonce: string }>)
      .find(d => d.type === 'nonce' && d.body.seat === 1) as AbortBody['evidence'][number]
    expect(codes(resigned(b => { b.evidence = [b.evidence[0], own] }))).toEqual([Reason.ABORT_EVIDENCE])
    const wrong = signDocument('nonce', { ...(counter.body.evidence[1].body as object), nonce: 'f'.repeat(64) }, t.signers[3]) as AbortBody['evidence'][number]
    expect(codes(resigned(b => { b.evidence = [b.evidence[0], wrong] }))).toEqual([Reason.NONCE_MISMATCH])
    expect(codes(resigned(b => { b.evidence = [b.evidence[1]] }))).toEqual([Reason.ABORT_EVIDENCE])
    expect(codes(resigned(b => { b.blame = [t.table.dealer] }))).toEqual([Reason.ABORT_BLAME])
  })
})
