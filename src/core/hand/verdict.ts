/**
 * What every receipt verifier shares, whatever the hand's family: the verdict's shape and status,
 * the summary, and the rules both receipt versions follow (one per seat, seat order, stage order,
 * the seats' countersignatures, the beacon entry). A module of its own so that each family's
 * verifier imports it downwards (src/core/hand/verify.ts picks the family, blind-verify.ts checks
 * version 2), with no circle between them.
 */
import type * as z from 'zod'
import type { Signed } from '../signed.js'
import { problem, Reason, type Problem, type ReasonCode } from './reasons.js'
import { parseChainInfo, roundTime, verifyBoundBeacon } from '../beacon/index.js'
import type { Delivery } from '../schemes/types.js'
import { humanSeats } from './recompute.js'
import { ROBOT, type BeaconEntry, type CommitBody, type SignedAck } from './messages.js'
import { INITIAL_STAGES } from './stages.js'

export interface VerifyOptions {
  /** Signature check for one signed document; defaults to the pure Ed25519 one (src/core/signed.ts). */
  verifyDoc?: (doc: Signed<unknown>) => boolean
}

import type { PlaySummary } from './play-verify.js'

export interface ReceiptSummary {
  table: string
  hand: number
  scheme: string
  game: string
  seats: string[]
  dealer: string
  beaconRound: number | null
  /** Seats (by index) whose countersignature is in the receipt. */
  acked: number[]
  humanSeats: number[]
  /** Human seats with no countersignature: the receipt is then incomplete. */
  missingAcks: number[]
  /** docDigest of the COMMIT, when the dealer's signature on it verifies (the hand-chain checks use it). */
  commitDigest?: string
  key?: string
  hands?: string[][]
  /** The deal's deliveries for the stages the reveal lists. */
  deliveries?: Delivery[]
  /** docDigest of the REVEAL the acks countersign (set when the deal was recomputed). */
  revealDigest?: string
  /** Each human seat's cards digest in the recomputed deal, by seat index: what its ack must say (set when the deal was recomputed). */
  seatCards?: Record<number, string>
  /** A played hand: its actions, its tricks and its replayed score (src/core/hand/play-verify.ts). */
  play?: PlaySummary
  /** A time-locked blind hand finished without these seats: their hand keys were opened from their timelock (docs/dealer-blind.md §14). */
  unlocked?: Array<{ seat: number, reason: 'missing-shares' | 'missing-secret' }>
}

export interface Verdict<S> {
  ok: boolean
  /** Every problem found, each with its typed reason code (src/core/hand/reasons.ts). */
  problems: Problem[]
  summary?: S
}

/**
 * A receipt's verdict: `verified` (every check passed and every human seat countersigned),
 * `incomplete` (every check passed but some human seat's ack is missing: `missingAcks`; never a
 * pass), or `failed` (`problems`). `ok` is true only when verified.
 */
export interface ReceiptVerdict extends Verdict<ReceiptSummary> {
  status: 'verified' | 'incomplete' | 'failed'
}

export function zodProblems (error: z.ZodError): Problem[] {
  return error.issues.slice(0, 5).map(i => problem(Reason.MALFORMED, `malformed: ${i.path.join('.') || '(root)'}: ${i.message}`))
}

/** The verdict's status: failed on any problem, else incomplete when a human seat's ack is missing, else verified. */
export function withCompleteness (problems: Problem[], summary: ReceiptSummary): ReceiptVerdict {
  const acked = new Set(summary.acked)
  summary.missingAcks = summary.humanSeats.filter(s => !acked.has(s))
  const status = problems.length > 0 ? 'failed' : summary.missingAcks.length > 0 ? 'incomplete' : 'verified'
  return { ok: status === 'verified', status, problems, summary }
}

/** What every verdict on a receipt (either version) reports about the hand. */
export function summaryOf (commit: CommitBody, acks: readonly SignedAck[]): ReceiptSummary {
  return {
    table: commit.table,
    hand: commit.hand,
    scheme: commit.scheme,
    game: commit.game,
    seats: commit.seats,
    dealer: commit.dealer,
    beaconRound: commit.beacon?.round ?? null,
    acked: acks.map(a => a.body.seat).sort((a, b) => a - b),
    humanSeats: humanSeats(commit.seats),
    missingAcks: []
  }
}

/**
 * The seats' countersignatures (either receipt version): one per human seat at most, signed by it,
 * for this hand and this reveal, over the digest of that seat's cards (when the deal is known).
 */
