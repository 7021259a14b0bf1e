// Played hands at a commit–reveal table, in memory (src/protocol/play.ts): the dealer's node and
// the seats' nodes play a hand committed as played, robots and autoplaying seats alike; the stages
// come because the game asks; the hand is revealed when the game is over, and its receipt carries
// the chain and the score, which the verifier replays (docs/games.md "Verifying a played hand").
import { describe, expect, it } from 'vitest'
import { signerFromSeed, type Signer } from '../src/core/identity.js'
import { nativeSigner } from '../src/crypto/native-crypto.js'
import { verifyMemo } from '../src/daemon/verify-memo.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import { PlayingDealer, PlayingSeat } from '../src/protocol/play.js'
import { inMemoryTable } from '../src/protocol/in-memory.js'
import type { Effect, HandEvent, MachineInit, TableSpec } from '../src/protocol/types.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import type { Receipt } from '../src/core/hand/messages.js'
import { actionDigest, replayChain, signAction, type ActionDoc } from '../src/core/games/action-chain.js'
import { docDigest } from '../src/core/hand/digest.js'
import { engines } from '../src/core/games/index.js'
import { setupFromDeliveries } from '../src/core/games/play-setup.js'
import { actionSigners } from '../src/core/hand/play-verify.js'

function table (game: string, seats: Array<'human' | 'robot'>, scheme = game === 'tarot' ? 'tarot-v1' : 'atout-v1', byHand?: { manual: number, playMs: number }) {
  // Native Ed25519 behind one verify memo per node, as a Daemon signs and checks.
  const signers = seats.map((_, i) => { const seed = new Uint8Array(32).fill(i + 1); return nativeSigner(seed, signerFromSeed(seed).peerId) })
  const memos = new Map(signers.map(s => [s.peerId, verifyMemo()]))
  const spec: TableSpec = {
    id: 't', game, scheme,
    seats: seats.map((s, i) => (s === 'robot' ? 'robot' : signers[i].peerId)), dealer: signers[0].peerId
  }
  let counter = 0
  let clock = 1_700_000_000_000
  const init = (signer: Signer): MachineInit => ({
    table: spec, signer: memos.get(signer.peerId)!.signer(signer), verifyDoc: memos.get(signer.peerId)!.verify, timeouts: { contributeMs: 5_000, ackMs: 5_000, revealMs: 600_000, ...(byHand !== undefined && signer === signers[byHand.manual] ? { playMs: byHand.playMs } : {}) }, beacon: null,
    now: () => clock, random: n => new Uint8Array(n).fill(++counter % 251)
  })
  let dealer = new PlayingDealer(init(signers[0]))
  /** What each node saved, by peer id (the dealer's node: its dealer's and its seat's keys). */
  const persisted = new Map<string, Map<string, unknown>>()
  const saved = (who: string): Map<string, unknown> => persisted.get(who) ?? persisted.set(who, new Map()).get(who)!
  /** A machine's saved meta and hand records, read back as a host reads them (one key range, in key order). */
  const readBack = (who: string, prefix: string): { meta: unknown, hands: unknown[] } => {
    const mine = [...saved(who).entries()].filter(([k]) => k.startsWith(prefix)).sort((a, b) => (a[0] < b[0] ? -1 : 1))
    return { meta: structuredClone(mine.find(([k]) => k.endsWith('/meta'))?.[1]), hands: mine.filter(([k]) => k.includes('/hand/')).map(([, v]) => structuredClone(v)) }
  }
  const seatMachines = new Map<string, PlayingSeat>(seats.flatMap((s, i) => (s === 'human' ? [[signers[i].peerId, new PlayingSeat({ ...init(signers[i]), autoplay: byHand?.manual !== i })] as const] : [])))
  const appended: Array<{ who: string, entry: string, payload: unknown }> = []
  const events: Array<{ who: string, hand: number, event: HandEvent }> = []
  const rejections: string[] = []
  let intercept: ((from: string, to: string, doc: Signed<unknown>) => Signed<unknown> | undefined) | undefined
  const run = inMemoryTable({
    dealerId: spec.dealer,
    // Read at each delivery: a restarted dealer takes the old one's place.
    get dealer () { return dealer },
    seats: seatMachines,
    intercept: () => intercept,
    onEffect: (who, e, role) => {
      if (e.kind === 'append') appended.push({ who, entry: e.entry, payload: e.payload })
      if (e.kind === 'persist') { if (e.value === null) saved(who).delete(e.key); else saved(who).set(e.key, structuredClone(e.value)) }
      if (e.kind === 'event') events.push({ who, hand: e.hand, event: e.event })
    },
    onRejection: (to, err) => { rejections.push(`${to.slice(-4)}: ${err.message}`) }
  })
  return {
    spec, signers, get dealer () { return dealer }, seatMachines,
    /** The dealer's node restarts: a new machine restored from what the old one saved and logged. */
    restartDealer: () => {
      dealer = new PlayingDealer(init(signers[0]))
      const { meta, hands } = readBack(spec.dealer, 'dealer/')
      run(spec.dealer, dealer.restore(meta, hands, appended.filter(a => a.who === spec.dealer).map(a => ({ kind: a.entry, payload: a.payload }))), 'dealer')
    },
    /** Seat `i`'s node restarts (not the dealer's): a new seat machine restored from what the old one saved. */
    restartSeat: (i: number) => {
      const peer = signers[i].peerId
      const seat = new PlayingSeat({ ...init(signers[i]), autoplay: byHand?.manual !== i })
      seatMachines.set(peer, seat)
      const { meta, hands } = readBack(peer, 'seat/')
      run(peer, seat.restore(meta, hands), 'seat')
    },
    /** What each node saved under `prefix`. */
    savedKeys: (who: string, prefix: string) => [...saved(who).keys()].filter(k => k.startsWith(prefix)),
    appended, events, rejections, run,
    setIntercept: (f: typeof intercept) => { intercept = f },
    now: () => clock,
    advance: (ms: number) => { clock += ms },
    deal: (dealerSeat = 0) => { const r = dealer.startHand({ dealer: dealerSeat, play: true }); run(spec.dealer, r.effects, 'dealer'); return r.hand }
  }
}

