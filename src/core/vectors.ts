/**
 * Checks a file of reference vectors in the shared format (`{ scheme, …, vectors: [...] }`, see
 * the vectors README): every field of every vector is recomputed from its inputs and compared.
 * A field this checker cannot recompute fails its vector, so a misspelt field never passes silently.
 * A file that is not in the format (inputs missing or of the wrong type) throws CoreInputError.
 */
import { fromHex, sha256Hex } from './bytes.js'
import { CoreInputError } from './errors.js'
import {
  ATOUT_CARDS, atoutDeck, atoutKeyText, atoutPermutation, bitjackCommitment, bitjackShoe,
  dealBelote, dealCoinche, dealDuo, getInt, Xoshiro256StarStar, BITJACK_MAX_CARDS
} from './schemes/index.js'
import { checkSeat, preview } from './schemes/inputs.js'

export interface FieldMismatch {
  /** Path of the field inside the vector, e.g. 'belote.hands'. */
  field: string
  expected: unknown
  /** The recomputed value, or a note when the field cannot be recomputed. */
  actual: unknown
  /** Set when the field is not one this checker knows. */
  unknown?: true
}

export interface VectorResult {
  /** 'vectors[3]', 'rejection', 'cards'. */
  name: string
  mismatches: FieldMismatch[]
}

export interface VectorFileReport {
  scheme: string
  results: VectorResult[]
  passed: number
  failed: number
}

type Json = Record<string, unknown>

export const VECTOR_SCHEMES = Object.freeze(['atout-v1', 'bitjack21', 'php-xoshiro256starstar'])

export function checkVectorFile (doc: unknown): VectorFileReport {
  const file = asObject(doc, 'the file')
  const scheme = file.scheme
  if (typeof scheme !== 'string') throw new CoreInputError('not a vectors file: no "scheme" string at the top level')
  if (!Array.isArray(file.vectors)) throw new CoreInputError('not a vectors file: no "vectors" array at the top level')
  let results: VectorResult[]
  switch (scheme) {
    case 'atout-v1': results = checkAtoutFile(file); break
    case 'bitjack21': results = checkFile(file, ['cardEncoding'], checkBitjackVector); break
    case 'php-xoshiro256starstar': results = checkFile(file, ['note'], checkXoshiroVector); break
    default: throw new CoreInputError(`no checker for scheme ${preview(scheme)} (known: ${VECTOR_SCHEMES.join(', ')})`)
  }
  const failed = results.filter(r => r.mismatches.length > 0).length
  return { scheme, results, passed: results.length - failed, failed }
}

/** Each vector's comparisons; `known` are top-level fields other than scheme and vectors that are not unknown. */
function checkFile (file: Json, known: string[], check: (v: Json, c: Comparer) => void): VectorResult[] {
  const results: VectorResult[] = []
  const top = new Comparer()
  for (const k of Object.keys(file)) {
    if (!['scheme', 'vectors', ...known].includes(k)) top.unknown(k, file[k])
  }
  if (top.mismatches.length > 0) results.push({ name: 'file', mismatches: top.mismatches })
  ;(file.vectors as unknown[]).forEach((raw, i) => {
    const name = `vectors[${i}]`
    const c = new Comparer()
    try {
      check(asObject(raw, name), c)
    } catch (err) {
      if (err instanceof CoreInputError) throw new CoreInputError(`${name}: ${err.message}`)
      throw err
    }
    if (c.compared === 0) throw new CoreInputError(`${name} has no output field to check`)
    results.push({ name, mismatches: c.mismatches })
  })
  return results
}

function checkAtoutFile (file: Json): VectorResult[] {
  // cards and rejection are checked below, as entries of their own
  const results = checkFile(file, ['cards', 'rejection'], checkAtoutVector)
  if ('cards' in file) {
    const c = new Comparer()
    c.compare('cards', file.cards, [...ATOUT_CARDS])
    results.push({ name: 'cards', mismatches: c.mismatches })
  }
  if ('rejection' in file) {
    const r = asObject(file.rejection, 'rejection')
    const numbers = r.numbers
    if (!Array.isArray(numbers) || !numbers.every(n => Number.isInteger(n) && n >= 0 && n <= 0xffffffff)) {
      throw new CoreInputError('rejection.numbers must be an array of unsigned 32-bit integers')
    }
    const c = new Comparer()
    for (const k of Object.keys(r)) {
      if (k === 'deck') {
        let pos = 0
        let deck: unknown
        try {
          deck = Array.from(atoutPermutation('', {
            next: () => {
              if (pos >= numbers.length) throw new RanOut()
              return numbers[pos++] as number
            }
          }), i => ATOUT_CARDS[i])
        } catch (err) {
          if (!(err instanceof RanOut)) throw err
          deck = `(the ${numbers.length} numbers ran out before the shuffle finished)`
        }
        c.compare('rejection.deck', r.deck, deck)
      } else if (k !== 'numbers') {
        c.unknown(`rejection.${k}`, r[k])
      }
    }
    results.push({ name: 'rejection', mismatches: c.mismatches })
  }
  return results
}

class RanOut extends Error {}

