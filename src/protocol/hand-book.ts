import type { Signed } from '../core/signed.js'
import { Rejection, type Effect } from './types.js'

/** How many ended hands a machine remembers (their outcome, for a seat that asks). */
export const ENDED_HANDS_KEPT = 256

/**
 * A family's legal moves for one role, as data: for each phase, the phases a hand may enter from
 * it. A phase listed in its own row may be entered again (its deadline starts over: a new stage
 * dealt); a hand is saved in place, without a move, with `save`.
 */
export type Transitions<P extends string> = Readonly<Record<P, readonly P[]>>

/** Refuses (an Error: a machine asking for an illegal move is at fault, not a peer) a move `transitions` does not list. */
export function checkMove<P extends string> (transitions: Transitions<P>, hand: number, from: P, to: P): void {
  if (!transitions[from].includes(to)) throw new Error(`hand ${hand}: no move from ${from} to ${to}`)
}

/** Per phase, when a hand entering it stops waiting (`now` is the time of the move); absent: it waits for no deadline of its own. */
export type Deadlines<P extends string, H> = Readonly<Partial<Record<P, (hand: H, now: number) => number>>>

/** The human seat `peer` holds among `seats` (its index, if listed in `humans`), or -1: what HandBook.resync asks of a hand. */
export function humanSeatOf (seats: readonly string[], humans: readonly number[], peer: string): number {
  const seat = seats.indexOf(peer)
  return humans.includes(seat) ? seat : -1
}

/** What every machine's hand carries for the book. */
export interface BookHand<P extends string> {
  hand: number
  phase: P
  /** When the hand's current phase stops waiting (Deadlines), or undefined. */
  due?: number
}

export interface HandBookInit<P extends string, H extends BookHand<P>, S> {
  transitions: Transitions<P>
  deadlines: Deadlines<P, H>
  /** Phases a hand leaves the book in (its saved state is deleted in the same list that logs its end). */
  final: readonly P[]
  /** The store key of a hand's saved state (unchanged since each machine landed). */
  key: (hand: number) => string
  /** A copy of what is saved of a hand (the machine's own snapshot format). */
  snapshot: (hand: H) => S
  now: () => number
}

/** What a machine remembers of an ended hand: its COMMIT's digest and the documents that tell how it ended. */
export interface EndedHand { digest: string, docs: Array<Signed<unknown>> }

/**
 * The hands of one machine: lookup, the one place a hand changes phase (`enter`: the move checked
 * against the family's transition table, the new phase's deadline set from the deadline table, the
 * save returned for the host to run before anything after it), the deadlines due, and the end.
 */
export class HandBook<P extends string, H extends BookHand<P>, S, Q extends string = string> {
  readonly #init: HandBookInit<P, H, S>
  readonly #hands = new Map<number, H>()
  /** The last ENDED_HANDS_KEPT hands that ended, oldest first. */
  readonly #ended = new Map<number, EndedHand>()
  /** Per-hand counts of what a peer may ask a bounded number of times; they go with the hand's memo. */
  readonly #quotas = new Map<number, Map<Q, number>>()

  constructor (init: HandBookInit<P, H, S>) {
    this.#init = init
  }

  get size (): number { return this.#hands.size }
  get (hand: number): H | undefined { return this.#hands.get(hand) }
  values (): H[] { return [...this.#hands.values()] }

  /** A hand enters the book in its first phase (a new hand), or in the phase it was saved in (a restart): its deadline starts now. */
  open (hand: H): void {
    hand.due = this.#init.deadlines[hand.phase]?.(hand, this.#init.now())
    this.#hands.set(hand.hand, hand)
  }

  /** A hand in one of `phases`, for a host's command (deal a stage, end the hand). */
  inPhase (handNo: number, phases: readonly P[]): H {
    const hand = this.#hands.get(handNo)
    if (hand === undefined) throw new Rejection(`hand ${handNo} is not in play`)
    if (!phases.includes(hand.phase)) throw new Rejection(`hand ${handNo} is ${hand.phase}, not ${phases.join(' or ')}`)
    return hand
  }

  /**
   * Moves `hand` to `phase`: refused (an Error: a machine asking for an illegal move is at fault,
   * not a peer) unless the family's table lists it; sets its deadline; returns its save (a final
   * phase deletes the saved state and drops the hand).
   */
  enter (hand: H, phase: P): Effect {
    checkMove(this.#init.transitions, hand.hand, hand.phase, phase)
    hand.phase = phase
    if (this.#init.final.includes(phase)) {
      hand.due = undefined
      this.#hands.delete(hand.hand)
      return { kind: 'persist', key: this.#init.key(hand.hand), value: null }
    }
    hand.due = this.#init.deadlines[phase]?.(hand, this.#init.now())
    return this.save(hand)
  }

  /**
   * Sets the deadline of the hand's phase again from the deadline table, without a move or a save:
   * a wait that starts over (a request made again), or one that moved on within the phase (the
   * next seat's turn to shuffle, src/protocol/blind-dealer.ts).
   */
  wait (hand: H): void {
    hand.due = this.#init.deadlines[hand.phase]?.(hand, this.#init.now())
  }

  /** The save of a hand that stays where it is (something it holds changed). */
  save (hand: H): Effect {
    return { kind: 'persist', key: this.#init.key(hand.hand), value: this.#init.snapshot(hand) }
  }

  /** Remembers how hand `hand` ended (the oldest memo beyond ENDED_HANDS_KEPT goes, with its quotas). */
  remember (hand: number, ended: EndedHand): void {
    this.#ended.set(hand, ended)
    for (const old of this.#ended.keys()) {
      if (this.#ended.size <= ENDED_HANDS_KEPT) break
      this.#ended.delete(old)
      this.#quotas.delete(old)
    }
  }

  ended (hand: number): EndedHand | undefined { return this.#ended.get(hand) }

  /** Counts one more `key` for hand `hand`; refused (Rejection `refusal`) once `limit` were counted. */
  count (hand: number, key: Q, limit: number, refusal: string): void {
    if (!this.take(hand, key, limit)) throw new Rejection(refusal)
  }

  /** Counts one more `key` for hand `hand` and says so, or says no (counting nothing) once `limit` were counted. */
  take (hand: number, key: Q, limit: number): boolean {
    const counts = this.#quotas.get(hand) ?? new Map<Q, number>()
    const n = counts.get(key) ?? 0
    if (n >= limit) return false
    counts.set(key, n + 1)
    this.#quotas.set(hand, counts)
    return true
  }

  /**
   * A host's resync (DealerSide.resync): `lacking` of every hand in play where `seatOf` finds the
   * peer's human seat (not -1), at most `limit` times per seat and hand (counted as `key(seat)`;
   * past it the hand is left out).
   */
  resync (seatOf: (hand: H) => number, key: (seat: number) => Q, limit: number, lacking: (hand: H, seat: number) => Effect[]): Effect[] {
    const effects: Effect[] = []
    for (const hand of this.#hands.values()) {
      const seat = seatOf(hand)
      if (seat !== -1 && this.take(hand.hand, key(seat), limit)) effects.push(...lacking(hand, seat))
    }
    return effects
  }

  /** Hands whose deadline has passed by `now`, in hand order. */
  due (now: number): H[] {
    return [...this.#hands.values()].filter(h => h.due !== undefined && now > h.due)
  }

  /** The earliest deadline of any hand. */
  nextDeadline (): number | undefined {
    let next: number | undefined
    for (const h of this.#hands.values()) if (h.due !== undefined && (next === undefined || h.due < next)) next = h.due
    return next
  }
}