/** The verifier with a native signature check behind a memo, as a node runs it (the crypto is not under test). */
const memo = verifyMemo()
const check = (r: unknown) => verifyReceipt(r, { verifyDoc: memo.verify })

/** One receipt per node (the dealer's node logs it once, whichever of its machines asks). */
const receiptsOf = (t: ReturnType<typeof table>) => {
  const seen = new Set<string>()
  const key = (a: { who: string, payload: unknown }) => `${a.who}/${(a.payload as Receipt).commit.body.hand}`
  return t.appended.filter(a => a.entry === 'receipt' && !seen.has(key(a)) && seen.add(key(a)) !== undefined).map(a => a.payload as Receipt)
}

type Actions = NonNullable<Receipt['play']>['actions']

/**
 * `receipt` with the chain `actions` (and `play` fields), re-sealed with the test keys as an honest
 * dealer and seats would have signed it: the REVEAL names that chain, signed by the dealer, and
 * every ACK countersigns that REVEAL. Only the rule under test can then catch what was changed.
 */
function resealed (t: ReturnType<typeof table>, receipt: Receipt, actions: ActionDoc[], play: Partial<NonNullable<Receipt['play']>> = {}): Receipt {
  const last = actions.at(-1)
  const reveal = signDocument('reveal', { ...receipt.reveal.body, play: { actions: actions.length, head: last === undefined ? '0'.repeat(64) : actionDigest(last) } }, t.signers[0])
  const acks = receipt.acks.map(a => signDocument('ack', { ...a.body, reveal: docDigest(reveal) }, t.signers[a.body.seat]))
  return { ...receipt, reveal: reveal as Receipt['reveal'], acks: acks as Receipt['acks'], play: { ...receipt.play!, ...play, actions: actions as Actions } }
}

/** Deals until a hand is played out (not thrown in for want of a bid): its receipt, as the dealer's node logged it. */
function playedHand (t: ReturnType<typeof table>): Receipt {
  for (let i = 0; i < 12; i++) {
    const hand = t.deal(i % t.spec.seats.length)
    const r = receiptsOf(t).filter(x => x.commit.body.hand === hand)
    if (r.length > 0 && (check(r[0]).summary?.play?.tricks ?? 0) > 0) return r[0]
  }
  throw new Error('no hand played out in 12 deals')
}

