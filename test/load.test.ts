import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MEMBERS_PER_HAND, prepareTables, runTables } from '../scripts/reliability/tables.js'
import { verifyLogPayload } from '../src/core/receipt.js'
import type { SignedAbort } from '../src/core/hand/messages.js'
import { Daemon } from '../src/daemon/daemon.js'
import { verifyDataDir } from '../src/daemon/verify-data.js'
import { logDbPath, openLog } from '../src/store/log.js'
import { docDigest, ZERO_HASH } from '../src/core/hand/digest.js'
import { startControl } from '../src/daemon/control.js'
import { startTableWeb } from '../src/daemon/table-web.js'
import { cliInProcess } from './helpers/cli-in-process.js'

// Load, the CI size: ONE dealer node serving several tables at once (config `tables`), two seat
// nodes each holding a seat at every table, real libp2p over TCP on 127.0.0.1. Every hand must end
// with its receipt in every member's log (the dealer's and both seats'), and every log entry must
// re-verify offline. The full size (20 tables × 100 hands) is scripts/load.ts. Once the hands are
// played, the same nodes answer the CLI (in process), the control endpoint and the table page,
// which must be told which table a request is for.

describe('one dealer node serving several tables at once', () => {
  it('3 tables × 3 hands: nothing lost, nothing unverified; every request names its table', async () => {
    const seen: Record<string, unknown> = {}
    const run = await runTables({
      tables: 3,
      hands: 3,
      whenPlayed: async ({ dealer }) => {
        const logger = pino({ level: 'silent' })
        const control = await startControl(dealer, { port: 0, dataDir: dealer.config.dataDir, logger })
        const web = await startTableWeb(dealer, { port: 0, token: control.info.token })
        try {
          const data = dealer.config.dataDir
          seen.statusBare = await cliInProcess('hand', 'status', '--data', data)
          seen.endBare = await cliInProcess('hand', 'end', '--data', data, '--hand', '1')
          seen.endNone = await cliInProcess('hand', 'end', '--data', data, '--table', 'load-1')
          seen.dealUnknown = await cliInProcess('hand', 'deal', '--data', data, '--table', 'nope')
          const status = await cliInProcess('hand', 'status', '--data', data, '--table', 'load-1', '--json')
          seen.status = { code: status.code, ...JSON.parse(status.stdout) as object }
          seen.statusText = await cliInProcess('hand', 'status', '--data', data, '--table', 'load-2')
          const auth = { authorization: `Bearer ${control.info.token}` }
          const get = async (url: string): Promise<[number, unknown]> => {
            const res = await fetch(url, { headers: auth })
            return [res.status, await res.json()]
          }
          seen.http = {
            bare: await get(`${control.info.url}/status`),
            unknown: await get(`${control.info.url}/status?table=nope`),
            tables: await get(`${control.info.url}/tables`),
            webBare: await get(`${web.url}/api/status`),
            webChosen: (await get(`${web.url}/api/status?table=load-0`))[0]
          }
        } finally {
          await web.close()
          await control.close()
        }
      }
    })
    expect(run.failures).toEqual([])
    expect({ done: run.handsDone, aborted: run.aborted, lost: run.lost }).toEqual({ done: 9, aborted: 0, lost: 0 })
    expect({ verified: run.verified, unverified: run.unverified, receipts: run.receiptsLogged }).toEqual({ verified: 9 * MEMBERS_PER_HAND, unverified: 0, receipts: 9 * MEMBERS_PER_HAND })

    // No table named on a node with several: one line listing them, exit 2; nothing dealt or ended.
    const listing = 'this node serves 3 tables: name one with --table ID (load-0, load-1, load-2)\n'
    expect(seen.statusBare).toEqual({ code: 2, stdout: '', stderr: `fairdeal hand status: ${listing}` })
    expect(seen.endBare).toEqual({ code: 2, stdout: '', stderr: `fairdeal hand end: ${listing}` })
    // No --hand: the dealer's one hand in play; every hand here has ended, so it says so.
    expect(seen.endNone).toEqual({ code: 2, stdout: '', stderr: 'fairdeal hand end: no hand is in play at this dealer (\'fairdeal hand deal\' starts one)\n' })
    expect(seen.dealUnknown).toEqual({ code: 2, stdout: '', stderr: 'fairdeal hand deal: this node serves no table "nope" (it serves: load-0, load-1, load-2)\n' })
    expect(seen.status).toMatchObject({ code: 0, table: { id: 'load-1', game: 'duo' }, role: 'dealer', dealerHands: [], tables: [{ id: 'load-0' }, { id: 'load-1' }, { id: 'load-2' }] })
    expect(seen.statusText).toMatchObject({ code: 0, stderr: '' })
    expect((seen.statusText as { stdout: string }).stdout).toMatch(/^node \S+: dealer of table load-2 \(duo, atout-v1\)\n/)
    const http = seen.http as Record<string, [number, unknown]>
    expect(http.bare).toEqual([400, { error: 'this node serves 3 tables (load-0, load-1, load-2): name one with --table ID' }])
    expect(http.unknown).toEqual([404, { error: 'this node serves no table "nope" (it serves: load-0, load-1, load-2)' }])
    expect(http.tables).toEqual([200, { tables: ['load-0', 'load-1', 'load-2'].map(id => ({ id, game: 'duo', scheme: 'atout-v1', role: 'dealer' })) }])
    expect(http.webBare[0]).toBe(400)
    expect(http.webChosen).toBe(200)
  })

  it('each table keeps its own hand counter and chain across a restart of the node, in one log', async () => {
    const root = await mkdtemp(join(tmpdir(), 'fairdeal-tables-restart-'))
    const logger = pino({ level: 'silent' })
    try {
      // The dealer node alone (its seats are not running: every hand ends when the node stops).
      const [config] = await prepareTables(root, 2)
      let dealer = await Daemon.start({ config, logger })
      expect(await dealer.deal({ table: 'load-0' })).toBe(1)
      await dealer.stop({ graceMs: 0 })
      dealer = await Daemon.start({ config, logger })
      try {
        expect(await dealer.deal({ table: 'load-0' })).toBe(2)
        expect(await dealer.deal({ table: 'load-1' })).toBe(1)
        expect((dealer.status('load-1').dealerHands as unknown[]).length).toBe(1)
      } finally {
        await dealer.stop({ graceMs: 0 })
      }
      const verdict = await verifyDataDir(config.dataDir, verifyLogPayload)
      expect({ passed: verdict.passed, failed: verdict.failed, failures: verdict.failures }).toEqual({ passed: 3, failed: 0, failures: [] })
      // One log, both tables' records; table load-0's hand 2 links to its hand 1, load-1's hand 1 to nothing.
      const log = await openLog({ path: logDbPath(config.dataDir), create: false, signer: null })
      const records: SignedAbort[] = []
      for await (const e of log.read()) records.push(e.body.payload as SignedAbort)
      await log.close()
      expect(records.map(r => `${r.body.table}/${r.body.hand} ${r.body.reason}`).sort()).toEqual(['load-0/1 dealer-stopped', 'load-0/2 dealer-stopped', 'load-1/1 dealer-stopped'])
      expect(records[0].body).toMatchObject({ table: 'load-0', hand: 1 })
      const byKey = new Map(records.map(r => [`${r.body.table}/${r.body.hand}`, r]))
      const commitOf = (k: string): NonNullable<SignedAbort['body']['commit']> => byKey.get(k)?.body.commit as NonNullable<SignedAbort['body']['commit']>
      expect(commitOf('load-0/2').body.prev).toBe(docDigest(commitOf('load-0/1')))
      expect(commitOf('load-1/1').body.prev).toBe(ZERO_HASH)
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })
})

