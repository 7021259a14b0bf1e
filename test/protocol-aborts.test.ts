import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { docDigest } from '../src/core/hand/digest.js'
import { verifyAbort } from '../src/core/hand/verify.js'
import type { AbortBody, Receipt } from '../src/core/hand/messages.js'
import type { Signed } from '../src/core/signed.js'
import { memoryTable, type MemoryTable } from './helpers/memory-table.js'

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
    // Four pledges (the withholder's too) and the three nonces that came: it pledged, then stopped.
    const kinds = docs[0].body.evidence.map(e => `${e.type}:${t.signers.findIndex(s => s.peerId === e.signer)}`).sort()
    expect(kinds).toEqual(['nonce:0', 'nonce:1', 'nonce:2', 'pledge:0', 'pledge:1', 'pledge:2', 'pledge:3'])
  })

  it('a seat away for one hand is named; back, it plays the next hand, which links to the aborted one', () => {
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
      expect(entriesOf(t, p).map(e => e.entry), p).toEqual(p === away ? ['receipt', 'receipt'] : ['receipt', 'abort', 'receipt'])
    }
    const [abort] = abortsOf(t, hand2, [seats[1]])
    expect(abort.body).toMatchObject({ hand: 2, reason: 'missing-pledge', blame: [away] })
    const third = entriesOf(t, away)[1].payload as Receipt
    expect(third.commit.body.prev).toBe(docDigest(abort.body.commit))
  })
})
