// A card opened as it is played on a blind-v1 table (src/core/hand/blind-card-opening.ts): the
// player's opening for one position verifies and opens exactly the card dealt there; every way of
// lying about it (another seat's position, a share of another position or key, another card, a
// malformed opening) is refused with its own code, naming the seat whose share fails.
import { describe, expect, it } from 'vitest'
import { G, mulSecret, proveShare, randomScalar, reEncrypt, seededRandom, type Ciphertext } from '../src/core/blind/index.js'
import { BLIND_COMMITMENT, blindContext, blindJointKey, blindLayout, blindStartingDeck, openDeckWithKeys, proverOf, shareStep } from '../src/core/hand/blind.js'
import { checkCardOpening, makeCardOpening, type OpeningHand, type OpeningShare } from '../src/core/hand/blind-card-opening.js'
import type { CommitBody } from '../src/core/hand/messages.js'
import { signerFromSeed } from '../src/core/identity.js'

const random = seededRandom(new Uint8Array(32).fill(7))
const ids = [0, 1, 2, 3].map(i => signerFromSeed(new Uint8Array(32).fill(60 + i)).peerId)
const commit: CommitBody = {
  table: 't', hand: 3, prev: '0'.repeat(64), scheme: 'blind-v1', game: 'coinche', seats: ids, dealer: ids[0],
  params: { dealer: 0 }, commitment: BLIND_COMMITMENT, beacon: null, deadline: 0
}
const commitDigest = 'ab'.repeat(32)
const secrets = ids.map(() => randomScalar(random))
const keys = secrets.map(x => mulSecret(G, x))
const joint = blindJointKey(keys)
// A deck encrypted under the joint key: what the shuffles leave, without their permutation (not needed here).
const dealt: Ciphertext[] = blindStartingDeck('coinche').map(c => reEncrypt(c, joint, randomScalar(random)))
const hand: OpeningHand = { commit, commitDigest, keys, dealt }
const cards = openDeckWithKeys('coinche', dealt, secrets)
const held = (seat: number): number[] => blindLayout(commit, commit.params).filter(d => d.seat === seat && !d.public).flatMap(d => d.positions)

/** What seat `to` received for position `pos` from every other seat: their proven shares. */
function received (to: number, pos: number): Map<number, Omit<OpeningShare, 'seat'>> {
  return new Map(ids.flatMap((_, k) => k === to ? [] : [[k, proveShare(blindContext(commit, commitDigest, shareStep(pos, k), proverOf(commit, k)), secrets[k], dealt[pos].b, random)] as const]))
}

describe('a blind-v1 card opened as it is played', () => {
  const seat = 1
  const pos = held(seat)[2]
  const opening = makeCardOpening(hand, seat, secrets[seat], pos, cards[pos], received(seat, pos), random)

  it('opens the card dealt at that position, and only checks out for its owner', () => {
    expect(checkCardOpening(hand, seat, held(seat), opening)).toEqual({ ok: true, card: cards[pos] })
    expect(checkCardOpening(hand, 2, held(2), opening)).toMatchObject({ ok: false, code: 'card-opening-not-held' })
  })

  it('another card named: card-opening-card', () => {
    const other = cards.find(c => c !== cards[pos]) as string
    expect(checkCardOpening(hand, seat, held(seat), { ...opening, card: other })).toMatchObject({ ok: false, code: 'card-opening-card', reason: `position ${pos} opens to ${cards[pos]}, not ${other}` })
  })

  it('a share of another position, or made with another key: card-opening-share naming its seat', () => {
    const otherPos = held(seat)[3]
    const moved = { ...opening, shares: opening.shares.map(s => s.seat === 2 ? { seat: 2, ...received(seat, otherPos).get(2)! } : s) }
    expect(checkCardOpening(hand, seat, held(seat), moved)).toMatchObject({ ok: false, code: 'card-opening-share', seat: 2 })
    const forged = { ...opening, shares: opening.shares.map(s => s.seat === 3 ? { seat: 3, ...proveShare(blindContext(commit, commitDigest, shareStep(pos, 3), ids[3]), secrets[0], dealt[pos].b, random) } : s) }
    expect(checkCardOpening(hand, seat, held(seat), forged)).toMatchObject({ ok: false, code: 'card-opening-share', seat: 3 })
  })

  it('the same opening moved to another position dealt to the player: its shares fail', () => {
    const moved = { ...opening, pos: held(seat)[0] }
    expect(checkCardOpening(hand, seat, held(seat), moved)).toMatchObject({ ok: false, code: 'card-opening-share', seat: 0 })
  })

  it('malformed: a share missing, out of seat order, an extra key, a position off the deck', () => {
    for (const bad of [
      { ...opening, shares: opening.shares.slice(1) },
      { ...opening, shares: [...opening.shares].reverse() },
      { ...opening, extra: 1 },
      { ...opening, pos: dealt.length },
      { ...opening, shares: opening.shares.map(s => ({ ...s, d: s.d.toUpperCase() })) },
      null
    ]) expect(checkCardOpening(hand, seat, held(seat), bad)).toMatchObject({ ok: false, code: 'card-opening-form' })
  })

  it('a player without every other share cannot make an opening', () => {
    const partial = received(seat, pos)
    partial.delete(3)
    expect(() => makeCardOpening(hand, seat, secrets[seat], pos, cards[pos], partial, random)).toThrow(/no share of seat 3/)
  })
})
