// After `vite build src/web`: writes dist/web/bundle.json (the files the seat page loads) and prints
// the seat page's bundle SHA-256, which the page shows (src/web/seat/bundle.ts computes the same
// figure from the files it was served). The figure: SHA-256 over the lines `SHA256(file)  path\n`,
// one per file, sorted by path (the output of `sha256sum`, so
// `cd dist/web && sha256sum $(jq -r '.files[]' bundle.json) | sha256sum` gives it too). The files:
// seat.html and every chunk, stylesheet and asset it loads, from Vite's manifest. docs/browser-seat.md
// says how to check a served page against a build of one's own.
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..', 'dist', 'web')
const manifest = JSON.parse(readFileSync(join(root, '.vite', 'manifest.json'), 'utf8'))
const files = new Set(['seat.html'])
const visit = key => {
  const chunk = manifest[key]
  if (chunk === undefined || files.has(chunk.file)) return
  files.add(chunk.file)
  for (const f of [...(chunk.css ?? []), ...(chunk.assets ?? [])]) files.add(f)
  for (const k of [...(chunk.imports ?? []), ...(chunk.dynamicImports ?? [])]) visit(k)
}
visit('seat.html')
const sorted = [...files].sort()
const sha = data => createHash('sha256').update(data).digest('hex')
const listing = sorted.map(p => `${sha(readFileSync(join(root, p)))}  ${p}\n`).join('')
const bundle = sha(listing)
writeFileSync(join(root, 'bundle.json'), JSON.stringify({ sha256: bundle, files: sorted }, null, 2) + '\n')
console.log(`seat page bundle SHA-256: ${bundle} (${sorted.length} files of dist/web, listed in dist/web/bundle.json; the page shows the same figure)`)
