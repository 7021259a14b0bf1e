// `npm run bench`: every benchmark module under scripts/bench/, each printing its own figures and
// ratios against a bound measured in the same run. Not a test: nothing here asserts.
import '../src/polyfill.js'
import { readdir } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'

const dir = join(dirname(fileURLToPath(import.meta.url)), 'bench')
const only = process.argv.slice(2)
const files = (await readdir(dir)).filter(f => f.endsWith('.js')).sort()
for (const file of files) {
  const name = file.replace(/\.js$/, '')
  if (only.length > 0 && !only.includes(name)) continue
  console.log(`\n## ${name}`)
  const mod = await import(join(dir, file)) as { run: () => Promise<void> }
  await mod.run()
}