describe('a played hand at a commit–reveal table', () => {
  for (const [game, seats] of [
    ['coinche', ['human', 'human', 'robot', 'robot']],
    ['belote', ['human', 'robot', 'human', 'robot']],
    ['duo', ['human', 'human']],
    ['tarot', ['human', 'human', 'robot', 'robot', 'robot']]
  ] as const) {
    it(`${game} at ${seats.length}: played to its end, revealed, and the receipt replays to the score every node saw`, () => {
      const t = table(game, [...seats])
      const hand = playedHand(t).commit.body.hand
      expect(t.rejections).toEqual([])
      const receipts = receiptsOf(t).filter(x => x.commit.body.hand === hand)
      // The dealer's node logs once; the other human seats once each.
      expect(receipts.length).toBe(seats.filter(s => s === 'human').length)
      const r = receipts[0]
      expect(r.play?.score).not.toBeNull()
      const verdict = check(r)
      expect(verdict.problems).toEqual([])
      expect(verdict.ok).toBe(true)
      expect(verdict.summary?.play?.score).toMatchObject(r.play?.score ?? {})
      expect(verdict.summary?.play?.actions).toBe(r.play?.actions.length)
      expect(verdict.summary?.play?.tricks).toBe(game === 'duo' ? 16 : game === 'tarot' ? (seats.length === 5 ? 15 : 72 / seats.length) : 8)
      const played = t.events.find(e => e.hand === hand && e.event.type === 'played')?.event as Extract<HandEvent, { type: 'played' }>
      expect(played.score).toMatchObject(r.play?.score ?? {})
      // Every human seat saw every action of the chain.
      for (const peer of t.seatMachines.keys()) {
        const seen = t.events.filter(e => e.hand === hand && e.who === peer && e.event.type === 'action').map(e => (e.event as { n: number }).n)
        expect(new Set(seen).size, peer).toBe(r.play?.actions.length)
      }
    })
  }

  it('the host cannot end a hand in play, nor deal its stages by hand', () => {
    const t = table('belote', ['human', 'human', 'human', 'human'])
    // Nothing reaches the seats: the hand waits at the first bid.
    t.setIntercept((_from, _to, doc) => (doc.type === 'play' ? undefined : doc))
    const hand = t.deal(0)
    expect(() => t.dealer.end(hand)).toThrow(/is being played/)
    expect(() => t.dealer.deliverStage(hand, 'take', 1)).toThrow(/when the game asks/)
  })

  for (const kind of ['card-not-held', 'must-follow'] as const) {
    it(`a card of rule ${kind}, re-signed with the seat's key, ends the hand: the receipt names the seat with its action, and verifies`, () => {
      const t = table('coinche', ['human', 'human', 'robot', 'robot'])
      const seat1 = t.signers[1]
      let forged: string | undefined
      // Seat 1's node plays as usual; its first card that can be replaced is, by one the rule forbids.
      t.setIntercept((from, _to, doc) => {
        if (forged !== undefined || doc.type !== 'play' || from !== seat1.peerId) return doc
        const body = doc.body as { table: string, hand: number, commit: string, actions: ActionDoc[] }
        const a = body.actions[0]
        if ((a.body.action as { type: string }).type !== 'card') return doc
        const full = t.dealer.playing(body.hand)!
        const state = full.state as { hands: string[][], play: { trick: Array<{ card: string }> } }
        const legal = full.legal(1).map(x => (x as { card: string }).card)
        const card = kind === 'card-not-held' ? state.hands[2][0] : state.hands[1].find(c => !legal.includes(c))
        if (card === undefined) return doc
        forged = card
        const bad = signDocument('game-action', { ...a.body, action: { type: 'card', card } }, seat1)
        return signDocument('play', { ...body, actions: [bad] }, seat1)
      })
      let hand = 0
      for (let i = 0; i < 12 && forged === undefined; i++) hand = t.deal(i % 4)
      expect(forged).toBeDefined()
      // Seat 1's own node holds the action it sent before the forgery: it does not countersign a
      // chain without it. The dealer completes the receipt without it once ackMs is out.
      t.advance(5_001)
      t.run(t.spec.dealer, t.dealer.tick(t.now()), 'dealer')
      expect(t.events.find(e => e.hand === hand && e.event.type === 'play-refused')?.event).toMatchObject({ seat: 1 })
      const receipt = receiptsOf(t).find(r => r.commit.body.hand === hand)!
      expect(receipt.play?.refused?.body.seat).toBe(1)
      expect(receipt.play?.score).toBeNull()
      const verdict = check(receipt)
      expect(verdict.problems).toEqual([])
      expect(verdict.summary?.missingAcks).toEqual([1])
      expect(verdict.summary?.play?.refused).toMatchObject({ seat: 1, rule: kind })
      // A refused action the rules allow (the dealer blaming an honest seat) fails.
      const deliveries = verdict.summary!.deliveries!
      const replayed = replayChain(engines.coinche, setupFromDeliveries('coinche', 4, receipt.commit.body.params.dealer, deliveries), receipt.play!.actions, { hand: receipt.play!.refused!.body.hand, seatSigners: actionSigners(receipt.commit.body.seats, receipt.commit.body.dealer), stage: () => null })
      if (!replayed.ok) throw new Error(replayed.reason)
      const allowed = engines.coinche.legal(replayed.state, 1)[0]
      const honest = signAction(seat1, receipt.play!.refused!.body.hand, (receipt.play!.actions.at(-1) ?? null) as ActionDoc | null, 1, allowed)
      expect(check({ ...receipt, play: { ...receipt.play!, refused: honest as never } }).problems.map(p => p.code)).toEqual(['play-refused'])
    })
  }
})

