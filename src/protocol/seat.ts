import { sha256Hex, toHex } from '../core/bytes.js'
import { canonicalJson } from '../core/canonical.js'
import { contributionProblem } from '../core/contribution.js'
import { signFrozen, verifyDocument, type Signed } from '../core/signed.js'
import { compactView, isWholeView, wholeFinal, wholeView, type HeldDocs } from './compact-docs.js'
import { firstRoundAfter, roundTime, sameChain, parseChainInfo } from '../core/beacon/index.js'
import { docDigest, seatCardsDigest } from '../core/hand/digest.js'
import { cardSchemeFor, humanSeats } from '../core/hand/recompute.js'
import { verifyReceipt, type ReceiptVerdict } from '../core/hand/verify.js'
import { acksDue } from '../core/receipt.js'
import { lateAckProblems } from '../core/log/late-ack.js'
import type { AcksDue } from '../core/log/types.js'
import { pledgesDocProblems, verifyAbort } from '../core/hand/abort-rules.js'
import { shieldProblems } from '../core/hand/shield.js'
import { messagesOf } from '../core/hand/reasons.js'
import type {
  AbortBody, AbortReason, AckBody, CardsBody, CommitBody, NonceBody, PledgeBody, PledgesBody, Receipt, RevealBody,
  SignedAck, SignedCommit, SignedNonce, SignedPledge, SignedReveal
} from '../core/hand/messages.js'
import type { SeatHandStatus, SeatSide } from './contracts.js'
import { HandBook, type Transitions } from './hand-book.js'
import { Rejection, type Effect, type HandEvent, type MachineInit } from './types.js'
import { logAbort, signAbort } from './abort.js'
import type { AskBody, FinalWireBody, LateAckWireBody, RelayBody, ViewBody, ViewWireBody } from './wire.js'
import { signRecovered } from './recover.js'
import { sealTimelockText } from '../core/timelock/index.js'
import { checkTimelockFields } from '../core/hand/timelock-checks.js'
import type { BeaconEntry } from '../core/hand/messages.js'

export type SeatInit = MachineInit

// `viewing`: the seat has sent its VIEW and waits for every other seat's before its NONCE (§6 step 4).
// `recovering`: a time-locked hand whose dealer stopped after this seat's nonce was out, waiting for
// the bound round to open every timelock and finish it (docs/protocol.md §10a).
type Phase = 'pledged' | 'viewing' | 'contributed' | 'dealt' | 'acked' | 'recovering' | 'done' | 'aborted'

/**
 * The commit–reveal seat's legal moves (docs/protocol.md §6, §7, §16.4); the same phase again
 * (`dealt`, a later stage's cards) is a save in place that keeps the phase's deadline. A receipt may reach a seat that lost its cards or the REVEAL (`contributed`, `dealt`).
 */
export const SEAT_MOVES: Transitions<Phase> = Object.freeze({
  pledged: ['viewing', 'aborted'],
  viewing: ['contributed', 'aborted'],
  contributed: ['dealt', 'recovering', 'done', 'aborted'],
  dealt: ['acked', 'recovering', 'done', 'aborted'],
  acked: ['done', 'aborted'],
  recovering: ['done', 'aborted'],
  done: [],
  aborted: []
})

export interface SeatHandSnapshot {
  hand: number
  commit: SignedCommit
  nonce: string
  phase: Phase
  /** Kept from PLEDGES on, with every card message: after a restart the seat can still check the reveal. */
  pledges?: SignedPledge[]
  /** The dealer's signed PLEDGES itself: evidence in any record this seat signs about the hand. */
  pledgesDoc?: Signed<PledgesBody>
  /** This seat's own PLEDGE as sent: evidence in a record it signs before the PLEDGES came. */
  ownPledge?: SignedPledge
  cards?: Array<Signed<CardsBody>>
  /** Kept from the ACK on (saved before the ACK leaves): the REVEAL it answers and the ACK itself. */
  reveal?: SignedReveal
  ack?: SignedAck
}

interface SeatHand extends SeatHandSnapshot {
  digest: string
  cards: Array<Signed<CardsBody>>
  /** When the seat stops waiting for the next step (the hand book's deadline table, or ackMs after it asked): it asks the dealer once, then records who stopped. */
  due?: number
  /** It asked the dealer about the hand since it entered this phase (not saved: a restart asks again). */
  asked: boolean
  /** Other seats' views that match this seat's own, by seat (not saved: a restart asks for them again). */
  views: Map<number, Signed<ViewBody>>
  /** Seats asked for their whole VIEW, once each, after theirs named documents other than this seat's (not saved). */
  askedWhole?: Set<number>
  /** Seats this seat's VIEW went to whole, alone (asking or answering `again`, or before an equivocation ends the hand; not saved). */
  wholeTo?: Set<number>
  /** Other seats' NONCEs, as they sent them to this seat. */
  peerNonces: Map<number, SignedNonce>
}

/** Views from other seats for hands this seat has not reached yet, kept for a few hands ahead. */
const EARLY_HANDS = 4
/** How many incomplete receipts a seat remembers, for the late acks that may complete them. */
const INCOMPLETE_KEPT = 64

export interface SeatMeta {
  lastHand: number
  /** Digest of that hand's COMMIT: the next COMMIT must link to it (its `prev`). */
  lastCommit?: string
  /** That COMMIT itself: the evidence of a `broken-chain` record if the next one does not link to it. */
  lastCommitDoc?: SignedCommit
  /**
   * Hands this seat missed and is still asking the dealer about (a later COMMIT showed them): the
   * next to ask about, the last, and the COMMIT digest the next must link to. Saved, so that a seat
   * restarted before the gap is closed goes on asking instead of keeping a log with a gap.
   */
  gap?: SeatGap
}

export interface SeatGap { next: number, end: number, prev?: string }

/** The seat's meta as saved: its last hand and, while it has one, its gap (a copy: the machine goes on changing its own). */
export function seatMetaWrite (table: string, meta: SeatMeta, gap: SeatGap | undefined): Effect {
  const { gap: _old, ...rest } = meta
  return { kind: 'persist', key: seatMetaKey(table), value: gap === undefined ? rest : { ...rest, gap: { ...gap } } }
}

export const seatHandKey = (table: string, hand: number): string => `seat/${table}/hand/${String(hand).padStart(16, '0')}`
export const seatMetaKey = (table: string): string => `seat/${table}/meta`

/**
 * A seat's side of the table protocol, pure. It contributes a nonce only after it has seen every
 * seat's pledge for the exact COMMIT it saw, and at the reveal checks alone (its "shield"):
 * commitment, its own nonce used, every nonce as pledged, the beacon round, the deck, its cards.
 */
export class SeatMachine implements SeatSide {
  readonly #init: SeatInit
  readonly #seat: number
  readonly #hands: HandBook<Phase, SeatHand, SeatHandSnapshot>
  readonly #verify: (doc: Signed<unknown>) => boolean
  #meta: SeatMeta = { lastHand: 0 }
  /**
   * Views that came before this seat's own PLEDGES, by hand then seat: whole ones checked, ones
   * without their documents (docs/protocol.md §3) checked once this seat holds the documents.
   */
  readonly #early = new Map<number, Map<number, Signed<ViewWireBody>>>()
  /** Hands this seat missed (it learnt of a later COMMIT): the next to ask about, the last, and the COMMIT digest the next must link to. */
  #gap: SeatGap | undefined
  /** Digests of the COMMITs this seat recorded as breaking the dealer's chain (each is recorded once). */
  readonly #broken = new Set<string>()
  /**
   * The incomplete receipts this seat logged lately (INCOMPLETE_KEPT, in memory), by COMMIT digest:
   * the acks they lack and those that came late, so that a LATEACK is logged only when it completes
   * a receipt of this log (docs/log.md, "Late acks").
   */
  readonly #incomplete = new Map<string, { due: AcksDue, late: Set<string> }>()

