import { signDocument, verifyDocument, type Signed } from '../core/signed.js'
import { firstRoundAfter, roundTime } from '../core/beacon/index.js'
import { type Ciphertext, type Point, decodeDeck, mulSecret, pointFromHex, proveShare, randomScalar, scalarFromHex, scalarToHex } from '../core/blind/index.js'
import {
  BLIND_COMMITMENT, beaconPermutation, blindJointKey, blindLayout, blindStartingDeck, cardDeliveries, checkBkey,
  blindContext, checkBlindCommit, checkBsecret, checkBshares, checkBshuffle, dealtDeck, openDeckWithKeys, openPosition, proverOf, shareStep
} from '../core/hand/blind.js'
import type {
  BlindReceipt, BkeysBody, BdealBody, BendBody, BfinalBody, BrevealBody, BsecretBody, BsharesBody, BshuffleBody, BkeyBody,
  SignedBkey, SignedBsecret, SignedBshuffle, SignedBreveal, BunlockBody, SignedBunlock
} from '../core/hand/blind-messages.js'
import { docDigest, seatCardsDigest, ZERO_HASH } from '../core/hand/digest.js'
import { humanSeats } from '../core/hand/recompute.js'
import { ROBOT } from '../core/hand/messages.js'
import type { AbortBody, AbortReason, AckBody, BeaconEntry, CommitBody, DealParams, ReceiptPlay, SignedAck, SignedCommit } from '../core/hand/messages.js'
import { revealPlayOf, type BlindPlayHand } from '../core/hand/blind-play.js'
import { makeCardOpening, type CardOpening } from '../core/hand/blind-card-opening.js'
import type { PositionDelivery } from '../core/schemes/blind.js'
import { getCardScheme } from '../core/schemes/registry.js'
import type { Delivery } from '../core/schemes/types.js'
import type { DealerHandStatus, DealerSide } from './contracts.js'
import { Rejection, type Effect, type MachineInit } from './types.js'
import type { AskBody } from './wire.js'
import { checkAsk, checkSeatDoc, sentBefore } from './hand-lookup.js'
import { HandBook, type BookHand, type Transitions, humanSeatOf } from './hand-book.js'
import { logAbort, signAbort } from './abort.js'
import { checkAbortRecord } from '../core/hand/abort-rules.js'
import { INITIAL_STAGES } from './stages.js'
import { href, makeBkey, makeBsecret, makeBshares, makeBshuffle } from './blind-docs.js'
import { RESYNCS_PER_SEAT_HAND, dealerMetaKey, type DealerMeta } from './dealer.js'
import { DEFAULT_BLIND_HAND_MS, blindKeyRound, checkKeyTimelock, openHandKey } from '../core/hand/blind-timelock.js'
import type { ChainInfo } from '../core/beacon/index.js'
import { receiptParts } from './blind-receipt-parts.js'

type Phase = 'keys' | 'shuffling' | 'beacon' | 'dealt' | 'unlocking' | 'ending' | 'revealed' | 'done' | 'aborted'

/** What is saved of a blind hand (docs/dealer-blind.md §7): enough to go on, or to abort it honestly. */
export interface BlindDealerSnapshot {
  hand: number
  commit: SignedCommit
  phase: Phase
  /** The robot seats' hand keys (the dealer plays them), hex, by seat. */
  robotKeys: Record<string, string>
  keys: SignedBkey[]
  shuffles: SignedBshuffle[]
  beacon: BeaconEntry | null
  params: DealParams
  stages: string[]
  secrets: SignedBsecret[]
  /**
   * From the deal on (absent in snapshots saved before they were: such a hand is aborted on
   * restore, as it was then): the BDEALs sent, the BSHARES received from human seats, the BEND,
   * the BREVEAL and the countersignatures received.
   */
  deals?: Array<Signed<BdealBody>>
  sharesIn?: Array<Signed<BsharesBody>>
  bend?: Signed<BendBody>
  reveal?: SignedBreveal
  acks?: SignedAck[]
  /** A time-locked hand's last BUNLOCK: hand keys opened from their timelock (docs/dealer-blind.md §14). */
  unlock?: SignedBunlock
  /** A played hand's chain and end, fixed when the BREVEAL is built (docs/dealer-blind.md §15). */
  play?: ReceiptPlay
}

interface BlindDealerHand extends Omit<BlindDealerSnapshot, 'deals' | 'sharesIn' | 'acks'>, BookHand<Phase> {
  digest: string
  pubs: Point[]
  pk?: Point
  deck: Ciphertext[]
  dealt?: Ciphertext[]
  /** Shares still expected, as `stage|to|seat` (due by the `dealt` phase's deadline). */
  pending: Set<string>
  /** Shares gathered for the deliveries the dealer opens itself (public cards, robots' cards). */
  gathered: Map<string, Map<number, Point>>
  deliveries?: Delivery[]
  /** The robots' private cards this node opened (it plays them). */
  robotOpened: Array<{ stage: string, seat: number, cards: string[] }>
  /** The public cards this node opened (belote's turned-up card, duo's packets, tarot's dog): a played hand shows them. */
  publicOpened: Array<{ stage: string, seat: number | null, cards: string[] }>
  acks: Map<number, SignedAck>
  /** The BDEALs sent, the BSHARES received and the BEND sent: a missing-shares or missing-secret record carries them. */
  deals: Array<Signed<BdealBody>>
  sharesIn: Array<Signed<BsharesBody>>
  /** How many shuffles of the chain were checked (each once). */
  verified: number
  /** Hand keys opened from their timelock, by seat (the BUNLOCK's): those seats owe nothing any more. */
  unlocked: Map<number, bigint>
}

/** How many times a seat may ask about one hand. */
const ASKS_PER_SEAT_HAND = 4
/**
 * How many of its last receipts the dealer keeps whole, for a seat that asks about a hand it never
 * saw (each holds every seat's shuffle: up to about 0.3 MB at 8 seats).
 */
export const WHOLE_RECEIPTS_KEPT = 16
type AskQuota = `ask/${number}` | `resync/${number}`

/** The blind dealer's legal moves (docs/dealer-blind.md §9): a hand may be aborted from any phase it is in. */
export const BLIND_DEALER_MOVES: Transitions<Phase> = Object.freeze({
  keys: ['shuffling', 'aborted'],
  shuffling: ['beacon', 'dealt', 'aborted'],
  beacon: ['dealt', 'aborted'],
  // A later stage (take, faceUp, dog) is dealt again: its shares are due anew.
  dealt: ['dealt', 'unlocking', 'ending', 'aborted'],
  // A time-locked hand waits for its key round, then goes on without the seats that walked away (docs/dealer-blind.md §14).
  unlocking: ['unlocking', 'dealt', 'revealed', 'aborted'],
  ending: ['unlocking', 'revealed', 'aborted'],
  revealed: ['done', 'aborted'],
  done: [],
  aborted: []
})

export const blindDealerHandKey = (table: string, hand: number): string => `blind-dealer/${table}/hand/${String(hand).padStart(16, '0')}`
/** The hand counter is the table's, whatever its scheme: the same key as DealerMachine's (kept in the head file too). */
export const blindDealerMetaKey = dealerMetaKey

/**
 * When turn `turn` of a blind hand ends (docs/dealer-blind.md §3, "Turns"), with `humans` human
 * seats: of the time the seats have for their part (`contributeMs`, which ends at the COMMIT's
 * `deadline`), turn 0, the keys (they come in parallel, and a seat's first hand may wait for its
 * connection or its crypto to load), has the first half; turn 1 + j, the shuffle of the j-th human
 * seat in seat order, ends (humans − 1 − j) · contributeMs / (2 · humans) before the deadline,
 * rounded down to the millisecond, so the shuffles split the second half equally and the last ends
 * at the deadline (robots' turns are the dealer's own and take none). A seat may use whatever the
 * turns before it left unused and is named only when its own turn ends: so each seat has at least
 * an equal share of the second half from its input's arrival, and is never named for a slower
 * seat before it.
 */
export function turnEnd (deadline: number, contributeMs: number, humans: number, turn: number): number {
  if (turn === 0) return deadline - Math.floor(contributeMs / 2)
  return deadline - Math.floor(Math.max(0, humans - turn) * contributeMs / (2 * Math.max(1, humans)))
}

const deliveryKey = (stage: string, to: number | null): string => `${stage}|${to === null ? 'table' : to}`

/**
 * The dealer's side of a dealer-blind hand (blind-v1), pure: documents in, effects out. The dealer
 * coordinates and relays; it holds a seat's powers only for its own seat and the robot seats, whose
 * keys it draws (so it sees the robots' cards, never a human seat's). A key, shuffle or share that
 * fails its proof ends the hand with a signed record naming its author, the document as evidence.
 */
