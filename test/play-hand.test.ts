// A hand played action by action (src/core/games/play-hand.ts): the node that knows the deal and
// every seat's view (its own cards only) follow the same chain, the robots' choices come from the
// hand's key, every seat's view accepts every action, and the views refuse nothing the deal allows.
import { describe, expect, it } from 'vitest'
import { getCardScheme } from '../src/core/schemes/registry.js'
import { engines } from '../src/core/games/index.js'
import { PlayHand } from '../src/core/games/play-hand.js'
import { robotRandom, setupFromDeliveries, stageCards } from '../src/core/games/play-setup.js'
import { replayChain, signAction } from '../src/core/games/action-chain.js'
import { signerFromSeed } from '../src/core/identity.js'
import { nativeSigner } from '../src/crypto/native-crypto.js'
import { verifyMemo } from '../src/daemon/verify-memo.js'
import type { Deal } from '../src/core/schemes/types.js'

// Native Ed25519 behind one verify memo (as a Daemon checks): the crypto is not what these tests are about.
const signers = [1, 2, 3, 4, 5].map(k => { const seed = new Uint8Array(32).fill(k); return nativeSigner(seed, signerFromSeed(seed).peerId) })
const { verify } = verifyMemo()

function dealOf (scheme: string, game: string, seats: number, dealer: number, taker?: number): { key: string, deal: Deal } {
  const s = getCardScheme(scheme)
  const key = s.key({ secret: 'ab'.repeat(32), nonces: Array.from({ length: seats }, (_, i) => (10 + i).toString(16).repeat(64).slice(0, 64)) })
  return { key, deal: s.deal(game, key, { seats, dealer, taker }) }
}

/** Plays a hand out with robots at every seat; returns the full hand, the seats' views and the deal used. */
function playOut (scheme: string, game: string, seats: number, dealer: number) {
  let { key, deal } = dealOf(scheme, game, seats, dealer)
  const engine = engines[game]
  const hand = 'ab'.repeat(32)
  const seatSigners = signers.slice(0, seats).map(s => s.peerId)
  const initial = deal.deliveries.filter(d => d.stage === 'deal' || d.stage === 'turnUp')
  const full = new PlayHand({ engine, setup: setupFromDeliveries(game, seats, dealer, initial), hand, seatSigners, verify })
  const views = Array.from({ length: seats }, (_, s) => new PlayHand({
    engine, hand, seatSigners, verify, view: { seat: s },
    setup: setupFromDeliveries(game, seats, dealer, initial.filter(d => d.public || d.seat === s))
  }))
  for (let guard = 0; guard < 400 && !full.over(); guard++) {
    const request = full.pending()
    if (request !== null) {
      if (request.inputs?.taker !== undefined) deal = dealOf(scheme, game, seats, dealer, request.inputs.taker).deal
      const cards = stageCards(deal.deliveries, request)
      expect(cards).not.toBeNull()
      expect(full.deliver(request.stage, cards!)).toBeNull()
      for (const [s, v] of views.entries()) {
        const mine = stageCards(deal.deliveries.filter(d => d.public || d.seat === s), request) ?? {}
        expect(v.deliver(request.stage, mine)).toBeNull()
      }
      continue
    }
    const seat = full.toAct() as number
    // The acting seat decides from its own view, as its node does.
    const action = views[seat].robot(seat, robotRandom(key, full.chain.length + 1))
    const signed = views[seat].sign(signers[seat], seat, action)
    if (!signed.ok) throw new Error(`${signed.refusal.code} ${signed.refusal.reason}`)
    expect(full.accept(signed.doc)).toBeNull()
    for (const [s, v] of views.entries()) if (s !== seat) expect(v.accept(signed.doc), `seat ${s}`).toBeNull()
  }
  expect(full.over()).toBe(true)
  return { full, views, deal, key, seatSigners, hand, engine }
}

