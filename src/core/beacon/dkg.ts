import { CoreInputError } from '../errors.js'
import { canonicalBytes } from '../canonical.js'
import { signDocument, verifyDocument, type Signed } from '../signed.js'
import type { Signer } from '../identity.js'
import { computeChainHash, type ChainInfo } from './chain-info.js'
import {
  DKG_DEAL, DKG_RESPONSES, DKG_RESULT, DKG_SHARE, parseDkgDocument, type DocumentVerifier,
  type Complaint, type DealBody, type DkgDocument, type ResponsesBody, type ResultBody, type ShareBody
} from './dkg-documents.js'
import { dealersOf, groupSession, memberIndex, parseGroupParams, type GroupParams } from './group-params.js'
import { RESHARE_REFUSED, type RefusalBody } from './reshare.js'
import {
  commitPolynomial, commitmentsFromHex, evaluateCommitments, evaluatePolynomial, GROUP_SCHEME, groupDigest, lagrangeAtZero,
  pointHex, publicKeyMatches, randomPolynomial, scalarFromHex, scalarToHex, shareMatchesCommitments, sumCommitments, type G2Point
} from './threshold.js'
import { bls12_381 } from '@noble/curves/bls12-381.js'

// The group's distributed key generation, Joint-Feldman (Pedersen 1991, as drand runs it):
//  1. deal: every member deals a Feldman VSS of a random polynomial of degree t-1: its commitments
//     on G2 to everyone, each member's share privately (signed, so it can be shown if wrong);
//  2. complain: every member publishes one signed list of complaints (possibly empty);
//  3. answer: a dealer accused of a missing share publishes that signed share.
// Then everyone computes the same qualified set from the same public documents (`qualify`), the
// group key Σ C_0 over it and its own share Σ f_d(i). Public documents are echoed once to every
// member, so one that reaches a single honest member in time reaches all. A phase ends as soon as
// everything it waits for is in, at its deadline otherwise.
//
// A reshare (params.reshare, drand's resharing) is the same run with two differences: the dealers
// are the OLD group's members, each dealing a polynomial of the new degree whose constant term is
// its old share (a deal whose C_0 is not the dealer's old public share is out: `bad-deal`); and
// the outcome combines the first t_old qualified dealers with Lagrange weights at 0, so the group
// key (Σ λ_d C_{d,0} = the old key) and the chain do not change.

export type DkgPhase = 'idle' | 'deal' | 'complain' | 'answer' | 'done' | 'failed'

/** Why a dealer is not in the qualified set. */
export type Disqualification =
  | { dealer: number, reason: 'no-deal' }
  | { dealer: number, reason: 'equivocation', evidence: [Signed<DealBody>, Signed<DealBody>] }
  | { dealer: number, reason: 'bad-share', complainant: number, evidence: Signed<ShareBody> }
  | { dealer: number, reason: 'unanswered-complaint', complainant: number }
  /** The deal's commitments are not all points of G2; in a reshare also: its constant term is not the dealer's old public share. */
  | { dealer: number, reason: 'bad-deal' }

/** The public record of a DKG: everything needed to recompute its outcome offline. */
export interface DkgTranscript {
  params: GroupParams
  deals: Array<Signed<DealBody>>
  responses: Array<Signed<ResponsesBody>>
  /** Shares published by their dealers in answer to `missing` complaints. */
  answers: Array<Signed<ShareBody>>
}

export interface DkgOutcome {
  qual: number[]
  disqualified: Disqualification[]
  /** Σ over qual of the dealers' commitments: public share of member i = Σ C_k i^k. */
  commitments: string[]
  groupKey: string
  groupHash: string
  chainInfo: ChainInfo
}

export interface DkgResult extends DkgOutcome {
  /** This member's secret share, hex of a scalar: keep it like an identity key. */
  share: string
  index: number
  transcript: DkgTranscript
}

/** Fewer qualified dealers than needed: no key (a DKG failed; a reshare refused). */
export class QualifyError extends CoreInputError {
  constructor (message: string, readonly qual: number[], readonly disqualified: Disqualification[], readonly reason: 'below-old-threshold' | 'below-new-threshold' = 'below-old-threshold') {
    super(message)
    this.name = 'QualifyError'
  }
}

const Fr = bls12_381.fields.Fr

/**
 * How the qualified dealers' deals make the group: in a DKG every qualified dealer with weight 1;
 * in a reshare the first t_old of them by index, each with its Lagrange weight at 0 among them.
 */
export function combination (params: GroupParams, qual: readonly number[]): { dealers: number[], weights: bigint[] } {
  if (params.reshare === undefined) return { dealers: [...qual], weights: qual.map(() => 1n) }
  const dealers = qual.slice(0, params.reshare.threshold)
  return { dealers, weights: lagrangeAtZero(dealers) }
}

