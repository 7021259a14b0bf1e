import * as z from 'zod'
import { checkBunlock, checkKeyTimelock, keyRoundProblem, oneHandKeyPerSeat, openHandKey } from './blind-timelock.js'
import type { Signed } from '../signed.js'
import { canonicalJson } from '../canonical.js'
import { type Ciphertext, type Point, decodeDeck } from '../blind/index.js'
import { getCardScheme } from '../schemes/registry.js'
import { docDigest } from './digest.js'
import { humanSeats } from './recompute.js'
import { Reason, type Problem, type ReasonCode } from './reasons.js'
import { checkBeaconEntry, checkSeatOrder, checkStageOrder } from './verdict.js'
import { expectBlame, sortEvidence, type AddProblem, type EvidenceDocs, type EvidenceRow, type VerifyDoc } from './evidence.js'
import { signedCommitSchema, type AbortReason, type CommitBody, type SignedAbort, type SignedCommit } from './messages.js'
import {
  signedBdealSchema, signedBendSchema, signedBkeySchema, signedBkeysSchema, signedBrevealSchema, signedBsecretSchema,
  signedBsharesSchema, signedBshuffleSchema,
  type BdealBody, type BendBody, type BkeysBody, type SignedBkey, type SignedBreveal, type SignedBsecret, type SignedBshares,
  type SignedBshuffle
} from './blind-messages.js'
import {
  beaconPermutation, blindJointKey, blindLayout, blindStartingDeck, checkBkey, checkBlindCommit, checkBsecret, checkBshares,
  checkBshuffle, dealtDeck, proverOf
} from './blind.js'

/**
 * The abort-record rules of a dealer-blind hand (scheme blind-v1; docs/dealer-blind.md §13), called
 * by the one rule set (checkAbortRecord, src/core/hand/abort-rules.ts) for every record whose COMMIT
 * names a blind scheme. Per reason: who may sign it, whom it may blame, which evidence it carries;
 * every piece of evidence is a blind document of this table, hand and COMMIT, signed by the party
 * that makes it. An `invalid-*` record carries the signed document whose proof fails and what is
 * needed to check that proof again; the check runs here (with the blind core's own verifiers), and
 * a proof that passes refutes the record. A claim of absence carries what its author held of that
 * step and never blames a party whose contribution is in it.
 */

type Add = AddProblem

/** Who may sign a blind record, whom it may blame, which evidence types it may carry, and its own check. */
interface BlindRule extends EvidenceRow {
  signers: ReadonlyArray<'dealer' | 'seat'>
  /**
   * `dealer` and `nobody` are checked before the row's check; the others by it: `absent` = exactly
   * the human seats whose contribution is absent from its evidence, in seat order; `turn` = the
   * prover whose shuffle was next; `accused` = the author of the faulty document in its evidence.
   */
  blame: 'dealer' | 'nobody' | 'absent' | 'turn' | 'accused'
  check: (ctx: Ctx) => void
}

/**
 * The blind family's rules, one row per reason (docs/dealer-blind.md §13: one row of its table
 * each). Reasons not listed do not occur in a blind hand.
 */
const BLIND_RULES: Readonly<Partial<Record<AbortReason, BlindRule>>> = {
  'missing-key': { signers: ['dealer'], blame: 'absent', evidence: ['bkey'], check: ctx => { missingKey(ctx) } },
  'missing-shuffle': { signers: ['dealer', 'seat'], blame: 'turn', evidence: ['bkey', 'bkeys', 'bshuffle'], check: ctx => { missingShuffle(ctx) } },
  'missing-shares': { signers: ['dealer'], blame: 'absent', evidence: ['bdeal', 'bshares', 'bkey'], check: ctx => { missingShares(ctx) } },
  'missing-secret': { signers: ['dealer'], blame: 'absent', evidence: ['bend', 'bsecret', 'bkey'], check: ctx => { missingSecret(ctx) } },
  'invalid-key': { signers: ['dealer', 'seat'], blame: 'accused', evidence: ['bkey', 'bkeys'], check: ctx => { invalidKey(ctx) } },
  'invalid-shuffle': { signers: ['dealer', 'seat'], blame: 'accused', evidence: ['bkey', 'bkeys', 'bshuffle'], check: ctx => { invalidShuffle(ctx) } },
  'invalid-shares': { signers: ['dealer', 'seat'], blame: 'accused', evidence: ['bkey', 'bkeys', 'bshuffle', 'bdeal', 'bshares'], check: ctx => { invalidShares(ctx) } },
  'missing-deal': { signers: ['seat'], blame: 'dealer', evidence: ['bkey', 'bkeys', 'bshuffle'], check: ctx => { missingDeal(ctx) } },
  'missing-reveal': { signers: ['seat'], blame: 'dealer', evidence: ['bdeal', 'bend', 'bsecret'], check: ctx => { missingReveal(ctx) } },
  'invalid-reveal': { signers: ['seat'], blame: 'dealer', evidence: ['bkey', 'bkeys', 'bdeal', 'breveal'], check: ctx => { invalidReveal(ctx) } },
  // Its COMMIT may be another (that is what it shows).
  equivocation: { signers: ['seat'], blame: 'dealer', evidence: ['commit', 'bkeys', 'bdeal', 'breveal'], otherCommit: ['commit'], check: ctx => { equivocation(ctx) } },
  'dealer-stopped': { signers: ['dealer'], blame: 'dealer', evidence: ['bkey', 'bkeys', 'bshuffle', 'bdeal', 'bshares', 'bend', 'bsecret'], check: () => {} },
  'beacon-unavailable': {
    signers: ['dealer'], blame: 'nobody', evidence: ['bkey', 'bkeys', 'bshuffle'],
    check: ctx => { if (ctx.commit.beacon === null) ctx.add(Reason.ABORT_NO_BEACON, 'abort: beacon-unavailable for a hand that bound no beacon round') }
  }
}

