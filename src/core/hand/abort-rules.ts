import * as z from 'zod'
import { sha256Hex } from '../bytes.js'
import { verifyDocument, type Signed } from '../signed.js'
import { docDigest } from './digest.js'
import { cardSchemeFor, humanSeats } from './recompute.js'
import { rulesFamilyOf } from './family-of.js'
import { problem, Reason, type Problem, type ReasonCode } from './reasons.js'
import { shieldProblems } from './shield.js'
import { DRAW_GAMES } from '../games/play-draws.js'
import { checkBlindAbort } from './blind-abort-rules.js'
import { expectBlame, sortEvidence, type EvidenceDocs, type EvidenceRow, type RawEvidence, type VerifyDoc } from './evidence.js'
import { zodProblems, type Verdict, type VerifyOptions } from './verdict.js'
import { signedViewSchema, type ViewBody } from './view-messages.js'
import {
  signedAbortSchema, signedCardsSchema, signedCommitSchema, signedNonceSchema, signedPledgeSchema, signedPledgesSchema,
  signedRevealSchema, ROBOT,
  type AbortReason, type CardsBody, type CommitBody, type PledgesBody, type SignedAbort, type SignedCommit, type SignedNonce,
  type SignedPledge, type SignedReveal
} from './messages.js'

/**
 * The one rule set for abort records (docs/protocol.md §10): who may sign each reason, whom it may
 * blame, which evidence it must carry, and that every piece of evidence belongs to the hand and
 * COMMIT it stops. Used by every verifier (CLI, daemon, browser) and by the machines when they
 * accept a record from someone else.
 */

/** Who may sign a record, whom it may blame, which evidence types it may carry, and its own check. */
export interface AbortRule extends EvidenceRow {
  signer: 'dealer' | 'seat' | 'either'
  blame: 'no-pledge' | 'no-nonce' | 'no-view' | 'nobody' | 'dealer'
  /** The reason's own checks, on the evidence that kept the rules for every piece (sortEvidence). */
  check: (ctx: Ctx) => void
}

/**
 * The commit–reveal family's rules, one row per reason (docs/protocol.md §10: one row of its
 * table each). Dealer-blind hands have their own table (src/core/hand/blind-abort-rules.ts).
 */
export const COMMIT_REVEAL_RULES: Readonly<Partial<Record<AbortReason, AbortRule>>> = {
  'missing-pledge': { signer: 'dealer', blame: 'no-pledge', evidence: ['pledge'], check: ctx => { missingPledge(ctx) } },
  'missing-nonce': { signer: 'dealer', blame: 'no-nonce', evidence: ['pledge', 'nonce', 'view'], check: ctx => { missingNonce(ctx) } },
  // The dealer at its deadline, or a seat still waiting for VIEWs at its own (docs/protocol.md §7).
  'missing-view': {
    signer: 'either', blame: 'no-view', evidence: ['pledge', 'pledges', 'nonce', 'view'],
    // The dealer's record holds no PLEDGES document; a seat's (the dealer's own node's seat too) holds the one it received.
    check: ctx => { if (ctx.signer === ctx.commit.dealer && ctx.ev.pledgesDocs.length === 0) dealerMissingView(ctx); else seatMissingView(ctx) }
  },
  'beacon-unavailable': { signer: 'dealer', blame: 'nobody', evidence: ['pledge', 'nonce'], check: ctx => { beaconUnavailable(ctx) } },
  'dealer-stopped': { signer: 'dealer', blame: 'dealer', evidence: ['pledge', 'nonce'], check: ctx => { dealerStopped(ctx) } },
  unreachable: { signer: 'dealer', blame: 'nobody', evidence: ['pledge', 'nonce', 'view'], check: ctx => { unreachable(ctx) } },
  'missing-deal': { signer: 'seat', blame: 'dealer', evidence: ['pledge', 'pledges', 'nonce'], check: ctx => { missingDeal(ctx) } },
  'missing-reveal': { signer: 'seat', blame: 'dealer', evidence: ['pledges', 'nonce', 'cards'], check: ctx => { missingReveal(ctx) } },
  'invalid-reveal': { signer: 'seat', blame: 'dealer', evidence: ['pledges', 'nonce', 'cards', 'reveal'], check: ctx => { invalidReveal(ctx) } },
  // Its pieces may answer another COMMIT (that is what they show); it may also carry what showed its
  // author the conflict (a seat's signed view of the hand): any document of this hand signed by one
  // of its parties, passed over (it proves nothing alone).
  equivocation: {
    signer: 'seat', blame: 'dealer', evidence: ['commit', 'pledges', 'pledge'], otherCommit: ['commit', 'pledges', 'pledge'], passes: otherDocOfHand,
    check: ctx => { equivocation(ctx) }
  },
  // It shows a COMMIT of the hand before: of this table, another hand and COMMIT (brokenChain checks which).
  'broken-chain': { signer: 'seat', blame: 'dealer', evidence: ['commit'], otherHand: ['commit'], otherCommit: ['commit'], check: ctx => { brokenChain(ctx) } },
  // A seat holds the NONCE (VIEW) of a seat the dealer's missing-nonce (missing-view) blames (log rule: docs/protocol.md §10).
  released: { signer: 'seat', blame: 'nobody', evidence: ['pledges', 'nonce', 'view'], check: ctx => { released(ctx) } }
}

