import { CoreInputError } from '../errors.js'
import { canonicalBytes } from '../canonical.js'
import { isPeerId } from '../identity.js'
import { MAX_PERIOD_SECONDS, parseChainInfo, type ChainInfo } from './chain-info.js'
import { roundTime } from './rounds.js'
import { isHex } from '../bytes.js'
import { checkThreshold, groupDigest, MAX_GROUP_MEMBERS } from './threshold.js'

/**
 * What every member of a beacon group agrees on before the DKG: who the members are (their order
 * gives their indices 1…n), the threshold, the chain's period and genesis, and when the DKG runs.
 * Its canonical hash is the DKG's session id, bound into every document the DKG signs.
 */
export interface GroupParams {
  /** The group's id; also the chain's beaconID. */
  id: string
  /** Member peer ids; member i (1-based) is members[i - 1]. */
  members: string[]
  threshold: number
  /** Seconds between rounds. */
  period: number
  /**
   * Unix seconds of round 1, after the DKG starts. Usually the DKG is over long before its last
   * deadline; if it is not, the first rounds are produced late (never early).
   */
  genesisTime: number
  dkg: {
    /** Unix milliseconds at which dealing starts. */
    start: number
    /** Each of the three phases (deal, complain, answer) ends at most this long after the previous one. */
    phaseMs: number
  }
  /**
   * Present when this run is a reshare of an existing group (docs/beacon-group.md "Resharing"):
   * the old group's members deal their shares to `members`, and the new group keeps the old key,
   * hence the chain. Absent for a group's first DKG.
   */
  reshare?: ReshareFrom
}

/** The group a reshare starts from: everything a new member needs to check the old members' deals. */
export interface ReshareFrom {
  /** The session of the old group's DKG or last reshare (its members' share files name it). */
  session: string
  /** The old members in index order: old member i (the dealer of index i) is members[i - 1]. */
  members: string[]
  /** The old threshold: a reshare needs that many qualified old dealers. */
  threshold: number
  /** The old group's summed commitments (hex G2): old public share of i = Σ C_k i^k; C_0 is the group key. */
  commitments: string[]
  /** The chain, kept unchanged: the new group signs under the same key and chain hash. */
  chain: ChainInfo
  /** The first round the new group signs; the old group signs every round before it. */
  transition: number
}

export const MIN_PHASE_MS = 100
export const MAX_PHASE_MS = 3_600_000
export const GROUP_ID = /^[A-Za-z0-9._:-]{1,64}$/

/** floor(n/2) + 1: a majority, so two disjoint halves can never both produce rounds. */
export function defaultThreshold (members: number): number {
  return Math.floor(members / 2) + 1
}

function int (v: unknown, what: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
    throw new CoreInputError(`${what} must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`)
  }
  return v
}

/** A list of 1 to MAX_GROUP_MEMBERS distinct Ed25519 peer ids (a group's members, a reshare's old members). */
function parseMembers (value: unknown, what: string): string[] {
  if (!Array.isArray(value) || value.length < 1 || value.length > MAX_GROUP_MEMBERS) {
    throw new CoreInputError(`${what}: members must be a list of 1 to ${MAX_GROUP_MEMBERS} peer ids`)
  }
  const members = value.map((m, i) => {
    if (!isPeerId(m)) throw new CoreInputError(`${what}: members[${i}] is not an Ed25519 peer id`)
    return m
  })
  if (new Set(members).size !== members.length) throw new CoreInputError(`${what}: a peer id is listed twice in members`)
  return members
}

