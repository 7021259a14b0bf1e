/**
 * Typed reason codes: every problem a verifier reports carries one, beside its English message,
 * so tests and tools match codes, not text. The messages may be reworded; a code, once published,
 * keeps its meaning. docs/protocol.md §9, §10, docs/dealer-blind.md §10, §13 and docs/log.md list
 * which rule each code names.
 */
export const Reason = {
  /** The document does not have the schema's shape. */
  MALFORMED: 'malformed',
  /** A signature does not verify. */
  BAD_SIGNATURE: 'bad-signature',
  /** Signed by a peer who may not sign that document (not the dealer, not the seat it names). */
  WRONG_SIGNER: 'wrong-signer',
  /** A document names another table or hand than the one it is part of. */
  OTHER_HAND: 'other-hand',
  /** A document answers another COMMIT than the one it is part of (equivocation). */
  OTHER_COMMIT: 'other-commit',
  /** Not exactly one pledge, nonce or ack per human seat (a robot's, a duplicate, a missing one). */
  SEAT_SET: 'seat-set',
  /** A list the protocol orders (pledges, nonces, acks by seat; stages by the game) is out of order. */
  ORDER: 'order',
  /** A secret, nonce or recovered nonce in a REVEAL that is not 64 lowercase hex characters (docs/protocol.md §5, well-formed contributions). */
  CONTRIBUTION: 'contribution',
  /** A nonce whose SHA-256 is not its seat's pledged nonceHash. */
  NONCE_MISMATCH: 'nonce-mismatch',
  /** The REVEAL's deal parameters change the committed ones (dealer seat, taker). */
  PARAMS_CHANGED: 'params-changed',
  /** The drand round: missing, unexpected, published too early, or not verifying. */
  BEACON: 'beacon',
  /** The revealed (or published) secret does not open the COMMIT's commitment. */
  COMMITMENT: 'commitment',
  /** A stage the game does not have, listed twice, out of the game's order, or lacking its input (belote's take without a taker). */
  STAGE: 'stage',
  /**
   * The scheme cannot deal this game, this many seats, or with this beacon binding (blind-v1: or the
   * COMMIT's commitment is not 64 zeros; in a blind missing-shares record, a BDEAL whose parameters have no layout).
   */
  SCHEME: 'scheme',
  /** An ack that countersigns another REVEAL. */
  ACK_REVEAL: 'ack-reveal',
  /** An ack whose cards digest is not that seat's cards in the recomputed deal. */
  ACK_CARDS: 'ack-cards',
  /** A receipt that verifies but lacks the countersignature of one or more human seats: incomplete, not a pass. */
  INCOMPLETE: 'receipt-incomplete',
  /** An abort record with no COMMIT (no reason may omit it). */
  ABORT_NO_COMMIT: 'abort-no-commit',
  /** An abort record signed by a party the reason does not allow (the dealer's reasons, a seat's reasons). */
  ABORT_SIGNER: 'abort-signer',
  /** An abort record that blames the wrong parties for its reason and evidence. */
  ABORT_BLAME: 'abort-blame',
  /** Evidence the reason requires is missing, or of a kind it does not allow. */
  ABORT_EVIDENCE: 'abort-evidence',
  /** A piece of evidence that belongs to another table, hand or COMMIT. */
  ABORT_FOREIGN_EVIDENCE: 'abort-foreign-evidence',
  /** An equivocation record without two conflicting documents signed by the dealer. */
  ABORT_NO_CONFLICT: 'abort-no-conflict',
  /**
   * A commit-reveal `dealer-stopped` record whose published secret is missing or does not open the
   * commitment, or a record of another reason that carries a secret (a blind record never carries one).
   */
  ABORT_SECRET: 'abort-secret',
  /**
   * A record refuted by evidence: its own (an `invalid-reveal` whose REVEAL, BDEAL or BREVEAL passes every
   * check; a blind `invalid-key`, `invalid-shuffle` or `invalid-shares` whose accused document passes its
   * proof), or, in a log, another record's (a dealer's `missing-nonce` or `missing-view` blaming a seat
   * whose NONCE or VIEW another record holds).
   */
  ABORT_REFUTED: 'abort-refuted',
  /**
   * A record that gives up a time-locked hand once every seat pledged (docs/protocol.md §16.4): the dealer's `missing-nonce`,
   * `missing-view`, `beacon-unavailable`, and `dealer-stopped` or `unreachable` holding every pledge; a seat's `missing-deal`
   * holding its NONCE, and its `missing-reveal`. On a time-locked blind hand (docs/dealer-blind.md §13): a
   * `missing-shares` or `missing-secret` without the key round's entry, with another round's, or blaming a
   * seat whose timelock opens with it.
   */
  ABORT_TIMELOCKED: 'abort-timelocked',
  /** A `broken-chain` record whose two COMMITs do not show a break (the new one links to the known one, or is not the hand after it). */
  ABORT_NO_BREAK: 'abort-no-break',
  /** A `beacon-unavailable` record for a hand that bound no beacon round. */
  ABORT_NO_BEACON: 'abort-no-beacon',
  /** A reason that does not occur in the hand's scheme (a dealer-blind reason in a commit-reveal hand, or the reverse). */
  ABORT_REASON: 'abort-reason',
  /** A time-lock field (COMMIT, PLEDGE, or a nonce the REVEAL recovers) that does not check out. */
  TIMELOCK: 'timelock',
  /** A `recovered` record (a hand finished from time-locked contributions) that does not check out. */
  RECOVERED: 'recovered',
  /** Kept for records of earlier versions: no check reports it any more (each blind problem has its own code below). */
  BLIND: 'blind',
  /** Blind: a seat's BKEY (its signer, its hand, its proof of knowledge of the hand key). */
  BLIND_KEY: 'blind-key',
  /** Blind: a seat's BSHUFFLE (its signer, its hand, its deck's size and encoding, its shuffle proof from the deck before). */
  BLIND_SHUFFLE: 'blind-shuffle',
  /** Blind: a seat's BSECRET (its signer, its hand, the hand key against the seat's BKEY). */
  BLIND_HAND_KEY: 'blind-hand-key',
  /** Blind: the deck opened with the hand keys is not a deck of the game (a card fails to open, a card twice, the layout cannot deal it). */
  BLIND_DEAL: 'blind-deal',
  /** A log entry of a kind the verifier does not know. */
  UNKNOWN_KIND: 'unknown-kind',
  /** A `dkg` entry (docs/beacon-group.md "The DKG in the log") that is not of the documented form, or keeps a result that is not a signed result of its group. */
  DKG_FORM: 'dkg-form',
  /** A `dkg` entry in the log of someone other than the member it names. */
  DKG_MEMBER: 'dkg-member',
  /** A `dkg` entry whose outcome (qualified set, group key, groupHash, chain, commitments) does not follow from its signed documents, or whose documents do not verify. */
  DKG_OUTCOME: 'dkg-outcome',
  /** A `dkg` entry keeping a member's signed result that names another qualified set, group key or groupHash: members computed different keys. */
  DKG_DISAGREEMENT: 'dkg-disagreement',
  /** A `beacon-blame` entry (docs/log.md "Blame records of a beacon group") that is not of the documented form. */
  BLAME_FORM: 'beacon-blame-form',
  /** A `beacon-blame` entry whose record is not signed by the log's owner as a member of the group it names. */
  BLAME_SIGNER: 'beacon-blame-signer',
  /** A `beacon-blame` entry naming a partial that is not its sender's signed partial of the record's chain and round. */
  BLAME_PARTIAL: 'beacon-blame-partial',
  /** A `beacon-blame` entry naming a partial that verifies against its sender's public share: an honest member blamed. */
  BLAME_REFUTED: 'beacon-blame-refuted',
  /** A `beacon-blame` entry whose group (members and commitments) is that of no passing `dkg` entry earlier in the log. */
  BLAME_UNMATCHED: 'beacon-blame-unmatched',
  /** A `beacon-reshare-refused` entry (docs/log.md "Refused reshares") that is not of the documented form. */
  RESHARE_REFUSED_FORM: 'reshare-refused-form',
  /** A `beacon-reshare-refused` entry whose refusal is not the log owner's, a participant's, of its run and chain, or does not verify. */
  RESHARE_REFUSED_SIGNER: 'reshare-refused-signer',
  /** A `beacon-reshare-refused` entry whose transcript does not refuse the reshare as its refusal says (or reshares). */
  RESHARE_REFUSED_OUTCOME: 'reshare-refused-outcome',
  /** Hand chain: a COMMIT whose `prev` is not the digest of that dealer's previous COMMIT at the table. */
  CHAIN_LINK: 'hand-chain-link',
  /** Hand chain: committed hands that end in neither a receipt nor an abort record of the log. */
  CHAIN_GAP: 'hand-chain-gap',
  /** Hand chain: two entries of one hand that carry different COMMITs. */
  CHAIN_FORK: 'hand-chain-fork',
  /** A late-ack entry whose COMMIT no incomplete receipt earlier in the log holds (docs/log.md, "Late acks"). */
  LATE_ACK_UNMATCHED: 'late-ack-unmatched',
  /** A late-ack entry for a seat whose countersignature the receipt, or an earlier late-ack entry, already holds, or for a seat that is not a human seat. */
  LATE_ACK_ACKED: 'late-ack-acked',
  /** A late-ack entry that is not of the documented form ({ ack } with a well-formed signed ACK). */
  LATE_ACK_FORM: 'late-ack-form',
  /** Play (docs/games.md "Verifying a played hand"): the COMMIT says the hand is played (`params.play`) and the receipt carries no actions, or the receipt carries actions of a hand not committed as played. */
  PLAY_MISSING: 'play-missing',
  /** Play: an action document that breaks the action chain (its form, signature, hand, number, prev or signer), or a stage the hand asked for that the reveal does not list. */
  PLAY_CHAIN: 'play-chain',
  /** Play: a card played (or shown) that the seat did not hold in the revealed deal. */
  PLAY_NOT_HELD: 'play-card-not-held',
  /** Play: an action the game's rules refuse at that point (the engine's refusal code is in the message). */
  PLAY_ILLEGAL: 'play-illegal',
  /** Play: a dealer's draw (a shoe card, a roll, the key at a series' end) that is not the one the hand asks for next (skipped, repeated, another stage) or not the one the revealed key gives. */
  PLAY_DRAW: 'play-draw',
  /** Play: the receipt's refused action (the one that ended the hand, naming its seat) is not the chain's next link, or the rules allow it: the seat is blamed wrongly. */
  PLAY_REFUSED: 'play-refused',
  /** Play: the receipt's score is not the replayed hand's, or a score is given for a hand the chain does not finish. */
  PLAY_SCORE: 'play-score',
  /** Play: the receipt's `waiting` (the seat whose turn ran out, docs/games.md "Time to play") names a seat that was not the one to act on the replayed chain, a robot, or comes with a score or a refused action. */
  PLAY_WAITING: 'play-waiting',
  /** Play, blind-v1: a card played whose opening (docs/dealer-blind.md §15) is missing, malformed, for a position the seat does not hold, with a share that fails, or for another card; or an opening on an action that plays no card. The message names the card-opening code. */
  PLAY_OPENING: 'play-opening',
  /** Play, blind-v1: the receipt's play is not the one the BREVEAL names (its chain, score or end). */
  PLAY_REVEAL: 'play-reveal'
} as const

export type ReasonCode = typeof Reason[keyof typeof Reason]

/** One problem a verifier found: its typed code and a one-line message for people. */
export interface Problem {
  code: ReasonCode
  message: string
}

export function problem (code: ReasonCode, message: string): Problem {
  return { code, message }
}

/** The messages alone, for callers that print or log them. */
export function messagesOf (problems: readonly Problem[]): string[] {
  return problems.map(p => p.message)
}
