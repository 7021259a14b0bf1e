import type * as z from 'zod'
import { sha256Hex } from '../bytes.js'
import { verifyDocument, type Signed } from '../signed.js'
import { parseChainInfo, roundTime, verifyBoundBeacon } from '../beacon/index.js'
import { docDigest, seatCardsDigest } from './digest.js'
import type { Delivery } from '../schemes/types.js'
import { cardSchemeFor, humanSeats, noncesBySeat, recomputeDeal } from './recompute.js'
import { verifyBlindReceipt } from './blind-verify.js'
import {
  receiptSchema, signedAbortSchema, ROBOT,
  type BeaconEntry, type CommitBody, type Receipt, type SignedAbort, type SignedAck
} from './messages.js'
import { checkReceiptTimelock, recoveredNonces } from './timelock-checks.js'

export interface VerifyOptions {
  /** Signature check for one signed document; defaults to the pure Ed25519 one (src/core/signed.ts). */
  verifyDoc?: (doc: Signed<unknown>) => boolean
}

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
  key?: string
  hands?: string[][]
  /** The deal's deliveries for the stages the reveal lists. */
  deliveries?: Delivery[]
}

export interface Verdict<S> {
  ok: boolean
  problems: string[]
  summary?: S
}

export function zodProblems (error: z.ZodError): string[] {
  return error.issues.slice(0, 5).map(i => `malformed: ${i.path.join('.') || '(root)'}: ${i.message}`)
}

/**
 * Re-verifies a receipt alone, offline: every signature, the commitment, every nonce against its
 * pledge, the beacon round (BLS, from the chain info the COMMIT carries), the key, the deck and
 * each countersigning seat's cards. Returns every problem found, not just the first.
 */
export function verifyReceipt (value: unknown, options: VerifyOptions = {}): Verdict<ReceiptSummary> {
  if (typeof value === 'object' && value !== null && (value as { v?: unknown }).v === 2) return verifyBlindReceipt(value, options)
  const parsed = receiptSchema.safeParse(value)
  if (!parsed.success) return { ok: false, problems: zodProblems(parsed.error) }
  const receipt: Receipt = parsed.data
  const verifyDoc = options.verifyDoc ?? verifyDocument
  const problems: string[] = []
  const commit = receipt.commit.body
  const reveal = receipt.reveal.body
  const commitDigest = docDigest(receipt.commit)
  const summary = summaryOf(commit, receipt.acks)

  // Who signed what.
  if (receipt.commit.signer !== commit.dealer) problems.push('commit: not signed by the dealer it names')
  else if (!verifyDoc(receipt.commit)) problems.push('commit: bad signature')
  if (receipt.reveal.signer !== commit.dealer) problems.push('reveal: not signed by the dealer')
  else if (!verifyDoc(receipt.reveal)) problems.push('reveal: bad signature')
  const sameHand = (what: string, body: { table: string, hand: number, commit: string }): void => {
    if (body.table !== commit.table || body.hand !== commit.hand) problems.push(`${what}: names another table or hand`)
    if (body.commit !== commitDigest) problems.push(`${what}: answers another commit (equivocation)`)
  }
  sameHand('reveal', reveal)

  const humans = summary.humanSeats
  checkOnePerSeat('pledge', receipt.pledges.map(p => p.body.seat), humans, problems)
  checkOnePerSeat('nonce', [...reveal.nonces, ...(reveal.recovered ?? [])].map(n => 'body' in n ? n.body.seat : n.seat), humans, problems)
  problems.push(...checkReceiptTimelock(receipt))
  const pledgeBySeat = new Map(receipt.pledges.map(p => [p.body.seat, p]))
  for (const pledge of receipt.pledges) {
    const what = `pledge of seat ${pledge.body.seat}`
    if (pledge.signer !== commit.seats[pledge.body.seat]) problems.push(`${what}: not signed by that seat`)
    else if (!verifyDoc(pledge)) problems.push(`${what}: bad signature`)
    sameHand(what, pledge.body)
  }
  for (const nonce of reveal.nonces) {
    const what = `nonce of seat ${nonce.body.seat}`
    if (nonce.signer !== commit.seats[nonce.body.seat]) problems.push(`${what}: not signed by that seat`)
    else if (!verifyDoc(nonce)) problems.push(`${what}: bad signature`)
    sameHand(what, nonce.body)
    const pledge = pledgeBySeat.get(nonce.body.seat)
    if (pledge !== undefined && sha256Hex(nonce.body.nonce) !== pledge.body.nonceHash) {
      problems.push(`${what}: does not match the seat's pledge (nonce not used as pledged)`)
    }
  }

  if (reveal.params.dealer !== commit.params.dealer) problems.push('reveal: deal parameters change the committed dealer seat')
  problems.push(...checkBeacon(commit, receipt))

  let cardsBySeat: Map<number, string> | undefined
  try {
    const scheme = cardSchemeFor(commit)
    if (scheme.commitment(reveal.secret) !== commit.commitment) problems.push('reveal: the secret does not match the commitment')
    const unknownStage = reveal.stages.find(s => !scheme.stagesFor(commit.game).includes(s))
    if (unknownStage !== undefined) problems.push(`reveal: ${commit.game} has no stage ${unknownStage}`)
    if (problems.length === 0) {
      const { key, deal } = recomputeDeal(commit, reveal.secret, recoveredNonces(noncesBySeat(commit, reveal.nonces), reveal.recovered), reveal.beacon, reveal.params)
      summary.key = key
      summary.hands = deal.hands
      summary.deliveries = deal.deliveries.filter(d => reveal.stages.includes(d.stage))
      cardsBySeat = new Map(humans.map(s => [s, seatCardsDigest(deal.deliveries, s, reveal.stages)]))
    }
  } catch (err) {
    problems.push(`deal: ${(err as Error).message}`)
  }

  problems.push(...checkAcks(commit, commitDigest, receipt.acks, docDigest(receipt.reveal), cardsBySeat, verifyDoc))
  return { ok: problems.length === 0, problems, summary }
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
    humanSeats: humanSeats(commit.seats)
  }
}