/** Who signs each reason in a blind hand (the signers column of the table). Reasons not listed do not occur in a blind hand. */
export const BLIND_ABORT_SIGNERS: Readonly<Partial<Record<AbortReason, ReadonlyArray<'dealer' | 'seat'>>>> = Object.fromEntries(
  Object.entries(BLIND_RULES).map(([reason, rule]) => [reason, rule.signers])
)

/** The reasons only a blind hand has: a commit-reveal hand's record may not use them. */
export const BLIND_ONLY_REASONS: readonly AbortReason[] = [
  'missing-key', 'missing-shuffle', 'missing-shares', 'missing-secret', 'invalid-key', 'invalid-shuffle', 'invalid-shares'
]

const SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  commit: signedCommitSchema,
  bkey: signedBkeySchema,
  bkeys: signedBkeysSchema,
  bshuffle: signedBshuffleSchema,
  bdeal: signedBdealSchema,
  bshares: signedBsharesSchema,
  bend: signedBendSchema,
  bsecret: signedBsecretSchema,
  breveal: signedBrevealSchema
}
/** Documents a seat makes (signed by the seat's peer, or by the dealer for a robot seat); the others are the dealer's. */
const SEAT_DOCS = new Set(['bkey', 'bshuffle', 'bshares', 'bsecret'])

interface Ev {
  /** Every seat's BKEY found, given alone or inside a BKEYS whose key checks out, by seat. */
  keys: Map<number, SignedBkey>
  keysDocs: Array<Signed<BkeysBody>>
  shuffles: Map<number, SignedBshuffle>
  deals: Array<Signed<BdealBody>>
  shares: SignedBshares[]
  ends: Array<Signed<BendBody>>
  secrets: Map<number, SignedBsecret>
  reveals: SignedBreveal[]
  commits: SignedCommit[]
}

interface Ctx {
  body: SignedAbort['body']
  signer: string
  commit: CommitBody
  digest: string
  humans: number[]
  n: number
  ev: Ev
  add: Add
  verifyDoc: VerifyDoc
}

/** Checks a blind hand's abort record (its COMMIT's signature and hand are checked by the caller). */
export function checkBlindAbort (doc: SignedAbort, commitDoc: SignedCommit, verifyDoc: VerifyDoc, add: Add): void {
  const body = doc.body
  const commit = commitDoc.body
  const reason = body.reason
  const commitProblem = checkBlindCommit(commit)
  if (commitProblem !== null) { add(Reason.SCHEME, `abort: its commit: ${commitProblem}`); return }
  const rule = BLIND_RULES[reason]
  if (rule === undefined) { add(Reason.ABORT_REASON, `abort: ${reason} does not occur in a ${commit.scheme} hand (docs/dealer-blind.md §13)`); return }
  const humans = humanSeats(commit.seats)
  const bySeat = humans.some(s => commit.seats[s] === doc.signer)
  const byDealer = doc.signer === commit.dealer
  const signers = rule.signers
  if (!((signers.includes('dealer') && byDealer) || (signers.includes('seat') && bySeat))) {
    add(Reason.ABORT_SIGNER, `abort: only ${signers.map(s => s === 'dealer' ? 'the dealer' : 'a seat of the hand').join(' or ')} signs ${reason}`)
  }
  if (body.secret !== undefined) add(Reason.ABORT_SECRET, `abort: a ${commit.scheme} hand has no dealer secret to publish`)
  if (body.keyRound !== undefined && !((reason === 'missing-shares' || reason === 'missing-secret') && commit.keyRound !== undefined)) {
    add(Reason.ABORT_EVIDENCE, 'abort: only a time-locked hand\'s missing-shares or missing-secret record carries a key round entry')
  }
  const digest = docDigest(commitDoc)
  const ctx: Ctx = { body, signer: doc.signer, commit, digest, humans, n: commit.seats.length, ev: sortEvidence(BLIND_DOCS, rule, body, commit, digest, verifyDoc, add), add, verifyDoc }
  if (rule.blame === 'dealer') expectBlame(ctx, [commit.dealer], 'the dealer')
  if (rule.blame === 'nobody') expectBlame(ctx, [], 'nobody')
  rule.check(ctx)
}

