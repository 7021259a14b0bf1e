import type { HandFamily } from '../hand/family.js'
/**
 * The shape every scheme in the registry has. A receipt names a scheme id; the verifier looks it up
 * with `getScheme(id)` and recomputes commitment → key → deck → deal with the functions below.
 */

/** A drand round bound into the key (only schemes with `beacon: true` take one). */
export interface BeaconInput {
  /** The chain hash: 64 lowercase hex characters. */
  chainHash: string
  /** The round number: a positive safe integer. */
  round: number
  /** The round's randomness, SHA-256 of its signature: 64 lowercase hex characters. */
  randomness: string
}

/** What the key is made of: the dealer's secret, one nonce per seat in seat order, the beacon. */
export interface KeyInputs {
  secret: string
  /** One per seat, seat 0 first; the empty string for a robot seat. */
  nonces: readonly string[]
  /** Required by schemes with `beacon: true`, refused by the others. */
  beacon?: BeaconInput
}

export interface DealOptions {
  /** Number of seats; may be left out when the game allows only one count. */
  seats?: number
  /** The dealer's seat (default 0). */
  dealer?: number
  /** Belote: the seat that took the turned-up card. Without it the deal stops before the 'take' stage. */
  taker?: number
  /** BitJack21: size of the shoe, 1..416 (default 416). */
  cards?: number
}

/**
 * Cards handed out at one stage of a deal. The protocol sends a private delivery to its seat only,
 * and a public one to everyone, stage by stage in the order they are listed.
 */
export interface Delivery {
  /**
   * 'deal' (initial private cards), 'turnUp' (belote: the turned-up card), 'take' (belote: the
   * second round, needs the taker), 'faceUp' (duo: face-up packets), 'dog' (tarot: shown after the taking).
   */
  stage: string
  /** The seat receiving the cards, or null for cards that lie on the table (turned-up card, dog). */
  seat: number | null
  public: boolean
  cards: string[]
}

/** One attempt of a deal that may be redealt (tarot's petit sec). */
export interface Redeal {
  /** The seed the attempt was shuffled from. */
  seed: string
  dealer: number
  /** The seat that held the petit sec and forced the redeal. */
  petitSec: number
}

export interface Deal {
  scheme: string
  game: string
  seats: number
  /** The dealer of the deal that stood (after any redeals). */
  dealer: number
  /** The deck the cards were taken from, deck[0] first (after redeals: the last shuffle). */
  deck: string[]
  deliveries: Delivery[]
  /** Each seat's final cards, in the order received; undefined while a later input is missing (belote taker). */
  hands: string[][] | undefined
  /** Belote: the turned-up card. */
  turnedUp?: string
  /** Duo: the receiver seat (the non-dealer). */
  receiver?: number
  /** Tarot: the dog. */
  dog?: string[]
  /** Tarot: SHA-256 allocation fingerprint (see docs/schemes.md). */
  fingerprint?: string
  /** Tarot: the attempts thrown away before this deal, oldest first. */
  redeals?: Redeal[]
}

export interface DiceRoll {
  scheme: string
  /** The expression in canonical form, e.g. '3d20'. */
  expression: string
  count: number
  sides: number
  /** The 32-byte engine seed, hex. */
  engineSeed: string
  rolls: number[]
  total: number
}

interface SchemeBase {
  /** The name a receipt carries, e.g. 'atout-v1'. */
  id: string
  /** The version of the scheme's algorithm (the `-vN` of the id, 1 for unversioned published ones). */
  version: number
  /** One line for humans. */
  title: string
  /** Whether the key binds a drand round (then KeyInputs.beacon is required). */
  beacon: boolean
  /**
   * How its hands are played and proven (src/core/hand/family.ts): `commit-reveal`, or `blind`
   * (mental poker, blind-v1: the deck comes from the seats' verifiable shuffles, not from a key; a
   * beacon round is optional, bound when the table has one; see src/core/blind/).
   */
  family: HandFamily
  games: readonly string[]
  /** The seat counts a game allows; throws CoreInputError for a game the scheme does not have. */
  seatsFor: (game: string) => readonly number[]
  /** The public commitment to the secret (BitJack21 also takes its salt `rx`). */
  commitment: (secret: string, salt?: string) => string
  /** The exact string whose hash is the key (BitJack21: the stream prefix itself). */
  keyText: (inputs: KeyInputs) => string
  key: (inputs: KeyInputs) => string
}

export interface CardScheme extends SchemeBase {
  kind: 'cards'
  /** The stages of a game's deal, in delivery order. */
  stagesFor: (game: string) => readonly string[]
  /** The shuffled deck for a key (before any redeal). */
  deck: (key: string, options?: DealOptions) => string[]
  deal: (game: string, key: string, options?: DealOptions) => Deal
}

export interface DiceScheme extends SchemeBase {
  kind: 'dice'
  roll: (key: string, expression: string) => DiceRoll
}

export type Scheme = CardScheme | DiceScheme