const byIndex = <T extends { body: unknown }>(key: (b: any) => number) => (a: T, b: T): number => key(a.body) - key(b.body)

/**
 * The outcome of a transcript: who qualifies and why the others do not, the group key and the
 * chain info. Deterministic: every member (and any verifier) holding the same documents gets the
 * same answer. Throws CoreInputError when fewer than t dealers qualify.
 */
export function qualify (transcript: DkgTranscript, verify: DocumentVerifier = verifyDocument): DkgOutcome {
  const params = parseGroupParams(transcript.params)
  const session = groupSession(params)
  const nd = dealersOf(params).length
  const check = <T extends DkgDocument>(doc: unknown, type: string): T => {
    const parsed = parseDkgDocument(doc, params, session, verify)
    if (parsed.type !== type) throw new CoreInputError(`transcript: a ${parsed.type} document among the ${type} documents`)
    return parsed as T
  }
  const deals = new Map<number, Signed<DealBody>>()
  const dq = new Map<number, Disqualification>()
  const responses = transcript.responses.map(raw => check<Signed<ResponsesBody>>(raw, DKG_RESPONSES))
  // The deals of the transcript and every deal in a member's view: a dealer that showed two
  // members two deals is caught wherever either member's responses are held.
  const allDeals = [...transcript.deals.map(raw => check<Signed<DealBody>>(raw, DKG_DEAL)), ...responses.flatMap(r => r.body.view)]
  for (const d of allDeals) {
    const prev = deals.get(d.body.dealer)
    if (prev !== undefined && prev.sig !== d.sig) {
      dq.set(d.body.dealer, { dealer: d.body.dealer, reason: 'equivocation', evidence: [prev, d] })
    } else deals.set(d.body.dealer, d)
  }
  const commitments = new Map<number, G2Point[]>()
  const commitmentsOf = (dealer: number): G2Point[] => {
    let c = commitments.get(dealer)
    if (c === undefined) {
      c = commitmentsFromHex((deals.get(dealer) as Signed<DealBody>).body.commitments, `deal of member ${dealer}: commitments`)
      commitments.set(dealer, c)
    }
    return c
  }
  const shareOk = (doc: Signed<ShareBody>): boolean => {
    let s: bigint
    try { s = scalarFromHex(doc.body.share, 'share') } catch { return false }
    return shareMatchesCommitments(commitmentsOf(doc.body.dealer), doc.body.recipient, s)
  }
  // A deal whose commitments are not points of G2 commits to nothing: its dealer is out (bad-deal),
  // decided from the deal alone, before any share is checked against it.
  for (const d of deals.keys()) {
    if (dq.has(d)) continue
    try { commitmentsOf(d) } catch { dq.set(d, { dealer: d, reason: 'bad-deal' }) }
  }
  const answered = new Set<string>()
  for (const raw of transcript.answers) {
    const a = check<Signed<ShareBody>>(raw, DKG_SHARE)
    if (deals.has(a.body.dealer) && !dq.has(a.body.dealer) && shareOk(a)) answered.add(`${a.body.dealer}:${a.body.recipient}`)
  }
  const seenResponses = new Set<number>()
  // A member that signed two different responses documents said two things: none of its
  // complaints count (whichever of them a member got first), as both are in the transcript.
  const responsesOf = new Map<number, string>()
  const twoFaced = new Set<number>()
  for (const r of responses) {
    const prev = responsesOf.get(r.body.member)
    if (prev !== undefined && prev !== r.sig) twoFaced.add(r.body.member)
    responsesOf.set(r.body.member, r.sig)
  }
  for (const r of responses) {
    seenResponses.add(r.body.member)
    if (twoFaced.has(r.body.member)) continue
    for (const c of r.body.complaints) {
      if (!deals.has(c.dealer) || dq.has(c.dealer)) continue
      if (c.kind === 'bad-share') {
        // The dealer's own signature on a share off its own polynomial: proof, whatever it answers.
        if (!shareOk(c.evidence)) dq.set(c.dealer, { dealer: c.dealer, reason: 'bad-share', complainant: r.body.member, evidence: c.evidence })
      } else if (!answered.has(`${c.dealer}:${r.body.member}`)) {
        dq.set(c.dealer, { dealer: c.dealer, reason: 'unanswered-complaint', complainant: r.body.member })
      }
    }
  }
  // A reshare deal must reshare its dealer's old share: C_0 is its old public share (public, so
  // every member and verifier decides it alike from the deal alone).
  const reshare = params.reshare
  if (reshare !== undefined) {
    const old = commitmentsFromHex(reshare.commitments, 'reshare.commitments')
    for (const d of deals.keys()) {
      if (dq.has(d)) continue
      let c0: G2Point | undefined
      try { c0 = commitmentsOf(d)[0] } catch { c0 = undefined }
      if (c0 === undefined || !c0.equals(evaluateCommitments(old, d))) dq.set(d, { dealer: d, reason: 'bad-deal' })
    }
  }
  const qual: number[] = []
  const disqualified: Disqualification[] = []
  for (let d = 1; d <= nd; d++) {
    const why = dq.get(d)
    if (why !== undefined) disqualified.push(why)
    else if (!deals.has(d)) disqualified.push({ dealer: d, reason: 'no-deal' })
    else qual.push(d)
  }
  const need = reshare?.threshold ?? params.threshold
  if (qual.length < need) {
    const why = disqualified.map(x => `${x.dealer}: ${x.reason}`).join(', ')
    throw new QualifyError(reshare === undefined
      ? `DKG failed: ${qual.length} qualified dealer(s), the threshold is ${params.threshold} (${why})`
      : `reshare refused: ${qual.length} qualified old member(s) [${qual.join(', ')}], the old group's threshold is ${need} (${why})`, qual, disqualified)
  }
  // A reshare whose new group could not sign is refused too (drand's choice when a reshare fails:
  // the old group stays): fewer new members took part, by their responses, than the new threshold.
  if (reshare !== undefined && seenResponses.size < params.threshold) {
    throw new QualifyError(`reshare refused: ${seenResponses.size} new member(s) took part [${[...seenResponses].sort((a, b) => a - b).join(', ')}], the new threshold is ${params.threshold}`, qual, disqualified, 'below-new-threshold')
  }
  const { dealers, weights } = combination(params, qual)
  const summed = sumCommitments(dealers.map((d, i) => weights[i] === 1n ? commitmentsOf(d) : commitmentsOf(d).map(c => c.multiplyUnsafe(weights[i]))))
  const groupKey = pointHex(summed[0])
  const groupHash = groupDigest('group', canonicalBytes({
    id: params.id,
    members: params.members,
    threshold: params.threshold,
    qual: dealers,
    deals: dealers.map(d => deals.get(d)),
    ...(reshare !== undefined ? { reshared: reshare.session } : {})
  }))
  let chainInfo: ChainInfo
  if (reshare !== undefined) {
    // Σ λ_d s_d·G2 over t_old old shares is the old key: the chain is the old one, unchanged.
    if (groupKey !== reshare.chain.public_key) throw new CoreInputError('reshare: the combined deals do not give the old group key (the old commitments are not the chain\'s)')
    chainInfo = reshare.chain
  } else {
    const withoutHash = {
      public_key: groupKey,
      period: params.period,
      genesis_time: params.genesisTime,
      groupHash,
      schemeID: GROUP_SCHEME.id,
      metadata: { beaconID: params.id }
    }
    chainInfo = { ...withoutHash, hash: computeChainHash(withoutHash) }
  }
  return { qual, disqualified, commitments: summed.map(pointHex), groupKey, groupHash, chainInfo }
}