describe('verifying a played hand\'s receipt', () => {
  const t = table('coinche', ['human', 'robot', 'human', 'robot'])
  const receipt = playedHand(t)
  const signerOf = (seat: number) => (receipt.commit.body.seats[seat] === 'robot' ? t.signers[0] : t.signers[seat])
  /** The chain from action `from` on signed again (so only the rule under test can catch it), after `change`. */
  function resign (change: (actions: ActionDoc[]) => ActionDoc[], from: number): Receipt {
    const actions = change(structuredClone(receipt.play!.actions) as ActionDoc[])
    const out: ActionDoc[] = actions.slice(0, from)
    for (const a of actions.slice(from)) out.push(signAction(signerOf(a.body.seat), a.body.hand, out.at(-1) ?? null, a.body.seat, a.body.action))
    return resealed(t, receipt, out)
  }
  const codes = (r: unknown) => check(r).problems.map(p => p.code)
  const firstCard = receipt.play!.actions.findIndex(a => (a.body.action as { type: string }).type === 'card')

  it('the receipt as logged verifies', () => {
    expect(codes(receipt)).toEqual([])
  })
  it('a card the seat did not hold fails with play-card-not-held', () => {
    const seat = receipt.play!.actions[firstCard].body.seat
    const other = check(receipt).summary!.hands![(seat + 1) % 4][0]
    expect(codes(resign(a => { (a[firstCard].body.action as { card: string }).card = other; return a.slice(0, firstCard + 1) }, firstCard))).toEqual(['play-card-not-held'])
  })
  it('an illegal action fails with play-illegal', () => {
    // A bid after the auction is over.
    expect(codes(resign(a => { a[firstCard].body.action = { type: 'pass' }; return a.slice(0, firstCard + 1) }, firstCard))).toEqual(['play-illegal'])
  })
  it('a broken chain (an action dropped, not re-signed) fails with play-chain', () => {
    const actions = [...receipt.play!.actions] as ActionDoc[]
    actions.splice(firstCard + 2, 1)
    expect(codes(resealed(t, receipt, actions))).toEqual(['play-chain'])
    // The chain as logged, but not the one the REVEAL (and so every ACK) names.
    expect(codes({ ...receipt, play: { ...receipt.play!, actions: receipt.play!.actions.slice(0, -1) } })).toEqual(['play-chain'])
  })
  it('a changed score, or a chain cut short with its score, fails with play-score', () => {
    const score = { ...receipt.play!.score!, points: receipt.play!.score!.points.map(p => p + 10) }
    expect(codes({ ...receipt, play: { ...receipt.play!, score } })).toEqual(['play-score'])
    expect(codes(resealed(t, receipt, receipt.play!.actions.slice(0, -1) as ActionDoc[]))).toEqual(['play-score'])
  })
  it('a played hand without its chain fails with play-missing; a hand not played verifies as before', () => {
    const { play, ...bare } = receipt
    void play
    expect(codes(bare)).toEqual(['play-missing'])
  })
})

