/**
 * A verifiable re-encryption shuffle: the Terelius–Wikström proof of shuffle, following the
 * pseudo-code of Haenni, Locher, Koenig and Dubuis, "Pseudo-Code Algorithms for Verifiable
 * Re-Encryption Mix-Nets" (FC 2017 workshops; GenShuffleProof / CheckShuffleProof), written in
 * additive notation over ristretto255, indices from 0, in the (e, s) form: the prover publishes
 * the challenge e and the responses, the verifier recomputes the commitments t and re-hashes.
 *
 * Statement: output[i] = reEncrypt(input[π(i)], r'ᵢ) under PK for a secret permutation π.
 * Generators h, h₀ … h_{n−1} come from hash-to-curve (group.ts), so nobody knows a relation
 * between them and G. docs/dealer-blind.md §5 has the equations.
 */
import { concatBytes, sha256Hex, toHex, utf8 } from '../bytes.js'
import { BoundedSet } from '../bounded-set.js'
import { CoreInputError } from '../errors.js'
import { type Ciphertext, deckBytes } from './elgamal.js'
import {
  G, type Point, blindEngine, combineSecretToBytes, combineSecretToPoint, combineToBytes, differenceToBytes, mod, msm, pointFromHex, pointToBytes, pointsToBytes, scalarFromHex,
  scalarToHex, shuffleGeneratorSum, shuffleGenerators
} from './group.js'
import { randomPermutation, randomScalar, type RandomBytes } from './random.js'
import { challenge, challenges, type ProofContext, u32be } from './transcript.js'

export interface ShuffleProof {
  /** Permutation commitments c₀ … c_{n−1}. */
  commitments: string[]
  /** Commitment chain ĉ₀ … ĉ_{n−1}. */
  chain: string[]
  /** The challenge. */
  e: string
  s1: string
  s2: string
  s3: string
  s4: string
  sHat: string[]
  sPrime: string[]
}

export interface Shuffled {
  output: Ciphertext[]
  proof: ShuffleProof
  /** output[i] = reEncrypt(input[permutation[i]], reencryption[i]); secret, never published. */
  permutation: number[]
  reencryption: bigint[]
}

/** uⱼ = H("shuffle-u", ctx, [PK, input, output, c₀‖…‖c_{n−1}, u32be(j)]). */
function linearChallenges (ctx: ProofContext, statement: Uint8Array[], n: number): bigint[] {
  return challenges('shuffle-u', ctx, statement, Array.from({ length: n }, (_, j) => [u32be(j)]))
}

/** Shuffle and re-encrypt `input` under `pk` with fresh randomness, and prove it. */
export function shuffleDeck (ctx: ProofContext, pk: Point, input: readonly Ciphertext[], random: RandomBytes): Shuffled {
  return finishShuffle(ctx, prepareShuffle(pk, input.length, random), input)
}

/**
 * Everything of a shuffle that does not depend on its input deck, made before the input arrives
 * (a seat prepares once it knows the joint key, while the earlier seats shuffle): the permutation,
 * the re-encryption randomness and its points r'ᵢ·PK and r'ᵢ·G, and the proof's randomness with
 * every commitment that does not read the decks (cᵢ, r̂ᵢ·G, t₁, t₂, t₃, ω̂ᵢ·G, −ω₄·PK, −ω₄·G).
 * The randomness is drawn in the same order as a shuffle made at once, so the result is
 * byte-identical (the known-answer vectors). Secret: never published, never saved; use it once.
 */
export interface PreparedShuffle {
  pk: Point
  permutation: number[]
  reencryption: bigint[]
  /** r'ᵢ·PK and r'ᵢ·G: output[i] = input[π(i)] + these. */
  offsets: Array<{ a: Uint8Array, b: Uint8Array }>
  proof: PreparedProof
}

interface PreparedProof {
  r: bigint[]
  commitments: Uint8Array[]
  rHat: bigint[]
  rHatG: Uint8Array[]
  w: bigint[]
  wHat: bigint[]
  wPrime: bigint[]
  t1: Uint8Array
  t2: Uint8Array
  t3: Uint8Array
  wHatG: Uint8Array[]
  /** −ω₄·PK and −ω₄·G, the fixed terms of t₄₁ and t₄₂. */
  w4PK: Uint8Array
  w4G: Uint8Array
}

