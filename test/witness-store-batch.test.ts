// A witness's store writes the heads that come together in one synced batch (real LevelDB): each
// head in it sees the ones before it, every answer waits for the batch, and all of it is on disk
// when the answers come.
import { afterEach, describe, expect, it } from 'vitest'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import { checkWitnessLine } from '../src/core/log/witness.js'
import { WitnessStore } from '../src/store/witness-store.js'
import { buildLog, OWNER, SEAT, STRANGER } from './helpers/log-fixtures.js'

const dirs: string[] = []
afterEach(async () => { for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true }) })

const seqOf = (line: string): number => { const c = checkWitnessLine(line); if (!c.ok) throw new Error(c.problem); return c.statement.seq }

describe('a witness store under heads that come together', () => {
  it('heads of two owners, and a contradiction, at once: each sees the one before it, all held after a reopen', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fairdeal-witness-batch-'))
    dirs.push(dir)
    let db = new Level<string, any>(dir)
    let now = 1_765_000_000_000
    const store = new WitnessStore(db, SEAT, () => now++)
    const [high, low, other, again] = await Promise.all([
      store.observe(OWNER.peerId, buildLog(4, OWNER)[0]),
      store.observe(OWNER.peerId, buildLog(2, OWNER)[0]),
      store.observe(STRANGER.peerId, buildLog(3, STRANGER)[0]),
      store.observe(OWNER.peerId, buildLog(4, OWNER)[0])
    ])
    expect([high.status, low.status, other.status, again.status]).toEqual(['new', 'conflict', 'new', 'known'])
    expect(again.line).toBe(high.line)
    await db.close()
    db = new Level<string, any>(dir)
    const reopened = new WitnessStore(db, SEAT)
    expect((await reopened.heldFor(OWNER.peerId)).map(seqOf)).toEqual([3, 1])
    expect((await reopened.heldFor(STRANGER.peerId)).map(seqOf)).toEqual([2])
    await db.close()
  })

  it('a refused head in a batch does not hold back the others', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fairdeal-witness-batch-'))
    dirs.push(dir)
    const db = new Level<string, any>(dir)
    const store = new WitnessStore(db, SEAT)
    const [refused, taken] = await Promise.allSettled([
      store.observe(STRANGER.peerId, buildLog(2, OWNER)[0]),
      store.observe(OWNER.peerId, buildLog(2, OWNER)[0])
    ])
    expect(refused.status === 'rejected' && /not by the peer that sent it/.test((refused.reason as Error).message)).toBe(true)
    expect(taken.status === 'fulfilled' && taken.value.status === 'new').toBe(true)
    await db.close()
  })
})
