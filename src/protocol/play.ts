/**
 * Playing a commit–reveal hand at the table (docs/games.md "Playing a dealt hand"). A hand whose
 * COMMIT says `params.play` is played once it is dealt: each bid, card or declaration is a signed
 * `game-action` document (src/core/games/action-chain.ts) carried in a PLAY message. A seat sends
 * its actions to the dealer; the dealer's node, which knows the deal, checks each against the
 * seat's cards and the rules, and passes it to every other seat, which checks it on its own view
 * (src/core/games/play-view.ts). The dealer delivers the stages the game asks for (belote's take,
 * duo's face-up packets, tarot's dog), plays the robot seats with randomness drawn from the hand's
 * key, and reveals the hand when the game says it is over; the receipt carries the chain and the
 * score. Wrappers around the commit–reveal machines, pure like them: documents in, effects out.
 */
import { signDocument, verifyDocument, type Signed } from '../core/signed.js'
import { ROBOT, type CardsBody, type CommitBody, type ReceiptPlay, type SignedCommit } from '../core/hand/messages.js'
import { docDigest } from '../core/hand/digest.js'
import { cardSchemeFor } from '../core/hand/recompute.js'
import { actionSigners } from '../core/hand/play-verify.js'
import { engines } from '../core/games/index.js'
import { PlayHand, type PlayRefusal } from '../core/games/play-hand.js'
import { PLAYED_CARD_GAMES, robotRandom, setupFromDeliveries, stageCards } from '../core/games/play-setup.js'
import { DRAW_GAMES, drawCards, drawSetup, engineIdOf } from '../core/games/play-draws.js'
import type { ActionDoc } from '../core/games/action-chain.js'
import type { Delivery } from '../core/schemes/types.js'
import type { DealerHandStatus, DealerSide, PlayView, SeatCards, SeatHandStatus, SeatSide, BeaconResult } from './contracts.js'
import { DealerMachine, type DealtHand } from './dealer.js'
import { SeatMachine } from './seat.js'
import { INITIAL_STAGES } from './stages.js'
import { Rejection, type Effect, type MachineInit } from './types.js'
import type { PlayBody } from './wire.js'

/** Actions a seat keeps that came before their turn (out of order on the network), per hand. */
const EARLY_KEPT = 64

const refusalText = (r: PlayRefusal): string => `${r.code}${r.rule === undefined ? '' : ` (${r.rule})`}: ${r.reason}`

function playDoc (signer: MachineInit['signer'], table: string, hand: number, commit: string, actions: ActionDoc[]): Signed<PlayBody> {
  return signDocument('play', { table, hand, commit, actions: actions as PlayBody['actions'] }, signer)
}

function checkEnvelope (doc: Signed<unknown>, table: string, verify: (doc: Signed<unknown>) => boolean): PlayBody {
  const body = doc.body as PlayBody
  if (body.table !== table) throw new Rejection(`play for table ${body.table}`)
  if (!verify(doc)) throw new Rejection('play: bad signature')
  return body
}

interface DealerPlayHand {
  play: PlayHand
  commit: SignedCommit
  key: string
  deal: DealtHand['deal']
  /** The game's score event went out, or a refused action ended the hand. */
  ended: boolean
  /** The action that ended the hand: the chain's next link, signed by its seat, against the rules. */
  refused?: ActionDoc
}

/** The commit–reveal dealer, playing the hands committed as played. */
export class PlayingDealer implements DealerSide {
  readonly #inner: DealerMachine
  readonly #init: MachineInit
  readonly #verify: (doc: Signed<unknown>) => boolean
  readonly #hands = new Map<number, DealerPlayHand>()
  /** PLAYs for a hand not dealt yet, by hand (at most EARLY_KEPT in all). */
  readonly #early = new Map<number, Array<{ from: string, doc: Signed<unknown> }>>()

  constructor (init: MachineInit) {
    this.#init = init
    this.#verify = init.verifyDoc ?? verifyDocument
    this.#inner = new DealerMachine({ ...init, receiptPlay: hand => this.#receiptPlay(hand) })
  }