describe('draws on the chain: a blackjack round from bitjack21\'s shoe, a dice series under dice-v1', () => {
  for (const [game, scheme, seats] of [['shoe', 'shoe-v1', ['human', 'human', 'robot']], ['dice', 'dice-v1', ['human', 'human', 'robot']]] as const) {
    it(`${game}: every draw is the dealer's stage action, the receipt verifies, and a changed, skipped or repeated draw fails`, () => {
      const t = table(game, [...seats], scheme)
      const hand = t.deal(0)
      expect(t.rejections).toEqual([])
      const receipt = receiptsOf(t).find(r => r.commit.body.hand === hand) as Receipt
      expect(check(receipt).problems).toEqual([])
      const actions = receipt.play!.actions
      const draws = actions.flatMap((a, i) => (a.body.seat === -1 ? [i] : []))
      expect(draws.length).toBeGreaterThan(game === 'dice' ? 20 : 3)
      const dealer = t.signers[0]
      /** The chain from `from` on re-signed (the dealer's own key for its draws, the seats' for theirs) after `change`. */
      const resigned = (change: (a: ActionDoc[]) => ActionDoc[], from: number): Receipt => {
        const changed = change(structuredClone(actions) as ActionDoc[])
        const out: ActionDoc[] = changed.slice(0, from)
        for (const a of changed.slice(from)) out.push(signAction(a.body.seat === -1 ? dealer : t.signers[a.body.seat], a.body.hand, out.at(-1) ?? null, a.body.seat, a.body.action))
        return resealed(t, receipt, out)
      }
      const first = draws[1]
      const stage = (a: ActionDoc) => a.body.action as { inputs: { n: number, faceUp?: number }, cards: Record<string, string[]> }
      const codesOf = (r: Receipt) => check(r).problems.map(p => `${p.code} ${p.message.split(': ')[2]}`)
      // Changed: another card, or other dice.
      const changed = resigned(a => {
        const c = stage(a[first]).cards
        if (game === 'shoe') c.card = [c.card[0] === 'AS' ? 'KS' : 'AS']
        else c.dice = c.dice.map(d => String(d === '1' ? 2 : 1))
        return a
      }, first)
      expect(codesOf(changed)[0]).toBe('play-draw draw-mismatch')
      // Skipped: the draw names the number after the one asked for; repeated: the one before.
      expect(codesOf(resigned(a => { stage(a[first]).inputs.n += 1; return a }, first))[0]).toBe('play-draw draw-skipped')
      expect(codesOf(resigned(a => { stage(a[first]).inputs.n -= 1; return a }, first))[0]).toBe('play-draw draw-repeated')
      if (game === 'shoe') {
        // The bank's hole card travels with no card; it is shown once, by the peek or the turn, after the boxes' actions.
        const hole = actions.findIndex(a => a.body.seat === -1 && stage(a).inputs.faceUp === 0)
        expect(stage(actions[hole]).cards).toEqual({})
        const shown = actions.findIndex(a => a.body.seat === -1 && ['peek', 'turn'].includes((a.body.action as { stage: string }).stage) && stage(a).cards.card !== undefined)
        expect(shown).toBeGreaterThan(hole)
        if ((actions[shown].body.action as { stage: string }).stage === 'turn') expect(actions.slice(hole, shown).some(a => a.body.seat >= 0)).toBe(true)
        // A hole card shown early (its card in the face-down draw), re-signed: fails as a changed draw.
        expect(codesOf(resigned(a => { stage(a[hole]).cards = { card: ['AS'] }; return a }, hole))[0]).toMatch(/^play-draw /)
      }
    })
  }
})