  constructor (init: SeatInit) {
    this.#init = init
    this.#seat = init.table.seats.indexOf(init.signer.peerId)
    if (this.#seat < 0) throw new Error(`${init.signer.peerId} holds no seat at table ${init.table.id}`)
    this.#verify = init.verifyDoc ?? verifyDocument
    const { revealMs, ackMs, contributeMs } = init.timeouts
    this.#hands = new HandBook({
      transitions: SEAT_MOVES,
      // When a seat in each phase stops waiting for the dealer's next step (docs/protocol.md §7):
      // the deal deadline before the cards, revealMs for the REVEAL, 2 × ackMs for the FINAL, R's
      // entry asked for again every contributeMs.
      deadlines: {
        pledged: h => this.#dealDeadline(h.commit.body),
        viewing: h => this.#dealDeadline(h.commit.body),
        contributed: h => this.#dealDeadline(h.commit.body),
        dealt: (_h, now) => now + revealMs,
        acked: (_h, now) => now + 2 * ackMs,
        recovering: (_h, now) => now + contributeMs
      },
      final: ['done', 'aborted'],
      key: hand => seatHandKey(init.table.id, hand),
      snapshot,
      now: init.now
    })
  }

  get seat (): number { return this.#seat }

  /**
   * Brings back the hand counter and each hand in play after a restart (docs/protocol.md §11). A
   * hand resumes in the phase it was saved in, which is the phase it was in (#enter), with its
   * waiting time counted again from its phase: the deal deadline before the cards, `revealMs` for
   * the REVEAL, `2 × ackMs` for the FINAL. It asks the dealer at once what became of each of those
   * hands, and of the hand after the last it knows of: it may have ended, or begun, while the seat
   * was down.
   */
  restore (meta: SeatMeta | undefined, snapshots: SeatHandSnapshot[]): Effect[] {
    if (meta !== undefined) this.#meta = { ...meta }
    this.#gap = meta?.gap === undefined ? undefined : { ...meta.gap }
    const effects: Effect[] = []
    for (const s of snapshots) {
      const hand: SeatHand = { ...s, digest: docDigest(s.commit), cards: [...(s.cards ?? [])], asked: false, views: new Map(), peerNonces: new Map() }
      if (hand.phase === 'acked' && (hand.ack === undefined || hand.reveal === undefined)) continue // cannot be: saved together
      this.#hands.open(hand)
      // Recovering: R's entry is asked for at the first tick after the restart.
      if (hand.phase === 'recovering') hand.due = this.#init.now()
      effects.push(this.#ask(hand.hand, hand.digest))
      // The views it had are gone with the restart: it sends its own again, asking for theirs.
      if (hand.phase === 'viewing') {
        effects.push(...this.#sendView(hand, true))
        hand.wholeTo = new Set(this.#otherHumans(hand))
      }
    }
    effects.push(this.#ask(this.#meta.lastHand + 1, null))
    // A gap still open when it stopped: it goes on asking about the first hand still missing.
    if (this.#gap !== undefined) effects.push(this.#ask(this.#gap.next, null))
    return effects
  }

  #ask (hand: number, commit: string | null): Effect {
    const body: AskBody = { table: this.#init.table.id, hand, commit, seat: this.#seat }
    return { kind: 'send', to: this.#init.table.dealer, doc: signFrozen('ask', body, this.#init.signer) }
  }

  /** Cards this seat holds in a hand in play, by stage; public cards included. */
  /**
   * A played hand moved (an action of its chain): the dealer is not away, so this seat's wait for
   * the REVEAL starts over (docs/games.md "A turn that runs out"). Only while the hand waits for it.
   */
  waitAgain (handNo: number): void {
    const hand = this.#hands.get(handNo)
    if (hand !== undefined && (hand.phase === 'dealt' || hand.phase === 'contributed')) this.#hands.wait(hand)
  }

  cards (handNo: number): Array<{ stage: string, seat: number | null, public: boolean, cards: string[] }> {
    const hand = this.#hands.get(handNo)
    return hand === undefined ? [] : hand.cards.map(c => ({ stage: c.body.stage, seat: c.body.seat, public: c.body.public, cards: c.body.cards }))
  }

  readonly family = 'commit-reveal' as const

  status (): SeatHandStatus[] {
    // A time-locked hand whose cards are dealt says when the seats go on without the dealer.
    return this.#hands.values().map(h => h.phase === 'dealt' && h.commit.body.timelock !== undefined && h.due !== undefined
      ? { hand: h.hand, phase: h.phase, waitUntil: h.due, timelocked: true }
      : { hand: h.hand, phase: h.phase })
  }

  receive (from: string, doc: Signed<unknown>): Effect[] {
    // From the other seats: their views, and their nonces (kept: nobody can say a seat withheld a nonce others hold).
    if (doc.type === 'view') return this.#onView(from, doc as Signed<ViewWireBody>)
    if (doc.type === 'nonce') return this.#onPeerNonce(from, doc as SignedNonce)
    if (from !== this.#init.table.dealer) throw new Rejection(`${doc.type} from ${from}, who is not the dealer`)
    // Abort records are the one thing the dealer relays: a seat's signed record, checked on its own.
    if (doc.signer !== from && doc.type !== 'abort') throw new Rejection(`${doc.type} relayed: signed by ${doc.signer} but sent by the dealer`)
    switch (doc.type) {
      case 'commit': return this.#onCommit(doc as SignedCommit)
      case 'pledges': return this.#onPledges(doc as Signed<PledgesBody>)
      case 'cards': return this.#onCards(doc as Signed<CardsBody>)
      case 'reveal': return this.#onReveal(doc as SignedReveal)
      case 'lateack': return this.#onLateAckDoc(doc as Signed<LateAckWireBody>)
      case 'final': return this.#onFinal(doc as Signed<FinalWireBody>)
      case 'abort': return this.#onAbort(doc as Signed<AbortBody>)
      default: throw new Rejection(`a seat does not accept ${doc.type} messages`)
    }
  }

  tick (now: number): Effect[] {
    const effects: Effect[] = []
    for (const hand of this.#hands.due(now)) {
      if (hand.phase === 'recovering') {
        // Nothing to ask the dealer: R's entry is all this hand waits for now.
        this.#hands.wait(hand)
        effects.push({ kind: 'fetchBeacon', hand: hand.hand, round: (hand.commit.body.beacon as NonNullable<CommitBody['beacon']>).round })
        continue
      }
      if (!hand.asked) {
        // Before recording anything against the dealer, ask it once: the answer may simply have
        // been lost (this seat was down or cut off), and the hand may have ended well.
        hand.asked = true
        hand.due = now + this.#init.timeouts.ackMs
        effects.push(this.#ask(hand.hand, hand.digest))
        continue
      }
      const dealer = [this.#init.table.dealer]
      if (this.#recoverable(hand)) {
        effects.push(...this.#startRecovery(hand))
      } else if (hand.phase === 'viewing') {
        effects.push(...this.#missingViews(hand))
      } else if (hand.phase === 'pledged' || hand.phase === 'contributed') {
        effects.push(...this.#abort(hand, 'missing-deal', dealer, `the dealer did not deal hand ${hand.hand} in time`, this.#held(hand)))
      } else if (hand.phase === 'dealt') {
        effects.push(...this.#abort(hand, 'missing-reveal', dealer, `the dealer did not reveal hand ${hand.hand} in time`, this.#held(hand)))
      } else if (hand.phase === 'acked') {
        // Verified, but the dealer never sent the countersigned receipt: keep our own.
        effects.push(...this.#keepOwnReceipt(hand))
      }
    }
    return effects
  }

  /**
   * Still waiting for VIEWs at its deadline, and no record from the dealer (it asked): the seats
   * whose VIEW never reached this one held the hand up, not the dealer. The record names
   * only them, with the PLEDGES, the VIEWs and the NONCEs it holds as evidence (docs/protocol.md §10).
   */
  #missingViews (hand: SeatHand): Effect[] {
    const { seats } = hand.commit.body
    const absent = this.#otherHumans(hand).filter(s => !hand.views.has(s))
    if (absent.length === 0) return this.#abort(hand, 'missing-deal', [this.#init.table.dealer], `the dealer did not deal hand ${hand.hand} in time`, this.#held(hand))
    const bySeat = <T extends { body: { seat: number } }>(docs: Iterable<T>): T[] => [...docs].sort((a, b) => a.body.seat - b.body.seat)
    return this.#abort(hand, 'missing-view', absent.map(s => seats[s]), `no VIEW from seat ${absent.join(', ')} for hand ${hand.hand} by the deadline`,
      [hand.pledgesDoc as Signed<PledgesBody>, ...bySeat(hand.views.values()), ...bySeat(hand.peerNonces.values())])
  }

  /** Time-locked and this seat's nonce is out: the hand is finished from its timelocks, never dropped. */
  #recoverable (hand: SeatHand): boolean {
    return hand.commit.body.timelock !== undefined && hand.pledges !== undefined && (hand.phase === 'contributed' || hand.phase === 'dealt')
  }

  #startRecovery (hand: SeatHand): Effect[] {
    return [this.#enter(hand, 'recovering'), { kind: 'fetchBeacon', hand: hand.hand, round: (hand.commit.body.beacon as NonNullable<CommitBody['beacon']>).round }]
  }

  /**
   * R's entry (verified by the host) for a hand being recovered: every timelock is opened, the deal
   * recomputed and the cards this seat was shown checked against it; the seat signs and logs the
   * RECOVERED record. A failed fetch is tried again later: the round will come.
   */
  beaconResult (handNo: number, result: { entry: BeaconEntry } | { error: string }): Effect[] {
    const hand = this.#hands.get(handNo)
    if (hand === undefined || hand.phase !== 'recovering') return []
    if ('error' in result || result.entry.round !== hand.commit.body.beacon?.round) return []
    const { doc, event } = signRecovered(hand.commit, hand.pledges ?? [], result.entry, hand.cards, this.#init.timelock?.rule ?? 'replay',
      `seat ${this.#seat} finished hand ${hand.hand} without the dealer`, this.#init.signer)
    const gone = this.#enter(hand, 'done')
    return [
      { kind: 'append', entry: 'recovered', hand: hand.hand, payload: doc },
      { kind: 'event', hand: hand.hand, event },
      gone
    ]
  }

  nextDeadline (): number | undefined {
    return this.#hands.nextDeadline()
  }

  #onCommit (doc: SignedCommit): Effect[] {
    const body = doc.body
    const { table } = this.#init
    // The same COMMIT again (the dealer resends what it could not confirm was delivered, §7, or
    // answers an ASK with it): a duplicate, not a replay. The seat answered it the first time.
    // Still pledged: its PLEDGE may not have reached the dealer (a connection that died, §7), and
    // goes again; the dealer takes a PLEDGE it holds as a duplicate.
    const known = this.#hands.get(body.hand)
    if (known !== undefined && body.table === table.id && docDigest(doc) === known.digest) {
      return known.phase === 'pledged' ? [{ kind: 'send', to: table.dealer, doc: this.#ownPledge(known) }] : []
    }
    const broken = this.#brokenChain(doc)
    if (broken !== undefined) return broken
    checkCommitForSeat(body, this.#meta, this.#init)
    this.#checkTimelock(body)
    if (!this.#verify(doc)) throw new Rejection('commit: bad signature')
    const nonce = toHex(this.#init.random(32))
    const hand: SeatHand = {
      hand: body.hand, commit: doc, nonce, phase: 'pledged', digest: docDigest(doc), cards: [], asked: false, views: new Map(), peerNonces: new Map()
    }
    this.#hands.open(hand)
    const missed = this.#noteGap(body)
    this.#meta = { lastHand: body.hand, lastCommit: hand.digest, lastCommitDoc: doc }
    const pledge: PledgeBody = { table: body.table, hand: body.hand, commit: hand.digest, seat: this.#seat, nonceHash: sha256Hex(nonce) }
    if (body.timelock !== undefined && body.beacon !== null) {
      pledge.timelock = sealTimelockText(nonce, this.#init.beacon!.chain, body.beacon.round, this.#init.random)
    }
    // Kept (and saved with the hand): the time-lock makes it random, so it could not be signed again the same.
    hand.ownPledge = signFrozen('pledge', pledge, this.#init.signer)
    return [
      this.#enter(hand, 'pledged'),
      seatMetaWrite(table.id, this.#meta, this.#gap),
      { kind: 'event', hand: body.hand, event: { type: 'committed', commitment: body.commitment, beaconRound: body.beacon?.round ?? null } },
      { kind: 'send', to: table.dealer, doc: this.#ownPledge(hand) },
      ...missed
    ]
  }

  /**
   * A COMMIT of this table's dealer for the hand right after the last one this seat knows, whose
   * `prev` is not that hand's COMMIT: the dealer dropped or rewrote a hand this seat knows of. The
   * seat does not pledge; it records `broken-chain` blaming the dealer, with the COMMIT it holds
   * and the new one as evidence (docs/protocol.md §8, §10), once per COMMIT. Undefined: no break
   * this seat can show (the COMMIT's other checks follow).
   */
  #brokenChain (doc: SignedCommit): Effect[] | undefined {
    const { table } = this.#init
    const body = doc.body
    const known = this.#meta.lastCommitDoc
    if (known === undefined || docDigest(known) !== this.#meta.lastCommit || body.table !== table.id || body.dealer !== table.dealer || doc.signer !== table.dealer) return undefined
    if (body.hand !== known.body.hand + 1 || body.prev === this.#meta.lastCommit) return undefined
    // Only a human seat of the new COMMIT may record it (the rule's signer test): a COMMIT that no longer seats this node is refused as such below.
    if (!humanSeats(body.seats).some(s => body.seats[s] === this.#init.signer.peerId)) return undefined
    const digest = docDigest(doc)
    if (this.#broken.has(digest)) return []
    if (!this.#verify(doc)) throw new Rejection('commit: bad signature')
    this.#broken.add(digest)
    const detail = `the COMMIT of hand ${body.hand} does not link to the COMMIT of hand ${known.body.hand} this seat holds: the dealer dropped or rewrote that hand`
    const record = signAbort(doc, 'broken-chain', [table.dealer], detail, [known, doc], this.#init.signer)
    return [
      ...logAbort(body.hand, record),
      { kind: 'send', to: table.dealer, doc: record }
    ]
  }

  /** This seat's PLEDGE for the hand, as sent (a hand saved before it was kept: signed again, without a timelock). */
  #ownPledge (hand: SeatHand): SignedPledge {
    if (hand.ownPledge !== undefined) return hand.ownPledge
    const pledge: PledgeBody = { table: hand.commit.body.table, hand: hand.hand, commit: hand.digest, seat: this.#seat, nonceHash: sha256Hex(hand.nonce) }
    return signFrozen('pledge', pledge, this.#init.signer)
  }

  /**
   * Everything this seat holds of the hand, dealer-signed documents included, for a record that
   * claims an absence (docs/protocol.md §10): before the PLEDGES its own PLEDGE; after, the PLEDGES,
   * its own NONCE and every CARDS document it received.
   */
  #held (hand: SeatHand): Array<Signed<unknown>> {
    if (hand.pledgesDoc === undefined) return [this.#ownPledge(hand)]
    return [hand.pledgesDoc, this.#nonce(hand), ...hand.cards]
  }

  /**
   * How long to wait for the cards before recording that the dealer stopped: past the contribution
   * deadline, and past the bound round plus the time the dealer itself allows to fetch it.
   */
  #dealDeadline (body: CommitBody): number {
    const grace = 2 * this.#init.timeouts.contributeMs
    const chain = this.#init.beacon?.chain
    const due = body.beacon === null || chain === undefined ? body.deadline : Math.max(body.deadline, roundTime(chain, body.beacon.round))
    return due + grace
  }

  /** A time-locked table's COMMIT carries the secret locked to exactly its chain and round; another table's carries none. */
  #checkTimelock (body: CommitBody): void {
    if (this.#init.timelock == null) {
      if (body.timelock !== undefined) throw new Rejection('commit is time-locked, the table is not')
      return
    }
    if (body.timelock === undefined) throw new Rejection('commit carries no timelock, the table requires one')
    const problems = checkTimelockFields(body, [])
    if (problems.length > 0) throw new Rejection(problems[0])
  }

  #onPledges (doc: Signed<PledgesBody>): Effect[] {
    const hand = this.#handFor(doc.body, 'pledged', 'viewing', 'contributed')
    if (hand.phase !== 'pledged') {
      // The dealer answering an ASK: the same pledges again change nothing (a seat that has sent its
      // NONCE sends the same NONCE again); a second, different PLEDGES document is equivocation.
      if (hand.pledgesDoc !== undefined && docDigest(doc) !== docDigest(hand.pledgesDoc) && this.#verify(doc)) {
        return this.#equivocation(hand, hand.pledgesDoc, doc, 'the dealer sent this seat two different PLEDGES documents')
      }
      if (canonicalJson(doc.body.pledges) !== canonicalJson(hand.pledges ?? [])) throw new Rejection(`a second, different set of pledges for hand ${hand.hand}`)
      // The dealer lacks this seat's NONCE or its VIEW (§7 "A connection that came back"): the VIEW
      // goes to the dealer again, and the NONCE once it was sent.
      const { dealer } = this.#init.table
      const view = this.#sendView(hand, false).filter(e => e.kind === 'send' && e.to === dealer)
      return hand.phase === 'contributed' ? [...view, { kind: 'send', to: dealer, doc: this.#nonce(hand) }] : view
    }
    const { seats } = hand.commit.body
    const humans = humanSeats(seats)
    const pledges = doc.body.pledges
    if (!this.#verify(doc)) throw new Rejection('pledges: bad signature')
    // Equivocation: a pledge signed by its seat but answering another commit shows that seat saw another COMMIT.
    // The same test as the equivocation rule's (docs/protocol.md §10, case (d)): this table, this hand, a human seat's own pledge.
    const conflicting = pledges.filter(p => p.body.commit !== hand.digest && humans.includes(p.body.seat) && p.signer === seats[p.body.seat] &&
      p.body.table === hand.commit.body.table && p.body.hand === hand.hand && this.#verify(p))
    if (conflicting.length > 0) {
      return this.#abort(hand, 'equivocation', [this.#init.table.dealer], `seat ${conflicting.map(p => p.body.seat).join(', ')} answered another commit for hand ${hand.hand}`, [doc])
    }
    const seen = new Set<number>()
    for (const p of pledges) {
      if (seats[p.body.seat] !== p.signer || seen.has(p.body.seat) || p.body.table !== hand.commit.body.table || p.body.hand !== hand.hand) {
        throw new Rejection(`pledges: bad pledge for seat ${p.body.seat}`)
      }
      if (!this.#verify(p)) throw new Rejection(`pledges: bad signature on the pledge of seat ${p.body.seat}`)
      seen.add(p.body.seat)
    }
    if (humans.some(s => !seen.has(s)) || seen.size !== humans.length) throw new Rejection('pledges: not exactly one pledge per human seat')
    // The one PLEDGES rule the abort records are checked by (order included): this seat's records carry this PLEDGES.
    const faults = pledgesDocProblems(hand.commit.body, hand.digest, doc, this.#verify)
    if (faults.length > 0) throw new Rejection(`pledges: ${faults[0].message}`)
    // Before the nonce leaves: every seat's nonce must be locked to this COMMIT's chain and round,
    // or a seat could withhold its nonce and nobody could open it.
    const locked = checkTimelockFields(hand.commit.body, pledges)
    if (locked.length > 0) throw new Rejection(`pledges: ${locked[0]}`)
    const mine = pledges.find(p => p.body.seat === this.#seat)
    if (mine?.body.nonceHash !== sha256Hex(hand.nonce)) throw new Rejection('pledges: my own pledge was altered')
    hand.pledges = pledges
    hand.pledgesDoc = doc
    // Before its nonce leaves, this seat's view of the hand goes to every other human seat, and
    // theirs must all match it (§6 step 4): two deals for one hand are caught here.
    const effects: Effect[] = [this.#enter(hand, 'viewing'), { kind: 'event', hand: hand.hand, event: { type: 'viewing' } }, ...this.#sendView(hand, false)]
    const early = this.#early.get(hand.hand)
    this.#early.delete(hand.hand)
    for (const view of early?.values() ?? []) {
      effects.push(...this.#takeEarlyView(hand, view))
      if ((hand.phase as Phase) !== 'viewing') return effects
    }
    return [...effects, ...this.#releaseIfAgreed(hand)]
  }

  /** The other human seats, by seat number. */
  #otherHumans (hand: SeatHand): number[] {
    return humanSeats(hand.commit.body.seats).filter(s => s !== this.#seat)
  }

  /**
   * This seat's VIEW to every other human seat (through the dealer to one it cannot reach). It goes
   * without its two documents, which every recipient holds when it sees what this seat saw
   * (docs/protocol.md §3), unless `whole`; a VIEW asking for theirs again (`again`) goes whole, and
   * so does one inside a RELAY.
   */
  #sendView (hand: SeatHand, again: boolean, whole = again): Effect[] {
    const pledgesDoc = hand.pledgesDoc as Signed<PledgesBody>
    const body: ViewBody = {
      table: hand.commit.body.table, hand: hand.hand, commit: hand.digest, seat: this.#seat,
      pledges: docDigest(pledgesDoc), commitDoc: hand.commit, pledgesDoc, again
    }
    const view = signFrozen('view', body, this.#init.signer)
    const sent = whole ? view : compactView(view)
    const { seats } = hand.commit.body
    const { dealer } = this.#init.table
    const others = this.#otherHumans(hand)
    const effects: Effect[] = others.map(s => {
      // Signed only if the host finds seat s unreachable: most hands send no RELAY at all.
      const fallback = seats[s] === dealer ? undefined : () => signFrozen('relay', { table: body.table, hand: body.hand, to: seats[s], view } satisfies RelayBody, this.#init.signer)
      return { kind: 'send', to: seats[s], doc: sent, ...(fallback === undefined ? {} : { fallback }) } satisfies Effect
    })
    // And to the dealer, which keeps it as evidence of who could go on and passes it on to a seat
    // still waiting for it (§6 step 4). A dealer that holds a seat already gets it as that seat.
    if (others.length > 0 && !others.some(s => seats[s] === dealer)) effects.push({ kind: 'send', to: dealer, doc: sent })
    return effects
  }

  /**
   * This seat's VIEW, whole and signed once, to the seats `seats` alone (not to the dealer):
   * answering one that asked for it, asking for theirs (`again`), or before an equivocation ends
   * the hand (#unansweredViews).
   */
  #sendViewTo (hand: SeatHand, seats: number[], again: boolean): Effect[] {
    if (seats.length === 0) return []
    const wholeTo = hand.wholeTo ??= new Set<number>()
    for (const seat of seats) wholeTo.add(seat)
    const to = new Set(seats.map(seat => hand.commit.body.seats[seat]))
    return this.#sendView(hand, again, true).filter(e => e.kind === 'send' && to.has(e.to))
  }

  /** Every other human seat's view matched this seat's own: the NONCE goes to the dealer and to those seats. */
  #releaseIfAgreed (hand: SeatHand): Effect[] {
    if (hand.phase !== 'viewing' || this.#otherHumans(hand).some(s => !hand.views.has(s))) return []
    const nonce = this.#nonce(hand)
    const { seats } = hand.commit.body
    const to = new Set([this.#init.table.dealer, ...this.#otherHumans(hand).map(s => seats[s])])
    return [
      // Before the nonce leaves: a seat that crashes after sending it must come back able to take its
      // cards, or it would later blame the dealer for a deal it simply lost. A crash before the send
      // leaves the nonce unsent, and the dealer's record rightly names this seat.
      this.#enter(hand, 'contributed'),
      { kind: 'event', hand: hand.hand, event: { type: 'contributed' } },
      ...[...to].map(peer => ({ kind: 'send', to: peer, doc: nonce }) satisfies Effect)
    ]
  }

  /**
   * A VIEW from another human seat. Its two documents must be the dealer's, for this table and hand,
   * and be what the view says (so no seat can make the dealer look as if it equivocated). Then it
   * either matches this seat's own view, or shows that the dealer signed two different COMMITs, or
   * two different PLEDGES for one COMMIT, for this hand: an `equivocation` record holding both. A
   * VIEW without its documents (docs/protocol.md §3) has this seat's own put back first; one that
   * names others is asked for whole, and judged when it comes so.
   */
  #onView (from: string, doc: Signed<ViewWireBody>): Effect[] {
    const { table } = this.#init
    const body = doc.body
    if (body.table !== table.id) throw new Rejection(`view for another table (${body.table})`)
    // From its author, or relayed by the dealer (a RELAY): either way checked on its own signature.
    if ((doc.signer !== from && from !== table.dealer) || table.seats[body.seat] !== doc.signer || body.seat === this.#seat) {
      throw new Rejection(`view for seat ${body.seat}, which is not ${doc.signer}'s seat`)
    }
    // Only its author sends a VIEW without its documents: one the dealer passes on goes whole, so a
    // dealer cannot put an unchecked VIEW in the place of a seat's own (an early one is checked late).
    const whole = isWholeView(doc)
    if (!whole && doc.signer !== from) throw new Rejection(`view of seat ${body.seat} passed on without its documents`)
    const hand = this.#hands.get(body.hand)
    if (hand === undefined || hand.phase === 'pledged') {
      // Before this seat's own PLEDGES (or even its COMMIT): kept until it can be compared. A hand
      // in play keeps its early VIEWs however many later hands have been committed since (with
      // many hands in flight, the other seats' PLEDGES can come long before this seat's); a hand
      // not committed yet, a few hands ahead at most. One VIEW per seat and hand, so the memo is
      // bounded by the hands in play and EARLY_HANDS.
      if (hand === undefined && body.hand <= this.#meta.lastHand) throw new Rejection(`view for hand ${body.hand}, which is not in play here`)
      if (hand === undefined && body.hand > this.#meta.lastHand + EARLY_HANDS) throw new Rejection(`view for hand ${body.hand}, too far ahead`)
      // A whole view is checked now; one without its documents once this seat holds them (#takeEarlyView).
      if (whole) this.#checkView(hand, doc)
      const early = this.#early.get(body.hand) ?? new Map<number, Signed<ViewWireBody>>()
      early.set(body.seat, doc)
      this.#early.set(body.hand, early)
      for (const h of this.#early.keys()) if (h <= this.#meta.lastHand && this.#hands.get(h) === undefined) this.#early.delete(h)
      return []
    }
    const full = wholeView(doc, this.#heldDocs(hand))
    if (full === undefined) return this.#askWhole(hand, body.seat)
    this.#checkView(hand, full)
    // A seat back from a restart, or one shown other documents than these, asks for this seat's
    // view: it goes whole, and before this view is judged, so that a seat shown other documents
    // gets them even when this seat ends the hand on seeing its own.
    const effects = body.again ? this.#sendViewTo(hand, [body.seat], false) : []
    effects.push(...this.#judgeView(hand, full))
    if (hand.phase === 'aborted') return effects
    return [...effects, ...this.#releaseIfAgreed(hand)]
  }

  /** The documents this seat holds of `hand`, to put a VIEW's or a FINAL's back from. */
  #heldDocs (hand: SeatHand): HeldDocs {
    return { commit: hand.commit, commitDigest: hand.digest, pledgesDoc: hand.pledgesDoc, pledges: hand.pledges, reveal: hand.reveal }
  }

  /**
   * A VIEW's documents and signatures (a whole one: as it came, or with this seat's own documents
   * put back). A document whose digest is that of one this seat holds and checked (its COMMIT, its
   * PLEDGES) is that document, byte for byte: its signature needs no second check.
   */
  #checkView (hand: SeatHand | undefined, doc: Signed<ViewBody>): void {
    const { table } = this.#init
    const body = doc.body
    const { commitDoc, pledgesDoc } = body
    if (commitDoc.body.table !== table.id || commitDoc.body.hand !== body.hand || docDigest(commitDoc) !== body.commit) throw new Rejection(`view of seat ${body.seat}: its COMMIT is not the one it names`)
    if (pledgesDoc.body.table !== table.id || pledgesDoc.body.hand !== body.hand || pledgesDoc.body.commit !== body.commit || docDigest(pledgesDoc) !== body.pledges) {
      throw new Rejection(`view of seat ${body.seat}: its PLEDGES are not the ones it names`)
    }
    if (commitDoc.signer !== table.dealer || pledgesDoc.signer !== table.dealer) throw new Rejection(`view of seat ${body.seat}: its documents are not signed by the dealer`)
    const heldCommit = hand !== undefined && body.commit === hand.digest
    const heldPledges = hand?.pledgesDoc !== undefined && body.pledges === docDigest(hand.pledgesDoc)
    if (!this.#verify(doc) || (!heldCommit && !this.#verify(commitDoc)) || (!heldPledges && !this.#verify(pledgesDoc))) throw new Rejection(`view of seat ${body.seat}: bad signature`)
  }

  /**
   * A VIEW that came before this seat's own PLEDGES, now that it has them. One that came without
   * its documents is checked now: one that fails is dropped, as it would have been refused had it
   * come whole (its seat's VIEW is still missing), and one naming other documents is asked for whole.
   */
  #takeEarlyView (hand: SeatHand, doc: Signed<ViewWireBody>): Effect[] {
    const whole = wholeView(doc, this.#heldDocs(hand))
    if (whole === undefined) return this.#askWhole(hand, doc.body.seat)
    if (whole !== doc) {
      try {
        this.#checkView(hand, whole)
      } catch (err) {
        if (err instanceof Rejection) return []
        throw err
      }
    }
    return this.#judgeView(hand, whole)
  }

  /**
   * A VIEW without its documents whose digests are not those of this seat's own: the dealer may
   * have shown that seat other documents, and only the whole VIEW holds them (the evidence of an
   * `equivocation`). This seat sends its own VIEW to that seat, whole and asking for theirs
   * (`again`), once per seat and hand; the answer is judged as any whole VIEW. A seat that never
   * answers is one whose VIEW never came.
   */
  #askWhole (hand: SeatHand, seat: number): Effect[] {
    const asked = hand.askedWhole ?? new Set<number>()
    hand.askedWhole = asked
    if (asked.has(seat)) return []
    asked.add(seat)
    return this.#sendViewTo(hand, [seat], true)
  }

  #judgeView (hand: SeatHand, view: Signed<ViewBody>): Effect[] {
    const body = view.body
    if (body.commit !== hand.digest) {
      return this.#equivocation(hand, hand.commit, body.commitDoc, `seat ${body.seat} was shown another COMMIT for hand ${hand.hand}`)
    }
    if (hand.pledgesDoc !== undefined && body.pledges !== docDigest(hand.pledgesDoc)) {
      return this.#equivocation(hand, hand.pledgesDoc, body.pledgesDoc, `seat ${body.seat} was shown other PLEDGES for hand ${hand.hand}`)
    }
    hand.views.set(body.seat, view)
    return []
  }

  /**
   * Two documents the dealer signed for this hand that cannot both stand: the hand ends, the dealer
   * named. This seat's VIEW first goes whole to each other human seat whose VIEW has not matched
   * its own and that has not had it whole (#unansweredViews).
   */
  #equivocation (hand: SeatHand, mine: Signed<unknown>, theirs: Signed<unknown>, detail: string): Effect[] {
    const views = this.#unansweredViews(hand)
    return [...this.#abort(hand, 'equivocation', [this.#init.table.dealer], detail, [mine, theirs]), ...views]
  }

  /**
   * A seat shown other documents than this seat's asks it for its VIEW whole (#askWhole) once it has
   * its own, which may be after this seat has ended the hand on the equivocation: an ask for a hand
   * ended here goes unanswered, and that seat would name this one (`missing-view`) for a VIEW it
   * did send, without its documents. So before the hand ends here, this seat's VIEW goes whole to
   * each other human seat that may not hold the same documents (its VIEW has not matched this
   * seat's) and has not had it whole: each can then record the equivocation itself. None before
   * this seat has its PLEDGES (it has sent no VIEW).
   */
  #unansweredViews (hand: SeatHand): Effect[] {
    if (hand.pledgesDoc === undefined) return []
    return this.#sendViewTo(hand, this.#otherHumans(hand).filter(s => !hand.views.has(s) && hand.wholeTo?.has(s) !== true), false)
  }

  /** Another seat's NONCE: kept once it is well-formed and matches that seat's pledge. */
  #onPeerNonce (from: string, doc: SignedNonce): Effect[] {
    const body = doc.body
    if (doc.signer !== from || this.#init.table.seats[body.seat] !== from) throw new Rejection(`nonce for seat ${body.seat}, which is not ${from}'s seat`)
    const hand = this.#handFor(body, 'viewing', 'contributed', 'dealt', 'acked')
    const malformed = contributionProblem(body.nonce, `nonce of seat ${body.seat} for hand ${hand.hand}`)
    if (malformed !== null) throw new Rejection(malformed)
    const pledge = hand.pledges?.find(p => p.body.seat === body.seat)
    if (pledge === undefined || sha256Hex(body.nonce) !== pledge.body.nonceHash) throw new Rejection(`nonce of seat ${body.seat} for hand ${hand.hand} does not match its pledge`)
    if (!this.#verify(doc)) throw new Rejection(`nonce of seat ${body.seat}: bad signature`)
    hand.peerNonces.set(body.seat, doc)
    return []
  }

  #nonce (hand: SeatHand): Signed<NonceBody> {
    const body: NonceBody = { table: hand.commit.body.table, hand: hand.hand, commit: hand.digest, seat: this.#seat, nonce: hand.nonce }
    return signFrozen('nonce', body, this.#init.signer)
  }

  #onCards (doc: Signed<CardsBody>): Effect[] {
    const hand = this.#handFor(doc.body, 'contributed', 'dealt', 'acked')
    const body = doc.body
    if (!body.public && body.seat !== this.#seat) throw new Rejection(`cards of seat ${String(body.seat)} sent privately to seat ${this.#seat}`)
    const had = hand.cards.find(c => c.body.stage === body.stage && c.body.seat === body.seat)
    // The same cards again (the dealer answering an ASK; the params may have gained a taker since)
    // change nothing; other cards for that stage are refused.
    if (had !== undefined && had.body.public === body.public && had.body.cards.join() === body.cards.join() && this.#verify(doc)) return []
    if (had !== undefined) throw new Rejection(`replayed ${body.stage} cards for hand ${hand.hand}`)
    if (hand.phase === 'acked') throw new Rejection(`${body.stage} cards for hand ${hand.hand} after its REVEAL`)
    if (!this.#verify(doc)) throw new Rejection('cards: bad signature')
    hand.cards.push(doc)
    // Durable before it is announced: a seat shown its cards still holds them after a crash. The
    // REVEAL is awaited from the first cards on (later stages do not move the deadline).
    return [
      this.#enter(hand, 'dealt'),
      { kind: 'event', hand: hand.hand, event: { type: 'cards', stage: body.stage, seat: body.seat, public: body.public, cards: body.cards } }
    ]
  }

  /**
   * A hand of a game that deals no card before play (its draws are the dealer's actions:
   * docs/games.md "Draws on the chain") is dealt once its NONCE is out, or the dealer's first draw for it is in: it
   * stops waiting for a deal and waits for the REVEAL (revealMs), as a hand whose cards came.
   * Returns the save, or nothing when the hand is not such a hand still waiting for its deal.
   */
  drawnDeal (handNo: number): Effect[] {
    const hand = this.#hands.get(handNo)
    if (hand?.phase !== 'contributed' || cardSchemeFor(hand.commit.body).stagesFor(hand.commit.body.game).length > 0) return []
    return [this.#enter(hand, 'dealt')]
  }

  #onReveal (doc: SignedReveal): Effect[] {
    // A game that deals no card before play (its draws are actions: docs/games.md "Draws on the
    // chain") is revealed while the seat is still `contributed`: it is dealt then, with nothing.
    const held = this.#hands.get(doc.body.hand)
    const drawn = held?.phase === 'contributed' && cardSchemeFor(held.commit.body).stagesFor(held.commit.body.game).length === 0
    const hand = this.#handFor(doc.body, 'dealt', 'acked', ...(drawn ? ['contributed' as const] : []))
    const dealt: Effect[] = drawn ? [this.#enter(hand, 'dealt')] : []
    if (hand.phase === 'acked') {
      // A dealer that restarted after revealing sends the same reveal again: answer it the same way.
      if (hand.reveal === undefined || docDigest(hand.reveal) !== docDigest(doc)) throw new Rejection(`a second, different reveal for hand ${hand.hand}`)
      return [{ kind: 'send', to: this.#init.table.dealer, doc: hand.ack as SignedAck }]
    }
    if (!this.#verify(doc)) throw new Rejection('reveal: bad signature')
    const problems = this.#shield(hand, doc)
    if (problems.length > 0) {
      const effects = [{ kind: 'event', hand: hand.hand, event: { type: 'shield', ok: false, problems } } satisfies Effect]
      return [...effects, ...this.#abort(hand, 'invalid-reveal', [this.#init.table.dealer], problems.join('; ').slice(0, 500), [doc, ...this.#held(hand)])]
    }
    hand.reveal = doc
    const ack: AckBody = {
      table: hand.commit.body.table,
      hand: hand.hand,
      commit: hand.digest,
      reveal: docDigest(doc),
      seat: this.#seat,
      cards: this.#ownCardsDigest(hand, doc.body)
    }
    hand.ack = signFrozen('ack', ack, this.#init.signer)
    return [
      ...dealt,
      // Saved before the ACK leaves: a seat that crashes once it has countersigned comes back
      // knowing it did, and takes the receipt that holds its countersignature.
      this.#enter(hand, 'acked'),
      { kind: 'event', hand: hand.hand, event: { type: 'shield', ok: true, problems: [] } },
      { kind: 'send', to: this.#init.table.dealer, doc: hand.ack }
    ]
  }

  /** The seat's own check of the reveal, against what it saw and kept itself (the core's shield). */
  #shield (hand: SeatHand, reveal: SignedReveal): string[] {
    // Mine is among the NONCEs, or (time-locked) opened by the dealer from my pledge when mine did not reach it.
    const mine = reveal.body.nonces.find(n => n.body.seat === this.#seat)?.body.nonce ?? reveal.body.recovered?.find(r => r.seat === this.#seat)?.nonce
    if (mine !== hand.nonce) return ['my own nonce is not the one used']
    // The protocol takes well-formed contributions only (src/core/contribution.ts).
    const malformed = [
      contributionProblem(reveal.body.secret, 'the secret'),
      ...reveal.body.nonces.map(n => contributionProblem(n.body.nonce, `the nonce of seat ${n.body.seat}`)),
      ...(reveal.body.recovered ?? []).map(r => contributionProblem(r.nonce, `the recovered nonce of seat ${r.seat}`))
    ].filter((p): p is string => p !== null)
    if (malformed.length > 0) return malformed
    const input = { commit: hand.commit, pledges: hand.pledges ?? [], reveal, cards: hand.cards, seat: this.#seat }
    return messagesOf(shieldProblems(input, { verifyDoc: this.#verify }))
  }

  #ownCardsDigest (hand: SeatHand, reveal: RevealBody): string {
    const deliveries = hand.cards.filter(c => !c.body.public && c.body.seat === this.#seat)
      .map(c => ({ stage: c.body.stage, seat: c.body.seat, public: false, cards: c.body.cards }))
    return seatCardsDigest(deliveries, this.#seat, reveal.stages)
  }

  #onFinal (wire: Signed<FinalWireBody>): Effect[] {
    // One without the documents this seat holds (docs/protocol.md §3) has them put back first.
    const held = this.#hands.get(wire.body.hand)
    const doc = wholeFinal(wire, held === undefined ? undefined : this.#heldDocs(held))
    if (typeof doc === 'string') throw new Rejection(`final: ${doc}`)
    if (held === undefined && doc.body.table === this.#init.table.id) return this.#catchUp(doc, doc.body.receipt.commit)
    // A seat that lost its cards or the REVEAL (down, cut off) still takes the receipt: it verifies
    // alone, and it holds this seat's pledge, so its nonce was the one used.
    const hand = this.#handFor(doc.body, 'contributed', 'dealt', 'acked')
    if (!this.#verify(doc)) throw new Rejection('final: bad signature')
    const receipt = doc.body.receipt
    if (docDigest(receipt.commit) !== hand.digest) throw new Rejection('final: the receipt is for another commit')
    const verdict = verifyReceipt(receipt, { verifyDoc: this.#verify })
    // An incomplete receipt (a seat did not countersign in time) is still this hand's: it is logged, and verifies as incomplete.
    if (verdict.status === 'failed') throw new Rejection(`final: the receipt does not verify: ${verdict.problems[0].message}`)
    const mineIn = receipt.acks.some(a => a.body.seat === this.#seat)
    // My ACK was saved but never reached the dealer (down right after countersigning): the receipt
    // without any ack of mine is taken, and that same ACK sent again, late. One that holds
    // another ack of mine, or answers another REVEAL, is refused.
    const lost = hand.ack !== undefined && !mineIn && hand.ack.body.reveal === docDigest(receipt.reveal)
    if (hand.ack !== undefined && !lost && !receipt.acks.some(a => docDigest(a) === docDigest(hand.ack))) {
      throw new Rejection('final: the receipt leaves out my countersignature')
    }
    this.#noteIncomplete(verdict)
    // Away when the hand ended (no ACK of mine in it, none sent): countersigned now, late, if my own check holds.
    const late: Effect[] = lost
      ? [{ kind: 'send', to: this.#init.table.dealer, doc: hand.ack as SignedAck }]
      : hand.ack === undefined && !mineIn ? this.#lateAck(hand, receipt) : []
    return [...this.#done(hand, receipt), ...late]
  }

  /**
   * A seat that comes back to the receipt of a hand it took part in but did not countersign
   * countersigns it late (docs/protocol.md §11): only when it holds its own cards of the hand and its
   * shield passes on the receipt's REVEAL (an honest seat never signs what its shield refuses).
   * The ACK is the one it would have sent then; the dealer logs it as a `late-ack` entry.
   */
  #lateAck (hand: SeatHand, receipt: Receipt): Effect[] {
    if (!hand.cards.some(c => !c.body.public && c.body.seat === this.#seat)) return []
    const reveal = receipt.reveal
    const problems = this.#shield(hand, reveal)
    if (problems.length > 0) return [{ kind: 'event', hand: hand.hand, event: { type: 'shield', ok: false, problems } }]
    const ack: AckBody = {
      table: hand.commit.body.table,
      hand: hand.hand,
      commit: hand.digest,
      reveal: docDigest(reveal),
      seat: this.#seat,
      cards: this.#ownCardsDigest(hand, reveal.body)
    }
    return [
      { kind: 'event', hand: hand.hand, event: { type: 'shield', ok: true, problems: [] } },
      { kind: 'send', to: this.#init.table.dealer, doc: signFrozen('ack', ack, this.#init.signer) }
    ]
  }

  /** An incomplete receipt this seat logs: what its late acks must say (the last INCOMPLETE_KEPT kept). */
  #noteIncomplete (verdict: ReceiptVerdict): void {
    if (verdict.status !== 'incomplete') return
    const due = acksDue(verdict.summary)
    if (due === undefined || this.#incomplete.has(due.commit)) return
    this.#incomplete.set(due.commit, { due, late: new Set() })
    for (const old of this.#incomplete.keys()) {
      if (this.#incomplete.size <= INCOMPLETE_KEPT) break
      this.#incomplete.delete(old)
    }
  }

  /**
   * LATEACK from the dealer: a seat's ACK it took after the receipt (docs/protocol.md §11). Logged
   * as a `late-ack` entry when it completes an incomplete receipt this seat logged, checked by the
   * same rule as the log verifier's (lateAckProblems); refused otherwise, so this log never holds a
   * late-ack entry that fails.
   */
  #onLateAckDoc (doc: Signed<LateAckWireBody>): Effect[] {
    const { table } = this.#init
    if (doc.signer !== table.dealer || doc.body.table !== table.id || !this.#verify(doc)) throw new Rejection('lateack: not this table\'s dealer\'s')
    const ack = doc.body.ack
    const held = this.#incomplete.get(ack.body.commit)
    if (held === undefined || doc.body.commit !== ack.body.commit) throw new Rejection(`lateack for hand ${doc.body.hand}: no incomplete receipt of its COMMIT in this seat's log`)
    if (!this.#verify(ack)) throw new Rejection(`lateack for hand ${doc.body.hand}: the ACK's signature does not verify`)
    const problems = lateAckProblems(held.due, held.late, { ...ack.body, signer: ack.signer })
    if (problems.length > 0) throw new Rejection(`lateack: ${problems[0].message}`)
    held.late.add(String(ack.body.seat))
    // The receipt event again, with the seats that have now countersigned.
    const acked = humanSeats(this.#init.table.seats).filter(s => !Object.hasOwn(held.due.seats, String(s)) || held.late.has(String(s)))
    return [
      { kind: 'append', entry: 'late-ack', hand: ack.body.hand, payload: { ack } },
      { kind: 'event', hand: ack.body.hand, event: { type: 'receipt', acked } }
    ]
  }

  /**
   * How a seat that was down learns of a hand it never saw (the dealer's answer to its ASK about
   * the hand after its last): the hand's FINAL or abort record, taken only for exactly that next
   * hand, whose COMMIT is the dealer's for this table and links to the last COMMIT this seat knows.
   * The seat logs it, moves its last hand on (so that COMMIT can never be pledged to later) and
   * asks about the next one.
   */
  #catchUp (doc: Signed<unknown>, commit: SignedCommit): Effect[] {
    const { table } = this.#init
    const body = commit.body
    const gap = this.#gap
    if (gap !== undefined && body.hand === gap.next) return this.#fillGap(gap, doc, commit)
    const next = this.#meta.lastHand + 1
    // An answer about a hand this seat already ended (it asked, and the record came meanwhile too): nothing new.
    if (body.hand < next) return []
    if (body.hand !== next) throw new Rejection(`${doc.type} for hand ${body.hand}, which is not in play here (the next hand this seat can learn of is ${next})`)
    if (body.table !== table.id || body.dealer !== table.dealer || commit.signer !== table.dealer || !this.#verify(commit)) {
      throw new Rejection(`${doc.type} for hand ${body.hand}: its COMMIT is not this table's dealer's`)
    }
    if (this.#meta.lastCommit !== undefined && body.prev !== this.#meta.lastCommit) {
      throw new Rejection(`${doc.type} for hand ${body.hand}: its COMMIT does not link to the commit of hand ${this.#meta.lastHand}`)
    }
    if (!this.#verify(doc)) throw new Rejection(`${doc.type}: bad signature`)
    const digest = docDigest(commit)
    const { entry, event } = this.#outcome(doc, body.hand)
    this.#meta = { lastHand: body.hand, lastCommit: digest, lastCommitDoc: commit }
    return [
      entry,
      seatMetaWrite(table.id, this.#meta, this.#gap),
      { kind: 'event', hand: body.hand, event },
      this.#ask(body.hand + 1, null)
    ]
  }

  /** A hand's FINAL or abort record, checked: the log entry and the event it makes. */
  #outcome (doc: Signed<unknown>, hand: number): { entry: Effect, event: HandEvent } {
    if (doc.type === 'final') {
      const receipt = (doc as Signed<{ commit: string, receipt: Receipt }>).body.receipt
      const verdict = verifyReceipt(receipt, { verifyDoc: this.#verify })
      if (verdict.status === 'failed') throw new Rejection(`final: the receipt does not verify: ${verdict.problems[0].message}`)
      this.#noteIncomplete(verdict)
      return { entry: { kind: 'append', entry: 'receipt', hand, payload: receipt }, event: { type: 'receipt', acked: receipt.acks.map(a => a.body.seat) } }
    }
    const record = doc as Signed<AbortBody>
    const verdict = verifyAbort(record, { verifyDoc: this.#verify, table: this.#init.table })
    if (!verdict.ok) throw new Rejection(`abort does not verify: ${verdict.problems[0].message}`)
    return { entry: { kind: 'append', entry: 'abort', hand, payload: record }, event: { type: 'aborted', reason: record.body.reason, blame: record.body.blame, detail: record.body.detail } }
  }

  /**
   * A COMMIT for a later hand than the next one this seat knows of: it missed the hands between
   * (paused, or cut off while they ran) and asks the dealer about the first of them, then each next
   * one, logging each hand's record as the answers come (no gap in its log).
   */
  #noteGap (body: CommitBody): Effect[] {
    const next = this.#meta.lastHand + 1
    // From hand 1 on, even for a seat that knows no hand yet (its node was up but unreachable for
    // the first hands): a whole log is checked for gaps from hand 1 (docs/log.md, "Hand chains").
    if (body.hand <= next) return []
    this.#gap = { next, end: body.hand - 1, prev: this.#meta.lastCommit }
    return [this.#ask(next, null)]
  }

  /** The dealer's answer about the first missed hand: its COMMIT must be the dealer's and follow the last one logged. */
  #fillGap (gap: SeatGap, doc: Signed<unknown>, commit: SignedCommit): Effect[] {
    const { table } = this.#init
    const body = commit.body
    if (body.table !== table.id || body.dealer !== table.dealer || commit.signer !== table.dealer || !this.#verify(commit)) {
      throw new Rejection(`${doc.type} for hand ${body.hand}: its COMMIT is not this table's dealer's`)
    }
    if (gap.prev !== undefined && body.prev !== gap.prev) throw new Rejection(`${doc.type} for hand ${body.hand}: its COMMIT does not link to the commit of hand ${body.hand - 1}`)
    if (!this.#verify(doc)) throw new Rejection(`${doc.type}: bad signature`)
    const { entry, event } = this.#outcome(doc, body.hand)
    gap.next = body.hand + 1
    gap.prev = docDigest(commit)
    if (gap.next > gap.end) this.#gap = undefined
    // The gap's progress is saved with the entry (a restart asks about the next missing hand, not this one again).
    return [entry, seatMetaWrite(table.id, this.#meta, this.#gap), { kind: 'event', hand: body.hand, event }, ...(this.#gap === undefined ? [] : [this.#ask(gap.next, null)])]
  }

  #keepOwnReceipt (hand: SeatHand): Effect[] {
    const receipt: Receipt = { v: 1, commit: hand.commit, pledges: hand.pledges ?? [], reveal: hand.reveal as SignedReveal, acks: [hand.ack as SignedAck] }
    return this.#done(hand, receipt)
  }

  #done (hand: SeatHand, receipt: Receipt): Effect[] {
    const gone = this.#enter(hand, 'done')
    return [
      { kind: 'append', entry: 'receipt', hand: hand.hand, payload: receipt },
      { kind: 'event', hand: hand.hand, event: { type: 'receipt', acked: receipt.acks.map(a => a.body.seat) } },
      gone
    ]
  }

  #onAbort (doc: Signed<AbortBody>): Effect[] {
    const hand = this.#hands.get(doc.body.hand)
    if (hand === undefined && doc.body.table === this.#init.table.id && doc.body.commit !== null) return this.#catchUp(doc, doc.body.commit)
    if (hand === undefined || doc.body.table !== this.#init.table.id) throw new Rejection(`abort for hand ${doc.body.hand}, which is not in play here`)
    // A record for this hand: its COMMIT is the one this seat holds, judged against this table (as the dealer judges a seat's).
    if (doc.body.commit === null || docDigest(doc.body.commit) !== hand.digest) throw new Rejection(`abort for hand ${doc.body.hand} names another COMMIT than this seat holds`)
    const verdict = verifyAbort(doc, { verifyDoc: this.#verify, table: this.#init.table })
    if (!verdict.ok) throw new Rejection(`abort does not verify: ${verdict.problems[0].message}`)
    if (this.#recoverable(hand)) {
      // Time-locked, nonce out: an abort cannot make the hand disappear. Logged as the claim it is,
      // and the hand is finished from its timelocks.
      return [
        ...logAbort(hand.hand, doc),
        ...this.#startRecovery(hand)
      ]
    }
    const refuted = this.#released(hand, doc)
    const gone = this.#enter(hand, 'aborted')
    return [
      ...logAbort(hand.hand, doc),
      ...refuted,
      gone
    ]
  }

  /**
   * The dealer's `missing-nonce` (`missing-view`) blames seats whose NONCE (VIEW) for this COMMIT
   * this seat holds (each seat sends both to the other seats too): the seat logs, beside the
   * dealer's record, its own `released` record with the PLEDGES and those documents, which refutes
   * the dealer's claim in this log (docs/protocol.md §10). Not sent: the hand is over everywhere.
   */
  #released (hand: SeatHand, doc: Signed<AbortBody>): Effect[] {
    const { seats } = hand.commit.body
    const reason = doc.body.reason
    if ((reason !== 'missing-nonce' && reason !== 'missing-view') || doc.signer !== this.#init.table.dealer || hand.pledgesDoc === undefined) return []
    const held: Map<number, Signed<unknown>> = reason === 'missing-nonce' ? hand.peerNonces : hand.views
    const seatsHeld = doc.body.blame.map(b => seats.indexOf(b)).filter(s => s !== this.#seat && held.has(s)).sort((a, b) => a - b)
    if (seatsHeld.length === 0) return []
    const what = reason === 'missing-nonce' ? 'NONCE' : 'VIEW'
    const detail = `seat ${this.#seat} holds the ${what} of seat ${seatsHeld.join(', ')} for hand ${hand.hand}, which the dealer's ${reason} says never came`
    const record = signAbort(hand.commit, 'released', [], detail, [hand.pledgesDoc, ...seatsHeld.map(s => held.get(s) as Signed<unknown>)], this.#init.signer)
    return [
      ...logAbort(hand.hand, record)
    ]
  }

  #abort (hand: SeatHand, reason: AbortReason, blame: string[], detail: string, evidence: Array<Signed<unknown>>): Effect[] {
    const doc = signAbort(hand.commit, reason, blame, detail, evidence, this.#init.signer)
    const gone = this.#enter(hand, 'aborted')
    return [
      ...logAbort(hand.hand, doc),
      { kind: 'send', to: this.#init.table.dealer, doc },
      gone
    ]
  }

  /**
   * The one place a hand changes phase (or, staying in `dealt`, gains cards). It sets when the seat
   * stops waiting for the next step, and returns the save that must follow, taken now: what is on
   * disk is always the phase the hand is in (docs/protocol.md §11). The caller puts it before any
   * send the new phase allows. A hand that is over (`done`, `aborted`) leaves memory and disk; the
   * caller puts that after the log entry.
   */
  #enter (hand: SeatHand, phase: Phase): Effect {
    if (phase === hand.phase) return this.#hands.save(hand)
    hand.asked = false
    return this.#hands.enter(hand, phase)
  }

  #handFor (body: { table: string, hand: number, commit: string }, ...phases: Phase[]): SeatHand {
    if (body.table !== this.#init.table.id) throw new Rejection(`message for another table (${body.table})`)
    const hand = this.#hands.get(body.hand)
    if (hand === undefined) throw new Rejection(`message for hand ${body.hand}, which is not in play here (replayed or late)`)
    if (body.commit !== hand.digest) {
      throw new Rejection(`message for hand ${body.hand} answers another commit`)
    }
    if (!phases.includes(hand.phase)) throw new Rejection(`message for hand ${body.hand} arrived in phase ${hand.phase}`)
    return hand
  }
}

/**
 * A COMMIT's checks as a seat makes them, for any scheme (docs/protocol.md §8): this table, a new
 * hand linked to the last one seen, the table's scheme, game, seats and dealer, the beacon binding,
 * a live and bounded deadline. The signature is checked by the caller, last.
 */
export function checkCommitForSeat (body: CommitBody, meta: SeatMeta, init: MachineInit): void {
  const { table } = init
  if (body.table !== table.id) throw new Rejection(`commit for another table (${body.table})`)
  if (body.hand <= meta.lastHand) throw new Rejection(`commit for hand ${body.hand} replayed (hands up to ${meta.lastHand} were already committed)`)
  if (body.dealer !== table.dealer) throw new Rejection('commit names another dealer')
  // Hands form a chain of commits; a seat that saw the previous hand checks the link (a forked history shows here).
  if (body.hand === meta.lastHand + 1 && meta.lastCommit !== undefined && body.prev !== meta.lastCommit) {
    throw new Rejection(`commit for hand ${body.hand} does not link to the commit of hand ${meta.lastHand}`)
  }
  if (body.scheme !== table.scheme || body.game !== table.game) throw new Rejection(`commit is for ${body.scheme}/${body.game}, the table plays ${table.scheme}/${table.game}`)
  if (body.seats.length !== table.seats.length || body.seats.some((s, i) => s !== table.seats[i])) throw new Rejection('commit seats differ from the table\'s')
  if (body.params.dealer >= body.seats.length) throw new Rejection('commit names a dealer seat the table does not have')
  checkBeaconBinding(body, init)
  if (body.deadline < init.now()) throw new Rejection(`commit for hand ${body.hand} arrived after its deadline`)
  // A deadline far ahead would let a dealer hold the seats' nonces in a hand that never moves.
  if (body.deadline > init.now() + 2 * init.timeouts.contributeMs) {
    throw new Rejection(`commit for hand ${body.hand} sets a deadline further ahead than the table allows (${init.timeouts.contributeMs} ms)`)
  }
}

function checkBeaconBinding (body: CommitBody, init: MachineInit): void {
  const want = init.beacon
  if (want === null) {
    if (body.beacon !== null) throw new Rejection('commit binds a beacon the table does not use')
    return
  }
  if (body.beacon === null) throw new Rejection('commit binds no beacon round, the table requires one')
  let chain
  try { chain = parseChainInfo(body.beacon.info) } catch (err) { throw new Rejection(`commit beacon chain info: ${(err as Error).message}`) }
  if (!sameChain(chain, want.chain) || body.beacon.chainHash !== want.chain.hash) throw new Rejection('commit binds another drand chain than the table\'s')
  // The round must not be known while contributions can still change: it is published after the deadline.
  if (roundTime(chain, body.beacon.round) <= body.deadline) {
    throw new Rejection(`commit binds drand round ${body.beacon.round}, published before the contribution deadline`)
  }
  // Nor later than the table's rule gives: a far-off round would hold this seat's nonce in a stalled hand.
  const latest = firstRoundAfter(chain, body.deadline, want.marginMs)
  if (body.beacon.round > latest) {
    throw new Rejection(`commit binds drand round ${body.beacon.round}, but the table's rule (first round due after the deadline plus ${want.marginMs} ms) gives round ${latest}`)
  }
}

/** A copy, not a view: the hand goes on changing after the save is asked for. */
function snapshot (h: SeatHand): SeatHandSnapshot {
  return { hand: h.hand, commit: h.commit, nonce: h.nonce, phase: h.phase, pledges: h.pledges, pledgesDoc: h.pledgesDoc, ownPledge: h.ownPledge, cards: [...h.cards], reveal: h.reveal, ack: h.ack }
}

