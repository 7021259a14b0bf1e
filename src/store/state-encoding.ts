import { canonicalJson } from '../core/canonical.js'

/**
 * The values of a node's `state` sublevel (a machine's saved hands and counters): JSON, read back
 * with JSON.parse. Written with the canonical encoder (src/core/canonical.ts), which keeps the
 * encoding of every deep-frozen signed document: a seat's saved hand holds the COMMIT, PLEDGES,
 * CARDS and REVEAL it took off the wire, and each of its four saves a hand encoded them all again
 * with JSON.stringify (a third of the time of a 7.7 KB save, measured: 27 against 9 µs). A value with
 * no canonical form (a float, a hole in an array) is written with JSON.stringify, as before; either
 * way what is read back is the same value, and stores written before read the same.
 */
export const stateValueEncoding = {
  name: 'fairdeal-state-json',
  format: 'utf8' as const,
  encode: (value: unknown): string => {
    try {
      return canonicalJson(value)
    } catch {
      return JSON.stringify(value)
    }
  },
  decode: (text: string): unknown => JSON.parse(text)
}
