import { bls12_381 } from '@noble/curves/bls12-381.js'
import { CoreInputError } from '../errors.js'
import { signDocument, type Signed } from '../signed.js'
import type { Signer } from '../identity.js'
import type { ChainInfo } from './chain-info.js'
import {
  checkThreshold, commitPolynomial, commitmentsFromHex, evaluateCommitments, evaluatePolynomial, lagrangeAtZero,
  pointHex, scalarFromHex, scalarFromSeed, scalarToHex, shareMatchesCommitments, type G2Point
} from './threshold.js'

// Resharing as drand does it (kyber's dkg "resharing" mode): every old member i that takes part
// deals a fresh polynomial g_i of the NEW degree t'-1 whose constant term is its OLD share s_i, and
// commits to it. Its commitment G_i0 must equal its old public share s_i·G2 (from the old group's
// commitments), so a dealer cannot change what it reshares. New member j's share is
// s'_j = Σ_{i∈Q} λ_i g_i(j) over a set Q of exactly t old dealers (λ the Lagrange coefficients at 0
// over Q), and the new commitments are Σ λ_i G_ik: their constant term is Σ λ_i s_i·G2, the old
// group key. The group key, hence the chain info and chain hash, does not change.

const Fr = bls12_381.fields.Fr
const G2 = bls12_381.G2.Point

export const RESHARE_REFUSED = 'fairdeal/beacon-group/reshare-refused/v1'

/** What the old group publishes and every new member needs: its commitments, threshold and chain. */
export interface OldGroup {
  threshold: number
  /** The old group's commitments (hex, compressed G2): old public share of i = Σ C_k i^k. */
  commitments: string[]
  chainInfo: ChainInfo
}

/** One old member's reshare deal: public commitments to g_i, and g_i(j) for new members j = 1…n'. */
export interface ReshareDeal {
  dealer: number
  commitments: string[]
  /** shares[j-1] = g_i(j), hex; in a deployment each goes only to member j. */
  shares: string[]
}

export interface ReshareResult {
  /** The old dealers whose deals were combined (the first `old.threshold` valid ones by index). */
  dealers: number[]
  /** Old dealers whose deal failed, with the reason. */
  rejected: Array<{ dealer: number, reason: string }>
  commitments: string[]
  groupKey: string
  chainInfo: ChainInfo
  threshold: number
  members: number
}

export interface RefusalBody {
  /** The reshare run refused (its session), when it ran over the network. */
  session?: string
  groupKey: string
  chainHash: string
  oldThreshold: number
  /** The old dealers whose valid deals were received. */
  dealers: number[]
  rejected: Array<{ dealer: number, reason: string }>
  /**
   * below-old-threshold: fewer qualified old dealers than the old threshold; below-new-threshold:
   * fewer new members took part (sent their responses) than the new threshold, who could not sign.
   */
  reason: 'below-old-threshold' | 'below-new-threshold'
  message: string
}

/** A refused reshare: `record` is the refusing member's signed statement of why (blame of the missing dealers). */
export class ReshareRefusedError extends CoreInputError {
  constructor (readonly record: Signed<RefusalBody>) {
    super(record.body.message)
    this.name = 'ReshareRefusedError'
  }
}

/** Old member `dealer` (share `oldShareHex`) deals its share to `newMembers` new members with threshold `newThreshold`. */
export function reshareDeal (opts: {
  dealer: number
  oldShareHex: string
  newThreshold: number
  newMembers: number
  random: (n: number) => Uint8Array
}): ReshareDeal {
  checkThreshold(opts.newThreshold, opts.newMembers)
  const coefficients = [scalarFromHex(opts.oldShareHex, 'old share')]
  for (let k = 1; k < opts.newThreshold; k++) coefficients.push(scalarFromSeed(opts.random(48)))
  const shares: string[] = []
  for (let j = 1; j <= opts.newMembers; j++) shares.push(scalarToHex(evaluatePolynomial(coefficients, j)))
  return { dealer: opts.dealer, commitments: commitPolynomial(coefficients).map(pointHex), shares }
}

/**
 * Why a deal is unusable, or undefined when it is good: the new degree, the constant term equal to
 * the dealer's old public share, and (when `newIndex` is given) the share to that member on the
 * committed polynomial.
 */
export function checkReshareDeal (old: OldGroup, deal: ReshareDeal, newThreshold: number, newIndex?: number): string | undefined {
  if (!Number.isSafeInteger(deal.dealer) || deal.dealer < 1) return 'dealer index is not a positive integer'
  if (deal.commitments.length !== newThreshold) return `commits to ${deal.commitments.length} coefficients, the new threshold is ${newThreshold}`
  let commitments: G2Point[]
  try { commitments = commitmentsFromHex(deal.commitments, 'reshare commitments') } catch (e) { return (e as Error).message }
  const oldPublicShare = evaluateCommitments(commitmentsFromHex(old.commitments, 'old group commitments'), deal.dealer)
  if (!commitments[0].equals(oldPublicShare)) return 'constant term is not the dealer\'s old public share'
  if (newIndex !== undefined) {
    const hex = deal.shares[newIndex - 1]
    let share: bigint
    try { share = scalarFromHex(hex, 'reshared share') } catch (e) { return (e as Error).message }
    if (!shareMatchesCommitments(commitments, newIndex, share)) return `share to new member ${newIndex} is not on the committed polynomial`
  }
  return undefined
}

