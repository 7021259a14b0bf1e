#!/usr/bin/env node
// Rewrites test/durations.json (read by test/sequencer.ts: longest files first) from a vitest JSON
// report: `npx vitest run --reporter=default --reporter=json --outputFile=/tmp/report.json`, then
// `node scripts/test-durations.mjs /tmp/report.json`. Seconds per file, rounded to a tenth.
import { readFileSync, writeFileSync } from 'node:fs'
import { relative } from 'node:path'

const file = process.argv[2]
if (file === undefined) {
  process.stderr.write('usage: node scripts/test-durations.mjs VITEST-JSON-REPORT\n')
  process.exit(2)
}
const root = new URL('..', import.meta.url).pathname
const report = JSON.parse(readFileSync(file, 'utf8'))
const seconds = {}
for (const r of report.testResults ?? []) {
  seconds[relative(root, r.name)] = Math.round((r.endTime - r.startTime) / 100) / 10
}
const sorted = Object.fromEntries(Object.entries(seconds).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])))
writeFileSync(new URL('../test/durations.json', import.meta.url), JSON.stringify(sorted, null, 2) + '\n')
process.stdout.write(`test/durations.json: ${Object.keys(sorted).length} files\n`)
