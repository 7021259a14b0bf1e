/**
 * @packageDocumentation
 *
 * Dealer-blind deals (blind-v1), the pure and browser-safe cryptography: Barnett–Smart ElGamal over
 * ristretto255 with Schnorr key proofs, Terelius–Wikström shuffle proofs and Chaum–Pedersen
 * decryption shares, every proof Fiat–Shamir over a transcript binding table, hand, COMMIT digest,
 * step and prover. docs/dealer-blind.md specifies every byte.
 */
export * from './group.js'
export * from './random.js'
export * from './transcript.js'
export * from './elgamal.js'
export * from './schnorr.js'
export * from './dleq.js'
export * from './shuffle.js'
