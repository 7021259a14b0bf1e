import { sha256Hex, toHex } from '../core/bytes.js'
import { contributionProblem } from '../core/contribution.js'
import { signFrozen, verifyDocument, type Signed } from '../core/signed.js'
import { firstRoundAfter } from '../core/beacon/index.js'
import { sealTimelockText, timelockSupported } from '../core/timelock/index.js'
import { checkPledgeTimelock, openCommitted, recoveredNonces, timelockChain } from '../core/hand/timelock-checks.js'
import { signRecovered } from './recover.js'
import { docDigest, seatCardsDigest, ZERO_HASH } from '../core/hand/digest.js'
import { cardSchemeFor, humanSeats, noncesBySeat, recomputeDeal } from '../core/hand/recompute.js'
import { ROBOT } from '../core/hand/messages.js'
import type {
  AbortBody, AbortReason, AckBody, BeaconEntry, CardsBody, CommitBody, DealParams, NonceBody, PledgeBody, PledgesBody,
  Receipt, RevealBody, SignedAck, SignedCommit, SignedNonce, SignedPledge, SignedReveal
} from '../core/hand/messages.js'
import type { Deal } from '../core/schemes/types.js'
import type { DealerHandStatus, DealerSide } from './contracts.js'
import { HandBook, type Transitions, humanSeatOf } from './hand-book.js'
import { MachineFailure, Rejection, type Effect, type MachineInit } from './types.js'
import { checkAsk, checkSeatDoc, sentBefore } from './hand-lookup.js'
import { logAbort, signAbort } from './abort.js'
import { checkAbortRecord } from '../core/hand/abort-rules.js'
import { INITIAL_STAGES } from './stages.js'
import type { AskBody, FinalBody, LateAckWireBody, RelayBody } from './wire.js'
import { verifyReceipt } from '../core/hand/verify.js'
import { acksDue } from '../core/receipt.js'
import { lateAckProblems } from '../core/log/late-ack.js'
import type { ViewBody, ViewWireBody } from '../core/hand/view-messages.js'
import { compactFinal, wholeView } from './compact-docs.js'

/** How many ended hands the dealer can still tell a seat about (docs/protocol.md §11): the hand book's memo. */
export { ENDED_HANDS_KEPT as ENDED_KEPT } from './hand-book.js'
/** How many times the dealer answers one seat's ASK about one hand. */
const ANSWERS_PER_SEAT_HAND = 4
/** How many times a hand's documents go again to a seat whose connection came back (#resync). */
export const RESYNCS_PER_SEAT_HAND = 4

/** What the table's play needs of a dealt hand (DealerMachine.dealtHand). */
export interface DealtHand { commit: SignedCommit, digest: string, deal: Deal, key: string, stages: string[] }

/** A log entry as the host reads it back (kind and payload), for `restore`. */
export interface LoggedOutcome { kind: string, payload: unknown }

export type DealerInit = MachineInit

// `recovering`: a time-locked hand the dealer lost before dealing (restart), finished from its
// timelocks like the seats do it, once the bound round is out.
type Phase = 'pledging' | 'contributing' | 'beacon' | 'recovering' | 'dealt' | 'revealed' | 'done' | 'aborted'

/**
 * The commit–reveal dealer's legal moves (docs/protocol.md §6, §16.4). With no human seat a hand
 * goes from `pledging` straight to its deal. A phase entered again: `dealt` (a later stage dealt),
 * `revealed` (the same REVEAL sent again after a restart: the seats' time to countersign starts
 * over), `recovering` (a restart while waiting for R).
 */
export const DEALER_MOVES: Transitions<Phase> = Object.freeze({
  pledging: ['contributing', 'beacon', 'dealt', 'aborted'],
  contributing: ['beacon', 'recovering', 'dealt', 'aborted'],
  beacon: ['recovering', 'dealt', 'done', 'aborted'],
  recovering: ['recovering', 'done', 'aborted'],
  dealt: ['dealt', 'revealed', 'aborted'],
  revealed: ['revealed', 'done', 'aborted'],
  done: [],
  aborted: []
})

/** The durable part of a hand: enough to reveal, and to finish, after a restart. */
export interface DealerHandSnapshot {
  hand: number
  secret: string
  commit: SignedCommit
  phase: Phase
  pledges: SignedPledge[]
  nonces: SignedNonce[]
  beacon: BeaconEntry | null
  params: DealParams
  stages: string[]
  /** Nonces opened from the pledges of seats that never sent their NONCE (time-locked tables). */
  recovered?: Array<{ seat: number, nonce: string }>
}

interface DealerHand extends DealerHandSnapshot {
  digest: string
  deal?: Deal
  reveal?: SignedReveal
  acks: Map<number, SignedAck>
  /** When the hand's phase stops waiting (the hand book's deadline table). */
  due?: number
  /**
   * The PLEDGES this dealer sent (from `contributing` on; not saved): every VIEW must name it (its
   * docDigest), and a VIEW without its documents gets it back (docs/protocol.md §3).
   */
  pledgesDoc?: Signed<PledgesBody>
  /**
   * The seats' VIEWs, by seat (not saved: a dealer restarted before dealing ends the hand). They
   * say who held the hand up at the deadline (#nonceDeadline), and are passed on to seats still
   * waiting (#forwardViews).
   */
  views: Map<number, Signed<ViewBody>>
  /** Which views went to which seat (`digest>peer`); once the forwarding time passed, views are forwarded as they come. */
  forwarded?: Set<string>
}

/** What a seat may ask of the dealer a bounded number of times per hand: ASKs, its one record, relays of its VIEW. */
type Quota = `ask/${number}` | `record/${number}` | `relay/${string}/${string}` | `late-ack/${number}` | `resync/${number}`

export interface DealerMeta {
  nextHand: number
  prevCommit: string
}

export const dealerHandKey = (table: string, hand: number): string => `dealer/${table}/hand/${String(hand).padStart(16, '0')}`
export const dealerMetaKey = (table: string): string => `dealer/${table}/meta`

/** A COMMIT or PLEDGES the host could not deliver is sent again this often until the deadline. */
export const DELIVERY_RETRY_MS = 1_000

/** A document of a hand that did not reach a seat (host-reported), and when to try again. */
/** The documents of a hand that did not reach a seat (host-reported; several when passed-on VIEWs failed), and when to try again. */
interface Undelivered { docs: Set<Signed<unknown>>, reason: string, retryAt: number }

/**
 * The dealer's side of the table protocol, pure: documents in, effects out, time and randomness
 * injected. Several hands may be in flight at once (pipelining); each is independent.
 */
export class DealerMachine implements DealerSide {
  readonly #init: DealerInit
  readonly #book: HandBook<Phase, DealerHand, DealerHandSnapshot, Quota>
  readonly #humans: number[]
  readonly #verify: (doc: Signed<unknown>) => boolean
  /** Per hand, per seat index: what could not be delivered to a seat still owing its contribution. */
  readonly #undelivered = new Map<number, Map<number, Undelivered>>()
  /**
   * A seat's own private CARDS whose send failed, by hand, seat and stage (sent again every
   * DELIVERY_RETRY_MS): while any is undelivered the dealer refuses End, since the seat's shield
   * would rightly fail a REVEAL listing a stage whose cards it never received (docs/protocol.md §8).
   */
  readonly #cardsUndelivered = new Map<number, Map<string, { to: string, doc: Signed<CardsBody>, reason: string, retryAt: number }>>()
  #meta: DealerMeta = { nextHand: 1, prevCommit: ZERO_HASH }