describe('a hand played with robots, every seat on its own view', () => {
  for (const [scheme, game, seats] of [['atout-v1', 'coinche', 4], ['atout-v1', 'belote', 4], ['atout-v1', 'duo', 2], ['tarot-v1', 'tarot', 4], ['tarot-v1', 'tarot', 5], ['tarot-v1', 'tarot', 3]] as const) {
    it(`${game} at ${seats}: the views follow the whole chain and the chain replays to the same score`, () => {
      for (const dealer of seats === 4 ? [0, 1] : [1]) {
        const { full, views, deal, seatSigners, hand, engine } = playOut(scheme, game, seats, dealer)
        for (const v of views) expect(v.over()).toBe(true)
        const r = replayChain(engine, setupFromDeliveries(game, seats, dealer, deal.deliveries), full.chain, { hand, seatSigners, verify, stage: req => stageCards(deal.deliveries, req), complete: true })
        if (!r.ok) throw new Error(`${r.code} ${r.reason}`)
        expect(engine.score(r.state)).toEqual(full.score())
      }
    })
  }

  it('a seat never signs an illegal action for itself, and the node that knows the deal refuses a card not held', () => {
    const { key, deal } = dealOf('atout-v1', 'coinche', 4, 0)
    const engine = engines.coinche
    const seatSigners = signers.slice(0, 4).map(s => s.peerId)
    const setup = setupFromDeliveries('coinche', 4, 0, deal.deliveries)
    const full = new PlayHand({ engine, setup, hand: 'cd'.repeat(32), seatSigners, verify })
    const view = new PlayHand({ engine, setup: setupFromDeliveries('coinche', 4, 0, deal.deliveries.filter(d => d.seat === 1)), hand: 'cd'.repeat(32), seatSigners, view: { seat: 1 } })
    // Seat 1 opens the auction; a card now is refused before anything is signed.
    const early = view.sign(signers[1], 1, { type: 'card', card: deal.hands![1][0] })
    expect(early).toMatchObject({ ok: false, refusal: { code: 'chain-illegal-action', rule: 'wrong-phase' } })
    expect(view.chain).toHaveLength(0)
    const other = new PlayHand({ engine, setup: setupFromDeliveries('coinche', 4, 0, deal.deliveries.filter(d => d.seat === 3)), hand: 'cd'.repeat(32), seatSigners, view: { seat: 3 } })
    // Bids all round: seat 1 bids 80, the others pass.
    for (const [seat, action] of [[1, { type: 'bid', value: 80, suit: 'S' }], [2, { type: 'pass' }], [3, { type: 'pass' }], [0, { type: 'pass' }]] as const) {
      const s = full.sign(signers[seat], seat, action)
      if (!s.ok) throw new Error(s.refusal.reason)
      expect(view.accept(s.doc)).toBeNull()
      expect(other.accept(s.doc)).toBeNull()
    }
    // Seat 1 leads a card it does not hold, re-signed with its key: the full hand and seat 1's own view refuse it; seat 3's view cannot tell.
    const notHeld = deal.hands![2][0]
    const forged = full.chain.at(-1)!
    const doc = signAction(signers[1], 'cd'.repeat(32), forged, 1, { type: 'card', card: notHeld })
    expect(full.accept(doc)).toMatchObject({ code: 'chain-illegal-action', rule: 'card-not-held' })
    expect(view.accept(doc)).toMatchObject({ code: 'chain-illegal-action', rule: 'card-not-held' })
    expect(other.accept(doc)).toBeNull()
    expect(robotRandom(key, 5)(10)).toBe(robotRandom(key, 5)(10))
  })
})

describe('draws from the key (src/core/games/play-draws.ts)', () => {
  it('a shoe-v1 draw n is bitjack21\'s shoe card n for r1 = the secret and r2 = SHA-256 of the nonces; a dice draw is seriesRoll', async () => {
    const { drawCards } = await import('../src/core/games/play-draws.js')
    const { shoeDraw } = await import('../src/core/games/blackjack-shoe.js')
    const { seriesRoll } = await import('../src/core/games/dice-series.js')
    const { sha256Hex } = await import('../src/core/bytes.js')
    const secret = 'ab'.repeat(32)
    const nonces = ['01'.repeat(32), '02'.repeat(32)]
    const shoe = getCardScheme('shoe-v1')
    const key = shoe.key({ secret, nonces })
    const r2 = sha256Hex(`shoe-v1|${nonces.join('|')}`)
    expect(key).toBe(secret + r2)
    const bitjack = getCardScheme('bitjack21').deck(getCardScheme('bitjack21').key({ secret, nonces: [r2] }))
    for (const n of [0, 1, 7, 415]) {
      expect(drawCards('shoe', key, { stage: 'draw', inputs: { n } }, null)).toEqual({ card: [bitjack[n]] })
      expect(shoeDraw(key, n)).toBe(bitjack[n])
    }
    const diceKey = 'cd'.repeat(32)
    const state = { asked: { n: 3, seat: 0, expression: '2d6' } }
    expect(drawCards('dice', diceKey, { stage: 'roll', inputs: { n: 3, seat: 0 } }, state)).toEqual({ n: ['3'], dice: seriesRoll(diceKey, 3, '2d6').rolls.map(String) })
  })
})

describe('a player\'s words (src/core/games/play-words.ts)', () => {
  it('bids and cards in words become the games\' actions; anything else is refused with the forms', async () => {
    const { parseBid, cardAction, actionWords } = await import('../src/core/games/play-words.js')
    expect(parseBid('coinche', ['80H'])).toEqual({ type: 'bid', value: 80, suit: 'H' })
    expect(parseBid('duo', ['capot', 's'])).toEqual({ type: 'bid', value: 'capot', suit: 'S' })
    expect(parseBid('coinche', ['surcoinche'])).toEqual({ type: 'surcoinche' })
    expect(parseBid('belote', ['take', 'D'])).toEqual({ type: 'take', suit: 'D' })
    expect(parseBid('tarot', ['garde-sans'])).toEqual({ type: 'bid', bid: 'garde-sans' })
    expect(parseBid('tarot', ['pass'])).toEqual({ type: 'pass' })
    expect(() => parseBid('coinche', ['80'])).toThrow(/a value and a suit/)
    expect(cardAction('tarot', 'exc')).toEqual({ type: 'play', card: 'EXC' })
    expect(cardAction('belote', 'as')).toEqual({ type: 'card', card: 'AS' })
    expect(actionWords({ type: 'bid', value: 100, suit: 'S' })).toBe('bid 100 S')
  })
})
