import { sha256Hex } from '../bytes.js'
import { isDeepFrozen, markChecked, wasChecked } from '../frozen.js'
import { sameJson } from '../same-json.js'
import { verifyDocument, type Signed } from '../signed.js'
import { problem, Reason, type Problem, type ReasonCode } from './reasons.js'
import { docDigest, seatCardsDigest } from './digest.js'
import { cardSchemeFor, noncesBySeat, recomputeDeal } from './recompute.js'
import { checkBlindReceipt } from './blind-verify.js'
import { checkPlay } from './play-verify.js'
import { rulesFamilyOf } from './family-of.js'
import {
  receiptSchema, signedAbortSchema, ROBOT,
  type BeaconEntry, type CommitBody, type Receipt, type RevealBody, type SignedAbort, type SignedAck
} from './messages.js'
import { checkReceiptTimelock, recoveredNonces } from './timelock-checks.js'
import { contributionProblem } from '../contribution.js'
import {
  checkAcks, checkBeaconEntry, checkOnePerSeat, checkSeatOrder, checkStageOrder, summaryOf, withCompleteness, zodProblems,
  type ReceiptSummary, type ReceiptVerdict, type VerifyOptions
} from './verdict.js'

export {
  checkAcks, checkBeaconEntry, checkOnePerSeat, incompleteMessage, summaryOf, zodProblems,
  type ReceiptSummary, type ReceiptVerdict, type Verdict, type VerifyOptions
} from './verdict.js'

/**
 * Re-verifies a receipt alone, offline: every signature, the commitment, every nonce against its
 * pledge, the beacon round (BLS, from the chain info the COMMIT carries), the key, the deck and
 * each countersigning seat's cards. Returns every problem found, not just the first.
 */
