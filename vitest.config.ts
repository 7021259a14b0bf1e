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
    // real-network files mostly wait on sockets, disks and child processes, so two files side by side
    // nearly halve the wall time; their deadlines are sized for a busy machine.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Longest files first (test/durations.json), so that the workers finish together.
    sequence: { sequencer: LongestFirst },
    reporters: ['default', './test/reporters/summary.ts']
  }
})