export class BlindDealerMachine implements DealerSide {
  readonly #init: MachineInit
  readonly #book: HandBook<Phase, BlindDealerHand, BlindDealerSnapshot, AskQuota>
  /** The last #receiptsKept receipts, by hand (kept in memory only, like the ended hands' memos). */
  readonly #receipts = new Map<number, BlindReceipt>()
  readonly #humans: number[]
  readonly #verify: (doc: Signed<unknown>) => boolean
  /** A time-locked table's planned length of a hand (docs/dealer-blind.md §14), or null. */
  readonly #handMs: number | null
  #meta: DealerMeta = { nextHand: 1, prevCommit: ZERO_HASH }

  /** How many whole receipts it keeps (WHOLE_RECEIPTS_KEPT unless its init says: the tests go past it in a few hands). */
  readonly #receiptsKept: number

  constructor (init: MachineInit & { wholeReceiptsKept?: number }) {
    this.#init = init
    this.#receiptsKept = init.wholeReceiptsKept ?? WHOLE_RECEIPTS_KEPT
    this.#humans = humanSeats(init.table.seats)
    this.#verify = init.verifyDoc ?? verifyDocument
    this.#handMs = init.timelock != null && init.beacon !== null ? (init.timelock.handMs ?? DEFAULT_BLIND_HAND_MS) : null
    const { contributeMs, ackMs } = init.timeouts
    this.#book = new HandBook({
      transitions: BLIND_DEALER_MOVES,
      // When each phase stops waiting: the keys, and each human seat's shuffle, by the end of
      // their turn (turnEnd: the last at the COMMIT's deadline); shares contributeMs after their
      // BDEAL, hand keys and countersignatures ackMs after their request.
      deadlines: {
        keys: h => turnEnd(h.commit.body.deadline, contributeMs, this.#humans.length, 0),
        shuffling: h => turnEnd(h.commit.body.deadline, contributeMs, this.#humans.length, 1 + this.#humans.filter(s => s < h.shuffles.length).length),
        dealt: (_h, now) => now + contributeMs,
        // The key round is fetched again contributeMs after its time (and every contributeMs after) until it is had.
        unlocking: (h, now) => Math.max(now, init.beacon === null || h.commit.body.keyRound === undefined ? now : roundTime(init.beacon.chain, h.commit.body.keyRound)) + contributeMs,
        ending: (_h, now) => now + ackMs,
        revealed: (_h, now) => now + ackMs
      },
      final: ['done', 'aborted'],
      key: hand => blindDealerHandKey(init.table.id, hand),
      snapshot: blindDealerSnapshot,
      now: init.now
    })
    if (init.signer.peerId !== init.table.dealer) throw new Error('the dealer machine must run on the table\'s dealer node')
    const problem = checkBlindCommit({ scheme: init.table.scheme, game: init.table.game, seats: init.table.seats, commitment: BLIND_COMMITMENT } as CommitBody)
    if (problem !== null) throw new Rejection(problem)
  }

