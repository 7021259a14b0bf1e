/**
 * The dealer playing the hands committed as played (src/protocol/play.ts says how), at a
 * commit–reveal table (around DealerMachine, which knows the deal) or a blind-v1 one (around
 * BlindDealerMachine, which knows no human seat's card: it follows the hand on the public state,
 * checks each card's opening, and the rules that need the hands once the keys open the deal,
 * docs/dealer-blind.md §15).
 */
import { verifyDocument, type Signed } from '../core/signed.js'
import { ROBOT, type ReceiptPlay, type SignedCommit } from '../core/hand/messages.js'
import { docDigest } from '../core/hand/digest.js'
import { actionSigners } from '../core/hand/play-verify.js'
import { engines } from '../core/games/index.js'
import { PlayHand, type PlayHandInit } from '../core/games/play-hand.js'
import type { GameSetup } from '../core/games/types.js'
import { PLAYED_CARD_GAMES, robotRandom, setupFromDeliveries, stageCards } from '../core/games/play-setup.js'
import { DRAW_GAMES, drawCards, drawSetup, engineIdOf } from '../core/games/play-draws.js'
import { actionDigest, CHAIN_START, type ActionDoc } from '../core/games/action-chain.js'
import type { BeaconResult, DealerHandStatus, DealerSide } from './contracts.js'
import { DealerMachine, dealerHandKey, type DealtHand } from './dealer.js'
import { dropPlaySave, playSaveKey, splitPlaySaves, type PlaySave } from './play-save.js'
import { BlindDealerMachine, blindDealerHandKey } from './blind-dealer.js'
import { BLIND_PLAYED_GAMES, blindOpeningRule, blindPlayOutcome, playedCard, type BlindPlayHand } from '../core/hand/blind-play.js'
import { HIDDEN } from '../core/games/play-view.js'
import type { Delivery } from '../core/schemes/types.js'
import { Rejection, type Effect, type HandEvent, type MachineInit } from './types.js'
import { checkEnvelope, EARLY_KEPT, playDoc, refusalText } from './play-common.js'

/** How long a human seat's turn stays quiet before the dealer sends that seat the chain again. */
export const RESEND_MS = 5_000

interface DealerPlayHand {
  play: PlayHand
  /** The start the play was built on (saved with its history). */
  setup: GameSetup
  commit: SignedCommit
  key: string
  /** The deal (absent for a hand restored already revealed: nothing is dealt any more). */
  deal: DealtHand['deal'] | undefined
  /** The game's score event went out, or a refused action ended the hand. */
  ended: boolean
  /** The action that ended the hand: the chain's next link, signed by its seat, against the rules. */
  refused?: ActionDoc
  /** The human seat whose turn ran out (turnLimit), which ended the hand. */
  waiting?: number
  /**
   * A blind hand's robot seats, each followed on its own view (its cards known, the others hidden)
   * to choose its moves; the hand itself is followed on a view of no seat (#playInit).
   */
  robots?: Map<number, PlayHand>
}

/**
 * How long a human seat's turn may stay without an action before the dealer ends the hand naming
 * that seat (docs/games.md "Time to play"): a quarter of `revealMs`, so that a seat whose node is
 * gone ends the hand long before the other seats' wait for the REVEAL runs out.
 */
export const turnLimit = (revealMs: number): number => Math.floor(revealMs / 4)

/** The commit–reveal dealer, playing the hands committed as played. */
export class PlayingDealer implements DealerSide {
  readonly #inner: DealerMachine
  /** The blind machine, at a blind-v1 table (then #inner is unused). */
  readonly #blind: BlindDealerMachine | undefined
  readonly #init: MachineInit
  readonly #verify: (doc: Signed<unknown>) => boolean
  readonly #hands = new Map<number, DealerPlayHand>()
  /** Hands in play already looked at once dealt (played or not). */
  readonly #looked = new Set<number>()
  /** Played hands restored after a restart: their chain was not saved. */
  readonly #lost = new Set<number>()
  /** Played hands with a save written (removed with the hand). */
  readonly #saved = new Set<number>()
  /** Since when each hand in play has waited for a human seat's action (resent the chain then: RESEND_MS). */
  readonly #quiet = new Map<number, number>()
  /** When each hand in play last moved (a stage, an action): its turn runs out turnLimit after. */
  readonly #moved = new Map<number, number>()
  /** Blind hands whose end waits for shares still due (the blind machine ends a hand only once every share it asked for is in). */
  readonly #endDue = new Set<number>()
  /** A blind hand's game end (its score, once the deal opened), announced when its BREVEAL goes out. */
  readonly #playedAt = new Map<number, Extract<HandEvent, { type: 'played' }>>()
  /** PLAYs for a hand not dealt yet, by hand (at most EARLY_KEPT in all). */
  readonly #early = new Map<number, Array<{ from: string, doc: Signed<unknown> }>>()