/** Public share f(i)·G2 of every member, from the summed commitments (for checking partials). */
export function publicShares (commitments: readonly string[], members: number): G2Point[] {
  const c = commitmentsFromHex(commitments, 'group commitments')
  const out: G2Point[] = []
  for (let i = 1; i <= members; i++) out.push(evaluateCommitments(c, i))
  return out
}

export type DkgEffect =
  | { kind: 'send', to: string, doc: DkgDocument }
  | { kind: 'broadcast', doc: DkgDocument }
  /** The phase changed: persist `snapshot` (it holds the secret polynomial: mode 0600). */
  | { kind: 'persist', phase: DkgPhase, snapshot: DkgSnapshot }
  | { kind: 'done', result: DkgResult }
  /** `cause`, in a reshare: refused (a `refused` effect came just before), or missed (this node came up late). */
  | { kind: 'failed', reason: string, cause?: 'refused' | 'missed' }
  /** Reshare refused (below the old threshold): the signed refusal and the transcript it rests on. */
  | { kind: 'refused', record: Signed<RefusalBody>, transcript: DkgTranscript }
  /** Reshare done for an old member that is not in the new group: it holds no share of it. */
  | { kind: 'left', outcome: DkgOutcome, transcript: DkgTranscript }
  /** A document was refused (logged by the adapter; nothing changed). */
  | { kind: 'rejected', from: string, reason: string }

/** Everything a restarted member needs to resume: its polynomial and every document it holds. */
export interface DkgSnapshot {
  phase: DkgPhase
  coefficients: string[]
  documents: DkgDocument[]
  /** Present when the machine started after the deal phase's deadline. */
  late?: true
}

export interface DkgInit {
  params: GroupParams
  signer: Signer
  /** Randomness for the polynomial (48 bytes per coefficient). */
  random: (n: number) => Uint8Array
  /** Echo every public document once to every member (default true). */
  echo?: boolean
  /** Ed25519 check of documents (default: core verifyDocument; the daemon passes node:crypto's). */
  verify?: DocumentVerifier
  /**
   * In a reshare, this node's share of the old group (hex), when it is an old member that still
   * holds it: it then deals. An old member without it (lost) only receives, like a new member.
   */
  oldShare?: string
}

