/**
 * The plain types the log modules share (a failure as reported, a payload's place in a hand chain,
 * an entry's status), in a module of their own so that the line checks (check.ts), the chain
 * checks (chain.ts) and the hand chains (hand-chain.ts) import downwards only.
 */

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
  /**
   * Who is at fault, when the rule knows it: `owner` (the log's owner: a line it signed that is not
   * what it signed, out of order, or a missing entry is its doing), or a peer id (the party whose
   * signed document breaks the rule: the dealer for a hand-chain fork or link). Absent when the rule
   * cannot tell (a payload problem may be any signer's).
   */
  fault?: 'owner' | string
}

/**
 * Where a log entry's payload sits in a chain of documents its payload verifier knows about: for
 * fairdeal tables, the COMMIT of a hand in the chain of one dealer's COMMITs at one table (each
 * COMMIT's `prev` is the digest of that dealer's previous COMMIT there; hand 1's is all zeros).
 * Plain data, computed beside the payload check (possibly on a worker thread).
 */
export interface PayloadLink {
  /** Which chain: for hands, the table id and the dealer's peer id. */
  chain: { table: string, dealer: string }
  /** Position in the chain: the hand number, 1, 2, 3, … */
  index: number
  /** The digest of this element (the COMMIT's docDigest). */
  id: string
  /** The digest of the element before it; all zeros for index 1. */
  prev: string
  /** A dealer's `missing-nonce` (`nonce`) or `missing-view` (`view`) record that verified alone: the peers it blames. */
  claim?: { what: 'nonce' | 'view', blamed: string[] }
  /**
   * Another abort record of this COMMIT that verified alone, not the dealer's: the peers whose
   * NONCE, and whose VIEW, it carries (its author's own left out: a seat's own document, shown
   * after the fact, proves nothing about when it was sent).
   */
  released?: { nonce: string[], view: string[] }
}

/**
 * An incomplete receipt's countersignatures still due (docs/log.md, "Late acks"): for each human
 * seat whose ack it lacks, what a late ack of that seat must say. Plain data.
 */
export interface AcksDue {
  /** docDigest of the receipt's COMMIT: the key a late-ack names (its ACK's `commit`). */
  commit: string
  table: string
  hand: number
  /** docDigest of the receipt's REVEAL. */
  reveal: string
  /** By seat index (as a string key): the seat's peer id and its cards digest in the recomputed deal. */
  seats: Record<string, { signer: string, cards: string }>
}

/** A late-ack entry whose ACK is well formed and signed by its signer: what it says (docs/log.md, "Late acks"). */
export interface LateAck {
  commit: string
  table: string
  hand: number
  reveal: string
  seat: number
  signer: string
  cards: string
}

/** What one entry counts as in a verdict. */
export type EntryStatus = 'passed' | 'failed' | 'incomplete'
