import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'
import LongestFirst from './test/sequencer.js'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['./src/polyfill.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One module graph per worker, reused by the files it runs: libp2p, level and the schemes load
    // once per worker instead of once per file (a third of the suite's CPU went to imports). Test
    // files keep no global state between them (each makes its own temp dirs, nodes and ports).
    isolate: false,
    // vitest's default (cores - 1) is ONE worker on a 2-core machine: every file in turn. The
    // suite is mostly CPU, but its real-network files also wait on deadlines, child processes and
    // disks: two workers more than cores fill those waits. Measured on this 2-core machine (docs/
    // reliability.md): 2 workers 138 s, 3 workers 116-119 s, 4 workers 110 s (idle); with one core
    // kept busy 201 s, 156 s and 140 s; the same CPU, no failure in any of them.
    maxWorkers: availableParallelism() + 2,
    // Longest files first (test/durations.json), so that the workers finish together.
    sequence: { sequencer: LongestFirst },
    reporters: ['default', './test/reporters/summary.ts']
  }
})
