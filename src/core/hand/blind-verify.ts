/**
 * Offline verification of a dealer-blind receipt (version 2, scheme blind-v1), from the receipt
 * alone: every signature; every seat's key proof; every shuffle proof, chained from the public
 * starting deck; every hand key against its public key; the beacon round and its final
 * permutation; every card opened with the hand keys; each countersigning seat's cards.
 * docs/dealer-blind.md §8 lists the steps in this order.
 */
import { verifyDocument, type Signed } from '../signed.js'
import type { Ciphertext, Point } from '../blind/index.js'
import { docDigest, seatCardsDigest } from './digest.js'
import { blindReceiptSchema, type BlindReceipt } from './blind-messages.js'
import {
  beaconPermutation, blindJointKey, blindLayout, blindStartingDeck, cardDeliveries, checkBkey, checkBlindCommit,
  checkBsecret, checkBshuffle, dealtDeck, openDeckWithKeys
} from './blind.js'
import { checkAcks, checkBeaconEntry, summaryOf, type ReceiptSummary, type VerifyOptions, zodProblems } from './verdict.js'
import { messagesOf } from './reasons.js'
import { getCardScheme } from '../schemes/registry.js'

/** Plain messages: verifyReceipt turns them into its coded verdict (src/core/hand/verify.ts). */
export function verifyBlindReceipt (value: unknown, options: VerifyOptions = {}): { ok: boolean, problems: string[], summary?: ReceiptSummary } {
  const parsed = blindReceiptSchema.safeParse(value)
  if (!parsed.success) return { ok: false, problems: messagesOf(zodProblems(parsed.error)) }
  const receipt: BlindReceipt = parsed.data
  const verifyDoc = options.verifyDoc ?? verifyDocument
  const problems: string[] = []
  const commit = receipt.commit.body
  const reveal = receipt.reveal.body
  const commitDigest = docDigest(receipt.commit)
  const n = commit.seats.length
  const summary = summaryOf(commit, receipt.acks)

  // 1. The commit and every signature, before any expensive check.
  if (receipt.commit.signer !== commit.dealer) problems.push('commit: not signed by the dealer it names')
  else if (!verifyDoc(receipt.commit)) problems.push('commit: bad signature')
  const commitProblem = checkBlindCommit(commit)
  if (commitProblem !== null) problems.push(`commit: ${commitProblem}`)
  if (receipt.reveal.signer !== commit.dealer) problems.push('reveal: not signed by the dealer')
  const signed: Array<[string, Signed<unknown>]> = [
    ['reveal', receipt.reveal],
    ...receipt.keys.map((d, i): [string, Signed<unknown>] => [`key ${i}`, d]),
    ...receipt.shuffles.map((d, i): [string, Signed<unknown>] => [`shuffle ${i}`, d]),
    ...reveal.secrets.map((d, i): [string, Signed<unknown>] => [`hand key ${i}`, d]),
    ...receipt.acks.map((d, i): [string, Signed<unknown>] => [`countersignature ${i}`, d])
  ]
  for (const [what, doc] of signed) if (!verifyDoc(doc)) problems.push(`${what}: bad signature`)
  if (reveal.table !== commit.table || reveal.hand !== commit.hand || reveal.commit !== commitDigest) problems.push('reveal: names another hand or commit')
  for (const [what, list] of [['key', receipt.keys], ['shuffle', receipt.shuffles], ['hand key', reveal.secrets]] as const) {
    if (list.length !== n || list.some((d, i) => d.body.seat !== i)) problems.push(`${what}s: must be one per seat, in seat order`)
  }
  if (reveal.params.dealer !== commit.params.dealer) problems.push('reveal: deal parameters change the committed dealer seat')
  if (problems.length > 0) return { ok: false, problems, summary }
  const stages = getCardScheme(commit.scheme).stagesFor(commit.game)
  const unknownStage = reveal.stages.find(s => !stages.includes(s))
  if (unknownStage !== undefined) problems.push(`reveal: ${commit.game} has no stage ${unknownStage}`)
  problems.push(...messagesOf(checkBeaconEntry(commit, reveal.beacon)))

  // 2. Keys, 3. shuffles, 4. hand keys.
  const pubs: Point[] = []
  for (const doc of receipt.keys) {
    const r = checkBkey(commit, commitDigest, doc)
    if ('problem' in r) problems.push(`key of seat ${doc.body.seat}: ${r.problem}`)
    else pubs.push(r.pub)
  }
  if (problems.length > 0) return { ok: false, problems, summary }
  const pk = blindJointKey(pubs)
  let deck: Ciphertext[] = blindStartingDeck(commit.game)
  for (const doc of receipt.shuffles) {
    const r = checkBshuffle(commit, commitDigest, doc, pk, deck)
    if ('problem' in r) { problems.push(`shuffle of seat ${doc.body.seat}: ${r.problem}`); return { ok: false, problems, summary } }
    deck = r.deck
  }
  const secrets: bigint[] = []
  for (const doc of reveal.secrets) {
    const r = checkBsecret(commit, commitDigest, doc, pubs[doc.body.seat])
    if ('problem' in r) problems.push(`hand key of seat ${doc.body.seat}: ${r.problem}`)
    else secrets.push(r.secret)
  }
  if (problems.length > 0) return { ok: false, problems, summary }

  // 5. The beacon's final order, every card, each seat's deliveries.
  const sigma = beaconPermutation(reveal.beacon?.randomness ?? null, docDigest(receipt.shuffles[n - 1]), deck.length)
  let cards: string[]
  try {
    cards = openDeckWithKeys(commit.game, dealtDeck(deck, sigma), secrets)
  } catch (err) {
    problems.push(`deal: ${(err as Error).message}`)
    return { ok: false, problems, summary }
  }
  if (new Set(cards).size !== cards.length) problems.push('deal: a card appears twice in the deck')
  let deliveries
  try {
    deliveries = cardDeliveries(blindLayout(commit, reveal.params), cards)
  } catch (err) {
    problems.push(`deal: ${(err as Error).message}`)
    return { ok: false, problems, summary }
  }
  summary.deliveries = deliveries.filter(d => reveal.stages.includes(d.stage))
  const complete = commit.game !== 'belote' || reveal.params.taker !== undefined
  summary.hands = complete ? commit.seats.map((_, s) => deliveries.filter(d => d.seat === s).flatMap(d => d.cards)) : undefined

  // 6. Countersignatures (signatures already checked above).
  const cardsBySeat = new Map(summary.humanSeats.map(s => [s, seatCardsDigest(deliveries, s, reveal.stages)]))
  problems.push(...messagesOf(checkAcks(commit, commitDigest, receipt.acks, docDigest(receipt.reveal), cardsBySeat, () => true)))
  return { ok: problems.length === 0, problems, summary }
}