describe('a played hand across restarts (docs/games.md "A restart in the middle of play")', () => {
  it('a dealer restarted in the middle of play resumes the hand from its save: an action it never received is sent again, and every seat countersigns the whole chain', () => {
    const t = table('coinche', ['human', 'human', 'human', 'robot'])
    // Seat 2's node never gets its actions through: the hand waits for it.
    t.setIntercept((from, _to, doc) => (doc.type === 'play' && from === t.signers[2].peerId ? undefined : doc))
    const hand = t.deal(0)
    const before = t.dealer.playing(hand)!.chain.length
    expect(t.dealer.playing(hand)?.toAct()).toBe(2)
    expect(receiptsOf(t)).toEqual([])
    expect(t.savedKeys(t.spec.dealer, 'dealer/').some(k => k.endsWith('/play'))).toBe(true)
    t.setIntercept(undefined)
    t.restartDealer()
    // Resumed with its whole chain; seat 2, sent the chain again, sends the action the dealer lacks, and the game goes on to its end.
    const receipt = receiptsOf(t).find(r => r.commit.body.hand === hand)!
    expect(receipt).toBeDefined()
    expect(receipt.play!.actions.length).toBeGreaterThan(before)
    expect(receipt.play!.score).not.toBeNull()
    expect(receipt.acks.map(a => a.body.seat)).toEqual([0, 1, 2])
    const verdict = check(receipt)
    expect(verdict.problems).toEqual([])
    expect(verdict.status).toBe('verified')
    expect(t.rejections.filter(r => r.includes('names a chain'))).toEqual([])
    // The hand is logged: its saves are gone.
    expect(t.savedKeys(t.spec.dealer, 'dealer/').filter(k => k.endsWith('/play'))).toEqual([])
  })

  it('a dealer restarted after the game is over and before the reveal reveals it with its whole chain', () => {
    const t = table('coinche', ['human', 'human', 'robot', 'robot'])
    // The reveal is lost with the dealer's node (held back, never released).
    t.setIntercept((_from, _to, doc) => (doc.type === 'reveal' ? undefined : doc))
    const hand = t.deal(1)
    const chain = t.dealer.playing(hand)!.chain.length
    t.setIntercept(undefined)
    t.restartDealer()
    t.advance(5_001)
    t.run(t.spec.dealer, t.dealer.tick(t.now()), 'dealer')
    const receipt = receiptsOf(t).find(r => r.commit.body.hand === hand)!
    expect(receipt.play!.actions).toHaveLength(chain)
    expect(check(receipt).problems).toEqual([])
  })

  it('a seat restarted in every phase of play resumes from its save and the hand ends with every ack', () => {
    for (const after of [1, 3, 6, 12, 20]) {
      const t = table('coinche', ['human', 'human', 'human', 'robot'])
      // Seat 1's node goes down once the chain holds `after` actions (its PLAYs lost from then on), and comes back.
      let down = false
      let hand = 0
      t.setIntercept((from, to, doc) => {
        if (!down && doc.type === 'play' && (t.dealer.playing(hand + 1)?.chain.length ?? 0) >= after) down = true
        return down && (from === t.signers[1].peerId || to === t.signers[1].peerId) ? undefined : doc
      })
      // Hands nobody bids on are thrown in early: dealt again until one runs past `after` actions.
      for (let i = 0; i < 8 && !down; i++) hand = t.deal(i % 4)
      expect(down, `after ${after}`).toBe(true)
      expect(t.savedKeys(t.signers[1].peerId, 'seat/').filter(k => k.endsWith('/play')), `after ${after}`).toEqual([`seat/t/hand/${String(hand).padStart(16, '0')}/play`])
      t.setIntercept(undefined)
      t.restartSeat(1)
      // The dealer sends the chain again to a seat whose turn stays quiet.
      for (let i = 0; i < 40 && receiptsOf(t).find(r => r.commit.body.hand === hand) === undefined; i++) {
        t.advance(5_001)
        t.run(t.spec.dealer, t.dealer.tick(t.now()), 'dealer')
        for (const [peer, seat] of t.seatMachines) t.run(peer, seat.tick(t.now()), 'seat')
      }
      const receipt = receiptsOf(t).find(r => r.commit.body.hand === hand)
      expect(receipt, `after ${after}`).toBeDefined()
      expect(receipt!.acks.map(a => a.body.seat), `after ${after}`).toEqual([0, 1, 2])
      expect(check(receipt).problems, `after ${after}`).toEqual([])
    }
  })
})