/**
 * The seats' countersignatures (either receipt version): one per human seat at most, signed by it,
 * for this hand and this reveal, over the digest of that seat's cards (when the deal is known).
 */
export function checkAcks (
  commit: CommitBody, commitDigest: string, acks: readonly SignedAck[], revealDigest: string,
  cardsBySeat: ReadonlyMap<number, string> | undefined, verifyDoc: (doc: Signed<unknown>) => boolean
): string[] {
  const problems: string[] = []
  const ackSeats = new Set<number>()
  for (const ack of acks) {
    const seat = ack.body.seat
    const what = `countersignature of seat ${seat}`
    if (ackSeats.has(seat)) problems.push(`${what}: duplicated`)
    ackSeats.add(seat)
    if (commit.seats[seat] === undefined || commit.seats[seat] === ROBOT || ack.signer !== commit.seats[seat]) {
      problems.push(`${what}: not signed by that seat`)
    } else if (!verifyDoc(ack)) problems.push(`${what}: bad signature`)
    if (ack.body.table !== commit.table || ack.body.hand !== commit.hand) problems.push(`${what}: names another table or hand`)
    if (ack.body.commit !== commitDigest) problems.push(`${what}: answers another commit (equivocation)`)
    if (ack.body.reveal !== revealDigest) problems.push(`${what}: countersigns another reveal`)
    const expected = cardsBySeat?.get(seat)
    if (cardsBySeat !== undefined && ack.body.cards !== expected) problems.push(`${what}: the cards it held are not that seat's cards of this deck`)
  }
  return problems
}

export function checkOnePerSeat (what: string, seats: number[], humans: number[], problems: string[]): void {
  const seen = new Set<number>()
  for (const s of seats) {
    if (!humans.includes(s)) problems.push(`${what}: seat ${s} is not a human seat of the table`)
    if (seen.has(s)) problems.push(`${what}: seat ${s} appears twice`)
    seen.add(s)
  }
  for (const s of humans) if (!seen.has(s)) problems.push(`${what}: seat ${s} is missing`)
}

function checkBeacon (commit: CommitBody, receipt: Receipt): string[] {
  return checkBeaconEntry(commit, receipt.reveal.body.beacon)
}

