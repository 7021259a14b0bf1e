// `node dist/scripts/load.js [--tables 20] [--hands 100]`: ONE dealer node serving N tables at once
// (config `tables`), with two seat nodes that each hold a seat at every table, all in this process
// on loopback; every log re-verified offline afterwards and every hand's receipt looked for in every
// member's log. Prints the figures docs/reliability.md quotes. Heavy: run it under
// `flock /tmp/fairdeal-bench.lock`.
import '../src/polyfill.js'
import { parseArgs } from 'node:util'
import { MEMBERS_PER_HAND, runTables } from './reliability/tables.js'

const { values } = parseArgs({ options: { tables: { type: 'string', default: '20' }, hands: { type: 'string', default: '100' } } })
const tables = Number(values.tables)
const hands = Number(values.hands)
console.log(`load: one dealer node serving ${tables} tables × ${hands} hands, two seat nodes at every table, one process, TCP on 127.0.0.1`)
const run = await runTables({ tables, hands, sampleEvery: Math.max(1, Math.floor(tables * hands / 10)), onSample: (n, s) => { console.log(`  ${n} hands: rss ${s.rssMB} MB, heap ${s.heapUsedMB} MB`) } })
console.log(`hands done ${run.handsDone}/${tables * hands}, aborted ${run.aborted}, lost ${run.lost}`)
const expected = MEMBERS_PER_HAND * tables * hands
console.log(`log entries verified ${run.verified}, failed ${run.unverified} (expected ${expected} verified); receipts found in the members' logs ${run.receiptsLogged}/${expected}`)
// The bound beside the figure: the CPU the hands took in this run (all three nodes share this
// process's one thread), so one core could play at most this many hands a second.
const cpuMsPerHand = 1000 * run.cpuSeconds / Math.max(1, run.handsDone)
console.log(`CPU ${run.cpuSeconds.toFixed(1)} s while playing (${cpuMsPerHand.toFixed(1)} ms per hand, all three nodes): bound ${(1000 / cpuMsPerHand).toFixed(1)} hands/s on one core; the load average during the run decides how much of it this process got`)
console.log(`${run.seconds.toFixed(1)} s, ${(run.handsDone / run.seconds).toFixed(1)} hands/s; memory rss ${run.memory.start.rssMB} → ${run.memory.end.rssMB} MB, heap ${run.memory.start.heapUsedMB} → ${run.memory.end.heapUsedMB} MB`)
for (const f of run.failures.slice(0, 10)) console.log(`  ${f}`)
process.exitCode = run.handsDone === tables * hands && run.unverified === 0 && run.verified === expected && run.receiptsLogged === expected && run.failures.length === 0 ? 0 : 1