/** A seat document's signer: the seat's peer, or the dealer for a robot seat; undefined for no seat of the hand. */
function seatProver (commit: CommitBody, seat: unknown): string | undefined {
  return typeof seat === 'number' && Number.isInteger(seat) && seat >= 0 && seat < commit.seats.length ? proverOf(commit, seat) : undefined
}

/**
 * The blind family's documents, for the one evidence sorter (src/core/hand/evidence.ts). One
 * document per seat and step: two different keys, shuffles or hand keys of one seat are refused.
 */
const BLIND_DOCS: EvidenceDocs<Ev> = {
  schemas: SCHEMAS,
  seatTypes: SEAT_DOCS,
  seatSigner: seatProver,
  seatSignerName: 'the seat it names (the dealer for a robot)',
  notListed: (reason, type, commit) => `a ${reason} record of a ${commit.scheme} hand carries no ${type}`,
  empty: () => ({ keys: new Map(), keysDocs: [], shuffles: new Map(), deals: [], shares: [], ends: [], secrets: new Map(), reveals: [], commits: [] }),
  file: (ev, type, d, { commit, digest, verifyDoc, add }) => {
    const once = <T extends { body: { seat: number } }>(map: Map<number, T>, doc: T, what: string): void => {
      const had = map.get(doc.body.seat)
      if (had !== undefined && docDigest(had) !== docDigest(doc)) add(Reason.SEAT_SET, `abort: two different ${what}s of seat ${doc.body.seat} in the evidence`)
      else map.set(doc.body.seat, doc)
    }
    switch (type) {
      case 'commit': ev.commits.push(d as SignedCommit); break
      case 'bkey': once(ev.keys, d as SignedBkey, 'key'); break
      case 'bkeys': {
        const keys = d as Signed<BkeysBody>
        ev.keysDocs.push(keys)
        for (const k of keys.body.keys) if (keyFault(commit, digest, k, verifyDoc) === null) once(ev.keys, k, 'key')
        break
      }
      case 'bshuffle': once(ev.shuffles, d as SignedBshuffle, 'shuffle'); break
      case 'bdeal': ev.deals.push(d as Signed<BdealBody>); break
      case 'bshares': ev.shares.push(d as SignedBshares); break
      case 'bend': ev.ends.push(d as Signed<BendBody>); break
      case 'bsecret': once(ev.secrets, d as SignedBsecret, 'hand key'); break
      case 'breveal': ev.reveals.push(d as SignedBreveal); break
    }
  }
}

/** Why a key relayed inside a BKEYS is not that seat's key for this hand and COMMIT; null when it is. */
function keyFault (commit: CommitBody, digest: string, k: SignedBkey, verifyDoc: VerifyDoc): string | null {
  if (k.signer !== seatProver(commit, k.body.seat)) return `the key of seat ${k.body.seat} is not signed by that seat`
  if (!verifyDoc(k)) return `the key of seat ${k.body.seat} has a bad signature`
  if (k.body.table !== commit.table || k.body.hand !== commit.hand) return `the key of seat ${k.body.seat} names another table or hand`
  if (k.body.commit !== digest) return `the key of seat ${k.body.seat} answers another COMMIT`
  return null
}