export function verifyReceipt (value: unknown, options: VerifyOptions = {}): ReceiptVerdict {
  if (rulesFamilyOf({ receipt: value }) === 'blind') return checkBlindReceipt(value, options)
  // A receipt that came in a FINAL passed this same schema as the message was decoded (wire.ts):
  // it is deep-frozen, so it still does, and its documents keep their identity for the verify memo.
  let receipt: Receipt
  if (wasChecked(value, receiptSchema)) receipt = value as Receipt
  else {
    const parsed = receiptSchema.safeParse(value)
    if (!parsed.success) return { ok: false, status: 'failed', problems: zodProblems(parsed.error) }
    // A deep-frozen receipt that the schema passes as it is (the same JSON value) keeps its own
    // documents: what this node learnt about them (signatures, digests, encodings) is found by
    // identity. The schema's copy is the same value, so every check below reaches the same answer.
    if (isDeepFrozen(value) && sameJson(parsed.data, value)) {
      receipt = value as Receipt
      markChecked(value, receiptSchema)
    } else receipt = parsed.data
  }
  const verifyDoc = options.verifyDoc ?? verifyDocument
  const problems: Problem[] = []
  const add = (code: ReasonCode, message: string): void => { problems.push(problem(code, message)) }
  const commit = receipt.commit.body
  const reveal = receipt.reveal.body
  const commitDigest = docDigest(receipt.commit)
  const summary = summaryOf(commit, receipt.acks)

  // Who signed what.
  if (receipt.commit.signer !== commit.dealer) add(Reason.WRONG_SIGNER, 'commit: not signed by the dealer it names')
  else if (!verifyDoc(receipt.commit)) add(Reason.BAD_SIGNATURE, 'commit: bad signature')
  else summary.commitDigest = commitDigest
  if (receipt.reveal.signer !== commit.dealer) add(Reason.WRONG_SIGNER, 'reveal: not signed by the dealer')
  else if (!verifyDoc(receipt.reveal)) add(Reason.BAD_SIGNATURE, 'reveal: bad signature')
  const sameHand = (what: string, body: { table: string, hand: number, commit: string }): void => {
    if (body.table !== commit.table || body.hand !== commit.hand) add(Reason.OTHER_HAND, `${what}: names another table or hand`)
    if (body.commit !== commitDigest) add(Reason.OTHER_COMMIT, `${what}: answers another commit (equivocation)`)
  }
  sameHand('reveal', reveal)
  for (const m of contributionProblems(reveal)) add(Reason.CONTRIBUTION, `reveal: ${m}`)

  const humans = summary.humanSeats
  checkOnePerSeat('pledge', receipt.pledges.map(p => p.body.seat), humans, problems)
  checkOnePerSeat('nonce', [...reveal.nonces, ...(reveal.recovered ?? [])].map(n => 'body' in n ? n.body.seat : n.seat), humans, problems)
  for (const m of checkReceiptTimelock(receipt)) add(Reason.TIMELOCK, m)
  // Every list the documents order by seat is checked in that order (docs/protocol.md §5, §9).
  checkSeatOrder('pledges', receipt.pledges.map(p => p.body.seat), problems)
  checkSeatOrder('reveal nonces', reveal.nonces.map(n => n.body.seat), problems)
  checkSeatOrder('acks', receipt.acks.map(a => a.body.seat), problems)
  const pledgeBySeat = new Map(receipt.pledges.map(p => [p.body.seat, p]))
  for (const pledge of receipt.pledges) {
    const what = `pledge of seat ${pledge.body.seat}`
    if (pledge.signer !== commit.seats[pledge.body.seat]) add(Reason.WRONG_SIGNER, `${what}: not signed by that seat`)
    else if (!verifyDoc(pledge)) add(Reason.BAD_SIGNATURE, `${what}: bad signature`)
    sameHand(what, pledge.body)
  }
  for (const nonce of reveal.nonces) {
    const what = `nonce of seat ${nonce.body.seat}`
    if (nonce.signer !== commit.seats[nonce.body.seat]) add(Reason.WRONG_SIGNER, `${what}: not signed by that seat`)
    else if (!verifyDoc(nonce)) add(Reason.BAD_SIGNATURE, `${what}: bad signature`)
    sameHand(what, nonce.body)
    const pledge = pledgeBySeat.get(nonce.body.seat)
    if (pledge !== undefined && sha256Hex(nonce.body.nonce) !== pledge.body.nonceHash) {
      add(Reason.NONCE_MISMATCH, `${what}: does not match the seat's pledge (nonce not used as pledged)`)
    }
  }

  if (reveal.params.dealer !== commit.params.dealer) add(Reason.PARAMS_CHANGED, 'reveal: deal parameters change the committed dealer seat')
  if (commit.params.taker !== undefined && reveal.params.taker !== commit.params.taker) add(Reason.PARAMS_CHANGED, 'reveal: deal parameters change the committed taker')
  problems.push(...checkBeacon(commit, receipt))

  let cardsBySeat: Map<number, string> | undefined
  try {
    const scheme = cardSchemeFor(commit)
    if (scheme.commitment(reveal.secret) !== commit.commitment) add(Reason.COMMITMENT, 'reveal: the secret does not match the commitment')
    const unknownStage = reveal.stages.find(s => !scheme.stagesFor(commit.game).includes(s))
    if (unknownStage !== undefined) add(Reason.STAGE, `reveal: ${commit.game} has no stage ${unknownStage}`)
    checkStageOrder(commit.game, scheme.stagesFor(commit.game), reveal.stages, problems)
    if (problems.length === 0) {
      const { key, deal } = recomputeDeal(commit, reveal.secret, recoveredNonces(noncesBySeat(commit, reveal.nonces), reveal.recovered), reveal.beacon, reveal.params)
      summary.key = key
      summary.hands = deal.hands
      summary.deliveries = deal.deliveries.filter(d => reveal.stages.includes(d.stage))
      cardsBySeat = new Map(humans.map(s => [s, seatCardsDigest(deal.deliveries, s, reveal.stages)]))
      summary.seatCards = Object.fromEntries(cardsBySeat)
      summary.revealDigest = docDigest(receipt.reveal)
      // A stage listed must have been dealt: one that needs more input (belote's take without a taker) cannot be.
      for (const stage of reveal.stages) {
        if (!deal.deliveries.some(d => d.stage === stage)) add(Reason.STAGE, `reveal: stage ${stage} deals no cards with these parameters${stage === 'take' ? ' (belote\'s take needs a taker)' : ''}`)
      }
      // A played hand: its action chain replayed on this deal (docs/games.md "Verifying a played hand").
      const played = checkPlay(receipt, deal.deliveries, key, verifyDoc)
      problems.push(...played.problems)
      if (played.summary !== undefined) summary.play = played.summary
    }
  } catch (err) {
    add(Reason.SCHEME, `deal: ${(err as Error).message}`)
  }

  problems.push(...checkAcks(commit, commitDigest, receipt.acks, docDigest(receipt.reveal), cardsBySeat, verifyDoc))
  // Exactly one ack per human seat, or the receipt is incomplete: a separate verdict, never a pass.
  return withCompleteness(problems, summary)
}

function checkBeacon (commit: CommitBody, receipt: Receipt): Problem[] {
  return checkBeaconEntry(commit, receipt.reveal.body.beacon)
}

/**
 * The well-formed-contribution rule (docs/protocol.md §5) on a REVEAL: its secret, every nonce and
 * every recovered nonce is 64 lowercase hex characters. Part of the receipt's checks, so the seat's
 * shield and the re-run of the shield on an `invalid-reveal` record decide it alike.
 */
export function contributionProblems (reveal: RevealBody): string[] {
  return [
    contributionProblem(reveal.secret, 'the secret'),
    ...reveal.nonces.map(n => contributionProblem(n.body.nonce, `the nonce of seat ${n.body.seat}`)),
    ...(reveal.recovered ?? []).map(r => contributionProblem(r.nonce, `the recovered nonce of seat ${r.seat}`))
  ].filter((p): p is string => p !== null)
}
