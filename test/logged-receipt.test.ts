// The blind dealer's recall (docs/dealer-blind.md §12, ASK): the receipt of an ended hand read back
// from the node's own log, on a real LevelDB log, however many entries of other tables and hands
// were appended after it.
import { afterEach, describe, expect, it } from 'vitest'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { signerFromSeed } from '../src/core/identity.js'
import { openLog, type Log } from '../src/store/log.js'
import { loggedReceipt } from '../src/daemon/logged-receipt.js'

const OWNER = signerFromSeed(new Uint8Array(32).fill(7))
const receipt = (table: string, hand: number, n = 0): unknown => ({ v: 2, commit: { body: { table, hand } }, n })
let dir: string | undefined
let log: Log | undefined

afterEach(async () => {
  await log?.close()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  log = undefined
  dir = undefined
})

describe('a receipt read back from the log', () => {
  it('finds the last receipt of the table and hand, windows back from the head; none for a hand or table it does not hold', async () => {
    dir = await mkdtemp(join(tmpdir(), 'fairdeal-recall-'))
    log = await openLog({ path: join(dir, 'log'), signer: OWNER, create: true })
    await log.append('receipt', receipt('a', 1))
    await log.append('abort', { body: { hand: 2 } })
    await log.append('receipt', receipt('a', 2))
    // Another table's hands, many windows' worth, after them.
    for (let h = 1; h <= 100; h++) await log.append('receipt', receipt('b', h))
    await log.append('receipt', receipt('a', 2, 1))
    expect(await loggedReceipt(log, 'a', 1)).toEqual(receipt('a', 1))
    expect(await loggedReceipt(log, 'a', 2)).toEqual(receipt('a', 2, 1))
    expect(await loggedReceipt(log, 'b', 37)).toEqual(receipt('b', 37))
    expect(await loggedReceipt(log, 'a', 3)).toBeUndefined()
    expect(await loggedReceipt(log, 'c', 1)).toBeUndefined()
  })
})