export function prepareShuffle (pk: Point, n: number, random: RandomBytes): PreparedShuffle {
  const permutation = randomPermutation(random, n)
  const reencryption = Array.from({ length: n }, () => randomScalar(random))
  const offsets = reencryption.map(r => ({ a: combineSecretToBytes([[pk, r]]), b: combineSecretToBytes([[G, r]]) }))
  return { pk, permutation, reencryption, offsets, proof: prepareProof(pk, permutation, random) }
}

/** The shuffle of `input` with what `prepared` holds (prepared for this key and deck size). */
export function finishShuffle (ctx: ProofContext, prepared: PreparedShuffle, input: readonly Ciphertext[]): Shuffled {
  const { pk, permutation, reencryption, offsets } = prepared
  if (input.length !== permutation.length) throw new CoreInputError(`shuffle: prepared for ${permutation.length} cards, the deck has ${input.length}`)
  const output = permutation.map((j, i) => ({ a: combineSecretToPoint([], [input[j].a, offsets[i].a]), b: combineSecretToPoint([], [input[j].b, offsets[i].b]) }))
  const proof = finishProof(ctx, pk, input, output, permutation, reencryption, prepared.proof)
  return { output, proof, permutation, reencryption }
}

export function proveShuffle (
  ctx: ProofContext, pk: Point, input: readonly Ciphertext[], output: readonly Ciphertext[],
  permutation: readonly number[], reencryption: readonly bigint[], random: RandomBytes
): ShuffleProof {
  const n = input.length
  if (output.length !== n || permutation.length !== n || reencryption.length !== n) throw new CoreInputError('shuffle: input, output, permutation and randomness differ in length')
  if (new Set(permutation).size !== n || permutation.some(j => !Number.isInteger(j) || j < 0 || j >= n)) throw new CoreInputError('shuffle: not a permutation of the input positions')
  return finishProof(ctx, pk, input, output, permutation, reencryption, prepareProof(pk, permutation, random))
}

/** The proof's randomness (drawn in the order of docs/dealer-blind.md §5: r, r̂, ω₁…ω₄, ω̂, ω') and its commitments that read no deck. */
function prepareProof (pk: Point, permutation: readonly number[], random: RandomBytes): PreparedProof {
  const n = permutation.length
  const { hs } = shuffleGenerators(n)
  // Every commitment below is computed as an encoding (combineSecretToBytes: on libsodium no
  // decode to noble's coordinates between products and sums); the transcript needs only bytes.
  // Permutation commitment: c_{π(i)} = r_{π(i)}·G + hᵢ.
  const r = new Array<bigint>(n)
  const commitments = new Array<Uint8Array>(n)
  for (let i = 0; i < n; i++) {
    const j = permutation[i]
    r[j] = randomScalar(random)
    commitments[j] = combineSecretToBytes([[G, r[j]]], [hs[i]])
  }
  const rHat = Array.from({ length: n }, () => randomScalar(random))
  const w = [randomScalar(random), randomScalar(random), randomScalar(random), randomScalar(random)]
  const wHat = Array.from({ length: n }, () => randomScalar(random))
  const wPrime = Array.from({ length: n }, () => randomScalar(random))
  const times = (p: Point, x: bigint): Uint8Array => combineSecretToBytes([[p, x]])
  return {
    r,
    commitments,
    rHat,
    rHatG: rHat.map(x => times(G, x)),
    w,
    wHat,
    wPrime,
    t1: times(G, w[0]),
    t2: times(G, w[1]),
    t3: combineSecretToBytes([[G, w[2]], ...hs.map((p, i) => [p, wPrime[i]] as const)]),
    wHatG: wHat.map(x => times(G, x)),
    w4PK: times(pk, mod(-w[3])),
    w4G: times(G, mod(-w[3]))
  }
}