/** The beacon entry a hand's evidence gives for the COMMIT's binding: present iff bound, on time, valid. */
export function checkBeaconEntry (commit: CommitBody, entry: BeaconEntry | null): string[] {
  if (commit.beacon === null) return entry === null ? [] : ['reveal: carries a beacon entry the commit did not bind']
  if (entry === null) return [`reveal: the commit bound drand round ${commit.beacon.round} but no entry is given`]
  let chain
  try {
    chain = parseChainInfo(commit.beacon.info, 'commit beacon chain info')
  } catch (err) {
    return [`beacon: ${(err as Error).message}`]
  }
  const problems: string[] = []
  // The round must have been unknown while contributions could change: published after the deadline.
  if (roundTime(chain, commit.beacon.round) <= commit.deadline) {
    problems.push(`beacon: the commit binds round ${commit.beacon.round}, published before its contribution deadline`)
  }
  const verdict = verifyBoundBeacon(chain, { chainHash: commit.beacon.chainHash, round: commit.beacon.round }, entry)
  if (!verdict.ok) problems.push(`beacon: ${verdict.reason}: ${verdict.message}`)
  return problems
}

export interface AbortSummary {
  table: string
  hand: number
  reason: string
  blame: string[]
  by: string
  game?: string
  seats?: string[]
}

/**
 * Verifies an abort record: the author's signature, the COMMIT it refers to, the signatures of the
 * evidence, that the author and the blamed are parties of that hand, and, for equivocation, that
 * the evidence really shows two different commits for the same hand.
 */
export function verifyAbort (value: unknown, options: VerifyOptions = {}): Verdict<AbortSummary> {
  const parsed = signedAbortSchema.safeParse(value)
  if (!parsed.success) return { ok: false, problems: zodProblems(parsed.error) }
  const doc: SignedAbort = parsed.data
  const verifyDoc = options.verifyDoc ?? verifyDocument
  const body = doc.body
  const problems: string[] = []
  const summary: AbortSummary = { table: body.table, hand: body.hand, reason: body.reason, blame: body.blame, by: doc.signer }
  if (!verifyDoc(doc)) problems.push('abort: bad signature')
  const commit = body.commit
  if (commit === null) {
    if (body.reason !== 'missing-deal') problems.push(`abort: reason ${body.reason} needs the commit it refers to`)
    return { ok: problems.length === 0, problems, summary }
  }
  summary.game = commit.body.game
  summary.seats = commit.body.seats
  if (commit.signer !== commit.body.dealer || !verifyDoc(commit)) problems.push('abort: its commit is not signed by the dealer')
  if (commit.body.table !== body.table || commit.body.hand !== body.hand) problems.push('abort: its commit is for another hand')
  const parties = new Set([commit.body.dealer, ...commit.body.seats.filter(s => s !== ROBOT)])
  if (!parties.has(doc.signer)) problems.push('abort: signed by someone who is not at the table')
  for (const b of body.blame) if (!parties.has(b)) problems.push(`abort: blames ${b}, who is not at the table`)
  for (const [i, e] of body.evidence.entries()) {
    if (!verifyDoc(e as Signed<unknown>)) problems.push(`abort: evidence ${i} (${e.type}) has a bad signature`)
  }
  // A dealer that could not reach a seat cannot tell a seat that is down from a network that failed
  // (or a stranger flooding the seat): the record names the seats in its detail and blames nobody.
  if (body.reason === 'unreachable') {
    if (doc.signer !== commit.body.dealer) problems.push('abort: only the dealer records a seat it could not reach')
    if (body.blame.length > 0) problems.push('abort: unreachable blames nobody')
  }
  if (body.reason === 'equivocation') {
    const digest = docDigest(commit)
    const conflicting = body.evidence.some(e => {
      const b = e.body as { table?: unknown, hand?: unknown, commit?: unknown } | null
      return (e.type === 'pledge' || e.type === 'nonce' || e.type === 'ack') && b !== null && typeof b === 'object' &&
        b.table === body.table && b.hand === body.hand && typeof b.commit === 'string' && b.commit !== digest &&
        commit.body.seats.includes(e.signer)
    }) || body.evidence.some(e => e.type === 'commit' && e.signer === commit.body.dealer &&
      docDigest(e) !== digest && (e.body as CommitBody | null)?.hand === body.hand && (e.body as CommitBody | null)?.table === body.table)
    if (!conflicting) problems.push('abort: equivocation claimed but the evidence shows no second commit for this hand')
  }
  return { ok: problems.length === 0, problems, summary }
}
