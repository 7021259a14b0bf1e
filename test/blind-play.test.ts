// Played hands at a blind-v1 table, in memory (docs/dealer-blind.md §15): four seats play a coinche
// hand whose every card is opened as it is played; every seat checks each opening when it comes
// (the dealer's node too, which knows no card); the receipt carries the chain and the score, which
// the verifier replays with every opening. A card whose opening is bad (re-signed with the test
// keys, so that only the opening rule can catch it) ends the hand with its seat named.
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { checkAbortRecord } from '../src/core/hand/abort-rules.js'
import { blindOpeningRule, blindPlayOutcome, type BlindPlayHand } from '../src/core/hand/blind-play.js'
import { beaconPermutation, blindLayout, dealtDeck } from '../src/core/hand/blind.js'
import { docDigest } from '../src/core/hand/digest.js'
import { decodeDeck, pointFromHex } from '../src/core/blind/index.js'
import type { ActionDoc } from '../src/core/games/action-chain.js'
import { blindTable, dealUntilPlayed, ids, receiptsOf, signers } from './helpers/blind-memory.js'


/** The opening rule of a receipt's hand, rebuilt from the receipt (as the verifier does). */
function openingHandOf (receipt: any): BlindPlayHand {
  const commit = receipt.commit.body
  const n = commit.seats.length
  const deck = decodeDeck(receipt.shuffles[n - 1].body.deck, 'deck')
  const dealt = dealtDeck(deck, beaconPermutation(null, docDigest(receipt.shuffles[n - 1]), deck.length))
  return { commit, commitDigest: docDigest(receipt.commit), keys: receipt.keys.map((k: any) => pointFromHex(k.body.pub, 'pub')), dealt, layout: blindLayout(commit, receipt.reveal.body.params), stages: receipt.reveal.body.stages }
}

/** One table's hand played out (the first three tests share it: each hand costs every node ~600 share checks). */
let shared: { t: ReturnType<typeof blindTable>, hand: number, receipt: any } | undefined
function playedOut (): { t: ReturnType<typeof blindTable>, hand: number, receipt: any } {
  if (shared !== undefined) return shared
  const t = blindTable(ids, { play: true })
  shared = { t, ...dealUntilPlayed(t) }
  return shared
}