/**
 * One member's DKG as a pure state machine: documents and clock readings in, effects out.
 * `start(now)`, then `receive(from, doc, now)` for every frame and `tick(now)` now and then.
 */
export class DkgMachine {
  readonly params: GroupParams
  readonly session: string
  /** This node's index among the members (the recipients), 0 when it leaves in a reshare. */
  readonly index: number
  /** This node's index among the dealers (the old members in a reshare), 0 when it does not deal. */
  readonly dealerIndex: number
  private readonly dealers: string[]
  private readonly signer: Signer
  private readonly echo: boolean
  private readonly verify: DocumentVerifier
  private coefficients: bigint[]
  private phase: DkgPhase = 'idle'
  private readonly deals = new Map<number, Signed<DealBody>>()
  private readonly extraDeals: Array<Signed<DealBody>> = []
  private readonly myShares = new Map<number, Signed<ShareBody>>()
  /** Share checks already done (by share and deal signature): each costs a G2 multiplication. */
  private readonly checked = new Map<string, boolean>()
  private readonly responses = new Map<number, Signed<ResponsesBody>>()
  /** A second, different responses document of a member (it signed two: its complaints do not count). */
  private readonly extraResponses = new Map<number, Signed<ResponsesBody>>()
  /** Published shares by `dealer:recipient`: the one matching its dealer's deal, or (no deal held yet) up to two waiting for it. */
  private readonly answers = new Map<string, Array<Signed<ShareBody>>>()
  private readonly results = new Map<number, Signed<ResultBody>>()
  private readonly seen = new Set<string>()
  private readonly answeredComplaints = new Set<number>()
  private result: DkgResult | undefined
  /** Started after the deal phase's deadline (this process came up late): see finish(). */
  private late = false
  /** Restored from a snapshot of a finished run: its outcome is computed again at the next tick. */
  private refinish = false
  /** Restored mid-run: what this member sent may have died with its process; sent again at the next tick. */
  private resend = false

  constructor (init: DkgInit, snapshot?: DkgSnapshot) {
    this.params = parseGroupParams(init.params)
    this.session = groupSession(this.params)
    this.signer = init.signer
    this.echo = init.echo ?? true
    this.verify = init.verify ?? verifyDocument
    this.index = memberIndex(this.params, init.signer.peerId)
    this.dealers = dealersOf(this.params)
    const reshare = this.params.reshare
    const oldIndex = this.dealers.indexOf(init.signer.peerId) + 1
    if (this.index === 0 && oldIndex === 0) throw new CoreInputError('this node is not a member of the beacon group')
    const saved = snapshot?.coefficients.map((h, k) => scalarFromHex(h, `snapshot coefficient ${k}`))
    if (reshare === undefined) {
      this.dealerIndex = this.index
      this.coefficients = saved ?? randomPolynomial(this.params.threshold, init.random)
    } else if (oldIndex > 0 && init.oldShare !== undefined) {
      // The constant term is the old share, checked against the old public share before any deal.
      const oldShare = scalarFromHex(init.oldShare, 'old share')
      if (!publicKeyMatches(oldShare, evaluateCommitments(commitmentsFromHex(reshare.commitments, 'reshare.commitments'), oldIndex))) {
        throw new CoreInputError(`this node's old share does not match old member ${oldIndex}'s public share`)
      }
      this.dealerIndex = oldIndex
      // Its other t' − 1 coefficients random (none for a new threshold of 1: the deal is the old share itself).
      this.coefficients = saved ?? [oldShare, ...(this.params.threshold > 1 ? randomPolynomial(this.params.threshold - 1, init.random) : [])]
      if (this.coefficients[0] !== oldShare) throw new CoreInputError('snapshot polynomial does not reshare this node\'s old share')
    } else {
      if (this.index === 0) throw new CoreInputError('this node leaves the group in this reshare and holds no old share: it has nothing to do')
      this.dealerIndex = 0
      this.coefficients = []
    }
    if (this.dealerIndex > 0 && this.coefficients.length !== this.params.threshold) throw new CoreInputError('snapshot polynomial of the wrong degree')
    if (snapshot !== undefined) {
      this.late = snapshot.late === true
      for (const doc of snapshot.documents) this.accept(this.signer.peerId, doc, false)
      this.phase = snapshot.phase
      // A run saved as done holds every document its outcome came from, but not the outcome (the
      // share is not in the snapshot): a member restarted without its share computes it again.
      this.refinish = snapshot.phase === 'done' && this.index > 0
      this.resend = snapshot.phase === 'deal' || snapshot.phase === 'complain' || snapshot.phase === 'answer'
    }
  }

