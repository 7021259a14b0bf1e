// The dealer-blind machines in memory, on the real wire encoding: four seats (the dealer's node
// holds seat 0), every seat gets exactly its cards, no node can open another seat's card from what
// it received before the reveal, every receipt verifies, and a bad shuffle, a bad share, a proof
// replayed from another hand or a silent seat each end the hand with a record naming its author.
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { cardPoint, decodeDeck, mulSecret, openWithShares, pointFromHex, scalarFromHex } from '../src/core/blind/index.js'
import { blindCards } from '../src/core/schemes/blind.js'
import { beaconPermutation, blindLayout, dealtDeck } from '../src/core/hand/blind.js'
import { docDigest } from '../src/core/hand/digest.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { verifyAbort } from '../src/core/hand/abort-rules.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import { blindTable as table, ids, signers } from './helpers/blind-memory.js'
import type { BshuffleBody, BsharesBody } from '../src/core/hand/blind-messages.js'
import { noCardsText } from '../src/cli/commands/hand.js'

describe('blind-v1 machines in memory', () => {
  // Four seats on real nodes: test/blind-table.test.ts; here two (duo), which is cheaper in CPU.
  // Seat 1 of this table replays, in a later hand, the shuffle it made for hand 1 (see the replay
  // test below): the honest hand 1 is the one every check of the first test is made on.
  let old: Signed<BshuffleBody> | undefined
  let replay = false
  const shared = table(ids.slice(0, 2), {
    game: 'duo',
    intercept: (from, to, doc) => {
      if (doc.type !== 'bshuffle' || doc.body.seat !== 1 || from !== ids[1]) return doc
      if (!replay) { old = doc; return doc }
      return signDocument('bshuffle', { ...old!.body, hand: doc.body.hand, commit: doc.body.commit }, signers[1])
    }
  })

  it('each seat opens exactly its cards, nobody can open another seat\'s before the reveal, receipts verify', () => {
    const t = shared
    const hand = t.deal()
    expect(t.rejections).toEqual([])
    const cards = ids.slice(0, 2).map(id => t.nodes.get(id)!.seat!.cards(hand))
    expect(cards.map(c => c.map(d => d.cards.length))).toEqual([[8], [8]])
    expect(new Set(cards.flatMap(c => c[0].cards)).size).toBe(16)
    // Before the reveal: for every node, every position owned by another seat stays closed with
    // every share that node received and every key it holds (its own seat's).
    const before = new Map([...t.nodes].map(([id, n]) => [id, [...n.frames]]))
    t.end(hand)
    // Every node logged the same receipt (each assembled its own from what it held); it verifies.
    const receipts = [...t.nodes.values()].map(n => n.log.find(l => l.entry === 'receipt')?.payload)
    const receipt = receipts[0]
    for (const r of receipts) expect(canonicalJson(r)).toBe(canonicalJson(receipt))
    const v = verifyReceipt(receipt)
    expect(v.problems).toEqual([])
    expect(cards.map(c => c[0].cards)).toEqual(v.summary!.deliveries!.filter(d => d.stage === 'deal').map(d => d.cards))
    const commit = receipt.commit.body
    const deck = decodeDeck(receipt.shuffles[1].body.deck, 'deck')
    const dealt = dealtDeck(deck, beaconPermutation(null, docDigest(receipt.shuffles[1]), 32))
    const xs = receipt.reveal.body.secrets.map((s: any) => scalarFromHex(s.body.secret, 'x'))
    const layout = blindLayout(commit, { dealer: 0 })
    const points = blindCards('duo').map(cardPoint)
    for (const [i, id] of ids.slice(0, 2).entries()) {
      const got = before.get(id)!.filter(f => f.type === 'bshares') as Array<Signed<BsharesBody>>
      for (const d of layout.filter(l => l.seat !== i)) {
        for (const pos of d.positions) {
          const shares = got.flatMap(s => s.body.shares.filter(x => x.pos === pos && s.body.to === d.seat).map(x => pointFromHex(x.d, 'd')))
          const m = openWithShares(dealt[pos], [...shares, mulSecret(dealt[pos].b, xs[i])])
          expect(points.some(p => p.equals(m)), `node ${i} opened position ${pos} of seat ${d.seat}`).toBe(false)
        }
      }
    }
  }, 300_000)

  it('a robot seat is played by the dealer node, which opens the robot\'s cards and no human\'s', () => {
    const t = table([ids[0], 'robot'], { game: 'duo' })
    const hand = t.deal()
    expect(t.rejections).toEqual([])
    // The robot's face-down packets (private), opened by the dealer machine; nothing is sent for them.
    const robotCards = t.dealerNode.events.filter(e => e.role === 'dealer' && e.type === 'cards')
    expect(robotCards.map(e => e.seat)).toEqual([1])
    t.end(hand)
    const receipt = t.dealerNode.log.find(l => l.entry === 'receipt')!.payload
    const v = verifyReceipt(receipt)
    expect(v.problems).toEqual([])
    expect(v.summary!.deliveries!.find(d => d.seat === 1 && !d.public)!.cards).toEqual(robotCards[0].cards)
  }, 300_000)

  it('a shuffle whose proof was made for another input is caught and its author named', () => {
    const t = table(ids.slice(0, 2), {
      game: 'duo',
      intercept: (from, to, doc) => {
        if (doc.type !== 'bshuffle' || doc.body.seat !== 1 || from !== ids[1]) return doc
        // Seat 1 proves a shuffle of a deck it made up, and publishes it as its shuffle of the real one.
        const body = doc.body as BshuffleBody
        return signDocument('bshuffle', { ...body, deck: body.deck.slice().reverse() }, signers[1])
      }
    })
    const hand = t.deal()
    for (const n of t.nodes.values()) {
      const abort = n.log.find(l => l.entry === 'abort')
      expect(abort, `node ${n.id.slice(-4)} logged no abort`).toBeDefined()
      expect(abort!.payload.body.reason).toBe('invalid-shuffle')
      expect(abort!.payload.body.blame).toEqual([ids[1]])
      expect(abort!.payload.body.evidence.at(-1).signer).toBe(ids[1])
      expect(verifyAbort(abort!.payload).ok).toBe(true)
    }
    expect(t.nodes.get(ids[1])!.seat!.cards(hand)).toEqual([])
  }, 300_000)

  it('the seat after a bad shuffle shuffles first, then checks it and names its author before any share', () => {
    // Seat 1 shuffles seat 0's output at once (its check waits until its own shuffle has left),
    // then the check names seat 0 and no share leaves any node.
    const sent: Array<{ from: string, type: string, seat?: number }> = []
    const t = table(ids.slice(0, 2), {
      game: 'duo',
      intercept: (from, to, doc) => {
        sent.push({ from, type: doc.type, seat: doc.body.seat })
        if (doc.type !== 'bshuffle' || doc.body.seat !== 0 || from !== ids[0] || to !== ids[0]) return doc
        const body = doc.body as BshuffleBody
        return signDocument('bshuffle', { ...body, deck: body.deck.slice().reverse() }, signers[0])
      }
    })
    t.deal()
    expect(sent.some(m => m.from === ids[1] && m.type === 'bshuffle' && m.seat === 1)).toBe(true)
    expect(sent.some(m => m.type === 'bshares')).toBe(false)
    for (const n of t.nodes.values()) {
      const abort = n.log.find(l => l.entry === 'abort')
      expect(abort, `node ${n.id.slice(-4)} logged no abort`).toBeDefined()
      expect(abort!.payload.body.reason).toBe('invalid-shuffle')
      expect(abort!.payload.body.blame).toEqual([ids[0]])
    }
  }, 300_000)

  it('a wrong decryption share is caught by the seat it was for, naming its author', () => {
    // Seat 0 (the dealer's node) gives seat 1 a share for one card in place of another's.
    const t = table(ids.slice(0, 2), {
      game: 'duo',
      intercept: (from, to, doc) => {
        if (doc.type !== 'bshares' || from !== ids[0] || to !== ids[1] || doc.body.to !== 1) return doc
        const body = doc.body as BsharesBody
        const shares = body.shares.map((s, i) => i === 0 ? { ...s, d: body.shares[1].d } : s)
        return signDocument('bshares', { ...body, shares }, signers[0])
      }
    })
    t.deal()
    const abort = t.nodes.get(ids[1])!.log.find(l => l.entry === 'abort')!.payload
    expect(abort.body.reason).toBe('invalid-shares')
    expect(abort.body.blame).toEqual([ids[0]])
    expect(abort.body.evidence.at(-1).signer).toBe(ids[0])
    expect(verifyAbort(abort).ok).toBe(true)
    expect(t.dealerNode.log.find(l => l.entry === 'abort')?.payload.body.reason).toBe('invalid-shares')
  }, 300_000)

  it('a shuffle proof replayed from another hand, re-signed by its seat, is refused and blamed', () => {
    // Hand 1 of the shared table (the first test) ended with a receipt; seat 1 now replays its shuffle.
    const t = shared
    expect(t.dealerNode.log.map(l => l.entry)).toEqual(['receipt'])
    replay = true
    t.deal()
    const abort = t.dealerNode.log.filter(l => l.entry === 'abort').at(-1)!.payload
    expect(abort.body.reason).toBe('invalid-shuffle')
    expect(abort.body.blame).toEqual([ids[1]])
  }, 300_000)

  it('a seat that never shuffles is named at the deadline', () => {
    const t = table(ids.slice(0, 2), { game: 'duo', intercept: (from, to, doc) => doc.type === 'bshuffle' && from === ids[1] ? undefined : doc })
    const hand = t.deal()
    // Meanwhile 'hand cards' tells each seat its cards are still to come, and why (not "no cards here").
    const waiting = ids.slice(0, 2).map(id => t.nodes.get(id)!.seat!.status().find(h => h.hand === hand))
    expect(waiting.map(h => h?.phase)).toEqual(['shuffling', 'shuffling'])
    expect(noCardsText(hand, waiting[1])).toBe(`hand ${hand}: no cards yet (shuffling; the deal waits for every seat's shuffle, and a beacon-bound hand also for its round)`)
    expect(noCardsText(hand, { phase: 'keyed' })).toMatch(/^hand \d+: no cards yet \(keyed; /)
    expect(noCardsText(hand, undefined)).toBe(`no cards for hand ${hand} here: it is not in play at this node (not started, over, or this node holds no seat)`)
    t.tick(21_000)
    const abort = t.dealerNode.log.find(l => l.entry === 'abort')!.payload
    expect(abort.body.reason).toBe('missing-shuffle')
    expect(abort.body.blame).toEqual([ids[1]])
    expect(verifyAbort(abort).ok).toBe(true)
  }, 300_000)
})
