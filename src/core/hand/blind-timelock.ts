import { firstRoundAfter, roundTime, verifyBoundBeacon, type ChainInfo } from '../beacon/index.js'
import { G, mulPublic, scalarFromHex, type Point } from '../blind/index.js'
import { checkTimelockTarget, openTimelockText } from '../timelock/index.js'
import type { Signed } from '../signed.js'
import type { BeaconEntry, CommitBody } from './messages.js'
import type { BkeyBody, BunlockBody } from './blind-messages.js'
import { timelockChain } from './timelock-checks.js'

/**
 * The timelock rules of a blind-v1 hand (docs/dealer-blind.md §14), pure and in one place: the key
 * round a COMMIT must name, the target every hand key's ciphertext must have, opening one, and the
 * checks of a BUNLOCK (the machines and the receipt verifier use these).
 */

/** A blind table's planned length of a hand, deal to end, when its config names none. */
export const DEFAULT_BLIND_HAND_MS = 1_800_000

/** Rk: the first round due strictly after the bound round's time plus the planned length of a hand. */
export function blindKeyRound (chain: Pick<ChainInfo, 'genesis_time' | 'period'>, boundRound: number, handMs: number): number {
  return firstRoundAfter(chain, roundTime(chain, boundRound), handMs)
}

/**
 * A seat's check of a COMMIT before its key leaves: `keyRound` present exactly on a time-locked
 * table (handMs given), equal to blindKeyRound with the seat's own handMs. Null when it holds.
 */
export function checkCommitKeyRound (commit: CommitBody, handMs: number | null): string | null {
  if (handMs === null) return commit.keyRound === undefined ? null : 'carries a key round, the table is not time-locked'
  if (commit.keyRound === undefined) return 'names no key round on a time-locked table'
  const chain = timelockChain(commit)
  if (typeof chain === 'string') return `timelock: ${chain}`
  const want = blindKeyRound(chain, (commit.beacon as NonNullable<CommitBody['beacon']>).round, handMs)
  if (commit.keyRound !== want) return `key round ${commit.keyRound}, the table's rule (${handMs} ms after the bound round) gives ${want}`
  return null
}

/** A key's ciphertext: there exactly when the COMMIT names a key round, locked to (chain, keyRound). Null when it holds. */
export function checkKeyTimelock (commit: CommitBody, key: { body: Pick<BkeyBody, 'seat' | 'timelock'> }): string | null {
  const { seat, timelock } = key.body
  if (commit.keyRound === undefined) return timelock === undefined ? null : `key of seat ${seat}: carries a timelock the commit does not ask for`
  if (timelock === undefined) return `key of seat ${seat}: no timelock on a time-locked table`
  if (commit.beacon === null) return `key of seat ${seat}: a time-locked commit needs a beacon round`
  const problem = checkTimelockTarget(timelock, { chainHash: commit.beacon.chainHash, round: commit.keyRound })
  return problem === undefined ? null : `key of seat ${seat}: timelock ${problem}`
}

/** Opens a seat's hand key from its key's timelock with Rk's entry, and checks x·G = pk. */
export function openHandKey (commit: CommitBody, key: { body: Pick<BkeyBody, 'seat' | 'timelock'> }, pub: Point, entry: Pick<BeaconEntry, 'signature'>): { secret: bigint } | { problem: string } {
  const { seat, timelock } = key.body
  const chain = timelockChain(commit)
  if (typeof chain === 'string') return { problem: chain }
  if (timelock === undefined) return { problem: `key of seat ${seat} has no timelock` }
  let x: bigint
  try {
    x = scalarFromHex(openTimelockText(timelock, chain, entry), 'hand key')
  } catch (err) {
    return { problem: `the timelock of seat ${seat} does not open to a hand key: ${(err as Error).message}` }
  }
  if (!mulPublic(G, x).equals(pub)) return { problem: `the timelock of seat ${seat} opens to a key that is not its public key's` }
  return { secret: x }
}

