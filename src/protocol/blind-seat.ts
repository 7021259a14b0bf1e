import { signDocument, verifyDocument, type Signed } from '../core/signed.js'
import { roundTime } from '../core/beacon/index.js'
import { type Ciphertext, type Point, type PreparedShuffle, decodeDeck, prepareShuffle, mulSecret, pointFromHex, pointToHex, publicKey, randomScalar, scalarFromHex, scalarToHex } from '../core/blind/index.js'
import {
  beaconPermutation, blindJointKey, blindLayout, blindStartingDeck, checkBkey, checkBlindCommit, checkBshares,
  checkBshuffle, dealtDeck, openPosition, proverOf
} from '../core/hand/blind.js'
import type {
  BdealBody, BendBody, BfinalBody, BkeysBody, BlindReceipt, BsharesBody, SignedBkey, SignedBreveal, SignedBshares, SignedBshuffle, SignedBunlock
} from '../core/hand/blind-messages.js'
import { verifyBlindReceipt } from '../core/hand/blind-verify.js'
import { docDigest, seatCardsDigest } from '../core/hand/digest.js'
import { checkAcks, checkBeaconEntry } from '../core/hand/verify.js'
import { verifyAbort } from '../core/hand/abort-rules.js'
import { messagesOf } from '../core/hand/reasons.js'
import type { AbortBody, AbortReason, AckBody, BeaconEntry, DealParams, ReceiptPlay, SignedAck, SignedCommit } from '../core/hand/messages.js'
import type { PositionDelivery } from '../core/schemes/blind.js'
import type { Delivery } from '../core/schemes/types.js'
import type { SeatHandStatus, SeatSide } from './contracts.js'
import { Rejection, type Effect, type MachineInit } from './types.js'
import type { AskBody } from './wire.js'
import { logAbort, signAbort } from './abort.js'
import { HandBook, type BookHand, type Transitions } from './hand-book.js'
import { href, makeBkey, makeBsecret, makeBshares, makeBshuffle } from './blind-docs.js'
import { checkCommitForSeat, seatMetaKey, seatMetaWrite, type SeatGap, type SeatMeta } from './seat.js'
import { DEFAULT_BLIND_HAND_MS, checkBunlock, checkCommitKeyRound, checkKeyTimelock } from '../core/hand/blind-timelock.js'
import { ReceiptJoiner, type BreceiptBody } from './blind-receipt-parts.js'
import type { BlindPlayHand } from '../core/hand/blind-play.js'
import { makeCardOpening, type CardOpening } from '../core/hand/blind-card-opening.js'

type Phase = 'keyed' | 'shuffling' | 'dealt' | 'ended' | 'acked' | 'done' | 'aborted'

export interface BlindSeatSnapshot {
  hand: number
  commit: SignedCommit
  phase: Phase
  /** This seat's hand key (hex): saved before its public key leaves, published only after the hand. */
  secret: string
  keys: SignedBkey[]
  shuffles: SignedBshuffle[]
  beacon: BeaconEntry | null
  params: DealParams | null
  /** Stages the dealer asked shares for, in order. */
  stages: string[]
  /** Shares received for this seat's (and the table's) cards, kept until they open them. */
  shares: SignedBshares[]
  /** Cards opened so far. */
  cards: Delivery[]
  reveal?: SignedBreveal
  ack?: SignedAck
  /** This seat's own BKEY as sent (its proof is random: it cannot be made again the same). */
  ownKey?: SignedBkey
  /** The dealer's BDEALs and BEND as received: an abort record carries them (docs/dealer-blind.md §13). */
  deals?: Array<Signed<BdealBody>>
  bend?: Signed<BendBody>
  /** A time-locked hand's BUNLOCK: the hand keys of seats that walked away (docs/dealer-blind.md §14). */
  unlock?: SignedBunlock
  /** A played hand: the other seats' shares of this seat's own cards, checked, kept to open each card as it is played (docs/dealer-blind.md §15). */
  kept?: SignedBshares[]
  /** A played hand's chain and end as the receipt carries them, fixed when this seat countersigns. */
  play?: ReceiptPlay
}

interface BlindSeatHand extends BlindSeatSnapshot, BookHand<Phase> {
  digest: string
  x: bigint
  pubs: Point[]
  pk?: Point
  deck: Ciphertext[]
  dealt?: Ciphertext[]
  /** Whether it asked the dealer about the hand since its phase began (it asks once before it records the dealer's silence). */
  asked?: boolean
  /** Whether it ever asked the dealer about the hand (then a receipt finalised without its countersignature is still the hand's). */
  late?: boolean
  /** The BUNLOCK's hand keys, by seat: x·b stands for that seat's shares. */
  unlocked: Map<number, bigint>
  /**
   * How many shuffles, from seat 0, are checked (its own counts as checked); not saved, so a
   * restored hand checks every shuffle again before it gives a share. Only the shuffle just before
   * this seat's turn waits: its check runs after this seat's own shuffle has left (#checkPending).
   */
  checked?: number
  /** My shuffle's randomness and the points that read no deck, made once the keys are in (not saved). */
  prepared?: PreparedShuffle
}

/** The blind seat's legal moves (docs/dealer-blind.md §9): a hand may be aborted from any phase it is in. */
export const BLIND_SEAT_MOVES: Transitions<Phase> = Object.freeze({
  keyed: ['shuffling', 'aborted'],
  shuffling: ['dealt', 'aborted'],
  dealt: ['ended', 'aborted'],
  ended: ['acked', 'aborted'],
  acked: ['done', 'aborted'],
  done: [],
  aborted: []
})

export const blindSeatHandKey = (table: string, hand: number): string => `blind-seat/${table}/hand/${String(hand).padStart(16, '0')}`
export const blindSeatMetaKey = seatMetaKey

/**
 * A seat's side of a dealer-blind hand (blind-v1), pure. It draws a fresh hand key, checks every
 * key proof and every shuffle before its own turn, gives decryption shares only for cards that are
 * not its own, opens its cards with every other seat's checked shares plus its own, and after the
 * hand publishes its key and checks the whole hand alone before it countersigns.
 */
export class BlindSeatMachine implements SeatSide {
  readonly #init: MachineInit
  readonly #seat: number
  readonly #hands: HandBook<Phase, BlindSeatHand, BlindSeatSnapshot>
  readonly #verify: (doc: Signed<unknown>) => boolean
  /** A time-locked table's planned length of a hand (docs/dealer-blind.md §14), or null. */
  readonly #handMs: number | null
  #meta: SeatMeta = { lastHand: 0 }
  /** Hands this seat missed (it learned of a later COMMIT): the next one to ask about, the last one, and the COMMIT it must link to. */
  #gap: SeatGap | undefined
  /** The BRECEIPT parts of the one missed hand being fetched. */
  readonly #joiner = new ReceiptJoiner()

