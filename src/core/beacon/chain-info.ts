import { CoreInputError } from '../errors.js'
import { concatBytes, fromHex, isHex, sha256, toHex, utf8 } from '../bytes.js'
import { SCHEME_IDS, SCHEMES, isSchemeId, type SchemeId } from './schemes.js'

/** A drand chain's `/info` document (v1 HTTP API), the only thing an offline verifier needs. */
export interface ChainInfo {
  /** Hex of the group public key, in the encoding of the scheme (see SCHEMES). */
  public_key: string
  /** Seconds between rounds. */
  period: number
  /** Unix seconds of round 1. */
  genesis_time: number
  /** Chain hash: sha256 over the fields below, see computeChainHash. Names the chain everywhere. */
  hash: string
  /** Hash of the group file; also the previous_signature of round 1 on chained schemes. */
  groupHash: string
  schemeID: SchemeId
  metadata: { beaconID: string }
}

export const MAX_PERIOD_SECONDS = 3600
const MAX_BEACON_ID_LENGTH = 64

/** drand's default chain (mainnet) has beacon ID 'default' (or none): its hash omits the ID, its relay URLs the hash. */
export function isDefaultBeaconId (id: string): boolean {
  return id === '' || id === 'default'
}

/**
 * drand's chain hash: sha256(u32be(period) ‖ i64be(genesis_time) ‖ public_key ‖ groupHash ‖
 * beaconID unless it is the default one). Recomputing it is what ties a chain hash named in a
 * COMMIT to a public key.
 */
export function computeChainHash (info: Omit<ChainInfo, 'hash'>): string {
  const head = new Uint8Array(12)
  const view = new DataView(head.buffer)
  view.setUint32(0, info.period)
  view.setBigInt64(4, BigInt(info.genesis_time))
  const parts = [head, fromHex(info.public_key, 'public_key'), fromHex(info.groupHash, 'groupHash')]
  if (!isDefaultBeaconId(info.metadata.beaconID)) parts.push(utf8(info.metadata.beaconID))
  return toHex(sha256(concatBytes(...parts)))
}

function field (obj: Record<string, unknown>, key: string, what: string): unknown {
  if (obj[key] === undefined) throw new CoreInputError(`${what}: missing field ${key}`)
  return obj[key]
}

function hexField (obj: Record<string, unknown>, key: string, what: string, bytes: number): string {
  const value = field(obj, key, what)
  if (!isHex(value, bytes)) {
    throw new CoreInputError(`${what}: ${key} must be ${bytes} bytes of lowercase hex (${bytes * 2} characters), got ${JSON.stringify(String(value).slice(0, 80))}`)
  }
  return value
}

function intField (obj: Record<string, unknown>, key: string, what: string, min: number, max: number): number {
  const value = field(obj, key, what)
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new CoreInputError(`${what}: ${key} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`)
  }
  return value
}

/**
 * Validates a chain info document (as served at `/info`, or from a preset) and recomputes its
 * chain hash. Unknown extra fields are dropped; the result holds exactly the fields above.
 */
export function parseChainInfo (value: unknown, what = 'chain info'): ChainInfo {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CoreInputError(`${what} must be a JSON object`)
  }
  const obj = value as Record<string, unknown>
  const schemeID = field(obj, 'schemeID', what)
  if (!isSchemeId(schemeID)) {
    throw new CoreInputError(`${what}: unknown schemeID ${JSON.stringify(String(schemeID).slice(0, 80))} (known: ${SCHEME_IDS.join(', ')})`)
  }
  const scheme = SCHEMES[schemeID]
  const metadata = field(obj, 'metadata', what)
  const beaconID = (typeof metadata === 'object' && metadata !== null) ? (metadata as Record<string, unknown>).beaconID : undefined
  if (typeof beaconID !== 'string' || beaconID.length > MAX_BEACON_ID_LENGTH || !/^[\x21-\x7e]*$/.test(beaconID)) {
    throw new CoreInputError(`${what}: metadata.beaconID must be a string of at most ${MAX_BEACON_ID_LENGTH} printable ASCII characters`)
  }
  const info: ChainInfo = {
    public_key: hexField(obj, 'public_key', what, scheme.publicKeyBytes),
    period: intField(obj, 'period', what, 1, MAX_PERIOD_SECONDS),
    genesis_time: intField(obj, 'genesis_time', what, 1, 2 ** 40),
    hash: hexField(obj, 'hash', what, 32),
    groupHash: hexField(obj, 'groupHash', what, 32),
    schemeID,
    metadata: { beaconID }
  }
  const recomputed = computeChainHash(info)
  if (recomputed !== info.hash) {
    throw new CoreInputError(`${what}: hash ${info.hash} does not match its contents (recomputed ${recomputed})`)
  }
  return info
}

/** True when two chain infos describe the same chain, field by field. */
export function sameChain (a: ChainInfo, b: ChainInfo): boolean {
  return a.hash === b.hash && a.public_key === b.public_key && a.period === b.period &&
    a.genesis_time === b.genesis_time && a.groupHash === b.groupHash && a.schemeID === b.schemeID &&
    a.metadata.beaconID === b.metadata.beaconID
}
