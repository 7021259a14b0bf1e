import type { Signed } from '../core/signed.js'
import type { Signer } from '../core/identity.js'
import type { ChainInfo } from '../core/beacon/index.js'
import type { RecoveredFault, RecoveredRule } from '../core/hand/recovered.js'
import { InputError } from '../core/errors.js'
import type { ReceiptPlay } from '../core/hand/messages.js'
import type { BlindPlayHand, BlindRevealPlay } from '../core/hand/blind-play.js'
import type { Delivery } from '../core/schemes/types.js'
import type { GameScore } from '../core/games/types.js'

/** The table as the config defines it: every node of the table must agree on all of it. */
export interface TableSpec {
  id: string
  game: string
  scheme: string
  /** One entry per seat, seat 0 first: a peer id, or 'robot' (played by the dealer node). */
  seats: string[]
  /** The dealer node's peer id. */
  dealer: string
}

export interface Timeouts {
  /** From COMMIT to the last NONCE: seats that have not contributed by then are named in an abort. */
  contributeMs: number
  /** From REVEAL to the last countersignature; the receipt is finalised with the ones that came. */
  ackMs: number
  /** A seat waits this long after its cards for the REVEAL before it records the dealer's refusal. */
  revealMs: number
  /**
   * Time to play (docs/games.md "Time to play"): the node's own seat is played by hand (`hand
   * play`, `hand bid`), and its robot plays a turn left this long. Absent: the robot plays at once.
   */
  playMs?: number
}

/** A table's timeouts when its config gives none (the node config's defaults; the seat page uses them too). */
export const DEFAULT_TIMEOUTS: Timeouts = { contributeMs: 10_000, ackMs: 10_000, revealMs: 3_600_000 }

export interface BeaconBindingConfig {
  chain: ChainInfo
  /** The bound round is the first one published at least this long after the contribution deadline. */
  marginMs: number
}

/** What the dealer's and the seat's machines are given: the table, the node's key, time and randomness. */
export interface MachineInit {
  table: TableSpec
  signer: Signer
  timeouts: Timeouts
  /** The beacon the table binds (a seat refuses a COMMIT naming another chain, or none). */
  beacon: BeaconBindingConfig | null
  now: () => number
  /** Source of secrets and nonces: 32 bytes per hand. */
  random: (bytes: number) => Uint8Array
  /** Signature check for incoming documents (the host may pass a faster native one). */
  verifyDoc?: (doc: Signed<unknown>) => boolean
  /**
   * A time-locked table (docs/protocol.md §6a): the secret and every nonce travel encrypted to the
   * bound round, and a hand whose reveal is withheld is finished from them once the round is out.
   * `rule` is what the table does with a hand the seats had to finish. Needs a beacon whose scheme
   * timelock supports.
   */
  timelock?: TimelockConfig | null
  /** A played hand's action chain and score, asked for when its receipt is built (src/protocol/play.ts). */
  receiptPlay?: (hand: number) => ReceiptPlay | undefined
  /** A played hand's chain as its REVEAL names it (count and last digest), asked for when it is revealed. */
  playHead?: (hand: number) => { actions: number, head: string } | undefined
  /**
   * A played blind-v1 hand's outcome, asked for by the blind dealer when it builds the BREVEAL, once
   * every hand key is in and the deal opens (src/core/hand/blind-play.ts blindPlayOutcome).
   */
  blindPlay?: (hand: number, deliveries: Delivery[], opening: BlindPlayHand) => ReceiptPlay
  /**
   * The receipt's play a blind seat builds from its chain and what the BREVEAL names
   * (receiptPlayFrom); an Error when its chain is not the one named.
   */
  blindReceiptPlay?: (hand: number, named: BlindRevealPlay) => ReceiptPlay
}