  constructor (init: MachineInit) {
    this.#init = init
    this.#seat = init.table.seats.indexOf(init.signer.peerId)
    if (this.#seat < 0) throw new Error(`${init.signer.peerId} holds no seat at table ${init.table.id}`)
    this.#verify = init.verifyDoc ?? verifyDocument
    this.#handMs = init.timelock != null && init.beacon !== null ? (init.timelock.handMs ?? DEFAULT_BLIND_HAND_MS) : null
    const { contributeMs, revealMs, ackMs } = init.timeouts
    // When a seat in each phase stops waiting for the dealer's next step: the deal (after the bound
    // round, if one) plus twice contributeMs; revealMs for the REVEAL; twice ackMs for the BFINAL.
    const dealDue = (hand: BlindSeatHand): number => {
      const body = hand.commit.body
      const chain = init.beacon?.chain
      const due = body.beacon === null || chain === undefined ? body.deadline : Math.max(body.deadline, roundTime(chain, body.beacon.round))
      return due + 2 * contributeMs
    }
    // Once dealt, a time-locked hand may wait for its key round (a seat walked away): the seat waits that long too.
    const revealDue = (hand: BlindSeatHand, now: number): number => {
      const chain = init.beacon?.chain
      const round = hand.commit.body.keyRound
      return round === undefined || chain === undefined ? now + revealMs : Math.max(now + revealMs, roundTime(chain, round) + 2 * contributeMs)
    }
    this.#hands = new HandBook({
      transitions: BLIND_SEAT_MOVES,
      deadlines: { keyed: dealDue, shuffling: dealDue, dealt: revealDue, ended: revealDue, acked: (_h, now) => now + 2 * ackMs },
      final: ['done', 'aborted'],
      key: hand => blindSeatHandKey(init.table.id, hand),
      snapshot: blindSeatSnapshot,
      now: init.now
    })
  }

  get seat (): number { return this.#seat }

  /** After a restart: hands come back from their saved documents (already checked when received). */
  restore (meta: SeatMeta | undefined, snapshots: BlindSeatSnapshot[]): Effect[] {
    if (meta !== undefined) this.#meta = { ...meta }
    this.#gap = meta?.gap === undefined ? undefined : { ...meta.gap }
    for (const s of snapshots) {
      const hand = this.#fresh(s)
      if (s.keys.length === s.commit.body.seats.length) this.#setKeys(hand)
      if (s.shuffles.length > 0) hand.deck = decodeDeck(s.shuffles[s.shuffles.length - 1].body.deck, 'deck')
      if (s.params !== null && s.shuffles.length === s.commit.body.seats.length) this.#setDealt(hand)
      this.#hands.open(hand)
    }
    // It asks the dealer at once what became of each hand it held, and of the hand after the last it
    // knows of: they may have ended, or gone on, meanwhile.
    // A gap still open when it stopped: it goes on asking about the first hand still missing.
    return [...this.#hands.values().map(hand => this.#ask(hand)), this.#askAbout(this.#meta.lastHand + 1, null), ...(this.#gap === undefined ? [] : [this.#askAbout(this.#gap.next, null)])]
  }

  #fresh (s: BlindSeatSnapshot): BlindSeatHand {
    const unlocked = new Map((s.unlock?.body.keys ?? []).map(k => [k.seat, scalarFromHex(k.secret, 'hand key')]))
    return { ...s, digest: docDigest(s.commit), x: scalarFromHex(s.secret, 'hand key'), pubs: [], deck: blindStartingDeck(s.commit.body.game), unlocked }
  }

  /**
   * What a played hand's card openings are checked against (docs/dealer-blind.md §15): every key,
   * the dealt deck, the layout and the stages dealt so far. Undefined before the deal.
   */
  openingHand (handNo: number): BlindPlayHand | undefined {
    const hand = this.#hands.get(handNo)
    if (hand?.dealt === undefined || hand.params === null || hand.pubs.length !== hand.commit.body.seats.length) return undefined
    return { commit: hand.commit.body, commitDigest: hand.digest, keys: [...hand.pubs], dealt: hand.dealt, layout: this.#layout(hand), stages: [...hand.stages] }
  }

  /**
   * The opening of this seat's `card` (docs/dealer-blind.md §15): its position among this seat's
   * opened cards, every other seat's kept share for it, and this seat's own, newly proven. A
   * Rejection when this seat holds no such card opened.
   */
  cardOpening (handNo: number, card: string): CardOpening {
    const hand = this.#hands.get(handNo)
    const opening = this.openingHand(handNo)
    if (hand === undefined || opening === undefined) throw new Rejection(`hand ${handNo} is not dealt at this seat`)
    // Its own cards first; else the table's (tarot's dog, once its taker holds it).
    const d = hand.cards.find(c => c.seat === this.#seat && c.cards.includes(card)) ?? hand.cards.find(c => c.public && c.seat === null && c.cards.includes(card))
    const at = this.#layout(hand).find(l => d !== undefined && l.stage === d.stage && l.seat === d.seat && l.public === d.public)
    if (d === undefined || at === undefined) throw new Rejection(`${card} is not one of this seat's cards`)
    const pos = at.positions[d.cards.indexOf(card)]
    const others = new Map<number, { d: string, c: string, s: string }>()
    for (const doc of hand.kept ?? []) {
      if (doc.body.stage !== d.stage || doc.body.to !== d.seat) continue
      const share = doc.body.shares.find(x => x.pos === pos)
      if (share !== undefined) others.set(doc.body.seat, { d: share.d, c: share.c, s: share.s })
    }
    try {
      return makeCardOpening(opening, this.#seat, hand.x, pos, card, others, this.#init.random)
    } catch (err) {
      throw new Rejection(`the opening of ${card}: ${(err as Error).message}`)
    }
  }

  /**
   * A played hand moved (an action of its chain): the dealer is not away, so this seat's wait for
   * the REVEAL starts over (docs/games.md "A turn that runs out"). Only while the hand waits for it.
   */
  waitAgain (handNo: number): void {
    const hand = this.#hands.get(handNo)
    if (hand !== undefined && hand.phase === 'dealt') this.#hands.wait(hand)
  }

  cards (handNo: number): Array<{ stage: string, seat: number | null, public: boolean, cards: string[] }> {
    return this.#hands.get(handNo)?.cards.map(c => ({ ...c })) ?? []
  }

  readonly family = 'blind' as const

  status (): SeatHandStatus[] {
    // While the seats shuffle, how many shuffles this seat holds: the page's k of n.
    return this.#hands.values().map(h => ({ hand: h.hand, phase: h.phase, ...(h.phase === 'keyed' || h.phase === 'shuffling' ? { shuffled: h.shuffles.length } : {}) }))
  }

  receive (from: string, doc: Signed<unknown>): Effect[] {
    if (from !== this.#init.table.dealer) throw new Rejection(`${doc.type} from ${from}, who is not the dealer`)
    // The dealer relays the seats' shuffles, shares and abort records: each is checked on its own signature.
    const relayed = doc.type === 'bshuffle' || doc.type === 'bshares' || doc.type === 'abort'
    if (!relayed && doc.signer !== from) throw new Rejection(`${doc.type} relayed: signed by ${doc.signer} but sent by the dealer`)
    // An abort record of a hand this seat never saw: the dealer's answer to its ASK about a missed hand.
    if (doc.type === 'abort' && this.#hands.get((doc as Signed<AbortBody>).body.hand) === undefined && (doc as Signed<AbortBody>).body.table === this.#init.table.id) {
      const commit = (doc as Signed<AbortBody>).body.commit
      if (commit !== null) return this.#catchUp(doc, commit)
    }
    switch (doc.type) {
      case 'commit': return this.#onCommit(doc as SignedCommit)
      case 'bkeys': return this.#onKeys(doc as Signed<BkeysBody>)
      case 'bshuffle': return this.#onShuffle(doc as SignedBshuffle)
      case 'bdeal': return this.#onDeal(doc as Signed<BdealBody>)
      case 'bshares': return this.#onShares(doc as SignedBshares)
      case 'bend': return this.#onEnd(doc as Signed<{ table: string, hand: number, commit: string }>)
      case 'breveal': return this.#onReveal(doc as SignedBreveal)
      case 'bfinal': return this.#onFinal(doc as Signed<BfinalBody>)
      case 'bunlock': return this.#onUnlock(doc as SignedBunlock)
      case 'breceipt': return this.#onReceiptPart(doc as Signed<BreceiptBody>)
      case 'abort': return this.#onAbort(doc as Signed<AbortBody>)
      default: throw new Rejection(`a blind seat does not accept ${doc.type} messages`)
    }
  }

  /** A blind seat never fetches a round itself (the BDEAL carries it, checked here): nothing to do. */
  beaconResult (_hand: number, _result: { entry: BeaconEntry } | { error: string }): Effect[] {
    return []
  }

  tick (now: number): Effect[] {
    const effects: Effect[] = []
    // A shuffle left unchecked for my turn is checked now, while the next seats shuffle.
    for (const hand of this.#hands.values()) {
      if (hand.phase === 'shuffling') effects.push(...(this.#checkPending(hand) ?? []))
    }
    for (const hand of this.#hands.due(now)) {
      if (hand.asked !== true) {
        // Before recording anything against the dealer, ask it once (docs/protocol.md §7): its answer
        // may simply have been lost (this seat was paused, down or cut off), and the hand may have ended.
        hand.asked = true
        hand.late = true
        hand.due = now + this.#init.timeouts.ackMs
        effects.push(this.#ask(hand))
        continue
      }
      const dealer = [this.#init.table.dealer]
      const n = hand.commit.body.seats.length
      if (hand.phase === 'keyed' || (hand.phase === 'shuffling' && hand.shuffles.length === n)) {
        // No keys relayed (the record carries this seat's own key), or every seat shuffled and no
        // BDEAL came (every key and the last shuffle).
        const evidence = hand.phase === 'keyed' ? (hand.ownKey === undefined ? [] : [hand.ownKey]) : [...hand.keys, hand.shuffles[n - 1]]
        effects.push(...this.#abort(hand, 'missing-deal', dealer, `hand ${hand.hand} was not ${hand.phase === 'keyed' ? 'shuffled' : 'dealt'} in time`, evidence))
      } else if (hand.phase === 'shuffling') {
        // Whose turn it was is named: the dealer relays, so a silent shuffler and a silent dealer look alike here.
        const next = hand.shuffles.length
        const evidence = [...hand.keys, ...hand.shuffles.slice(Math.max(0, next - 1), next)]
        effects.push(...this.#abort(hand, 'missing-shuffle', [proverOf(hand.commit.body, next)], `no shuffle from seat ${next} in time`, evidence))
      } else if (hand.phase === 'dealt' || hand.phase === 'ended') {
        // The BDEALs show the hand was dealt; after the BEND, this seat's hand key shows it answered.
        const evidence: Array<Signed<unknown>> = [...(hand.deals ?? [])]
        if (hand.bend !== undefined) evidence.push(hand.bend, makeBsecret(href(hand), this.#seat, this.#init.signer, hand.x))
        effects.push(...this.#abort(hand, 'missing-reveal', dealer, `the dealer did not reveal hand ${hand.hand} in time`, evidence))
      } else if (hand.phase === 'acked') {
        effects.push(...this.#done(hand, [hand.ack as SignedAck]))
      }
    }
    return effects
  }

  nextDeadline (): number | undefined {
    return this.#hands.nextDeadline()
  }

  #onCommit (doc: SignedCommit): Effect[] {
    // The same COMMIT again (a restarted dealer asks for the keys it lacks): my key goes again.
    const known = this.#hands.get(doc.body.hand)
    if (known !== undefined && doc.body.table === this.#init.table.id && docDigest(doc) === known.digest) {
      return known.phase === 'keyed' && known.ownKey !== undefined ? [{ kind: 'send', to: this.#init.table.dealer, doc: known.ownKey }] : []
    }
    checkCommitForSeat(doc.body, this.#meta, this.#init)
    const problem = checkBlindCommit(doc.body) ?? checkCommitKeyRound(doc.body, this.#handMs)
    if (problem !== null) throw new Rejection(`commit: ${problem}`)
    if (!this.#verify(doc)) throw new Rejection('commit: bad signature')
    const missed = this.#noteGap(doc.body.hand)
    const x = randomScalar(this.#init.random)
    const hand = this.#fresh({
      hand: doc.body.hand, commit: doc, phase: 'keyed', secret: scalarToHex(x), keys: [], shuffles: [], beacon: null, params: null, stages: [], shares: [], cards: [], deals: []
    })
    hand.ownKey = makeBkey(href(hand), this.#seat, this.#init.signer, x, this.#init.random, this.#init.beacon?.chain)
    this.#hands.open(hand)
    this.#meta = { lastHand: hand.hand, lastCommit: hand.digest }
    return [
      this.#hands.save(hand),
      seatMetaWrite(this.#init.table.id, this.#meta, this.#gap),
      { kind: 'event', hand: hand.hand, event: { type: 'committed', commitment: doc.body.commitment, beaconRound: doc.body.beacon?.round ?? null } },
      { kind: 'send', to: this.#init.table.dealer, doc: hand.ownKey },
      ...missed
    ]
  }

  #setKeys (hand: BlindSeatHand): void {
    hand.pubs = hand.keys.map(k => pointFromHex(k.body.pub, 'public key'))
    hand.pk = blindJointKey(hand.pubs)
  }

  #onKeys (doc: Signed<BkeysBody>): Effect[] {
    const again = this.#keysAgain(doc)
    if (again !== undefined) return again
    const hand = this.#handFor(doc.body, 'keyed')
    if (!this.#verify(doc)) throw new Rejection('bkeys: bad signature')
    const { seats } = hand.commit.body
    if (doc.body.keys.length !== seats.length || doc.body.keys.some((k, i) => k.body.seat !== i)) throw new Rejection('bkeys: not one key per seat in seat order')
    const dealer = [this.#init.table.dealer]
    for (const key of doc.body.keys) {
      // A key that is not its seat's signed key for this hand was forged or moved by the dealer, who relays it.
      const { table, hand: handNo } = hand.commit.body
      if (key.signer !== proverOf(hand.commit.body, key.body.seat) || !this.#verify(key) || key.body.table !== table || key.body.hand !== handNo) {
        return this.#abort(hand, 'invalid-key', dealer, `the dealer relays a key of seat ${key.body.seat} that its seat did not sign for this hand`, [doc])
      }
      if (key.body.commit !== hand.digest) return this.#abort(hand, 'equivocation', dealer, `seat ${key.body.seat} answered another commit for hand ${hand.hand}`, [doc])
      const r = checkBkey(hand.commit.body, hand.digest, key)
      if ('problem' in r) return this.#abort(hand, 'invalid-key', [key.signer], `key of seat ${key.body.seat}: ${r.problem}`, [key])
      // Before this seat shuffles: every hand key can be opened at the key round if its seat walks away (§14).
      const locked = checkKeyTimelock(hand.commit.body, key)
      if (locked !== null) return this.#abort(hand, 'invalid-key', [key.signer], locked, [key])
    }
    // Another key of mine, signed by me, is not the dealer's fault to prove: refused, and the hand times out.
    if (doc.body.keys[this.#seat].body.pub !== pointToHex(publicKey(hand.x))) throw new Rejection('bkeys: the key relayed for my seat is not mine')
    hand.keys = doc.body.keys
    this.#setKeys(hand)
    const effects = [this.#enter(hand, 'shuffling'), ...this.#myTurn(hand)]
    // Not my turn yet: what my shuffle can compute without its input deck (about half its work)
    // is made now, while the earlier seats shuffle (docs/dealer-blind.md, parallelism).
    if (hand.shuffles.length < this.#seat) hand.prepared = prepareShuffle(hand.pk as Point, hand.deck.length, this.#init.random)
    return effects
  }

  /**
   * The BKEYS again, once this seat is past them: a restarted dealer going on with the shuffles. The
   * same keys: my shuffle, if I made it, goes again (it may have been lost); other keys: refused.
   */
  #keysAgain (doc: Signed<BkeysBody>): Effect[] | undefined {
    const hand = this.#hands.get(doc.body.hand)
    if (hand === undefined || hand.phase !== 'shuffling' || doc.body.table !== this.#init.table.id || doc.body.commit !== hand.digest) return undefined
    if (!this.#verify(doc)) throw new Rejection('bkeys: bad signature')
    if (doc.body.keys.length !== hand.keys.length || doc.body.keys.some((k, i) => docDigest(k) !== docDigest(hand.keys[i]))) throw new Rejection('bkeys sent again with other keys')
    const mine = hand.shuffles[this.#seat]
    return mine === undefined ? [] : [{ kind: 'send', to: this.#init.table.dealer, doc: mine }]
  }

  #onShuffle (doc: SignedBshuffle): Effect[] {
    const held = this.#hands.get(doc.body.hand)?.shuffles[doc.body.seat]
    // A shuffle sent again (by a restarted dealer): held already.
    if (held !== undefined && doc.body.table === this.#init.table.id && docDigest(held) === docDigest(doc)) return []
    const hand = this.#handFor(doc.body, 'shuffling')
    if (doc.body.seat !== hand.shuffles.length) throw new Rejection(`shuffle of seat ${doc.body.seat} out of turn`)
    if (doc.body.seat === this.#seat) throw new Rejection('my own shuffle relayed back')
    if (!this.#verify(doc)) throw new Rejection(`shuffle of seat ${doc.body.seat}: bad signature`)
    if (doc.body.seat === this.#seat - 1) {
      // My turn is next: I shuffle its output at once and check its proof after mine has left,
      // while the next seat shuffles (docs/dealer-blind.md, "What each node may do in parallel"):
      // a shuffle of a bad input reveals nothing, and no share leaves before the check.
      const output = this.#deckOf(hand, doc)
      if (output !== undefined) {
        hand.shuffles.push(doc)
        hand.deck = output
        return [this.#enter(hand, 'shuffling'), ...this.#myTurn(hand)]
      }
    }
    const failed = this.#checkPending(hand)
    if (failed !== undefined) return failed
    const r = checkBshuffle(hand.commit.body, hand.digest, doc, hand.pk as Point, hand.deck)
    if ('problem' in r) return this.#invalidShuffle(hand, doc, r.problem)
    hand.shuffles.push(doc)
    hand.checked = hand.shuffles.length
    hand.deck = r.deck
    return [this.#enter(hand, 'shuffling'), ...this.#myTurn(hand)]
  }

  /** The deck a shuffle outputs, when it is N well-formed ciphertexts (its proof unchecked); otherwise undefined. */
  #deckOf (hand: BlindSeatHand, doc: SignedBshuffle): Ciphertext[] | undefined {
    try {
      const deck = decodeDeck(doc.body.deck, 'deck')
      return deck.length === hand.deck.length ? deck : undefined
    } catch {
      return undefined
    }
  }

  #invalidShuffle (hand: BlindSeatHand, doc: SignedBshuffle, problem: string): Effect[] {
    const k = doc.body.seat
    return this.#abort(hand, 'invalid-shuffle', [doc.signer], `shuffle of seat ${k}: ${problem}`, [...hand.keys, ...hand.shuffles.slice(Math.max(0, k - 1), k), doc])
  }

  /**
   * Checks every shuffle held but not checked yet (the one before this seat's turn, or all of
   * them after a restart), in order: the abort naming the first bad one, or undefined.
   */
  #checkPending (hand: BlindSeatHand): Effect[] | undefined {
    const start = hand.checked ?? 0
    if (start >= hand.shuffles.length) return undefined
    let input = start === 0 ? blindStartingDeck(hand.commit.body.game) : decodeDeck(hand.shuffles[start - 1].body.deck, 'deck')
    for (let i = start; i < hand.shuffles.length; i++) {
      const doc = hand.shuffles[i]
      if (i === this.#seat) {
        input = decodeDeck(doc.body.deck, 'deck') // my own
      } else {
        const r = checkBshuffle(hand.commit.body, hand.digest, doc, hand.pk as Point, input)
        if ('problem' in r) return this.#invalidShuffle(hand, doc, r.problem)
        input = r.deck
      }
      hand.checked = i + 1
    }
    return undefined
  }

  /** My shuffle, once every shuffle before mine is in and checked. */
  #myTurn (hand: BlindSeatHand): Effect[] {
    if (hand.shuffles.length !== this.#seat) return []
    const { doc, output } = makeBshuffle(href(hand), this.#seat, this.#init.signer, hand.pk as Point, hand.deck, this.#init.random, hand.prepared)
    hand.prepared = undefined
    hand.shuffles.push(doc)
    hand.deck = output
    return [this.#enter(hand, 'shuffling'), { kind: 'send', to: this.#init.table.dealer, doc }]
  }

  #setDealt (hand: BlindSeatHand): void {
    const n = hand.commit.body.seats.length
    hand.dealt = dealtDeck(hand.deck, beaconPermutation(hand.beacon?.randomness ?? null, docDigest(hand.shuffles[n - 1]), hand.deck.length))
  }

  #layout (hand: BlindSeatHand): PositionDelivery[] {
    return blindLayout(hand.commit.body, hand.params as DealParams)
  }

  #onDeal (doc: Signed<BdealBody>): Effect[] {
    const held = this.#hands.get(doc.body.hand)
    // A BDEAL held already (a restarted dealer lacks shares it asked for): fresh shares of its stages go again.
    if (held !== undefined && held.phase === 'dealt' && doc.body.table === this.#init.table.id && (held.deals ?? []).some(d => docDigest(d) === docDigest(doc))) {
      return this.#layout(held).filter(d => doc.body.stages.includes(d.stage) && (d.public || d.seat !== this.#seat)).map((d): Effect => ({
        kind: 'send', to: this.#init.table.dealer, doc: makeBshares(href(held), this.#seat, this.#init.signer, held.x, held.dealt as Ciphertext[], d.positions, d.stage, d.seat, this.#init.random)
      }))
    }
    const hand = this.#handFor(doc.body, 'shuffling', 'dealt')
    if (!this.#verify(doc)) throw new Rejection('bdeal: bad signature')
    // Every shuffle is checked before any share leaves.
    const failed = hand.phase === 'shuffling' ? this.#checkPending(hand) : undefined
    if (failed !== undefined) return failed
    const { seats, params } = hand.commit.body
    if (hand.shuffles.length !== seats.length) throw new Rejection(`bdeal before every seat shuffled (${hand.shuffles.length} of ${seats.length})`)
    if (doc.body.params.dealer !== params.dealer) throw new Rejection('bdeal changes the committed dealer seat')
    if (hand.params?.taker !== undefined && doc.body.params.taker !== hand.params.taker) throw new Rejection('bdeal changes the taker')
    if (hand.dealt === undefined) {
      const problems = messagesOf(checkBeaconEntry(hand.commit.body, doc.body.beacon))
      if (problems.length > 0) return this.#abort(hand, 'invalid-reveal', [this.#init.table.dealer], problems[0], [doc])
      hand.beacon = doc.body.beacon
      this.#setDealt(hand)
    } else if (JSON.stringify(doc.body.beacon) !== JSON.stringify(hand.beacon)) throw new Rejection('bdeal carries another beacon entry')
    hand.params = doc.body.params
    hand.deals = [...(hand.deals ?? []), doc]
    const fresh = doc.body.stages.filter(s => !hand.stages.includes(s))
    hand.stages.push(...fresh)
    const effects: Effect[] = [this.#enter(hand, 'dealt')]
    for (const d of this.#layout(hand).filter(l => fresh.includes(l.stage))) {
      if (!d.public && d.seat === this.#seat) continue
      effects.push({ kind: 'send', to: this.#init.table.dealer, doc: makeBshares(href(hand), this.#seat, this.#init.signer, hand.x, hand.dealt as Ciphertext[], d.positions, d.stage, d.seat, this.#init.random) })
    }
    // Shares relayed before this BDEAL (the network does not order the dealer's and a seat's frames) are opened now.
    return [...effects, ...this.#openReady(hand)]
  }

  #onShares (doc: SignedBshares): Effect[] {
    const hand = this.#handFor(doc.body, 'shuffling', 'dealt')
    if (doc.body.to !== this.#seat && doc.body.to !== null && !this.#isPublic(hand, doc.body.stage, doc.body.to)) throw new Rejection('shares for another seat\'s cards')
    if (doc.body.seat === this.#seat) throw new Rejection('my own shares relayed back')
    // Shares of cards this seat has opened already, or the same shares again (the dealer sending what
    // this seat may lack after a connection came back, docs/dealer-blind.md §9): nothing to do.
    if (hand.cards.some(c => c.stage === doc.body.stage && c.seat === doc.body.to)) return []
    const had = hand.shares.find(s => s.body.seat === doc.body.seat && s.body.stage === doc.body.stage && s.body.to === doc.body.to)
    if (had !== undefined && docDigest(had) === docDigest(doc)) return []
    if (had !== undefined) throw new Rejection(`shares of seat ${doc.body.seat} for ${doc.body.stage} came twice`)
    if (!this.#verify(doc)) throw new Rejection(`shares of seat ${doc.body.seat}: bad signature`)
    hand.shares.push(doc)
    return [this.#enter(hand, hand.phase), ...this.#openReady(hand)]
  }

  /**
   * Whether a seat's delivery of `stage` is dealt face up (duo's face-up packets: public, yet each a
   * seat's), by the layout of the parameters known (the BDEAL's, else the COMMIT's).
   */
  #isPublic (hand: BlindSeatHand, stage: string, to: number): boolean {
    return blindLayout(hand.commit.body, hand.params ?? hand.commit.body.params).some(d => d.stage === stage && d.seat === to && d.public)
  }

  /** Opens each delivery of mine (or of the table) whose shares are all in, each share checked first. */
  #openReady (hand: BlindSeatHand): Effect[] {
    if (hand.dealt === undefined || hand.params === null) return []
    const { seats, game } = hand.commit.body
    const effects: Effect[] = []
    for (const d of this.#layout(hand)) {
      if (!hand.stages.includes(d.stage) || (!d.public && d.seat !== this.#seat)) continue
      if (hand.cards.some(c => c.stage === d.stage && c.seat === d.seat)) continue
      const docs = hand.shares.filter(s => s.body.stage === d.stage && s.body.to === d.seat)
      // A seat whose key was unlocked (§14) gives no shares: x·b stands for them.
      const standIn = [...hand.unlocked.keys()].filter(seat => seat !== this.#seat && !docs.some(s => s.body.seat === seat))
      if (docs.length + standIn.length < seats.length - 1) continue
      const bySeat = new Map<number, Map<number, Point>>()
      for (const s of docs) {
        const r = checkBshares(hand.commit.body, hand.digest, s, hand.pubs[s.body.seat], hand.dealt, d.positions)
        if ('problem' in r) {
          // What re-checks them: their author's key, the last shuffle and the BDEAL of their stage.
          const evidence = [hand.keys[s.body.seat], hand.shuffles[seats.length - 1], ...(hand.deals ?? []).filter(x => x.body.stages.includes(d.stage)).slice(0, 1), s]
          return this.#abort(hand, 'invalid-shares', [s.signer], `shares of seat ${s.body.seat}: ${r.problem}`, evidence)
        }
        bySeat.set(s.body.seat, r.shares)
      }
      const dealt = hand.dealt
      let cards: string[]
      try {
        cards = d.positions.map(pos => openPosition(game, dealt[pos], [
          ...[...bySeat.values()].map(m => m.get(pos) as Point), ...standIn.map(seat => mulSecret(dealt[pos].b, hand.unlocked.get(seat) as bigint)), mulSecret(dealt[pos].b, hand.x)
        ]))
      } catch (err) {
        // Every share verified, yet no card: the deck itself is wrong, which the shuffle proofs exclude.
        return this.#abort(hand, 'invalid-shares', [this.#init.table.dealer], (err as Error).message, docs)
      }
      hand.cards.push({ stage: d.stage, seat: d.seat, public: d.public, cards })
      hand.shares = hand.shares.filter(s => !docs.includes(s))
      // A played hand opens each of this seat's cards again as it is played: the shares of its own
      // deliveries (private, or public and its own: duo's face-up packet) and of the table's
      // (belote's turned-up card, tarot's dog, which its taker may play) are kept.
      if (hand.commit.body.params.play === true && (d.seat === this.#seat || d.seat === null)) hand.kept = [...(hand.kept ?? []), ...docs]
      effects.push(this.#enter(hand, hand.phase), { kind: 'event', hand: hand.hand, event: { type: 'cards', stage: d.stage, seat: d.seat, public: d.public, cards } })
    }
    return effects
  }

  /**
   * BUNLOCK (docs/dealer-blind.md §14): seats that walked away, their hand keys opened from their
   * timelock. Checked against their public keys (x·G = pk: then x·b is their share, whatever the
   * ciphertext held); this seat's own key in it is refused. Cards waiting on their shares open now.
   */
  #onUnlock (doc: SignedBunlock): Effect[] {
    const hand = this.#handFor(doc.body, 'dealt', 'ended')
    if (hand.unlock !== undefined && docDigest(hand.unlock) === docDigest(doc)) return []
    // This seat named (it was down or cut off when its shares were due, and is back): true only with its own key.
    const mine = doc.body.keys.find(k => k.seat === this.#seat)
    if (mine !== undefined && mine.secret !== hand.secret) throw new Rejection('bunlock: names my seat with a key that is not mine')
    const r = checkBunlock(hand.commit.body, hand.digest, doc, hand.keys, hand.pubs, this.#verify, false)
    if ('problems' in r) throw new Rejection(`bunlock: ${r.problems[0]}`)
    // A later BUNLOCK extends the earlier one.
    for (const [seat] of hand.unlocked) if (!r.secrets.has(seat)) throw new Rejection(`bunlock: leaves out seat ${seat}, unlocked before`)
    if (hand.unlock !== undefined && hand.unlock.body.keys.some(k => k.seat === this.#seat) && !r.secrets.has(this.#seat)) throw new Rejection(`bunlock: leaves out seat ${this.#seat}, unlocked before`)
    hand.unlock = doc
    hand.unlocked = r.secrets
    r.secrets.delete(this.#seat)
    const seats = [...doc.body.keys.map(k => k.seat)]
    return [
      this.#enter(hand, hand.phase),
      { kind: 'event', hand: hand.hand, event: { type: 'unlocked', seats, reason: doc.body.keys[doc.body.keys.length - 1].reason } },
      ...this.#openReady(hand)
    ]
  }

  #onEnd (doc: Signed<{ table: string, hand: number, commit: string }>): Effect[] {
    const held = this.#hands.get(doc.body.hand)
    // The same BEND again (the dealer's answer to an ASK): my hand key goes again if the dealer still waits for it.
    if (held?.bend !== undefined && docDigest(held.bend) === docDigest(doc)) {
      return held.phase === 'ended' ? [{ kind: 'send', to: this.#init.table.dealer, doc: makeBsecret(href(held), this.#seat, this.#init.signer, held.x) }] : []
    }
    const hand = this.#handFor(doc.body, 'dealt')
    if (!this.#verify(doc)) throw new Rejection('bend: bad signature')
    hand.bend = doc
    return [this.#enter(hand, 'ended'), { kind: 'send', to: this.#init.table.dealer, doc: makeBsecret(href(hand), this.#seat, this.#init.signer, hand.x) }]
  }

  /** The shield: the whole hand re-checked alone from what this seat holds, and its own cards found in it. */
  #onReveal (doc: SignedBreveal): Effect[] {
    const held = this.#hands.get(doc.body.hand)
    // The same BREVEAL again (the dealer's answer to an ASK): my countersignature goes again.
    if (held?.reveal !== undefined && held.ack !== undefined && docDigest(held.reveal) === docDigest(doc)) return [{ kind: 'send', to: this.#init.table.dealer, doc: held.ack }]
    const hand = this.#handFor(doc.body, 'ended')
    // A BREVEAL whose signature fails proves nothing, so it is refused, not recorded (a record carrying it would not verify).
    if (!this.#verify(doc)) throw new Rejection('breveal: bad signature')
    // A played hand: the receipt carries this seat's chain as the BREVEAL names it (docs/dealer-blind.md §15).
    let play: ReceiptPlay | undefined
    const named = doc.body.play
    if (hand.commit.body.params.play === true && named !== undefined && this.#init.blindReceiptPlay !== undefined) {
      try {
        play = this.#init.blindReceiptPlay(hand.hand, named)
      } catch (err) {
        // Not the chain this seat holds (it may lack the last actions, still on their way): refused, nothing recorded; the dealer is asked again.
        throw new Rejection(`breveal: ${(err as Error).message}`)
      }
    }
    const receipt: BlindReceipt = { v: 2, commit: hand.commit, keys: hand.keys, shuffles: hand.shuffles, reveal: doc, acks: [], ...(play === undefined ? {} : { play }) }
    const verdict = verifyBlindReceipt(receipt, { verifyDoc: this.#verify })
    const problems = [...verdict.problems]
    // Each of my deliveries I opened must be what the keys open. One I had not opened yet (its
    // shares were still on their way when the hand ended) contradicts nothing: the keys, checked
    // against every seat's public key, open it now, and I take it from them.
    const theirs = (verdict.summary?.deliveries ?? []).filter(d => !d.public && d.seat === this.#seat)
    const late: Delivery[] = []
    if (verdict.ok) {
      for (const d of theirs) {
        const opened = hand.cards.find(c => !c.public && c.seat === this.#seat && c.stage === d.stage)
        if (opened === undefined) late.push(d)
        else if (JSON.stringify(opened) !== JSON.stringify(d)) problems.push(`the reveal gives me other ${d.stage} cards than the ones I opened`)
      }
      const stray = hand.cards.filter(c => !c.public && c.seat === this.#seat && !theirs.some(d => d.stage === c.stage))
      if (stray.length > 0) problems.push(`the reveal leaves out my ${stray.map(c => c.stage).join(', ')} cards`)
    }
    effects: {
      if (problems.length > 0) break effects
      hand.cards.push(...late.map(d => ({ ...d })))
      const ack: AckBody = {
        table: hand.commit.body.table, hand: hand.hand, commit: hand.digest, reveal: docDigest(doc), seat: this.#seat,
        // In the layout's order, as the verifier counts it (docs/protocol.md §4): a delivery opened
        // late (or from the keys) comes in its place, not last.
        cards: seatCardsDigest(verdict.summary?.deliveries ?? hand.cards, this.#seat, doc.body.stages)
      }
      hand.reveal = doc
      if (play !== undefined) hand.play = play
      hand.ack = signDocument('ack', ack, this.#init.signer)
      return [
        this.#enter(hand, 'acked'),
        ...late.map((d): Effect => ({ kind: 'event', hand: hand.hand, event: { type: 'cards', stage: d.stage, seat: d.seat, public: d.public, cards: d.cards } })),
        { kind: 'event', hand: hand.hand, event: { type: 'revealed' } },
        { kind: 'event', hand: hand.hand, event: { type: 'shield', ok: true, problems: [] } },
        { kind: 'send', to: this.#init.table.dealer, doc: hand.ack }
      ]
    }
    return [
      { kind: 'event', hand: hand.hand, event: { type: 'shield', ok: false, problems } },
      ...this.#abort(hand, 'invalid-reveal', [this.#init.table.dealer], problems.slice(0, 3).join('; ').slice(0, 500), [...hand.keys, ...(hand.deals ?? []), doc])
    ]
  }

  #onFinal (doc: Signed<BfinalBody>): Effect[] {
    const hand = this.#handFor(doc.body, 'acked')
    if (!this.#verify(doc)) throw new Rejection('bfinal: bad signature')
    if (doc.body.reveal !== docDigest(hand.reveal)) throw new Rejection('bfinal: countersignatures of another reveal')
    const cardsBySeat = undefined
    const problems = checkAcks(hand.commit.body, hand.digest, doc.body.acks, doc.body.reveal, cardsBySeat, this.#verify)
    if (problems.length > 0) throw new Rejection(`bfinal: ${problems[0].message}`)
    // Left out, my countersignature is refused: unless I countersigned only after asking, once the
    // hand had ended without me (I was paused, down or cut off): then this is the hand's receipt,
    // the one every other log holds, and I log it as it is.
    // So is a seat whose key was unlocked (§14 of docs/dealer-blind.md): the hand was not waiting for it.
    const unlocked = hand.unlock?.body.keys.some(k => k.seat === this.#seat) === true
    if (!doc.body.acks.some(a => docDigest(a) === docDigest(hand.ack)) && hand.late !== true && !unlocked) throw new Rejection('bfinal: the receipt leaves out my countersignature')
    return this.#done(hand, doc.body.acks)
  }

  #done (hand: BlindSeatHand, acks: SignedAck[]): Effect[] {
    const receipt: BlindReceipt = { v: 2, commit: hand.commit, keys: hand.keys, shuffles: hand.shuffles, reveal: hand.reveal as SignedBreveal, acks, ...(hand.play === undefined ? {} : { play: hand.play }) }
    const gone = this.#enter(hand, 'done')
    return [
      { kind: 'append', entry: 'receipt', hand: hand.hand, payload: receipt },
      { kind: 'event', hand: hand.hand, event: { type: 'receipt', acked: acks.map(a => a.body.seat) } },
      gone
    ]
  }

  #onAbort (doc: Signed<AbortBody>): Effect[] {
    const hand = this.#hands.get(doc.body.hand)
    if (hand === undefined || doc.body.table !== this.#init.table.id) throw new Rejection(`abort for hand ${doc.body.hand}, which is not in play here`)
    const { table } = this.#init
    const verdict = verifyAbort(doc, { verifyDoc: this.#verify, table: { id: table.id, dealer: table.dealer, seats: table.seats } })
    if (!verdict.ok) throw new Rejection(`abort does not verify: ${verdict.problems[0].message}`)
    const gone = this.#enter(hand, 'aborted')
    return [
      ...logAbort(hand.hand, doc),
      gone
    ]
  }

  #abort (hand: BlindSeatHand, reason: AbortReason, blame: string[], detail: string, evidence: Array<Signed<unknown>>): Effect[] {
    const doc = signAbort(hand.commit, reason, blame, detail, evidence, this.#init.signer)
    const gone = this.#enter(hand, 'aborted')
    return [
      ...logAbort(hand.hand, doc),
      { kind: 'send', to: this.#init.table.dealer, doc },
      gone
    ]
  }

  /**
   * The one place a blind seat's hand changes phase (the hand book checks the move and sets the new
   * phase's deadline); the same phase again is a save in place (its deadline runs on). Returns the save.
   */
  #enter (hand: BlindSeatHand, phase: Phase): Effect {
    if (phase === hand.phase) return this.#hands.save(hand)
    hand.asked = false
    return this.#hands.enter(hand, phase)
  }

  #ask (hand: BlindSeatHand): Effect {
    return this.#askAbout(hand.hand, hand.digest)
  }

  #askAbout (hand: number, commit: string | null): Effect {
    const body: AskBody = { table: this.#init.table.id, hand, commit, seat: this.#seat }
    return { kind: 'send', to: this.#init.table.dealer, doc: signDocument('ask', body, this.#init.signer) }
  }

  /**
   * A COMMIT for a later hand than the next one this seat knows of: it missed the hands between (it
   * was paused, or its store lost them) and asks the dealer about the first of them, then each next
   * one, logging each hand's receipt or record as the answers come (no gap in its log). From hand 1
   * on, even for a seat that knows no hand yet: a whole log is checked for gaps from hand 1.
   */
  #noteGap (handNo: number): Effect[] {
    const next = this.#meta.lastHand + 1
    if (handNo <= next) return []
    this.#gap = { next, end: handNo - 1, prev: this.#meta.lastCommit }
    return [this.#askAbout(next, null)]
  }

  /** One BRECEIPT part of a missed hand's receipt (docs/protocol.md §11); the whole receipt, once joined, is caught up. */
  #onReceiptPart (doc: Signed<BreceiptBody>): Effect[] {
    if (doc.body.table !== this.#init.table.id) throw new Rejection(`breceipt for another table (${doc.body.table})`)
    if (this.#hands.get(doc.body.hand) !== undefined) throw new Rejection(`breceipt for hand ${doc.body.hand}, which this seat holds`)
    const expected = this.#gap?.next ?? this.#meta.lastHand + 1
    if (doc.body.hand !== expected) throw new Rejection(`breceipt for hand ${doc.body.hand}, not the next missed hand (${expected})`)
    if (!this.#verify(doc)) throw new Rejection('breceipt: bad signature')
    let receipt: BlindReceipt | undefined
    try { receipt = this.#joiner.add(doc.body) } catch (err) { throw new Rejection(`breceipt: ${(err as Error).message}`) }
    if (receipt === undefined) return []
    if (docDigest(receipt.commit) !== doc.body.commit) throw new Rejection('breceipt: the receipt\'s COMMIT is not the one its parts name')
    return this.#catchUp(receipt, receipt.commit)
  }

  /**
   * A missed hand's whole receipt or abort record (the dealer's answer to an ASK about a hand this
   * seat never saw): taken only for the next hand it can learn of, whose COMMIT is this table's
   * dealer's and links to the last COMMIT it knows; checked as any verifier checks it; logged; then
   * it asks about the hand after.
   */
  #catchUp (doc: Signed<unknown> | BlindReceipt, commit: SignedCommit): Effect[] {
    const { table } = this.#init
    const body = commit.body
    const gap = this.#gap
    const next = gap?.next ?? this.#meta.lastHand + 1
    const what = 'v' in doc ? 'receipt' : doc.type
    // An answer about a hand this seat already ended (it asked, and the record came meanwhile too): nothing new.
    if (gap === undefined && body.hand < next) return []
    if (body.hand !== next) throw new Rejection(`${what} for hand ${body.hand}, which is not in play here (the next hand this seat can learn of is ${next})`)
    if (body.table !== table.id || body.dealer !== table.dealer || commit.signer !== table.dealer || !this.#verify(commit)) {
      throw new Rejection(`${what} for hand ${body.hand}: its COMMIT is not this table's dealer's`)
    }
    const prev = gap === undefined ? this.#meta.lastCommit : gap.prev
    if (prev !== undefined && body.prev !== prev) throw new Rejection(`${what} for hand ${body.hand}: its COMMIT does not link to the commit of hand ${body.hand - 1}`)
    let logged: Effect[]
    if ('v' in doc) {
      const verdict = verifyBlindReceipt(doc, { verifyDoc: this.#verify })
      if (!verdict.ok) throw new Rejection(`receipt of hand ${body.hand} does not verify: ${verdict.problems[0]}`)
      logged = [
        { kind: 'append', entry: 'receipt', hand: body.hand, payload: doc },
        { kind: 'event', hand: body.hand, event: { type: 'receipt', acked: doc.acks.map(a => a.body.seat) } }
      ]
    } else {
      const record = doc as Signed<AbortBody>
      const verdict = verifyAbort(record, { verifyDoc: this.#verify, table: { id: table.id, dealer: table.dealer, seats: table.seats } })
      if (!verdict.ok) throw new Rejection(`abort of hand ${body.hand} does not verify: ${verdict.problems[0].message}`)
      logged = logAbort(body.hand, record)
    }
    const digest = docDigest(commit)
    if (gap !== undefined) {
      gap.next = body.hand + 1
      gap.prev = digest
      if (gap.next > gap.end) this.#gap = undefined
      // The gap's progress is saved with the entry (a restart asks about the next missing hand, not this one again).
      return [...logged, seatMetaWrite(table.id, this.#meta, this.#gap), ...(this.#gap === undefined ? [] : [this.#askAbout(gap.next, null)])]
    }
    this.#meta = { lastHand: body.hand, lastCommit: digest }
    return [...logged, seatMetaWrite(table.id, this.#meta, this.#gap), this.#askAbout(body.hand + 1, null)]
  }

  #handFor (body: { table: string, hand: number, commit: string }, ...phases: Phase[]): BlindSeatHand {
    if (body.table !== this.#init.table.id) throw new Rejection(`message for another table (${body.table})`)
    const hand = this.#hands.get(body.hand)
    if (hand === undefined) throw new Rejection(`message for hand ${body.hand}, which is not in play here (replayed or late)`)
    if (body.commit !== hand.digest) throw new Rejection(`message for hand ${body.hand} answers another commit`)
    if (!phases.includes(hand.phase)) throw new Rejection(`message for hand ${body.hand} arrived in phase ${hand.phase}`)
    return hand
  }
}

/** What is saved of a blind seat's hand (the stored format: unchanged). */
function blindSeatSnapshot (hand: BlindSeatHand): BlindSeatSnapshot {
  return {
    hand: hand.hand, commit: hand.commit, phase: hand.phase, secret: hand.secret, keys: hand.keys, shuffles: [...hand.shuffles], beacon: hand.beacon,
    params: hand.params, stages: [...hand.stages], shares: [...hand.shares], cards: hand.cards.map(c => ({ ...c })), reveal: hand.reveal, ack: hand.ack,
    ownKey: hand.ownKey, deals: [...(hand.deals ?? [])], bend: hand.bend, ...(hand.unlock === undefined ? {} : { unlock: hand.unlock }),
    ...(hand.kept === undefined ? {} : { kept: [...hand.kept] }), ...(hand.play === undefined ? {} : { play: hand.play })
  }
}