/** Who signs a reason, and whom it blames (the signer and blame columns of COMMIT_REVEAL_RULES). */
export const ABORT_RULES: Readonly<Partial<Record<AbortReason, Pick<AbortRule, 'signer' | 'blame'>>>> = Object.fromEntries(
  Object.entries(COMMIT_REVEAL_RULES).map(([reason, rule]) => [reason, { signer: rule.signer, blame: rule.blame }])
)

const SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  commit: signedCommitSchema,
  pledge: signedPledgeSchema,
  pledges: signedPledgesSchema,
  nonce: signedNonceSchema,
  cards: signedCardsSchema,
  reveal: signedRevealSchema,
  view: signedViewSchema
}

/** The table a record must belong to, when the caller knows it (a machine accepting a record). */
export interface AbortTable {
  id: string
  dealer: string
  seats: readonly string[]
}

export interface AbortCheckOptions extends VerifyOptions {
  table?: AbortTable
}

export interface AbortSummary {
  table: string
  hand: number
  reason: string
  blame: string[]
  by: string
  game?: string
  seats?: string[]
  /** docDigest of the record's COMMIT, when the dealer's signature on it verifies (the hand-chain checks use it). */
  commitDigest?: string
}

interface Evidence {
  pledges: SignedPledge[]
  nonces: SignedNonce[]
  pledgesDocs: Array<Signed<PledgesBody>>
  cards: Array<Signed<CardsBody>>
  reveals: SignedReveal[]
  commits: SignedCommit[]
  views: Array<Signed<ViewBody>>
}

/**
 * Checks one abort record against the rules of its reason. Returns every problem found, each with
 * its code; `ok` only when there is none.
 */
export function checkAbortRecord (value: unknown, options: AbortCheckOptions = {}): Verdict<AbortSummary> {
  const parsed = signedAbortSchema.safeParse(value)
  if (!parsed.success) return { ok: false, problems: zodProblems(parsed.error) }
  const doc: SignedAbort = parsed.data
  const verifyDoc = options.verifyDoc ?? verifyDocument
  const body = doc.body
  const reason = body.reason
  const problems: Problem[] = []
  const add = (code: ReasonCode, message: string): void => { problems.push(problem(code, message)) }
  const summary: AbortSummary = { table: body.table, hand: body.hand, reason, blame: body.blame, by: doc.signer }
  if (!verifyDoc(doc)) add(Reason.BAD_SIGNATURE, 'abort: bad signature')
  if (body.commit === null) {
    add(Reason.ABORT_NO_COMMIT, `abort: a ${reason} record must carry the COMMIT of the hand it stops`)
    return { ok: false, problems, summary }
  }
  const commitDoc = body.commit
  const commit = commitDoc.body
  summary.game = commit.game
  summary.seats = commit.seats
  if (commitDoc.signer !== commit.dealer) add(Reason.WRONG_SIGNER, 'abort: its commit is not signed by the dealer it names')
  else if (!verifyDoc(commitDoc)) add(Reason.BAD_SIGNATURE, 'abort: its commit has a bad signature')
  else summary.commitDigest = docDigest(commitDoc)
  if (commit.table !== body.table || commit.hand !== body.hand) add(Reason.OTHER_HAND, 'abort: its commit is for another hand')
  const table = options.table
  if (table !== undefined && (commit.table !== table.id || commit.dealer !== table.dealer ||
    commit.seats.length !== table.seats.length || commit.seats.some((s, i) => s !== table.seats[i]))) {
    add(Reason.OTHER_HAND, 'abort: its commit is not for this table')
  }

  const rule = COMMIT_REVEAL_RULES[reason]
  const humans = humanSeats(commit.seats)
  const author = commit.seats.indexOf(doc.signer)
  if (rulesFamilyOf({ commit }) === 'blind') {
    // Dealer-blind hands have their own documents and rules (docs/dealer-blind.md §13).
    checkBlindAbort(doc, commitDoc, verifyDoc, add)
    return { ok: problems.length === 0, problems, summary }
  }
  if (rule === undefined) {
    add(Reason.ABORT_REASON, `abort: ${reason} occurs only in dealer-blind hands, not in a ${commit.scheme} hand`)
    return { ok: false, problems, summary }
  }
  if (rule.signer === 'dealer' && doc.signer !== commit.dealer) add(Reason.ABORT_SIGNER, `abort: only the dealer signs ${reason}`)
  if (rule.signer === 'seat' && !humans.includes(author)) add(Reason.ABORT_SIGNER, `abort: only a seat of the hand signs ${reason}`)
  if (rule.signer === 'either' && doc.signer !== commit.dealer && !humans.includes(author)) add(Reason.ABORT_SIGNER, `abort: only the dealer or a seat of the hand signs ${reason}`)

  // The hand's secret is published by a dealer-stopped record only (the dealer's own check is in its row).
  if (body.secret !== undefined && reason !== 'dealer-stopped') add(Reason.ABORT_SECRET, `abort: only a dealer-stopped record publishes the hand's secret, not a ${reason} record`)
  if (body.keyRound !== undefined) add(Reason.ABORT_EVIDENCE, 'abort: only a time-locked blind hand\'s missing-shares or missing-secret record carries a key round entry')
  const digest = docDigest(commitDoc)
  const ev = sortEvidence(COMMIT_REVEAL_DOCS, rule, body, commit, digest, verifyDoc, add)
  const ctx: Ctx = { body, signer: doc.signer, commit, commitDoc, digest, humans, author, ev, add, verifyDoc }
  rule.check(ctx)
  if (rule.blame === 'dealer') expectBlame(ctx, [commit.dealer], 'the dealer')
  if (rule.blame === 'nobody') expectBlame(ctx, [], 'nobody')
  return { ok: problems.length === 0, problems, summary }
}