describe('a turn that runs out (docs/games.md "Time to play")', () => {
  it('a seat whose node is gone: after a quarter of revealMs the dealer ends the hand naming it, the others countersign, and the receipt verifies; a receipt naming another seat fails', () => {
    const t = table('coinche', ['human', 'human', 'human', 'robot'])
    // Seat 2's node is gone once the play starts: none of its actions arrives (its own node, cut off, refuses the reveal without them).
    t.setIntercept((from, _to, doc) => (doc.type === 'play' && from === t.signers[2].peerId ? undefined : doc))
    const hand = t.deal(0)
    const chain = t.dealer.playing(hand)!.chain.length
    expect(t.dealer.playing(hand)?.toAct()).toBe(2)
    t.advance(600_000 / 4 - 1)
    t.run(t.spec.dealer, t.dealer.tick(t.now()), 'dealer')
    expect(receiptsOf(t).find(r => r.commit.body.hand === hand)).toBeUndefined()
    t.advance(1)
    t.run(t.spec.dealer, t.dealer.tick(t.now()), 'dealer')
    expect(t.events.some(e => e.hand === hand && e.event.type === 'play-refused' && /seat 2 did not act/.test((e.event as { reason: string }).reason))).toBe(true)
    t.advance(5_001)
    t.run(t.spec.dealer, t.dealer.tick(t.now()), 'dealer')
    const receipt = receiptsOf(t).find(r => r.commit.body.hand === hand)!
    expect(receipt.play).toMatchObject({ score: null, waiting: { seat: 2 } })
    expect(receipt.play!.actions).toHaveLength(chain)
    expect(receipt.acks.map(a => a.body.seat)).toEqual([0, 1])
    const verdict = check(receipt)
    expect(verdict.problems).toEqual([])
    expect(verdict.summary?.play?.waiting).toEqual({ seat: 2 })
    // Naming another seat, a robot, or giving a score beside it: the dealer blamed wrongly.
    for (const play of [{ waiting: { seat: 1 } }, { waiting: { seat: 3 } }, { waiting: { seat: 2 }, refused: receipt.play!.actions.at(-1) }]) {
      expect(check({ ...receipt, play: { ...receipt.play!, ...play } }).problems.map(p => p.code), JSON.stringify(play).slice(0, 40)).toEqual(['play-waiting'])
    }
    // A score beside it, on a chain that does not finish the hand: step 2's play-score first.
    expect(check({ ...receipt, play: { ...receipt.play!, score: { points: [0, 0], summary: 'x' } } }).problems.map(p => p.code)).toEqual(['play-score'])
  })
})

