/**
 * The shape every game engine has (docs/games.md). An engine is pure and browser-safe: a hand's
 * state is a plain JSON value, and `apply` is a function `state × (seat, action) → state | refusal`
 * that never throws for a bad action (only for a state it did not make). The same engine runs in
 * the dealer's and every seat's node, in the verifier (replaying a receipt's action chain) and in
 * the page, so the state must hold only what the engine needs and every refusal has a stable code.
 *
 * Card codes are the schemes' (docs/schemes.md): rank then suit for the 32-card games (`TC`, `AS`),
 * `T01`…`T21` and `EXC` for tarot's trumps and excuse, rank-then-suit codes as tarot.ts writes
 * them for its suit cards (rank A 2…9 T J C Q K, then suit: `CS` the cavalier of spades).
 */

/** A refusal: the action is not legal in this state. `code` is a stable reason code listed in docs/games.md. */
export interface GameRefusal {
  ok: false
  code: string
  message: string
}

export interface GameAccepted<S> {
  ok: true
  state: S
}

export type GameStep<S> = GameAccepted<S> | GameRefusal

/** What a hand starts from: the deal as the scheme delivered it (src/core/schemes/types.ts Deal). */
export interface GameSetup {
  game: string
  seats: number
  /** The seat that dealt this hand (in the game's sense, not the dealer node). */
  dealer: number
  /**
   * Each seat's private cards of the first stage, in the order received. Cards dealt later (belote's
   * `take`, tarot's dog, duo's face-up packets) reach the state through `deliver`.
   */
  hands: string[][]
  /** Public cards of the first stage(s): belote's turned-up card, duo's face-up packets. */
  table?: Record<string, string[]>
  /** Game options a table may set (target score, poignée rules, …); each engine documents its own. */
  options?: Record<string, unknown>
}

/** A hand's outcome: points per seat or per side, as the game scores them. */
export interface GameScore {
  /** Points per seat, seat 0 first (a team's points repeated for each of its seats). */
  points: number[]
  /** One line a player reads: who bid what, made or went down, by how much. */
  summary: string
  /** The engine's own detail (contract, tricks' points, bonuses), plain JSON. */
  detail: Record<string, unknown>
}

/** A stage the game asks the dealer to deliver because of an action (belote's take, tarot's dog). */
export interface StageRequest {
  stage: string
  /** Inputs the scheme's deal needs for it (belote: `taker`). */
  inputs?: Record<string, number>
}

export interface GameEngine<S, A> {
  /** The game's name, as tables and schemes write it: 'coinche', 'belote', 'duo', 'tarot', 'blackjack', 'dice'. */
  readonly id: string
  /** The first state of a hand. Throws only for a setup no scheme could produce. */
  start: (setup: GameSetup) => S
  /** Checks and applies one action of `seat`. */
  apply: (state: S, seat: number, action: A) => GameStep<S>
  /** Cards of a later stage, delivered because an action asked for them (`pendingStage`). */
  deliver: (state: S, stage: string, cards: Record<string, string[]>) => GameStep<S>
  /** Whose turn it is, or null when the hand is over or waits for a stage. */
  toAct: (state: S) => number | null
  /** A stage the hand waits for, if any. */
  pendingStage: (state: S) => StageRequest | null
  /** Every legal action of `seat` now (empty when it is not its turn), for robots and for greying out. */
  legal: (state: S, seat: number) => A[]
  /** True once the hand is over (played out, or thrown in when nobody bids). */
  isOver: (state: S) => boolean
  /** The score of a finished hand. Throws if the hand is not over. */
  score: (state: S) => GameScore
  /**
   * A robot's choice: a legal action chosen by the usual heuristics, with `random(n)` (an integer in
   * 0…n−1 drawn from the hand's key by the caller) where it must choose among equals, so a game with
   * robots replays exactly.
   */
  robot: (state: S, seat: number, random: (n: number) => number) => A
}
