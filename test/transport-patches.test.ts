import { describe, expect, test } from 'vitest'
import { LengthPrefixedDecoder } from '@libp2p/utils'
import { varintLength } from '../src/net/transport-patches.js'

// The local transport patches (src/net/transport-patches.ts): the decode loop stops on an empty
// buffer instead of throwing and catching a RangeError, and still yields exactly the frames sent,
// however the bytes are split. (The yamux window and the one-write noise messages are exercised by
// every network test: net-messenger's backpressure and 1,000-frame tests among them.)
describe('the length-prefixed decoder, patched', () => {
  const frames = [new Uint8Array([1]), new Uint8Array(300).fill(7), new Uint8Array([2, 3]), new Uint8Array(130).fill(9)]
  const varint = (n: number): number[] => n < 128 ? [n] : [(n & 0x7f) | 0x80, n >> 7]
  const wire = Uint8Array.from(frames.flatMap(f => [...varint(f.length), ...f]))

  test('yields the same frames for every split of the bytes, never asking for a length on an empty buffer', () => {
    for (let cut = 1; cut < wire.length; cut++) {
      const decoder = new LengthPrefixedDecoder()
      const inner = (decoder as unknown as { lengthDecoder: (b: { byteLength: number }) => number }).lengthDecoder
      let emptyAsks = 0
      ;(decoder as unknown as { lengthDecoder: (b: { byteLength: number }) => number }).lengthDecoder = (b) => { if (b.byteLength === 0) emptyAsks++; return inner(b) }
      const out = [...decoder.decode(wire.subarray(0, cut)), ...decoder.decode(wire.subarray(cut))].map(l => l.subarray())
      expect(out).toEqual(frames)
      expect(emptyAsks).toBe(0)
    }
  })

  test('still refuses a length over the limit', () => {
    const decoder = new LengthPrefixedDecoder({ maxDataLength: 100 })
    expect(() => [...decoder.decode(wire)]).toThrow(/Invalid message length/)
  })
})

describe('varintLength, the length decoder lpStream is given', () => {
  test('decodes what uint8-varint decodes, and throws one RangeError object while a length is incomplete', () => {
    // Unsigned LEB128, as uint8-varint writes it.
    const encode = (n: number): Uint8Array => {
      const out: number[] = []
      while (n >= 128) { out.push((n % 128) | 0x80); n = Math.floor(n / 128) }
      return Uint8Array.from([...out, n])
    }
    for (const n of [0, 1, 127, 128, 300, 16_383, 16_384, 131_072, 2 ** 31, Number.MAX_SAFE_INTEGER]) {
      const bytes = encode(n)
      expect(varintLength(bytes)).toBe(n)
      expect(varintLength({ subarray: () => bytes })).toBe(n)
      if (bytes.length > 1) {
        let first: unknown
        let second: unknown
        try { varintLength(bytes.subarray(0, bytes.length - 1)) } catch (err) { first = err }
        try { varintLength(bytes.subarray(0, 1)) } catch (err) { second = err }
        expect(first).toBeInstanceOf(RangeError)
        expect(second).toBe(first)
      }
    }
    expect(() => varintLength(new Uint8Array(9).fill(0x80))).toThrow(RangeError)
  })
})
