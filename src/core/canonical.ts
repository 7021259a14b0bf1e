import { CoreInputError } from './errors.js'
import { utf8 } from './bytes.js'
import { isDeepFrozen } from './frozen.js'

/** The JSON values a canonical document may hold: no floats, no undefined, no -0. */
export type Canonical = string | number | boolean | null | Canonical[] | { [key: string]: Canonical }

/**
 * The one canonical encoding of fairdeal documents (receipts, signed messages, log entries):
 * JSON with object keys sorted by UTF-16 code unit order, no whitespace, integers only (safe range),
 * strings escaped as JSON.stringify does. Everything that is hashed or signed goes through here,
 * so a document has exactly one byte form and every byte of it is covered.
 */
export function canonicalJson (value: unknown): string {
  try {
    if (isDeepFrozen(value)) return encodeKept(value as object)
    return encodeFast(value)
  } catch (err) {
    if (err !== NOT_CANONICAL) throw err
    // The careful encoder finds the offending field again and names it.
    return encode(value, '$')
  }
}

const NOT_CANONICAL = Symbol('not canonical')

/** How deep a document off the network may nest: far beyond any fairdeal document (a FINAL's receipt is about a dozen). */
export const MAX_JSON_DEPTH = 64

/**
 * Why a parsed JSON value has no canonical form, or undefined when it has one: a number that is
 * not a safe integer (or is -0), or nesting deeper than `maxDepth` (which the recursive encoders
 * would overflow the stack on). Iterative, so any input off the network can be asked: a frame is
 * refused for it before any machine sees it (a float in a field a schema leaves open would
 * otherwise fail each signature check with an exception, not a refusal).
 */
export function canonicalProblem (value: unknown, maxDepth = MAX_JSON_DEPTH): string | undefined {
  // Two stacks side by side, values and their depths, and indexed or keyed loops: every frame off
  // the network is walked here, and a pair, an iterator or an Object.values array per value were
  // most of what the walk allocated. The order of the walk (so the problem named first) is as a
  // stack of [value, depth] pairs over Object.values would give.
  const values: unknown[] = [value]
  const depths: number[] = [0]
  while (values.length > 0) {
    const v = values.pop()
    const depth = depths.pop() as number
    if (typeof v === 'number') {
      if (!Number.isSafeInteger(v) || Object.is(v, -0)) return `a number that is not a safe integer (${String(v)})`
    } else if (typeof v === 'object' && v !== null) {
      if (depth >= maxDepth) return `nested deeper than ${maxDepth} levels`
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) { values.push(v[i]); depths.push(depth + 1) }
      } else {
        const o = v as Record<string, unknown>
        for (const k in o) if (Object.hasOwn(o, k)) { values.push(o[k]); depths.push(depth + 1) }
      }
    }
  }
  return undefined
}

/**
 * Encodings of deep-frozen values (src/core/frozen.ts), which cannot change: those asked for
 * directly (a body to sign or check, a document to hash) and the signed documents inside any
 * value encoded. A node encodes the same COMMIT, pledges and nonces again inside its PLEDGES,
 * VIEWs, REVEAL, receipt and log entry; each is encoded once. Weak: an entry goes with its object.
 */
const kept = new WeakMap<object, string>()

function encodeKept (value: object): string {
  let json = kept.get(value)
  if (json === undefined) {
    json = encodeFast(value, true)
    kept.set(value, json)
  }
  return json
}

/**
 * The same encoding as `encode`, without building a path for every field: everything signed or
 * hashed goes through here, several times per message. On anything it cannot encode it gives up
 * and `encode` runs again for the error message.
 */
function encodeFast (value: unknown, keeping = false): string {
  if (value === null) return 'null'
  switch (typeof value) {
    case 'string': return JSON.stringify(value)
    case 'boolean': return value ? 'true' : 'false'
    case 'number':
      if (!Number.isSafeInteger(value) || Object.is(value, -0)) throw NOT_CANONICAL
      return String(value)
    case 'object': {
      if (Array.isArray(value)) {
        let out = '['
        for (let i = 0; i < value.length; i++) {
          // A hole is left to `encode` too, so that both give the same answer for it.
          if (!(i in value)) throw NOT_CANONICAL
          out += (i > 0 ? ',' : '') + encodeFast(value[i])
        }
        return out + ']'
      }
      if (value instanceof Uint8Array) throw NOT_CANONICAL
      const obj = value as Record<string, unknown>
      if (!keeping && isDeepFrozen(obj)) {
        // A signed document (its shape says so) that cannot change: encoded once (`kept`). Any other
        // deep-frozen value whose encoding is kept already (a body that was signed or checked) reuses it.
        if (typeof obj.sig === 'string') return encodeKept(obj)
        const json = kept.get(obj)
        if (json !== undefined) return json
      }
      const keys = sortedKeys(obj)
      let out = '{'
      for (const k of keys) {
        const v = obj[k]
        if (v === undefined) continue
        out += (out.length > 1 ? ',' : '') + JSON.stringify(k) + ':' + encodeFast(v)
      }
      return out + '}'
    }
    default:
      throw NOT_CANONICAL
  }
}

/**
 * The keys of `obj` in canonical order (UTF-16 code units, as Array.prototype.sort). An object parsed
 * from canonical JSON (a frame, a saved state) has its keys in that order already: they are checked
 * in one pass and sorted only when they are not, since the sort's copy was a large part of what
 * encoding allocated.
 */
function sortedKeys (obj: object): string[] {
  const keys = Object.keys(obj)
  for (let i = 1; i < keys.length; i++) {
    if (!(keys[i - 1] < keys[i])) return keys.length <= SMALL ? insertionSorted(keys, i) : keys.sort()
  }
  return keys
}

/**
 * Objects a schema built (every document off the wire: its keys come in the schema's order) have
 * a few keys each; V8's sort allocates a work array per call, which was a tenth of what a hand
 * allocated. An insertion sort in place allocates nothing. `<` on strings compares UTF-16 code
 * units, as Array.prototype.sort does, and keys are distinct, so the order is the same.
 */
const SMALL = 24
function insertionSorted (keys: string[], from: number): string[] {
  for (let i = from; i < keys.length; i++) {
    const k = keys[i]
    let j = i - 1
    while (j >= 0 && keys[j] > k) { keys[j + 1] = keys[j]; j-- }
    keys[j + 1] = k
  }
  return keys
}

export function canonicalBytes (value: unknown): Uint8Array {
  return utf8(canonicalJson(value))
}

function encode (value: unknown, path: string): string {
  if (value === null) return 'null'
  switch (typeof value) {
    case 'string': return JSON.stringify(value)
    case 'boolean': return value ? 'true' : 'false'
    case 'number':
      if (!Number.isSafeInteger(value) || Object.is(value, -0)) {
        throw new CoreInputError(`canonical JSON allows only safe integers; ${path} is ${String(value)}`)
      }
      return String(value)
    case 'object': {
      if (Array.isArray(value)) return '[' + value.map((v, i) => encode(v, `${path}[${i}]`)).join(',') + ']'
      if (value instanceof Uint8Array) throw new CoreInputError(`canonical JSON has no bytes type; encode ${path} as hex`)
      const obj = value as Record<string, unknown>
      const keys = Object.keys(obj).filter(k => obj[k] !== undefined).sort()
      return '{' + keys.map(k => JSON.stringify(k) + ':' + encode(obj[k], `${path}.${k}`)).join(',') + '}'
    }
    default:
      throw new CoreInputError(`canonical JSON cannot encode ${typeof value} at ${path}`)
  }
}
