import type { Signed } from '../signed.js'
import { freezeDeep, isDeepFrozen } from '../frozen.js'
import { problem, Reason, type Problem } from './reasons.js'
import { verifyReceipt, type VerifyOptions } from './verify.js'
import type { CardsBody, SignedCommit, SignedPledge, SignedReveal } from './messages.js'

/**
 * The shield: a seat's check of a REVEAL against what it was shown, and the check a verifier runs
 * again on an `invalid-reveal` record's evidence. The receipt checks of docs/protocol.md §9 on
 * (COMMIT, pledges, REVEAL), acks aside; then every CARDS document must be the recomputed deal's
 * delivery for its stage and seat, and `seat` must have received its own private cards of every
 * stage the REVEAL lists that deals it some.
 * Returns the problems found; none means the REVEAL is good.
 */
export function shieldProblems (
  input: { commit: SignedCommit, pledges: readonly SignedPledge[], reveal: SignedReveal, cards: ReadonlyArray<Signed<CardsBody>>, seat: number },
  options: VerifyOptions = {}
): Problem[] {
  const receipt = { v: 1, commit: input.commit, pledges: [...input.pledges], reveal: input.reveal, acks: [] }
  // Documents off the wire are deep-frozen: so is the receipt made of them (its own arrays only are
  // frozen here), and verifyReceipt then checks them as the very objects the seat checked already.
  const frozen = isDeepFrozen(input.commit) && isDeepFrozen(input.reveal) && input.pledges.every(isDeepFrozen)
  const verdict = verifyReceipt(frozen ? freezeDeep(receipt) : receipt, options)
  // The deal's checks only: a played hand's actions come with its receipt (FINAL), not its REVEAL.
  const problems = verdict.problems.filter(p => !p.code.startsWith('play-'))
  if (problems.length > 0) return problems
  // Same deck: every card message the dealer sent must be the deal's, for every stage delivered.
  const expected = verdict.summary?.deliveries ?? []
  for (const c of input.cards) {
    const want = expected.find(d => d.stage === c.body.stage && d.seat === c.body.seat && d.public === c.body.public)
    if (want === undefined || want.cards.join() !== c.body.cards.join()) {
      problems.push(problem(Reason.ACK_CARDS, `the ${c.body.stage} cards I was shown are not this deck's`))
    }
  }
  // Per stage: a seat acks the digest of its private cards of every stage the REVEAL lists, so a
  // stage whose private cards for it never came fails the shield as its ack would fail the receipt.
  for (const d of expected) {
    if (d.seat !== input.seat || d.public) continue
    if (!input.cards.some(c => c.body.stage === d.stage && c.body.seat === input.seat && !c.body.public)) {
      problems.push(problem(Reason.ACK_CARDS, `I never received my own ${d.stage} cards`))
    }
  }
  return problems
}