interface Ctx {
  body: SignedAbort['body']
  /** The record's signer. */
  signer: string
  commit: CommitBody
  commitDoc: SignedCommit
  digest: string
  humans: number[]
  author: number
  ev: Evidence
  add: (code: ReasonCode, message: string) => void
  verifyDoc: (doc: Signed<unknown>) => boolean
}

/** The commit–reveal family's documents, for the one evidence sorter (src/core/hand/evidence.ts). */
const COMMIT_REVEAL_DOCS: EvidenceDocs<Evidence> = {
  schemas: SCHEMAS,
  seatTypes: new Set(['pledge', 'nonce', 'view']),
  seatSigner: (commit, seat) => typeof seat === 'number' && commit.seats[seat] !== ROBOT ? commit.seats[seat] : undefined,
  seatSignerName: 'the seat it names',
  notListed: (reason, type) => `a ${reason} record carries no ${type}`,
  empty: () => ({ pledges: [], nonces: [], pledgesDocs: [], cards: [], reveals: [], commits: [], views: [] }),
  file: (ev, type, doc, { commit, digest, what, verifyDoc, add }) => {
    switch (type) {
      case 'pledge': ev.pledges.push(doc as SignedPledge); break
      case 'nonce': ev.nonces.push(doc as SignedNonce); break
      case 'pledges': ev.pledgesDocs.push(doc as Signed<PledgesBody>); break
      case 'cards': ev.cards.push(doc as Signed<CardsBody>); break
      case 'reveal': ev.reveals.push(doc as SignedReveal); break
      case 'commit': ev.commits.push(doc as SignedCommit); break
      case 'view': if (viewHolds(doc as Signed<ViewBody>, commit, digest, what, verifyDoc, add)) ev.views.push(doc as Signed<ViewBody>); break
    }
  }
}

/**
 * A seat's VIEW as evidence: it carries exactly the record's COMMIT, and a PLEDGES document signed
 * by the dealer for that COMMIT whose digest is the one the VIEW names (so it shows what its seat
 * was shown, and only that).
 */
function viewHolds (
  view: Signed<ViewBody>, commit: CommitBody, digest: string, what: string,
  verifyDoc: (doc: Signed<unknown>) => boolean, add: (code: ReasonCode, message: string) => void
): boolean {
  const { commitDoc, pledgesDoc } = view.body
  if (docDigest(commitDoc) !== digest) { add(Reason.ABORT_FOREIGN_EVIDENCE, `${what}: carries another COMMIT than the record's`); return false }
  if (pledgesDoc.signer !== commit.dealer) { add(Reason.WRONG_SIGNER, `${what}: its PLEDGES are not signed by the dealer`); return false }
  if (!verifyDoc(pledgesDoc)) { add(Reason.BAD_SIGNATURE, `${what}: its PLEDGES have a bad signature`); return false }
  if (pledgesDoc.body.table !== commit.table || pledgesDoc.body.hand !== commit.hand || pledgesDoc.body.commit !== digest) {
    add(Reason.ABORT_FOREIGN_EVIDENCE, `${what}: its PLEDGES are for another hand or COMMIT`)
    return false
  }
  if (docDigest(pledgesDoc) !== view.body.pledges) { add(Reason.ABORT_EVIDENCE, `${what}: names other PLEDGES than the ones it carries`); return false }
  return true
}

/**
 * The views of a record, one per seat, all naming one PLEDGES document (views naming two are the
 * dealer's equivocation, never evidence that a seat held a hand up). Returns them by seat, and the
 * PLEDGES they name.
 */
