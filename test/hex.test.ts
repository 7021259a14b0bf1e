import fc from 'fast-check'
import { expect, test } from 'vitest'
import { fromHex, toHex } from '../src/core/bytes.js'
import { CoreInputError } from '../src/core/errors.js'

// The core's hex decoder (every signature a node checks goes through it): the same bytes as
// Node's own decoder, in either case, and a refusal for anything else.
test('fromHex gives Node\'s bytes for any hex, lower or upper case, and round-trips toHex', () => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 80 }), fc.boolean(), (bytes, upper) => {
    const hex = Buffer.from(bytes).toString('hex')
    const text = upper ? hex.toUpperCase() : hex
    expect(fromHex(text)).toEqual(new Uint8Array(Buffer.from(text, 'hex')))
    expect(toHex(fromHex(text))).toBe(hex)
  }), { seed: 24, numRuns: 300 })
})

test('fromHex refuses odd lengths, non-hex characters and the wrong length, naming the field', () => {
  for (const bad of ['a', 'abc', '0g', 'zz', ' 00', '00 ', '0x00', 'é0', '٠٠']) {
    expect(() => fromHex(bad, 'sig')).toThrow(CoreInputError)
    expect(() => fromHex(bad, 'sig')).toThrow(/^sig must be hex/)
  }
  expect(() => fromHex('00', 'key', 2)).toThrow(/key must be 2 bytes/)
  expect(fromHex('')).toEqual(new Uint8Array(0))
})
