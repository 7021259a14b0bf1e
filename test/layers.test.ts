// Layers, one direction (issue 17): every import of src/ — `import`, `import type`, `export … from`,
// `import()` and a worker module named by `new URL('…', import.meta.url)` or `distModuleUrl('…')` — goes to the same layer
// or a lower one, and no module reaches itself again through its imports. No exception list: a new
// upward arrow or circle fails here with the files named. The layers are README.md's "Source layout".
import { describe, expect, it } from 'vitest'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { repoRoot } from './helpers/cli.js'

const src = join(repoRoot, 'src')

/** Lower first. Adapters (one rank) may use each other, never a circle; the browser pages sit on the core and the protocol machines. */
const RANK: Record<string, number> = {
  core: 0,
  protocol: 1,
  net: 2, store: 2, beacon: 2, crypto: 2,
  daemon: 3,
  cli: 4, web: 4, polyfill: 4
}

function files (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(e => e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [])
}

interface Arrow { from: string, to: string, typeOnly: boolean }

const PATTERNS = [
  /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/g,
  /()()import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g,
  /()()new URL\(\s*['"](\.{1,2}\/[^'"]+\.js)['"]\s*,\s*import\.meta\.url\s*\)/g,
  /(?=(dist))()distModuleUrl\(\s*['"]([^'"]+\.js)['"]\s*\)/g
]

function arrows (): Arrow[] {
  const out: Arrow[] = []
  for (const file of files(src)) {
    const text = readFileSync(file, 'utf8')
    for (const pattern of PATTERNS) {
      for (const m of text.matchAll(pattern)) {
        // distModuleUrl('store/check-worker.js') names a module of dist/src/, i.e. src/store/check-worker.ts.
        const target = normalize(m[1] === 'dist' ? join(src, m[3]) : join(dirname(file), m[3])).replace(/\.js$/, '.ts')
        if (!target.startsWith(src)) continue
        out.push({ from: relative(src, file), to: relative(src, target), typeOnly: m[2] !== undefined && m[2] !== '' })
      }
    }
  }
  return out
}

const layerOf = (path: string): string => path.split('/')[0].replace(/\.ts$/, '')

describe('layers', () => {
  const all = arrows()

  it('reads the imports of every module (a sanity check of the parser)', () => {
    expect(all.length).toBeGreaterThan(500)
    expect(all).toContainEqual({ from: 'daemon/daemon.ts', to: 'net/node.ts', typeOnly: false })
    expect(all.some(a => a.typeOnly)).toBe(true)
    expect(all).toContainEqual({ from: 'store/check-pool.ts', to: 'store/check-worker.ts', typeOnly: false })
    for (const a of all) expect(Object.keys(RANK), `${a.from}: a module outside the layer table`).toContain(layerOf(a.from))
  })

  it('no arrow runs up', () => {
    const up = all.filter(a => RANK[layerOf(a.to)] > RANK[layerOf(a.from)]).map(a => `${a.from} → ${a.to}`)
    expect(up).toEqual([])
  })

  it('the pages run in a browser: beside the core and the protocol machines (the seat page runs a seat) they take only types', () => {
    const notCore = all.filter(a => layerOf(a.from) === 'web' && !['core', 'protocol', 'web'].includes(layerOf(a.to)) && !a.typeOnly).map(a => `${a.from} → ${a.to}`)
    expect(notCore).toEqual([])
  })

  it('no import circle', () => {
    const graph = new Map<string, string[]>()
    for (const a of all) graph.set(a.from, [...(graph.get(a.from) ?? []), a.to])
    // Tarjan's strongly connected components: any of more than one module is a circle.
    let next = 0
    const index = new Map<string, number>()
    const low = new Map<string, number>()
    const stack: string[] = []
    const onStack = new Set<string>()
    const circles: string[][] = []
    const visit = (v: string): void => {
      index.set(v, next); low.set(v, next); next++
      stack.push(v); onStack.add(v)
      for (const w of graph.get(v) ?? []) {
        if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v) as number, low.get(w) as number)) } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number))
      }
      if (low.get(v) === index.get(v)) {
        const component: string[] = []
        for (;;) { const w = stack.pop() as string; onStack.delete(w); component.push(w); if (w === v) break }
        if (component.length > 1) circles.push(component.sort())
      }
    }
    for (const v of graph.keys()) if (!index.has(v)) visit(v)
    expect(circles).toEqual([])
  })
})
