/**
 * A seat playing its seat of the hands committed as played (src/protocol/play.ts says how), at a
 * commit–reveal table (around SeatMachine) or a blind-v1 one (around BlindSeatMachine: each card
 * played carries its opening, and every other seat's is checked when it comes, docs/dealer-blind.md §15).
 */
import { verifyDocument, type Signed } from '../core/signed.js'
import type { CardsBody, CommitBody, SignedCommit } from '../core/hand/messages.js'
import { docDigest } from '../core/hand/digest.js'
import { cardSchemeFor } from '../core/hand/recompute.js'
import { actionSigners } from '../core/hand/play-verify.js'
import { engines } from '../core/games/index.js'
import { PlayHand, type PlayHandInit } from '../core/games/play-hand.js'
import type { GameSetup } from '../core/games/types.js'
import { PLAYED_CARD_GAMES, setupFromDeliveries, stageCards } from '../core/games/play-setup.js'
import { DRAW_GAMES, drawSetup, engineIdOf } from '../core/games/play-draws.js'
import { actionDigest, CHAIN_START, type ActionDoc } from '../core/games/action-chain.js'
import type { Delivery } from '../core/schemes/types.js'
import type { BeaconResult, PlayView, SeatCards, SeatHandStatus, SeatSide } from './contracts.js'
import { SeatMachine, seatHandKey, type SeatHandSnapshot } from './seat.js'
import { BlindSeatMachine, blindSeatHandKey, type BlindSeatSnapshot } from './blind-seat.js'
import { blindLayout } from '../core/hand/blind.js'
import { BLIND_PLAYED_GAMES, blindOpeningRule, playedCard, receiptPlayFrom } from '../core/hand/blind-play.js'
import { dropPlaySave, playSaveKey, splitPlaySaves, type PlaySave } from './play-save.js'
import { INITIAL_STAGES } from './stages.js'
import { Rejection, type Effect, type MachineInit } from './types.js'
import { checkEnvelope, EARLY_KEPT, playDoc, randomBelow, refusalText } from './play-common.js'

interface SeatPlayHand {
  commit: CommitBody
  digest: string
  /** Every delivery this seat was shown, by stage (its own private cards, the public ones). */
  cards: Map<string, Delivery[]>
  /** How many deliveries of each stage this seat is shown (from the scheme's layout). */
  expected: Map<string, number>
  play?: PlayHand
  /** The start the play was built on (saved with its history). */
  setup?: GameSetup
  early: Map<number, ActionDoc>
  /** This seat may act: its nonce is in (draw games; a card game's seat acts once it holds its cards). */
  contributed: boolean
}

export interface PlayingSeatInit extends MachineInit {
  /**
   * The node plays its own seat with the engine's robot at once (a seat with nobody at the terminal
   * or page). Otherwise it is played by hand (`act`), and the robot plays a turn left for
   * `timeouts.playMs` (time to play; never, without it).
   */
  autoplay?: boolean
}

/** The commit–reveal seat, playing its seat of the hands committed as played. */
export class PlayingSeat implements SeatSide {
  readonly #inner: SeatMachine | BlindSeatMachine
  /** The blind machine, at a blind-v1 table. */
  readonly #blind: BlindSeatMachine | undefined
  readonly #init: PlayingSeatInit
  readonly #verify: (doc: Signed<unknown>) => boolean
  readonly #hands = new Map<number, SeatPlayHand>()
  /** Hands where it is this seat's turn, played by hand: when its robot plays for it (time to play). */
  readonly #robotAt = new Map<number, number>()

  constructor (init: PlayingSeatInit) {
    this.#init = init
    this.#verify = init.verifyDoc ?? verifyDocument
    if (init.table.scheme === 'blind-v1') {
      this.#blind = new BlindSeatMachine({ ...init, blindReceiptPlay: (hand, named) => receiptPlayFrom(named, this.#hands.get(hand)?.play?.chain ?? []) })
      this.#inner = this.#blind
    } else {
      this.#blind = undefined
      this.#inner = new SeatMachine(init)
    }
  }

