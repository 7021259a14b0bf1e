import { bls12_381 } from '@noble/curves/bls12-381.js'
import { CoreInputError } from '../errors.js'
import { concatBytes, fromHex, sha256, toHex, utf8 } from '../bytes.js'
import { computeChainHash, MAX_PERIOD_SECONDS, type ChainInfo } from './chain-info.js'
import type { BeaconEntry } from './entry.js'
import { checkRound } from './rounds.js'
import { SCHEMES } from './schemes.js'
import { beaconMessage } from './verify.js'

/**
 * The label every local beacon carries wherever it is shown: its rounds are exactly as unpredictable
 * as its operator is honest, since whoever holds the key can compute any round in advance.
 */
export const LOCAL_BEACON_TRUST = 'local, trust = its operator'
export const LOCAL_BEACON_ID = 'fairdeal-local'

// quicknet's scheme, so the real drand-client verifies a local beacon exactly as it does quicknet.
const SCHEME = SCHEMES['bls-unchained-g1-rfc9380']

/** A BLS12-381 secret key (32 bytes) from 48 bytes of seed (drand-style keys reduce a wide seed). */
export function localBeaconSecretKey (seed48: Uint8Array): Uint8Array {
  if (seed48.length !== 48) throw new CoreInputError('a local beacon key seed is 48 bytes')
  return bls12_381.utils.randomSecretKey(seed48)
}

export interface LocalChainParams {
  secretKey: Uint8Array
  /** Seconds between rounds. */
  period: number
  /** Unix seconds of round 1. */
  genesisTime: number
  beaconID?: string
}

/**
 * The chain info of a single-key local beacon. drand's groupHash hashes the group file; a local
 * beacon has no group, so its groupHash is sha256("fairdeal-local-beacon-v1" ‖ public key).
 */
export function localChainInfo (params: LocalChainParams): ChainInfo {
  const { period, genesisTime } = params
  if (!Number.isSafeInteger(period) || period < 1 || period > MAX_PERIOD_SECONDS) {
    throw new CoreInputError(`period must be an integer number of seconds from 1 to ${MAX_PERIOD_SECONDS}, got ${String(period)}`)
  }
  if (!Number.isSafeInteger(genesisTime) || genesisTime < 1) throw new CoreInputError(`genesis time must be positive Unix seconds, got ${String(genesisTime)}`)
  const publicKey = bls12_381.shortSignatures.getPublicKey(params.secretKey).toBytes()
  const withoutHash = {
    public_key: toHex(publicKey),
    period,
    genesis_time: genesisTime,
    groupHash: toHex(sha256(concatBytes(utf8('fairdeal-local-beacon-v1'), publicKey))),
    schemeID: SCHEME.id,
    metadata: { beaconID: params.beaconID ?? LOCAL_BEACON_ID }
  }
  return { ...withoutHash, hash: computeChainHash(withoutHash) }
}

/** The entry of `round`: a deterministic BLS signature, so any round can be recomputed on demand. */
export function signLocalRound (secretKey: Uint8Array, round: number): BeaconEntry {
  checkRound(round)
  const hashed = bls12_381.shortSignatures.hash(beaconMessage(SCHEME, round), SCHEME.dst)
  const signature = bls12_381.shortSignatures.sign(hashed, secretKey).toBytes()
  return { round, randomness: toHex(sha256(signature)), signature: toHex(signature) }
}

export function secretKeyFromHex (hex: string): Uint8Array {
  return fromHex(hex, 'local beacon secret key', 32)
}
