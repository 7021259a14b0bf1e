import fc from 'fast-check'

/**
 * Hostile-input generators for the property tests (fast-check). Every property test runs with a
 * fixed seed, so CI replays the same inputs; FAIRDEAL_FC_SEED=<n> explores others, and a failure
 * prints the seed and path that reproduce it.
 */
export const FC_SEED = Number(process.env.FAIRDEAL_FC_SEED ?? 20_261_201)

/** fast-check parameters: the fixed seed, `numRuns` inputs, no time limit (a property must finish). */
export const fcParams = (numRuns: number): fc.Parameters<unknown> => ({ seed: FC_SEED, numRuns, endOnFailure: true })

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
export type Path = Array<string | number>

/** Every path into a JSON value, the root included. */
export function pathsOf (value: unknown, prefix: Path = []): Path[] {
  const out: Path[] = [prefix]
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...pathsOf(v, [...prefix, i])))
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, [...prefix, k]))
  return out
}

/** A change to a JSON document: set a value, delete a key or element, or add a key. */
export type Mutation =
  | { kind: 'set', at: number, value: Json }
  | { kind: 'delete', at: number }
  | { kind: 'add', at: number, key: string, value: Json }
  | { kind: 'type-swap', at: number }

/** Values that break assumptions: edge numbers, long and odd strings, deep nesting, prototype keys. */
export const nastyValue: fc.Arbitrary<Json> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
  fc.constantFrom<Json>(-0, 0, -1, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, 2 ** 53, '',
    '\u0000', '\ud800', 'a'.repeat(70_000), '__proto__', 'constructor', [], {}, [[[[[[[[]]]]]]]], { __proto__: { x: 1 } } as unknown as Json,
    '12D3KooW' + '1'.repeat(44), '0'.repeat(64), 'f'.repeat(128), 'robot'),
  fc.string({ unit: 'binary', maxLength: 40 })
)

export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: nastyValue }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('add' as const), at: fc.nat(), key: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'sig', 'type', 'body')), value: nastyValue }),
  fc.record({ kind: fc.constant('type-swap' as const), at: fc.nat() })
)

/** `doc` with `mutations` applied, in order (a fresh copy; `doc` is not touched). */
export function mutate (doc: unknown, mutations: Mutation[]): unknown {
  let root = structuredClone(doc) as unknown
  for (const m of mutations) {
    // A fresh copy of the value each time: generated constants are shared objects.
    const value = 'value' in m ? structuredClone(m.value) : null
    const paths = pathsOf(root)
    const path = paths[m.at % paths.length]
    if (path.length === 0) {
      if (m.kind === 'set') root = value
      else if (m.kind === 'type-swap') root = JSON.stringify(root)
      continue
    }
    const parent = path.slice(0, -1).reduce<any>((v, k) => v[k], root)
    const key = path[path.length - 1]
    switch (m.kind) {
      case 'set': parent[key] = value; break
      case 'delete': if (Array.isArray(parent)) parent.splice(key as number, 1); else delete parent[key]; break
      case 'add': {
        const target = parent[key]
        if (target !== null && typeof target === 'object' && !Array.isArray(target)) Object.defineProperty(target, m.key, { value, enumerable: true, configurable: true, writable: true })
        else if (Array.isArray(target)) target.push(value)
        break
      }
      case 'type-swap': {
        const v = parent[key]
        parent[key] = typeof v === 'string' ? Number(v.length) : typeof v === 'number' ? String(v) : Array.isArray(v) ? { ...v } : v === null ? false : v !== null && typeof v === 'object' ? [v] : null
        break
      }
    }
  }
  return root
}

/** Raw bytes that are not even JSON, or are JSON cut short, or are very large. */
export const garbageBytes: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: 512 }),
  fc.string({ unit: 'grapheme', maxLength: 200 }).map(s => new TextEncoder().encode(s)),
  fc.jsonValue({ maxDepth: 4 }).map(v => new TextEncoder().encode(JSON.stringify(v) ?? 'null')),
  fc.nat({ max: 70_000 }).map(n => new TextEncoder().encode(`{"type":"pledge","x":"${'a'.repeat(n)}"}`))
)
