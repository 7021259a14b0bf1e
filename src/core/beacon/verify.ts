import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesEqual, concatBytes, fromHex, sha256, toHex } from '../bytes.js'
import { BoundedSet } from '../bounded-set.js'
import { computeChainHash, type ChainInfo } from './chain-info.js'
import { parseBeaconEntry, type BeaconEntry } from './entry.js'
import { SCHEMES, isSchemeId, type SchemeSpec } from './schemes.js'
import { bls12381G1FromBytes, bls12381G2FromBytes, verifySignatureOnG1, verifySignatureOnG2 } from './bls12-381.js'
import { bn254G1FromBytes, bn254G2FromBytes, bn254HashToG1, bn254VerifyOnG1 } from './bn254.js'

export type BeaconRejection =
  | 'bad-chain-info' // the chain info is inconsistent (hash does not recompute, key not a point)
  | 'wrong-chain' // the entry is checked against another chain than the one bound
  | 'unknown-scheme'
  | 'malformed-entry' // not drand's entry shape
  | 'round-mismatch' // a valid-looking entry, but not for the round that was named
  | 'randomness-mismatch' // randomness != sha256(signature)
  | 'malformed-point' // the signature does not decode to a group element
  | 'bad-signature' // the pairing check failed

export type BeaconVerdict =
  | { ok: true, entry: BeaconEntry }
  | { ok: false, reason: BeaconRejection, message: string }

function reject (reason: BeaconRejection, message: string): BeaconVerdict {
  return { ok: false, reason, message }
}

/** u64 big-endian, the encoding of a round inside every drand message. */
export function roundBytes (round: number): Uint8Array {
  const out = new Uint8Array(8)
  new DataView(out.buffer).setBigUint64(0, BigInt(round))
  return out
}

/** The bytes drand signs for `entry` under `scheme` (before hash-to-curve). */
export function beaconMessage (scheme: SchemeSpec, round: number, previousSignature?: Uint8Array): Uint8Array {
  const data = scheme.chained ? concatBytes(previousSignature ?? new Uint8Array(0), roundBytes(round)) : roundBytes(round)
  return scheme.messageHash === 'keccak256' ? keccak_256(data) : sha256(data)
}

// Decoding a public key costs a square root and a subgroup check; a verifier sees the same few keys.
const publicKeys = new Map<string, unknown>()

function publicKeyPoint<T> (info: ChainInfo, decode: (bytes: Uint8Array, what: string) => T): T {
  const key = `${info.schemeID}:${info.public_key}`
  let point = publicKeys.get(key) as T | undefined
  if (point === undefined) {
    point = decode(fromHex(info.public_key, 'public_key'), 'chain public key')
    if (publicKeys.size >= 64) publicKeys.clear()
    publicKeys.set(key, point)
  }
  return point
}

/**
 * Signatures that verified in this process, by scheme, chain key, signature and message. A pairing
 * check costs 25-45 ms, and one round is checked again and again: by the dealer and every seat a
 * node hosts, by each receipt of a log that binds it, and by each log of a table a verifier reads.
 * Only successes are kept, under the exact bytes checked, so a hit answers what the check would.
 */
const verifiedSignatures = new BoundedSet(1024)

/** Forgets every remembered signature: benchmarks measuring one check's cost call it before each check. */
export function forgetVerifiedBeaconSignatures (): void {
  verifiedSignatures.clear()
}

function checkSignature (scheme: SchemeSpec, info: ChainInfo, signature: Uint8Array, message: Uint8Array): BeaconVerdict | undefined {
  const key = `${scheme.id}:${info.public_key}:${toHex(signature)}:${toHex(message)}`
  if (verifiedSignatures.has(key)) return undefined
  const failure = checkSignatureOnce(scheme, info, signature, message)
  if (failure === undefined) verifiedSignatures.add(key)
  return failure
}

