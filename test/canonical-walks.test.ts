import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { canonicalBytes, canonicalJson, canonicalProblem } from '../src/core/canonical.js'
import { freezeDeep } from '../src/core/frozen.js'
import { sameJson } from '../src/core/same-json.js'
import { concatBytes, utf8 } from '../src/core/bytes.js'
import { signerFromSeed } from '../src/core/identity.js'
import { signDocument, signingBytes, verifyDocument } from '../src/core/signed.js'

// The canonical encoder's and the frame check's walks allocate less (src/core/canonical.ts): the
// answers must be exactly those of the plain definitions, kept here as the reference.

/** canonicalProblem as first written: a stack of [value, depth] pairs over Object.values. */
function referenceProblem (value: unknown, maxDepth = 64): string | undefined {
  const stack: Array<[unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number]
    if (typeof v === 'number') {
      if (!Number.isSafeInteger(v) || Object.is(v, -0)) return `a number that is not a safe integer (${String(v)})`
    } else if (typeof v === 'object' && v !== null) {
      if (depth >= maxDepth) return `nested deeper than ${maxDepth} levels`
      for (const x of Array.isArray(v) ? v : Object.values(v)) stack.push([x, depth + 1])
    }
  }
  return undefined
}

/** Canonical JSON by its definition: keys sorted by UTF-16 code units, undefined members left out. */
function referenceJson (v: unknown): string {
  if (Array.isArray(v)) return '[' + v.map(referenceJson).join(',') + ']'
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>
    return '{' + Object.keys(o).filter(k => o[k] !== undefined).sort().map(k => JSON.stringify(k) + ':' + referenceJson(o[k])).join(',') + '}'
  }
  return JSON.stringify(v)
}

// Keys that sort differently as numbers and as strings ("10" < "9"), that JSON.parse puts first, and plain ones.
const key = fc.oneof(fc.constantFrom('0', '1', '2', '9', '10', 'a', 'B', 'b', 'é', '\u{1F600}', 'sig', 'body'), fc.string({ maxLength: 4 }))
const canonicalValue = fc.letrec(tie => ({
  value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 6 }), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(key, tie('value'), { maxKeys: 5 })
})).value
// With numbers that have no canonical form, in any place.
const anyValue = fc.letrec(tie => ({
  value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.integer(), fc.double(), fc.constant(-0), fc.constant(2 ** 60), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(key, tie('value'), { maxKeys: 4 })
})).value

describe('canonical walks', () => {
  test('canonicalProblem names the same problem as the reference walk, first the same one, at any depth limit', () => {
    fc.assert(fc.property(anyValue, fc.integer({ min: 0, max: 6 }), (v, depth) => {
      expect(canonicalProblem(v, depth)).toBe(referenceProblem(v, depth))
      expect(canonicalProblem(v)).toBe(referenceProblem(v))
    }), { numRuns: 400 })
    // Deeper than any stack: still an answer, not an overflow.
    let deep: unknown = 1
    for (let i = 0; i < 100_000; i++) deep = [deep]
    expect(canonicalProblem(deep)).toBe('nested deeper than 64 levels')
  })

  test('canonical JSON is the definition\'s, for keys in any order, parsed back from canonical text (already sorted) or not, frozen or not', () => {
    fc.assert(fc.property(canonicalValue, v => {
      const want = referenceJson(v)
      expect(canonicalJson(v)).toBe(want)
      // Parsed back: keys in canonical order, save those JSON.parse puts first (integer-like ones).
      const parsed = JSON.parse(want) as unknown
      expect(canonicalJson(parsed)).toBe(want)
      const frozen = freezeDeep(structuredClone(v))
      expect(canonicalJson(frozen)).toBe(want)
      // Asked again, from its kept encoding, and inside another value.
      expect(canonicalJson(frozen)).toBe(want)
      expect(canonicalJson({ x: frozen })).toBe(`{"x":${want}}`)
    }), { numRuns: 400 })
  })

  test('a deep-frozen body whose encoding is kept encodes the same inside its signed document', () => {
    const signer = signerFromSeed(new Uint8Array(32).fill(3))
    const body = freezeDeep({ z: 1, a: { y: [2, 'x'], b: null }, hand: 7 })
    // Asked directly (as signing does): kept, then reused inside the document.
    expect(canonicalJson(body)).toBe(referenceJson(body))
    const doc = freezeDeep(signDocument('t', body, signer))
    expect(canonicalJson(doc)).toBe(referenceJson(doc))
    expect(verifyDocument(doc)).toBe(true)
  })

  test('signingBytes are the domain tag, the signer and the body\'s canonical bytes, joined', () => {
    fc.assert(fc.property(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), canonicalValue, (type, signer, body) => {
      expect(signingBytes(type, signer, body)).toEqual(concatBytes(utf8(`fairdeal/v1/${type}\n${signer}\n`), canonicalBytes(body)))
    }), { numRuns: 200 })
    // A body with no canonical form is refused as before, naming the field.
    expect(() => signingBytes('t', 's', { a: [1.5] })).toThrow(/\$\.a\[0\]/)
  })

  test('sameJson says two JSON values are the same exactly when their canonical encodings are, in any key order', () => {
    const shuffled = (v: unknown, seed: number): unknown => {
      if (Array.isArray(v)) return v.map((x, i) => shuffled(x, seed + i))
      if (typeof v !== 'object' || v === null) return v
      const entries = Object.entries(v)
      if (entries.length > 1) entries.push(entries.splice(seed % entries.length, 1)[0])
      return Object.fromEntries(entries.map(([k, x], i) => [k, shuffled(x, seed + i)]))
    }
    // As JSON.parse makes them: objects with Object.prototype (sameJson refuses any other kind).
    const jsonValue = fc.letrec(tie => ({
      value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.integer({ min: -2, max: 2 }), fc.constantFrom('', 'a', 'b'), tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 3 }),
      object: fc.dictionary(key, tie('value'), { maxKeys: 4, noNullPrototype: true })
    })).value
    fc.assert(fc.property(jsonValue, jsonValue, fc.nat(), (a, b, seed) => {
      expect(sameJson(a, b)).toBe(referenceJson(a) === referenceJson(b))
      expect(sameJson(a, shuffled(a, seed))).toBe(true)
      expect(sameJson(shuffled(a, seed), a)).toBe(true)
    }), { numRuns: 400 })
    // A member more, or less, on either side; an undefined member (which JSON has not) is never the same.
    expect(sameJson({ a: 1 }, { a: 1, b: 2 })).toBe(false)
    expect(sameJson({ a: 1, b: 2 }, { a: 1 })).toBe(false)
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(false)
    expect(sameJson({ a: 1 }, { a: 1, b: undefined })).toBe(false)
    expect(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(true)
  })
})