  get currentPhase (): DkgPhase { return this.phase }
  get outcome (): DkgResult | undefined { return this.result }
  /** How many deals (dealers), own shares and responses documents this member holds (its status). */
  get held (): { deals: number, shares: number, responses: number } {
    return { deals: this.deals.size, shares: this.myShares.size, responses: this.responses.size }
  }
  /** Results other members announced, by member index (compare their groupHash with ours). */
  get announcedResults (): ReadonlyMap<number, Signed<ResultBody>> { return this.results }

  private deadline (k: number): number { return this.params.dkg.start + k * this.params.dkg.phaseMs }

  private snapshot (): DkgSnapshot {
    return {
      phase: this.phase,
      coefficients: this.coefficients.map(scalarToHex),
      documents: [...this.deals.values(), ...this.extraDeals, ...this.myShares.values(), ...this.responses.values(), ...this.extraResponses.values(), ...[...this.answers.values()].flat()],
      ...(this.late ? { late: true as const } : {})
    }
  }

  private enter (phase: DkgPhase, out: DkgEffect[]): void {
    this.phase = phase
    out.push({ kind: 'persist', phase, snapshot: this.snapshot() })
  }

  /** Deals this member's polynomial: commitments to all, each share to its recipient. */
  start (now: number): DkgEffect[] {
    const out: DkgEffect[] = []
    if (this.phase !== 'idle') return this.tick(now)
    this.late = now >= this.deadline(1)
    if (this.dealerIndex > 0) {
      const deal = signDocument<DealBody>(DKG_DEAL, {
        session: this.session, dealer: this.dealerIndex, commitments: commitPolynomial(this.coefficients).map(pointHex)
      }, this.signer)
      this.accept(this.signer.peerId, deal, false)
      out.push({ kind: 'broadcast', doc: deal })
      this.params.members.forEach((peer, i) => {
        const share = this.shareFor(i + 1)
        if (i + 1 === this.index) this.accept(peer, share, false)
        else out.push({ kind: 'send', to: peer, doc: share })
      })
    }
    this.enter('deal', out)
    out.push(...this.tick(now))
    return out
  }

  private shareFor (recipient: number): Signed<ShareBody> {
    return signDocument<ShareBody>(DKG_SHARE, {
      session: this.session, dealer: this.dealerIndex, recipient, share: scalarToHex(evaluatePolynomial(this.coefficients, recipient))
    }, this.signer)
  }

  receive (from: string, value: unknown, now: number): DkgEffect[] {
    const out: DkgEffect[] = []
    if (this.phase === 'done' || this.phase === 'failed') {
      // Late results are still welcome: they tell us who agrees.
      try {
        const doc = parseDkgDocument(value, this.params, this.session, this.verify)
        if (doc.type === DKG_RESULT && !this.results.has((doc.body as ResultBody).member)) this.results.set((doc.body as ResultBody).member, doc as Signed<ResultBody>)
      } catch { /* nothing to do after the end */ }
      return out
    }
    const sig = (value as { sig?: unknown } | null)?.sig
    if (typeof sig === 'string' && this.seen.has(sig)) return out // an echo of what we hold: no second signature check
    let doc: DkgDocument
    try {
      doc = parseDkgDocument(value, this.params, this.session, this.verify)
    } catch (err) {
      return [{ kind: 'rejected', from, reason: (err as Error).message }]
    }
    const fresh = this.accept(from, doc, true)
    if (fresh && this.echo && doc.type !== DKG_SHARE) {
      out.push({ kind: 'broadcast', doc })
    } else if (fresh && this.echo && doc.type === DKG_SHARE && (doc.body as ShareBody).recipient !== this.index) {
      out.push({ kind: 'broadcast', doc }) // a published answer
    }
    // An accusation of a missing share from us: answer it at once by publishing that share.
    if (doc.type === DKG_RESPONSES) {
      const r = doc.body as ResponsesBody
      if (this.dealerIndex > 0 && r.complaints.some(c => c.dealer === this.dealerIndex && c.kind === 'missing') && !this.answeredComplaints.has(r.member)) {
        this.answeredComplaints.add(r.member)
        const answer = this.shareFor(r.member)
        this.accept(this.signer.peerId, answer, false)
        out.push({ kind: 'broadcast', doc: answer })
      }
    }
    out.push(...this.tick(now))
    return out
  }

