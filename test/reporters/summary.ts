import type { Reporter, TestModule } from 'vitest/node'

/**
 * Ends the run with one plain line, `N passed, M failed` (and skipped when any), that any CI log
 * reader understands, after vitest's own report.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd (testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === 'passed') passed++
        else if (state === 'failed') failed++
        else skipped++
      }
      // A file that failed to load has no tests to count, and is a failure all the same.
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed++
    }
    failed += unhandledErrors.length
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`)
  }
}
