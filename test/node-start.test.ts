// What `fairdeal node` says when it starts, as its own process (issues 18 and 23): a dealer whose
// seats dial in starts without a warning, and the table page's one-time login link, a secret, is
// nowhere in its log.
import { readFile, writeFile } from 'node:fs/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { NodeProcess, requireBuild } from './helpers/node-process.js'
import { TestTable } from './helpers/table-nodes.js'

let table: TestTable | undefined
let node: NodeProcess | undefined

afterEach(async () => {
  await node?.stop()
  node = undefined
  await table?.cleanup()
  table = undefined
})

describe('fairdeal node at start', () => {
  it('a dealer whose seats dial in: no warning, and no login link in the log', async () => {
    requireBuild()
    const t = table = await TestTable.prepare({ game: 'coinche', scheme: 'atout-v1', seats: 4 })
    // The README's setup: seats join with "listen": [], so the dealer's config has no seat address.
    const raw = JSON.parse(await readFile(t.local.files[0], 'utf8')) as { table: { peers: Record<string, string[]> } }
    raw.table.peers = {}
    await writeFile(t.local.files[0], JSON.stringify(raw))
    node = await NodeProcess.start(t.local.files[0], t.dataDir(0))
    await expect.poll(() => node?.lines.some(l => /^table page at /.test(l.msg)), { timeout: 10_000 }).toBe(true)
    expect(node.lines.filter(l => l.level >= 40)).toEqual([])
    expect(node.lines.find(l => /dial in/.test(l.msg))?.msg).toMatch(/^seat 1, 2, 3 of table .* dial in \(no address in table\.peers\): the dealer waits for them$/)
    expect(JSON.stringify(node.lines)).not.toMatch(/login\?code=/)
  })
})