export function checkAcks (
  commit: CommitBody, commitDigest: string, acks: readonly SignedAck[], revealDigest: string,
  cardsBySeat: ReadonlyMap<number, string> | undefined, verifyDoc: (doc: Signed<unknown>) => boolean
): Problem[] {
  const problems: Problem[] = []
  const add = (code: ReasonCode, message: string): void => { problems.push(problem(code, message)) }
  const ackSeats = new Set<number>()
  for (const ack of acks) {
    const seat = ack.body.seat
    const what = `countersignature of seat ${seat}`
    if (ackSeats.has(seat)) add(Reason.SEAT_SET, `${what}: duplicated`)
    ackSeats.add(seat)
    if (commit.seats[seat] === undefined || commit.seats[seat] === ROBOT || ack.signer !== commit.seats[seat]) {
      add(Reason.WRONG_SIGNER, `${what}: not signed by that seat`)
    } else if (!verifyDoc(ack)) add(Reason.BAD_SIGNATURE, `${what}: bad signature`)
    if (ack.body.table !== commit.table || ack.body.hand !== commit.hand) add(Reason.OTHER_HAND, `${what}: names another table or hand`)
    if (ack.body.commit !== commitDigest) add(Reason.OTHER_COMMIT, `${what}: answers another commit (equivocation)`)
    if (ack.body.reveal !== revealDigest) add(Reason.ACK_REVEAL, `${what}: countersigns another reveal`)
    const expected = cardsBySeat?.get(seat)
    if (cardsBySeat !== undefined && ack.body.cards !== expected) add(Reason.ACK_CARDS, `${what}: the cards it held are not that seat's cards of this deck`)
  }
  return problems
}

/** The one-line reason a receipt is incomplete, naming the seats (and peers) whose ack is missing. */
export function incompleteMessage (summary: Pick<ReceiptSummary, 'missingAcks' | 'seats' | 'unlocked'>): string {
  const who = summary.missingAcks.map(s => `${s} (${summary.seats[s]})`).join(', ')
  // Seats that walked away from a time-locked blind hand are named with what they withheld.
  const walked = (summary.unlocked ?? []).map(u => `seat ${u.seat} walked away (${u.reason === 'missing-shares' ? 'withheld its shares' : 'withheld its hand key'}; its key was opened from its timelock)`)
  return `incomplete: no countersignature from seat${summary.missingAcks.length > 1 ? 's' : ''} ${who}${walked.length > 0 ? `; ${walked.join('; ')}` : ''}`
}

/** A list the protocol orders by seat is in strictly increasing seat order (docs/protocol.md §9 step 5): a seat twice breaks it too (and is `seat-set` besides). */
export function checkSeatOrder (what: string, seats: readonly number[], problems: Problem[]): void {
  if (seats.some((s, i) => i > 0 && s <= seats[i - 1])) problems.push(problem(Reason.ORDER, `${what}: not in strictly increasing seat order (${seats.join(', ')})`))
}

/**
 * A REVEAL's stages: each at most once, and the game's initial stages (dealt at once, with the key)
 * first, in the game's order; later stages follow in the order the table asked for them.
 */
export function checkStageOrder (game: string, gameStages: readonly string[], stages: readonly string[], problems: Problem[]): void {
  const twice = stages.find((s, i) => stages.indexOf(s) !== i)
  if (twice !== undefined) problems.push(problem(Reason.STAGE, `reveal: stage ${twice} is listed twice`))
  const initial = gameStages.filter(s => INITIAL_STAGES.has(s))
  if (initial.some((s, i) => stages[i] !== s)) {
    problems.push(problem(Reason.STAGE, `reveal: ${game} deals ${initial.join(', ')} first; the reveal lists ${stages.length === 0 ? 'no stage' : stages.join(', ')}`))
  }
}

export function checkOnePerSeat (what: string, seats: number[], humans: number[], problems: Problem[]): void {
  const add = (code: ReasonCode, message: string): void => { problems.push(problem(code, message)) }
  const seen = new Set<number>()
  for (const s of seats) {
    if (!humans.includes(s)) add(Reason.SEAT_SET, `${what}: seat ${s} is not a human seat of the table`)
    if (seen.has(s)) add(Reason.SEAT_SET, `${what}: seat ${s} appears twice`)
    seen.add(s)
  }
  for (const s of humans) if (!seen.has(s)) add(Reason.SEAT_SET, `${what}: seat ${s} is missing`)
}

/** The beacon entry a hand's evidence gives for the COMMIT's binding: present iff bound, on time, valid. */
export function checkBeaconEntry (commit: CommitBody, entry: BeaconEntry | null): Problem[] {
  if (commit.beacon === null) return entry === null ? [] : [problem(Reason.BEACON, 'reveal: carries a beacon entry the commit did not bind')]
  if (entry === null) return [problem(Reason.BEACON, `reveal: the commit bound drand round ${commit.beacon.round} but no entry is given`)]
  let chain
  try {
    chain = parseChainInfo(commit.beacon.info, 'commit beacon chain info')
  } catch (err) {
    return [problem(Reason.BEACON, `beacon: ${(err as Error).message}`)]
  }
  const problems: Problem[] = []
  const add = (code: ReasonCode, message: string): void => { problems.push(problem(code, message)) }
  // The round must have been unknown while contributions could change: published after the deadline.
  if (roundTime(chain, commit.beacon.round) <= commit.deadline) {
    add(Reason.BEACON, `beacon: the commit binds round ${commit.beacon.round}, published before its contribution deadline`)
  }
  const verdict = verifyBoundBeacon(chain, { chainHash: commit.beacon.chainHash, round: commit.beacon.round }, entry)
  if (!verdict.ok) add(Reason.BEACON, `beacon: ${verdict.reason}: ${verdict.message}`)
  return problems
}