/** The rest of the proof, once input and output are known (docs/dealer-blind.md §5, prover steps 2–7). */
function finishProof (
  ctx: ProofContext, pk: Point, input: readonly Ciphertext[], output: readonly Ciphertext[],
  permutation: readonly number[], reencryption: readonly bigint[], p: PreparedProof
): ShuffleProof {
  const n = input.length
  const { h } = shuffleGenerators(n)
  const { r, rHat, w, wHat, wPrime } = p
  const statement = [pointToBytes(pk), deckBytes(input), deckBytes(output), concatBytes(...p.commitments)]
  const u = linearChallenges(ctx, statement, n)
  const uP = permutation.map(j => u[j])
  // Commitment chain: ĉ_{−1} = h, ĉᵢ = r̂ᵢ·G + u'ᵢ·ĉ_{i−1}.
  const chain: Uint8Array[] = []
  let prev: Point | Uint8Array = h
  for (let i = 0; i < n; i++) {
    prev = combineSecretToBytes([[prev, uP[i]]], [p.rHatG[i]])
    chain.push(prev)
  }
  const v = new Array<bigint>(n)
  v[n - 1] = 1n
  for (let i = n - 1; i > 0; i--) v[i - 1] = mod(uP[i] * v[i])
  let rBar = 0n; let rHatSum = 0n; let rTilde = 0n; let rPrime = 0n
  for (let i = 0; i < n; i++) {
    rBar += r[i]; rHatSum += rHat[i] * v[i]; rTilde += r[i] * u[i]; rPrime += reencryption[i] * uP[i]
  }
  const weighted = (points: readonly Point[]): Array<readonly [Point, bigint]> => points.map((q, i) => [q, wPrime[i]] as const)
  const t41 = combineSecretToBytes(weighted(output.map(c => c.a)), [p.w4PK])
  const t42 = combineSecretToBytes(weighted(output.map(c => c.b)), [p.w4G])
  const tHat = chain.map((_, i) => combineSecretToBytes([[i === 0 ? h : chain[i - 1], wPrime[i]]], [p.wHatG[i]]))
  const e = challenge('shuffle', ctx, [
    ...statement, concatBytes(...chain), p.t1, p.t2, p.t3, t41, t42, concatBytes(...tHat)
  ])
  return {
    commitments: p.commitments.map(toHex),
    chain: chain.map(toHex),
    e: scalarToHex(e),
    s1: scalarToHex(mod(w[0] - e * rBar)),
    s2: scalarToHex(mod(w[1] - e * rHatSum)),
    s3: scalarToHex(mod(w[2] - e * rTilde)),
    s4: scalarToHex(mod(w[3] - e * rPrime)),
    sHat: wHat.map((x, i) => scalarToHex(mod(x - e * rHat[i]))),
    sPrime: wPrime.map((x, i) => scalarToHex(mod(x - e * uP[i])))
  }
}

function pointList (list: unknown, n: number, what: string): Point[] {
  if (!Array.isArray(list) || list.length !== n) throw new CoreInputError(`${what} must list ${n} group elements`)
  return list.map((p, i) => pointFromHex(p, `${what}[${i}]`))
}

function scalarList (list: unknown, n: number, what: string): bigint[] {
  if (!Array.isArray(list) || list.length !== n) throw new CoreInputError(`${what} must list ${n} scalars`)
  return list.map((s, i) => scalarFromHex(s, `${what}[${i}]`))
}

/**
 * Whether `proof` shows that `output` is a permutation and re-encryption of `input` under `pk`,
 * in this context. Malformed proofs are false; it never throws on hostile input.
 */
export function verifyShuffle (ctx: ProofContext, pk: Point, input: readonly Ciphertext[], output: readonly Ciphertext[], proof: ShuffleProof): boolean {
  const key = statementKey(ctx, pk, input, output, proof)
  if (key !== null && verifiedShuffles.has(key)) return true
  let ok: boolean
  try {
    ok = checkShuffle(ctx, pk, input, output, proof)
  } catch (e) {
    if (e instanceof CoreInputError) return false
    throw e
  }
  if (ok && key !== null) verifiedShuffles.add(key)
  return ok
}

/**
 * Shuffle proofs that verified in this process, by the SHA-256 of everything the check reads.
 * Checking one costs about a second for a 78-card deck, and every party of a hand checks every
 * shuffle: the dealer and the seats hosted by one node (and a verifier reading several logs of one
 * table) check the very same statement again. Hashing the statement costs ~3 % of a check; only
 * successes are kept, so a hit answers exactly what the full check would.
 */
const verifiedShuffles = new BoundedSet(256)

/** Forgets every remembered proof: benchmarks measuring one check's cost call it before checking. */
export function forgetVerifiedShuffles (): void {
  verifiedShuffles.clear()
}

