// What `fairdeal node` says when it starts, as its own process (issues 18 and 23): a dealer whose
// seats dial in starts without a warning, the table page's one-time login link, a secret, is
// nowhere in its log, and the control file that says the node is up comes once the page runs.
import { readFile, writeFile } from 'node:fs/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { NodeProcess, requireBuild } from './helpers/node-process.js'
import { TestTable } from './helpers/table-nodes.js'
import { cliInProcess } from './helpers/cli-in-process.js'

let table: TestTable | undefined
let node: NodeProcess | undefined

afterEach(async () => {
  await node?.stop()
  node = undefined
  await table?.cleanup()
  table = undefined
})

describe('fairdeal node at start', () => {
  it('a dealer whose seats dial in: no warning, no login link in the log, and the page up before the control file', async () => {
    requireBuild()
    const t = table = await TestTable.prepare({ game: 'coinche', scheme: 'atout-v1', seats: 4 })
    // The README's setup: seats join with "listen": [], so the dealer's config has no seat address.
    const raw = JSON.parse(await readFile(t.local.files[0], 'utf8')) as { table: { peers: Record<string, string[]> } }
    raw.table.peers = {}
    await writeFile(t.local.files[0], JSON.stringify(raw))
    node = await NodeProcess.start(t.local.files[0], t.dataDir(0))
    // The control file (what NodeProcess waits for) comes last, once the table page runs: a login
    // link is there at once, and the log says the page is up before it says the node is ready.
    expect(await node.client.loginLink()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/login\?code=/)
    await expect.poll(() => node?.lines.some(l => l.msg === 'control endpoint ready'), { timeout: 10_000 }).toBe(true)
    const order = node.lines.map(l => l.msg).filter(m => /^table page at |^control endpoint ready$/.test(m)).map(m => m.split(' ')[0])
    expect(order).toEqual(['table', 'control'])
    expect(node.lines.filter(l => l.level >= 40)).toEqual([])
    expect(node.lines.find(l => /dial in/.test(l.msg))?.msg).toMatch(/^seat 1, 2, 3 of table .* dial in \(no address in table\.peers\): the dealer waits for them$/)
    expect(JSON.stringify(node.lines)).not.toMatch(/login\?code=/)
  })

  it('a beacon this machine cannot reach is said in one line at start, with what to do, and in the status', async () => {
    requireBuild()
    const t = table = await TestTable.prepare({ game: 'coinche', scheme: 'atout-v1', seats: 4 })
    const { info } = JSON.parse(await readFile(new URL('./fixtures/drand/quicknet.json', import.meta.url), 'utf8')) as { info: unknown }
    const raw = JSON.parse(await readFile(t.local.files[0], 'utf8')) as { table: { beacon: unknown, scheme: string } }
    raw.table.scheme = 'atout-drand-v1'
    // A relay nothing listens on: what a machine without network sees of drand.
    raw.table.beacon = { name: 'quicknet', info, relays: [`http://127.0.0.1:9/${(info as { hash: string }).hash}`] }
    await writeFile(t.local.files[0], JSON.stringify(raw))
    node = await NodeProcess.start(t.local.files[0], t.dataDir(0))
    await expect.poll(() => node?.lines.filter(l => /^beacon quicknet cannot be reached/.test(l.msg)).length, { timeout: 15_000 }).toBe(1)
    const line = node.lines.find(l => /^beacon quicknet cannot be reached/.test(l.msg))
    expect(line?.msg).toMatch(/each hand of table .* would wait for its round and abort\. Use a beacon this machine reaches: a local one \(fairdeal beacon serve\) or your own group/)
    const status = await node.client.status() as { beacon: { reach: { reachable: boolean, reason: string } } }
    expect(status.beacon.reach).toMatchObject({ reachable: false, reason: expect.stringMatching(/127\.0\.0\.1:9/) })
    const shown = await cliInProcess('hand', 'status', '--data', t.dataDir(0))
    expect(shown.stdout).toMatch(/^beacon quicknet: cannot be reached from this node \(.*\): hands would wait for their round and abort; use a local beacon/m)
  })
})
