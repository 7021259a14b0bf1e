import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * Longest files first, from the seconds recorded in test/durations.json, so that the two workers
 * finish together: one long real-network file started last would otherwise run alone at the end.
 * vitest's own order does the same from its results cache, but a fresh clone has no cache and then
 * runs the largest files (in bytes) first, which is not the same thing. A file missing from the
 * table (a new one) counts as UNKNOWN_SECONDS; refresh the table from a run's JSON report with
 * `node scripts/test-durations.mjs REPORT.json` (see the README's test section).
 */
const UNKNOWN_SECONDS = 3

function recorded (): Record<string, number> {
  try {
    return JSON.parse(readFileSync(new URL('./durations.json', import.meta.url), 'utf8')) as Record<string, number>
  } catch {
    return {}
  }
}

export default class LongestFirst extends BaseSequencer {
  override async sort (files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = recorded()
    const root = this.ctx.config.root
    const cost = (f: TestSpecification): number => seconds[relative(root, f.moduleId).split('\\').join('/')] ?? UNKNOWN_SECONDS
    return [...files].sort((a, b) => cost(b) - cost(a) || a.moduleId.localeCompare(b.moduleId))
  }
}