/** The key round's entry of a time-locked hand, checked against the COMMIT's chain: null when it verifies, else why not. */
export function keyRoundProblem (commit: CommitBody, entry: BeaconEntry): string | null {
  if (commit.keyRound === undefined || commit.beacon === null) return 'the hand is not time-locked'
  const chain = timelockChain(commit)
  if (typeof chain === 'string') return chain
  const beacon = verifyBoundBeacon(chain, { chainHash: commit.beacon.chainHash, round: commit.keyRound }, entry)
  return beacon.ok ? null : `key round entry: ${beacon.reason}: ${beacon.message}`
}

/**
 * A BUNLOCK against its hand: signed by the dealer for this table, hand and COMMIT, on a time-locked
 * hand, Rk's entry verifying against the COMMIT's chain, keys in strictly increasing seat order, each
 * x·G = pk of its seat. With `open`, each key must also be what its seat's timelock opens to (the
 * receipt verifier; a seat in play checks the public keys only). Problems as one-liners; `secrets`
 * by seat when there are none.
 */
/**
 * Whether a BREVEAL names one hand key per seat of `n`: a `bsecret` or an entry of its `unlock`, no
 * seat twice or beyond the hand's (docs/dealer-blind.md §10 step 1; the order of the `bsecret`s is a
 * rule of its own). The receipt's check and the invalid-reveal rule both ask it.
 */
export function oneHandKeyPerSeat (reveal: { secrets: ReadonlyArray<{ body: { seat: number } }>, unlock?: { body: { keys: ReadonlyArray<{ seat: number }> } } }, n: number): boolean {
  const keyed = [...reveal.secrets.map(d => d.body.seat), ...(reveal.unlock?.body.keys.map(k => k.seat) ?? [])]
  return keyed.length === n && new Set(keyed).size === n && keyed.every(s => s < n)
}

export function checkBunlock (
  commit: CommitBody, commitDigest: string, doc: Signed<BunlockBody>, keys: ReadonlyArray<{ body: Pick<BkeyBody, 'seat' | 'timelock'> }>,
  pubs: readonly Point[], verifyDoc: (d: Signed<unknown>) => boolean, open: boolean
): { secrets: Map<number, bigint> } | { problems: string[] } {
  const problems: string[] = []
  const body = doc.body
  if (doc.signer !== commit.dealer) problems.push('unlock: not signed by the dealer')
  else if (!verifyDoc(doc)) problems.push('unlock: bad signature')
  if (body.table !== commit.table || body.hand !== commit.hand || body.commit !== commitDigest) problems.push('unlock: names another table, hand or commit')
  if (commit.keyRound === undefined || commit.beacon === null) return { problems: [...problems, 'unlock: on a hand that is not time-locked'] }
  const chain = timelockChain(commit)
  if (typeof chain === 'string') return { problems: [...problems, `unlock: ${chain}`] }
  const beacon = verifyBoundBeacon(chain, { chainHash: commit.beacon.chainHash, round: commit.keyRound }, body.beacon)
  if (!beacon.ok) problems.push(`unlock: key round entry: ${beacon.reason}: ${beacon.message}`)
  const seats = body.keys.map(k => k.seat)
  if (seats.some((s, i) => s >= commit.seats.length || (i > 0 && s <= seats[i - 1]))) problems.push('unlock: keys must be of seats of the hand, in strictly increasing seat order')
  if (problems.length > 0) return { problems }
  const secrets = new Map<number, bigint>()
  for (const k of body.keys) {
    // A hand key is a canonical scalar (below ℓ): the schema checks only 64 hex characters.
    let x: bigint
    try { x = scalarFromHex(k.secret, 'hand key') } catch (err) { problems.push(`unlock: the key of seat ${k.seat}: ${(err as Error).message}`); continue }
    if (!mulPublic(G, x).equals(pubs[k.seat])) { problems.push(`unlock: the key of seat ${k.seat} is not its public key's`); continue }
    if (open) {
      const key = keys.find(d => d.body.seat === k.seat)
      const opened = key === undefined ? { problem: `no key of seat ${k.seat}` } : openHandKey(commit, key, pubs[k.seat], body.beacon)
      if ('problem' in opened) { problems.push(`unlock: ${opened.problem}`); continue }
      if (opened.secret !== x) { problems.push(`unlock: the key of seat ${k.seat} is not what its timelock holds`); continue }
    }
    secrets.set(k.seat, x)
  }
  return problems.length > 0 ? { problems } : { secrets }
}