function checkAtoutVector (v: Json, c: Comparer): void {
  if (typeof v.secret !== 'string') throw new CoreInputError('secret must be a string')
  if (!Array.isArray(v.nonces) || v.nonces.length === 0 || !v.nonces.every(n => typeof n === 'string')) {
    throw new CoreInputError('nonces must be a non-empty array of strings')
  }
  const text = atoutKeyText({ secret: v.secret, nonces: v.nonces as string[] })
  const key = sha256Hex(text)
  const deck = atoutDeck(key)
  for (const field of Object.keys(v)) {
    switch (field) {
      case 'secret': case 'nonces': break
      case 'text': c.compare(field, v.text, text); break
      case 'key': c.compare(field, v.key, key); break
      case 'commitment': c.compare(field, v.commitment, sha256Hex(v.secret)); break
      case 'deck': c.compare(field, v.deck, deck); break
      case 'coinche': c.compare(field, v.coinche, dealCoinche(deck)); break
      case 'belote': {
        const b = asObject(v.belote, 'belote')
        const dealer = checkSeat(b.dealer, 4, 'belote.dealer')
        const taker = checkSeat(b.taker, 4, 'belote.taker')
        const d = dealBelote(deck, dealer, taker)
        for (const k of Object.keys(b)) {
          if (k === 'dealer' || k === 'taker') continue
          if (k === 'firstFive' || k === 'turnedUp' || k === 'hands') c.compare(`belote.${k}`, b[k], d[k])
          else c.unknown(`belote.${k}`, b[k])
        }
        break
      }
      case 'duo': {
        const u = asObject(v.duo, 'duo')
        const d = dealDuo(deck, checkSeat(u.dealer, 2, 'duo.dealer'))
        for (const k of Object.keys(u)) {
          if (k === 'dealer') continue
          if (k === 'receiver' || k === 'faceDown' || k === 'faceUp') c.compare(`duo.${k}`, u[k], d[k])
          else c.unknown(`duo.${k}`, u[k])
        }
        break
      }
      default: c.unknown(field, v[field])
    }
  }
}

function checkBitjackVector (v: Json, c: Comparer): void {
  for (const k of ['r1', 'r2', 'rx']) {
    if (typeof v[k] !== 'string') throw new CoreInputError(`${k} must be a string`)
  }
  const n = v.n
  if (!Number.isSafeInteger(n) || (n as number) < 1 || (n as number) > BITJACK_MAX_CARDS) {
    throw new CoreInputError(`n must be a shoe size from 1 to ${BITJACK_MAX_CARDS}, got ${preview(n)}`)
  }
  for (const field of Object.keys(v)) {
    switch (field) {
      case 'r1': case 'r2': case 'rx': case 'n': break
      case 'cards': c.compare(field, v.cards, Array.from(bitjackShoe(v.r1 as string, v.r2 as string, n as number))); break
      case 'commitment': c.compare(field, v.commitment, bitjackCommitment(v.r1 as string, v.rx as string)); break
      default: c.unknown(field, v[field])
    }
  }
}

function checkXoshiroVector (v: Json, c: Comparer): void {
  const seed = fromHex(v.engineSeed as string, 'engineSeed', 32)
  for (const field of Object.keys(v)) {
    switch (field) {
      case 'engineSeed': case 'ranges': break
      case 'firstOutputs': {
        const e = new Xoshiro256StarStar(seed)
        const count = Array.isArray(v.firstOutputs) ? v.firstOutputs.length : 4
        c.compare(field, v.firstOutputs, Array.from({ length: count }, () => e.next64().toString(16).padStart(16, '0')))
        break
      }
      case 'values': {
        const ranges = v.ranges
        if (!Array.isArray(ranges) || !ranges.every(r => Array.isArray(r) && r.length === 2 && r.every(Number.isSafeInteger) && r[0] <= r[1])) {
          throw new CoreInputError('ranges must be an array of [min, max] pairs of safe integers with min <= max')
        }
        const e = new Xoshiro256StarStar(seed)
        c.compare(field, v.values, ranges.map(([min, max]: number[]) => getInt(e, min, max)))
        break
      }
      default: c.unknown(field, v[field])
    }
  }
  if ('values' in v && !('ranges' in v)) throw new CoreInputError('values needs ranges')
}

class Comparer {
  readonly mismatches: FieldMismatch[] = []
  compared = 0

  compare (field: string, expected: unknown, actual: unknown): void {
    this.compared++
    if (!jsonEqual(expected, actual)) this.mismatches.push({ field, expected, actual })
  }

  unknown (field: string, expected: unknown): void {
    this.compared++
    this.mismatches.push({ field, expected, actual: '(unknown field: not checked)', unknown: true })
  }
}

function jsonEqual (a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]))
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && !Array.isArray(b)) {
    const ka = Object.keys(a); const kb = Object.keys(b)
    return ka.length === kb.length && ka.every(k => Object.hasOwn(b, k) && jsonEqual((a as Json)[k], (b as Json)[k]))
  }
  return false
}

function asObject (value: unknown, what: string): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new CoreInputError(`${what} must be a JSON object`)
  return value as Json
}

/** One line for a failed vector: which fields differ, with the first difference spelled out. */
export function describeFailure (result: VectorResult): string {
  const fields = result.mismatches.map(m => m.field).join(', ')
  const first = result.mismatches[0]
  const detail = first.unknown === true
    ? `${first.field} is not a field this checker knows`
    : `${first.field}: expected ${preview(first.expected)}, got ${preview(first.actual)}`
  return `${result.name} differs in ${fields} (${detail})`
}

