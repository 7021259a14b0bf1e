import { bls12_381 } from '@noble/curves/bls12-381.js'
import { hkdf } from '@noble/hashes/hkdf.js'
import { hmac } from '@noble/hashes/hmac.js'
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js'
import { chacha20poly1305 } from '@noble/ciphers/chacha.js'
import { bytesEqual, concatBytes, fromHex, fromUtf8, toBase64, utf8 } from '../bytes.js'
import { beaconMessage } from '../beacon/verify.js'
import { SCHEMES } from '../beacon/schemes.js'
import type { ChainInfo } from '../beacon/chain-info.js'
import type { BeaconEntry } from '../beacon/entry.js'
import { bls12381G1FromBytes, bls12381G2FromBytes } from '../beacon/bls12-381.js'
import { armorAge, parseTimelock, type TimelockCiphertext } from './format.js'
import { TimelockError } from './errors.js'

/**
 * tlock, pure and browser-safe, on @noble/curves, @noble/hashes and @noble/ciphers: byte for byte
 * the computation of tlock-js 0.9.0 for `bls-unchained-g1-rfc9380` (Boneh–Franklin IBE on
 * BLS12-381: identity sha256(u64be(R)) hashed to G1 with the RFC 9380 tag, chain key and U on G2,
 * and round R's BLS signature is the identity's private key), wrapped in age v1 (header MAC, HKDF,
 * ChaCha20-Poly1305 STREAM). Sealing takes its randomness from the caller, so the protocol
 * machines stay pure; its output is opened by tlock-js and tlock-js's by {@link openTimelock}
 * (test/timelock-core.test.ts). No curve or field arithmetic is written here: only noble's
 * hash-to-curve, pairing, exponentiation, point decoding and scalar multiplication, and byte layouts.
 */

/** The schemes a table can time-lock to: tlock's own scheme on quicknet, the local and group beacons. */
export const TIMELOCK_SCHEMES = ['bls-unchained-g1-rfc9380'] as const

export function timelockSupported (info: Pick<ChainInfo, 'schemeID'>): boolean {
  return (TIMELOCK_SCHEMES as readonly string[]).includes(info.schemeID)
}

type Fp2 = { c0: bigint, c1: bigint }
type Fp6 = { c0: Fp2, c1: Fp2, c2: Fp2 }
type Fp12 = { c0: Fp6, c1: Fp6 }

// tlock's (and kilic/drand's) serialisation of a GT element: c1 before c0 at every level of the
// tower, each base-field element 48 bytes big-endian.
function fpBytes (x: bigint): Uint8Array {
  return fromHex(x.toString(16).padStart(96, '0'))
}
const fp2Bytes = (x: Fp2): Uint8Array => concatBytes(fpBytes(x.c1), fpBytes(x.c0))
const fp6Bytes = (x: Fp6): Uint8Array => concatBytes(fp2Bytes(x.c2), fp2Bytes(x.c1), fp2Bytes(x.c0))
const fp12Bytes = (x: Fp12): Uint8Array => concatBytes(fp6Bytes(x.c1), fp6Bytes(x.c0))

function tagged (tag: string, ...parts: Uint8Array[]): Uint8Array {
  return nobleSha256(concatBytes(utf8(tag), ...parts))
}

function xor (a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length)
  for (let i = 0; i < a.length; i++) out[i] = a[i] ^ b[i]
  return out
}

/** tlock's H3: sigma ‖ msg to a scalar below r, by rejection sampling on sha256(u16le(i) ‖ h). */
function h3 (sigma: Uint8Array, msg: Uint8Array): bigint {
  const h = tagged('IBE-H3', sigma, msg)
  const order = bls12_381.fields.Fr.ORDER
  for (let i = 1; i < 65535; i++) {
    const data = nobleSha256(concatBytes(new Uint8Array([i & 0xff, i >> 8]), h))
    data[0] = data[0] >> 1
    let n = 0n
    for (const b of data) n = (n << 8n) | BigInt(b)
    if (n < order) return n
  }
  throw new TimelockError('undecryptable', 'IBE: no scalar for this sigma')
}

