import { execFile } from 'node:child_process'
import { afterEach, describe, expect, test } from 'vitest'
import { TestTable, playHand } from './helpers/table-nodes.js'

const BIN = 'bin/fairdeal.js'

// Asynchronous on purpose: the nodes serving the log run in this very process.
async function verifyPeer (address: string): Promise<{ status: number | null, stdout: string, stderr: string }> {
  return await new Promise(resolve => {
    execFile(process.execPath, [BIN, 'verify', '--peer', address], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ status: err === null ? 0 : typeof err.code === 'number' ? err.code : null, stdout, stderr })
    })
  })
}

describe('a table node\'s log verified remotely by a separate process', () => {
  let table: TestTable | undefined
  afterEach(async () => { await table?.cleanup(); table = undefined })

  test('log access "anyone": a stranger process fetches and verifies the dealer\'s log over libp2p', async () => {
    table = await TestTable.prepare({ game: 'coinche', scheme: 'atout-v1', seats: 4, logAccess: 'anyone' })
    const nodes = await table.startAll()
    await playHand(nodes[0], nodes, { dealerSeat: 1 })
    const address = `${nodes[0].daemon.addresses()[0]}`
    const result = await verifyPeer(address)
    expect(result.stderr).toBe('')
    expect(result.stdout.trim().split('\n').at(-1)).toBe('1 passed, 0 failed')
    expect(result.status).toBe(0)
    // The stranger could fetch the log but is still no member of the table: its frames would be refused.
    expect(nodes[0].daemon.rejections).toBe(0)
  })

  test('log access "members" (the default): a stranger is refused, with a clear error', async () => {
    table = await TestTable.prepare({ game: 'duo', scheme: 'atout-v1', seats: 2 })
    // A member's log exists from the start; no hand needs to be played for the stranger to be refused.
    const nodes = await table.startAll()
    const result = await verifyPeer(`${nodes[0].daemon.addresses()[0]}`)
    expect(result.status).not.toBe(0)
    expect(result.stderr.trim().split("\n")).toHaveLength(1)
    expect(result.stderr).toMatch(/^fairdeal verify: /)
    expect(result.stdout).not.toMatch(/passed/)
  })
})