/** Blame = exactly the human seats in `absent`, in seat order, at least one. */
function blameAbsent (ctx: Ctx, absent: readonly number[], what: string): void {
  if (absent.length === 0) { ctx.add(Reason.ABORT_BLAME, `abort: ${ctx.body.reason} but every ${what} is in its own evidence`); return }
  const missing = absent.map(s => ctx.commit.seats[s])
  for (const b of ctx.body.blame) {
    const seat = ctx.commit.seats.indexOf(b)
    if (!missing.includes(b)) ctx.add(Reason.ABORT_BLAME, seat >= 0 ? `abort: blames seat ${seat}, whose ${what} is in its own evidence` : `abort: blames ${b}, who holds no seat of the hand`)
  }
  for (const [i, s] of absent.entries()) {
    if (ctx.body.blame[i] !== ctx.commit.seats[s]) { ctx.add(Reason.ABORT_BLAME, `abort: blame must be exactly the seats whose ${what} is absent from its evidence, in seat order (${absent.join(', ')})`); break }
  }
  if (ctx.body.blame.length > absent.length) ctx.add(Reason.ABORT_BLAME, 'abort: blames more parties than those whose contribution is absent')
}

/** Every seat's key must be in the evidence (alone or in the BKEYS); returns the public keys, or undefined. */
function allKeys (ctx: Ctx, why: string): Point[] | undefined {
  const { ev, n, add, commit, digest } = ctx
  const pubs: Point[] = []
  for (let s = 0; s < n; s++) {
    const k = ev.keys.get(s)
    if (k === undefined) { add(Reason.ABORT_EVIDENCE, `abort: the key of seat ${s} is missing from the evidence (${why})`); return undefined }
    const r = checkBkey(commit, digest, k)
    if ('problem' in r) { add(Reason.ABORT_EVIDENCE, `abort: the key of seat ${s} in the evidence fails: ${r.problem} (that is invalid-key)`); return undefined }
    pubs.push(r.pub)
  }
  return pubs
}

// ---- claims of absence ---------------------------------------------------------------------------

/** missing-key (dealer): every key it holds, the robots' included; blames exactly the human seats with none. */
function missingKey (ctx: Ctx): void {
  const { ev, humans, add, n } = ctx
  for (let s = 0; s < n; s++) if (!humans.includes(s) && !ev.keys.has(s)) add(Reason.ABORT_EVIDENCE, `abort: the key of robot seat ${s} (the dealer draws it before the COMMIT leaves) is missing from the evidence`)
  blameAbsent(ctx, humans.filter(s => !ev.keys.has(s)), 'key')
}

/**
 * missing-shuffle (dealer or seat): every seat's key, and the shuffle of the seat before the one
 * blamed (its input); no shuffle of the blamed seat or after. Blames that seat's prover.
 */
function missingShuffle (ctx: Ctx): void {
  const { commit, ev, add, n } = ctx
  allKeys(ctx, 'a missing-shuffle record carries every key: shuffling starts only once every key is in')
  const next = ev.shuffles.size === 0 ? 0 : Math.max(...ev.shuffles.keys()) + 1
  if (next >= n) { add(Reason.ABORT_BLAME, 'abort: missing-shuffle but every seat\'s shuffle is in its own evidence'); return }
  if (next > 0 && !ev.shuffles.has(next - 1)) add(Reason.ABORT_EVIDENCE, `abort: the shuffle of seat ${next - 1} is missing from the evidence`)
  expectBlame(ctx, [proverOf(commit, next)], `the prover of seat ${next}, whose turn it was (the seat after the last shuffle in its evidence)`)
}

/**
 * missing-shares (dealer): the BDEALs that asked for shares and every BSHARES it received for
 * them; blames exactly the human seats with a share document asked for and absent.
 */
function missingShares (ctx: Ctx): void {
  const { commit, ev, humans, add } = ctx
  if (ev.deals.length === 0) { add(Reason.ABORT_EVIDENCE, 'abort: a missing-shares record carries the BDEAL that asked for the shares'); return }
  const expected = new Set<string>()
  const stages = new Set<string>()
  for (const deal of ev.deals) {
    let layout
    try { layout = blindLayout(commit, deal.body.params) } catch (err) { add(Reason.SCHEME, `abort: its BDEAL: ${(err as Error).message}`); return }
    for (const stage of deal.body.stages) {
      if (stages.has(stage)) add(Reason.ABORT_EVIDENCE, `abort: two BDEALs ask for stage ${stage}`)
      stages.add(stage)
      for (const d of layout.filter(l => l.stage === stage)) {
        for (const s of humans) if (d.public || d.seat !== s) expected.add(`${stage}|${String(d.seat)}|${s}`)
      }
    }
  }
  const got = new Set<string>()
  for (const sh of ev.shares) {
    const key = `${sh.body.stage}|${String(sh.body.to)}|${sh.body.seat}`
    if (got.has(key)) add(Reason.SEAT_SET, `abort: two share documents of seat ${sh.body.seat} for ${sh.body.stage}/${String(sh.body.to)}`)
    else if (!expected.has(key) && humans.includes(sh.body.seat)) add(Reason.ABORT_EVIDENCE, `abort: shares of seat ${sh.body.seat} for ${sh.body.stage}/${String(sh.body.to)}, which no BDEAL in its evidence asked for`)
    got.add(key)
  }
  const absent = humans.filter(s => [...expected].some(k => k.endsWith(`|${s}`) && !got.has(k)))
  blameAbsent(ctx, stillSilent(ctx, absent), 'shares')
}