describe('playing by hand, and the time to play', () => {
  it('a dice series played by hand is dealt from the dealer\'s first draw: no seat records a missing deal while it waits', () => {
    const t = table('dice', ['human', 'human'], 'dice-v1', { manual: 1, playMs: 600_000 })
    const hand = t.deal(0)
    // Seat 0 (robot-played) rolls, the dealer draws; seat 1 takes its time, past the deal deadline.
    const seat1 = t.seatMachines.get(t.signers[1].peerId)!
    expect(seat1.playView(hand)?.toAct).toBe(1)
    expect(seat1.status().find(h => h.hand === hand)?.phase).toBe('dealt')
    t.advance(60_000)
    for (const [peer, m] of t.seatMachines) t.run(peer, m.tick(t.now()), 'seat')
    expect(t.events.filter(e => e.event.type === 'aborted')).toEqual([])
    t.run(t.signers[1].peerId, seat1.act(hand, { type: 'roll', n: 1, expression: '2d6' }), 'seat')
    expect(seat1.playView(hand)?.actions).toContainEqual(expect.objectContaining({ seat: -1, action: expect.objectContaining({ stage: 'roll', inputs: { n: 1, seat: 1 } }) }))
  })

  it('a dice series whose first roll nobody asks for in time: no seat records a missing deal against the dealer, who owes nothing yet', () => {
    const t = table('dice', ['human', 'human'], 'dice-v1', { manual: 0, playMs: 600_000 })
    const hand = t.deal(0)
    // Both seats are played by hand (seat 0 by the manual option, seat 1's turn never comes): nobody rolls for a minute.
    for (const [, m] of t.seatMachines) expect(m.status().find(h => h.hand === hand)?.phase).toBe('dealt')
    t.advance(60_000)
    for (const [peer, m] of t.seatMachines) t.run(peer, m.tick(t.now()), 'seat')
    t.run(t.spec.dealer, t.dealer.tick(t.now()), 'dealer')
    expect(t.events.filter(e => e.event.type === 'aborted')).toEqual([])
    expect(t.appended.filter(a => a.entry === 'abort')).toEqual([])
    // The first roll, asked for late, is drawn and the series goes on.
    const seat0 = t.seatMachines.get(t.signers[0].peerId)!
    t.run(t.signers[0].peerId, seat0.act(hand, { type: 'roll', n: 0, expression: '1d6' }), 'seat')
    expect(seat0.playView(hand)?.actions).toContainEqual(expect.objectContaining({ seat: -1, action: expect.objectContaining({ stage: 'roll', inputs: { n: 0, seat: 0 } }) }))
  })

  it('a seat played by hand acts only when told, is refused an illegal action, and its robot plays a turn left for playMs', () => {
    const t = table('coinche', ['human', 'human', 'robot', 'robot'], 'atout-v1', { manual: 1, playMs: 5_000 })
    const seat1 = t.seatMachines.get(t.signers[1].peerId)!
    const hand = t.deal(0)
    // Seat 1 opens the auction: nothing happens until it acts.
    let view = seat1.playView(hand)!
    expect(view.toAct).toBe(1)
    expect(view.legal).toContainEqual({ type: 'pass' })
    expect(view.robotAt).toBe(t.now() + 5_000)
    expect(() => seat1.act(hand, { type: 'card', card: 'AS' })).toThrow(/not a legal action now: chain-illegal-action \(wrong-phase\)/)
    expect(seat1.playView(hand)!.actions).toHaveLength(0)
    t.run(t.signers[1].peerId, seat1.act(hand, { type: 'pass' }), 'seat')
    view = seat1.playView(hand)!
    expect(view.actions[0]).toEqual({ n: 1, seat: 1, action: { type: 'pass' } })
    // Its next turns are left alone: once playMs is out, its robot plays each.
    for (let i = 0; i < 200 && receiptsOf(t).length === 0; i++) {
      t.advance(5_000)
      t.run(t.signers[1].peerId, seat1.tick(t.now()), 'seat')
    }
    expect(receiptsOf(t)[0].play?.score).not.toBeNull()
    expect(t.events.some(e => e.event.type === 'action' && e.event.robot === true)).toBe(true)
  })

  it('a hand played slowly, longer in all than revealMs, blames nobody: each action starts the seats\' wait for the REVEAL over', () => {
    // Seat 1 takes 100 s a turn (under the dealer's turn limit, revealMs / 4 = 150 s): its nine
    // turns take longer than the other seats' wait for the REVEAL (revealMs = 600 s), which each action starts over.
    const t = table('coinche', ['human', 'human', 'human', 'robot'], 'atout-v1', { manual: 1, playMs: 100_000 })
    let receipt: Receipt | undefined
    let took = 0
    // A hand nobody bids on is thrown in: dealt again until one is played out.
    for (let deal = 0; deal < 8 && (receipt === undefined || (check(receipt).summary?.play?.tricks ?? 0) === 0); deal++) {
      const start = t.now()
      const hand = t.deal(deal % 4)
      for (let i = 0; i < 40 && receipt?.commit.body.hand !== hand; i++) {
        t.advance(50_000)
        t.run(t.spec.dealer, t.dealer.tick(t.now()), 'dealer')
        for (const [peer, seat] of t.seatMachines) t.run(peer, seat.tick(t.now()), 'seat')
        receipt = receiptsOf(t).find(r => r.commit.body.hand === hand)
      }
      took = t.now() - start
    }
    expect(took).toBeGreaterThan(600_000)
    expect(t.appended.filter(a => a.entry === 'abort')).toEqual([])
    expect(check(receipt!).problems).toEqual([])
    receipt = receipt!
    expect(receipt.acks.map(a => a.body.seat)).toEqual([0, 1, 2])
  })
})
