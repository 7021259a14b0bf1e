import * as z from 'zod'
import { canonicalJson } from '../canonical.js'
import { verifyDocument, type Signed } from '../signed.js'
import type { Delivery } from '../schemes/types.js'
import { docDigest } from './digest.js'
import { cardSchemeFor, humanSeats, recomputeDeal } from './recompute.js'
import { problem, Reason, type Problem, type ReasonCode } from './reasons.js'
import { checkBeaconEntry, checkOnePerSeat, zodProblems, type Verdict, type VerifyOptions } from './verify.js'
import { checkSeatOrder } from './verdict.js'
import { checkTimelockFields, openCommitted, timelockChain } from './timelock-checks.js'
import {
  beaconEntrySchema, fields, signedCardsSchema, signedCommitSchema, signedOf, signedPledgeSchema, ROBOT,
  type BeaconEntry, type CardsBody, type CommitBody, type DealParams, type SignedCommit, type SignedPledge
} from './messages.js'

/**
 * RECOVERED: a time-locked hand finished without a missing party (docs/protocol.md §10a). Once the
 * bound round R is out, whoever lacks a reveal opens every ciphertext of the hand (the COMMIT's
 * secret and each pledge's nonce) with R's beacon entry, checks each value against its author's
 * commitment, and signs this record: the signed COMMIT and pledges (so the ciphertexts, signed by
 * their authors), R's entry, the opened values, the CARDS its signer received (signed by the
 * dealer), and the faults found. Anyone can redo all of it offline and recompute the deal.
 */

/** What the table does with a hand the seats had to finish: redeal it, void it, or play it with its cards open. */
export const RECOVERED_RULES = ['replay', 'void', 'open'] as const
export type RecoveredRule = typeof RECOVERED_RULES[number]

/**
 * A fault found by opening: `undecryptable` (the author's ciphertext does not open with R's entry),
 * `mismatch` (it opens to a value whose hash is not the author's commitment or pledge), `cards`
 * (a CARDS document the dealer signed is not that stage of the recomputed deal).
 */
export const TIMELOCK_FAULTS = ['undecryptable', 'mismatch', 'cards'] as const
export type TimelockFault = typeof TIMELOCK_FAULTS[number]

const faultSchema = z.object({
  party: fields.peerId,
  kind: z.enum(TIMELOCK_FAULTS),
  /** The seat whose pledge or cards it is about; null for the dealer's own secret. */
  seat: fields.index.nullable(),
  /** For `cards`: the stage of the CARDS document. */
  stage: fields.shortText.nullable()
}).strict()
export type RecoveredFault = z.infer<typeof faultSchema>

export const recoveredBodySchema = z.object({
  table: fields.shortText,
  hand: fields.handNo,
  commit: signedCommitSchema,
  /** Every human seat's signed pledge, by seat. */
  pledges: z.array(signedPledgeSchema).max(8),
  /** drand round R's entry. */
  beacon: beaconEntrySchema,
  /** The secret opened from the COMMIT, or null when it did not open to the commitment. */
  secret: fields.nonce.nullable(),
  /** One per seat: the nonce opened from its pledge ('' for a robot), or null when it did not. */
  nonces: z.array(fields.nonce.nullable()).min(2).max(8),
  /** The CARDS documents the signer received, checked against the recomputed deal. */
  cards: z.array(signedCardsSchema).max(16),
  /** Exactly the faults that opening and recomputing find, in order: secret, pledges by seat, cards. */
  faults: z.array(faultSchema).max(24),
  rule: z.enum(RECOVERED_RULES),
  detail: z.string().max(512)
}).strict()
export type RecoveredBody = z.infer<typeof recoveredBodySchema>
export const signedRecoveredSchema = signedOf('recovered', recoveredBodySchema)
export type SignedRecovered = Signed<RecoveredBody>

export interface RecoveredSummary {
  table: string
  hand: number
  by: string
  rule: RecoveredRule
  faults: RecoveredFault[]
  /** Parties named by a fault. */
  blame: string[]
  game: string
  seats: string[]
  beaconRound: number
  key?: string
  hands?: string[][]
  deliveries?: Delivery[]
}

export interface Opened {
  secret: string | null
  nonces: Array<string | null>
  faults: RecoveredFault[]
  key?: string
  hands?: string[][]
  deliveries?: Delivery[]
}

/**
 * Opens every ciphertext of a time-locked hand with R's entry (already verified against the chain)
 * and recomputes the deal when every value opened right; then checks `cards`. Used by the verifier
 * and by the machines that write a record, so both find exactly the same faults.
 */
export function openHand (commit: SignedCommit, pledges: readonly SignedPledge[], entry: BeaconEntry, cards: ReadonlyArray<Signed<CardsBody>>): Opened {
  const body = commit.body
  const chain = timelockChain(body)
  if (typeof chain === 'string') throw new Error(chain)
  const faults: RecoveredFault[] = []
  const scheme = cardSchemeFor(body)
  let secret: string | null = null
  if (body.timelock !== undefined) {
    const opened = openCommitted(body.timelock, chain, entry, body.commitment, v => scheme.commitment(v))
    if (opened.ok) secret = opened.value
    else faults.push({ party: body.dealer, kind: opened.fault, seat: null, stage: null })
  }
  const nonces: Array<string | null> = body.seats.map(s => s === ROBOT ? '' : null)
  for (const seat of humanSeats(body.seats)) {
    const pledge = pledges.find(p => p.body.seat === seat)
    if (pledge?.body.timelock === undefined) continue
    const opened = openCommitted(pledge.body.timelock, chain, entry, pledge.body.nonceHash)
    if (opened.ok) nonces[seat] = opened.value
    else faults.push({ party: body.seats[seat], kind: opened.fault, seat, stage: null })
  }
  const out: Opened = { secret, nonces, faults }
  if (secret === null || nonces.some(n => n === null)) return out
  const values = nonces as string[]
  const { key, deal } = recomputeDeal(body, secret, values, entry, body.params)
  out.key = key
  out.hands = deal.hands
  out.deliveries = deal.deliveries
  for (const doc of cards) {
    const c = doc.body
    const expected = recomputeCards(body, secret, values, entry, c.params, c.stage, c.seat)
    if (expected === undefined || canonicalJson(expected) !== canonicalJson(c.cards)) {
      faults.push({ party: body.dealer, kind: 'cards', seat: c.seat, stage: c.stage })
    }
  }
  return out
}

