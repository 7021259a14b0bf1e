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
import {
  checkAcks, checkBeaconEntry, checkSeatOrder, checkStageOrder, summaryOf, withCompleteness, zodProblems,
  type ReceiptSummary, type ReceiptVerdict, type VerifyOptions
} from './verdict.js'
import { messagesOf, problem, Reason, type Problem, type ReasonCode } from './reasons.js'
import { getCardScheme } from '../schemes/registry.js'
import { checkBunlock, checkKeyTimelock, oneHandKeyPerSeat } from './blind-timelock.js'
import { checkPlay } from './play-verify.js'
import { BLIND_PLAYED_GAMES, blindOpeningRule, samePlay } from './blind-play.js'

/** The blind receipt's checks as plain messages (the blind seat's shield prints them); checkBlindReceipt gives the codes. */
export function verifyBlindReceipt (value: unknown, options: VerifyOptions = {}): { ok: boolean, problems: string[], summary?: ReceiptSummary } {
  const verdict = checkBlindReceipt(value, options)
  return { ok: verdict.problems.length === 0, problems: messagesOf(verdict.problems), summary: verdict.summary }
}

/**
 * A version-2 receipt's verdict, each problem with its code (docs/dealer-blind.md §8 lists them):
 * the same three statuses as a version-1 receipt's, and the rules the two versions share
 * (signers, seat order of the acks, the stage list of docs/protocol.md §9, the beacon entry, the
 * countersignatures) under the same codes.
 */
