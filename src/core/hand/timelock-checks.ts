import { sha256Hex } from '../bytes.js'
import { parseChainInfo, type ChainInfo } from '../beacon/index.js'
import { checkTimelockTarget, openTimelockText, TimelockError, timelockSupported } from '../timelock/index.js'
import type { BeaconEntry, CommitBody, Receipt, SignedCommit, SignedPledge } from './messages.js'

/**
 * The timelock rules of a hand (docs/protocol.md §5, §8, §9): which documents carry a ciphertext,
 * that each names the table's chain and the bound round, and opening one against what its author
 * committed to. One place, used by the receipt verifier, the recovered-record verifier and the
 * machines.
 */

/** The chain a time-locked COMMIT locks to, or why it cannot be time-locked. */
export function timelockChain (commit: CommitBody): ChainInfo | string {
  if (commit.beacon === null) return 'a time-locked commit needs a beacon round'
  let chain: ChainInfo
  try {
    chain = parseChainInfo(commit.beacon.info, 'commit beacon chain info')
  } catch (err) {
    return (err as Error).message
  }
  if (!timelockSupported(chain)) return `the beacon's scheme ${chain.schemeID} has no timelock encryption`
  return chain
}

/**
 * What a seat checks before it pledges, and the verifier in every receipt: the COMMIT's and every
 * pledge's ciphertext is there exactly when the COMMIT has one, and names the COMMIT's chain and
 * round. Problems as one-liners.
 */
export function checkTimelockFields (commit: CommitBody, pledges: readonly SignedPledge[]): string[] {
  const problems: string[] = []
  if (commit.timelock === undefined) {
    for (const p of pledges) if (p.body.timelock !== undefined) problems.push(`pledge of seat ${p.body.seat}: carries a timelock the commit does not`)
    return problems
  }
  const chain = timelockChain(commit)
  if (typeof chain === 'string') return [`commit: timelock: ${chain}`]
  const target = { chainHash: commit.beacon!.chainHash, round: commit.beacon!.round }
  const own = checkTimelockTarget(commit.timelock, target)
  if (own !== undefined) problems.push(`commit: timelock ${own}`)
  for (const p of pledges) problems.push(...checkPledgeTimelock(commit, p))
  return problems
}

/** One pledge against a time-locked COMMIT: it carries a ciphertext locked to the COMMIT's target. */
export function checkPledgeTimelock (commit: CommitBody, pledge: SignedPledge): string[] {
  if (commit.timelock === undefined || commit.beacon === null) return []
  if (pledge.body.timelock === undefined) return [`pledge of seat ${pledge.body.seat}: no timelock on a time-locked table`]
  const problem = checkTimelockTarget(pledge.body.timelock, { chainHash: commit.beacon.chainHash, round: commit.beacon.round })
  return problem === undefined ? [] : [`pledge of seat ${pledge.body.seat}: timelock ${problem}`]
}

export type OpenResult =
  | { ok: true, value: string }
  | { ok: false, fault: 'undecryptable' | 'mismatch', message: string }

/**
 * Opens a ciphertext with the round's entry (verified by the caller) and checks the value against
 * the hash its author committed to. A ciphertext that does not open, or opens to something else,
 * is its author's fault.
 */
export function openCommitted (armored: string, chain: ChainInfo, entry: BeaconEntry, committedHash: string, hash: (value: string) => string = sha256Hex): OpenResult {
  let value: string
  try {
    value = openTimelockText(armored, chain, entry)
  } catch (err) {
    const kind = err instanceof TimelockError && err.kind === 'not-text' ? 'mismatch' : 'undecryptable'
    return { ok: false, fault: kind, message: (err as Error).message }
  }
  if (hash(value) !== committedHash) return { ok: false, fault: 'mismatch', message: 'opens to a value that does not match what its author committed to' }
  return { ok: true, value }
}

/** Receipt checks: the fields (above) and every nonce the dealer recovered from a pledge instead of a NONCE. */
export function checkReceiptTimelock (receipt: Receipt): string[] {
  const commit = receipt.commit.body
  const reveal = receipt.reveal.body
  const problems = checkTimelockFields(commit, receipt.pledges)
  const recovered = reveal.recovered
  if (recovered === undefined) return problems
  if (commit.timelock === undefined) return [...problems, 'reveal: recovers nonces on a table that is not time-locked']
  if (recovered.length === 0) problems.push('reveal: recovered is empty: it is absent when no nonce was recovered')
  const chain = timelockChain(commit)
  if (typeof chain === 'string' || reveal.beacon === null) return problems
  const sent = new Set(reveal.nonces.map(n => n.body.seat))
  for (const r of recovered) {
    const what = `recovered nonce of seat ${r.seat}`
    if (sent.has(r.seat)) problems.push(`${what}: the seat's own NONCE is in the reveal too`)
    const pledge = receipt.pledges.find(p => p.body.seat === r.seat)
    if (pledge?.body.timelock === undefined) { problems.push(`${what}: no time-locked pledge to recover it from`); continue }
    const opened = openCommitted(pledge.body.timelock, chain, reveal.beacon, pledge.body.nonceHash)
    if (!opened.ok) problems.push(`${what}: the pledge's timelock ${opened.message}`)
    else if (opened.value !== r.nonce) problems.push(`${what}: is not what the pledge's timelock holds`)
  }
  return problems
}

/** Nonces by seat with the recovered ones filled in. */
export function recoveredNonces (nonces: string[], recovered: ReadonlyArray<{ seat: number, nonce: string }> | undefined): string[] {
  const out = [...nonces]
  for (const r of recovered ?? []) if (r.seat >= 0 && r.seat < out.length) out[r.seat] = r.nonce
  return out
}

export type { SignedCommit }
