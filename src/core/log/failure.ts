// What a log verification reports per failure: a module of its own, read by the chain verifier
// (chain.ts) and the hand-chain checks (hand-chain.ts) alike, so that neither imports the other.

/** One failed entry (or missing range, or the head), as reported to the user. */
export interface LogFailure {
  /**
   * Sequence number of the failed entry, or of the first entry of a missing range; null for the
   * head. An entry whose signature does not verify is named by its position (the seq it should
   * have), since the seq it claims may be the very byte that was changed.
   */
  seq: number | null
  /** Last seq of a missing range (only for missing ranges). */
  toSeq?: number
  /** 1-based line number in the input, when the failure is about a line that is there. */
  line?: number
  problems: string[]
  /** The reason codes of `problems`, when the payload verifier gives them (src/core/hand/reasons.ts). */
  codes?: string[]
  /** The entry verifies but is incomplete (a receipt missing a countersignature): not a pass, not a forgery. */
  incomplete?: true
  /** How many entries this failure stands for: 1, or the length of a missing range (or of missing hands). */
  count: number
}