  constructor (init: DealerInit) {
    this.#init = init
    const { contributeMs, ackMs } = init.timeouts
    this.#book = new HandBook({
      transitions: DEALER_MOVES,
      // When each phase stops waiting (tick): pledges and nonces by the COMMIT's deadline,
      // countersignatures ackMs after the REVEAL, a time-locked hand's bound round asked for again
      // every contributeMs. `beacon` waits for the host's answer, `dealt` for the host's end.
      deadlines: {
        pledging: h => h.commit.body.deadline,
        contributing: h => h.commit.body.deadline,
        recovering: (_h, now) => now + contributeMs,
        revealed: (_h, now) => now + ackMs
      },
      final: ['done', 'aborted'],
      key: hand => dealerHandKey(init.table.id, hand),
      snapshot,
      now: init.now
    })
    this.#humans = humanSeats(init.table.seats)
    this.#verify = init.verifyDoc ?? verifyDocument
    if (init.signer.peerId !== init.table.dealer) throw new Error('the dealer machine must run on the table\'s dealer node')
    // Fails early (CoreInputError) when the scheme cannot deal this game with this many seats.
    cardSchemeFor({ scheme: init.table.scheme, game: init.table.game, seats: init.table.seats, beacon: init.beacon === null ? null : { chainHash: init.beacon.chain.hash, round: 1, info: {} } } as CommitBody)
    if (init.timelock != null && (init.beacon === null || !timelockSupported(init.beacon.chain))) {
      throw new Error('a time-locked table needs a beacon whose scheme timelock supports (bls-unchained-g1-rfc9380)')
    }
  }

  /**
   * Brings back hands in flight and the hand counter after a restart (docs/protocol.md §11). Each
   * hand resumes from the phase it was saved in, which is the phase it was in (#enter):
   * - `pledging`, `contributing`: the contributions received are not kept one by one, so the hand
   *   cannot go on; it is aborted with the dealer named and its secret published in the record, so
   *   nobody can say it was chosen later;
   * - `beacon`: the nonces are kept; the bound round is fetched again, and the hand is dealt;
   * - `dealt`: it waits for the end of the hand, as before;
   * - `revealed`: the same REVEAL (same body, deterministic signature) is sent again.
   * `logged` is the end of the dealer's log (oldest first): what the ended hands' seats may still ask for.
   */
  restore (meta: DealerMeta | undefined, snapshots: DealerHandSnapshot[], logged: LoggedOutcome[] = []): Effect[] {
    if (meta !== undefined) this.#meta = { ...meta }
    for (const e of logged) this.#rememberLogged(e)
    const effects: Effect[] = []
    for (const s of snapshots) {
      if (s.phase === 'done' || s.phase === 'aborted') continue
      const hand: DealerHand = { ...s, pledges: [...s.pledges], nonces: [...s.nonces], stages: [...s.stages], digest: docDigest(s.commit), acks: new Map(), views: new Map() }
      this.#book.open(hand)
      switch (s.phase) {
        case 'contributing':
        case 'beacon':
        case 'recovering':
          // Time-locked: the seats finish a hand the dealer stopped in from its timelocks once R is
          // out; the dealer does the same from its saved pledges, and logs the same record.
          if (s.commit.body.timelock !== undefined) {
            effects.push(...this.#recoverLater(hand))
            break
          }
          if (s.phase === 'beacon') {
            effects.push({ kind: 'fetchBeacon', hand: s.hand, round: (s.commit.body.beacon as NonNullable<CommitBody['beacon']>).round })
            break
          }
          effects.push(...this.#abort(hand, 'dealer-stopped', [this.#init.table.dealer], `the dealer restarted before dealing; the secret of hand ${s.hand} was ${s.secret}`))
          break
        case 'pledging':
          effects.push(...this.#abort(hand, 'dealer-stopped', [this.#init.table.dealer], `the dealer restarted before dealing; the secret of hand ${s.hand} was ${s.secret}`))
          break
        case 'dealt':
          hand.deal = this.#recompute(hand)
          break
        case 'revealed':
          hand.deal = this.#recompute(hand)
          effects.push(...this.#reveal(hand))
          break
      }
    }
    return effects
  }

  readonly family = 'commit-reveal' as const

  /** Joined: PLEDGEs in; contributed: NONCEs in (src/protocol/contracts.ts). */
  status (): DealerHandStatus[] {
    return this.#book.values().map(h => ({
      hand: h.hand, family: this.family, phase: h.phase, stages: h.stages, joined: h.pledges.length, contributed: h.nonces.length, acks: h.acks.size
    }))
  }

  get inFlight (): number { return this.#book.size }

  /**
   * The robot seats' private cards of a hand in play, for the stages delivered so far: the dealer
   * plays those seats, so its own operator may see them (they never leave the dealer node).
   */
  robotCards (handNo: number): Array<{ stage: string, seat: number, cards: string[] }> {
    const hand = this.#book.get(handNo)
    if (hand?.deal === undefined) return []
    const { seats } = hand.commit.body
    return hand.deal.deliveries
      .filter(d => !d.public && d.seat !== null && seats[d.seat] === ROBOT && hand.stages.includes(d.stage))
      .map(d => ({ stage: d.stage, seat: d.seat as number, cards: d.cards }))
  }

  /** A hand in its `dealt` phase: its COMMIT, the deal, its key and the stages dealt so far (the table's play, src/protocol/play.ts). */
  dealtHand (handNo: number): DealtHand | undefined {
    const hand = this.#book.get(handNo)
    if (hand?.deal === undefined || hand.phase !== 'dealt') return undefined
    const { key } = recomputeDeal(hand.commit.body, hand.secret, recoveredNonces(noncesBySeat(hand.commit.body, hand.nonces), hand.recovered), hand.beacon, hand.params)
    return { commit: hand.commit, digest: hand.digest, deal: hand.deal, key, stages: [...hand.stages] }
  }

  /** COMMIT a new hand: the secret is persisted before the commitment is sent anywhere. */
  startHand (params: DealParams): { hand: number, effects: Effect[] } {
    const { table, timeouts, signer } = this.#init
    const hand = this.#meta.nextHand
    const secret = toHex(this.#init.random(32))
    const deadline = this.#init.now() + timeouts.contributeMs
    let beacon: CommitBody['beacon'] = null
    if (this.#init.beacon !== null) {
      const { chain, marginMs } = this.#init.beacon
      beacon = { chainHash: chain.hash, round: firstRoundAfter(chain, deadline, marginMs), info: { ...chain } as Record<string, unknown> }
    }
    const body: CommitBody = {
      table: table.id,
      hand,
      prev: this.#meta.prevCommit,
      scheme: table.scheme,
      game: table.game,
      seats: table.seats,
      dealer: table.dealer,
      params,
      commitment: sha256Hex(secret),
      beacon,
      deadline
    }
    if (this.#init.timelock != null && beacon !== null) {
      body.timelock = sealTimelockText(secret, this.#init.beacon!.chain, beacon.round, this.#init.random)
    }
    const commit = signFrozen('commit', body, signer)
    const state: DealerHand = {
      hand, secret, commit, phase: 'pledging', pledges: [], nonces: [], beacon: null, params, stages: [],
      digest: docDigest(commit), acks: new Map(), views: new Map()
    }
    this.#book.open(state)
    this.#meta = { nextHand: hand + 1, prevCommit: state.digest }
    const effects: Effect[] = [
      this.#book.save(state),
      { kind: 'persist', key: dealerMetaKey(table.id), value: { ...this.#meta } },
      { kind: 'event', hand, event: { type: 'committed', commitment: body.commitment, beaconRound: beacon?.round ?? null } },
      ...this.#toHumans(commit)
    ]
    if (this.#humans.length === 0) effects.push(...this.#afterNonces(state))
    return { hand, effects }
  }

  receive (from: string, doc: Signed<unknown>): Effect[] {
    return this.#guard((doc.body as { hand?: unknown }).hand, () => {
      switch (doc.type) {
        case 'pledge': return this.#onPledge(from, doc as Signed<PledgeBody>)
        case 'nonce': return this.#onNonce(from, doc as Signed<NonceBody>)
        case 'ack': return this.#onAck(from, doc as Signed<AckBody>)
        case 'abort': return this.#onSeatAbort(from, doc as Signed<AbortBody>)
        case 'ask': return this.#onAsk(from, doc as Signed<AskBody>)
        case 'relay': return this.#onRelay(from, doc as Signed<RelayBody>)
        case 'view': return this.#onView(from, doc as Signed<ViewWireBody>)
        default: throw new Rejection(`a dealer does not accept ${doc.type} messages`)
      }
    })
  }

  /**
   * Runs one step of hand `handNo`. Every document is checked before it changes anything, so an
   * error that is not a Rejection is this machine failing, not the sender: the hand then ends at
   * once with a `dealer-stopped` record naming the dealer and publishing the secret, never with
   * nobody named, and the error goes on to the host.
   */
  #guard (handNo: unknown, step: () => Effect[]): Effect[] {
    try {
      return step()
    } catch (err) {
      const hand = typeof handNo === 'number' ? this.#book.get(handNo) : undefined
      if (err instanceof Rejection || hand === undefined) throw err
      // No record gives a time-locked hand up past its pledges (the rule fails one); the error still goes on.
      if (this.#timelockedPastPledges(hand)) throw new MachineFailure(err, [])
      const effects = this.#abort(hand, 'dealer-stopped', [this.#init.table.dealer], `the dealer failed on hand ${hand.hand} (${String((err as Error).message).slice(0, 200)}); the secret of hand ${hand.hand} was ${hand.secret}`)
      throw new MachineFailure(err, effects)
    }
  }

  /**
   * A time-locked hand whose pledges are all in cannot be called off (docs/protocol.md §16.4): it
   * stays saved and is finished from its timelocks (by the seats, and by this node after its
   * restart), and no record of this dealer gives it up.
   */
  #timelockedPastPledges (hand: DealerHand): boolean {
    return hand.commit.body.timelock !== undefined && hand.phase !== 'pledging'
  }

  /** Never asked for: a commit–reveal dealer keeps the FINAL of each of its last ended hands in memory (ENDED_KEPT). */
  recalled (_hand: number, _to: string, _receipt: unknown): Effect[] { return [] }

  /** The beacon round the COMMIT named arrived, verified by the host; or it could not be had. */
  beaconResult (handNo: number, result: { entry: BeaconEntry } | { error: string }): Effect[] {
    return this.#guard(handNo, () => this.#onBeacon(handNo, result))
  }

  #onBeacon (handNo: number, result: { entry: BeaconEntry } | { error: string }): Effect[] {
    const hand = this.#book.get(handNo)
    if (hand === undefined || (hand.phase !== 'beacon' && hand.phase !== 'recovering')) return []
    if (hand.phase === 'recovering') {
      // The round will come: a hand finished from its timelocks is never given up, only retried.
      if ('error' in result || result.entry.round !== hand.commit.body.beacon?.round) {
        this.#book.wait(hand)
        return []
      }
      return this.#recover(hand, result.entry)
    }
    // Time-locked, every nonce out (docs/protocol.md §16.4): nobody can call the hand off, the dealer
    // included. It is not dealt late either: once R can be had it is finished from its timelocks.
    if (hand.commit.body.timelock !== undefined && ('error' in result || result.entry.round !== hand.commit.body.beacon?.round)) return this.#recoverLater(hand)
    if ('error' in result) return this.#abort(hand, 'beacon-unavailable', [], result.error)
    if (result.entry.round !== hand.commit.body.beacon?.round) {
      return this.#abort(hand, 'beacon-unavailable', [], `the beacon gave round ${result.entry.round}, not the bound round`)
    }
    hand.beacon = result.entry
    const missing = this.#humans.filter(s => !hand.nonces.some(n => n.body.seat === s))
    if (missing.length > 0) return this.#recoverNonces(hand, missing)
    return this.#dealInitial(hand)
  }

  /**
   * Time-locked: seats that pledged but never sent their NONCE cannot opt out. Their nonces are
   * opened from their pledges with R's entry and the hand is dealt as usual (the REVEAL lists them
   * under `recovered`). A pledge that does not open to its nonceHash is its seat's fault: the hand
   * ends with the dealer's RECOVERED record naming it, its signed pledge the evidence.
   */
  #recoverNonces (hand: DealerHand, missing: number[]): Effect[] {
    const chain = timelockChain(hand.commit.body)
    if (typeof chain === 'string') return this.#abort(hand, 'beacon-unavailable', [], chain)
    const recovered: Array<{ seat: number, nonce: string }> = []
    for (const seat of missing) {
      const pledge = hand.pledges.find(p => p.body.seat === seat)
      const opened = pledge?.body.timelock === undefined
        ? { ok: false as const }
        : openCommitted(pledge.body.timelock, chain, hand.beacon as BeaconEntry, pledge.body.nonceHash)
      if (!opened.ok) return this.#recover(hand, hand.beacon as BeaconEntry)
      recovered.push({ seat, nonce: opened.value })
    }
    hand.recovered = recovered
    return [
      { kind: 'event', hand: hand.hand, event: { type: 'nonces-recovered', seats: missing } },
      ...this.#dealInitial(hand)
    ]
  }

  /** Waits for R to end a time-locked hand with the dealer's own RECOVERED record. */
  #recoverLater (hand: DealerHand): Effect[] {
    return [this.#enter(hand, 'recovering'), { kind: 'fetchBeacon', hand: hand.hand, round: (hand.commit.body.beacon as NonNullable<CommitBody['beacon']>).round }]
  }

  /** Ends a time-locked hand with the dealer's own RECOVERED record (no dealing: see restore). */
  #recover (hand: DealerHand, entry: BeaconEntry): Effect[] {
    const { doc, event } = signRecovered(hand.commit, hand.pledges, entry, [], this.#init.timelock?.rule ?? 'replay', 'the dealer could not deal this hand itself', this.#init.signer)
    const gone = this.#enter(hand, 'done')
    return [
      { kind: 'append', entry: 'recovered', hand: hand.hand, payload: doc },
      { kind: 'event', hand: hand.hand, event },
      gone
    ]
  }

  /** Delivers a later stage of the deal (belote's take, duo's face-up packets, tarot's dog). */
  deliverStage (handNo: number, stage: string, taker?: number): Effect[] {
    const hand = this.#handIn(handNo, ['dealt'])
    if (hand.stages.includes(stage)) throw new Rejection(`stage ${stage} of hand ${handNo} was already delivered`)
    const stages = cardSchemeFor(hand.commit.body).stagesFor(hand.commit.body.game)
    if (!stages.includes(stage)) throw new Rejection(`${hand.commit.body.game} has no stage ${stage} (it has: ${stages.join(', ')})`)
    if (taker !== undefined) {
      if (!Number.isInteger(taker) || taker < 0 || taker >= hand.commit.body.seats.length) throw new Rejection(`taker must be a seat from 0 to ${hand.commit.body.seats.length - 1}`)
      if (hand.params.taker !== undefined && hand.params.taker !== taker) throw new Rejection(`the taker of hand ${handNo} is already seat ${hand.params.taker}`)
      hand.params = { ...hand.params, taker }
      hand.deal = this.#recompute(hand)
    }
    const deliveries = (hand.deal as Deal).deliveries.filter(d => d.stage === stage)
    if (deliveries.length === 0) throw new Rejection(`stage ${stage} needs more input (belote's take needs --taker)`)
    hand.stages.push(stage)
    // Saved before the cards leave: a restart reveals exactly the stages the seats were shown.
    return [this.#enter(hand, 'dealt'), ...this.#sendDeliveries(hand, stage)]
  }

  /** REVEAL: the secret, every nonce and the beacon entry go to every seat. */
  end (handNo: number): Effect[] {
    const hand = this.#handIn(handNo, ['dealt'])
    const undelivered = [...(this.#cardsUndelivered.get(handNo)?.values() ?? [])]
    if (undelivered.length > 0) {
      const { seats } = hand.commit.body
      const which = undelivered.map(u => `seat ${seats.indexOf(u.to)}'s ${u.doc.body.stage} cards (${u.reason.slice(0, 120)})`).join(', ')
      throw new Rejection(`hand ${handNo} cannot end yet: not every seat holds its cards: ${which} did not reach it; they are sent again every ${DELIVERY_RETRY_MS / 1000} s`)
    }
    return this.#reveal(hand)
  }

  #reveal (hand: DealerHand): Effect[] {
    const body: RevealBody = {
      table: hand.commit.body.table,
      hand: hand.hand,
      commit: hand.digest,
      secret: hand.secret,
      nonces: [...hand.nonces].sort((a, b) => a.body.seat - b.body.seat),
      beacon: hand.beacon,
      params: hand.params,
      stages: hand.stages
    }
    if (hand.recovered !== undefined && hand.recovered.length > 0) body.recovered = hand.recovered
    // A played hand's REVEAL names its chain: every seat's ACK countersigns it (docs/games.md).
    const play = hand.commit.body.params.play === true ? this.#init.playHead?.(hand.hand) : undefined
    if (play !== undefined) body.play = play
    hand.reveal = signFrozen('reveal', body, this.#init.signer)
    const effects: Effect[] = [
      this.#enter(hand, 'revealed'),
      { kind: 'event', hand: hand.hand, event: { type: 'revealed' } },
      ...this.#toHumans(hand.reveal)
    ]
    if (this.#humans.length === 0) effects.push(...this.#finalize(hand))
    return effects
  }

  /**
   * The host's word on a COMMIT, PLEDGES or passed-on VIEW this machine asked it to send to a
   * seat (the same document object): delivered, or not (the dial failed, the stream broke). While
   * the hand waits for that seat, tick() sends what failed again every DELIVERY_RETRY_MS; a seat
   * still missing at the deadline with a document undelivered is recorded as `unreachable`,
   * blaming nobody, not as a seat that refused to answer.
   */
  delivery (to: string, doc: Signed<unknown>, outcome: { ok: true } | { ok: false, reason: string }): void {
    if (doc.type === 'cards') { this.#cardsDelivery(to, doc as Signed<CardsBody>, outcome); return }
    if (doc.type !== 'commit' && doc.type !== 'pledges' && doc.type !== 'view') return
    const hand = this.#book.get((doc.body as { hand: number }).hand)
    const seat = this.#init.table.seats.indexOf(to)
    if (hand === undefined || seat < 0 || (hand.phase !== 'pledging' && hand.phase !== 'contributing')) return
    const pending = this.#undelivered.get(hand.hand) ?? new Map<number, Undelivered>()
    const u = pending.get(seat)
    if (outcome.ok) {
      u?.docs.delete(doc)
      if (u?.docs.size === 0) pending.delete(seat)
    } else if (u === undefined) pending.set(seat, { docs: new Set([doc]), reason: outcome.reason, retryAt: this.#init.now() + DELIVERY_RETRY_MS })
    else { u.docs.add(doc); u.reason = outcome.reason }
    if (pending.size > 0) this.#undelivered.set(hand.hand, pending)
    else this.#undelivered.delete(hand.hand)
  }

  /** A seat's own private CARDS delivered, or not, while its hand is dealt (End waits for them: #cardsUndelivered). */
  #cardsDelivery (to: string, doc: Signed<CardsBody>, outcome: { ok: true } | { ok: false, reason: string }): void {
    const body = doc.body
    const hand = this.#book.get(body.hand)
    if (hand === undefined || hand.phase !== 'dealt' || body.public || hand.commit.body.seats[body.seat ?? -1] !== to) return
    const pending = this.#cardsUndelivered.get(hand.hand) ?? new Map()
    const key = `${String(body.seat)}/${body.stage}`
    if (outcome.ok) pending.delete(key)
    else pending.set(key, { to, doc, reason: outcome.reason, retryAt: this.#init.now() + DELIVERY_RETRY_MS })
    if (pending.size > 0) this.#cardsUndelivered.set(hand.hand, pending)
    else this.#cardsUndelivered.delete(hand.hand)
  }

  /**
   * Deadlines (the hand book's, one per phase): missing contributions abort the hand; missing
   * countersignatures finalise without them; a time-locked hand asks for its round again. Before
   * its deadline a hand still waiting for contributions sends again what did not reach a seat, and
   * from #forwardAt passes the VIEWs it holds on.
   */
  tick (now: number): Effect[] {
    const effects: Effect[] = []
    for (const hand of this.#book.values()) {
      if (hand.due === undefined || now > hand.due || (hand.phase !== 'pledging' && hand.phase !== 'contributing')) continue
      effects.push(...this.#redeliver(hand, now))
      if (hand.phase === 'contributing' && hand.forwarded === undefined && now >= this.#forwardAt(hand)) {
        hand.forwarded = new Set()
        effects.push(...this.#forwardViews(hand, [...hand.views.values()]))
      }
    }
    for (const pending of this.#cardsUndelivered.values()) {
      for (const u of pending.values()) {
        if (u.retryAt > now) continue
        u.retryAt = now + DELIVERY_RETRY_MS
        effects.push({ kind: 'send', to: u.to, doc: u.doc })
      }
    }
    for (const hand of this.#book.due(now)) effects.push(...this.#atDeadline(hand))
    return effects
  }

  /** What a hand does when its phase's deadline passes (the phases the deadline table lists). */
  #atDeadline (hand: DealerHand): Effect[] {
    switch (hand.phase) {
      case 'pledging':
        return this.#missing(hand, this.#humans.filter(s => !hand.pledges.some(p => p.body.seat === s)), 'missing-pledge', 'pledge')
      case 'contributing':
        return this.#nonceDeadline(hand)
      case 'recovering':
        this.#book.wait(hand)
        return [{ kind: 'fetchBeacon', hand: hand.hand, round: (hand.commit.body.beacon as NonNullable<CommitBody['beacon']>).round }]
      case 'revealed':
        return this.#finalize(hand)
      default:
        throw new Error(`hand ${hand.hand}: no deadline in ${hand.phase}`)
    }
  }

  /** Sends again what did not reach a seat that still owes its contribution, once its retry is due. */
  #redeliver (hand: DealerHand, now: number): Effect[] {
    const effects: Effect[] = []
    for (const [seat, u] of this.#undelivered.get(hand.hand) ?? []) {
      const owes = hand.phase === 'pledging' ? !hand.pledges.some(p => p.body.seat === seat) : !hand.nonces.some(n => n.body.seat === seat)
      if (!owes || u.retryAt > now) continue
      u.retryAt = now + DELIVERY_RETRY_MS
      for (const doc of u.docs) effects.push({ kind: 'send', to: this.#init.table.seats[seat], doc })
    }
    return effects
  }

  /**
   * The abort at a contribution deadline. Seats the dealer could not reach are not blamed: if only
   * they are missing the hand ends `unreachable` (blaming nobody); otherwise the seats that were
   * reached and did not answer are blamed, and the detail names the unreachable ones too.
   */
  #missing (hand: DealerHand, missing: number[], reason: 'missing-pledge' | 'missing-nonce' | 'missing-view', what: string): Effect[] {
    const { seats } = hand.commit.body
    // Every contribution in, and still not dealt: the dealer is the one that did not go on.
    if (missing.length === 0) {
      return this.#abort(hand, 'dealer-stopped', [this.#init.table.dealer], `the dealer did not deal hand ${hand.hand} by the deadline; the secret of hand ${hand.hand} was ${hand.secret}`)
    }
    const undelivered = this.#undelivered.get(hand.hand) ?? new Map<number, Undelivered>()
    const unreachable = missing.filter(s => undelivered.has(s))
    const silent = missing.filter(s => !undelivered.has(s))
    const why = unreachable.map(s => `seat ${s} (${(undelivered.get(s) as Undelivered).reason.slice(0, 120)})`).join(', ')
    if (silent.length === 0) {
      return this.#abort(hand, 'unreachable', [], `the dealer could not reach ${why} before the deadline`.slice(0, 512))
    }
    const also = unreachable.length > 0 ? `; the dealer could not reach ${why}` : ''
    return this.#abort(hand, reason, silent.map(s => seats[s]), `no ${what} from seat ${silent.join(', ')} by the deadline${also}`.slice(0, 512))
  }

  /**
   * The deadline with nonces still missing (docs/protocol.md §7). A seat sends its NONCE only once
   * every other seat's VIEW reached it, and every seat sends its VIEW to the dealer too: the seats
   * whose VIEW the dealer lacks are the ones that held the hand up (`missing-view`, with the VIEWs
   * it holds as evidence), never the seats that waited for them. A seat may be blamed for its
   * nonce only when the dealer holds (and has passed on) the VIEW of every other seat: so when
   * every VIEW is in, or when one seat alone sent neither its VIEW nor its NONCE to the dealer
   * (then `missing-nonce`, which the seats cannot refute unless they hold its NONCE, rather than
   * `missing-view`, which they refute if it sent its VIEW to them alone).
   */
  #nonceDeadline (hand: DealerHand): Effect[] {
    // Time-locked (§16.4): nobody can opt out after pledging, so nobody is blamed for a missing
    // NONCE or VIEW: the dealer waits for R and opens the missing nonces (beaconResult).
    if (hand.commit.body.timelock !== undefined) return this.#afterNonces(hand)
    const noNonce = this.#humans.filter(s => !hand.nonces.some(n => n.body.seat === s))
    const noView = this.#humans.length < 2 || noNonce.length === 0 ? [] : this.#humans.filter(s => !hand.views.has(s))
    const alone = noView.length === 1 && noNonce.length === 1 && noView[0] === noNonce[0]
    return noView.length > 0 && !alone ? this.#missing(hand, noView, 'missing-view', 'VIEW') : this.#missing(hand, noNonce, 'missing-nonce', 'nonce')
  }

  /** When the dealer starts passing the VIEWs it holds on to the seats that still owe their nonce: halfway to the deadline. */
  #forwardAt (hand: DealerHand): number {
    return hand.commit.body.deadline - Math.floor(this.#init.timeouts.contributeMs / 2)
  }

  /**
   * Passes `views` on, each once, to every other human seat whose NONCE has not come: a seat that
   * never got another's VIEW directly (dropped, withheld from it alone) gets it from the dealer, so
   * it cannot be left waiting for a VIEW the dealer holds. Not to the dealer's own node: its seat
   * machine receives every VIEW the dealer machine does. Honest hands never get here (every NONCE
   * is in before the forwarding time).
   */
  #forwardViews (hand: DealerHand, views: Array<Signed<ViewBody>>): Effect[] {
    const { seats } = hand.commit.body
    const sent = hand.forwarded as Set<string>
    const effects: Effect[] = []
    for (const view of views) {
      const digest = docDigest(view)
      for (const s of this.#humans) {
        const to = seats[s]
        if (s === view.body.seat || to === this.#init.table.dealer || hand.nonces.some(n => n.body.seat === s) || sent.has(`${digest}>${to}`)) continue
        sent.add(`${digest}>${to}`)
        effects.push({ kind: 'send', to, doc: view })
      }
    }
    return effects
  }

  /**
   * A seat's VIEW (every seat sends it to the dealer too, docs/protocol.md §6 step 4): kept as
   * evidence of who could go on. It must name exactly the COMMIT and PLEDGES this dealer sent
   * (one without them, docs/protocol.md §3, gets them back), and is kept whole. A VIEW that comes
   * once the hand has moved on (its seat's NONCE came first) is no longer needed.
   */
  #onView (from: string, wire: Signed<ViewWireBody>): Effect[] {
    const { table } = this.#init
    const body = wire.body
    if (body.table !== table.id) throw new Rejection(`view for another table (${body.table})`)
    if (wire.signer !== from || table.seats[body.seat] !== from) throw new Rejection(`view for seat ${body.seat}, which is not ${from}'s seat`)
    const hand = this.#book.get(body.hand)
    if (hand === undefined || hand.phase !== 'contributing') {
      if (body.hand < this.#meta.nextHand && hand?.phase !== 'pledging') return []
      throw new Rejection(`view for hand ${body.hand}, which is not waiting for nonces`)
    }
    const sent = hand.pledgesDoc
    const doc = sent === undefined ? undefined : wholeView(wire, { commit: hand.commit, commitDigest: hand.digest, pledgesDoc: sent })
    if (doc === undefined || sent === undefined || body.commit !== hand.digest || docDigest(doc.body.commitDoc) !== hand.digest || body.pledges !== docDigest(sent) || docDigest(doc.body.pledgesDoc) !== body.pledges) {
      throw new Rejection(`view of seat ${body.seat} for hand ${hand.hand} names documents this dealer did not send`)
    }
    if (!this.#verify(doc)) throw new Rejection(`view of seat ${body.seat}: bad signature`)
    hand.views.set(body.seat, doc)
    return hand.forwarded === undefined ? [] : this.#forwardViews(hand, [doc])
  }

  /** The earliest time tick() has something to do, for the host's timer: a deadline, or a hand's time to pass VIEWs on. */
  nextDeadline (): number | undefined {
    let next = this.#book.nextDeadline()
    for (const h of this.#book.values()) {
      if (h.phase !== 'contributing' || h.forwarded !== undefined) continue
      const t = this.#forwardAt(h)
      if (next === undefined || t < next) next = t
    }
    return next
  }

  /**
   * Closes a hand on the host's request (shutdown): a dealt hand is revealed, a revealed one left to
   * finish (tick finalises it), and one not yet dealt aborted with the dealer named and its secret
   * published, as after a restart.
   */
  abortHand (handNo: number, detail: string): Effect[] {
    const hand = this.#book.get(handNo)
    if (hand === undefined || hand.phase === 'revealed') return []
    if (hand.phase === 'dealt') return this.end(handNo)
    if (this.#timelockedPastPledges(hand)) return []
    return this.#abort(hand, 'dealer-stopped', [this.#init.table.dealer], `${detail}; the secret of hand ${hand.hand} was ${hand.secret}`)
  }

  /** Completes every revealed hand now, with the countersignatures it has (the host is stopping). */
  finalizeRevealed (): Effect[] {
    return this.#book.values().filter(h => h.phase === 'revealed').flatMap(h => this.#finalize(h))
  }

  #onPledge (from: string, doc: Signed<PledgeBody>): Effect[] {
    if (sentBefore(this.#book.get(doc.body.hand)?.pledges, from, doc)) return []
    const hand = this.#checkSeatDoc(from, doc, 'pledging')
    if (hand.pledges.some(p => p.body.seat === doc.body.seat)) throw new Rejection(`replayed pledge of seat ${doc.body.seat} for hand ${hand.hand}`)
    // Time-locked: a pledge must carry its nonce locked to this COMMIT's chain and round (or none if the table is not).
    const locked = checkPledgeTimelock(hand.commit.body, doc)
    if (locked.length > 0) throw new Rejection(locked[0])
    if (hand.commit.body.timelock === undefined && doc.body.timelock !== undefined) throw new Rejection(`pledge of seat ${doc.body.seat} carries a timelock the commit does not`)
    hand.pledges.push(doc)
    if (hand.pledges.length < this.#humans.length) return []
    const pledges = this.#pledges(hand)
    hand.pledgesDoc = pledges
    return [this.#enter(hand, 'contributing'), ...this.#toHumans(pledges)]
  }

  #onNonce (from: string, doc: Signed<NonceBody>): Effect[] {
    if (sentBefore(this.#book.get(doc.body.hand)?.nonces, from, doc)) return []
    const hand = this.#checkSeatDoc(from, doc, 'contributing')
    if (hand.nonces.some(n => n.body.seat === doc.body.seat)) throw new Rejection(`replayed nonce of seat ${doc.body.seat} for hand ${hand.hand}`)
    // Well-formed before it is hashed or kept (src/core/contribution.ts): a nonce the scheme could
    // not take would otherwise stop the hand after it was accepted.
    const malformed = contributionProblem(doc.body.nonce, `nonce of seat ${doc.body.seat} for hand ${hand.hand}`)
    if (malformed !== null) throw new Rejection(malformed)
    const pledge = hand.pledges.find(p => p.body.seat === doc.body.seat)
    if (pledge === undefined || sha256Hex(doc.body.nonce) !== pledge.body.nonceHash) {
      throw new Rejection(`nonce of seat ${doc.body.seat} for hand ${hand.hand} does not match its pledge`)
    }
    hand.nonces.push(doc)
    if (hand.nonces.length < this.#humans.length) return []
    return [...this.#afterNonces(hand), { kind: 'event', hand: hand.hand, event: { type: 'contributed' } }]
  }

  /** Every nonce is in: saved (with the nonces) before the beacon wait, or dealt at once. */
  #afterNonces (hand: DealerHand): Effect[] {
    const round = hand.commit.body.beacon?.round
    if (round !== undefined) return [this.#enter(hand, 'beacon'), { kind: 'fetchBeacon', hand: hand.hand, round }]
    return this.#dealInitial(hand)
  }

  #dealInitial (hand: DealerHand): Effect[] {
    hand.deal = this.#recompute(hand)
    const stages = cardSchemeFor(hand.commit.body).stagesFor(hand.commit.body.game).filter(s => INITIAL_STAGES.has(s))
    hand.stages.push(...stages)
    // Saved with the nonces, the beacon entry and the stages before any card leaves: a restart
    // reveals this exact deal.
    return [this.#enter(hand, 'dealt'), ...stages.flatMap(stage => this.#sendDeliveries(hand, stage))]
  }

  #recompute (hand: DealerHand): Deal {
    return recomputeDeal(hand.commit.body, hand.secret, recoveredNonces(noncesBySeat(hand.commit.body, hand.nonces), hand.recovered), hand.beacon, hand.params).deal
  }

  #sendDeliveries (hand: DealerHand, stage: string): Effect[] {
    const { seats } = hand.commit.body
    const effects: Effect[] = []
    for (const d of (hand.deal as Deal).deliveries) {
      if (d.stage !== stage) continue
      const body: CardsBody = {
        table: hand.commit.body.table, hand: hand.hand, commit: hand.digest, stage, seat: d.seat, public: d.public, cards: d.cards, params: hand.params
      }
      const doc = signFrozen('cards', body, this.#init.signer)
      if (d.public) effects.push(...this.#toHumans(doc))
      // A robot's private cards stay in the dealer: they are never sent anywhere.
      else if (d.seat !== null && seats[d.seat] !== ROBOT) effects.push({ kind: 'send', to: seats[d.seat], doc })
    }
    return effects
  }

  #onAck (from: string, doc: Signed<AckBody>): Effect[] {
    const ended = this.#book.get(doc.body.hand) === undefined ? this.#book.ended(doc.body.hand) : undefined
    if (ended !== undefined) return this.#onLateAck(from, doc, ended)
    const hand = this.#checkSeatDoc(from, doc, 'revealed')
    const had = hand.acks.get(doc.body.seat)
    // The same ACK again (a seat answering a REVEAL sent again) changes nothing.
    if (had !== undefined && docDigest(had) === docDigest(doc)) return []
    if (had !== undefined) throw new Rejection(`replayed countersignature of seat ${doc.body.seat} for hand ${hand.hand}`)
    if (doc.body.reveal !== docDigest(hand.reveal)) throw new Rejection(`countersignature of seat ${doc.body.seat} names another reveal`)
    if (doc.body.cards !== seatCardsDigest((hand.deal as Deal).deliveries, doc.body.seat, hand.stages)) {
      throw new Rejection(`countersignature of seat ${doc.body.seat} names cards it was not dealt`)
    }
    hand.acks.set(doc.body.seat, doc)
    return hand.acks.size === this.#humans.length ? this.#finalize(hand) : []
  }

  /**
   * An ACK for a hand whose receipt this dealer logged without it (the seat was away when the hand
   * ended): checked exactly as the log verifier checks a `late-ack` entry against that receipt
   * (lateAckProblems: this COMMIT, a seat whose ack the receipt lacks and that has not acked late,
   * its signer, this REVEAL, its cards), at most two tries per seat and hand (the seat's own ACK
   * sent again is one), and only for the hands still in the ended-hand memo (ENDED_HANDS_KEPT).
   * Taken: logged as a `late-ack` entry and sent to every human seat as LATEACK, which each logs.
   */
  #onLateAck (from: string, doc: Signed<AckBody>, ended: { digest: string, docs: Array<Signed<unknown>> }): Effect[] {
    const { table } = this.#init
    const { hand, seat } = doc.body
    const final = ended.docs.find(d => d.type === 'final') as Signed<{ receipt: Receipt }> | undefined
    if (final === undefined) throw new Rejection(`countersignature of seat ${seat} for hand ${hand}, which ended without a receipt`)
    const receipt = final.body.receipt
    if (doc.body.table !== table.id || doc.body.commit !== ended.digest) throw new Rejection(`countersignature of seat ${seat} for hand ${hand} names another commit`)
    if (doc.signer !== from || receipt.commit.body.seats[seat] !== from) throw new Rejection(`countersignature of seat ${seat} for hand ${hand} not sent by that seat`)
    // Bounded before the costly checks: the seat itself is the only one who can spend its tries.
    this.#book.count(hand, `late-ack/${seat}`, 2, `seat ${seat} already sent a late countersignature for hand ${hand}`)
    if (!this.#verify(doc)) throw new Rejection(`countersignature of seat ${seat}: bad signature`)
    const due = acksDue(verifyReceipt(receipt, { verifyDoc: this.#verify }).summary)
    if (due === undefined) throw new Rejection(`countersignature of seat ${seat} for hand ${hand}: the receipt holds every seat's countersignature`)
    const late = new Set(ended.docs.filter(d => d.type === 'lateack').map(d => String((d.body as LateAckWireBody).ack.body.seat)))
    const problems = lateAckProblems(due, late, { ...doc.body, signer: doc.signer })
    if (problems.length > 0) throw new Rejection(problems[0].message)
    const body: LateAckWireBody = { table: table.id, hand, commit: ended.digest, ack: doc as LateAckWireBody['ack'] }
    const lateack = signFrozen('lateack', body, this.#init.signer)
    // Remembered with the receipt: a seat that asks about the hand later gets both.
    ended.docs.push(lateack)
    const acked = [...receipt.acks.map(a => a.body.seat), ...late, seat].map(Number).sort((a, b) => a - b)
    return [
      { kind: 'append', entry: 'late-ack', hand, payload: { ack: doc } },
      // The receipt event again, with the seats that have now countersigned.
      { kind: 'event', hand, event: { type: 'receipt', acked } },
      ...this.#toHumans(lateack)
    ]
  }

  /**
   * A seat's signed abort record. Before the deal it ends the hand (a seat may always refuse to go
   * on, and equivocation must stop it): the dealer logs the record and relays it. Once the cards
   * are out a seat can no longer cancel the hand for everyone: its record is logged as evidence of
   * its claim, and the hand goes on to its receipt (without that seat's countersignature).
   */
  #onSeatAbort (from: string, doc: Signed<AbortBody>): Effect[] {
    const hand = this.#book.get(doc.body.hand)
    if (hand === undefined || doc.body.table !== this.#init.table.id) throw new Rejection(`abort for unknown hand ${doc.body.hand}`)
    const seat = hand.commit.body.seats.indexOf(from)
    if (seat < 0 || doc.signer !== from || !this.#verify(doc)) throw new Rejection('abort not signed by a seat of that hand')
    if (doc.body.commit === null || docDigest(doc.body.commit) !== hand.digest) throw new Rejection(`abort of seat ${seat} names another commit`)
    // The one rule set for records (src/core/hand/abort-rules.ts): a record that breaks it never reaches the log.
    const verdict = checkAbortRecord(doc, { table: this.#init.table, verifyDoc: this.#verify })
    if (!verdict.ok) throw new Rejection(`abort of seat ${seat} does not verify: ${verdict.problems[0].message}`)
    // One record per seat and hand reaches the log: a seat cannot fill the dealer's log with copies.
    this.#book.count(hand.hand, `record/${seat}`, 1, `seat ${seat} already filed a record for hand ${hand.hand}`)
    const record = logAbort(hand.hand, doc)
    if (hand.phase === 'dealt' || hand.phase === 'revealed' || hand.phase === 'recovering') return record
    if (hand.commit.body.timelock !== undefined && (hand.phase === 'contributing' || hand.phase === 'beacon')) {
      // Time-locked, nonces out: the seats finish this hand from its timelocks; so does the dealer.
      return [...record, ...this.#toHumans(doc).filter(e => e.kind !== 'send' || e.to !== from), ...this.#recoverLater(hand)]
    }
    const gone = this.#enter(hand, 'aborted')
    this.#remember(hand.hand, hand.digest, doc)
    return [...record, ...this.#toHumans(doc).filter(e => e.kind !== 'send' || e.to !== from), gone]
  }

  /**
   * A seat's ASK: it sends the seat what it is missing of the hand. An ended hand: its FINAL, or the
   * abort record that ended it. A hand in play: in `pledging`, the COMMIT (to a seat that never
   * saw it); in `contributing`, the PLEDGES; once dealt, the seat's cards (and the public ones)
   * for every stage delivered; once revealed, those and the REVEAL. Each seat may ask about each
   * hand ANSWERS_PER_SEAT_HAND times.
   */
  #onAsk (from: string, doc: Signed<AskBody>): Effect[] {
    const { table } = this.#init
    const body = doc.body
    const live = this.#book.get(body.hand)
    const ended = this.#book.ended(body.hand)
    const ctx = { tableId: table.id, seats: table.seats, verify: (d: Signed<unknown>) => this.#verify(d) }
    // A hand not committed yet: nothing to tell (a seat back from a restart asks about the next hand).
    if (!checkAsk(ctx, from, doc, this.#meta.nextHand, () => live?.digest ?? ended?.digest)) return []
    this.#book.count(body.hand, `ask/${body.seat}`, ANSWERS_PER_SEAT_HAND, `seat ${body.seat} already asked about hand ${body.hand} ${ANSWERS_PER_SEAT_HAND} times`)
    if (ended !== undefined) return ended.docs.map(d => ({ kind: 'send', to: from, doc: d }))
    return this.#lacking(live as DealerHand, body.seat, from)
  }

  /**
   * What seat `seat` (peer `to`) may lack of a hand in play, to send it again (an ASK's answer, and
   * #resync's): each document is one the seat answers with its own part when it has sent it
   * already (docs/protocol.md §7 "A connection that came back"), so what the dealer lacks of the seat
   * comes too. The COMMIT while the dealer lacks its PLEDGE (its PLEDGE again); the PLEDGES, with the
   * VIEWs held, while it lacks its NONCE or its VIEW (its VIEW and NONCE again); its cards, and the
   * REVEAL once out, while it lacks its ACK (its ACK again).
   */
  #lacking (hand: DealerHand, seat: number, to: string): Effect[] {
    const send = (d: Signed<unknown>): Effect => ({ kind: 'send', to, doc: d })
    switch (hand.phase) {
      case 'pledging':
        return hand.pledges.some(p => p.body.seat === seat) ? [] : [send(hand.commit)]
      case 'contributing': {
        const pledged = hand.pledges.some(p => p.body.seat === seat)
        const contributed = hand.nonces.some(n => n.body.seat === seat)
        // With the VIEWs the dealer holds: a seat back from a restart has lost the ones it had.
        // (Not to the dealer's own node: its seat machine has every VIEW the dealer machine has.)
        const views = to === this.#init.table.dealer ? [] : [...hand.views.values()].filter(v => v.body.seat !== seat).map(send)
        return pledged && (!contributed || !hand.views.has(seat)) ? [send(this.#pledges(hand)), ...views] : []
      }
      case 'dealt':
      case 'revealed': {
        if (hand.acks.has(seat)) return []
        const cards = hand.stages.flatMap(stage => this.#sendDeliveries(hand, stage)).filter(e => e.kind === 'send' && e.to === to)
        return hand.phase === 'revealed' ? [...cards, send(hand.reveal as SignedReveal)] : cards
      }
      default:
        return []
    }
  }

  /**
   * Peer `peer`'s connection to this node came back after it was lost (the host says so): a frame
   * written just before a connection dies can be lost, either way. For each hand in play where the
   * peer holds a human seat, what that seat may lack goes again (#lacking), at most RESYNCS_PER_SEAT_HAND
   * times a hand (a peer that reconnects over and over gets no more).
   */
  resync (peer: string): Effect[] {
    if (peer === this.#init.table.dealer) return []
    const seatOf = (hand: { commit: SignedCommit }): number => humanSeatOf(hand.commit.body.seats, this.#humans, peer)
    return this.#book.resync(seatOf, seat => `resync/${seat}`, RESYNCS_PER_SEAT_HAND, (hand, seat) => this.#lacking(hand, seat, peer))
  }

  /**
   * A seat's VIEW for a seat it could not reach directly: passed on as signed (the receiver checks
   * it on its own signatures), only between two human seats of a hand in play, and at most twice
   * per pair and hand.
   */
  #onRelay (from: string, doc: Signed<RelayBody>): Effect[] {
    const { table } = this.#init
    const { to, view } = doc.body
    if (doc.body.table !== table.id || view.body.table !== table.id || view.body.hand !== doc.body.hand) throw new Rejection('relay for another table or hand')
    const hand = this.#book.get(doc.body.hand)
    if (hand === undefined) throw new Rejection(`relay for hand ${doc.body.hand}, which is not in play`)
    const humans = this.#humans.map(s => table.seats[s])
    if (doc.signer !== from || view.signer !== from || !humans.includes(from) || !humans.includes(to) || to === from) throw new Rejection('relay: not a view between two human seats of the table, sent by its author')
    if (to === table.dealer) throw new Rejection('relay to the dealer\'s own seat')
    if (!this.#verify(doc)) throw new Rejection('relay: bad signature')
    this.#book.count(hand.hand, `relay/${from}/${to}`, 2, `relay of ${from}'s view to ${to} for hand ${hand.hand} already done`)
    return [{ kind: 'send', to, doc: view }]
  }

  #remember (handNo: number, digest: string, doc: Signed<unknown>): void {
    this.#book.remember(handNo, { digest, docs: [doc] })
  }

  /** An ended hand read back from the log: a receipt wins over the records logged for its hand. */
  #rememberLogged (e: LoggedOutcome): void {
    const { table } = this.#init
    if (e.kind === 'receipt') {
      const receipt = e.payload as Receipt
      if (receipt.commit.body.table !== table.id || receipt.commit.signer !== table.dealer) return
      this.#remember(receipt.commit.body.hand, docDigest(receipt.commit), this.#final(receipt))
    } else if (e.kind === 'late-ack') {
      // A late ack taken before the restart: remembered with its receipt, so a second is refused
      // and a seat that asks gets it.
      const ack = (e.payload as { ack: Signed<AckBody> }).ack
      const ended = this.#book.ended(ack.body.hand)
      if (ended === undefined || ended.digest !== ack.body.commit) return
      if (ended.docs.some(d => d.type === 'lateack' && (d.body as LateAckWireBody).ack.body.seat === ack.body.seat)) return
      ended.docs.push(signFrozen('lateack', { table: table.id, hand: ack.body.hand, commit: ack.body.commit, ack } satisfies LateAckWireBody, this.#init.signer))
    } else if (e.kind === 'abort') {
      const record = e.payload as Signed<AbortBody>
      const commit = record.body.commit
      if (commit === null || commit.body.table !== table.id || commit.signer !== table.dealer) return
      // The first record of a hand is the one that ended it (later ones are seats' claims after the deal).
      if (this.#book.ended(commit.body.hand) === undefined) this.#remember(commit.body.hand, docDigest(commit), record)
    }
  }

  #final (receipt: Receipt): Signed<FinalBody> {
    const body: FinalBody = { table: receipt.commit.body.table, hand: receipt.commit.body.hand, commit: docDigest(receipt.commit), receipt }
    return signFrozen('final', body, this.#init.signer)
  }

  #pledges (hand: DealerHand): Signed<PledgesBody> {
    const body: PledgesBody = {
      table: hand.commit.body.table,
      hand: hand.hand,
      commit: hand.digest,
      pledges: [...hand.pledges].sort((a, b) => a.body.seat - b.body.seat)
    }
    return signFrozen('pledges', body, this.#init.signer)
  }

  #checkSeatDoc (from: string, doc: Signed<{ table: string, hand: number, commit: string, seat: number }>, phase: Phase): DealerHand {
    const ctx = { tableId: this.#init.table.id, now: () => this.#init.now(), verify: (d: Signed<unknown>) => this.#verify(d) }
    return checkSeatDoc(this.#book, ctx, from, doc, phase, (phase === 'pledging' || phase === 'contributing'))
  }

  #handIn (handNo: number, phases: Phase[]): DealerHand {
    return this.#book.inPhase(handNo, phases)
  }

  #finalize (hand: DealerHand): Effect[] {
    const receipt: Receipt = {
      v: 1,
      commit: hand.commit,
      pledges: [...hand.pledges].sort((a, b) => a.body.seat - b.body.seat),
      reveal: hand.reveal as SignedReveal,
      acks: [...hand.acks.values()].sort((a, b) => a.body.seat - b.body.seat)
    }
    // A played hand's receipt carries its action chain and score (docs/games.md).
    const play = this.#init.receiptPlay?.(hand.hand)
    if (play !== undefined) receipt.play = play
    const gone = this.#enter(hand, 'done')
    const final = this.#final(receipt)
    this.#remember(hand.hand, hand.digest, final)
    // The save's removal right after the entry (a host may write them in one batch): a crash
    // after it, before the FINAL is out, leaves the hand logged and remembered (restore reads the
    // log), and a seat that asks gets the FINAL then.
    return [
      { kind: 'append', entry: 'receipt', hand: hand.hand, payload: receipt },
      { kind: 'event', hand: hand.hand, event: { type: 'receipt', acked: receipt.acks.map(a => a.body.seat) } },
      gone,
      // A seat whose ACK is in holds the COMMIT, pledges and REVEAL: its FINAL goes without them
      // (docs/protocol.md §3); any other seat's whole. (An ASK is answered with the whole FINAL.)
      ...this.#toHumans(final, hand.acks.size === 0 ? undefined : { doc: compactFinal(final), seats: new Set(hand.acks.keys()) })
    ]
  }

  #abort (hand: DealerHand, reason: AbortReason, blame: string[], detail: string): Effect[] {
    // A dealer-stopped record publishes the secret, so anyone can check it opens the commitment.
    const secret = reason === 'dealer-stopped' ? hand.secret : undefined
    // Who held a hand up is shown by the VIEWs the dealer holds (docs/protocol.md §10).
    const views = reason === 'missing-nonce' || reason === 'missing-view' || reason === 'unreachable' ? [...hand.views.values()].sort((a, b) => a.body.seat - b.body.seat) : []
    const doc = signAbort(hand.commit, reason, blame, detail, [...hand.pledges, ...hand.nonces, ...views], this.#init.signer, secret)
    const gone = this.#enter(hand, 'aborted')
    this.#remember(hand.hand, hand.digest, doc)
    return [
      ...logAbort(hand.hand, doc),
      ...this.#toHumans(doc),
      gone
    ]
  }

  /**
   * The one place a hand changes phase (the hand book's enter: the move checked against
   * DEALER_MOVES, the new phase's deadline set). It returns the save that must follow, taken now:
   * what is on disk is always the phase the hand is in, with what that phase needs to resume
   * (docs/protocol.md §11). The caller puts it before any send the new phase allows. A hand that is
   * over (`done`, `aborted`) leaves memory, and its saved state is deleted: the caller puts that
   * after the log entry, so a crash in between finishes the hand again rather than losing it.
   */
  #enter (hand: DealerHand, phase: Phase): Effect {
    const save = this.#book.enter(hand, phase)
    if (phase === 'done' || phase === 'aborted') this.#undelivered.delete(hand.hand)
    if (phase !== 'dealt') this.#cardsUndelivered.delete(hand.hand)
    return save
  }

  /** `doc` to every human seat; with `instead`, its `doc` to the seats it names. */
  #toHumans (doc: Signed<unknown>, instead?: { doc: Signed<unknown>, seats: ReadonlySet<number> }): Effect[] {
    return this.#humans.map(s => ({ kind: 'send', to: this.#init.table.seats[s], doc: instead?.seats.has(s) === true ? instead.doc : doc }))
  }
}

/** A copy, not a view: the hand goes on changing after the save is asked for. */
function snapshot (h: DealerHand): DealerHandSnapshot {
  return {
    hand: h.hand, secret: h.secret, commit: h.commit, phase: h.phase, pledges: [...h.pledges], nonces: [...h.nonces],
    beacon: h.beacon, params: h.params, stages: [...h.stages], ...(h.recovered !== undefined ? { recovered: h.recovered } : {})
  }
}

