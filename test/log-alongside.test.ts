import { afterEach, describe, expect, it } from 'vitest'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import { openLog } from '../src/store/log.js'
import { OWNER, testPayload } from './helpers/log-fixtures.js'

// An append with writes alongside (src/store/log.ts): a hand's saved state leaves in the same synced
// batch as the record that ends it (src/daemon/table-host.ts), on disk together or not at all.
const dirs: string[] = []
afterEach(async () => { for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true }) })

describe('a log append with writes alongside', () => {
  it('writes them with the entry, to a sublevel of the same database, and refuses any other', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fairdeal-alongside-'))
    dirs.push(dir)
    const db = new Level<string, unknown>(join(dir, 'db'), { valueEncoding: 'json' })
    await db.open()
    const state = db.sublevel<string, unknown>('state', { valueEncoding: 'json' })
    await state.put('hand/1', { phase: 'acked' })
    const log = await openLog({ db, signer: OWNER })
    expect(log.sharesBatch(state)).toBe(true)
    await log.append('receipt', testPayload(0), [{ type: 'del', sublevel: state, key: 'hand/1' }, { type: 'put', sublevel: state, key: 'meta', value: { n: 1 } }])
    expect(await state.get('hand/1')).toBeUndefined()
    expect(await state.get('meta')).toEqual({ n: 1 })
    expect(log.head()?.body.seq).toBe(0)

    const other = new Level<string, unknown>(join(dir, 'other'), { valueEncoding: 'json' })
    await other.open()
    const foreign = other.sublevel<string, unknown>('state', { valueEncoding: 'json' })
    expect(log.sharesBatch(foreign)).toBe(false)
    await expect(log.append('receipt', testPayload(1), [{ type: 'del', sublevel: foreign, key: 'x' }])).rejects.toThrow(/own database/)
    // Refused whole: the log did not move.
    expect(log.head()?.body.seq).toBe(0)
    await other.close()
    await log.close()
    await db.close()
  })
})