function viewsBySeat (ctx: Ctx): { views: Map<number, Signed<ViewBody>>, pledgesDoc?: Signed<PledgesBody> } {
  const views = bySeat(ctx, ctx.ev.views, 'view')
  const named = new Set([...views.values()].map(v => v.body.pledges))
  if (named.size > 1) ctx.add(Reason.ABORT_EVIDENCE, 'abort: its views name two different PLEDGES documents (that is the dealer\'s equivocation)')
  return { views, pledgesDoc: [...views.values()][0]?.body.pledgesDoc }
}

function otherDocOfHand (raw: RawEvidence, body: SignedAbort['body'], commit: CommitBody, verifyDoc: VerifyDoc): boolean {
  const b = raw.body as { table?: unknown, hand?: unknown } | null
  const parties = [commit.dealer, ...commit.seats.filter(s => s !== ROBOT)]
  return SCHEMAS[raw.type] === undefined && typeof b === 'object' && b !== null && b.table === body.table && b.hand === body.hand &&
    parties.includes(raw.signer) && verifyDoc(raw as Signed<unknown>)
}

/** One document per seat, none twice. */
function bySeat<T extends { body: { seat: number } }> (ctx: Ctx, docs: readonly T[], what: string): Map<number, T> {
  const out = new Map<number, T>()
  for (const d of docs) {
    if (out.has(d.body.seat)) ctx.add(Reason.SEAT_SET, `abort: two ${what}s of seat ${d.body.seat} in the evidence`)
    out.set(d.body.seat, d)
  }
  return out
}

function checkNoncesAgainst (ctx: Ctx, nonces: ReadonlyMap<number, SignedNonce>, pledges: ReadonlyMap<number, SignedPledge>): void {
  for (const [seat, n] of nonces) {
    const p = pledges.get(seat)
    if (p === undefined) ctx.add(Reason.ABORT_EVIDENCE, `abort: the nonce of seat ${seat} comes without its pledge`)
    else if (sha256Hex(n.body.nonce) !== p.body.nonceHash) ctx.add(Reason.NONCE_MISMATCH, `abort: the nonce of seat ${seat} does not match its pledge`)
  }
}

/** What a dealer's record holds, by seat: the pledges and nonces it received, the VIEWs it relays. */
interface DealerHeld {
  pledges: Map<number, SignedPledge>
  nonces: Map<number, SignedNonce>
  views: Map<number, Signed<ViewBody>>
}

/**
 * What every dealer's record keeps: the pledges (and nonces) it received, one per seat, each nonce
 * matching its pledge; no PLEDGES document; its pledges are the ones in the PLEDGES its VIEWs carry.
 * Each reason's own checks follow in its row.
 */
function dealerEvidence (ctx: Ctx): DealerHeld {
  const { ev, add } = ctx
  const pledges = bySeat(ctx, ev.pledges, 'pledge')
  const nonces = bySeat(ctx, ev.nonces, 'nonce')
  checkNoncesAgainst(ctx, nonces, pledges)
  const { views, pledgesDoc } = viewsBySeat(ctx)
  if (ev.pledgesDocs.length > 0) add(Reason.ABORT_EVIDENCE, 'abort: the dealer\'s record carries the pledges themselves, not a PLEDGES document')
  if (pledgesDoc !== undefined) {
    // The pledges the dealer received are the ones it sent out in the PLEDGES its seats viewed.
    for (const [seat, p] of pledges) {
      const sent = pledgesDoc.body.pledges.find(q => q.body.seat === seat)
      if (sent === undefined || docDigest(sent) !== docDigest(p)) add(Reason.ABORT_EVIDENCE, `abort: the pledge of seat ${seat} is not the one in the PLEDGES its views carry`)
    }
  }
  return { pledges, nonces, views }
}

/**
 * A time-locked hand is never given up once every seat has pledged: whoever pledged cannot opt out,
 * and every node opens the missing nonces (and the secret) from their timelocks once the bound round
 * is out (docs/protocol.md §16.4). `why` says what the record's own evidence shows.
 */
function notTimelocked (ctx: Ctx, why: string): void {
  if (ctx.commit.timelock !== undefined) {
    ctx.add(Reason.ABORT_TIMELOCKED, `abort: no ${ctx.body.reason} record on a time-locked hand ${why}: the hand is finished from its timelocks`)
  }
}

/** The dealer's record holds a pledge of every human seat: the PLEDGES went out (a time-locked hand can no longer be given up). */
function everyPledgeHeld (ctx: Ctx, held: DealerHeld): boolean {
  return ctx.humans.every(s => held.pledges.has(s))
}

/** Every human seat's pledge is in the evidence (`why` says which rule asks it). */
function everyPledge (ctx: Ctx, held: DealerHeld, why: string): void {
  for (const s of ctx.humans) if (!held.pledges.has(s)) ctx.add(Reason.ABORT_EVIDENCE, `abort: the pledge of seat ${s} is missing from the evidence (${why})`)
}

/** Nonces are sent only once every seat has pledged: a dealer's record holding a nonce holds every pledge. */
function pledgesBeforeNonces (ctx: Ctx, held: DealerHeld): void {
  if (held.nonces.size > 0) everyPledge(ctx, held, 'nonces are sent only once every seat has pledged')
}