describe('a blind-v1 table plays its hands, each card opened as it is played', () => {
  it('four seats play a coinche hand: every card carries its opening, every node checks it, the receipt replays', () => {
    const { t, hand, receipt } = playedOut()
    expect(t.rejections).toEqual([])
    const receipts = receiptsOf(t, hand)
    for (const r of receipts) expect(canonicalJson(r)).toBe(canonicalJson(receipt))
    const cards = receipt.play.actions.filter((a: ActionDoc) => (a.body.action as { type: string }).type === 'card')
    expect(cards).toHaveLength(32)
    // Each card's opening: one share per seat for its position alone, for the card played.
    for (const a of cards) {
      expect(a.body.opening.card).toBe(a.body.action.card)
      expect(a.body.opening.shares.map((s: any) => s.seat)).toEqual([0, 1, 2, 3])
    }
    // The bids carry none.
    for (const a of receipt.play.actions) if (a.body.action.type !== 'card') expect(a.body.opening).toBeUndefined()
    const v = verifyReceipt(receipt)
    expect(v.problems).toEqual([])
    expect(v.status).toBe('verified')
    expect(v.summary!.play!.tricks).toBe(8)
    expect(v.summary!.play!.score!.points).toEqual(receipt.play.score.points)
    // Every seat took every other seat's action (after checking its opening), and played its own.
    for (const node of t.nodes.values()) {
      const taken = node.events.filter((e: any) => e.role === 'seat' && e.hand === hand && e.type === 'action')
      expect(taken).toHaveLength(receipt.play.actions.length)
    }
    // The dealer's node announced the game's end with the replayed score, once the deal opened.
    const played = t.dealerNode.events.find((e: any) => e.role === 'dealer' && e.hand === hand && e.type === 'played')
    expect(played.score.points).toEqual(receipt.play.score.points)
    // The opening rule catches a card played from another seat's position, or twice.
    const rule = blindOpeningRule(openingHandOf(receipt))
    const first = cards[0] as ActionDoc
    const earlier = receipt.play.actions.slice(0, receipt.play.actions.indexOf(first))
    expect(rule(first.body, earlier)).toBeNull()
    expect(rule({ ...first.body, seat: (first.body.seat + 1) % 4 }, earlier)?.rule).toBe('card-opening-not-held')
    expect(rule(first.body, [...earlier, first])?.rule).toBe('card-opening-not-held')
    expect(rule({ ...first.body, opening: undefined }, earlier)?.rule).toBe('card-opening-form')
    expect(rule({ ...first.body, action: { type: 'card', card: cards[1].body.action.card } }, earlier)?.rule).toBe('card-opening-card')
  })

  it('a receipt whose action chain is altered fails', () => {
    const { receipt } = playedOut()
    const altered = structuredClone(receipt)
    const i = altered.play.actions.findIndex((a: any) => a.body.action.type === 'card')
    const share = altered.play.actions[i].body.opening.shares[1]
    share.s = (share.s[0] === '0' ? '1' : '0') + share.s.slice(1)
    expect(verifyReceipt(altered).ok).toBe(false)
    // Dropped: the reveal names another chain.
    const shorter = structuredClone(receipt)
    shorter.play.actions.pop()
    expect(verifyReceipt(shorter).problems.map(p => p.code)).toContain('play-reveal')
  })

  it('a card whose opening fails, re-signed with the seat\'s key, ends the hand naming that seat; the receipt verifies', () => {
    let tampered = false
    const t = blindTable(ids, {
      play: true,
      intercept: (from, to, doc) => {
        // Seat 2's first card: seat 0's share in its opening spoilt, the action and the PLAY signed again with seat 2's key.
        if (tampered || doc.type !== 'play' || from !== ids[2] || to !== ids[0]) return doc
        const a = doc.body.actions[0] as ActionDoc
        if ((a.body.action as { type: string }).type !== 'card') return doc
        tampered = true
        const opening = structuredClone(a.body.opening) as { shares: Array<{ s: string }> }
        opening.shares[0].s = (opening.shares[0].s[0] === '0' ? '1' : '0') + opening.shares[0].s.slice(1)
        const bad = signDocument('game-action', { ...a.body, opening }, signers[2])
        return signDocument('play', { ...doc.body, actions: [bad] }, signers[2]) as Signed<any>
      }
    })
    let hand = 0
    for (let deals = 0; deals < 6 && !tampered; deals++) hand = t.deal()
    expect(tampered).toBe(true)
    const refused = t.dealerNode.events.find((e: any) => e.role === 'dealer' && e.hand === hand && e.type === 'play-refused')
    expect(refused.seat).toBe(2)
    expect(refused.reason).toContain('card-opening-share')
    const receipts = receiptsOf(t, hand)
    for (const r of receipts) expect(canonicalJson(r)).toBe(canonicalJson(receipts[0]))
    const v = verifyReceipt(receipts[0])
    expect(v.problems).toEqual([])
    expect(v.summary!.play!.refused).toMatchObject({ seat: 2, rule: 'card-opening-share' })
    expect(receipts[0].play.score).toBeNull()
  })

  it('a seat whose cards never open (another seat withholds its shares) is not timed out: the seat that withholds is named', () => {
    // Seat 2's shares for seat 1's cards never reach the dealer. The turn limit (revealMs / 4 = 15 s)
    // comes before the shares' deadline (contributeMs = 20 s): it must not name a seat without its cards.
    const t = blindTable(ids, { play: true, intercept: (from, _to, doc) => (doc.type === 'bshares' && from === ids[2] && doc.body.to === 1 ? undefined : doc) })
    const hand = t.deal()
    t.tick(15_001)
    expect(t.dealerNode.events.filter((e: any) => e.type === 'play-refused')).toEqual([])
    expect(t.dealerNode.log.filter(l => l.entry === 'abort')).toEqual([])
    t.tick(5_000)
    const records = t.dealerNode.log.filter(l => l.entry === 'abort').map(l => l.payload)
    expect(records.map((r: any) => [r.body.hand, r.body.reason, r.body.blame])).toEqual([[hand, 'missing-shares', [ids[2]]]])
    expect(checkAbortRecord(records[0], { table: { id: 'blind-mem', dealer: ids[0], seats: ids } }).problems).toEqual([])
    expect(t.rejections).toEqual([])
  })

  it('a card the rules refuse, seen only once the deal opens, ends the hand there: the outcome every node computes', () => {
    const { receipt } = playedOut()
    const hand = openingHandOf(receipt)
    const v = verifyReceipt(receipt)
    const deliveries = v.summary!.deliveries!
    // The last card of the chain swapped with the last-but-one trick's card of the same seat played
    // earlier: the seat then plays, at that point, a card it no longer holds.
    const actions = receipt.play.actions as ActionDoc[]
    const last = actions.at(-1)!
    const again = actions.findLast(a => a !== last && a.body.seat === last.body.seat && (a.body.action as { type: string }).type === 'card')!
    const replay = signDocument('game-action', { ...last.body, action: again.body.action, opening: again.body.opening }, signers[last.body.seat]) as ActionDoc
    const outcome = blindPlayOutcome(hand, [...actions.slice(0, -1), replay], deliveries, {})
    expect(outcome.play.actions).toHaveLength(actions.length - 1)
    expect(outcome.play.refused).toEqual(replay)
    expect(outcome.play.score).toBeNull()
    expect(outcome.final).toBeUndefined()
  })
})