  constructor (init: MachineInit) {
    this.#init = init
    this.#verify = init.verifyDoc ?? verifyDocument
    if (init.table.scheme === 'blind-v1') {
      this.#blind = new BlindDealerMachine({ ...init, blindPlay: (hand, deliveries, opening) => this.#blindOutcome(hand, deliveries, opening) })
      // The blind machine answers every call the commit–reveal one would (DealerSide), and the few
      // others are asked of #blind by name.
      this.#inner = this.#blind as unknown as DealerMachine
    } else {
      this.#blind = undefined
      this.#inner = new DealerMachine({ ...init, receiptPlay: hand => this.#receiptPlay(hand), playHead: hand => this.#playHead(hand) })
    }
  }

  /** Where this family's hands are saved. */
  #handKey (hand: number): string {
    return (this.#blind === undefined ? dealerHandKey : blindDealerHandKey)(this.#init.table.id, hand)
  }

  get family (): DealerSide['family'] { return this.#inner.family }
  get inFlight (): number { return this.#inner.inFlight }

  receive (from: string, doc: Signed<unknown>): Effect[] {
    if (doc.type === 'play') return this.#onPlay(from, doc)
    return this.#after(this.#inner.receive(from, doc))
  }

  tick (now: number): Effect[] {
    const effects = this.#after(this.#inner.tick(now))
    // A human seat whose turn has been quiet for RESEND_MS is sent the chain again: it may have
    // missed actions while its node was down or cut off (it ignores those it holds, and sends its
    // own last action again if the dealer lacks it).
    // Time to play: a human seat's turn without an action for turnLimit ends the hand, naming it.
    const limit = turnLimit(this.#init.timeouts.revealMs)
    for (const [hand, since] of [...this.#moved]) {
      const h = this.#hands.get(hand)
      if (h === undefined || h.ended || h.play.over()) { this.#moved.delete(hand); continue }
      const seat = h.play.toAct()
      // Blind: while shares are due, a seat may not hold its cards yet: its turn has not begun.
      if (this.#sharesDue(hand)) { this.#moved.set(hand, now); continue }
      if (now - since < limit || seat === null || h.play.pending() !== null || h.commit.body.seats[seat] === ROBOT) continue
      h.ended = true
      h.waiting = seat
      this.#moved.delete(hand)
      effects.push(this.#save(hand), { kind: 'event', hand, event: { type: 'play-refused', reason: `seat ${seat} did not act within ${Math.round(limit / 1000)} s: the hand ends, naming it`, seat } }, ...this.#end(h, hand))
    }
    for (const [hand, since] of this.#quiet) {
      const h = this.#hands.get(hand)
      if (h === undefined || h.ended || h.play.over()) { this.#quiet.delete(hand); continue }
      if (now - since < RESEND_MS) continue
      this.#quiet.set(hand, now)
      const seat = h.play.toAct()
      const peer = seat === null ? undefined : h.commit.body.seats[seat]
      if (peer === undefined || peer === ROBOT || h.play.chain.length === 0) continue
      effects.push(...this.#chainTo(h, hand, peer))
    }
    return effects
  }

  nextDeadline (): number | undefined {
    const inner = this.#inner.nextDeadline()
    const times = [...[...this.#quiet.values()].map(t => t + RESEND_MS), ...[...this.#moved.values()].map(t => t + turnLimit(this.#init.timeouts.revealMs))]
    const quiet = times.length === 0 ? undefined : Math.min(...times)
    return inner === undefined ? quiet : quiet === undefined ? inner : Math.min(inner, quiet)
  }
  beaconResult (hand: number, result: BeaconResult): Effect[] { return this.#after(this.#inner.beaconResult(hand, result)) }
  recalled (hand: number, to: string, receipt: unknown): Effect[] { return this.#inner.recalled(hand, to, receipt) }

  startHand (params: Parameters<DealerSide['startHand']>[0]): { hand: number, effects: Effect[] } {
    const { game } = this.#init.table
    if (params.play === true && !PLAYED_CARD_GAMES.has(game) && !DRAW_GAMES.has(game)) throw new Rejection(`${game} is not played at a table`)
    // A blind table opens each card as it is played (docs/dealer-blind.md §15.1), for the games that rule covers.
    if (params.play === true && this.#blind !== undefined && !BLIND_PLAYED_GAMES.has(game)) throw new Rejection(`${game} is not played at a blind table (blind tables play: ${[...BLIND_PLAYED_GAMES].join(', ')})`)
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

  /**
   * The node stops. A hand in play is left saved, not revealed: the node resumes it once restarted
   * (the seats wait for it up to `revealMs`, as for any dealer that is away). Anything else as the
   * inner machine closes it.
   */
  abortHand (hand: number, detail: string): Effect[] {
    const h = this.#hands.get(hand)
    if (h !== undefined && !h.ended && !h.play.over()) return []
    return this.#inner.abortHand(hand, detail)
  }
  finalizeRevealed (): Effect[] { return this.#inner.finalizeRevealed() }
  /** The inner machine's documents again; a played hand's chain heals on its own (the quiet seat's resend, tick). */
  resync (peer: string): Effect[] { return this.#after(this.#inner.resync(peer)) }
  status (): DealerHandStatus[] { return this.#inner.status() }
  robotCards (hand: number): ReturnType<DealerSide['robotCards']> { return this.#inner.robotCards(hand) }
  /**
   * After a restart. A played hand resumes from its save (play-save.ts): a hand restored dealt goes
   * on where it was (the robots' and the seats' next actions; every human seat is sent the chain
   * again, since the actions taken just before the stop may not have reached it), one restored
   * revealed is finished with its whole chain. A played hand without a save (written by an older
   * version) is revealed as it stands, its chain marked lost (no actions, `score: null`).
   */
  restore (meta: unknown, snapshots: unknown[], logged: Array<{ kind: string, payload: unknown }>): Effect[] {
    const { saves, others } = splitPlaySaves<Parameters<DealerMachine['restore']>[1][number]>(snapshots)
    const table = this.#init.table.id
    // A blind hand revealed holds its play in its own snapshot; one ending still needs its chain (the BREVEAL names it).
    const phases: string[] = this.#blind === undefined ? ['dealt', 'revealed'] : ['dealt', 'ending']
    const played = others.filter(s => s.commit.body.params.play === true && phases.includes(s.phase))
    // The chains first: a hand restored revealed is revealed again by the inner machine's restore,
    // and its REVEAL names the chain.
    // A blind hand's chain is rebuilt after its machine's (each card's opening is checked on the restored deal).
    const rebuild = (): void => {
      for (const s of played) {
        const save = saves.get(s.hand)
        saves.delete(s.hand)
        if (save !== undefined) this.#rebuild(s.hand, s.commit, save)
      }
    }
    if (this.#blind === undefined) rebuild()
    const effects = this.#inner.restore(meta as Parameters<DealerMachine['restore']>[0], others, logged)
    if (this.#blind !== undefined) rebuild()
    for (const s of played) {
      if (this.#hands.has(s.hand)) {
        if (s.phase === 'dealt') effects.push(...this.#resume(s.hand))
        continue
      }
      this.#lost.add(s.hand)
      if (s.phase === 'dealt') effects.push({ kind: 'event', hand: s.hand, event: { type: 'play-refused', reason: 'the dealer\'s node restarted and found no save of the hand\'s play: the hand is revealed as it stands' } }, ...this.#inner.end(s.hand))
    }
    // Saves of hands that are over: removed.
    for (const hand of saves.keys()) effects.push(dropPlaySave(this.#handKey(hand)))
    return effects
  }

  /** A played hand rebuilt from its save (nothing, when the save does not replay on it: the chain is then lost). */
  #rebuild (hand: number, commit: SignedCommit, save: PlaySave): void {
    let play: PlayHand
    try { play = PlayHand.replay(this.#playInit(commit, save.setup), save.history) } catch { return }
    this.#hands.set(hand, { play, setup: save.setup, commit, key: '', deal: undefined, ended: save.ended === true, ...(save.refused === undefined ? {} : { refused: save.refused }), ...(save.waiting === undefined ? {} : { waiting: save.waiting }) })
    this.#looked.add(hand)
    this.#saved.add(hand)
  }

  /** A rebuilt hand restored dealt goes on: its chain to every human seat again, then what comes next. */
  #resume (hand: number): Effect[] {
    const h = this.#hands.get(hand) as DealerPlayHand
    if (this.#blind === undefined) {
      const dealt = this.#inner.dealtHand(hand) as DealtHand
      h.key = dealt.key
      h.deal = dealt.deal
    }
    if (h.ended) return this.#end(h, hand)
    const resend = [...new Set(h.commit.body.seats.filter(p => p !== ROBOT))].flatMap(peer => this.#chainTo(h, hand, peer))
    const advanced = this.#advance(hand)
    return [this.#save(hand), ...resend, ...advanced]
  }

  #playInit (commit: SignedCommit, setup: GameSetup): PlayHandInit {
    const body = commit.body
    const init: PlayHandInit = { engine: engines[engineIdOf(body.game)], setup, hand: docDigest(commit), seatSigners: actionSigners(body.seats, body.dealer), dealer: body.dealer, verify: this.#verify }
    const blind = this.#blind
    if (blind === undefined) return init
    // Blind: the dealer's node knows no seat's cards (seat −1's view) and checks each card's opening.
    return {
      ...init,
      view: { seat: -1 },
      checkOpening: (action, earlier) => {
        const opening = blind.openingHand(body.hand)
        return opening === undefined ? { rule: 'card-opening-form', reason: 'the hand is not dealt' } : blindOpeningRule(opening)(action, earlier)
      }
    }
  }

  /**
   * A blind hand's deliveries of `stages` as the dealer's node knows them: the public cards it
   * opened, HIDDEN for every other card (a position of a public card dealt again, as belote's
   * turned-up card in the taker's take, shows that card). Undefined while a public delivery of
   * those stages is not open here yet.
   */
  #blindDeliveries (hand: number, stages: readonly string[]): Delivery[] | undefined {
    const blind = this.#blind as BlindDealerMachine
    const dealt = blind.dealtLayout(hand)
    if (dealt === undefined) return undefined
    const opened = blind.publicCards(hand)
    const known = new Map<number, string>()
    for (const d of dealt.layout) {
      const o = opened.find(p => d.public && p.stage === d.stage && p.seat === d.seat)
      if (o !== undefined) d.positions.forEach((pos, i) => known.set(pos, o.cards[i]))
    }
    const wanted = dealt.layout.filter(d => stages.includes(d.stage))
    if (wanted.some(d => d.public && d.positions.some(p => !known.has(p)))) return undefined
    return wanted.map(d => ({ stage: d.stage, seat: d.seat, public: d.public, cards: d.positions.map(p => known.get(p) ?? HIDDEN) }))
  }

  /** The setup a blind hand is followed from: every seat's hand hidden, the public cards as opened here (undefined until they are). */
  #blindSetup (hand: number): GameSetup | undefined {
    const dealt = (this.#blind as BlindDealerMachine).dealtLayout(hand)
    const deliveries = dealt === undefined ? undefined : this.#blindDeliveries(hand, dealt.stages)
    if (dealt === undefined || deliveries === undefined) return undefined
    const body = dealt.commit.body
    return setupFromDeliveries(body.game, body.seats.length, body.params.dealer, deliveries)
  }

  /**
   * A blind hand's robot seat's view, made once its cards are open (they open when the human seats'
   * shares for them are in: until then the robot cannot act), the hand's steps so far taken on it,
   * each stage with the robot's own cards of it. Made again after each stage (#advance drops them).
   */
  #robotView (h: DealerPlayHand, hand: number, seat: number): PlayHand | undefined {
    const had = h.robots?.get(seat)
    if (had !== undefined) return had
    const blind = this.#blind as BlindDealerMachine
    const dealt = blind.dealtLayout(hand)
    const opened = blind.robotCards(hand).filter(o => o.seat === seat)
    if (dealt === undefined) return undefined
    const own = dealt.layout.filter(d => dealt.stages.includes(d.stage) && d.seat === seat && !d.public)
    if (!own.every(d => opened.some(o => o.stage === d.stage))) return undefined
    const mine = (stage: string): string[] | undefined => opened.find(o => o.stage === stage)?.cards
    const setup: GameSetup = { ...h.setup, hands: h.setup.hands.map((cards, s) => (s === seat ? mine('deal') ?? cards : cards)) }
    const view = new PlayHand({ ...this.#playInit(h.commit, setup), view: { seat } })
    for (const step of h.play.history) {
      const bad = 'accept' in step
        ? view.accept(step.accept)
        : view.deliver(step.deliver.stage, { ...step.deliver.cards, ...(mine(step.deliver.stage) === undefined ? {} : { [String(seat)]: mine(step.deliver.stage) as string[] }) })
      if (bad !== null) throw new Error(`hand ${hand}: robot seat ${seat}'s view refuses a step of the hand: ${'message' in bad ? bad.message : refusalText(bad)}`)
    }
    h.robots = h.robots ?? new Map()
    h.robots.set(seat, view)
    return view
  }

  /** An action taken on the hand, taken on each robot's view too. */
  #toRobots (h: DealerPlayHand, hand: number, a: ActionDoc): void {
    for (const [seat, view] of h.robots ?? []) {
      const bad = view.accept(a)
      if (bad !== null) throw new Error(`hand ${hand}: robot seat ${seat}'s view refuses action ${a.body.n}: ${refusalText(bad)}`)
    }
  }

  /** A played blind hand's outcome once its deal opens (the BREVEAL names it): src/core/hand/blind-play.ts. */
  #blindOutcome (hand: number, deliveries: Delivery[], opening: BlindPlayHand): ReceiptPlay {
    const h = this.#hands.get(hand)
    const chain = this.#lost.delete(hand) || h === undefined ? [] : h.play.chain
    this.#hands.delete(hand)
    const outcome = blindPlayOutcome(opening, chain, deliveries, { ...(h?.refused === undefined ? {} : { refused: h.refused }), ...(h?.waiting === undefined ? {} : { waiting: h.waiting }) }, this.#verify)
    // The game's end, announced once the BREVEAL is out (#after).
    if (outcome.final !== undefined) this.#playedAt.set(hand, { type: 'played', actions: outcome.play.actions.length, ...outcome.final })
    return outcome.play
  }

  /**
   * The hand ends (its game over, a refused action, a turn run out): at a blind table every human
   * seat is sent the whole chain first, so that each holds the chain the BREVEAL will name.
   */
  #end (h: DealerPlayHand, hand: number): Effect[] {
    const resend = this.#blind === undefined ? [] : [...new Set(h.commit.body.seats.filter(p => p !== ROBOT))].flatMap(peer => this.#chainTo(h, hand, peer))
    // Blind: ended once the shares still due are in (#after), or by the blind machine's own record if they never come.
    if (this.#sharesDue(hand)) { this.#endDue.add(hand); return resend }
    return [...resend, ...this.#inner.end(hand)]
  }

  /** Blind: shares a BDEAL asked for are still due in `hand` (its `owed`, src/protocol/blind-dealer.ts status). */
  #sharesDue (hand: number): boolean {
    return this.#blind !== undefined && this.#blind.status().some(s => s.hand === hand && s.owed !== undefined)
  }

  /** The hand's play as saved now: written before whatever its last steps send. */
  #save (hand: number): Effect {
    const h = this.#hands.get(hand) as DealerPlayHand
    this.#saved.add(hand)
    this.#quiet.set(hand, this.#init.now())
    this.#moved.set(hand, this.#init.now())
    const value: PlaySave = { play: 1, hand, setup: h.setup, history: [...h.play.history], ...(h.ended ? { ended: true } : {}), ...(h.refused === undefined ? {} : { refused: h.refused }), ...(h.waiting === undefined ? {} : { waiting: h.waiting }) }
    return { kind: 'persist', key: playSaveKey(this.#handKey(hand)), value }
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
      ...(h.refused === undefined ? {} : { refused: h.refused as ReceiptPlay['actions'][number] }),
      ...(h.waiting === undefined ? {} : { waiting: { seat: h.waiting } })
    }
  }

  /** After any step of the inner machine: a played hand just dealt starts its play. */
  #after (effects: Effect[]): Effect[] {
    // A blind hand whose end waited for shares: ended once they are in (gone, if the hand ended otherwise).
    for (const hand of [...this.#endDue]) {
      if (this.#sharesDue(hand)) continue
      this.#endDue.delete(hand)
      if (this.#inner.status().some(s => s.hand === hand && s.phase === 'dealt')) effects = [...effects, ...this.#inner.end(hand)]
    }
    // A blind hand's robot cards just opened: a robot whose turn it was may act now.
    const opened = new Set(effects.flatMap(e => (e.kind === 'event' && e.event.type === 'cards' && this.#hands.get(e.hand)?.ended === false ? [e.hand] : [])))
    for (const hand of this.#blind === undefined ? [] : opened) {
      const advanced = this.#advance(hand)
      if (advanced.length > 0) effects = [...effects, this.#save(hand), ...advanced]
    }
    for (const [hand, event] of this.#playedAt) {
      if (!effects.some(e => e.kind === 'event' && e.hand === hand && e.event.type === 'revealed')) continue
      effects = [...effects, { kind: 'event', hand, event }]
      this.#playedAt.delete(hand)
    }
    const status = this.#inner.status()
    // A hand is looked at once, when it is first seen dealt (dealtHand recomputes the key).
    for (const hand of this.#looked) {
      if (status.some(s => s.hand === hand)) continue
      this.#looked.delete(hand)
      // The hand is over (logged): its play save goes with it.
      if (this.#saved.delete(hand)) effects = [...effects, dropPlaySave(this.#handKey(hand))]
      this.#hands.delete(hand)
      this.#quiet.delete(hand)
      this.#moved.delete(hand)
    }
    for (const s of status) {
      if (s.phase !== 'dealt' || this.#looked.has(s.hand) || this.#lost.has(s.hand)) continue
      // A blind hand starts once the public cards of its first stages are open here (belote's turned-up card).
      const blindSetup = this.#blind === undefined ? undefined : this.#blindSetup(s.hand)
      if (this.#blind !== undefined && blindSetup === undefined && this.#blind.dealtLayout(s.hand)?.commit.body.params.play === true) continue
      this.#looked.add(s.hand)
      const dealt = this.#blind === undefined ? this.#inner.dealtHand(s.hand) : this.#blind.dealtLayout(s.hand)
      if (dealt === undefined || dealt.commit.body.params.play !== true) continue
      const body = dealt.commit.body
      const setup = blindSetup !== undefined
        ? blindSetup
        : DRAW_GAMES.has(body.game)
          ? drawSetup(body.game, body.seats.length)
          : setupFromDeliveries(body.game, body.seats.length, body.params.dealer, (dealt as DealtHand).deal.deliveries.filter(d => dealt.stages.includes(d.stage)))
      const play = new PlayHand(this.#playInit(dealt.commit, setup))
      this.#hands.set(s.hand, { play, setup, commit: dealt.commit, key: 'key' in dealt ? dealt.key : '', deal: 'deal' in dealt ? dealt.deal : undefined, ended: false })
      const advanced = this.#advance(s.hand)
      effects = [...effects, this.#save(s.hand), ...advanced]
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
    // Not dealt yet, or (blind) dealt and not started yet: its public cards not open here yet.
    const before = this.#inner.status().find(s => s.hand === body.hand && (s.phase !== 'dealt' || (this.#blind !== undefined && !this.#looked.has(s.hand))))
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
      if (refused !== null && (refused.code === 'chain-illegal-action' || refused.code === 'chain-opening') && !h.ended) {
        // The chain's next link, signed by its seat, and against the rules: the hand ends on it, and
        // the receipt carries it as the record naming that seat (docs/games.md "A refused action").
        h.ended = true
        h.refused = a
        return [this.#save(body.hand), ...effects,
          { kind: 'event', hand: body.hand, event: { type: 'play-refused', reason: `seat ${a.body.seat}'s action ${a.body.n}: ${refusalText(refused)}`, seat: a.body.seat } },
          ...this.#end(h, body.hand)]
      }
      if (refused !== null) throw new Rejection(`play: seat ${a.body.seat}'s action ${a.body.n} refused: ${refusalText(refused)}`)
      this.#toRobots(h, body.hand, a)
      effects.push(...this.#toHumans(h, body.hand, [a], from), this.#actionEvent(body.hand, a))
    }
    const advanced = this.#advance(body.hand)
    // Nothing new (every action known already): nothing to save.
    return effects.length === 0 && advanced.length === 0 ? [] : [this.#save(body.hand), ...effects, ...advanced]
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
      if (request !== null && this.#blind !== undefined) {
        // Blind: the stage's shares are asked for (BDEAL); the dealer's node follows it with its
        // cards hidden but for the public ones, and each robot's view is made again with its own.
        // Asked for once; a stage with public cards goes on once they are open here (#after).
        if ((this.#blind.dealtLayout(hand)?.stages.includes(request.stage)) !== true) effects.push(...this.#inner.deliverStage(hand, request.stage, request.inputs?.taker))
        const delivered = this.#blindDeliveries(hand, [request.stage])
        if (delivered === undefined) return effects
        const cards = stageCards(delivered, request)
        const bad = cards === null ? { message: 'the deal has no such stage' } : h.play.deliver(request.stage, cards)
        if (bad !== null) throw new Error(`hand ${hand}: stage ${request.stage} refused by the game: ${bad.message}`)
        h.robots?.clear()
        continue
      }
      if (request !== null) {
        effects.push(...this.#inner.deliverStage(hand, request.stage, request.inputs?.taker))
        // The taker is a deal parameter (belote's take): the deal is the one dealt with it.
        const deal = (this.#inner.dealtHand(hand) as DealtHand).deal
        h.deal = deal
        const cards = stageCards(deal.deliveries, request)
        const bad = cards === null ? { message: 'the deal has no such stage' } : h.play.deliver(request.stage, cards)
        if (bad !== null) throw new Error(`hand ${hand}: stage ${request.stage} refused by the game: ${bad.message}`)
        continue
      }
      if (h.play.over()) {
        if (!h.ended) {
          h.ended = true
          // A blind dealer follows the hand on the public state: its score comes once the deal opens (the receipt).
          if (this.#blind === undefined) effects.push({ kind: 'event', hand, event: { type: 'played', actions: h.play.chain.length, tricks: h.play.tricks(), score: h.play.score() } })
          effects.push(...this.#end(h, hand))
        }
        return effects
      }
      const seat = h.play.toAct()
      if (seat === null || seats[seat] !== ROBOT) return effects
      // At a blind table the robot chooses on its own view, from its hand key, and its card carries its opening.
      const view = this.#blind === undefined ? h.play : this.#robotView(h, hand, seat)
      if (view === undefined) return effects
      const action = view.robot(seat, robotRandom(this.#blind?.robotKey(hand, seat) ?? h.key, h.play.chain.length + 1))
      const card = playedCard(action)
      const opening = this.#blind !== undefined && card !== undefined ? this.#blind.robotOpening(hand, seat, card) : undefined
      const signed = h.play.sign(this.#init.signer, seat, action, opening)
      if (!signed.ok) throw new Error(`hand ${hand}: robot seat ${seat}'s choice refused: ${refusalText(signed.refusal)}`)
      this.#toRobots(h, hand, signed.doc)
      effects.push(...this.#toHumans(h, hand, [signed.doc], undefined), this.#actionEvent(hand, signed.doc))
    }
    throw new Error(`hand ${hand}: the game does not advance`)
  }

  /** The whole chain to one human seat, in PLAYs of at most EARLY_KEPT actions (what a seat keeps ahead of its own chain). */
  #chainTo (h: DealerPlayHand, hand: number, peer: string): Effect[] {
    const out: Effect[] = []
    for (let i = 0; i < h.play.chain.length; i += EARLY_KEPT) {
      out.push({ kind: 'send', to: peer, doc: playDoc(this.#init.signer, this.#init.table.id, hand, docDigest(h.commit), h.play.chain.slice(i, i + EARLY_KEPT)) })
    }
    return out
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