  /**
   * After a restart: the counter comes back, and each saved hand goes on from what was saved:
   * - `keys`: the COMMIT goes again to each human seat whose key is not in (a seat that had sent it
   *   sends it again);
   * - `shuffling`: the BKEYS and every shuffle held go again to every human seat (a seat whose
   *   shuffle was lost sends it again; one that missed a shuffle gets it), robots shuffle if it is
   *   their turn, and the chain is checked again before dealing;
   * - `beacon`: the whole chain was checked before the save: the bound round is fetched again;
   * - `dealt`: the dealt deck is worked out again from the saved chain and beacon entry, the shares
   *   still due from the BDEALs and the BSHARES saved, the dealer's own openings (public cards,
   *   robots' cards) from the saved shares and the robots' keys; each BDEAL with shares still due goes
   *   again to the seats that owe them (a seat answers a BDEAL it holds with fresh shares of it);
   * - `ending`: the BEND goes again to each human seat whose hand key is not in;
   * - `revealed`: the cards are opened again from the saved hand keys, and the BREVEAL goes again
   *   to each human seat whose countersignature is not in;
   * - a snapshot in those phases saved before the deal's documents were (no `deals`): the hand
   *   cannot go on; it is aborted, naming the dealer.
   * The keys, or the seat whose turn it is to shuffle, are still due by the end of their turn
   * (turnEnd, fixed by the COMMIT's deadline); shares, hand keys and countersignatures get their
   * phase's wait again from the restart.
   */
  restore (meta: DealerMeta | undefined, snapshots: BlindDealerSnapshot[], logged: Array<{ kind: string, payload: unknown }> = []): Effect[] {
    if (meta !== undefined) this.#meta = { ...meta }
    for (const e of logged) this.#rememberLogged(e)
    const effects: Effect[] = []
    for (const s of snapshots) {
      const hand = this.#fresh(s)
      this.#book.open(hand)
      const { seats } = hand.commit.body
      if (hand.keys.length === seats.length) {
        hand.pubs = hand.keys.map(k => pointFromHex(k.body.pub, 'public key'))
        hand.pk = blindJointKey(hand.pubs)
      }
      switch (s.phase) {
        case 'keys':
          effects.push(...this.#humans.filter(h => !hand.keys.some(k => k.body.seat === h)).map((h): Effect => ({ kind: 'send', to: seats[h], doc: hand.commit })))
          break
        case 'shuffling': {
          effects.push(...this.#toHumans(this.#bkeys(hand)), ...hand.shuffles.flatMap(d => this.#toHumans(d)), ...this.#robotShuffles(hand))
          break
        }
        case 'beacon':
          hand.deck = decodeDeck(hand.shuffles[seats.length - 1].body.deck, 'deck')
          hand.verified = seats.length
          effects.push({ kind: 'fetchBeacon', hand: hand.hand, round: (hand.commit.body.beacon as NonNullable<CommitBody['beacon']>).round })
          break
        default:
          if (s.phase === 'unlocking' && s.deals !== undefined && s.sharesIn !== undefined) {
            effects.push(...this.#resume(hand, s), this.#fetchKeyRound(hand))
            break
          }
          if (s.deals === undefined || s.sharesIn === undefined) {
            effects.push(...this.#abort(hand, 'dealer-stopped', [this.#init.table.dealer], `the dealer restarted during blind hand ${s.hand}`, []))
          } else effects.push(...this.#resume(hand, s))
      }
    }
    return effects
  }

  /** A hand saved in `dealt`, `ending` or `revealed` goes on (see restore). */
  #resume (hand: BlindDealerHand, s: BlindDealerSnapshot): Effect[] {
    const { seats } = hand.commit.body
    hand.deck = decodeDeck(hand.shuffles[seats.length - 1].body.deck, 'deck')
    hand.verified = seats.length
    hand.deals = [...(s.deals ?? [])]
    hand.sharesIn = [...(s.sharesIn ?? [])]
    for (const a of s.acks ?? []) hand.acks.set(a.body.seat, a)
    for (const k of s.unlock?.body.keys ?? []) hand.unlocked.set(k.seat, scalarFromHex(k.secret, 'hand key'))
    this.#setDealt(hand)
    const dealt = hand.dealt as Ciphertext[]
    const stages = new Set(hand.deals.flatMap(d => d.body.stages))
    const layout = this.#layout(hand).filter(d => stages.has(d.stage))
    const owed = new Set<number>()
    for (const d of layout) {
      const ownerIsHuman = d.seat !== null && seats[d.seat] !== ROBOT
      for (let seat = 0; seat < seats.length; seat++) {
        if (!d.public && d.seat === seat) continue
        if (seats[seat] === ROBOT || hand.unlocked.has(seat)) {
          // The robot's shares the dealer opens itself: x·b for each position (what its BSHARES carried); an unlocked seat's likewise.
          if (d.public || !ownerIsHuman) {
            const x = hand.unlocked.get(seat) ?? scalarFromHex(hand.robotKeys[seat], 'robot key')
            const got = hand.gathered.get(deliveryKey(d.stage, d.seat)) ?? new Map<number, Point>()
            hand.gathered.set(deliveryKey(d.stage, d.seat), got)
            for (const pos of d.positions) got.set(pos * 16 + seat, mulSecret(dealt[pos].b, x))
          }
          continue
        }
        const doc = hand.sharesIn.find(x => x.body.seat === seat && x.body.stage === d.stage && x.body.to === d.seat)
        if (doc === undefined) {
          hand.pending.add(`${deliveryKey(d.stage, d.seat)}|${seat}`)
          owed.add(seat)
        } else if (d.public || !ownerIsHuman) {
          // Checked when received; read again for their points.
          const r = checkBshares(hand.commit.body, hand.digest, doc, hand.pubs[seat], dealt, d.positions)
          if ('problem' in r) throw new Error(`saved shares of seat ${seat} no longer check: ${r.problem}`)
          const got = hand.gathered.get(deliveryKey(d.stage, d.seat)) ?? new Map<number, Point>()
          hand.gathered.set(deliveryKey(d.stage, d.seat), got)
          for (const [pos, point] of r.shares) got.set(pos * 16 + seat, point)
        }
      }
    }
    // The robots' cards and the public ones opened again (no event: they were announced before the restart).
    for (const d of layout) if (d.public || (d.seat !== null && seats[d.seat] === ROBOT)) this.#openIfComplete(hand, d)
    if (hand.phase === 'unlocking') return []
    if (hand.phase === 'dealt') {
      if (hand.pending.size === 0) hand.due = undefined
      const dueStages = new Set([...hand.pending].map(p => p.split('|')[0]))
      return hand.deals.filter(d => d.body.stages.some(x => dueStages.has(x)))
        .flatMap(d => [...owed].map((seat): Effect => ({ kind: 'send', to: seats[seat], doc: d })))
    }
    const missing = (has: (seat: number) => boolean, doc: Signed<unknown>): Effect[] =>
      this.#humans.filter(seat => !has(seat)).map((seat): Effect => ({ kind: 'send', to: seats[seat], doc }))
    if (hand.phase === 'ending') return missing(seat => hand.secrets.some(x => x.body.seat === seat) || hand.unlocked.has(seat), hand.bend as Signed<BendBody>)
    // revealed
    const cards = openDeckWithKeys(hand.commit.body.game, dealt, this.#handKeys(hand))
    hand.deliveries = cardDeliveries(this.#layout(hand), cards)
    return missing(seat => hand.acks.has(seat), hand.reveal as SignedBreveal)
  }

  readonly family = 'blind' as const

  /**
   * Joined: hand keys (BKEY) in; contributed: shuffles in (src/protocol/contracts.ts); `owed`, in the
   * `dealt` phase only while some shares are still due: why `end` refuses the hand (not every seat holds its cards).
   */
  status (): Array<DealerHandStatus & { owed?: string }> {
    return this.#book.values().map(h => ({
      hand: h.hand, family: this.family, phase: h.phase, stages: h.stages, joined: h.keys.length, contributed: h.shuffles.length, acks: h.acks.size,
      ...(h.phase === 'dealt' && h.pending.size > 0 ? { owed: this.#owed(h) } : {})
    }))
  }

  /** A blind dealer does not resend what failed to arrive: a seat that missed a document times out and records it. */
  delivery (_to: string, _doc: Signed<unknown>, _outcome: { ok: true } | { ok: false, reason: string }): void {}

  get inFlight (): number { return this.#book.size }

  /**
   * What a played hand's card openings are checked against (docs/dealer-blind.md §15): the keys,
   * the dealt deck, the layout and the stages dealt so far. Undefined before the deal.
   */
  openingHand (handNo: number): BlindPlayHand | undefined {
    const hand = this.#book.get(handNo)
    if (hand?.dealt === undefined || hand.pubs.length !== hand.commit.body.seats.length) return undefined
    return { commit: hand.commit.body, commitDigest: hand.digest, keys: [...hand.pubs], dealt: hand.dealt, layout: this.#layout(hand), stages: [...hand.stages] }
  }

  /**
   * The opening of a robot seat's `card` (docs/dealer-blind.md §15): every human seat's share for
   * its position as received (checked before the robot's cards opened), and each robot's share
   * proven here with that robot's key, its own included. A Rejection when the robot holds no such card opened.
   */
  robotOpening (handNo: number, seat: number, card: string): CardOpening {
    const hand = this.#book.get(handNo)
    const opening = this.openingHand(handNo)
    const x = hand?.robotKeys[seat]
    if (hand === undefined || opening === undefined || x === undefined) throw new Rejection(`hand ${handNo} has no robot seat ${seat} dealt`)
    // Its private cards, its own public ones (duo's face-up packet), or the table's (tarot's dog, which its taker holds).
    const mine = [...hand.robotOpened.map(r => ({ ...r, public: false })), ...hand.publicOpened.map(p => ({ ...p, public: true }))]
    const d = mine.find(r => r.seat === seat && r.cards.includes(card)) ?? mine.find(r => r.public && r.seat === null && r.cards.includes(card))
    const at = this.#layout(hand).find(l => d !== undefined && l.stage === d.stage && l.seat === d.seat && l.public === d.public)
    if (d === undefined || at === undefined) throw new Rejection(`${card} is not one of robot seat ${seat}'s cards`)
    const pos = at.positions[d.cards.indexOf(card)]
    const { commit, commitDigest, dealt } = opening
    const others = new Map<number, { d: string, c: string, s: string }>()
    commit.seats.forEach((who, k) => {
      if (k === seat) return
      if (who === ROBOT) {
        const ctx = blindContext(commit, commitDigest, shareStep(pos, k), proverOf(commit, k))
        others.set(k, proveShare(ctx, scalarFromHex(hand.robotKeys[k], 'robot key'), dealt[pos].b, this.#init.random))
        return
      }
      const share = hand.sharesIn.find(doc => doc.body.seat === k && doc.body.stage === d.stage && doc.body.to === d.seat)?.body.shares.find(sh => sh.pos === pos)
      if (share !== undefined) others.set(k, { d: share.d, c: share.c, s: share.s })
    })
    return makeCardOpening(opening, seat, scalarFromHex(x, 'robot key'), pos, card, others, this.#init.random)
  }

  /** The public cards of a hand this node opened so far (a played hand shows them). */
  publicCards (handNo: number): Array<{ stage: string, seat: number | null, cards: string[] }> {
    return this.#book.get(handNo)?.publicOpened.map(p => ({ ...p, cards: [...p.cards] })) ?? []
  }

  /** A robot seat's hand key (hex): its robot's randomness during play, published with the hand keys at its end. */
  robotKey (handNo: number, seat: number): string | undefined {
    return this.#book.get(handNo)?.robotKeys[seat]
  }

  /** A hand dealt, as a played hand starts from it: its COMMIT, the positions' layout and the stages dealt. */
  dealtLayout (handNo: number): { commit: SignedCommit, layout: PositionDelivery[], stages: string[] } | undefined {
    const hand = this.#book.get(handNo)
    if (hand === undefined || hand.phase !== 'dealt') return undefined
    return { commit: hand.commit, layout: this.#layout(hand), stages: [...hand.stages] }
  }

  /** The robot seats' cards this node opened in a hand in play (it plays them; never a person's). */
  robotCards (handNo: number): Array<{ stage: string, seat: number, cards: string[] }> {
    return this.#book.get(handNo)?.robotOpened.map(r => ({ ...r })) ?? []
  }

  #fresh (s: BlindDealerSnapshot): BlindDealerHand {
    return {
      ...s, digest: docDigest(s.commit), pubs: [], deck: blindStartingDeck(s.commit.body.game), pending: new Set(),
      gathered: new Map(), robotOpened: [], publicOpened: [], acks: new Map(), deals: [], sharesIn: [], verified: 0, unlocked: new Map()
    }
  }

  startHand (params: DealParams): { hand: number, effects: Effect[] } {
    const { table, timeouts, signer } = this.#init
    const hand = this.#meta.nextHand
    const deadline = this.#init.now() + timeouts.contributeMs
    let beacon: CommitBody['beacon'] = null
    if (this.#init.beacon !== null) {
      const { chain, marginMs } = this.#init.beacon
      beacon = { chainHash: chain.hash, round: firstRoundAfter(chain, deadline, marginMs), info: { ...chain } as Record<string, unknown> }
    }
    const body: CommitBody = {
      table: table.id, hand, prev: this.#meta.prevCommit, scheme: table.scheme, game: table.game, seats: table.seats,
      dealer: table.dealer, params, commitment: BLIND_COMMITMENT, beacon, deadline
    }
    // Time-locked: the round every hand key is sealed to, handMs after the bound round (docs/dealer-blind.md §14).
    if (this.#handMs !== null && beacon !== null) body.keyRound = blindKeyRound(this.#init.beacon?.chain as ChainInfo, beacon.round, this.#handMs)
    const commit = signDocument('commit', body, signer)
    const robotKeys: Record<string, string> = {}
    table.seats.forEach((s, seat) => { if (s === ROBOT) robotKeys[seat] = scalarToHex(randomScalar(this.#init.random)) })
    const state = this.#fresh({ hand, commit, phase: 'keys', robotKeys, keys: [], shuffles: [], beacon: null, params, stages: [], secrets: [] })
    this.#book.open(state)
    this.#meta = { nextHand: hand + 1, prevCommit: state.digest }
    // The robots' keys are on disk before anything leaves.
    const robotDocs = Object.entries(robotKeys).map(([seat, x]) => makeBkey(href(state), Number(seat), signer, scalarFromHex(x, 'robot key'), this.#init.random, this.#init.beacon?.chain))
    for (const doc of robotDocs) this.#addKey(state, doc)
    const effects: Effect[] = [
      this.#book.save(state),
      { kind: 'persist', key: blindDealerMetaKey(table.id), value: { ...this.#meta } },
      { kind: 'event', hand, event: { type: 'committed', commitment: body.commitment, beaconRound: beacon?.round ?? null } },
      ...this.#toHumans(commit)
    ]
    effects.push(...this.#afterKey(state))
    return { hand, effects }
  }

  receive (from: string, doc: Signed<unknown>): Effect[] {
    switch (doc.type) {
      case 'bkey': return this.#onKey(from, doc as Signed<BkeyBody>)
      case 'bshuffle': return this.#onShuffle(from, doc as Signed<BshuffleBody>)
      case 'bshares': return this.#onShares(from, doc as Signed<BsharesBody>)
      case 'bsecret': return this.#onSecret(from, doc as Signed<BsecretBody>)
      case 'ack': return this.#onAck(from, doc as Signed<AckBody>)
      case 'abort': return this.#onSeatAbort(from, doc as Signed<AbortBody>)
      case 'ask': return this.#onAsk(from, doc as Signed<AskBody>)
      default: throw new Rejection(`a blind dealer does not accept ${doc.type} messages`)
    }
  }

  beaconResult (handNo: number, result: { entry: BeaconEntry } | { error: string }): Effect[] {
    const hand = this.#book.get(handNo)
    if (hand?.phase === 'unlocking') return this.#unlock(hand, result)
    if (hand === undefined || hand.phase !== 'beacon') return []
    if ('error' in result) return this.#abort(hand, 'beacon-unavailable', [], result.error, [])
    if (result.entry.round !== hand.commit.body.beacon?.round) return this.#abort(hand, 'beacon-unavailable', [], `the beacon gave round ${result.entry.round}, not the bound round`, [])
    hand.beacon = result.entry
    return this.#dealStages(hand, this.#initialStages(hand))
  }

  deliverStage (handNo: number, stage: string, taker?: number): Effect[] {
    const hand = this.#book.inPhase(handNo, ['dealt'])
    if (hand.stages.includes(stage)) throw new Rejection(`stage ${stage} of hand ${handNo} was already delivered`)
    const stages = getCardScheme(hand.commit.body.scheme).stagesFor(hand.commit.body.game)
    if (!stages.includes(stage)) throw new Rejection(`${hand.commit.body.game} has no stage ${stage} (it has: ${stages.join(', ')})`)
    if (taker !== undefined) {
      if (!Number.isInteger(taker) || taker < 0 || taker >= hand.commit.body.seats.length) throw new Rejection(`taker must be a seat from 0 to ${hand.commit.body.seats.length - 1}`)
      if (hand.params.taker !== undefined && hand.params.taker !== taker) throw new Rejection(`the taker of hand ${handNo} is already seat ${hand.params.taker}`)
      hand.params = { ...hand.params, taker }
    }
    if (!this.#layout(hand).some(d => d.stage === stage)) throw new Rejection(`stage ${stage} needs more input (belote's take needs --taker)`)
    return this.#dealStages(hand, [stage])
  }

  /**
   * End of the hand: every seat is asked for its hand key (robots' are the dealer's). Refused while
   * a seat's cards are not all dealt: the hand keys open the whole deck, so an End before every
   * share asked for by a BDEAL is in (and relayed to its owner) would show a seat cards it was never
   * dealt, and no record could say whose fault that was. The shares still due end the hand at their
   * deadline (`missing-shares`, naming the seats that owe them) if they never come.
   */
  end (handNo: number): Effect[] {
    const hand = this.#book.inPhase(handNo, ['dealt'])
    if (hand.pending.size > 0) throw new Rejection(`hand ${handNo} cannot end yet: ${this.#owed(hand)}`)
    for (const [seat, x] of Object.entries(hand.robotKeys)) {
      hand.secrets.push(makeBsecret(href(hand), Number(seat), this.#init.signer, scalarFromHex(x, 'robot key')))
    }
    const end = signDocument('bend', { table: hand.commit.body.table, hand: hand.hand, commit: hand.digest }, this.#init.signer)
    hand.bend = end
    const effects: Effect[] = [this.#enter(hand, 'ending'), ...this.#toHumans(end)]
    if (this.#humans.every(s => hand.unlocked.has(s))) effects.push(...this.#reveal(hand))
    return effects
  }

  /** Which seats' cards are not all dealt yet, and who owes their shares, in one line. */
  #owed (hand: BlindDealerHand): string {
    const owners = new Map<string, Set<number>>()
    for (const p of hand.pending) {
      const [, to, from] = p.split('|')
      const set = owners.get(to) ?? new Set<number>()
      set.add(Number(from))
      owners.set(to, set)
    }
    const parts = [...owners].map(([to, from]) => `${to === 'table' ? 'the table\'s cards' : `seat ${to}'s cards`} (shares due from seat ${[...from].sort((a, b) => a - b).join(', ')})`)
    return `not every seat holds its cards: ${parts.join('; ')} are not all dealt; end the hand once they are`
  }

  /** Each hand past its phase's deadline (the deadline table in the constructor). */
  tick (now: number): Effect[] {
    const effects: Effect[] = []
    // Shuffles already relayed are checked here, while the next seats shuffle, rather than all
    // together after the last one (each check is ~0.1 s: docs/dealer-blind.md, "What each node may
    // do in parallel"); the last shuffle is checked on arrival, before the deal, as before.
    for (const hand of this.#book.values()) {
      if (hand.phase === 'shuffling' && hand.verified < hand.shuffles.length) effects.push(...(this.#verifyChain(hand) ?? []))
    }
    for (const hand of this.#book.due(now)) {
      const { seats } = hand.commit.body
      switch (hand.phase) {
        case 'keys': {
          const missing = this.#humans.filter(s => !hand.keys.some(k => k.body.seat === s))
          effects.push(...this.#abort(hand, 'missing-key', missing.map(s => seats[s]), `no hand key from seat ${missing.join(', ')} by the deadline`, hand.keys))
          break
        }
        case 'shuffling': {
          const next = hand.shuffles.length
          effects.push(...this.#abort(hand, 'missing-shuffle', [seats[next]], `no shuffle from seat ${next} by the deadline`, [...hand.keys, ...hand.shuffles.slice(Math.max(0, next - 1), next)]))
          break
        }
        case 'dealt': {
          const missing = [...new Set([...hand.pending].map(p => Number(p.split('|')[2])))]
          if (this.#timelocked(hand)) { effects.push(this.#enter(hand, 'unlocking'), this.#fetchKeyRound(hand)); break }
          effects.push(...this.#abort(hand, 'missing-shares', missing.map(s => seats[s]), `no decryption shares from seat ${missing.join(', ')} in time`, this.#sharesEvidence(hand)))
          break
        }
        case 'unlocking':
          effects.push(this.#enter(hand, 'unlocking'), this.#fetchKeyRound(hand))
          break
        case 'ending': {
          const missing = this.#humans.filter(s => !hand.secrets.some(k => k.body.seat === s) && !hand.unlocked.has(s))
          if (this.#timelocked(hand)) { effects.push(this.#enter(hand, 'unlocking'), this.#fetchKeyRound(hand)); break }
          effects.push(...this.#abort(hand, 'missing-secret', missing.map(s => seats[s]), `no hand key published by seat ${missing.join(', ')} after the hand`, [hand.bend as Signed<BendBody>, ...hand.secrets]))
          break
        }
        case 'revealed':
          effects.push(...this.#finalize(hand))
          break
      }
    }
    return effects
  }

  nextDeadline (): number | undefined {
    return this.#book.nextDeadline()
  }

  abortHand (handNo: number, detail: string): Effect[] {
    const hand = this.#book.get(handNo)
    // A hand waiting for its key round stays saved: the restarted dealer finishes it (docs/dealer-blind.md §14).
    if (hand === undefined || hand.phase === 'revealed' || hand.phase === 'ending' || hand.phase === 'unlocking') return []
    if (hand.phase === 'dealt' && hand.pending.size === 0) return this.end(handNo)
    return this.#abort(hand, 'dealer-stopped', [this.#init.table.dealer], detail, [])
  }

  /**
   * What a missing-shares record carries (docs/dealer-blind.md §13): every BDEAL with shares still
   * due, and every BSHARES received for its stages.
   */
  #sharesEvidence (hand: BlindDealerHand): Array<Signed<unknown>> {
    const due = new Set([...hand.pending].map(p => p.split('|')[0]))
    const deals = hand.deals.filter(d => d.body.stages.some(s => due.has(s)))
    const stages = new Set(deals.flatMap(d => d.body.stages))
    return [...deals, ...hand.sharesIn.filter(s => stages.has(s.body.stage))]
  }

  finalizeRevealed (): Effect[] {
    return this.#book.values().filter(h => h.phase === 'revealed').flatMap(h => this.#finalize(h))
  }

  // ---- keys -----------------------------------------------------------------------------------

  #addKey (hand: BlindDealerHand, doc: SignedBkey): void {
    hand.keys.push(doc)
    hand.keys.sort((a, b) => a.body.seat - b.body.seat)
  }

  /**
   * Peer `peer`'s connection to this node came back after it was lost (the host says so): a frame
   * written just before a connection dies can be lost, either way (docs/dealer-blind.md §9 "A
   * connection that came back"). For each hand in play where the peer holds a human seat, what that
   * seat may lack goes again (#lacking), at most RESYNCS_PER_SEAT_HAND times a hand.
   */
  resync (peer: string): Effect[] {
    if (peer === this.#init.table.dealer) return []
    const seatOf = (hand: { commit: SignedCommit }): number => humanSeatOf(hand.commit.body.seats, this.#humans, peer)
    return this.#book.resync(seatOf, seat => `resync/${seat}`, RESYNCS_PER_SEAT_HAND, (hand, seat) => this.#lacking(hand, seat, peer))
  }

  /**
   * What seat `seat` (peer `to`) may lack of a hand in play. Each document is one the seat answers
   * with its own part when it has sent it already, so what the dealer lacks of the seat comes too:
   * the COMMIT while its key is missing (its BKEY again); the BKEYS and every shuffle held while
   * the seats shuffle (its BSHUFFLE again, once made); once dealt, the BDEALs while shares of it are
   * due (fresh BSHARES), the shares relayed to it and the BUNLOCK; the BEND (its hand key again, if
   * awaited); the BEND and BREVEAL while its ACK is missing (its ACK again).
   */
  #lacking (hand: BlindDealerHand, seat: number, to: string): Effect[] {
    const send = (d: Signed<unknown>): Effect => ({ kind: 'send', to, doc: d })
    switch (hand.phase) {
      case 'keys':
        return hand.keys.some(k => k.body.seat === seat) ? [] : [send(hand.commit)]
      case 'shuffling':
        return [send(this.#bkeys(hand)), ...hand.shuffles.map(send)]
      case 'dealt':
      case 'unlocking': {
        const owes = [...hand.pending].some(k => k.endsWith(`|${seat}`))
        const layout = this.#layout(hand)
        // The shares the dealer relays to this seat: others' shares of its own cards, and of public ones.
        const relayed = hand.sharesIn.filter(x => x.body.seat !== seat && layout.some(d => d.stage === x.body.stage && d.seat === x.body.to && (d.public || d.seat === seat)))
        return [...(owes ? hand.deals : []), ...relayed, ...(hand.unlock === undefined ? [] : [hand.unlock])].map(send)
      }
      case 'ending':
        return hand.bend === undefined ? [] : [send(hand.bend)]
      case 'revealed':
        return hand.acks.has(seat) || hand.bend === undefined || hand.reveal === undefined ? [] : [send(hand.bend), send(hand.reveal)]
      default:
        return []
    }
  }

  #onKey (from: string, doc: SignedBkey): Effect[] {
    // A key sent again (its seat answers a COMMIT sent again: a restarted dealer's, a resync's): held already.
    if (sentBefore(this.#book.get(doc.body.hand)?.keys, from, doc)) return []
    const hand = this.#checkSeatDoc(from, doc, 'keys')
    if (hand.keys.some(k => k.body.seat === doc.body.seat)) throw new Rejection(`replayed key of seat ${doc.body.seat} for hand ${hand.hand}`)
    const r = checkBkey(hand.commit.body, hand.digest, doc)
    if ('problem' in r) return this.#abort(hand, 'invalid-key', [from], `key of seat ${doc.body.seat}: ${r.problem}`, [doc])
    // Refused, not recorded (docs/dealer-blind.md §14): the key is then missing at the deadline.
    const locked = checkKeyTimelock(hand.commit.body, doc)
    if (locked !== null) throw new Rejection(locked)
    this.#addKey(hand, doc)
    return this.#afterKey(hand)
  }

  #afterKey (hand: BlindDealerHand): Effect[] {
    if (hand.keys.length < hand.commit.body.seats.length) return []
    hand.pubs = hand.keys.map(k => pointFromHex(k.body.pub, 'public key'))
    hand.pk = blindJointKey(hand.pubs)
    return [this.#enter(hand, 'shuffling'), ...this.#toHumans(this.#bkeys(hand)), ...this.#robotShuffles(hand)]
  }

  /** The BKEYS of a hand whose keys are all in (signed again when sent again: the same document, Ed25519 signatures being deterministic). */
  #bkeys (hand: BlindDealerHand): Signed<BkeysBody> {
    const body: BkeysBody = { table: hand.commit.body.table, hand: hand.hand, commit: hand.digest, keys: hand.keys }
    return signDocument('bkeys', body, this.#init.signer)
  }

  // ---- shuffles -------------------------------------------------------------------------------

  /**
   * A seat's shuffle is relayed at once; the seats check it (every seat checks every shuffle before
   * its own turn, and blames its author). The dealer checks it here only when a robot shuffles next
   * or at the end of the chain, so it never deals from a deck it has not verified.
   */
  #onShuffle (from: string, doc: SignedBshuffle): Effect[] {
    // A shuffle sent again (its seat answers BKEYS sent again: a restarted dealer's, a resync's): held already.
    if (sentBefore(this.#book.get(doc.body.hand)?.shuffles, from, doc)) return []
    const hand = this.#checkSeatDoc(from, doc, 'shuffling')
    if (doc.body.seat !== hand.shuffles.length) throw new Rejection(`shuffle of seat ${doc.body.seat} out of turn (seat ${hand.shuffles.length} shuffles next)`)
    hand.shuffles.push(doc)
    // Saved before it is relayed: a restarted dealer goes on from the chain it holds.
    const relay = this.#toHumans(doc).filter(e => e.kind !== 'send' || e.to !== from)
    const effects = [this.#book.save(hand), ...relay, ...this.#robotShuffles(hand)]
    // The next human seat's turn: its own end (turnEnd).
    if (hand.phase === 'shuffling') this.#book.wait(hand)
    return effects
  }

  /** Verifies the chain up to the last shuffle received (each shuffle once). A problem ends the hand. */
  #verifyChain (hand: BlindDealerHand): Effect[] | undefined {
    for (let i = hand.verified; i < hand.shuffles.length; i++) {
      const doc = hand.shuffles[i]
      const r = checkBshuffle(hand.commit.body, hand.digest, doc, hand.pk as Point, hand.deck)
      if ('problem' in r) return this.#abort(hand, 'invalid-shuffle', [doc.signer], `shuffle of seat ${doc.body.seat}: ${r.problem}`, [...hand.keys, ...hand.shuffles.slice(Math.max(0, i - 1), i), doc])
      hand.deck = r.deck
      hand.verified = i + 1
    }
    return undefined
  }

  #robotShuffles (hand: BlindDealerHand): Effect[] {
    const { seats } = hand.commit.body
    const effects: Effect[] = []
    while (hand.shuffles.length < seats.length && seats[hand.shuffles.length] === ROBOT) {
      const failed = this.#verifyChain(hand)
      if (failed !== undefined) return [...effects, ...failed]
      const seat = hand.shuffles.length
      const { doc } = makeBshuffle(href(hand), seat, this.#init.signer, hand.pk as Point, hand.deck, this.#init.random)
      hand.shuffles.push(doc)
      // A proof is random: the robot's shuffle is saved before it leaves, never made twice.
      effects.push(this.#book.save(hand), ...this.#toHumans(doc))
    }
    if (hand.shuffles.length < seats.length) return effects
    const failed = this.#verifyChain(hand)
    if (failed !== undefined) return [...effects, ...failed]
    if (hand.commit.body.beacon !== null) return [...effects, this.#book.enter(hand, 'beacon'), { kind: 'fetchBeacon', hand: hand.hand, round: hand.commit.body.beacon.round }]
    return [...effects, ...this.#dealStages(hand, this.#initialStages(hand))]
  }

  // ---- dealing --------------------------------------------------------------------------------

  #initialStages (hand: BlindDealerHand): string[] {
    return getCardScheme(hand.commit.body.scheme).stagesFor(hand.commit.body.game).filter(s => INITIAL_STAGES.has(s))
  }

  #layout (hand: BlindDealerHand): PositionDelivery[] {
    return blindLayout(hand.commit.body, hand.params)
  }

  /** The deck the BDEALs deal from: the last shuffle's output, permuted by the beacon (worked out once). */
  #setDealt (hand: BlindDealerHand): void {
    if (hand.dealt !== undefined) return
    const sigma = beaconPermutation(hand.beacon?.randomness ?? null, docDigest(hand.shuffles[hand.commit.body.seats.length - 1]), hand.deck.length)
    hand.dealt = dealtDeck(hand.deck, sigma)
  }

  /** BDEAL: asks every seat for its decryption shares of these stages; the robots' shares are made here. */
  #dealStages (hand: BlindDealerHand, stages: string[]): Effect[] {
    const { seats } = hand.commit.body
    this.#setDealt(hand)
    hand.stages.push(...stages)
    const deliveries = this.#layout(hand).filter(d => stages.includes(d.stage))
    for (const d of deliveries) {
      for (let seat = 0; seat < seats.length; seat++) {
        if (!d.public && d.seat === seat) continue
        if (seats[seat] !== ROBOT && !hand.unlocked.has(seat)) hand.pending.add(`${deliveryKey(d.stage, d.seat)}|${seat}`)
      }
    }
    const body: BdealBody = { table: hand.commit.body.table, hand: hand.hand, commit: hand.digest, beacon: hand.beacon, params: hand.params, stages }
    const deal = signDocument('bdeal', body, this.#init.signer)
    hand.deals.push(deal)
    const effects: Effect[] = [this.#enter(hand, 'dealt'), ...this.#toHumans(deal)]
    // The robots' shares: for each delivery a robot does not own (and public ones), as any seat would.
    for (const d of deliveries) {
      for (const [seatText, xHex] of Object.entries(hand.robotKeys)) {
        const seat = Number(seatText)
        if (!d.public && d.seat === seat) continue
        const doc = makeBshares(href(hand), seat, this.#init.signer, scalarFromHex(xHex, 'robot key'), hand.dealt as Ciphertext[], d.positions, d.stage, d.seat, this.#init.random)
        effects.push(...this.#routeShares(hand, d, doc, null))
      }
      effects.push(...this.#unlockedShares(hand, d))
    }
    return effects
  }

  /**
   * The shares of seats whose key was unlocked, for a delivery the dealer opens itself (public
   * cards, robots' cards): x·b, like a robot's. A human owner computes them itself from the BUNLOCK.
   */
  #unlockedShares (hand: BlindDealerHand, d: PositionDelivery): Effect[] {
    const { seats } = hand.commit.body
    if (hand.unlocked.size === 0 || (!d.public && d.seat !== null && seats[d.seat] !== ROBOT)) return []
    const dealt = hand.dealt as Ciphertext[]
    const got = hand.gathered.get(deliveryKey(d.stage, d.seat)) ?? new Map<number, Point>()
    hand.gathered.set(deliveryKey(d.stage, d.seat), got)
    // Opened already (every share was in before): nothing to add, nothing to announce again.
    const senders = seats.filter((_, s) => d.public || s !== d.seat).length
    if (got.size >= senders * d.positions.length) return []
    for (const [seat, x] of hand.unlocked) {
      if (!d.public && d.seat === seat) continue
      for (const pos of d.positions) got.set(pos * 16 + seat, mulSecret(dealt[pos].b, x))
    }
    return this.#openIfComplete(hand, d)
  }

  // ---- time-locked hands: finishing without a seat (docs/dealer-blind.md §14) ------------------

  #timelocked (hand: BlindDealerHand): boolean {
    return hand.commit.body.keyRound !== undefined && this.#init.beacon !== null
  }

  #fetchKeyRound (hand: BlindDealerHand): Effect {
    return { kind: 'fetchBeacon', hand: hand.hand, round: hand.commit.body.keyRound as number }
  }

  /**
   * The key round is out: each seat that withheld (its shares, before the BEND; its hand key,
   * after) is opened from its timelock and checked against its public key. All open: a BUNLOCK
   * names them (every key unlocked so far) and the hand goes on without them; one does not: the
   * record of other tables (missing-shares, missing-secret). A beacon failure is retried.
   */
  #unlock (hand: BlindDealerHand, result: { entry: BeaconEntry } | { error: string }): Effect[] {
    if ('error' in result || result.entry.round !== hand.commit.body.keyRound) return []
    const { seats } = hand.commit.body
    const ending = hand.bend !== undefined
    const reason = ending ? 'missing-secret' as const : 'missing-shares' as const
    const walked = ending
      ? this.#humans.filter(s => !hand.secrets.some(k => k.body.seat === s) && !hand.unlocked.has(s))
      : [...new Set([...hand.pending].map(p => Number(p.split('|')[2])))].sort((a, b) => a - b)
    const opened = new Map<number, bigint>()
    const failed: Array<{ seat: number, problem: string }> = []
    for (const seat of walked) {
      const r = openHandKey(hand.commit.body, hand.keys[seat], hand.pubs[seat], result.entry)
      if ('problem' in r) failed.push({ seat, problem: r.problem })
      else opened.set(seat, r.secret)
    }
    if (failed.length > 0) {
      // Only the seats whose timelock does not open are blamed; the record carries the key round's
      // entry and their keys, with which anyone sees it (docs/dealer-blind.md §13). The seats whose
      // timelock opens are not silent any more: their key stands in for what they withheld.
      const detail = `no ${ending ? 'hand key' : 'decryption shares'} from seat ${failed.map(f => f.seat).join(', ')}, and ${failed.map(f => f.problem).join('; ')}`
      // Every seat whose contribution the evidence lacks shows its key: those unlocked before, and those whose timelock opened now, are seen to open.
      const keys = [...new Set([...walked, ...hand.unlocked.keys()])].sort((a, b) => a - b).map(seat => hand.keys[seat])
      return ending
        ? this.#abort(hand, 'missing-secret', failed.map(f => seats[f.seat]), detail, [hand.bend as Signed<BendBody>, ...hand.secrets, ...keys], result.entry)
        : this.#abort(hand, 'missing-shares', failed.map(f => seats[f.seat]), detail, [...this.#sharesEvidence(hand), ...keys], result.entry)
    }
    const keys = [
      ...(hand.unlock?.body.keys ?? []),
      ...walked.map(seat => ({ seat, secret: scalarToHex(opened.get(seat) as bigint), reason }))
    ].sort((a, b) => a.seat - b.seat)
    const body: BunlockBody = { table: hand.commit.body.table, hand: hand.hand, commit: hand.digest, beacon: result.entry, keys }
    hand.unlock = signDocument('bunlock', body, this.#init.signer)
    for (const [seat, x] of opened) hand.unlocked.set(seat, x)
    const event: Effect = { kind: 'event', hand: hand.hand, event: { type: 'unlocked', seats: walked, reason } }
    if (ending) return [event, ...this.#toHumans(hand.unlock), ...this.#reveal(hand)]
    // The shares they owed are owed by nobody now: the dealer's own openings take x·b.
    for (const p of [...hand.pending]) if (opened.has(Number(p.split('|')[2]))) hand.pending.delete(p)
    const effects: Effect[] = [this.#enter(hand, 'dealt'), event, ...this.#toHumans(hand.unlock)]
    if (hand.pending.size === 0) hand.due = undefined
    const stages = new Set(hand.stages)
    for (const d of this.#layout(hand).filter(l => stages.has(l.stage))) effects.push(...this.#unlockedShares(hand, d))
    return effects
  }

  #onShares (from: string, doc: Signed<BsharesBody>): Effect[] {
    // Shares of a delivery this dealer holds from that seat already: fresh ones (new proofs) made
    // for a BDEAL sent again (#lacking), which the first ones answered. They change nothing (as sentBefore).
    const b = doc.body
    if (doc.signer === from && this.#book.get(b.hand)?.sharesIn.some(x => x.signer === from && x.body.seat === b.seat && x.body.stage === b.stage && x.body.to === b.to) === true) return []
    const hand = this.#checkSeatDoc(from, doc, 'dealt')
    const key = `${deliveryKey(doc.body.stage, doc.body.to)}|${doc.body.seat}`
    if (!hand.pending.has(key)) throw new Rejection(`shares of seat ${doc.body.seat} for ${doc.body.stage}/${doc.body.to ?? 'table'} were not asked for (or came twice)`)
    const d = this.#layout(hand).find(l => l.stage === doc.body.stage && l.seat === doc.body.to)
    if (d === undefined) throw new Rejection(`no delivery ${doc.body.stage}/${doc.body.to ?? 'table'} in this hand`)
    hand.pending.delete(key)
    // Every share asked for is in: nothing is due until the next request.
    if (hand.pending.size === 0) hand.due = undefined
    hand.sharesIn.push(doc)
    // Saved before it is relayed: a restarted dealer knows which shares are still due.
    return [this.#book.save(hand), ...this.#routeShares(hand, d, doc, from)]
  }

  /**
   * Shares for a human seat's private cards go to that seat only, unread here (the dealer cannot
   * open them: it lacks that seat's share). Shares the dealer opens itself — public cards, robots'
   * cards — are checked here first; public ones are relayed to every human seat.
   */
  #routeShares (hand: BlindDealerHand, d: PositionDelivery, doc: Signed<BsharesBody>, from: string | null): Effect[] {
    const { seats } = hand.commit.body
    const ownerIsHuman = d.seat !== null && seats[d.seat] !== ROBOT
    if (!d.public && ownerIsHuman) return [{ kind: 'send', to: seats[d.seat as number], doc }]
    const r = checkBshares(hand.commit.body, hand.digest, doc, hand.pubs[doc.body.seat], hand.dealt as Ciphertext[], d.positions)
    if ('problem' in r) {
      // What re-checks the shares: their author's key, the last shuffle and the BDEAL of their stage (the dealt deck, the positions).
      const evidence = [hand.keys[doc.body.seat], hand.shuffles[seats.length - 1], ...hand.deals.filter(x => x.body.stages.includes(d.stage)).slice(0, 1), doc]
      return this.#abort(hand, 'invalid-shares', [doc.signer], `shares of seat ${doc.body.seat}: ${r.problem}`, evidence)
    }
    const key = deliveryKey(d.stage, d.seat)
    const got = hand.gathered.get(key) ?? new Map<number, Point>()
    hand.gathered.set(key, got)
    for (const [pos, point] of r.shares) got.set(pos * 16 + doc.body.seat, point)
    const effects: Effect[] = d.public ? this.#toHumans(doc).filter(e => e.kind !== 'send' || e.to !== from) : []
    return [...effects, ...this.#openIfComplete(hand, d)]
  }

  #openIfComplete (hand: BlindDealerHand, d: PositionDelivery): Effect[] {
    const { seats } = hand.commit.body
    const got = hand.gathered.get(deliveryKey(d.stage, d.seat)) ?? new Map<number, Point>()
    const senders = seats.map((_, s) => s).filter(s => d.public || s !== d.seat)
    if (got.size < senders.length * d.positions.length) return []
    const dealt = hand.dealt as Ciphertext[]
    const cards = d.positions.map(pos => {
      const shares = senders.map(s => got.get(pos * 16 + s) as Point)
      if (!d.public && d.seat !== null) shares.push(mulSecret(dealt[pos].b, scalarFromHex(hand.robotKeys[d.seat], 'robot key')))
      return openPosition(hand.commit.body.game, dealt[pos], shares)
    })
    if (!d.public && d.seat !== null) hand.robotOpened.push({ stage: d.stage, seat: d.seat, cards })
    if (d.public && !hand.publicOpened.some(p => p.stage === d.stage && p.seat === d.seat)) hand.publicOpened.push({ stage: d.stage, seat: d.seat, cards })
    return [{ kind: 'event', hand: hand.hand, event: { type: 'cards', stage: d.stage, seat: d.seat, public: d.public, cards } }]
  }

  // ---- the end ---------------------------------------------------------------------------------

  #onSecret (from: string, doc: SignedBsecret): Effect[] {
    // A seat back after its key was unlocked answers the BEND too, maybe after the reveal: its key is held already.
    const live = this.#book.get(doc.body.hand)
    if (live !== undefined && live.unlocked.has(doc.body.seat) && from === live.commit.body.seats[doc.body.seat] && doc.body.commit === live.digest) return []
    const hand = this.#checkSeatDoc(from, doc, 'ending')
    if (hand.secrets.some(s => s.body.seat === doc.body.seat)) throw new Rejection(`replayed hand key of seat ${doc.body.seat}`)
    const r = checkBsecret(hand.commit.body, hand.digest, doc, hand.pubs[doc.body.seat])
    if ('problem' in r) throw new Rejection(`hand key of seat ${doc.body.seat}: ${r.problem}`)
    hand.secrets.push(doc)
    if (hand.secrets.length + hand.unlocked.size < hand.commit.body.seats.length) return [this.#book.save(hand)]
    return this.#reveal(hand)
  }

  #reveal (hand: BlindDealerHand): Effect[] {
    hand.secrets.sort((a, b) => a.body.seat - b.body.seat)
    const cards = openDeckWithKeys(hand.commit.body.game, hand.dealt as Ciphertext[], this.#handKeys(hand))
    hand.deliveries = cardDeliveries(this.#layout(hand), cards)
    // A played hand: its outcome on the opened deal, which the BREVEAL names (docs/dealer-blind.md §15).
    if (hand.commit.body.params.play === true && this.#init.blindPlay !== undefined) hand.play = this.#init.blindPlay(hand.hand, hand.deliveries, this.openingHand(hand.hand) as BlindPlayHand)
    const body: BrevealBody = {
      table: hand.commit.body.table, hand: hand.hand, commit: hand.digest, beacon: hand.beacon, params: hand.params, stages: hand.stages, secrets: hand.secrets,
      ...(hand.unlock === undefined ? {} : { unlock: hand.unlock }),
      ...(hand.play === undefined ? {} : { play: revealPlayOf(hand.play) })
    }
    hand.reveal = signDocument('breveal', body, this.#init.signer)
    const effects: Effect[] = [this.#book.enter(hand, 'revealed'), { kind: 'event', hand: hand.hand, event: { type: 'revealed' } }, ...this.#toHumans(hand.reveal)]
    if (this.#humans.length === 0) effects.push(...this.#finalize(hand))
    return effects
  }

  /** Every hand key: the published ones and the unlocked ones. */
  #handKeys (hand: BlindDealerHand): bigint[] {
    return [...hand.secrets.map(s => scalarFromHex(s.body.secret, 'secret')), ...hand.unlocked.values()]
  }

  #onAck (from: string, doc: SignedAck): Effect[] {
    if (sentBefore(this.#book.get(doc.body.hand)?.acks.values(), from, doc)) return []
    const hand = this.#checkSeatDoc(from, doc, 'revealed')
    if (hand.acks.has(doc.body.seat)) throw new Rejection(`replayed countersignature of seat ${doc.body.seat} for hand ${hand.hand}`)
    if (doc.body.reveal !== docDigest(hand.reveal)) throw new Rejection(`countersignature of seat ${doc.body.seat} names another reveal`)
    if (doc.body.cards !== seatCardsDigest(hand.deliveries as Delivery[], doc.body.seat, hand.stages)) throw new Rejection(`countersignature of seat ${doc.body.seat} names cards it was not dealt`)
    hand.acks.set(doc.body.seat, doc)
    // A seat whose key was unlocked walked away: its countersignature is not awaited.
    return this.#humans.every(s => hand.acks.has(s) || hand.unlocked.has(s)) ? this.#finalize(hand) : [this.#book.save(hand)]
  }

  #finalize (hand: BlindDealerHand): Effect[] {
    const acks = [...hand.acks.values()].sort((a, b) => a.body.seat - b.body.seat)
    const receipt: BlindReceipt = { v: 2, commit: hand.commit, keys: hand.keys, shuffles: hand.shuffles, reveal: hand.reveal as SignedBreveal, acks, ...(hand.play === undefined ? {} : { play: hand.play }) }
    const gone = this.#enter(hand, 'done')
    const finalDoc = this.#rememberReceipt(receipt)
    return [
      { kind: 'append', entry: 'receipt', hand: hand.hand, payload: receipt },
      { kind: 'event', hand: hand.hand, event: { type: 'receipt', acked: acks.map(a => a.body.seat) } },
      ...this.#toHumans(finalDoc),
      gone
    ]
  }

  /**
   * Remembers how a hand ended with `receipt` (at its end, or read back from the log after a
   * restart): the BEND, BREVEAL and BFINAL a seat that held the hand asks for (the dealer's
   * documents re-signed from the receipt: Ed25519 signatures are deterministic, so they are the
   * ones sent), and the whole receipt among the last WHOLE_RECEIPTS_KEPT. Returns the BFINAL.
   */
  #rememberReceipt (receipt: BlindReceipt): Signed<BfinalBody> {
    const { table, hand } = receipt.commit.body
    const digest = docDigest(receipt.commit)
    // The receipt is too large for one frame (every shuffle): seats assemble it from what they hold.
    const final: BfinalBody = { table, hand, commit: digest, reveal: docDigest(receipt.reveal), acks: receipt.acks }
    const finalDoc = signDocument('bfinal', final, this.#init.signer)
    const bend = signDocument('bend', { table, hand, commit: digest }, this.#init.signer)
    this.#book.remember(hand, { digest, docs: [bend, receipt.reveal, finalDoc] })
    this.#receipts.delete(hand)
    this.#receipts.set(hand, receipt)
    for (const old of this.#receipts.keys()) {
      if (this.#receipts.size <= this.#receiptsKept) break
      this.#receipts.delete(old)
    }
    return finalDoc
  }

  /** An ended hand read back from the log (this table's, this dealer's COMMIT): a receipt wins over the records logged for its hand. */
  #rememberLogged (e: { kind: string, payload: unknown }): void {
    const { table } = this.#init
    if (e.kind === 'receipt' && (e.payload as { v?: unknown }).v === 2) {
      const receipt = e.payload as BlindReceipt
      if (receipt.commit.body.table === table.id && receipt.commit.signer === table.dealer) this.#rememberReceipt(receipt)
    } else if (e.kind === 'abort') {
      const record = e.payload as Signed<AbortBody>
      const commit = record.body.commit
      if (commit === null || commit.body.table !== table.id || commit.signer !== table.dealer) return
      // The first record of a hand is the one that ended it (later ones are seats' claims after the deal).
      if (this.#book.ended(commit.body.hand) === undefined) this.#book.remember(commit.body.hand, { digest: docDigest(commit), docs: [record] })
    }
  }

  /**
   * A seat asks how a hand went (it was down or cut off, or is about to record the dealer's
   * silence): an ended hand's BEND, BREVEAL and BFINAL (it assembles the receipt from what it holds),
   * or, to a seat that never saw the COMMIT (`commit: null`), the whole receipt in BRECEIPT parts
   * (one of the last WHOLE_RECEIPTS_KEPT), or the abort record that ended it; a hand in play, the BKEYS and the shuffles held (while the
   * seats shuffle), or the BEND (and the BREVEAL) it may have missed.
   * Each seat may ask about a hand ASKS_PER_SEAT_HAND times.
   */
  #onAsk (from: string, doc: Signed<AskBody>): Effect[] {
    const { table } = this.#init
    const body = doc.body
    const live = this.#book.get(body.hand)
    const ended = this.#book.ended(body.hand)
    const ctx = { tableId: table.id, seats: table.seats, verify: (d: Signed<unknown>) => this.#verify(d) }
    if (!checkAsk(ctx, from, doc, this.#meta.nextHand, () => live?.digest ?? ended?.digest)) return []
    this.#book.count(body.hand, `ask/${body.seat}`, ASKS_PER_SEAT_HAND, `seat ${body.seat} already asked about hand ${body.hand} ${ASKS_PER_SEAT_HAND} times`)
    const send = (d: Signed<unknown>): Effect => ({ kind: 'send', to: from, doc: d })
    // A seat that never saw the hand's COMMIT cannot assemble the receipt: it gets the whole one, in
    // parts; one older than the last WHOLE_RECEIPTS_KEPT is read back from the node's log (recalled).
    const whole = body.commit === null ? this.#receipts.get(body.hand) : undefined
    if (ended !== undefined && whole !== undefined) return receiptParts(whole, ended.digest, this.#init.signer).map(send)
    if (ended !== undefined && body.commit === null && ended.docs.some(d => d.type === 'bfinal')) return [{ kind: 'recall', hand: body.hand, to: from }]
    if (ended !== undefined) return ended.docs.map(send)
    const hand = live as BlindDealerHand
    // A seat that missed the keys (it restarted before them): the BKEYS and every shuffle held.
    // A seat that never saw the COMMIT (it was down when it went out): the COMMIT while keys are
    // still taken, which it answers with its key; nothing later (it cannot join the hand then).
    if (body.commit === null) return hand.phase === 'keys' ? [send(hand.commit)] : []
    if (hand.phase === 'keys') return []
    if (hand.phase === 'shuffling') return [send(this.#bkeys(hand)), ...hand.shuffles.map(send)]
    // A seat that missed the BUNLOCK (its cards wait on the shares of the seats it names).
    if (hand.phase === 'dealt' && hand.unlock !== undefined) return [send(hand.unlock)]
    if (hand.phase === 'ending') return [send(hand.bend as Signed<BendBody>)]
    if (hand.phase === 'revealed') return [send(hand.bend as Signed<BendBody>), send(hand.reveal as SignedBreveal)]
    return []
  }

  /**
   * The host's answer to a `recall` (#onAsk): the receipt of an ended hand as this node's log holds
   * it, sent whole in BRECEIPT parts; when the log no longer holds it (or holds another hand's), the
   * BEND, BREVEAL and BFINAL remembered, as before.
   */
  recalled (handNo: number, to: string, receipt: unknown): Effect[] {
    const ended = this.#book.ended(handNo)
    if (ended === undefined) return []
    const r = receipt as Partial<BlindReceipt> | undefined
    const send = (d: Signed<unknown>): Effect => ({ kind: 'send', to, doc: d })
    if (r?.v === 2 && r.commit !== undefined && docDigest(r.commit) === ended.digest) return receiptParts(r as BlindReceipt, ended.digest, this.#init.signer).map(send)
    return ended.docs.map(send)
  }

  #onSeatAbort (from: string, doc: Signed<AbortBody>): Effect[] {
    const hand = this.#book.get(doc.body.hand)
    if (hand === undefined || doc.body.table !== this.#init.table.id) throw new Rejection(`abort for unknown hand ${doc.body.hand}`)
    const seat = hand.commit.body.seats.indexOf(from)
    if (seat < 0 || doc.signer !== from || !this.#verify(doc)) throw new Rejection('abort not signed by a seat of that hand')
    if (doc.body.commit === null || docDigest(doc.body.commit) !== hand.digest) throw new Rejection(`abort of seat ${seat} names another commit`)
    // The one rule set (docs/dealer-blind.md §13): a seat's record is logged here only when it keeps every rule of its reason.
    const { table } = this.#init
    const verdict = checkAbortRecord(doc, { table: { id: table.id, dealer: table.dealer, seats: table.seats }, verifyDoc: this.#verify })
    if (!verdict.ok) throw new Rejection(`abort of seat ${seat} does not verify: ${verdict.problems[0].message} (${verdict.problems[0].code})`)
    const gone = this.#enter(hand, 'aborted')
    this.#book.remember(hand.hand, { digest: hand.digest, docs: [doc] })
    return [
      ...logAbort(hand.hand, doc),
      ...this.#toHumans(doc).filter(e => e.kind !== 'send' || e.to !== from),
      gone
    ]
  }

  #checkSeatDoc (from: string, doc: Signed<{ table: string, hand: number, commit: string, seat: number }>, phase: Phase): BlindDealerHand {
    const ctx = { tableId: this.#init.table.id, now: () => this.#init.now(), verify: (d: Signed<unknown>) => this.#verify(d) }
    return checkSeatDoc(this.#book, ctx, from, doc, phase, (phase === 'keys' || phase === 'shuffling'))
  }

  #abort (hand: BlindDealerHand, reason: AbortReason, blame: string[], detail: string, evidence: Array<Signed<unknown>>, keyRound?: BeaconEntry): Effect[] {
    const doc = signAbort(hand.commit, reason, blame, detail, evidence, this.#init.signer, undefined, keyRound)
    const gone = this.#enter(hand, 'aborted')
    this.#book.remember(hand.hand, { digest: hand.digest, docs: [doc] })
    return [
      ...logAbort(hand.hand, doc),
      ...this.#toHumans(doc),
      gone
    ]
  }

  /** The one place a blind hand changes phase (the hand book checks the move and sets its deadline); returns the save that must follow. */
  #enter (hand: BlindDealerHand, phase: Phase): Effect {
    return this.#book.enter(hand, phase)
  }

  #toHumans (doc: Signed<unknown>): Effect[] {
    return this.#humans.map(s => ({ kind: 'send', to: this.#init.table.seats[s], doc }))
  }
}

/** What is saved of a blind hand (the stored format: the keys of before, and the deal's documents once dealt). */
function blindDealerSnapshot (hand: BlindDealerHand): BlindDealerSnapshot {
  const s: BlindDealerSnapshot = {
    hand: hand.hand, commit: hand.commit, phase: hand.phase, robotKeys: { ...hand.robotKeys }, keys: [...hand.keys], shuffles: [...hand.shuffles],
    beacon: hand.beacon, params: hand.params, stages: [...hand.stages], secrets: [...hand.secrets]
  }
  if (hand.deals.length === 0) return s
  return {
    ...s, deals: [...hand.deals], sharesIn: [...hand.sharesIn], acks: [...hand.acks.values()].sort((a, b) => a.body.seat - b.body.seat),
    ...(hand.bend === undefined ? {} : { bend: hand.bend }),
    ...(hand.reveal === undefined ? {} : { reveal: hand.reveal }),
    ...(hand.unlock === undefined ? {} : { unlock: hand.unlock }),
    ...(hand.play === undefined ? {} : { play: hand.play })
  }
}