/** missing-pledge (dealer): the pledges it received; blames exactly seats whose pledge is absent. */
function missingPledge (ctx: Ctx): void {
  const held = dealerEvidence(ctx)
  pledgesBeforeNonces(ctx, held)
  blameAmongAbsent(ctx, new Set(held.pledges.keys()), 'pledge')
}

/**
 * missing-nonce (dealer): every pledge, the nonces it received, and the VIEW of every seat but the
 * ones it blames. A seat sends its nonce once every other seat's VIEW has reached it, and the dealer
 * passes on the VIEWs it holds: only a dealer that holds the VIEW of every other seat than a blamed
 * one knows that seat could have sent its nonce. Otherwise a seat still waiting for a VIEW would be
 * blamed for another's silence. A table with one human seat has no VIEW.
 */
function missingNonce (ctx: Ctx): void {
  const { body, commit, humans, add } = ctx
  const held = dealerEvidence(ctx)
  notTimelocked(ctx, '(the dealer recovers the missing nonces)')
  if (humans.length > 1) {
    const needed = new Set<number>()
    for (const b of body.blame) for (const s of humans) if (s !== commit.seats.indexOf(b)) needed.add(s)
    for (const s of [...needed].sort((x, y) => x - y)) {
      if (!held.views.has(s)) add(Reason.ABORT_EVIDENCE, `abort: the VIEW of seat ${s} is missing from the evidence (a missing-nonce record carries the VIEW of every seat but the one it blames; without it, it is missing-view)`)
    }
  }
  everyPledge(ctx, held, 'a missing-nonce record carries every pledge')
  blameAmongAbsent(ctx, new Set(held.nonces.keys()), 'nonce')
}

/** missing-view signed by the dealer at its deadline: every pledge, the VIEWs it holds; blames seats with none. */
function dealerMissingView (ctx: Ctx): void {
  const held = dealerEvidence(ctx)
  notTimelocked(ctx, '(the dealer recovers the missing nonces)')
  everyPledge(ctx, held, 'nonces are sent only once every seat has pledged')
  blameAmongAbsent(ctx, new Set(held.views.keys()), 'VIEW')
}

/** beacon-unavailable (dealer, blaming nobody): every pledge and every nonce, on a hand that bound a beacon round. */
function beaconUnavailable (ctx: Ctx): void {
  const { humans, commit, add } = ctx
  const held = dealerEvidence(ctx)
  everyPledge(ctx, held, 'a beacon-unavailable record carries every pledge')
  for (const s of humans) if (!held.nonces.has(s)) add(Reason.ABORT_EVIDENCE, `abort: the nonce of seat ${s} is missing from the evidence (a beacon-unavailable record carries every nonce)`)
  if (commit.beacon === null) add(Reason.ABORT_NO_BEACON, 'abort: beacon-unavailable for a hand that bound no beacon round')
  notTimelocked(ctx, '(the dealer finishes it once the round can be had)')
}

/** unreachable (dealer, blaming nobody): what it received, with at least one seat's pledge or nonce absent. */
function unreachable (ctx: Ctx): void {
  const held = dealerEvidence(ctx)
  pledgesBeforeNonces(ctx, held)
  if (everyPledgeHeld(ctx, held)) notTimelocked(ctx, 'holding every pledge (the dealer recovers the missing nonces)')
  if (ctx.humans.every(s => held.pledges.has(s) && held.nonces.has(s))) {
    ctx.add(Reason.ABORT_EVIDENCE, 'abort: unreachable, but every pledge and nonce is in its evidence: no seat was missing')
  }
}

/** dealer-stopped (dealer, blaming itself): what it received, and the hand's secret, which opens the commitment. */
function dealerStopped (ctx: Ctx): void {
  const { body, commit, add } = ctx
  const held = dealerEvidence(ctx)
  pledgesBeforeNonces(ctx, held)
  if (everyPledgeHeld(ctx, held)) notTimelocked(ctx, 'holding every pledge (only a hand still pledging is stopped)')
  const secret = body.secret
  if (secret === undefined) add(Reason.ABORT_SECRET, 'abort: a dealer-stopped record publishes the hand\'s secret')
  else {
    try {
      if (cardSchemeFor(commit).commitment(secret) !== commit.commitment) add(Reason.ABORT_SECRET, 'abort: the published secret does not open the commitment')
    } catch (err) {
      add(Reason.SCHEME, `abort: ${(err as Error).message}`)
    }
  }
}

/**
 * Blame for a claim of absence: a non-empty part of the seats of H whose contribution (`held`) is
 * not in the record's evidence, each once, in seat order. Seats the author could not reach are not
 * blamed (the dealer's detail names them), so it may be a part, never a seat whose contribution it holds.
 */