/**
 * On a time-locked hand (docs/dealer-blind.md §14.3) a seat's silence is not the end of the hand:
 * once the key round is out the dealer opens its timelock and goes on. So a missing-shares or
 * missing-secret record of such a hand carries the key round's entry (`keyRound`, verifying against
 * the COMMIT's chain) and the key (BKEY) of every seat whose contribution is absent, and only the
 * seats whose timelock does not open to their hand key with that entry are still absent: a seat
 * whose timelock opens was unlocked, not blamed [`abort-timelocked`]. Not time-locked: `absent` as it is.
 */
function stillSilent (ctx: Ctx, absent: readonly number[]): number[] {
  const { commit, body, ev, add } = ctx
  if (commit.keyRound === undefined) return [...absent]
  const entry = body.keyRound
  if (entry === undefined) {
    add(Reason.ABORT_TIMELOCKED, `abort: on a time-locked hand the dealer opens a silent seat's timelock once the key round ${commit.keyRound} is out (docs/dealer-blind.md §14.3): a ${body.reason} record carries that round's entry`)
    return [...absent]
  }
  const wrong = keyRoundProblem(commit, entry)
  if (wrong !== null) { add(Reason.ABORT_TIMELOCKED, `abort: its ${wrong}`); return [...absent] }
  const silent: number[] = []
  for (const s of absent) {
    const key = ev.keys.get(s)
    if (key === undefined) { add(Reason.ABORT_EVIDENCE, `abort: the key of seat ${s}, whose timelock the record says does not open, is missing from the evidence`); silent.push(s); continue }
    const r = checkBkey(commit, ctx.digest, key)
    if ('problem' in r) { add(Reason.ABORT_EVIDENCE, `abort: the key of seat ${s} in the evidence fails: ${r.problem}`); silent.push(s); continue }
    if (!('problem' in openHandKey(commit, key, r.pub, entry))) {
      // Unlocked, not silent; blaming it is this rule's fault alone (not also the blame rule's).
      if (!body.blame.includes(commit.seats[s])) continue
      add(Reason.ABORT_TIMELOCKED, `abort: blames seat ${s}, whose timelock opens to its hand key with the key round's entry: the dealer unlocks that seat (docs/dealer-blind.md §14.3)`)
    }
    silent.push(s)
  }
  return silent
}

/** missing-secret (dealer): its BEND and every hand key it received (the robots' too); blames exactly the human seats with none. */
function missingSecret (ctx: Ctx): void {
  const { ev, humans, add, n } = ctx
  if (ev.ends.length !== 1) add(Reason.ABORT_EVIDENCE, 'abort: a missing-secret record carries the BEND that asked for the hand keys')
  for (let s = 0; s < n; s++) if (!humans.includes(s) && !ev.secrets.has(s)) add(Reason.ABORT_EVIDENCE, `abort: the hand key of robot seat ${s} (the dealer's own) is missing from the evidence`)
  blameAbsent(ctx, stillSilent(ctx, humans.filter(s => !ev.secrets.has(s))), 'hand key')
}

/**
 * missing-deal (seat): the dealer never went on. Its own key (nothing relayed yet), or every key
 * and the last seat's shuffle (every seat shuffled; the dealer owes the BDEAL).
 */
function missingDeal (ctx: Ctx): void {
  const { commit, ev, add, n } = ctx
  const author = commit.seats.indexOf(ctx.signer)
  if (!ev.keys.has(author)) add(Reason.ABORT_EVIDENCE, 'abort: a missing-deal record carries its author\'s own key')
  if (ev.shuffles.size > 0 || ev.keysDocs.length > 0) {
    allKeys(ctx, 'the keys the dealer relayed')
    if (ev.shuffles.size > 0 && !ev.shuffles.has(n - 1)) add(Reason.ABORT_EVIDENCE, `abort: a missing-deal record after the shuffles carries the last one (seat ${n - 1}); before it, the silence is missing-shuffle`)
  }
}

