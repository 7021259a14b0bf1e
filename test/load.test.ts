import { describe, expect, it } from 'vitest'
import { runTables } from '../scripts/reliability/tables.js'

// Load, the CI size: several tables at once in one process (a node serves one table, so each table
// is its own dealer node and seat node), every hand ending with a receipt in both logs and every
// log entry re-verified offline. The full size (20 tables × 100 hands) is scripts/load.ts.

describe('several tables at once in one process', () => {
  it('3 tables × 4 hands: nothing lost, nothing unverified', async () => {
    const run = await runTables({ tables: 3, hands: 4 })
    expect(run.failures).toEqual([])
    expect({ done: run.handsDone, aborted: run.aborted, lost: run.lost }).toEqual({ done: 12, aborted: 0, lost: 0 })
    expect({ verified: run.verified, unverified: run.unverified }).toEqual({ verified: 24, unverified: 0 })
  })
})