/** Checks a group's parameters field by field; the result holds exactly the fields above. */
export function parseGroupParams (value: unknown, what = 'beacon group'): GroupParams {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CoreInputError(`${what} must be a JSON object`)
  const o = value as Record<string, unknown>
  if (typeof o.id !== 'string' || !GROUP_ID.test(o.id)) throw new CoreInputError(`${what}: id must be 1 to 64 letters, digits or . _ : -`)
  const members = parseMembers(o.members, what)
  const threshold = int(o.threshold, `${what}: threshold`, 1, members.length)
  checkThreshold(threshold, members.length)
  const period = int(o.period, `${what}: period`, 1, MAX_PERIOD_SECONDS)
  const genesisTime = int(o.genesisTime, `${what}: genesisTime`, 1, 2 ** 40)
  const dkg = o.dkg as Record<string, unknown> | undefined
  if (typeof dkg !== 'object' || dkg === null) throw new CoreInputError(`${what}: dkg must be an object {start, phaseMs}`)
  const start = int(dkg.start, `${what}: dkg.start`, 1, 2 ** 50)
  const phaseMs = int(dkg.phaseMs, `${what}: dkg.phaseMs`, MIN_PHASE_MS, MAX_PHASE_MS)
  if (o.reshare === undefined) {
    if (genesisTime * 1000 <= start) {
      throw new CoreInputError(`${what}: genesisTime must be after dkg.start (round 1 comes after the DKG begins)`)
    }
    return { id: o.id, members, threshold, period, genesisTime, dkg: { start, phaseMs } }
  }
  const reshare = parseReshareFrom(o.reshare, `${what}: reshare`)
  const chain = reshare.chain
  if (chain.period !== period || chain.genesis_time !== genesisTime || chain.metadata.beaconID !== o.id) {
    throw new CoreInputError(`${what}: a reshare keeps the chain: id, period and genesisTime must be the chain's (${chain.metadata.beaconID}, ${chain.period}, ${chain.genesis_time})`)
  }
  // The old group signs up to the transition: the reshare must be over (its three phases) before it.
  if (roundTime(chain, reshare.transition) <= start + 3 * phaseMs) {
    throw new CoreInputError(`${what}: reshare.transition (round ${reshare.transition}) must come after the reshare's last phase ends (dkg.start + 3 × phaseMs)`)
  }
  return { id: o.id, members, threshold, period, genesisTime, dkg: { start, phaseMs }, reshare }
}

/** Checks the `reshare` block of a group's parameters; exactly its fields. */
export function parseReshareFrom (value: unknown, what: string): ReshareFrom {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CoreInputError(`${what} must be a JSON object`)
  const o = value as Record<string, unknown>
  const keys = ['session', 'members', 'threshold', 'commitments', 'chain', 'transition']
  const extra = Object.keys(o).filter(k => !keys.includes(k))
  if (extra.length > 0) throw new CoreInputError(`${what}: unexpected field ${extra.join(', ').slice(0, 60)}`)
  if (typeof o.session !== 'string' || !/^[0-9a-f]{64}$/.test(o.session)) throw new CoreInputError(`${what}: session must be 32 bytes of lowercase hex`)
  const members = parseMembers(o.members, what)
  const threshold = int(o.threshold, `${what}: threshold`, 1, members.length)
  if (!Array.isArray(o.commitments) || o.commitments.length !== threshold || !o.commitments.every(c => isHex(c, 96))) {
    throw new CoreInputError(`${what}: commitments must list ${threshold} G2 points (96 bytes of hex each)`)
  }
  const chain = parseChainInfo(o.chain, `${what}: chain`)
  if (o.commitments[0] !== chain.public_key) throw new CoreInputError(`${what}: commitments[0] must be the chain's public key (the old group's key)`)
  const transition = int(o.transition, `${what}: transition`, 2, 2 ** 40)
  return { session: o.session, members, threshold, commitments: o.commitments as string[], chain, transition }
}

/**
 * The dealers of a run: the old group's members in a reshare, the members themselves in a DKG.
 * Deals, shares and complaints name dealers by their index in this list.
 */
export function dealersOf (params: GroupParams): string[] {
  return params.reshare?.members ?? params.members
}

/** Everyone who takes part in a run (dealers and members), each once: whom its documents go to. */
export function participantsOf (params: GroupParams): string[] {
  return [...new Set([...dealersOf(params), ...params.members])]
}

/** The DKG session id: every DKG document names it, so none can be replayed into another group or run. */
export function groupSession (params: GroupParams): string {
  return groupDigest('session', canonicalBytes(params))
}

/** Member index (1-based) of a peer id, or 0 when it is not a member. */
export function memberIndex (params: GroupParams, peerId: string): number {
  return params.members.indexOf(peerId) + 1
}

/**
 * The parameters of a reshare of a group (its parameters and the outcome of its last DKG or
 * reshare) to `members` with `threshold`, dealing at `dkg.start`, the new group signing from round
 * `transition` on. Checked as any group's parameters.
 */
export function reshareParams (old: { params: GroupParams, commitments: string[], chainInfo: ChainInfo }, next: {
  members: string[]
  threshold: number
  dkg: { start: number, phaseMs: number }
  transition: number
}): GroupParams {
  return parseGroupParams({
    id: old.params.id,
    members: next.members,
    threshold: next.threshold,
    period: old.params.period,
    genesisTime: old.params.genesisTime,
    dkg: next.dkg,
    reshare: {
      session: groupSession(old.params),
      members: old.params.members,
      threshold: old.params.threshold,
      commitments: old.commitments,
      chain: old.chainInfo,
      transition: next.transition
    }
  }, 'reshare')
}
