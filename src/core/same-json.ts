/**
 * Whether two JSON values (as parsed: null, booleans, finite numbers, strings, arrays, plain
 * objects) are the same value, so that their canonical encodings (src/core/canonical.ts) are the
 * same bytes. Conservative: anything it is not sure of (another type, -0 against 0, an undefined
 * member) answers false, and a caller then takes the long way (encode and compare). Pure.
 */
export function sameJson (a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== 'number' || Object.is(a, b)
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b) || Object.getPrototypeOf(a) !== Object.prototype || Object.getPrototypeOf(b) !== Object.prototype) return false
  // Keyed loops over own keys, counted, rather than two Object.keys arrays per object: a node
  // compares every document inside a frame with the copy it holds (the COMMIT and PLEDGES of
  // each VIEW), and those arrays were most of what the comparison allocated.
  const oa = a as Record<string, unknown>
  const ob = b as Record<string, unknown>
  let count = 0
  for (const k in oa) {
    if (!Object.hasOwn(oa, k)) continue
    count++
    const va = oa[k]
    if (va === undefined || !Object.hasOwn(ob, k) || !sameJson(va, ob[k])) return false
  }
  for (const k in ob) if (Object.hasOwn(ob, k)) count--
  return count === 0
}