  /** Where this family's hands are saved. */
  #handKey (hand: number): string {
    return (this.#blind === undefined ? seatHandKey : blindSeatHandKey)(this.#init.table.id, hand)
  }

  /** A played hand as this seat sees it. */
  playView (hand: number): PlayView | undefined {
    const h = this.#hands.get(hand)
    if (h?.play === undefined) return undefined
    const p = h.play
    const robotAt = this.#robotAt.get(hand)
    return {
      hand, game: h.commit.game, seat: this.seat, toAct: p.toAct(), legal: p.over() ? [] : p.legal(this.seat),
      actions: p.chain.map(a => ({ n: a.body.n, seat: a.body.seat, action: a.body.action })), tricks: p.tricks(), over: p.over(),
      ...(robotAt === undefined ? {} : { robotAt })
    }
  }

  get family (): SeatSide['family'] { return this.#inner.family }
  get seat (): number { return this.#inner.seat }
  cards (hand: number): SeatCards[] { return this.#inner.cards(hand) }
  status (): SeatHandStatus[] { return this.#inner.status() }
  /**
   * After a restart. A played hand resumes from the machine's own snapshot (its COMMIT, the cards it
   * received) and its play save (play-save.ts): the hand is rebuilt as it was, this seat's turn comes
   * again, and its own last action goes to the dealer again (the dealer ignores one it holds).
   */
  restore (meta: unknown, snapshots: unknown[]): Effect[] {
    const { saves, others } = splitPlaySaves<SeatHandSnapshot | BlindSeatSnapshot>(snapshots)
    const effects = this.#inner.restore(meta as Parameters<SeatMachine['restore']>[0], others as never[])
    for (const snap of others) {
      if (snap.commit.body.params.play !== true || snap.phase === 'done' || snap.phase === 'aborted') continue
      this.#onCommit(snap.commit)
      const h = this.#hands.get(snap.hand)
      if (h === undefined) continue
      h.contributed = !DRAW_GAMES.has(h.commit.game) || ['contributed', 'dealt', 'acked'].includes(snap.phase)
      const save = saves.get(snap.hand)
      saves.delete(snap.hand)
      if (save !== undefined) {
        try {
          h.play = PlayHand.replay(this.#playInit(h, save.setup), save.history)
          h.setup = save.setup
        } catch { /* a save that does not replay: the hand starts again from its cards */ }
      }
      try {
        // A commit–reveal seat saved its CARDS documents; a blind seat the cards it opened.
        for (const c of snap.cards ?? []) this.#takeCards(snap.hand, 'body' in c ? (c.body.commit === h.digest ? c.body : undefined) : c)
        effects.push(...this.#advance(snap.hand))
      } catch (err) {
        effects.push({ kind: 'event', hand: snap.hand, event: { type: 'play-refused', reason: (err as Error).message } })
      }
      const head = h.play?.head
      if (head !== undefined && head !== null && head.body.seat === this.seat) effects.push({ kind: 'send', to: this.#init.table.dealer, doc: playDoc(this.#init.signer, this.#init.table.id, snap.hand, h.digest, [head]) })
      if (h.play !== undefined) effects.unshift(this.#save(snap.hand))
    }
    for (const hand of saves.keys()) effects.push(dropPlaySave(this.#handKey(hand)))
    return effects
  }

  #playInit (h: SeatPlayHand, setup: GameSetup): PlayHandInit {
    const b = h.commit
    return DRAW_GAMES.has(b.game)
      ? { engine: engines[engineIdOf(b.game)], setup, hand: h.digest, seatSigners: actionSigners(b.seats, b.dealer), dealer: b.dealer, verify: this.#verify }
      : { engine: engines[b.game], setup, hand: h.digest, seatSigners: actionSigners(b.seats, b.dealer), view: { seat: this.seat }, verify: this.#verify, ...this.#openingRule(b.hand) }
  }

  /** At a blind table, the opening rule every action is checked with, on the hand as dealt so far. */
  #openingRule (hand: number): Pick<PlayHandInit, 'checkOpening'> {
    const blind = this.#blind
    if (blind === undefined) return {}
    return {
      checkOpening: (body, earlier) => {
        const opening = blind.openingHand(hand)
        return opening === undefined ? { rule: 'card-opening-form', reason: 'the hand is not dealt at this seat' } : blindOpeningRule(opening)(body, earlier)
      }
    }
  }

  /** The hand's play as this seat holds it now: written before whatever its last steps send. */
  #save (hand: number): Effect {
    const h = this.#hands.get(hand) as SeatPlayHand
    const value: PlaySave = { play: 1, hand, setup: h.setup as GameSetup, history: [...(h.play as PlayHand).history] }
    return { kind: 'persist', key: playSaveKey(this.#handKey(hand)), value }
  }

  /** `effects` after the hand's play moved: its save first, when it has one. */
  #saved (hand: number, effects: Effect[]): Effect[] {
    const h = this.#hands.get(hand)
    return h?.play === undefined || h.setup === undefined ? effects : [this.#save(hand), ...effects]
  }
  tick (now: number): Effect[] {
    const effects = this.#inner.tick(now)
    // Time to play: a turn left for playMs is played by this seat's robot.
    for (const [hand, at] of [...this.#robotAt]) {
      if (now < at) continue
      this.#robotAt.delete(hand)
      const play = this.#hands.get(hand)?.play
      if (play === undefined || play.over() || play.toAct() !== this.seat) continue
      try {
        const sent = this.#send(hand, play.robot(this.seat, n => randomBelow(this.#init.random, n)), true)
        effects.push(...this.#saved(hand, [...sent, ...this.#advance(hand)]))
      } catch (err) {
        effects.push({ kind: 'event', hand, event: { type: 'play-refused', reason: (err as Error).message } })
      }
    }
    return effects
  }

  nextDeadline (): number | undefined {
    const inner = this.#inner.nextDeadline()
    const mine = this.#robotAt.size === 0 ? undefined : Math.min(...this.#robotAt.values())
    return inner === undefined ? mine : mine === undefined ? inner : Math.min(inner, mine)
  }
  beaconResult (hand: number, result: BeaconResult): Effect[] { return this.#inner.beaconResult(hand, result) }

  /** The hand in play as this seat sees it (its view), if it is played. */
  playing (hand: number): PlayHand | undefined { return this.#hands.get(hand)?.play }

  receive (from: string, doc: Signed<unknown>): Effect[] {
    if (doc.type === 'play') return this.#onPlay(from, doc)
    if (doc.type === 'reveal' || doc.type === 'final') this.#checkChain(doc)
    const effects = this.#inner.receive(from, doc)
    const hand = (doc.body as { hand: number }).hand
    if (this.#blind !== undefined) return this.#afterBlind(doc, hand, effects)
    const contributed = effects.find(e => e.kind === 'event' && e.event.type === 'contributed')
    const h = contributed === undefined ? undefined : this.#hands.get((contributed as { hand: number }).hand)
    if (h !== undefined && !h.contributed) {
      h.contributed = true
      const handNo = (contributed as { hand: number }).hand
      // A game of draws deals nothing before play: once its nonce is out the seat owes nothing and
      // waits for the dealer's draws and REVEAL (revealMs), not for a deal. A series whose first
      // roll nobody asks for in time is no missing deal of the dealer's.
      const dealt = DRAW_GAMES.has(h.commit.game) ? (this.#inner as SeatMachine).drawnDeal(handNo) : []
      return [...effects, ...dealt, ...this.#saved(handNo, this.#advance(handNo))]
    }
    // The machine took the document: what it asks for goes out whatever the play makes of it.
    try {
      if (doc.type === 'commit') this.#onCommit(doc as SignedCommit)
      else if (doc.type === 'cards') return [...effects, ...this.#onCards(doc as Signed<CardsBody>)]
      else if (doc.type === 'final' || doc.type === 'abort') {
        const had = this.#hands.get(hand)?.play !== undefined
        this.#hands.delete(hand)
        this.#robotAt.delete(hand)
        if (had) return [...effects, dropPlaySave(seatHandKey(this.#init.table.id, hand))]
      }
    } catch (err) {
      return [...effects, { kind: 'event', hand, event: { type: 'play-refused', reason: (err as Error).message } }]
    }
    return effects
  }

  /**
   * A played hand's REVEAL must name the chain this seat holds, or one that extends it (it may have
   * missed the last actions), and the FINAL's receipt must hold this seat's chain as it saw it:
   * otherwise this seat does not countersign, nor log, a hand whose play is not the one it played.
   */
  #checkChain (doc: Signed<unknown>): void {
    const body = doc.body as { hand: number, commit?: string, play?: { actions: number, head: string }, receipt?: { play?: { actions: ActionDoc[] } } }
    const h = this.#hands.get(body.hand)
    if (h?.play === undefined) return
    const mine = h.play.chain
    if (doc.type === 'reveal') {
      if (body.commit !== h.digest) return
      const named = body.play
      const head = mine.length === 0 ? CHAIN_START : actionDigest(mine[mine.length - 1])
      if (named === undefined) throw new Rejection(`reveal of hand ${body.hand}: a played hand's reveal names no action chain`)
      if (named.actions < mine.length || (named.actions === mine.length && named.head !== head)) {
        throw new Rejection(`reveal of hand ${body.hand}: it names a chain of ${named.actions} actions, not the ${mine.length} this seat played`)
      }
      return
    }
    const theirs = body.receipt?.play?.actions ?? []
    if (mine.some((a, i) => theirs[i] === undefined || actionDigest(theirs[i]) !== actionDigest(a))) {
      throw new Rejection(`final of hand ${body.hand}: its action chain is not the one this seat played`)
    }
  }

  #onCommit (doc: SignedCommit): void {
    const body = doc.body
    if (body.params.play !== true || this.#hands.has(body.hand)) return
    if (DRAW_GAMES.has(body.game)) {
      // Nothing is dealt before play: the hand starts at once, and this seat acts once it has contributed.
      const setup = drawSetup(body.game, body.seats.length)
      const play = new PlayHand({ engine: engines[engineIdOf(body.game)], setup, hand: docDigest(doc), seatSigners: actionSigners(body.seats, body.dealer), dealer: body.dealer, verify: this.#verify })
      this.#hands.set(body.hand, { commit: body, digest: docDigest(doc), cards: new Map(), expected: new Map(), early: new Map(), play, setup, contributed: false })
      return
    }
    if (!PLAYED_CARD_GAMES.has(body.game) || (this.#blind !== undefined && !BLIND_PLAYED_GAMES.has(body.game))) return
    // Which deliveries of each stage this seat is shown: the scheme's layout, from any key.
    const options = { seats: body.seats.length, dealer: body.params.dealer, ...(body.game === 'belote' ? { taker: 0 } : {}) }
    const expected = new Map<string, number>()
    for (const d of this.#layoutOf(body, options)) if (d.public || d.seat === this.seat) expected.set(d.stage, (expected.get(d.stage) ?? 0) + 1)
    this.#hands.set(body.hand, { commit: body, digest: docDigest(doc), cards: new Map(), expected, early: new Map(), contributed: true })
    // Hands that ended long ago (their FINAL lost) are forgotten oldest first.
    for (const old of this.#hands.keys()) { if (this.#hands.size <= EARLY_KEPT) break; this.#hands.delete(old) }
  }

  /** After the blind machine took a document: its COMMIT starts a played hand, its cards (events) go to the play, its end forgets it. */
  #afterBlind (doc: Signed<unknown>, hand: number, effects: Effect[]): Effect[] {
    try {
      if (doc.type === 'commit') this.#onCommit(doc as SignedCommit)
      else if (doc.type === 'bfinal' || doc.type === 'abort') {
        const had = this.#hands.get(hand)?.play !== undefined
        this.#hands.delete(hand)
        this.#robotAt.delete(hand)
        return had ? [...effects, dropPlaySave(this.#handKey(hand))] : effects
      }
      let took = false
      for (const e of effects) {
        if (e.kind !== 'event' || e.event.type !== 'cards' || e.hand !== hand) continue
        const { stage, seat, public: pub, cards } = e.event as unknown as Delivery
        took = this.#takeCards(hand, { stage, seat, public: pub, cards }) || took
      }
      return took ? [...effects, ...this.#saved(hand, this.#advance(hand))] : effects
    } catch (err) {
      return [...effects, { kind: 'event', hand, event: { type: 'play-refused', reason: (err as Error).message } }]
    }
  }

  /** The deliveries of a hand (cards or positions: only their stages and seats count here). */
  #layoutOf (body: CommitBody, options: { seats: number, dealer: number, taker?: number }): Array<{ stage: string, seat: number | null, public: boolean }> {
    if (this.#blind !== undefined) return blindLayout(body, { dealer: options.dealer, ...(options.taker === undefined ? {} : { taker: options.taker }) })
    const scheme = cardSchemeFor(body)
    const zero = '00'.repeat(32)
    const beacon = scheme.beacon ? { chainHash: zero, round: 1, randomness: zero } : undefined
    return scheme.deal(body.game, scheme.key({ secret: zero, nonces: body.seats.map(() => zero), beacon }), options).deliveries
  }

  #onCards (doc: Signed<CardsBody>, advance = true): Effect[] {
    const h = this.#hands.get(doc.body.hand)
    if (h === undefined || doc.body.commit !== h.digest) return []
    this.#takeCards(doc.body.hand, doc.body)
    return advance ? this.#saved(doc.body.hand, this.#advance(doc.body.hand)) : []
  }

  /** Cards this seat was shown (its own, the public ones): kept by stage; the play starts once the first stages are all in. True when the hand is in play. */
  #takeCards (hand: number, delivery: Delivery | undefined): boolean {
    const h = this.#hands.get(hand)
    if (h === undefined || delivery === undefined) return false
    const { stage, seat, public: pub, cards } = delivery
    const list = h.cards.get(stage) ?? []
    if (!list.some(d => d.seat === seat && d.public === pub)) list.push({ stage, seat, public: pub, cards })
    h.cards.set(stage, list)
    if (h.play === undefined) {
      const initial = [...h.expected.keys()].filter(s => INITIAL_STAGES.has(s))
      if (!initial.every(s => (h.cards.get(s)?.length ?? 0) >= (h.expected.get(s) as number))) return false
      const b = h.commit
      h.setup = setupFromDeliveries(b.game, b.seats.length, b.params.dealer, initial.flatMap(s => h.cards.get(s) ?? []))
      h.play = new PlayHand(this.#playInit(h, h.setup))
    }
    return true
  }

  #onPlay (from: string, doc: Signed<unknown>): Effect[] {
    const body = checkEnvelope(doc, this.#init.table.id, this.#verify)
    if (from !== this.#init.table.dealer) throw new Rejection('play: a seat takes actions from the dealer only')
    const h = this.#hands.get(body.hand)
    if (h === undefined || h.digest !== body.commit) throw new Rejection(`play for hand ${body.hand}, which this seat does not play`)
    for (const a of body.actions) {
      if (h.early.size >= EARLY_KEPT) throw new Rejection(`play: more than ${EARLY_KEPT} actions ahead of this seat's hand`)
      if (a.body.n > (h.play?.chain.length ?? 0)) h.early.set(a.body.n, a)
    }
    // The dealer's signed draw for this COMMIT shows the hand was dealt (a game dealing no card).
    const dealt = DRAW_GAMES.has(h.commit.game) && body.actions.some(a => a.body.seat === -1) ? (this.#inner as SeatMachine).drawnDeal(body.hand) : []
    // The dealer's chain ends before this seat's own last action (the dealer lost it, or it was
    // lost on the way): that action goes again.
    const theirs = Math.max(...body.actions.map(a => a.body.n))
    const head = h.play?.head
    const again = head !== undefined && head !== null && head.body.seat === this.seat && head.body.n === theirs + 1
      ? [{ kind: 'send', to: this.#init.table.dealer, doc: playDoc(this.#init.signer, this.#init.table.id, body.hand, h.digest, [head]) } satisfies Effect]
      : []
    return this.#saved(body.hand, [...dealt, ...again, ...this.#advance(body.hand)])
  }

  /** Actions in their order, stages as the game asks for them, and this seat's own turn. */
  #advance (hand: number): Effect[] {
    const h = this.#hands.get(hand) as SeatPlayHand
    const play = h.play
    if (play === undefined) return []
    const effects: Effect[] = []
    for (let guard = 0; guard < 1000; guard++) {
      const request = play.pending()
      // A card game's stage is dealt in CARDS documents; a draw game's comes as the dealer's action.
      if (request !== null && !DRAW_GAMES.has(h.commit.game)) {
        const got = h.cards.get(request.stage) ?? []
        if (got.length < (h.expected.get(request.stage) ?? 1)) return effects
        const bad = play.deliver(request.stage, stageCards(got, request) ?? {})
        if (bad !== null) throw new Rejection(`play: stage ${request.stage} refused by the game: ${bad.message}`)
        continue
      }
      const next = h.early.get(play.chain.length + 1)
      if (next !== undefined) {
        h.early.delete(next.body.n)
        const refused = play.accept(next)
        if (refused !== null) throw new Rejection(`play: action ${next.body.n} of seat ${next.body.seat} refused: ${refusalText(refused)}`)
        this.#inner.waitAgain(hand)
        effects.push({ kind: 'event', hand, event: { type: 'action', n: next.body.n, seat: next.body.seat, action: next.body.action } })
        continue
      }
      if (play.over() || play.toAct() !== this.seat || !h.contributed) { this.#robotAt.delete(hand); return effects }
      if (this.#init.autoplay !== true) {
        // Played by hand: the robot's turn comes when the time to play is out (if the table sets one).
        const { playMs } = this.#init.timeouts
        if (playMs !== undefined && !this.#robotAt.has(hand)) this.#robotAt.set(hand, this.#init.now() + playMs)
        return effects
      }
      const action = play.robot(this.seat, n => randomBelow(this.#init.random, n))
      effects.push(...this.#send(hand, action))
    }
    throw new Error(`hand ${hand}: the game does not advance`)
  }

  /** This seat's own action: refused (nothing signed) when it is not legal now. */
  act (hand: number, action: unknown): Effect[] {
    const h = this.#hands.get(hand)
    if (h?.play === undefined) throw new Rejection(`hand ${hand} is not in play at this seat`)
    if (!h.contributed) throw new Rejection(`hand ${hand} is not dealt yet`)
    this.#robotAt.delete(hand)
    const sent = this.#send(hand, action)
    return this.#saved(hand, [...sent, ...this.#advance(hand)])
  }

  #send (hand: number, action: unknown, robot = false): Effect[] {
    const h = this.#hands.get(hand) as SeatPlayHand
    const play = h.play as PlayHand
    const bad = play.refusal(this.seat, action)
    if (bad !== null) throw new Rejection(`not a legal action now: ${refusalText({ code: 'chain-illegal-action', rule: bad.code, reason: bad.message })}`)
    // At a blind table a card played carries its opening (docs/dealer-blind.md §15): made first, or nothing is signed.
    const card = playedCard(action)
    const opening = this.#blind !== undefined && card !== undefined ? this.#blind.cardOpening(hand, card) : undefined
    const signed = play.sign(this.#init.signer, this.seat, action, opening)
    if (!signed.ok) throw new Rejection(`not a legal action now: ${refusalText(signed.refusal)}`)
    this.#inner.waitAgain(hand)
    const doc = playDoc(this.#init.signer, this.#init.table.id, hand, h.digest, [signed.doc])
    return [
      { kind: 'send', to: this.#init.table.dealer, doc },
      { kind: 'event', hand, event: { type: 'action', n: signed.doc.body.n, seat: this.seat, action, ...(robot ? { robot } : {}) } }
    ]
  }
}