/**
 * missing-reveal (seat): the dealer dealt (a BDEAL) and never revealed. If the dealer ended the
 * hand (its BEND is in the evidence), the author's own hand key, sent in answer, is too.
 */
function missingReveal (ctx: Ctx): void {
  const { commit, ev, add } = ctx
  const author = commit.seats.indexOf(ctx.signer)
  if (ev.deals.length === 0) add(Reason.ABORT_EVIDENCE, 'abort: a missing-reveal record carries the BDEAL its author received')
  for (const s of ev.secrets.keys()) if (s !== author) add(Reason.ABORT_EVIDENCE, `abort: carries the hand key of seat ${s}, which its author never holds before the reveal`)
  if (ev.ends.length > 0 && !ev.secrets.has(author)) add(Reason.ABORT_EVIDENCE, 'abort: the dealer ended the hand (BEND in the evidence): the record carries its author\'s hand key, sent in answer')
}

// ---- claims of a faulty document: re-checked here ------------------------------------------------

/** The one party an invalid-* record blames. */
function oneBlamed (ctx: Ctx): string | undefined {
  if (ctx.body.blame.length !== 1) { ctx.add(Reason.ABORT_BLAME, `abort: a ${ctx.body.reason} record blames exactly one party`); return undefined }
  return ctx.body.blame[0]
}

/**
 * invalid-key: the BKEY whose proof fails (alone or inside the BKEYS), blaming its prover; or, a
 * seat's record blaming the dealer, the dealer's BKEYS relaying a key that is not its seat's key
 * for this hand (bad or missing signature, out of seat order). Re-checked: a key that passes refutes it.
 */
function invalidKey (ctx: Ctx): void {
  const { commit, digest, ev, add, verifyDoc, n } = ctx
  const blamed = oneBlamed(ctx)
  if (blamed === undefined) return
  // A seat's record blaming the dealer for what its BKEYS relays.
  const badRelay = blamed === commit.dealer && ctx.signer !== commit.dealer && ev.keysDocs.some(doc =>
    doc.body.keys.length !== n || doc.body.keys.some((k, i) => k.body.seat !== i || keyFault(commit, digest, k, verifyDoc) !== null))
  if (badRelay) return
  const accused = [...ev.keys.values()].filter(k => k.signer === blamed)
  if (accused.length === 0) {
    if (blamed === commit.dealer && ev.keysDocs.length > 0) add(Reason.ABORT_REFUTED, 'abort: the BKEYS in its evidence relays every seat\'s key, signed by that seat for this hand')
    else add(Reason.ABORT_EVIDENCE, 'abort: an invalid-key record carries the key of the party it blames (or the BKEYS that relays it)')
    return
  }
  // On a time-locked hand a key without its timelock, or locked to another target, is faulty too (docs/dealer-blind.md §14).
  if (accused.every(k => !('problem' in checkBkey(commit, digest, k)) && checkKeyTimelock(commit, k) === null)) add(Reason.ABORT_REFUTED, 'abort: the key in its evidence passes its proof of knowledge (and carries its timelock)')
}

/**
 * invalid-shuffle: the BSHUFFLE whose proof fails (the highest seat's in the evidence), every key,
 * and its input (the previous seat's shuffle; the public starting deck for seat 0). Re-checked
 * with the blind core's verifier: a proof that passes refutes the record.
 */
function invalidShuffle (ctx: Ctx): void {
  const { commit, digest, ev, add } = ctx
  const blamed = oneBlamed(ctx)
  if (ev.shuffles.size === 0) { add(Reason.ABORT_EVIDENCE, 'abort: an invalid-shuffle record carries the shuffle it blames'); return }
  const k = Math.max(...ev.shuffles.keys())
  const accused = ev.shuffles.get(k) as SignedBshuffle
  if (blamed !== undefined && blamed !== accused.signer) add(Reason.ABORT_BLAME, `abort: blames ${blamed}, not the author of the shuffle in its evidence (seat ${k})`)
  const pubs = allKeys(ctx, 'the shuffle proof is checked against the joint key')
  let input: Ciphertext[] | undefined
  if (k === 0) input = blindStartingDeck(commit.game)
  else {
    const prev = ev.shuffles.get(k - 1)
    if (prev === undefined) add(Reason.ABORT_EVIDENCE, `abort: the shuffle of seat ${k - 1} (the input of seat ${k}'s) is missing from the evidence`)
    else {
      try { input = decodeDeck(prev.body.deck, 'deck') } catch (err) { add(Reason.ABORT_EVIDENCE, `abort: the deck of seat ${k - 1}'s shuffle does not decode (${(err as Error).message}): that shuffle is the faulty one`) }
    }
  }
  if (pubs === undefined || input === undefined) return
  const r = checkBshuffle(commit, digest, accused, blindJointKey(pubs), input)
  if (!('problem' in r)) add(Reason.ABORT_REFUTED, `abort: the shuffle of seat ${k} in its evidence passes its proof`)
}