  /**
   * Files a document; false when it adds nothing (already held, out of its phase, or more of what
   * one signer may have on record): only what is filed is echoed. Each signer's part is bounded, so
   * no member can grow another's transcript (or its views, which the others' parsers bound) at will.
   */
  private accept (_from: string, doc: DkgDocument, live: boolean): boolean {
    if (this.seen.has(doc.sig)) return false
    let kept = false
    switch (doc.type) {
      case DKG_DEAL: {
        if (live && this.phase !== 'deal' && this.phase !== 'idle') return false
        kept = this.fileDeal(doc as Signed<DealBody>)
        break
      }
      case DKG_SHARE: {
        const b = doc.body as ShareBody
        if (b.recipient === this.index && !this.myShares.has(b.dealer)) { this.myShares.set(b.dealer, doc as Signed<ShareBody>); kept = true }
        const own = b.dealer === this.dealerIndex && this.dealerIndex > 0
        if (b.recipient !== this.index || own || this.phase === 'complain' || this.phase === 'answer') {
          // Published after a complaint (or our own answer): part of the public transcript.
          if (!(b.recipient === this.index && own)) kept = this.fileAnswer(doc as Signed<ShareBody>) || kept
        }
        break
      }
      case DKG_RESPONSES: {
        const b = doc.body as ResponsesBody
        const first = this.responses.get(b.member)
        if (first === undefined) {
          if (live && this.phase !== 'idle' && this.phase !== 'deal' && this.phase !== 'complain') return false
          this.responses.set(b.member, doc as Signed<ResponsesBody>)
          kept = true
        } else if (first.sig !== doc.sig && !this.extraResponses.has(b.member)) {
          // A second, different one: kept in any phase, as evidence (qualify then counts none of
          // that member's complaints); more add nothing.
          this.extraResponses.set(b.member, doc as Signed<ResponsesBody>)
          kept = true
        }
        // Its view's deals join ours whatever our phase: they decide the qualified set for all.
        for (const deal of b.view) kept = this.fileDeal(deal) || kept
        break
      }
      case DKG_RESULT: {
        const b = doc.body as ResultBody
        // One result a member: it signs one per run (a second, different one adds nothing to compare).
        if (!this.results.has(b.member)) { this.results.set(b.member, doc as Signed<ResultBody>); kept = true }
        break
      }
    }
    if (kept) this.seen.add(doc.sig)
    return kept
  }

  /**
   * A dealer's deal, or a second, different one (the evidence of its equivocation: `qualify` puts
   * it out). Any two different deals prove it, so no more are kept: a dealer signing many would
   * otherwise grow every member's transcript and views past what the others accept.
   */
  private fileDeal (deal: Signed<DealBody>): boolean {
    const b = deal.body
    const prev = this.deals.get(b.dealer)
    if (prev === undefined) this.deals.set(b.dealer, deal)
    else if (prev.sig === deal.sig || this.extraDeals.some(x => x.sig === deal.sig || x.body.dealer === b.dealer)) return false
    else this.extraDeals.push(deal) // equivocation: both are kept as evidence
    this.seen.add(deal.sig)
    this.pruneAnswers(b.dealer)
    return true
  }

  /**
   * A published share of `dealer` to `recipient` (an answer to a complaint). `qualify` counts a
   * complaint answered when ANY published answer matches the dealer's commitments, so an answer
   * that matches is never replaced, and one that does not match the dealer's deal held here is not
   * kept: whatever order a dealer's answers arrive in, every member holding a matching one keeps it.
   * While the deal is not held here, at most two different answers wait for it (pruned once it comes).
   */
  private fileAnswer (doc: Signed<ShareBody>): boolean {
    const key = `${doc.body.dealer}:${doc.body.recipient}`
    const held = this.answers.get(key) ?? []
    if (held.some(a => a.body.share === doc.body.share)) return false
    const deal = this.deals.get(doc.body.dealer)
    if (deal !== undefined) {
      if (held.length > 0 || !this.shareOk(doc, deal)) return false // held ones match (pruned): nothing to add
      this.answers.set(key, [doc])
      return true
    }
    if (held.length >= 2) return false
    this.answers.set(key, [...held, doc])
    return true
  }

  /** Once a dealer's deal is held, only the answers of that dealer that match it are kept. */
  private pruneAnswers (dealer: number): void {
    const deal = this.deals.get(dealer)
    if (deal === undefined) return
    for (const [key, held] of this.answers) {
      if (held[0]?.body.dealer !== dealer) continue
      const good = held.find(a => this.shareOk(a, deal))
      if (good === undefined) this.answers.delete(key)
      else this.answers.set(key, [good])
    }
  }