function recomputeCards (commit: CommitBody, secret: string, nonces: string[], entry: BeaconEntry, params: DealParams, stage: string, seat: number | null): string[] | undefined {
  try {
    const { deal } = recomputeDeal(commit, secret, nonces, entry, params)
    return deal.deliveries.find(d => d.stage === stage && d.seat === seat)?.cards
  } catch {
    return undefined
  }
}

/**
 * Verifies a RECOVERED record offline: the signer is a party of the hand, the COMMIT and every
 * pledge are signed and time-locked to R of the COMMIT's chain, R's entry verifies, and opening
 * every ciphertext and recomputing the deal gives exactly the record's values and faults.
 */
export function verifyRecovered (value: unknown, options: VerifyOptions = {}): Verdict<RecoveredSummary> {
  const parsed = signedRecoveredSchema.safeParse(value)
  if (!parsed.success) return { ok: false, problems: zodProblems(parsed.error) }
  const doc = parsed.data as SignedRecovered
  const verifyDoc = options.verifyDoc ?? verifyDocument
  const body = doc.body
  const commit = body.commit.body
  const problems: Problem[] = []
  const add = (code: ReasonCode, message: string): void => { problems.push(problem(code, message)) }
  const summary: RecoveredSummary = {
    table: body.table, hand: body.hand, by: doc.signer, rule: body.rule, faults: body.faults,
    blame: [...new Set(body.faults.map(f => f.party))], game: commit.game, seats: commit.seats, beaconRound: body.beacon.round
  }
  if (!verifyDoc(doc)) add(Reason.BAD_SIGNATURE, 'recovered: bad signature')
  if (body.commit.signer !== commit.dealer || !verifyDoc(body.commit)) add(Reason.WRONG_SIGNER, 'recovered: its commit is not signed by the dealer')
  if (commit.table !== body.table || commit.hand !== body.hand) add(Reason.OTHER_HAND, 'recovered: its commit is for another hand')
  const parties = new Set([commit.dealer, ...commit.seats.filter(s => s !== ROBOT)])
  if (!parties.has(doc.signer)) add(Reason.WRONG_SIGNER, 'recovered: signed by someone who is not at the table')
  if (commit.timelock === undefined) add(Reason.TIMELOCK, 'recovered: the commit is not time-locked')
  const digest = docDigest(body.commit)
  checkOnePerSeat('pledge', body.pledges.map(p => p.body.seat), humanSeats(commit.seats), problems)
  checkSeatOrder('pledges', body.pledges.map(p => p.body.seat), problems)
  for (const p of body.pledges) {
    const what = `pledge of seat ${p.body.seat}`
    if (p.signer !== commit.seats[p.body.seat] || !verifyDoc(p)) add(Reason.WRONG_SIGNER, `${what}: not signed by that seat`)
    if (p.body.table !== commit.table || p.body.hand !== commit.hand || p.body.commit !== digest) add(Reason.OTHER_COMMIT, `${what}: answers another commit`)
  }
  for (const [i, c] of body.cards.entries()) {
    if (c.signer !== commit.dealer || !verifyDoc(c)) add(Reason.WRONG_SIGNER, `cards ${i}: not signed by the dealer`)
    if (c.body.table !== commit.table || c.body.hand !== commit.hand || c.body.commit !== digest) add(Reason.OTHER_COMMIT, `cards ${i}: for another hand or commit`)
  }
  for (const m of checkTimelockFields(commit, body.pledges)) add(Reason.TIMELOCK, m)
  problems.push(...checkBeaconEntry(commit, body.beacon))
  if (body.nonces.length !== commit.seats.length) add(Reason.SEAT_SET, 'recovered: nonces must be one per seat')
  if (problems.length > 0) return { ok: false, problems, summary }
  let opened: Opened
  try {
    opened = openHand(body.commit, body.pledges, body.beacon, body.cards)
  } catch (err) {
    return { ok: false, problems: [problem(Reason.RECOVERED, `recovered: ${(err as Error).message}`)], summary }
  }
  if (body.secret !== opened.secret) add(Reason.RECOVERED, 'recovered: the secret is not what the commit\'s timelock opens to')
  body.nonces.forEach((n, i) => { if (n !== opened.nonces[i]) add(Reason.RECOVERED, `recovered: nonce of seat ${i} is not what its pledge's timelock opens to`) })
  if (canonicalJson(body.faults) !== canonicalJson(opened.faults)) {
    add(Reason.RECOVERED, `recovered: faults ${canonicalJson(body.faults)} are not the ones found: ${canonicalJson(opened.faults)}`.slice(0, 400))
  }
  summary.key = opened.key
  summary.hands = opened.hands
  summary.deliveries = opened.deliveries
  return { ok: problems.length === 0, problems, summary }
}