function blameAmongAbsent (ctx: Ctx, held: ReadonlySet<number>, what: string): void {
  const { body, commit, humans, add } = ctx
  const reason = body.reason
  const missing = humans.filter(s => !held.has(s)).map(s => commit.seats[s])
  for (const b of body.blame) {
    const seat = commit.seats.indexOf(b)
    if (held.has(seat)) add(Reason.ABORT_BLAME, seat === ctx.author ? `abort: blames its own author (seat ${seat})` : `abort: blames seat ${seat}, whose ${what} is in its own evidence`)
    else if (!missing.includes(b)) add(Reason.ABORT_BLAME, `abort: blames ${b}, who holds no seat of the hand`)
  }
  if (missing.length === 0) add(Reason.ABORT_BLAME, `abort: ${reason} but every ${what} is in its own evidence`)
  else if (body.blame.length === 0) add(Reason.ABORT_BLAME, `abort: ${reason} blames nobody (a hand whose missing seats could not be reached is 'unreachable')`)
  const order = body.blame.map(b => commit.seats.indexOf(b))
  if (order.some((s, i) => i > 0 && s <= order[i - 1])) add(Reason.ORDER, 'abort: blame must list the seats once each, in seat order')
}

/**
 * missing-view signed by a seat still waiting for VIEWs at its own deadline (docs/protocol.md §7):
 * the PLEDGES it received, the VIEWs it holds (each naming those PLEDGES) and the other seats'
 * NONCEs it holds. It blames only seats of H, not itself, with no VIEW in it.
 */
function seatMissingView (ctx: Ctx): void {
  const { ev, author, add } = ctx
  if (ev.pledges.length > 0) add(Reason.ABORT_EVIDENCE, 'abort: a seat\'s missing-view record carries the PLEDGES it received, not single pledges')
  const fromDealer = onePledgesDoc(ctx)
  if (fromDealer === undefined) add(Reason.ABORT_EVIDENCE, 'abort: a seat\'s missing-view record carries the PLEDGES its author received')
  const { views } = viewsBySeat(ctx)
  if (fromDealer !== undefined) {
    const received = docDigest(ev.pledgesDocs[0])
    for (const v of views.values()) if (v.body.pledges !== received) add(Reason.ABORT_EVIDENCE, `abort: the VIEW of seat ${v.body.seat} names other PLEDGES than its author received (that is equivocation)`)
  }
  if (fromDealer !== undefined) checkNoncesAgainst(ctx, bySeat(ctx, ev.nonces, 'nonce'), fromDealer)
  blameAmongAbsent(ctx, new Set([...views.keys(), author]), 'VIEW')
}

/**
 * The one check of a PLEDGES document's pledges against its COMMIT (docs/protocol.md §10, "PLEDGES"):
 * one pledge per human seat, in strictly increasing seat order, each signed by its seat for this
 * table, hand and COMMIT (`digest`). A seat accepts a PLEDGES only when it finds nothing here, so
 * every record it later signs with that PLEDGES as evidence keeps this rule; the abort rules run
 * it on every PLEDGES a record carries. (The PLEDGES' own signer and signature are the caller's.)
 */
export function pledgesDocProblems (commit: CommitBody, digest: string, doc: Signed<PledgesBody>, verifyDoc: VerifyDoc): Problem[] {
  const problems: Problem[] = []
  const add = (code: ReasonCode, message: string): void => { problems.push(problem(code, message)) }
  const humans = humanSeats(commit.seats)
  const seen = new Set<number>()
  const seats = doc.body.pledges.map(p => p.body.seat)
  if (seats.some((s, i) => i > 0 && s <= seats[i - 1])) add(Reason.ORDER, 'the PLEDGES are not in strictly increasing seat order')
  for (const p of doc.body.pledges) {
    const what = `the PLEDGES' pledge of seat ${p.body.seat}`
    if (!humans.includes(p.body.seat) || seen.has(p.body.seat)) add(Reason.SEAT_SET, `${what}: not one pledge per human seat`)
    seen.add(p.body.seat)
    if (p.signer !== commit.seats[p.body.seat]) add(Reason.WRONG_SIGNER, `${what}: not signed by that seat`)
    else if (!verifyDoc(p)) add(Reason.BAD_SIGNATURE, `${what}: bad signature`)
    if (p.body.table !== commit.table || p.body.hand !== commit.hand || p.body.commit !== digest) add(Reason.ABORT_FOREIGN_EVIDENCE, `${what}: for another hand or COMMIT`)
  }
  for (const s of humans) if (!seen.has(s)) add(Reason.SEAT_SET, `the PLEDGES have no pledge of seat ${s}`)
  return problems
}

/** One PLEDGES document of the dealer's in a record (pledgesDocProblems); returns its pledges by seat. */
function checkPledgesDoc (ctx: Ctx, doc: Signed<PledgesBody>): Map<number, SignedPledge> {
  for (const p of pledgesDocProblems(ctx.commit, ctx.digest, doc, ctx.verifyDoc)) ctx.add(p.code, `abort: ${p.message}`)
  return new Map(doc.body.pledges.map(p => [p.body.seat, p]))
}