  get family (): DealerSide['family'] { return this.#inner.family }
  get inFlight (): number { return this.#inner.inFlight }

  receive (from: string, doc: Signed<unknown>): Effect[] {
    if (doc.type === 'play') return this.#onPlay(from, doc)
    return this.#after(this.#inner.receive(from, doc))
  }

  tick (now: number): Effect[] { return this.#after(this.#inner.tick(now)) }
  nextDeadline (): number | undefined { return this.#inner.nextDeadline() }
  beaconResult (hand: number, result: BeaconResult): Effect[] { return this.#after(this.#inner.beaconResult(hand, result)) }

  startHand (params: Parameters<DealerSide['startHand']>[0]): { hand: number, effects: Effect[] } {
    const { game } = this.#init.table
    if (params.play === true && !PLAYED_CARD_GAMES.has(game) && !DRAW_GAMES.has(game)) throw new Rejection(`${game} is not played at a table`)
    // A game that draws during the hand (blackjack's shoe, dice) has nothing to deal otherwise: it is always played.
    if (DRAW_GAMES.has(game)) params = { ...params, play: true }
    const r = this.#inner.startHand(params)
    return { hand: r.hand, effects: this.#after(r.effects) }
  }

  deliverStage (hand: number, stage: string, taker?: number): Effect[] {
    if (this.#hands.has(hand)) throw new Rejection(`hand ${hand} is played: its stages are dealt when the game asks for them`)
    return this.#inner.deliverStage(hand, stage, taker)
  }

  end (hand: number): Effect[] {
    const h = this.#hands.get(hand)
    if (h !== undefined && !h.play.over()) {
      throw new Rejection(`hand ${hand} is being played (${h.play.chain.length} actions, seat ${String(h.play.toAct())} to act): it ends when the game is over`)
    }
    return this.#inner.end(hand)
  }

  abortHand (hand: number, detail: string): Effect[] { return this.#inner.abortHand(hand, detail) }
  finalizeRevealed (): Effect[] { return this.#inner.finalizeRevealed() }
  status (): DealerHandStatus[] { return this.#inner.status() }
  robotCards (hand: number): ReturnType<DealerSide['robotCards']> { return this.#inner.robotCards(hand) }
  restore (meta: unknown, snapshots: unknown[], logged: Array<{ kind: string, payload: unknown }>): Effect[] {
    return this.#inner.restore(meta as Parameters<DealerMachine['restore']>[0], snapshots as Parameters<DealerMachine['restore']>[1], logged)
  }

  delivery (to: string, doc: Signed<unknown>, outcome: { ok: true } | { ok: false, reason: string }): void { this.#inner.delivery(to, doc, outcome) }

  /** A hand in play as the dealer's node holds it (the whole deal), if it is played. */
  playing (hand: number): PlayHand | undefined { return this.#hands.get(hand)?.play }

  /** The hand's chain as its receipt carries it (DealerMachine asks when it builds the receipt). */
  #receiptPlay (hand: number): ReceiptPlay | undefined {
    const h = this.#hands.get(hand)
    if (h === undefined) return undefined
    this.#hands.delete(hand)
    const score = h.play.over() ? h.play.score() : null
    return {
      actions: [...h.play.chain] as ReceiptPlay['actions'],
      score: score === null ? null : { points: score.points, summary: score.summary },
      ...(h.refused === undefined ? {} : { refused: h.refused as ReceiptPlay['actions'][number] })
    }
  }

  /** After any step of the inner machine: a played hand just dealt starts its play. */
  #after (effects: Effect[]): Effect[] {
    for (const s of this.#inner.status()) {
      if (s.phase !== 'dealt' || this.#hands.has(s.hand)) continue
      const dealt = this.#inner.dealtHand(s.hand)
      if (dealt === undefined || dealt.commit.body.params.play !== true) continue
      const body = dealt.commit.body
      const play = new PlayHand({
        engine: engines[engineIdOf(body.game)],
        setup: DRAW_GAMES.has(body.game)
          ? drawSetup(body.game, body.seats.length)
          : setupFromDeliveries(body.game, body.seats.length, body.params.dealer, dealt.deal.deliveries.filter(d => dealt.stages.includes(d.stage))),
        hand: dealt.digest,
        seatSigners: actionSigners(body.seats, body.dealer),
        dealer: body.dealer,
        verify: this.#verify
      })
      this.#hands.set(s.hand, { play, commit: dealt.commit, key: dealt.key, deal: dealt.deal, ended: false })
      effects = [...effects, ...this.#advance(s.hand)]
      // Actions a seat sent before the hand was dealt (a seat of a draw game acts once it has contributed).
      for (const early of this.#early.get(s.hand) ?? []) {
        try { effects = [...effects, ...this.#onPlay(early.from, early.doc)] } catch { /* refused as it would have been on arrival */ }
      }
      this.#early.delete(s.hand)
    }
    return effects
  }

  #onPlay (from: string, doc: Signed<unknown>): Effect[] {
    const body = checkEnvelope(doc, this.#init.table.id, this.#verify)
    const h = this.#hands.get(body.hand)
    const before = this.#inner.status().find(s => s.hand === body.hand && s.phase !== 'dealt')
    if (h === undefined && before !== undefined && [...this.#early.values()].flat().length < EARLY_KEPT) {
      // Not dealt yet: kept, and taken once it is.
      this.#early.set(body.hand, [...(this.#early.get(body.hand) ?? []), { from, doc }])
      return []
    }
    if (h === undefined || body.commit !== body.actions[0].body.hand || docDigest(h.commit) !== body.commit) throw new Rejection(`play for hand ${body.hand}, which is not in play`)
    if (h.ended) throw new Rejection(`play for hand ${body.hand}, which is over`)
    const { seats } = h.commit.body
    const effects: Effect[] = []
    for (const a of body.actions) {
      const had = h.play.chain[a.body.n - 1]
      if (had !== undefined && docDigest(had) === docDigest(a)) continue
      if (seats[a.body.seat] !== from) throw new Rejection(`play: action ${a.body.n} is for seat ${a.body.seat}, not sent by it`)
      const refused = h.play.accept(a)
      if (refused !== null && refused.code === 'chain-illegal-action' && !h.ended) {
        // The chain's next link, signed by its seat, and against the rules: the hand ends on it, and
        // the receipt carries it as the record naming that seat (docs/games.md "A refused action").
        h.ended = true
        h.refused = a
        return [...effects,
          { kind: 'event', hand: body.hand, event: { type: 'play-refused', reason: `seat ${a.body.seat}'s action ${a.body.n}: ${refusalText(refused)}`, seat: a.body.seat } },
          ...this.#inner.end(body.hand)]
      }
      if (refused !== null) throw new Rejection(`play: seat ${a.body.seat}'s action ${a.body.n} refused: ${refusalText(refused)}`)
      effects.push(...this.#toHumans(h, body.hand, [a], from), this.#actionEvent(body.hand, a))
    }
    return [...effects, ...this.#advance(body.hand)]
  }

  /** Stages asked for, robots' turns, and the reveal once the game is over. */
  #advance (hand: number): Effect[] {
    const h = this.#hands.get(hand) as DealerPlayHand
    const { seats } = h.commit.body
    const effects: Effect[] = []
    for (let guard = 0; guard < 1000; guard++) {
      const request = h.play.pending()
      if (request !== null && DRAW_GAMES.has(h.commit.body.game)) {
        // A draw: computed from the key and its number, signed as the dealer's stage action.
        const signed = h.play.signStage(this.#init.signer, drawCards(h.commit.body.game, h.key, request, h.play.state))
        if (!signed.ok) throw new Error(`hand ${hand}: draw refused by the game: ${refusalText(signed.refusal)}`)
        effects.push(...this.#toHumans(h, hand, [signed.doc], undefined), this.#actionEvent(hand, signed.doc))
        continue
      }
      if (request !== null) {
        effects.push(...this.#inner.deliverStage(hand, request.stage, request.inputs?.taker))
        // The taker is a deal parameter (belote's take): the deal is the one dealt with it.
        h.deal = (this.#inner.dealtHand(hand) as DealtHand).deal
        const cards = stageCards(h.deal.deliveries, request)
        const bad = cards === null ? { message: 'the deal has no such stage' } : h.play.deliver(request.stage, cards)
        if (bad !== null) throw new Error(`hand ${hand}: stage ${request.stage} refused by the game: ${bad.message}`)
        continue
      }
      if (h.play.over()) {
        if (!h.ended) {
          h.ended = true
          effects.push({ kind: 'event', hand, event: { type: 'played', actions: h.play.chain.length, tricks: h.play.tricks(), score: h.play.score() } })
          effects.push(...this.#inner.end(hand))
        }
        return effects
      }
      const seat = h.play.toAct()
      if (seat === null || seats[seat] !== ROBOT) return effects
      const action = h.play.robot(seat, robotRandom(h.key, h.play.chain.length + 1))
      const signed = h.play.sign(this.#init.signer, seat, action)
      if (!signed.ok) throw new Error(`hand ${hand}: robot seat ${seat}'s choice refused: ${refusalText(signed.refusal)}`)
      effects.push(...this.#toHumans(h, hand, [signed.doc], undefined), this.#actionEvent(hand, signed.doc))
    }
    throw new Error(`hand ${hand}: the game does not advance`)
  }

  #actionEvent (hand: number, a: ActionDoc): Effect {
    return { kind: 'event', hand, event: { type: 'action', n: a.body.n, seat: a.body.seat, action: a.body.action } }
  }

  #toHumans (h: DealerPlayHand, hand: number, actions: ActionDoc[], except: string | undefined): Effect[] {
    const doc = playDoc(this.#init.signer, this.#init.table.id, hand, docDigest(h.commit), actions)
    const peers = new Set(h.commit.body.seats.filter(p => p !== ROBOT && p !== except))
    return [...peers].map(to => ({ kind: 'send', to, doc }))
  }
}

interface SeatPlayHand {
  commit: CommitBody
  digest: string
  /** Every delivery this seat was shown, by stage (its own private cards, the public ones). */
  cards: Map<string, Delivery[]>
  /** How many deliveries of each stage this seat is shown (from the scheme's layout). */
  expected: Map<string, number>
  play?: PlayHand
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
  readonly #inner: SeatMachine
  readonly #init: PlayingSeatInit
  readonly #verify: (doc: Signed<unknown>) => boolean
  readonly #hands = new Map<number, SeatPlayHand>()
  /** Hands where it is this seat's turn, played by hand: when its robot plays for it (time to play). */
  readonly #robotAt = new Map<number, number>()

  constructor (init: PlayingSeatInit) {
    this.#init = init
    this.#verify = init.verifyDoc ?? verifyDocument
    this.#inner = new SeatMachine(init)
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
  restore (meta: unknown, snapshots: unknown[]): Effect[] { return this.#inner.restore(meta as Parameters<SeatMachine['restore']>[0], snapshots as Parameters<SeatMachine['restore']>[1]) }
  tick (now: number): Effect[] {
    const effects = this.#inner.tick(now)
    // Time to play: a turn left for playMs is played by this seat's robot.
    for (const [hand, at] of [...this.#robotAt]) {
      if (now < at) continue
      this.#robotAt.delete(hand)
      const play = this.#hands.get(hand)?.play
      if (play === undefined || play.over() || play.toAct() !== this.seat) continue
      try {
        effects.push(...this.#send(hand, play.robot(this.seat, n => randomBelow(this.#init.random, n)), true), ...this.#advance(hand))
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
    const effects = this.#inner.receive(from, doc)
    const hand = (doc.body as { hand: number }).hand
    const contributed = effects.find(e => e.kind === 'event' && e.event.type === 'contributed')
    const h = contributed === undefined ? undefined : this.#hands.get((contributed as { hand: number }).hand)
    if (h !== undefined && !h.contributed) { h.contributed = true; return [...effects, ...this.#advance((contributed as { hand: number }).hand)] }
    // The machine took the document: what it asks for goes out whatever the play makes of it.
    try {
      if (doc.type === 'commit') this.#onCommit(doc as SignedCommit)
      else if (doc.type === 'cards') return [...effects, ...this.#onCards(doc as Signed<CardsBody>)]
      else if (doc.type === 'final' || doc.type === 'abort') { this.#hands.delete(hand); this.#robotAt.delete(hand) }
    } catch (err) {
      return [...effects, { kind: 'event', hand, event: { type: 'play-refused', reason: (err as Error).message } }]
    }
    return effects
  }

  #onCommit (doc: SignedCommit): void {
    const body = doc.body
    if (body.params.play !== true || this.#hands.has(body.hand)) return
    if (DRAW_GAMES.has(body.game)) {
      // Nothing is dealt before play: the hand starts at once, and this seat acts once it has contributed.
      const play = new PlayHand({ engine: engines[engineIdOf(body.game)], setup: drawSetup(body.game, body.seats.length), hand: docDigest(doc), seatSigners: actionSigners(body.seats, body.dealer), dealer: body.dealer, verify: this.#verify })
      this.#hands.set(body.hand, { commit: body, digest: docDigest(doc), cards: new Map(), expected: new Map(), early: new Map(), play, contributed: false })
      return
    }
    if (!PLAYED_CARD_GAMES.has(body.game)) return
    // Which deliveries of each stage this seat is shown: the scheme's layout, from any key.
    const scheme = cardSchemeFor(body)
    const zero = '00'.repeat(32)
    const beacon = scheme.beacon ? { chainHash: zero, round: 1, randomness: zero } : undefined
    const layout = scheme.deal(body.game, scheme.key({ secret: zero, nonces: body.seats.map(() => zero), beacon }), { seats: body.seats.length, dealer: body.params.dealer, ...(body.game === 'belote' ? { taker: 0 } : {}) })
    const expected = new Map<string, number>()
    for (const d of layout.deliveries) if (d.public || d.seat === this.seat) expected.set(d.stage, (expected.get(d.stage) ?? 0) + 1)
    this.#hands.set(body.hand, { commit: body, digest: docDigest(doc), cards: new Map(), expected, early: new Map(), contributed: true })
    // Hands that ended long ago (their FINAL lost) are forgotten oldest first.
    for (const old of this.#hands.keys()) { if (this.#hands.size <= EARLY_KEPT) break; this.#hands.delete(old) }
  }

  #onCards (doc: Signed<CardsBody>): Effect[] {
    const h = this.#hands.get(doc.body.hand)
    if (h === undefined || doc.body.commit !== h.digest) return []
    const { stage, seat, public: pub, cards } = doc.body
    const list = h.cards.get(stage) ?? []
    if (!list.some(d => d.seat === seat && d.public === pub)) list.push({ stage, seat, public: pub, cards })
    h.cards.set(stage, list)
    if (h.play === undefined) {
      const initial = [...h.expected.keys()].filter(s => INITIAL_STAGES.has(s))
      if (!initial.every(s => (h.cards.get(s)?.length ?? 0) >= (h.expected.get(s) as number))) return []
      const b = h.commit
      h.play = new PlayHand({
        engine: engines[b.game],
        setup: setupFromDeliveries(b.game, b.seats.length, b.params.dealer, initial.flatMap(s => h.cards.get(s) ?? [])),
        hand: h.digest,
        seatSigners: actionSigners(b.seats, b.dealer),
        view: { seat: this.seat },
        verify: this.#verify
      })
    }
    return this.#advance(doc.body.hand)
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
    return this.#advance(body.hand)
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
    return [...this.#send(hand, action), ...this.#advance(hand)]
  }

  #send (hand: number, action: unknown, robot = false): Effect[] {
    const h = this.#hands.get(hand) as SeatPlayHand
    const signed = (h.play as PlayHand).sign(this.#init.signer, this.seat, action)
    if (!signed.ok) throw new Rejection(`not a legal action now: ${refusalText(signed.refusal)}`)
    const doc = playDoc(this.#init.signer, this.#init.table.id, hand, h.digest, [signed.doc])
    return [
      { kind: 'send', to: this.#init.table.dealer, doc },
      { kind: 'event', hand, event: { type: 'action', n: signed.doc.body.n, seat: this.seat, action, ...(robot ? { robot } : {}) } }
    ]
  }
}

/** An integer in 0…n−1 from the node's randomness (a human seat's robot: no need to replay it). */
function randomBelow (random: (bytes: number) => Uint8Array, n: number): number {
  const b = random(6)
  let v = 0
  for (const x of b) v = v * 256 + x
  return v % n
}