function checkSignatureOnce (scheme: SchemeSpec, info: ChainInfo, signature: Uint8Array, message: Uint8Array): BeaconVerdict | undefined {
  // Keys come from the chain info: a bad one is the chain's fault, not the entry's.
  let ok: boolean
  if (scheme.curve === 'bn254') {
    let pk
    try { pk = publicKeyPoint(info, bn254G2FromBytes) } catch (err) { return reject('bad-chain-info', (err as Error).message) }
    let sig
    try { sig = bn254G1FromBytes(signature, 'signature') } catch (err) { return reject('malformed-point', (err as Error).message) }
    ok = bn254VerifyOnG1(sig, bn254HashToG1(message, scheme.dst), pk)
  } else if (scheme.signatureGroup === 'G1') {
    let pk
    try { pk = publicKeyPoint(info, bls12381G2FromBytes) } catch (err) { return reject('bad-chain-info', (err as Error).message) }
    let sig
    try { sig = bls12381G1FromBytes(signature, 'signature') } catch (err) { return reject('malformed-point', (err as Error).message) }
    ok = verifySignatureOnG1(sig, message, pk, scheme.dst)
  } else {
    let pk
    try { pk = publicKeyPoint(info, bls12381G1FromBytes) } catch (err) { return reject('bad-chain-info', (err as Error).message) }
    let sig
    try { sig = bls12381G2FromBytes(signature, 'signature') } catch (err) { return reject('malformed-point', (err as Error).message) }
    ok = verifySignatureOnG2(sig, message, pk, scheme.dst)
  }
  return ok ? undefined : reject('bad-signature', `signature does not verify for this round under the chain's public key (${scheme.id})`)
}

/**
 * Checks a drand entry offline against the chain info alone, and that it is for `expectedRound`:
 * the round, randomness = sha256(signature), then the BLS signature for the chain's scheme.
 * Never throws on bad input: every failure is a verdict with a reason and a one-line message.
 * On success the verdict carries the entry reduced to drand's fields.
 */
export function verifyBeaconEntry (info: ChainInfo, entry: unknown, expectedRound: number): BeaconVerdict {
  if (!isSchemeId(info?.schemeID)) return reject('unknown-scheme', `unknown drand scheme ${JSON.stringify(String(info?.schemeID).slice(0, 80))}`)
  const scheme = SCHEMES[info.schemeID]
  try {
    const recomputed = computeChainHash(info)
    if (recomputed !== info.hash) return reject('bad-chain-info', `chain info hash ${info.hash} does not match its contents (recomputed ${recomputed})`)
  } catch (err) {
    return reject('bad-chain-info', `chain info is malformed: ${(err as Error).message}`)
  }
  let parsed: BeaconEntry
  try {
    parsed = parseBeaconEntry(entry)
  } catch (err) {
    return reject('malformed-entry', (err as Error).message)
  }
  if (parsed.round !== expectedRound) return reject('round-mismatch', `entry is for round ${parsed.round}, expected round ${expectedRound}`)
  const signature = fromHex(parsed.signature, 'signature')
  if (!bytesEqual(sha256(signature), fromHex(parsed.randomness, 'randomness'))) {
    return reject('randomness-mismatch', 'randomness is not sha256(signature)')
  }
  if (signature.length !== scheme.signatureBytes) {
    return reject('malformed-point', `signature must be ${scheme.signatureBytes} bytes for ${scheme.id}, got ${signature.length}`)
  }
  let previous: Uint8Array | undefined
  if (scheme.chained) {
    if (parsed.previous_signature === undefined) return reject('malformed-entry', `${scheme.id} entries must carry previous_signature`)
    previous = fromHex(parsed.previous_signature, 'previous_signature')
  } else if (parsed.previous_signature !== undefined) {
    return reject('malformed-entry', `${scheme.id} entries carry no previous_signature`)
  }
  const failure = checkSignature(scheme, info, signature, beaconMessage(scheme, parsed.round, previous))
  return failure ?? { ok: true, entry: parsed }
}

/** What a COMMIT names: the chain by its hash, and the round that finishes the key. */
export interface BeaconBinding {
  chainHash: string
  round: number
}

/** verifyBeaconEntry, plus: the chain info is the chain the COMMIT named. */
export function verifyBoundBeacon (info: ChainInfo, binding: BeaconBinding, entry: unknown): BeaconVerdict {
  if (info?.hash !== binding.chainHash) {
    return reject('wrong-chain', `the entry is bound to chain ${String(binding.chainHash).slice(0, 64)}, the chain info given is ${String(info?.hash).slice(0, 64)}`)
  }
  return verifyBeaconEntry(info, entry, binding.round)
}