  tick (now: number): DkgEffect[] {
    const out: DkgEffect[] = []
    if (this.resend) {
      this.resend = false
      // Down across the deadline of the phase it was saved in: what the others sent meanwhile may
      // be lost to it (they stop sending once their run is over), so it came up late, as a node
      // first started after the deal phase: a refusal would rest on a transcript it could not complete.
      const phaseEnd = this.phase === 'deal' ? 1 : this.phase === 'complain' ? 2 : 3
      if (now >= this.deadline(phaseEnd)) this.late = true
      this.sendOwnAgain(out)
    }
    if (this.refinish) {
      // The same documents give the same outcome and share (qualify is deterministic).
      this.refinish = false
      this.finish(out)
      return out
    }
    const n = this.params.members.length
    const nd = this.dealers.length
    if (this.phase === 'deal') {
      const complete = this.deals.size === nd && (this.index === 0 || this.myShares.size === nd)
      if (complete || now >= this.deadline(1)) {
        // A leaving old member (reshare) only deals and answers: it has no responses to send.
        if (this.index > 0) this.sendResponses(out)
        else this.enter('complain', out)
      }
    }
    if (this.phase === 'complain') {
      if (this.responses.size === n || now >= this.deadline(2)) this.enter('answer', out)
    }
    if (this.phase === 'answer') {
      const pending = [...this.responses.values()].some(r => !this.extraResponses.has(r.body.member) && r.body.complaints.some(c =>
        c.kind === 'missing' && this.deals.has(c.dealer) && !this.answers.has(`${c.dealer}:${r.body.member}`)))
      if (!pending || now >= this.deadline(3)) this.finish(out)
    }
    return out
  }

  /**
   * A member restarted mid-run: the documents it sent before (its deal, its shares, its responses,
   * its answers to complaints it holds) may not have left its old process, whose retries died with
   * it; nobody sends them back to it. Sent again: they are the same documents (the polynomial is in
   * the snapshot, signatures are deterministic), so a member that has them ignores the copy.
   */
  private sendOwnAgain (out: DkgEffect[]): void {
    if (this.dealerIndex > 0) {
      const deal = this.deals.get(this.dealerIndex)
      if (deal !== undefined && deal.signer === this.signer.peerId) out.push({ kind: 'broadcast', doc: deal })
      this.params.members.forEach((peer, i) => { if (i + 1 !== this.index) out.push({ kind: 'send', to: peer, doc: this.shareFor(i + 1) }) })
      for (const r of this.responses.values()) {
        if (r.body.member !== this.index && r.body.complaints.some(c => c.dealer === this.dealerIndex && c.kind === 'missing')) {
          this.answeredComplaints.add(r.body.member)
          out.push({ kind: 'broadcast', doc: this.shareFor(r.body.member) })
        }
      }
    }
    const own = this.index > 0 ? this.responses.get(this.index) : undefined
    if (own !== undefined) out.push({ kind: 'broadcast', doc: own })
  }

  /** Whether `share` lies on `deal`'s committed polynomial at its recipient's index (memoised). */
  private shareOk (share: Signed<ShareBody>, deal: Signed<DealBody>): boolean {
    const key = `${share.sig}:${deal.sig}`
    let ok = this.checked.get(key)
    if (ok === undefined) {
      try {
        ok = shareMatchesCommitments(commitmentsFromHex(deal.body.commitments, 'commitments'), share.body.recipient, scalarFromHex(share.body.share, 'share'))
      } catch { ok = false }
      // Bounded: a run checks a few shares per dealer and recipient; a member signing share after
      // share must not grow it (a forgotten check is only done again).
      if (this.checked.size >= 4 * this.dealers.length * this.params.members.length + 64) this.checked.clear()
      this.checked.set(key, ok)
    }
    return ok
  }

  private sendResponses (out: DkgEffect[]): void {
    const complaints: Complaint[] = []
    // Every dealer whose share we lack, deal or not: its deal may reach us later in another's view.
    for (let dealer = 1; dealer <= this.dealers.length; dealer++) {
      const share = this.myShares.get(dealer)
      const deal = this.deals.get(dealer)
      if (share === undefined) { complaints.push({ dealer, kind: 'missing' }); continue }
      if (deal !== undefined && !this.shareOk(share, deal)) complaints.push({ dealer, kind: 'bad-share', evidence: share })
    }
    const view = [...this.deals.values(), ...this.extraDeals].sort(byIndex<Signed<DealBody>>(b => b.dealer))
    const doc = signDocument<ResponsesBody>(DKG_RESPONSES, { session: this.session, member: this.index, complaints, view }, this.signer)
    this.accept(this.signer.peerId, doc, false)
    out.push({ kind: 'broadcast', doc })
    this.enter('complain', out)
  }

  /** The public transcript as this member holds it. */
  transcript (): DkgTranscript {
    const sortDeals = byIndex<Signed<DealBody>>(b => b.dealer)
    return {
      params: this.params,
      deals: [...this.deals.values(), ...this.extraDeals].sort(sortDeals),
      responses: [...this.responses.values(), ...this.extraResponses.values()].sort(byIndex<Signed<ResponsesBody>>(b => b.member)),
      // Answers of a dealer whose deal never came here change nothing (it is out: no-deal).
      answers: [...this.answers.values()].flat().filter(a => this.deals.has(a.body.dealer)).sort((a, b) => a.body.dealer - b.body.dealer || a.body.recipient - b.body.recipient)
    }
  }

