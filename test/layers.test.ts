// The layers of README.md's "Source layout": every import of src/ (static, `import type`,
// `export … from`, dynamic `import()`) runs downwards or within its own layer, and no module imports
// itself through others (no circle, type-only imports included). No exception list: a new arrow
// that runs up fails here.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, test } from 'vitest'

const SRC = resolve(import.meta.dirname, '../src')

/**
 * The layer of each top-level entry of src/, lowest first; a module may import its own layer and
 * the layers below. `web` is browser code: it may import `core` only.
 */
const RANK: Record<string, number> = { core: 0, protocol: 1, net: 2, store: 2, beacon: 2, native: 2, daemon: 3, cli: 4, 'polyfill.ts': 4 }
const ONLY: Record<string, readonly string[]> = { web: ['core', 'web'] }

function files (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(e => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return files(path)
    return /\.(ts|tsx|mts)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : []
  })
}

/** Every module specifier the file names: import/export … from, bare import, import(), import type. */
function specifiers (text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1')
  const found: string[] = []
  for (const re of [/\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g]) {
    for (const m of code.matchAll(re)) found.push(m[1])
  }
  return found
}

function layerOf (file: string): string {
  return relative(SRC, file).split(/[\\/]/)[0]
}

const all = files(SRC)
const known = new Set(all)
const edges = new Map<string, string[]>()
for (const file of all) {
  const targets: string[] = []
  for (const spec of specifiers(readFileSync(file, 'utf8'))) {
    if (!spec.startsWith('.')) continue
    const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts')
    if (known.has(target)) targets.push(target)
    else if (known.has(target + '.ts')) targets.push(target + '.ts')
    else if (known.has(join(target, 'index.ts'))) targets.push(join(target, 'index.ts'))
    else if (!target.startsWith(SRC)) targets.push(target) // outside src/: reported below
  }
  edges.set(file, targets)
}

describe('layers', () => {
  test('every top-level entry of src/ has a layer', () => {
    const unknown = [...new Set(all.map(layerOf))].filter(l => RANK[l] === undefined && ONLY[l] === undefined)
    expect(unknown).toEqual([])
  })

  test('no import runs upwards (nor out of src/)', () => {
    const upward: string[] = []
    for (const [file, targets] of edges) {
      const from = layerOf(file)
      for (const target of targets) {
        const name = `${relative(SRC, file)} → ${relative(SRC, target)}`
        if (!target.startsWith(SRC + '/')) { upward.push(`${name} (outside src/)`); continue }
        const to = layerOf(target)
        const allowed = ONLY[from] !== undefined ? ONLY[from].includes(to) : ONLY[to] === undefined && RANK[to] <= RANK[from]
        if (!allowed) upward.push(name)
      }
    }
    expect(upward).toEqual([])
  })

  test('no import circle', () => {
    // Tarjan's strongly connected components: any component of two or more modules (or a module importing itself) is a circle.
    const index = new Map<string, number>()
    const low = new Map<string, number>()
    const stack: string[] = []
    const onStack = new Set<string>()
    const circles: string[][] = []
    let next = 0
    const visit = (v: string): void => {
      index.set(v, next); low.set(v, next); next++
      stack.push(v); onStack.add(v)
      for (const w of edges.get(v) ?? []) {
        if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v) as number, low.get(w) as number)) } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number))
      }
      if (low.get(v) === index.get(v)) {
        const component: string[] = []
        let w: string
        do { w = stack.pop() as string; onStack.delete(w); component.push(relative(SRC, w)) } while (w !== v)
        if (component.length > 1 || (edges.get(v) ?? []).includes(v)) circles.push(component.sort())
      }
    }
    for (const v of edges.keys()) if (!index.has(v)) visit(v)
    expect(circles).toEqual([])
  })

  test('the reader finds every kind of import', () => {
    expect(specifiers(`import type { A } from './a.js'\nexport { b } from "./b.js"\nexport * from './c.js'\nimport './d.js'\nconst e = await import('./e.js')\nimport {\n  f,\n  type G\n} from '../f.js'\n// import x from './commented.js'`))
      .toEqual(['./a.js', './b.js', './c.js', '../f.js', './d.js', './e.js'])
    expect(edges.size).toBeGreaterThan(100)
  })
})
