import { CoreInputError } from '../errors.js'
import { canonicalBytes } from '../canonical.js'
import { isPeerId } from '../identity.js'
import { MAX_PERIOD_SECONDS } from './chain-info.js'
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

/** Checks a group's parameters field by field; the result holds exactly the fields above. */
export function parseGroupParams (value: unknown, what = 'beacon group'): GroupParams {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CoreInputError(`${what} must be a JSON object`)
  const o = value as Record<string, unknown>
  if (typeof o.id !== 'string' || !GROUP_ID.test(o.id)) throw new CoreInputError(`${what}: id must be 1 to 64 letters, digits or . _ : -`)
  if (!Array.isArray(o.members) || o.members.length < 1 || o.members.length > MAX_GROUP_MEMBERS) {
    throw new CoreInputError(`${what}: members must be a list of 1 to ${MAX_GROUP_MEMBERS} peer ids`)
  }
  const members = o.members.map((m, i) => {
    if (!isPeerId(m)) throw new CoreInputError(`${what}: members[${i}] is not an Ed25519 peer id`)
    return m
  })
  if (new Set(members).size !== members.length) throw new CoreInputError(`${what}: a peer id is listed twice in members`)
  const threshold = int(o.threshold, `${what}: threshold`, 1, members.length)
  checkThreshold(threshold, members.length)
  const period = int(o.period, `${what}: period`, 1, MAX_PERIOD_SECONDS)
  const genesisTime = int(o.genesisTime, `${what}: genesisTime`, 1, 2 ** 40)
  const dkg = o.dkg as Record<string, unknown> | undefined
  if (typeof dkg !== 'object' || dkg === null) throw new CoreInputError(`${what}: dkg must be an object {start, phaseMs}`)
  const start = int(dkg.start, `${what}: dkg.start`, 1, 2 ** 50)
  const phaseMs = int(dkg.phaseMs, `${what}: dkg.phaseMs`, MIN_PHASE_MS, MAX_PHASE_MS)
  if (genesisTime * 1000 <= start) {
    throw new CoreInputError(`${what}: genesisTime must be after dkg.start (round 1 comes after the DKG begins)`)
  }
  return { id: o.id, members, threshold, period, genesisTime, dkg: { start, phaseMs } }
}

/** The DKG session id: every DKG document names it, so none can be replayed into another group or run. */
export function groupSession (params: GroupParams): string {
  return groupDigest('session', canonicalBytes(params))
}

/** Member index (1-based) of a peer id, or 0 when it is not a member. */
export function memberIndex (params: GroupParams, peerId: string): number {
  return params.members.indexOf(peerId) + 1
}