/**
 * Combines the deals a new member received. The dealer set depends only on what every member
 * sees (the broadcast commitments), never on the shares one member received, so members holding
 * the same deals agree on it: the first `old.threshold` deals by dealer index whose commitments
 * are valid. With fewer such deals than the old threshold the reshare is refused: throws
 * ReshareRefusedError carrying a record signed by `signer` that names the dealers it had and why
 * the others failed. With `newIndex`, returns that member's share, or, when a chosen dealer's share
 * to it is off the committed polynomial, no share and a `complaints` entry naming the dealer (the
 * member then has no share of this epoch and comes back through a later reshare).
 */
export function completeReshare (opts: {
  old: OldGroup
  newThreshold: number
  newMembers: number
  deals: readonly ReshareDeal[]
  signer: Signer
  newIndex?: number
}): ReshareResult & { share?: string, complaints?: Array<{ dealer: number, reason: string }> } {
  const { old, newThreshold, newMembers } = opts
  checkThreshold(newThreshold, newMembers)
  if (opts.newIndex !== undefined && (!Number.isSafeInteger(opts.newIndex) || opts.newIndex < 1 || opts.newIndex > newMembers)) {
    throw new CoreInputError(`new member index must be from 1 to ${newMembers}`)
  }
  const rejected: Array<{ dealer: number, reason: string }> = []
  const good = new Map<number, ReshareDeal>()
  // A dealer with two different deals in hand is excluded whatever their order (it equivocated).
  const seen = new Map<number, string>()
  const twoFaced = new Set<number>()
  for (const deal of opts.deals) {
    const key = JSON.stringify([deal.commitments, deal.shares])
    const before = seen.get(deal.dealer)
    if (before !== undefined && before !== key) twoFaced.add(deal.dealer)
    seen.set(deal.dealer, key)
  }
  for (const dealer of [...twoFaced].sort((a, b) => a - b)) rejected.push({ dealer, reason: 'two different deals from the same dealer' })
  for (const deal of [...opts.deals].sort((a, b) => a.dealer - b.dealer)) {
    if (twoFaced.has(deal.dealer) || good.has(deal.dealer)) continue
    if (deal.shares.length !== newMembers) { rejected.push({ dealer: deal.dealer, reason: `deals ${deal.shares.length} shares for ${newMembers} members` }); continue }
    const reason = checkReshareDeal(old, deal, newThreshold)
    if (reason !== undefined) rejected.push({ dealer: deal.dealer, reason })
    else good.set(deal.dealer, deal)
  }
  const groupKey = old.chainInfo.public_key
  if (good.size < old.threshold) {
    const body: RefusalBody = {
      groupKey,
      chainHash: old.chainInfo.hash,
      oldThreshold: old.threshold,
      dealers: [...good.keys()],
      rejected,
      reason: 'below-old-threshold',
      message: `reshare refused: ${good.size} valid deal(s) from old members [${[...good.keys()].join(', ')}], the old group's threshold is ${old.threshold}`
    }
    throw new ReshareRefusedError(signDocument(RESHARE_REFUSED, body, opts.signer))
  }
  const used = [...good.values()].slice(0, old.threshold)
  const lambdas = lagrangeAtZero(used.map(d => d.dealer))
  const dealt = used.map(d => commitmentsFromHex(d.commitments, 'reshare commitments'))
  const commitments: string[] = []
  for (let k = 0; k < newThreshold; k++) {
    let acc = G2.ZERO
    dealt.forEach((c, i) => { acc = acc.add(c[k].multiplyUnsafe(lambdas[i])) })
    commitments.push(pointHex(acc))
  }
  // Σ λ_i s_i·G2 over t old shares is the old key: a mismatch means the old commitments were not the group's.
  if (commitments[0] !== groupKey) throw new CoreInputError('reshared commitments do not keep the group key: old commitments and chain info disagree')
  const result: ReshareResult & { share?: string, complaints?: Array<{ dealer: number, reason: string }> } = {
    dealers: used.map(d => d.dealer),
    rejected,
    commitments,
    groupKey,
    chainInfo: old.chainInfo,
    threshold: newThreshold,
    members: newMembers
  }
  if (opts.newIndex !== undefined) {
    const j = opts.newIndex
    const complaints = used.flatMap(d => {
      const reason = checkReshareDeal(old, d, newThreshold, j)
      return reason === undefined ? [] : [{ dealer: d.dealer, reason }]
    })
    if (complaints.length > 0) result.complaints = complaints
    else result.share = scalarToHex(used.reduce((acc, d, i) => Fr.add(acc, Fr.mul(lambdas[i], scalarFromHex(d.shares[j - 1], 'reshared share'))), 0n))
  }
  return result
}
