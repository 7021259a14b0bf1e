import type { Signed } from '../core/signed.js'
import type { HandFamily } from '../core/hand/family.js'
import type { BeaconEntry, DealParams } from '../core/hand/messages.js'
import type { Effect } from './types.js'

/**
 * What every hand machine of a role offers its host, whatever the hand family: the daemon's table
 * host, the in-memory harness and `hand status` use these contracts only (never a machine class).
 * Each family's dealer and seat machines implement them (src/protocol/machines.ts names which).
 */

/**
 * One hand as the dealer side reports it, in the same words for every family:
 * - `joined`: seats whose first answer to the COMMIT is in (commit–reveal: PLEDGEs; blind: hand keys, BKEY);
 * - `contributed`: seats whose randomness is in (commit–reveal: NONCEs; blind: shuffles, BSHUFFLE);
 * - `acks`: countersignatures of the reveal received.
 */
export interface DealerHandStatus {
  hand: number
  family: HandFamily
  phase: string
  stages: string[]
  joined: number
  contributed: number
  acks: number
}

/** One hand as the seat side reports it (the table's scheme names its family). */
export interface SeatHandStatus {
  hand: number
  phase: string
  /** When the seat stops waiting for the dealer's next step in this phase (ms since the epoch), if it waits for one. */
  waitUntil?: number
  /** The hand is time-locked: a dealer that does not go on is replaced by the timelocks (docs/protocol.md §16.4). */
  timelocked?: boolean
  /** A blind hand in phase keyed or shuffling: how many seats' shuffles this seat holds (checked), of the table's seats (the shuffle's k of n). */
  shuffled?: number
}

/** What a seat holds of a hand: each delivery it opened or was shown, in order. */
export interface SeatCards { stage: string, seat: number | null, public: boolean, cards: string[] }

/** The beacon's answer to a `fetchBeacon` effect: the bound round's entry (verified by the host), or why it did not come. */
export type BeaconResult = { entry: BeaconEntry } | { error: string }

/** What both roles share: documents in, deadlines, the bound round, and what is saved. */
interface HandMachine {
  readonly family: HandFamily
  /** A schema-checked document from `from`; a Rejection leaves the machine unchanged. */
  receive (from: string, doc: Signed<unknown>): Effect[]
  /** Deadlines passed by `now`. */
  tick (now: number): Effect[]
  /** The earliest time `tick` has something to do, if any. */
  nextDeadline (): number | undefined
  beaconResult (hand: number, result: BeaconResult): Effect[]
}

export interface DealerSide extends HandMachine {
  /** Hands in play. */
  readonly inFlight: number
  startHand (params: DealParams): { hand: number, effects: Effect[] }
  deliverStage (hand: number, stage: string, taker?: number): Effect[]
  /** The host's End: refused (Rejection, with the reason for the user) when the hand cannot end honestly yet. */
  end (hand: number): Effect[]
  /** The node is stopping: closes a hand as far as it can without waiting (see each machine). */
  abortHand (hand: number, detail: string): Effect[]
  /**
   * The host's word that peer `peer`'s connection came back after it was lost: what its seat may
   * lack of each hand in play goes again (docs/protocol.md §7 "A connection that came back").
   */
  resync (peer: string): Effect[]
  /** Completes every revealed hand now, with the countersignatures it has. */
  finalizeRevealed (): Effect[]
  status (): DealerHandStatus[]
  /** The robot seats' private cards this node opened (it plays them). */
  robotCards (hand: number): Array<{ stage: string, seat: number, cards: string[] }>
  /**
   * After a restart: the table's hand counter (`meta`), the hands saved under this family's keys,
   * and the last outcomes of the node's log. Returns what must run at once (resends, fetches, records).
   */
  restore (meta: unknown, snapshots: unknown[], logged: Array<{ kind: string, payload: unknown }>): Effect[]
  /** The host's word on a document it was asked to send: delivered or not (a family may ignore it). */
  delivery (to: string, doc: Signed<unknown>, outcome: { ok: true } | { ok: false, reason: string }): void
  /**
   * The host's answer to a `recall` effect: the receipt of `hand` as the node's log holds it, or
   * undefined when the log holds none (a family that never recalls returns nothing).
   */
  recalled (hand: number, to: string, receipt: unknown): Effect[]
}

/** A played hand as this seat sees it (docs/games.md "Playing a dealt hand"): for `hand show` and the page. */
export interface PlayView {
  hand: number
  game: string
  seat: number
  /** The seat to act, or null (a stage awaited, or the hand over). */
  toAct: number | null
  /** This seat's legal actions now (empty when it is not its turn). */
  legal: unknown[]
  actions: Array<{ n: number, seat: number, action: unknown }>
  tricks: number
  over: boolean
  /** When this seat's robot plays for it (time to play), if it is its turn and the node plays by hand. */
  robotAt?: number
}

export interface SeatSide extends HandMachine {
  readonly seat: number
  /** This seat's action in a played hand, checked first: a Rejection, and nothing signed, if it is not legal now. */
  act?: (hand: number, action: unknown) => Effect[]
  /** A played hand as this seat sees it, or undefined when the hand is not played here. */
  playView?: (hand: number) => PlayView | undefined
  cards (hand: number): SeatCards[]
  status (): SeatHandStatus[]
  /** After a restart: the seat's meta and the hands saved under this family's keys; returns its ASKs and the like. */
  restore (meta: unknown, snapshots: unknown[]): Effect[]
}
