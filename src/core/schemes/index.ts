/**
 * @packageDocumentation
 *
 * The deterministic core of a deal: secret + nonces (+ beacon) → key → deck → each seat's cards,
 * for every scheme a receipt may name. Pure and browser-safe: no Node built-ins, no I/O.
 *
 * A receipt carries a scheme id; the verifier recomputes everything through the registry:
 *
 * ```ts
 * import { getCardScheme } from './core/schemes/index.js' // or ./registry.js
 *
 * const scheme = getCardScheme('atout-v1')                  // CoreInputError if unknown
 * const key = scheme.key({ secret, nonces })                // one nonce per seat, '' for a robot
 * const deal = scheme.deal('belote', key, { seats: nonces.length, dealer: 0, taker: 2 })
 * // deal.deliveries: stage by stage, {stage, seat|null, public, cards}; deal.hands: each seat's cards
 * scheme.commitment(secret) === receipt.commitment
 * ```
 *
 * The registry holds:
 * - `atout-v1` (coinche, belote, duo) and `atout-drand-v1` (same, with a drand round in the key);
 * - `tarot-v1` (3/4/5 players, sha256-fisher-yates-v1, petit-sec redeal, allocation fingerprint);
 * - `bitjack21` (a shoe of up to 416 cards: secret r1, one nonce r2, commitment salt rx);
 * - `dice-v1` (kind 'dice': `roll(key, '3d20')` on PHP's Xoshiro256** with Randomizer::getInt).
 *
 * Schemes are immutable objects; a new algorithm is a new id (`…-v2`), never a change to an old one,
 * since old receipts must keep verifying. docs/schemes.md specifies each one byte for byte.
 */
export type { BeaconInput, CardScheme, Deal, DealOptions, Delivery, DiceRoll, DiceScheme, KeyInputs, Redeal, Scheme } from './types.js'
export { getCardScheme, getDiceScheme, getScheme, listSchemes } from './registry.js'
export { ATOUT_CARDS, AtoutStream, atoutDeck, atoutDrandKeyText, atoutKeyText, atoutPermutation, dealBelote, dealCoinche, dealDuo } from './atout.js'
export { BITJACK_CARDS, BITJACK_MAX_CARDS, BitjackStream, bitjackCommitment, bitjackShoe, shuffleShoe } from './bitjack21.js'
export { diceEngineSeed, parseRoll, rollWithEngineSeed } from './dice.js'
export { TAROT_CARDS, TAROT_LAYOUT, TAROT_SHUFFLE, TarotStream, dealTarot, layOut, nextSeed, petitSecSeat, seedFromKey, tarotDeck, tarotFingerprint, tarotPermutation } from './tarot.js'
export { Xoshiro256StarStar, getInt } from './xoshiro256starstar.js'
export { fisherYates, type U32Source } from './streams.js'
export { cardLabel } from './labels.js'
