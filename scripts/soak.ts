// `node dist/scripts/soak.js [--hands 10000]`: one table (a dealer node and two seat nodes on
// loopback, in this process) plays hand after hand; memory is printed at the start, every tenth of
// the run and at the end, and both logs are re-verified offline afterwards. Run it under
// `flock /tmp/fairdeal-bench.lock`.
import '../src/polyfill.js'
import { parseArgs } from 'node:util'
import { runTables } from './reliability/tables.js'

const { values } = parseArgs({ options: { hands: { type: 'string', default: '10000' } } })
const hands = Number(values.hands)
console.log(`soak: 1 table × ${hands} hands (a dealer node, two seat nodes), TCP on 127.0.0.1`)
const run = await runTables({ tables: 1, hands, sampleEvery: Math.max(1, Math.floor(hands / 10)), onSample: (n, s) => { console.log(`  ${n} hands: rss ${s.rssMB} MB, heap ${s.heapUsedMB} MB`) } })
console.log(`hands done ${run.handsDone}/${hands}, aborted ${run.aborted}, lost ${run.lost}; log entries verified ${run.verified}, failed ${run.unverified}`)
console.log(`${run.seconds.toFixed(1)} s, ${(run.handsDone / run.seconds).toFixed(1)} hands/s; memory at start rss ${run.memory.start.rssMB} MB heap ${run.memory.start.heapUsedMB} MB, at end rss ${run.memory.end.rssMB} MB heap ${run.memory.end.heapUsedMB} MB`)
for (const f of run.failures.slice(0, 10)) console.log(`  ${f}`)
process.exitCode = run.handsDone === hands && run.unverified === 0 && run.failures.length === 0 ? 0 : 1