export function checkBlindReceipt (value: unknown, options: VerifyOptions = {}): ReceiptVerdict {
  const parsed = blindReceiptSchema.safeParse(value)
  if (!parsed.success) return { ok: false, status: 'failed', problems: zodProblems(parsed.error) }
  const receipt: BlindReceipt = parsed.data
  const verifyDoc = options.verifyDoc ?? verifyDocument
  const problems: Problem[] = []
  const add = (code: ReasonCode, message: string): void => { problems.push(problem(code, message)) }
  const done = (): ReceiptVerdict => withCompleteness(problems, summary)
  const commit = receipt.commit.body
  const reveal = receipt.reveal.body
  const commitDigest = docDigest(receipt.commit)
  const n = commit.seats.length
  const summary = summaryOf(commit, receipt.acks)

  // 1. The commit and every signature, before any expensive check.
  if (receipt.commit.signer !== commit.dealer) add(Reason.WRONG_SIGNER, 'commit: not signed by the dealer it names')
  else if (!verifyDoc(receipt.commit)) add(Reason.BAD_SIGNATURE, 'commit: bad signature')
  else summary.commitDigest = commitDigest
  const commitProblem = checkBlindCommit(commit)
  if (commitProblem !== null) add(Reason.SCHEME, `commit: ${commitProblem}`)
  if (receipt.reveal.signer !== commit.dealer) add(Reason.WRONG_SIGNER, 'reveal: not signed by the dealer')
  const signed: Array<[string, Signed<unknown>]> = [
    ['reveal', receipt.reveal],
    ...receipt.keys.map((d, i): [string, Signed<unknown>] => [`key ${i}`, d]),
    ...receipt.shuffles.map((d, i): [string, Signed<unknown>] => [`shuffle ${i}`, d]),
    ...reveal.secrets.map((d, i): [string, Signed<unknown>] => [`hand key ${i}`, d]),
    ...receipt.acks.map((d, i): [string, Signed<unknown>] => [`countersignature ${i}`, d])
  ]
  for (const [what, doc] of signed) if (!verifyDoc(doc)) add(Reason.BAD_SIGNATURE, `${what}: bad signature`)
  if (reveal.table !== commit.table || reveal.hand !== commit.hand) add(Reason.OTHER_HAND, 'reveal: names another table or hand')
  if (reveal.commit !== commitDigest) add(Reason.OTHER_COMMIT, 'reveal: answers another commit (equivocation)')
  for (const [what, list] of [['key', receipt.keys], ['shuffle', receipt.shuffles]] as const) {
    const seats = list.map(d => d.body.seat)
    if (seats.length !== n || new Set(seats).size !== n || seats.some(s => s >= n)) add(Reason.SEAT_SET, `${what}s: must be one per seat`)
    // The order is a rule of its own (docs/dealer-blind.md §10 step 1), checked whatever the seat set.
    checkSeatOrder(`${what}s`, seats, problems)
  }
  // Hand keys: a BSECRET each, or (time-locked, docs/dealer-blind.md §14) opened from its timelock in the unlock.
  if (!oneHandKeyPerSeat(reveal, n)) add(Reason.SEAT_SET, 'hand keys: must be one per seat, published or unlocked')
  // The order is a rule of its own, as for keys and shuffles, whatever the seat set.
  checkSeatOrder('hand keys', reveal.secrets.map(d => d.body.seat), problems)
  checkSeatOrder('acks', receipt.acks.map(a => a.body.seat), problems)
  if (reveal.params.dealer !== commit.params.dealer) add(Reason.PARAMS_CHANGED, 'reveal: deal parameters change the committed dealer seat')
  if (commit.params.taker !== undefined && reveal.params.taker !== commit.params.taker) add(Reason.PARAMS_CHANGED, 'reveal: deal parameters change the committed taker')
  if (problems.length > 0) return done()
  const stages = getCardScheme(commit.scheme).stagesFor(commit.game)
  const unknownStage = reveal.stages.find(s => !stages.includes(s))
  if (unknownStage !== undefined) add(Reason.STAGE, `reveal: ${commit.game} has no stage ${unknownStage}`)
  checkStageOrder(commit.game, stages, reveal.stages, problems)
  problems.push(...checkBeaconEntry(commit, reveal.beacon))
  if (problems.length > 0) return done()

  // 2. Keys, 3. shuffles, 4. hand keys.
  const pubs: Point[] = []
  for (const doc of receipt.keys) {
    const r = checkBkey(commit, commitDigest, doc)
    if ('problem' in r) add(Reason.BLIND_KEY, `key of seat ${doc.body.seat}: ${r.problem}`)
    else pubs.push(r.pub)
    const locked = checkKeyTimelock(commit, doc)
    if (locked !== null) add(Reason.BLIND_KEY, locked)
  }
  if (commit.keyRound !== undefined && commit.beacon !== null && commit.keyRound <= commit.beacon.round) {
    add(Reason.BLIND_KEY, `commit: key round ${commit.keyRound} is not after the bound round ${commit.beacon.round}`)
  }
  if (problems.length > 0) return done()
  const pk = blindJointKey(pubs)
  let deck: Ciphertext[] = blindStartingDeck(commit.game)
  for (const doc of receipt.shuffles) {
    const r = checkBshuffle(commit, commitDigest, doc, pk, deck)
    if ('problem' in r) { add(Reason.BLIND_SHUFFLE, `shuffle of seat ${doc.body.seat}: ${r.problem}`); return done() }
    deck = r.deck
  }
  const secrets: bigint[] = []
  for (const doc of reveal.secrets) {
    const r = checkBsecret(commit, commitDigest, doc, pubs[doc.body.seat])
    if ('problem' in r) add(Reason.BLIND_HAND_KEY, `hand key of seat ${doc.body.seat}: ${r.problem}`)
    else secrets.push(r.secret)
  }
  if (reveal.unlock !== undefined) {
    const r = checkBunlock(commit, commitDigest, reveal.unlock, receipt.keys, pubs, verifyDoc, true)
    if ('problems' in r) for (const p of r.problems) add(Reason.BLIND_HAND_KEY, p)
    else {
      secrets.push(...r.secrets.values())
      summary.unlocked = reveal.unlock.body.keys.map(k => ({ seat: k.seat, reason: k.reason }))
    }
  }
  if (problems.length > 0) return done()

  // 5. The beacon's final order, every card, each seat's deliveries.
  const sigma = beaconPermutation(reveal.beacon?.randomness ?? null, docDigest(receipt.shuffles[n - 1]), deck.length)
  const dealt = dealtDeck(deck, sigma)
  let cards: string[]
  try {
    cards = openDeckWithKeys(commit.game, dealt, secrets)
  } catch (err) {
    add(Reason.BLIND_DEAL, `deal: ${(err as Error).message}`)
    return done()
  }
  if (new Set(cards).size !== cards.length) add(Reason.BLIND_DEAL, 'deal: a card appears twice in the deck')
  let deliveries
  try {
    deliveries = cardDeliveries(blindLayout(commit, reveal.params), cards)
  } catch (err) {
    add(Reason.BLIND_DEAL, `deal: ${(err as Error).message}`)
    return done()
  }
  // A stage listed must have been dealt: one that needs more input (belote's take without a taker) cannot be.
  for (const stage of reveal.stages) {
    if (!deliveries.some(d => d.stage === stage)) add(Reason.STAGE, `reveal: stage ${stage} deals no cards with these parameters${stage === 'take' ? ' (belote\'s take needs a taker)' : ''}`)
  }
  if (problems.length > 0) return done()
  summary.deliveries = deliveries.filter(d => reveal.stages.includes(d.stage))
  const complete = commit.game !== 'belote' || reveal.params.taker !== undefined
  summary.hands = complete ? commit.seats.map((_, s) => deliveries.filter(d => d.seat === s).flatMap(d => d.cards)) : undefined

  // 6. Countersignatures (signatures already checked above).
  const cardsBySeat = new Map(summary.humanSeats.map(s => [s, seatCardsDigest(deliveries, s, reveal.stages)]))
  summary.seatCards = Object.fromEntries(cardsBySeat)
  summary.revealDigest = docDigest(receipt.reveal)
  problems.push(...checkAcks(commit, commitDigest, receipt.acks, docDigest(receipt.reveal), cardsBySeat, () => true))

  // 7. A played hand (docs/dealer-blind.md §15): the chain replayed on the deal, each card's opening checked.
  if (commit.params.play === true || receipt.play !== undefined || reveal.play !== undefined) {
    if (commit.params.play === true && !BLIND_PLAYED_GAMES.has(commit.game)) add(Reason.PLAY_MISSING, `play: ${commit.game} is not played at a blind table`)
    else if (commit.params.play !== true) add(Reason.PLAY_MISSING, 'play: the receipt or its reveal carries actions of a hand not committed as played')
    else if (reveal.play !== undefined && receipt.play !== undefined && !samePlay(reveal.play, receipt.play)) add(Reason.PLAY_REVEAL, 'play: the receipt\'s chain, score or end is not the one the reveal names')
    else {
      const layout = blindLayout(commit, reveal.params)
      const rule = blindOpeningRule({ commit, commitDigest, keys: pubs, dealt, layout, stages: reveal.stages })
      const played = checkPlay(receipt, deliveries, '', verifyDoc as (doc: Signed<unknown>) => boolean, rule)
      problems.push(...played.problems)
      if (played.summary !== undefined) summary.play = played.summary
    }
  }
  return done()
}