/** Unwraps the age file key: sigma = V ⊕ H2(e(σ_R, U)), key = W ⊕ H4(sigma), then U = H3(sigma, key)·G2. */
function unwrapFileKey (signature: Uint8Array, body: Uint8Array): Uint8Array {
  let sig, U
  try {
    sig = bls12381G1FromBytes(signature, 'round signature')
    U = bls12381G2FromBytes(body.subarray(0, 96), 'IBE ciphertext U')
  } catch (err) {
    throw new TimelockError('undecryptable', (err as Error).message)
  }
  const V = body.subarray(96, 112)
  const W = body.subarray(112, 128)
  const gid = bls12_381.pairing(sig, U) as unknown as Fp12
  const sigma = xor(V, tagged('IBE-H2', fp12Bytes(gid)).subarray(0, V.length))
  const fileKey = xor(W, tagged('IBE-H4', sigma).subarray(0, W.length))
  let rP
  try {
    rP = bls12_381.G2.Point.BASE.multiply(h3(sigma, fileKey))
  } catch {
    throw new TimelockError('undecryptable', 'IBE: the scalar is zero')
  }
  if (!rP.equals(U)) {
    throw new TimelockError('undecryptable', 'IBE check failed (U ≠ rP): not locked to this round of this chain, or corrupt')
  }
  return fileKey
}

const CHUNK = 64 * 1024
const TAG = 16

/** age's payload: HKDF-SHA256(file key, nonce, "payload") keys ChaCha20-Poly1305 over 64 KiB chunks. */
function openPayload (fileKey: Uint8Array, payload: Uint8Array): Uint8Array {
  const key = hkdf(nobleSha256, fileKey, payload.subarray(0, 16), utf8('payload'), 32)
  const body = payload.subarray(16)
  const chunks = Math.max(1, Math.ceil(body.length / (CHUNK + TAG)))
  const out: Uint8Array[] = []
  for (let c = 0; c < chunks; c++) {
    const nonce = new Uint8Array(12)
    new DataView(nonce.buffer).setUint32(7, c)
    if (c === chunks - 1) nonce[11] = 1
    try {
      out.push(chacha20poly1305(key, nonce).decrypt(body.subarray(c * (CHUNK + TAG), (c + 1) * (CHUNK + TAG))))
    } catch {
      throw new TimelockError('undecryptable', 'age payload does not authenticate')
    }
  }
  return concatBytes(...out)
}

/**
 * Opens `ct` with the entry of its round. The caller has verified `entry` against `chain` (e.g.
 * verifyBoundBeacon) and checked the target (checkTimelockTarget); this only decrypts.
 */
export function openParsedTimelock (ct: TimelockCiphertext, chain: Pick<ChainInfo, 'schemeID'>, entry: Pick<BeaconEntry, 'signature'>): Uint8Array {
  if (!timelockSupported(chain)) throw new TimelockError('unsupported', `scheme ${chain.schemeID} has no timelock encryption here (needs ${TIMELOCK_SCHEMES.join(', ')})`)
  const fileKey = unwrapFileKey(fromHex(entry.signature, 'round signature'), ct.stanzaBody)
  const macKey = hkdf(nobleSha256, fileKey, new Uint8Array(0), utf8('header'), 32)
  if (!bytesEqual(hmac(nobleSha256, macKey, ct.macInput), ct.mac)) throw new TimelockError('undecryptable', 'age header MAC does not verify')
  return openPayload(fileKey, ct.payload)
}

// Opening costs two point decodings and a pairing (~0.1 s here), and every node of a table opens
// the same few ciphertexts with the same entry (to write its record, then to check it): a bounded
// memo of results, keyed by everything the result depends on.
const opened = new Map<string, Uint8Array | TimelockError>()

export function openTimelock (armored: string, chain: Pick<ChainInfo, 'schemeID'>, entry: Pick<BeaconEntry, 'signature'>): Uint8Array {
  const key = `${chain.schemeID}\n${entry.signature}\n${armored}`
  let result = opened.get(key)
  if (result === undefined) {
    try {
      result = openParsedTimelock(parseTimelock(armored), chain, entry)
    } catch (err) {
      if (!(err instanceof TimelockError)) throw err
      result = err
    }
    if (opened.size >= 256) opened.clear()
    opened.set(key, result)
  }
  if (result instanceof TimelockError) throw result
  return result.slice()
}

