import * as z from 'zod'
import { isDeepFrozen, markChecked, wasChecked } from './frozen.js'

/**
 * Signed documents inside other documents, parsed once. A VIEW carries the COMMIT and the PLEDGES
 * its recipient checked already, a REVEAL the nonces, a FINAL's receipt all of them: the schema
 * walk of those copies (regular expressions on every hex field, a new object per level) was most
 * of what decoding a frame cost (issue 24). A schema wrapped here answers at once for a deep-frozen
 * value already recorded as having passed that very schema (src/core/frozen.ts: `markChecked`), and
 * otherwise runs the schema itself, with its own issues, paths and messages: the verdict is the
 * schema's in every case.
 *
 * That holds only for a schema whose output is its input, as the same JSON value: strict objects,
 * arrays, records and scalars, with no transform, default or value-rewriting check. Then a value
 * the schema passed once passes it again unchanged, and so does any deep-frozen value that is the
 * same JSON. {@link knownOr} checks this of the schema it wraps, at import, and throws otherwise.
 */

/** The nested documents a parse passed fresh (not yet frozen), while {@link recordingPassed} runs. */
let recording: Array<[object, object]> | undefined

/**
 * `schema` in a place where a whole signed document (or any value that may already be held
 * deep-frozen) sits inside another: a deep-frozen value recorded as having passed `schema` is
 * taken as it is, with no walk; a deep-frozen value that passes it now is recorded so and kept (not
 * a copy); a fresh value that passes is noted for {@link recordingPassed}.
 */
export function knownOr<S extends z.ZodType> (schema: S): z.ZodLazy<S> {
  const problem = rewritingPart(schema, '$', new Set())
  if (problem !== undefined) throw new Error(`knownOr: the schema's output is not its input (${problem})`)
  const known = z.lazy(() => schema)
  const run = (payload: z.core.ParsePayload, ctx: z.core.ParseContextInternal): z.core.util.MaybeAsync<z.core.ParsePayload> => {
    const value = payload.value
    if (wasChecked(value, schema)) return payload
    const issues = payload.issues.length
    const out = schema._zod.run(payload, ctx)
    if (out instanceof Promise || out.issues.length !== issues) return out
    if (isDeepFrozen(value)) {
      // The schema's copy is the same JSON value as the frozen one: keep the frozen one, whose
      // signature, digest and encoding the node may know by identity.
      markChecked(value, schema)
      out.value = value
    } else if (recording !== undefined && typeof out.value === 'object' && out.value !== null) {
      recording.push([out.value, schema])
    }
    return out
  }
  // The lazy schema's own parse only forwards to `schema`; this forwards unless the value is known.
  // Both entry points: an object's parser calls `run`, which is `parse` for a schema without checks.
  known._zod.parse = run
  known._zod.run = run
  return known
}

/**
 * Runs `parse` (a synchronous safeParse) and returns its result with `markPassed`: once the caller
 * has deep-frozen the result, `markPassed()` records each document inside it that passed a
 * {@link knownOr} schema fresh, so that the next frame carrying it skips the walk. A document that
 * was not frozen (replaced meanwhile) is not recorded.
 */
export function recordingPassed<T> (parse: () => T): { result: T, markPassed: () => void } {
  const outer = recording
  const passed: Array<[object, object]> = []
  recording = passed
  try {
    const result = parse()
    return { result, markPassed: () => { for (const [value, schema] of passed) markChecked(value, schema) } }
  } finally {
    recording = outer
  }
}

/** Schema types whose output is their input, for an input they pass. */
const SAME = new Set(['string', 'number', 'boolean', 'null', 'literal', 'enum', 'unknown', 'never'])

/**
 * Where in `schema` (a path from `at`) the output could differ from the input, or undefined: a
 * transform, pipe, default or catch, a value-rewriting check (`overwrite`: trim, lower case), a
 * stripping object (not strict), or a type not known here.
 */
function rewritingPart (schema: z.ZodType, at: string, seen: Set<object>): string | undefined {
  if (seen.has(schema)) return undefined
  seen.add(schema)
  const def = schema._zod.def as unknown as { type: string, checks?: Array<{ _zod: { def: { check: string } } }> } & Record<string, unknown>
  for (const check of def.checks ?? []) {
    if (check._zod.def.check === 'overwrite') return `${at}: a check that rewrites the value`
  }
  const inner = (key: string, where: string): string | undefined => rewritingPart(def[key] as z.ZodType, where, seen)
  switch (def.type) {
    case 'object': {
      const catchall = def.catchall as z.ZodType | undefined
      if (catchall === undefined) return `${at}: an object that strips unknown keys`
      const shape = (schema as unknown as z.ZodObject).shape
      for (const [k, v] of Object.entries(shape)) {
        const p = rewritingPart(v as z.ZodType, `${at}.${k}`, seen)
        if (p !== undefined) return p
      }
      return rewritingPart(catchall, `${at}.*`, seen)
    }
    case 'array': return inner('element', `${at}[]`)
    case 'optional': case 'nullable': return inner('innerType', at)
    case 'record': return inner('keyType', `${at}{key}`) ?? inner('valueType', `${at}{}`)
    case 'union': {
      for (const option of def.options as z.ZodType[]) {
        const p = rewritingPart(option, at, seen)
        if (p !== undefined) return p
      }
      return undefined
    }
    case 'lazy': return rewritingPart((schema as unknown as z.ZodLazy<z.ZodType>).unwrap(), at, seen)
    default: return SAME.has(def.type) ? undefined : `${at}: a ${def.type} schema`
  }
}
