// `node dist/scripts/load.js [--tables 20] [--hands 100]`: N tables at once in one process, each
// its own dealer node and seat node on loopback (a node serves one table), every log re-verified
// offline afterwards. Prints the figures docs/reliability.md quotes. Heavy: run it under
// `flock /tmp/fairdeal-bench.lock`.
import '../src/polyfill.js'
import { parseArgs } from 'node:util'
import { runTables } from './reliability/tables.js'

const { values } = parseArgs({ options: { tables: { type: 'string', default: '20' }, hands: { type: 'string', default: '100' } } })
const tables = Number(values.tables)
const hands = Number(values.hands)
console.log(`load: ${tables} tables × ${hands} hands, one process, TCP on 127.0.0.1`)
const run = await runTables({ tables, hands, sampleEvery: Math.max(1, Math.floor(tables * hands / 10)), onSample: (n, s) => { console.log(`  ${n} hands: rss ${s.rssMB} MB, heap ${s.heapUsedMB} MB`) } })
console.log(`hands done ${run.handsDone}/${tables * hands}, aborted ${run.aborted}, lost ${run.lost}`)
console.log(`log entries verified ${run.verified}, failed ${run.unverified} (expected ${2 * tables * hands} verified)`)
console.log(`${run.seconds.toFixed(1)} s, ${(run.handsDone / run.seconds).toFixed(1)} hands/s; memory rss ${run.memory.start.rssMB} → ${run.memory.end.rssMB} MB, heap ${run.memory.start.heapUsedMB} → ${run.memory.end.heapUsedMB} MB`)
for (const f of run.failures.slice(0, 10)) console.log(`  ${f}`)
process.exitCode = run.handsDone === tables * hands && run.unverified === 0 && run.verified === 2 * tables * hands ? 0 : 1
