/**
 * Documents that can no longer change. A JSON value passed to {@link freezeDeep} is frozen with
 * every object and array inside it and recorded, so that what a node learnt about it (its signature
 * is valid, its digest, the schema it passed) can be remembered by the object's identity: a
 * deep-frozen object holds the same bytes for as long as it lives. The records are weak: they go
 * with the objects. Pure and browser-safe (the verifiers in the page use the same core).
 */
const deep = new WeakSet<object>()
/**
 * Deep-frozen values and the schema each passed (see {@link markChecked}): the schema itself when
 * there is one (nearly always: every document off the wire is recorded so), a set past that.
 */
const checked = new WeakMap<object, object>()

/**
 * Given an object inside a value read off the wire that has a string `sig` (a signed document, as
 * far as its shape says), a deep-frozen object already held that is the same JSON value, or
 * undefined. It must answer only for the same value (sameJson): the object found takes the
 * candidate's place.
 */
export type Interner = (candidate: Record<string, unknown> & { sig: string }) => object | undefined

/**
 * Freezes `value` (plain JSON: objects, arrays, strings, numbers, booleans, null), and every
 * object and array in it, and returns it. A value that holds anything else (a typed array, which
 * cannot be frozen; an undefined member, which JSON does not have; a function, a class instance or
 * an object without a prototype) is frozen as far as it can be but not recorded as deep-frozen.
 * A value read off the wire has the documents a node holds put in place first ({@link internHeld}).
 */
export function freezeDeep<T> (value: T): T {
  freeze(value)
  return value
}

/**
 * A deep-frozen copy of the JSON value `value` that shares every deep-frozen part of it (a document
 * off the wire inside it stays that very object) and copies every other array and plain object, so
 * that nothing the caller still holds is frozen. The copy is the same JSON value: a member that is
 * undefined is left out of it. Anything else (a typed array) is kept as it is, and the copy is then
 * not deep-frozen.
 */
export function frozenCopy<T> (value: T): T {
  return freezeDeep(copyUnfrozen(value))
}

function copyUnfrozen<T> (value: T): T {
  if (value === null || typeof value !== 'object' || deep.has(value) || ArrayBuffer.isView(value)) return value
  if (Array.isArray(value)) return value.map(copyUnfrozen) as T
  const out: Record<string, unknown> = {}
  const o = value as Record<string, unknown>
  // A member that is undefined is no member in JSON (canonical JSON leaves it out): the copy has none.
  for (const k in o) if (Object.hasOwn(o, k) && o[k] !== undefined) out[k] = copyUnfrozen(o[k])
  return out as T
}

/**
 * Freezes `value` and what it holds; true when it is, whole, a JSON tree: null, a boolean, number
 * or string, or a plain object or array holding only such values (no undefined member or element,
 * no typed array, function, class instance or object without a prototype). Only such a value is
 * recorded as deep-frozen, so a deep-frozen value that has a canonical encoding (its numbers safe
 * integers, which the encoding checks) is the very value that encoding reads back as: the dealer's
 * node hands its own seat the document it sends the others (src/daemon/table-host.ts), not a copy
 * read back from its frame.
 */
function freeze (value: unknown): boolean {
  if (value === null) return true
  const type = typeof value
  if (type !== 'object') return type === 'string' || type === 'number' || type === 'boolean'
  if (deep.has(value as object)) return true
  if (ArrayBuffer.isView(value)) return false
  // Arrays, and objects as JSON.parse makes them (not a class instance, nor one without a prototype).
  let whole = Array.isArray(value) || Object.getPrototypeOf(value) === Object.prototype
  // Indexed and keyed loops, not Object.values: every document off the wire comes through here,
  // and the array Object.values makes for each object it holds was most of the cost.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!freeze(value[i])) whole = false
  } else {
    const o = value as Record<string, unknown>
    for (const k in o) if (Object.hasOwn(o, k) && !freeze(o[k])) whole = false
  }
  Object.freeze(value)
  if (whole) deep.add(value as object)
  return whole
}

/**
 * Replaces, in place, each signed document inside the plain JSON value `value` (not `value`
 * itself, and not inside a document replaced) that `intern` holds a deep-frozen copy of by that
 * copy. A frame's document then holds the very COMMIT and PLEDGES objects the node already checked
 * (inside a VIEW), so their signatures, digests and canonical bytes are known by identity, not
 * found again; and done before a schema walks the value, a schema that knows the copy
 * (src/core/known-schema.ts) need not walk it. The value is the same JSON either way. Frozen parts
 * of `value` are left as they are.
 */
export function internHeld (value: unknown, intern: Interner): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value) || ArrayBuffer.isView(value)) return
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const held = heldCopy(value[i], intern)
      if (held !== undefined) value[i] = held
      else internHeld(value[i], intern)
    }
  } else {
    const o = value as Record<string, unknown>
    for (const k in o) {
      if (!Object.hasOwn(o, k)) continue
      const held = heldCopy(o[k], intern)
      if (held !== undefined) o[k] = held
      else internHeld(o[k], intern)
    }
  }
}

/** The copy `intern` holds of `child`, a signed document by its shape; deep-frozen, or not used. */
function heldCopy (child: unknown, intern: Interner): object | undefined {
  if (child === null || typeof child !== 'object' || Array.isArray(child)) return undefined
  const c = child as Record<string, unknown>
  if (typeof c.sig !== 'string') return undefined
  const held = intern(c as Record<string, unknown> & { sig: string })
  return held !== undefined && deep.has(held) ? held : undefined
}

/** Whether `value` went through {@link freezeDeep} whole: neither it nor anything in it can change. */
export function isDeepFrozen (value: unknown): boolean {
  return typeof value === 'object' && value !== null && deep.has(value)
}

/**
 * Records that the deep-frozen `value` passed `schema` (any object standing for a schema: the
 * identity is what counts). Ignored for a value that is not deep-frozen: it could change after.
 */
export function markChecked (value: unknown, schema: object): void {
  if (!isDeepFrozen(value)) return
  const o = value as object
  const had = checked.get(o)
  if (had === undefined) checked.set(o, schema)
  else if (had instanceof SchemaSet) had.add(schema)
  else if (had !== schema) checked.set(o, new SchemaSet([had, schema]))
}

/** More than one schema a value passed (a Set subclass, so that no schema object is taken for one). */
class SchemaSet extends Set<object> {}

/** True when `value` is deep-frozen and was recorded as having passed `schema`. */
export function wasChecked (value: unknown, schema: object): boolean {
  if (!isDeepFrozen(value)) return false
  const had = checked.get(value as object)
  return had === schema || (had instanceof SchemaSet && had.has(schema))
}