/**
 * invalid-shares: the BSHARES whose proof fails, its seat's key, the last shuffle and the BDEAL of
 * its stage (which give the dealt deck and the positions). Re-checked: shares that verify refute it.
 */
function invalidShares (ctx: Ctx): void {
  const { commit, digest, ev, add, n } = ctx
  const blamed = oneBlamed(ctx)
  if (ev.shares.length !== 1) { add(Reason.ABORT_EVIDENCE, 'abort: an invalid-shares record carries exactly one share document, the one it blames'); return }
  const accused = ev.shares[0]
  if (blamed !== undefined && blamed !== accused.signer) add(Reason.ABORT_BLAME, `abort: blames ${blamed}, not the author of the shares in its evidence`)
  const key = ev.keys.get(accused.body.seat)
  const last = ev.shuffles.get(n - 1)
  const deal = ev.deals.find(d => d.body.stages.includes(accused.body.stage))
  if (key === undefined) add(Reason.ABORT_EVIDENCE, `abort: the key of seat ${accused.body.seat} (the shares' author) is missing from the evidence`)
  if (last === undefined) add(Reason.ABORT_EVIDENCE, `abort: the last shuffle (seat ${n - 1}, which gives the dealt deck) is missing from the evidence`)
  if (deal === undefined) add(Reason.ABORT_EVIDENCE, `abort: the BDEAL of stage ${accused.body.stage} is missing from the evidence`)
  if (key === undefined || last === undefined || deal === undefined) return
  const pub = checkBkey(commit, digest, key)
  if ('problem' in pub) { add(Reason.ABORT_EVIDENCE, `abort: the key of seat ${accused.body.seat} fails: ${pub.problem} (that is invalid-key)`); return }
  let deck: Ciphertext[]
  try { deck = decodeDeck(last.body.deck, 'deck') } catch (err) { add(Reason.ABORT_EVIDENCE, `abort: the last shuffle's deck does not decode (${(err as Error).message})`); return }
  // The game's deck, card for card: a shuffle with another count cannot have been shuffled from it (§5).
  const size = blindStartingDeck(commit.game).length
  if (deck.length !== size) { add(Reason.ABORT_EVIDENCE, `abort: the last shuffle's deck holds ${deck.length} ciphertexts, not the ${size} of ${commit.game}`); return }
  const dealt = dealtDeck(deck, beaconPermutation(deal.body.beacon?.randomness ?? null, docDigest(last), deck.length))
  let layout
  try { layout = blindLayout(commit, deal.body.params) } catch { return } // no layout for these parameters: the shares answer nothing valid
  const d = layout.find(l => l.stage === accused.body.stage && l.seat === accused.body.to)
  if (d === undefined || (!d.public && d.seat === accused.body.seat)) return // shares for no delivery of the hand, or for the author's own cards: faulty as they stand
  const r = checkBshares(commit, digest, accused, pub.pub, dealt, d.positions)
  if (!('problem' in r)) add(Reason.ABORT_REFUTED, `abort: the shares of seat ${accused.body.seat} in its evidence all verify`)
}

/**
 * invalid-reveal (seat, blaming the dealer): the dealer's BDEAL or BREVEAL that fails a check its
 * author runs on it; a BREVEAL comes with every key and the BDEALs it received. Re-checked: beacon
 * entry, deal parameters, stages, and for a BREVEAL each hand key against its seat's key and the
 * agreement with the BDEALs. None failing refutes the record.
 */