/** {@link openTimelock} for a value that is text (a secret or a nonce): UTF-8, fatal on bad bytes. */
export function openTimelockText (armored: string, chain: Pick<ChainInfo, 'schemeID'>, entry: Pick<BeaconEntry, 'signature'>): string {
  const bytes = openTimelock(armored, chain, entry)
  try {
    return fromUtf8(bytes)
  } catch {
    throw new TimelockError('not-text', 'opens to bytes that are not UTF-8 text')
  }
}

// Decoding the chain key (a G2 point, with its subgroup check) costs as much as a third of a seal;
// a node seals to the same chain hand after hand.
const chainKeys = new Map<string, ReturnType<typeof bls12381G2FromBytes>>()
function chainKey (publicKey: string): ReturnType<typeof bls12381G2FromBytes> {
  let point = chainKeys.get(publicKey)
  if (point === undefined) {
    point = bls12381G2FromBytes(fromHex(publicKey, 'chain public key'), 'chain public key')
    if (chainKeys.size >= 16) chainKeys.clear()
    chainKeys.set(publicKey, point)
  }
  return point
}

/**
 * Seals `plaintext` to `round` of `chain` (age v1, one `tlock` stanza, armored as tlock-js does).
 * `random` gives the 48 random bytes it needs (file key, IBE sigma, payload nonce).
 */
export function sealTimelock (plaintext: Uint8Array, chain: Pick<ChainInfo, 'schemeID' | 'public_key' | 'hash'>, round: number, random: (n: number) => Uint8Array): string {
  if (!timelockSupported(chain)) throw new TimelockError('unsupported', `scheme ${chain.schemeID} has no timelock encryption here (needs ${TIMELOCK_SCHEMES.join(', ')})`)
  if (!Number.isSafeInteger(round) || round < 1) throw new TimelockError('malformed', `cannot lock to round ${String(round)}`)
  const scheme = SCHEMES['bls-unchained-g1-rfc9380']
  const fileKey = random(16)
  const sigma = random(16)
  const nonce = random(16)
  // IBE wrap of the file key, as tlock-js's encOnG2: U = r·G2, V = sigma ⊕ H2(e(Q_id, P)^r), W = key ⊕ H4(sigma).
  const qid = bls12_381.shortSignatures.hash(beaconMessage(scheme, round), scheme.dst)
  const master = chainKey(chain.public_key)
  const r = h3(sigma, fileKey)
  const U = bls12_381.G2.Point.BASE.multiply(r).toBytes(true)
  const rGid = bls12_381.fields.Fp12.pow(bls12_381.pairing(qid, master), r) as unknown as Fp12
  const V = xor(sigma, tagged('IBE-H2', fp12Bytes(rGid)).subarray(0, 16))
  const W = xor(fileKey, tagged('IBE-H4', sigma).subarray(0, 16))
  const body = toBase64(concatBytes(U, V, W), true)
  const bodyLines: string[] = []
  for (let i = 0; i < body.length; i += 64) bodyLines.push(body.slice(i, i + 64))
  const header = utf8(`age-encryption.org/v1\n-> tlock ${round} ${chain.hash}\n${bodyLines.join('\n')}\n---`)
  const macKey = hkdf(nobleSha256, fileKey, new Uint8Array(0), utf8('header'), 32)
  const mac = toBase64(hmac(nobleSha256, macKey, header), true)
  const key = hkdf(nobleSha256, fileKey, nonce, utf8('payload'), 32)
  if (plaintext.length > CHUNK) throw new TimelockError('malformed', 'fairdeal seals values of at most 64 KiB')
  const last = new Uint8Array(12)
  last[11] = 1
  const sealed = chacha20poly1305(key, last).encrypt(plaintext)
  return armorAge(concatBytes(header, utf8(` ${mac}\n`), nonce, sealed))
}

export function sealTimelockText (text: string, chain: Pick<ChainInfo, 'schemeID' | 'public_key' | 'hash'>, round: number, random: (n: number) => Uint8Array): string {
  return sealTimelock(utf8(text), chain, round, random)
}