/** The one PLEDGES document a seat's record may carry, checked; undefined when there is none. */
function onePledgesDoc (ctx: Ctx): Map<number, SignedPledge> | undefined {
  const docs = ctx.ev.pledgesDocs
  if (docs.length > 1) ctx.add(Reason.ABORT_EVIDENCE, 'abort: two PLEDGES documents (that is equivocation, not this reason)')
  return docs.length === 0 ? undefined : checkPledgesDoc(ctx, docs[0])
}

/** The author's own NONCE, matching its pledge; the only nonce a seat's record carries. */
function authorNonce (ctx: Ctx, pledges: ReadonlyMap<number, SignedPledge>, required: boolean): void {
  const { ev, author, add } = ctx
  for (const n of ev.nonces) if (n.body.seat !== author) add(Reason.ABORT_EVIDENCE, `abort: carries the nonce of seat ${n.body.seat}, which its author never holds`)
  const own = ev.nonces.filter(n => n.body.seat === author)
  if (own.length > 1) add(Reason.SEAT_SET, 'abort: its author\'s nonce appears twice')
  if (own.length === 0) {
    if (required) add(Reason.ABORT_EVIDENCE, `abort: a ${ctx.body.reason} record carries its author's NONCE (sent once the PLEDGES came)`)
    return
  }
  checkNoncesAgainst(ctx, new Map([[author, own[0]]]), pledges)
}

/**
 * missing-deal: everything the seat held. Before the PLEDGES, its own PLEDGE; after, the dealer's
 * PLEDGES (holding its pledge) and its own NONCE. Nothing else.
 */
function missingDeal (ctx: Ctx): void {
  const { ev, author, add } = ctx
  bySeat(ctx, ev.pledges, 'pledge')
  for (const p of ev.pledges) if (p.body.seat !== author) add(Reason.ABORT_EVIDENCE, `abort: carries the pledge of seat ${p.body.seat}, not its author's`)
  const fromDealer = onePledgesDoc(ctx)
  if (fromDealer === undefined) {
    if (!ev.pledges.some(p => p.body.seat === author)) add(Reason.ABORT_EVIDENCE, 'abort: a missing-deal record carries its author\'s PLEDGE, or the PLEDGES and its NONCE')
    if (ev.nonces.length > 0) add(Reason.ABORT_EVIDENCE, 'abort: a NONCE without the PLEDGES it answered')
    return
  }
  const own = ev.pledges.find(p => p.body.seat === author)
  if (own !== undefined && docDigest(own) !== docDigest(fromDealer.get(author))) add(Reason.ABORT_EVIDENCE, 'abort: its author\'s PLEDGE is not the one in the PLEDGES')
  authorNonce(ctx, fromDealer, true)
  if (ev.nonces.some(n => n.body.seat === author)) notTimelocked(ctx, 'after its author\'s NONCE went out')
}

/** missing-reveal: the PLEDGES, the author's NONCE and the CARDS it received (at least one). */
function missingReveal (ctx: Ctx): void {
  const fromDealer = onePledgesDoc(ctx)
  if (fromDealer === undefined) ctx.add(Reason.ABORT_EVIDENCE, 'abort: a missing-reveal record carries the PLEDGES its author received')
  authorNonce(ctx, fromDealer ?? new Map(), true)
  checkCards(ctx, dealsCards(ctx))
  notTimelocked(ctx, 'after the deal')
}

/** Whether the hand's game deals cards before it is played: a game of draws (shoe, dice) deals none, so its seats hold no CARDS. */
function dealsCards (ctx: Ctx): boolean {
  return !DRAW_GAMES.has(ctx.commit.game)
}

function checkCards (ctx: Ctx, required: boolean): void {
  const { ev, author, add } = ctx
  if (required && ev.cards.length === 0) add(Reason.ABORT_EVIDENCE, `abort: a ${ctx.body.reason} record carries the CARDS its author received`)
  const seen = new Set<string>()
  for (const c of ev.cards) {
    if (!c.body.public && c.body.seat !== author) add(Reason.ABORT_EVIDENCE, `abort: carries the private ${c.body.stage} cards of seat ${String(c.body.seat)}, which its author never receives`)
    const key = `${c.body.stage}/${String(c.body.seat)}`
    if (seen.has(key)) add(Reason.ABORT_EVIDENCE, `abort: the ${c.body.stage} cards of seat ${String(c.body.seat)} appear twice`)
    seen.add(key)
  }
}

/**
 * invalid-reveal: the REVEAL, the PLEDGES and the CARDS its author received; the verifier runs the
 * author's shield again on them, and a REVEAL that passes it refutes the record.
 */