  private finish (out: DkgEffect[]): void {
    const transcript = this.transcript()
    let outcome: DkgOutcome
    try {
      outcome = qualify(transcript, this.verify)
    } catch (err) {
      this.enter('failed', out)
      const reshare = this.params.reshare
      if (err instanceof QualifyError && reshare !== undefined && this.late) {
        // This node came up after the deal phase: it holds what reached it late, not the run. It
        // says it missed the run and signs no refusal (the others may well have reshared).
        out.push({ kind: 'failed', reason: `missed the reshare: this node started after its deal phase ended (${(err as Error).message})`, cause: 'missed' })
        return
      }
      if (err instanceof QualifyError && reshare !== undefined) {
        // A refused reshare is signed and names each old member that did not qualify, and why.
        const body: RefusalBody = {
          session: this.session,
          groupKey: reshare.chain.public_key,
          chainHash: reshare.chain.hash,
          oldThreshold: reshare.threshold,
          dealers: err.qual,
          rejected: err.disqualified.map(d => ({ dealer: d.dealer, reason: d.reason })),
          reason: err.reason,
          message: err.message
        }
        out.push({ kind: 'refused', record: signDocument(RESHARE_REFUSED, body, this.signer), transcript })
        out.push({ kind: 'failed', reason: err.message, cause: 'refused' })
        return
      }
      out.push({ kind: 'failed', reason: (err as Error).message })
      return
    }
    if (this.index === 0) {
      // A leaving old member: it dealt and answered; the new group's key and chain are the old ones.
      this.enter('done', out)
      out.push({ kind: 'left', outcome, transcript })
      return
    }
    // Our share: Σ over the combined dealers of what each dealt us (privately, or in answer to our
    // complaint), weighted as `combination` says (1 in a DKG, Lagrange at 0 in a reshare).
    const { dealers, weights } = combination(this.params, outcome.qual)
    let share = 0n
    for (const [k, d] of dealers.entries()) {
      const candidates = [this.myShares.get(d), ...(this.answers.get(`${d}:${this.index}`) ?? [])]
      const deal = this.deals.get(d) as Signed<DealBody>
      const good = candidates.find(c => c !== undefined && c.body.recipient === this.index && this.shareOk(c, deal))
      if (good === undefined) {
        // Impossible when qualify() kept d (we complained, d answered); kept as a loud failure.
        this.enter('failed', out)
        out.push({ kind: 'failed', reason: `no valid share from qualified dealer ${d}` })
        return
      }
      share = Fr.add(share, Fr.mul(weights[k], scalarFromHex(good.body.share, 'share')))
    }
    this.result = { ...outcome, share: scalarToHex(share), index: this.index, transcript }
    const resultDoc = signDocument<ResultBody>(DKG_RESULT, {
      session: this.session, member: this.index, qual: outcome.qual, groupKey: outcome.groupKey, groupHash: outcome.groupHash
    }, this.signer)
    this.results.set(this.index, resultDoc)
    out.push({ kind: 'broadcast', doc: resultDoc })
    this.enter('done', out)
    out.push({ kind: 'done', result: this.result })
  }
}

/**
 * Re-checks a DKG result offline from its public transcript: the qualified set, group key,
 * groupHash and chain info must all follow from the signed documents, and when the secret share
 * is given, it must match the member's public share.
 */
export function verifyDkgResult (result: Pick<DkgResult, 'transcript' | 'qual' | 'groupKey' | 'groupHash' | 'chainInfo' | 'commitments'> & { share?: string, index?: number }, verify: DocumentVerifier = verifyDocument): DkgOutcome {
  const outcome = qualify(result.transcript, verify)
  if (outcome.qual.join(',') !== result.qual.join(',')) throw new CoreInputError(`qualified set ${result.qual.join(',')} does not follow from the transcript (${outcome.qual.join(',')})`)
  if (outcome.groupKey !== result.groupKey) throw new CoreInputError('group key does not follow from the transcript')
  if (outcome.groupHash !== result.groupHash) throw new CoreInputError('groupHash does not follow from the transcript')
  if (outcome.chainInfo.hash !== result.chainInfo.hash) throw new CoreInputError('chain info does not follow from the transcript')
  if (outcome.commitments.join(',') !== result.commitments.join(',')) throw new CoreInputError('group commitments do not follow from the transcript')
  if (result.share !== undefined && result.index !== undefined) {
    const pub = evaluateCommitments(commitmentsFromHex(outcome.commitments, 'commitments'), result.index)
    if (!publicKeyMatches(scalarFromHex(result.share, 'share'), pub)) {
      throw new CoreInputError(`secret share does not match member ${result.index}'s public share`)
    }
  }
  return outcome
}