function invalidReveal (ctx: Ctx): void {
  const { commit, ev, add, verifyDoc, digest } = ctx
  const reveal = ev.reveals[0]
  if (ev.reveals.length > 1) { add(Reason.ABORT_EVIDENCE, 'abort: two BREVEALs (that is equivocation)'); return }
  if (reveal === undefined && ev.deals.length !== 1) { add(Reason.ABORT_EVIDENCE, 'abort: an invalid-reveal record carries the BREVEAL, or the one BDEAL, it blames'); return }
  const accused = reveal?.body ?? ev.deals[0].body
  const faults: string[] = []
  faults.push(...checkBeaconEntry(commit, accused.beacon).map(p => p.message))
  if (accused.params.dealer !== commit.params.dealer) faults.push('changes the committed dealer seat')
  if (commit.params.taker !== undefined && accused.params.taker !== commit.params.taker) faults.push('changes the committed taker')
  const stages = getCardScheme(commit.scheme).stagesFor(commit.game)
  if (accused.stages.some(s => !stages.includes(s))) faults.push('names a stage the game does not have')
  try { blindLayout(commit, accused.params) } catch (err) { faults.push((err as Error).message) }
  if (reveal !== undefined) {
    if (ev.deals.length === 0) { add(Reason.ABORT_EVIDENCE, 'abort: an invalid-reveal record against a BREVEAL carries the BDEALs its author received'); return }
    // The receipt's stage list rule (docs/dealer-blind.md §10 step 1), the one its author ran.
    const listed: Problem[] = []
    checkStageOrder(commit.game, stages, reveal.body.stages, listed)
    faults.push(...listed.map(p => p.message))
    const pubs = allKeys(ctx, 'the hand keys are checked against them')
    if (pubs === undefined) return
    for (const deal of ev.deals) {
      if (canonicalJson(deal.body.beacon) !== canonicalJson(reveal.body.beacon)) faults.push('its beacon entry is not the BDEAL\'s')
      if (deal.body.params.dealer !== reveal.body.params.dealer || (deal.body.params.taker !== undefined && deal.body.params.taker !== reveal.body.params.taker)) faults.push('its deal parameters are not the BDEAL\'s')
      if (deal.body.stages.some(s => !reveal.body.stages.includes(s))) faults.push('leaves out a stage that was dealt')
    }
    // The hand keys as the receipt's rule has them (§10 steps 1 and 4): one per seat, a BSECRET
    // (in seat order) or an entry of the BREVEAL's unlock, which must pass §14.2's checks.
    const secrets = reveal.body.secrets
    const order: Problem[] = []
    checkSeatOrder('hand keys', secrets.map(s => s.body.seat), order)
    if (!oneHandKeyPerSeat(reveal.body, ctx.n) || order.length > 0) faults.push('not one hand key per seat (published in seat order, or unlocked)')
    else {
      for (const s of secrets) {
        if (!verifyDoc(s)) { faults.push(`the hand key of seat ${s.body.seat} has a bad signature`); continue }
        const r = checkBsecret(commit, digest, s, pubs[s.body.seat])
        if ('problem' in r) faults.push(`hand key of seat ${s.body.seat}: ${r.problem}`)
      }
      if (reveal.body.unlock !== undefined) {
        const keyDocs = Array.from({ length: ctx.n }, (_, s) => ev.keys.get(s)).filter((k): k is SignedBkey => k !== undefined)
        const r = checkBunlock(commit, digest, reveal.body.unlock, keyDocs, pubs, verifyDoc, true)
        if ('problems' in r) faults.push(...r.problems)
      }
    }
  }
  if (faults.length === 0) add(Reason.ABORT_REFUTED, `abort: the ${reveal === undefined ? 'BDEAL' : 'BREVEAL'} in its evidence passes every check its author runs on it`)
}

/**
 * equivocation (seat, blaming the dealer): two conflicting documents signed by the dealer for this
 * table and hand: another COMMIT; a BKEYS of this COMMIT relaying a key, signed by its seat for
 * this hand, that answers another COMMIT; two different BKEYS or BREVEALs for this COMMIT; two
 * BDEALs dealing one stage differently.
 */
function equivocation (ctx: Ctx): void {
  const { commit, digest, ev, verifyDoc } = ctx
  const distinct = (docs: ReadonlyArray<Signed<unknown>>): boolean => new Set(docs.map(d => docDigest(d))).size > 1
  const conflict =
    ev.commits.some(c => docDigest(c) !== digest) ||
    ev.keysDocs.some(d => d.body.keys.some(k => k.signer === seatProver(commit, k.body.seat) && k.body.table === commit.table &&
      k.body.hand === commit.hand && k.body.commit !== digest && verifyDoc(k))) ||
    distinct(ev.keysDocs) || distinct(ev.reveals) ||
    ev.deals.some((a, i) => ev.deals.some((b, j) => j > i && a.body.stages.some(s => b.body.stages.includes(s)) && docDigest(a) !== docDigest(b)))
  if (!conflict) ctx.add(Reason.ABORT_NO_CONFLICT, 'abort: equivocation claimed but the evidence holds no two conflicting documents signed by the dealer for this hand')
}