export interface TimelockConfig {
  rule: RecoveredRule
  /**
   * A blind table's planned length of a hand from its deal to its end: hand keys are sealed to the
   * first round due this long after the bound round (docs/dealer-blind.md §14). Default 30 minutes.
   */
  handMs?: number
}

/**
 * What a state machine asks its host to do, in order. A `persist` must be durable before any
 * later effect runs: the dealer's secret is on disk before its commitment leaves the node.
 */
export type Effect =
  | { kind: 'persist', key: string, value: unknown }
  /**
   * `fallback`: if `to` cannot be reached, the host calls it and sends what it returns (a RELAY) to
   * the dealer instead. A function, so that a RELAY is signed only when it is sent.
   */
  | { kind: 'send', to: string, doc: Signed<unknown>, fallback?: () => Signed<unknown> }
  | { kind: 'fetchBeacon', hand: number, round: number }
  /**
   * The dealer asks its host for the receipt of an ended hand from the node's log (a blind receipt
   * is too large to keep many in memory) and hands it back to `recalled`, which answers `to`.
   */
  | { kind: 'recall', hand: number, to: string }
  | { kind: 'append', entry: 'receipt' | 'abort' | 'recovered' | 'late-ack', hand: number, payload: unknown }
  | { kind: 'event', hand: number, event: HandEvent }

export type PersistEffect = Extract<Effect, { kind: 'persist' }>

/**
 * The persists in a row from `effects[i]` on: a host writes them as one batch (one sync, atomic),
 * durable before the effect after them.
 */
export function persistRun (effects: readonly Effect[], i: number): PersistEffect[] {
  let end = i
  while (end < effects.length && effects[end].kind === 'persist') end++
  return effects.slice(i, end) as PersistEffect[]
}

export type HandEvent =
  | { type: 'committed', commitment: string, beaconRound: number | null }
  /** The seat's VIEW went to the other seats (it waits for theirs before its NONCE). */
  | { type: 'viewing' }
  | { type: 'contributed' }
  | { type: 'cards', stage: string, seat: number | null, public: boolean, cards: string[] }
  | { type: 'revealed' }
  /** A played hand: action `n` of the chain, taken by this node (its own, or one it checked). */
  | { type: 'action', n: number, seat: number, action: unknown, robot?: boolean }
  /** A played hand is over (the dealer reveals it next): its actions, tricks and score. */
  | { type: 'played', actions: number, tricks: number, score: GameScore }
  /**
   * A played hand's step refused by the game: at a seat, one it could not take (the hand's play
   * stops there); at the dealer, `seat`'s action, which ends the hand (its receipt names the seat).
   */
  | { type: 'play-refused', reason: string, seat?: number }
  | { type: 'shield', ok: boolean, problems: string[] }
  | { type: 'receipt', acked: number[] }
  | { type: 'aborted', reason: string, blame: string[], detail: string }
  /** The dealer dealt without these seats' NONCEs, opening their pledges' timelock. */
  | { type: 'nonces-recovered', seats: number[] }
  /** A blind time-locked hand goes on without these seats: their hand keys were opened from their timelock (docs/dealer-blind.md §14). */
  | { type: 'unlocked', seats: number[], reason: 'missing-shares' | 'missing-secret' }
  /** The hand was finished from its timelocks without the dealer (a RECOVERED record was logged). */
  | { type: 'recovered', rule: RecoveredRule, faults: RecoveredFault[], blame: string[] }

/** A message the state machine refuses: logged with its reason, state unchanged. */
export class Rejection extends InputError {
  override name = 'Rejection'
}

/**
 * A machine failed on a step (an error that is not a Rejection: a fault of its own). It has ended the
 * hand, with itself named: the host runs `effects` (the record, its sends), then reports `cause`.
 */
export class MachineFailure extends Error {
  override name = 'MachineFailure'
  constructor (override readonly cause: unknown, readonly effects: Effect[]) {
    super(`machine failure: ${(cause as Error)?.message ?? String(cause)}`)
  }
}