/** The statement's key (context, key, both decks with their lengths, the proof's JSON), or null for a value JSON cannot hold. */
function statementKey (ctx: ProofContext, pk: Point, input: readonly Ciphertext[], output: readonly Ciphertext[], proof: ShuffleProof): string | null {
  try {
    const head = JSON.stringify([ctx.table, ctx.hand, ctx.commit, ctx.step, ctx.prover, input.length, output.length, proof])
    return sha256Hex(concatBytes(utf8(head), pointToBytes(pk), deckBytes(input), deckBytes(output)))
  } catch {
    return null
  }
}

function checkShuffle (ctx: ProofContext, pk: Point, input: readonly Ciphertext[], output: readonly Ciphertext[], proof: ShuffleProof): boolean {
  const n = input.length
  if (n < 1 || output.length !== n || typeof proof !== 'object' || proof === null) return false
  const commitments = pointList(proof.commitments, n, 'commitments')
  const chain = pointList(proof.chain, n, 'chain')
  const e = scalarFromHex(proof.e, 'e')
  const [s1, s2, s3, s4] = [proof.s1, proof.s2, proof.s3, proof.s4].map((s, i) => scalarFromHex(s, `s${i + 1}`))
  const sHat = scalarList(proof.sHat, n, 'sHat')
  const sPrime = scalarList(proof.sPrime, n, 'sPrime')
  const { h, hs } = shuffleGenerators(n)
  const statement = [pointToBytes(pk), deckBytes(input), deckBytes(output), pointsToBytes(commitments)]
  const u = linearChallenges(ctx, statement, n)
  // C̄ and Ĉ stay encodings (libsodium sums; noble would decode every commitment).
  const cBar = differenceToBytes(combineToBytes([], commitments), shuffleGeneratorSum(n))
  let uProd = 1n
  for (const x of u) uProd = mod(uProd * x)
  const cHat = differenceToBytes(chain[n - 1], combineToBytes([[h, uProd]]))
  const t1 = combineToBytes([[cBar, e], [G, s1]])
  const t2 = combineToBytes([[cHat, e], [G, s2]])
  let t3: Uint8Array, t41: Uint8Array, t42: Uint8Array
  if (blindEngine() === 'libsodium') {
    // t₃ = e·c̃ + s₃·G + Σ s'ᵢ·hᵢ with c̃ = Σ uᵢ·cᵢ folded in (e·uᵢ per term), likewise t₄₁, t₄₂:
    // one sum of 2n+1 libsodium products each, in encoded form, beats noble's Pippenger plus the
    // decodes and encodes of its intermediate points (measured in scripts/bench/blind.ts).
    const eu = u.map(x => mod(e * x))
    const terms = (ins: readonly Point[], head: ReadonlyArray<readonly [Point, bigint]>, outs: readonly Point[]): Array<readonly [Point, bigint]> =>
      [...ins.map((p, i) => [p, eu[i]] as const), ...head, ...outs.map((p, i) => [p, sPrime[i]] as const)]
    t3 = combineToBytes(terms(commitments, [[G, s3]], hs))
    t41 = combineToBytes(terms(input.map(c => c.a), [[pk, mod(-s4)]], output.map(c => c.a)))
    t42 = combineToBytes(terms(input.map(c => c.b), [[G, mod(-s4)]], output.map(c => c.b)))
  } else {
    const cTilde = msm(commitments, u)
    const aIn = msm(input.map(c => c.a), u)
    const bIn = msm(input.map(c => c.b), u)
    t3 = pointToBytes(msm([cTilde, G, ...hs], [e, s3, ...sPrime]))
    t41 = pointToBytes(msm([aIn, pk, ...output.map(c => c.a)], [e, mod(-s4), ...sPrime]))
    t42 = pointToBytes(msm([bIn, G, ...output.map(c => c.b)], [e, mod(-s4), ...sPrime]))
  }
  // Three terms each, hashed as bytes: single multiplications summed in encoded form beat a tiny Pippenger.
  const tHat = chain.map((c, i) => combineToBytes([[c, e], [G, sHat[i]], [i === 0 ? h : chain[i - 1], sPrime[i]]]))
  const expected = challenge('shuffle', ctx, [
    ...statement, pointsToBytes(chain),
    t1, t2, t3, t41, t42, concatBytes(...tHat)
  ])
  return expected === e
}
