/** The commit–reveal dealer playing the hands committed as played (src/protocol/play.ts says how). */
import { verifyDocument, type Signed } from '../core/signed.js'
import { ROBOT, type ReceiptPlay, type SignedCommit } from '../core/hand/messages.js'
import { docDigest } from '../core/hand/digest.js'
import { actionSigners } from '../core/hand/play-verify.js'
import { engines } from '../core/games/index.js'
import { PlayHand } from '../core/games/play-hand.js'
import { PLAYED_CARD_GAMES, robotRandom, setupFromDeliveries, stageCards } from '../core/games/play-setup.js'
import { DRAW_GAMES, drawCards, drawSetup, engineIdOf } from '../core/games/play-draws.js'
import { actionDigest, CHAIN_START, type ActionDoc } from '../core/games/action-chain.js'
import type { BeaconResult, DealerHandStatus, DealerSide } from './contracts.js'
import { DealerMachine, type DealtHand } from './dealer.js'
import { Rejection, type Effect, type MachineInit } from './types.js'
import { checkEnvelope, EARLY_KEPT, playDoc, refusalText } from './play-common.js'

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
  /** Hands in play already looked at once dealt (played or not). */
  readonly #looked = new Set<number>()
  /** Played hands restored after a restart: their chain was not saved. */
  readonly #lost = new Set<number>()
  /** PLAYs for a hand not dealt yet, by hand (at most EARLY_KEPT in all). */
  readonly #early = new Map<number, Array<{ from: string, doc: Signed<unknown> }>>()

  constructor (init: MachineInit) {
    this.#init = init
    this.#verify = init.verifyDoc ?? verifyDocument
    this.#inner = new DealerMachine({ ...init, receiptPlay: hand => this.#receiptPlay(hand), playHead: hand => this.#playHead(hand) })
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
  /**
   * After a restart. A played hand's chain is not saved: a hand restored dealt is revealed at once,
   * and one restored revealed is finished as before; the receipt of either carries the chain as
   * lost (no actions, `score: null`: a hand stopped before its end, docs/games.md).
   */
  restore (meta: unknown, snapshots: unknown[], logged: Array<{ kind: string, payload: unknown }>): Effect[] {
    const saved = snapshots as Parameters<DealerMachine['restore']>[1]
    const effects = this.#inner.restore(meta as Parameters<DealerMachine['restore']>[0], saved, logged)
    for (const s of saved) {
      if (s.commit.body.params.play !== true || (s.phase !== 'dealt' && s.phase !== 'revealed')) continue
      this.#lost.add(s.hand)
      if (s.phase === 'dealt') effects.push({ kind: 'event', hand: s.hand, event: { type: 'play-refused', reason: 'the dealer\'s node restarted: the hand\'s play is lost, and the hand is revealed as it stands' } }, ...this.#inner.end(s.hand))
    }
    return effects
  }

  delivery (to: string, doc: Signed<unknown>, outcome: { ok: true } | { ok: false, reason: string }): void { this.#inner.delivery(to, doc, outcome) }

  /** A hand in play as the dealer's node holds it (the whole deal), if it is played. */
  playing (hand: number): PlayHand | undefined { return this.#hands.get(hand)?.play }

  /** The chain the hand's REVEAL names: its length and last digest (a chain lost in a restart: none). */
  #playHead (hand: number): { actions: number, head: string } {
    const last = this.#lost.has(hand) ? null : this.#hands.get(hand)?.play.head ?? null
    return { actions: last === null ? 0 : last.body.n, head: last === null ? CHAIN_START : actionDigest(last) }
  }

  /** The hand's chain as its receipt carries it (DealerMachine asks when it builds the receipt). */
  #receiptPlay (hand: number): ReceiptPlay | undefined {
    const h = this.#hands.get(hand)
    if (this.#lost.delete(hand)) return { actions: [], score: null }
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
    const status = this.#inner.status()
    // A hand is looked at once, when it is first seen dealt (dealtHand recomputes the key).
    for (const hand of this.#looked) if (!status.some(s => s.hand === hand)) this.#looked.delete(hand)
    for (const s of status) {
      if (s.phase !== 'dealt' || this.#looked.has(s.hand) || this.#lost.has(s.hand)) continue
      this.#looked.add(s.hand)
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
