// Where a table's CPU goes, by kind of work, from a system-wide `perf record` made while `npm run
// bench table` plays hands one at a time (docs/network.md, "Where the CPU goes, by kind"). Reads
// `perf script -G -F pid,tid,ip,sym,dso` on stdin (one line per sample: its leaf frame) and prints,
// per process with samples, its main thread's and its other threads' CPU split into kinds, in ms per
// hand. The node processes need Node's `--perf-basic-prof` for their JavaScript to be named (the
// bench passes FAIRDEAL_BENCH_NODE_ARGS to them); without it, JIT code counts as `other`.
//
//   perf record -a -g -F 499 -o perf.data -- sleep 8      # while the figure runs
//   perf script -i perf.data -G -F pid,tid,ip,sym,dso | node dist/scripts/perf-kinds.js --hands 167 --freq 499
//
// --hands: the hands played in the recording (the figure's hands per second times its seconds);
// --freq: perf's sampling frequency (-F); --pids a,b,…: these processes only, and their sum (the
// table's node processes). The kinds are read off each sample's symbol and library.
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'

/** Kinds in the order printed; the first whose test matches a sample's symbol and library wins. */
const KINDS: Array<[string, (sym: string, dso: string) => boolean]> = [
  ['kernel', (_s, d) => d.includes('kernel')],
  // OpenSSL's Ed25519 (field arithmetic, point doubling, SHA-512) behind node:crypto's sign and verify.
  ['Ed25519', s => /^(fe_|ge_|x25519|ossl_ed25519|sha512_block|slide|table_select|cmov)/.test(s)],
  ['JavaScript (JIT code)', (s, d) => d.includes('JIT') || d.includes('perf-') || s.startsWith('JS:')],
  ['V8 GC', s => /Scaveng|Mark|Sweep|Heap::|Evacuat|Ephemeron|Compactor|Remembered|Barrier/.test(s)],
  ['V8 compilers', s => /compiler::|Compile|Maglev|Parser/.test(s)],
  // Inline caches, calls, property lookups, JSON, maps: what JavaScript asks of V8 beside its own code.
  ['V8 builtins and runtime', s => s.startsWith('Builtins_') || s.startsWith('v8::')],
  ['malloc', (s, d) => d.includes('libc') && /malloc|free|_int_|chunk|consolidate/.test(s)],
  ['LevelDB', (s, d) => d.includes('classic-level') || /leveldb|snappy/.test(s)],
  ['other (libc, Node, libuv, OpenSSL beside Ed25519)', () => true]
]

/** A process's samples are split between these: its main thread's, and all its others'. */
const THREADS = ['main thread', 'other threads'] as const

function kindOf (sym: string, dso: string): string {
  return (KINDS.find(([, test]) => test(sym, dso)) as [string, unknown])[0]
}

async function main (): Promise<void> {
  const { values } = parseArgs({ options: { hands: { type: 'string' }, freq: { type: 'string', default: '499' }, pids: { type: 'string' } } })
  const only = values.pids === undefined ? undefined : new Set(values.pids.split(','))
  const freq = Number(values.freq)
  const hands = values.hands === undefined ? 1 : Number(values.hands)
  if (!(freq > 0) || !(hands > 0)) throw new Error('--freq and --hands take positive numbers')
  // pid → thread (THREADS) → kind → samples
  const byPid = new Map<string, Map<string, Map<string, number>>>()
  for await (const line of createInterface({ input: process.stdin })) {
    // "  25352/25352      bcbca7 node::AsyncWrap::EmitTraceEventAfter (/usr/bin/node)"
    const m = /^\s*(\d+)\/(\d+)\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$/.exec(line)
    if (m === null) continue
    const [, pid, tid, sym, dso] = m
    if (pid === '0' || (only !== undefined && !only.has(pid))) continue // 0: the idle task
    const thread = pid === tid ? THREADS[0] : THREADS[1]
    const threads = byPid.get(pid) ?? new Map<string, Map<string, number>>()
    byPid.set(pid, threads)
    const kinds = threads.get(thread) ?? new Map<string, number>()
    threads.set(thread, kinds)
    const kind = kindOf(sym, dso)
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
  }
  const ms = (samples: number): string => (samples / freq / hands * 1000).toFixed(2).padStart(7)
  const total = (kinds: Map<string, number>): number => [...kinds.values()].reduce((a, b) => a + b, 0)
  const samplesOf = (threads: Map<string, Map<string, number>>): number => [...threads.values()].reduce((n, kinds) => n + total(kinds), 0)
  // The busiest processes first: the table's nodes and the driver, ahead of the kernel's threads
  // (all of those --pids names, whose sum is printed after them).
  const pids = [...byPid].sort(([, a], [, b]) => samplesOf(b) - samplesOf(a)).slice(0, only?.size ?? 8)
  console.log(`ms of CPU per hand (${hands} hands, ${freq} samples a second per core)`)
  const print = (title: string, kinds: Map<string, number>): void => {
    console.log(`${title}: ${ms(total(kinds)).trim()}`)
    for (const [kind] of KINDS) if (kinds.has(kind)) console.log(`  ${ms(kinds.get(kind) as number)}  ${kind}`)
  }
  const together = new Map<string, Map<string, number>>()
  for (const [pid, threads] of pids) {
    for (const thread of THREADS) {
      const kinds = threads.get(thread)
      if (kinds === undefined) continue
      print(`pid ${pid}, ${thread}`, kinds)
      const sum = together.get(thread) ?? new Map<string, number>()
      together.set(thread, sum)
      for (const [kind, n] of kinds) sum.set(kind, (sum.get(kind) ?? 0) + n)
    }
  }
  if (only !== undefined) for (const [thread, kinds] of together) print(`${only.size} processes together, ${thread}`, kinds)
}

await main()