function invalidReveal (ctx: Ctx): void {
  const { ev, add } = ctx
  const fromDealer = onePledgesDoc(ctx)
  if (fromDealer === undefined) add(Reason.ABORT_EVIDENCE, 'abort: an invalid-reveal record carries the PLEDGES its author received')
  if (ev.reveals.length !== 1) add(Reason.ABORT_EVIDENCE, 'abort: an invalid-reveal record carries exactly one REVEAL')
  authorNonce(ctx, fromDealer ?? new Map(), false)
  checkCards(ctx, dealsCards(ctx))
  if (fromDealer === undefined || ev.reveals.length !== 1) return
  const found = shieldProblems({
    commit: ctx.commitDoc, pledges: ev.pledgesDocs[0].body.pledges, reveal: ev.reveals[0], cards: ev.cards, seat: ctx.author
  }, { verifyDoc: ctx.verifyDoc })
  if (found.length === 0) add(Reason.ABORT_REFUTED, 'abort: the REVEAL in its evidence passes every check of the shield')
}

/**
 * equivocation: two conflicting documents signed by the dealer for this table and hand: another
 * COMMIT; or a PLEDGES answering another COMMIT; or two different PLEDGES answering this one; or a
 * PLEDGES of this COMMIT holding a pledge, signed by its seat, that answers another COMMIT (an
 * honest dealer refuses such a pledge, so only a dealer that showed that seat another COMMIT
 * relays it).
 */
function equivocation (ctx: Ctx): void {
  const { ev, digest, commit, humans, verifyDoc } = ctx
  const mine = ev.pledgesDocs.filter(d => d.body.commit === digest)
  const conflict =
    ev.commits.some(c => docDigest(c) !== digest) ||
    ev.pledgesDocs.some(d => d.body.commit !== digest) ||
    new Set(mine.map(d => docDigest(d))).size > 1 ||
    mine.some(d => d.body.pledges.some(p => p.body.commit !== digest && p.body.table === commit.table && p.body.hand === commit.hand &&
      humans.includes(p.body.seat) && p.signer === commit.seats[p.body.seat] && verifyDoc(p)))
  if (!conflict) ctx.add(Reason.ABORT_NO_CONFLICT, 'abort: equivocation claimed but the evidence holds no two conflicting documents signed by the dealer for this hand')
}

/**
 * broken-chain: a seat held the COMMIT of hand n−1 when the dealer sent it a COMMIT for hand n (the
 * record's) whose `prev` is not that COMMIT's digest: the dealer dropped or rewrote a hand the seat
 * knows of. The evidence is that earlier COMMIT (signed by the dealer, for this table and the
 * dealer the record's COMMIT names), and optionally the record's COMMIT itself; nothing else.
 */
function brokenChain (ctx: Ctx): void {
  const { ev, digest, commit, add } = ctx
  const known = ev.commits.filter(c => docDigest(c) !== digest)
  if (known.length !== 1) {
    add(Reason.ABORT_EVIDENCE, `abort: a broken-chain record carries exactly one COMMIT besides its own (it has ${known.length})`)
    return
  }
  const k = known[0].body
  if (k.dealer !== commit.dealer) add(Reason.ABORT_FOREIGN_EVIDENCE, 'abort: the earlier COMMIT names another dealer')
  else if (k.hand !== commit.hand - 1) add(Reason.ABORT_NO_BREAK, `abort: the earlier COMMIT is for hand ${k.hand}, not hand ${commit.hand - 1}, the one the record's COMMIT must link to`)
  else if (commit.prev === docDigest(known[0])) add(Reason.ABORT_NO_BREAK, `abort: the COMMIT of hand ${commit.hand} links to the earlier COMMIT: the chain is not broken`)
}

/**
 * released: a seat shows NONCEs and VIEWs of other seats it received for this COMMIT (seats send
 * both to every seat, §6 step 4): the PLEDGES it received, and at least one other seat's NONCE or
 * VIEW, each NONCE matching its pledge there, each VIEW naming those PLEDGES. Alone it blames
 * nobody; in a log it refutes a dealer's missing-nonce (missing-view) record for the same COMMIT
 * that blames one of those seats (src/core/log/hand-chain.ts).
 */
function released (ctx: Ctx): void {
  const { ev, author, add } = ctx
  const fromDealer = onePledgesDoc(ctx)
  if (fromDealer === undefined) add(Reason.ABORT_EVIDENCE, 'abort: a released record carries the PLEDGES its author received')
  const nonces = bySeat(ctx, ev.nonces, 'nonce')
  const { views } = viewsBySeat(ctx)
  if (nonces.size + views.size === 0) add(Reason.ABORT_EVIDENCE, 'abort: a released record carries at least one NONCE or VIEW of another seat')
  if (nonces.has(author) || views.has(author)) add(Reason.ABORT_EVIDENCE, 'abort: a released record shows other seats\' NONCEs and VIEWs, not its author\'s own')
  if (fromDealer === undefined) return
  checkNoncesAgainst(ctx, nonces, fromDealer)
  const received = docDigest(ev.pledgesDocs[0])
  for (const v of views.values()) if (v.body.pledges !== received) add(Reason.ABORT_EVIDENCE, `abort: the VIEW of seat ${v.body.seat} names other PLEDGES than its author received`)
}

/** The name the verifiers use: an abort record verifies when it keeps every rule of its reason. */
export const verifyAbort = checkAbortRecord
