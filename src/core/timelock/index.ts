/**
 * @packageDocumentation
 *
 * drand timelock (tlock) ciphertexts, pure and browser-safe: the canonical armored format, the
 * target (chain hash, round) named by the `-> tlock` stanza, and offline opening with the round's
 * beacon entry, and sealing with injected randomness (what the protocol machines use). The
 * adapter `src/beacon/tlock.ts` wraps tlock-js itself, the reference these are cross-checked against.
 */
export {
  ARMOR_HEADER, ARMOR_FOOTER, MAX_TIMELOCK_CHARS, TIMELOCK_ARMOR, STANZA_BODY_BYTES,
  armorAge, dearmorAge, parseTimelock, timelockTarget, checkTimelockTarget, type TimelockCiphertext
} from './format.js'
export { TIMELOCK_SCHEMES, timelockSupported, openTimelock, openParsedTimelock, openTimelockText, sealTimelock, sealTimelockText } from './tlock.js'
export { TimelockError, type TimelockFailure } from './errors.js'
