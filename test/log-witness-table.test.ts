// Witnessed heads on real nodes (127.0.0.1): after each hand every seat holds the dealer's signed
// head, cosigned; the dealer is then stopped, its log rolled back and re-signed (the head file too:
// an owner that rewrites its own disk), and restarted. `fairdeal verify --peer`, run as one seat with the
// other seat as witness, reports the rollback, with both signed heads as evidence (issue 8's done-criterion);
// so does `verify --data` on the dealer's directory, which asks the members its config names.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { until } from './helpers/until.js'
import { Level } from 'level'
import { multiaddr } from '@multiformats/multiaddr'
import { TestTable, playHand } from './helpers/table-nodes.js'
import { cliInProcess } from './helpers/cli-in-process.js'
import { startControl } from '../src/daemon/control.js'
import { withLines as lines } from './helpers/cli.js'
import { logDbPath, entryKey, HEAD_KEY } from '../src/store/log.js'
import { readHeadFile, writeHeadFile } from '../src/store/head-file.js'
import { makeHead, entryHash } from '../src/core/log/format.js'
import { checkWitnessLine } from '../src/core/log/witness.js'
import { loadOrCreateIdentity } from '../src/net/identity.js'
import { nativeSigner } from '../src/crypto/native-crypto.js'

let table: TestTable | undefined
afterAll(async () => { await table?.cleanup() })


describe('witnessed heads between table nodes', () => {
  it('a dealer that rolled back its log is reported by verify --peer, from the seat\'s witnessed head', async () => {
    table = await TestTable.prepare({ game: 'coinche', scheme: 'atout-v1', seats: 4, robots: [3] })
    const nodes = await table.startAll()
    await playHand(nodes[0], nodes)
    await playHand(nodes[0], nodes)
    // Seat 1 cosigned the dealer's head at seq 1 and the dealer kept the cosignature.
    const dealerLog = nodes[0].daemon.log
    await until(() => dealerLog.keptCosignatures().some(l => { const c = checkWitnessLine(l); return c.ok && c.statement.seq === 1 && c.statement.witness === nodes[1].peerId }), 'seat 1\'s cosignature of seq 1')
    const honest = lines(await cliInProcess('verify', '--peer', nodes[0].daemon.addresses()[0], '--as', table.dataDir(2), '--witness', nodes[1].daemon.addresses()[0], '--workers', '0'))
    expect(honest.lines).toEqual(['2 passed, 0 failed'])
    // Issue 18: an honest export taken before hand 2 (its head at seq 0, as the dealer signed it
    // then) is an older copy, not a rolled-back log, against seat 1's head at seq 1.
    const dealerId = await loadOrCreateIdentity(table.dataDir(0))
    const entry0: string[] = []
    for await (const l of nodes[0].daemon.log.lines({ from: 0, to: 0 })) entry0.push(l)
    const older = join(table.root, 'older-export.jsonl')
    await writeFile(older, [makeHead(nativeSigner(dealerId.seed, dealerId.peerId), 0, entryHash(entry0[0])).line, ...entry0].join('\n') + '\n')
    const olderCopy = lines(await cliInProcess('verify', older, '--owner', nodes[0].peerId, '--as', table.dataDir(2), '--witness', nodes[1].daemon.addresses()[0], '--workers', '0'))
    expect(olderCopy.lines).toEqual(['1 passed, 0 failed'])
    expect(olderCopy.code).toBe(0)

    // The dealer's owner rolls its log back to seq 0 and re-signs everything, head file included.
    await table.stop(0)
    const dir = table.dataDir(0)
    const identity = await loadOrCreateIdentity(dir)
    const signer = nativeSigner(identity.seed, identity.peerId)
    const db = new Level<string, string>(logDbPath(dir))
    const log = db.sublevel<string, string>('log', { valueEncoding: 'utf8' })
    const first = await log.get(entryKey(0)) as string
    const head = makeHead(signer, 0, entryHash(first)).line
    await log.batch([{ type: 'del', key: entryKey(1) }, { type: 'put', key: HEAD_KEY, value: head }])
    await db.close()
    const kept = await readHeadFile(logDbPath(dir))
    await writeHeadFile(logDbPath(dir), { head, marks: {}, damage: kept?.damage ?? null })

    // verify --data on the dealer's own directory: its config (ROOT/node0.json) names the members;
    // seat 1 is asked and holds the head of seq 1; seat 2, stopped, is listed as not reached.
    await table.stop(2)
    const data = lines(await cliInProcess('verify', '--data', dir, '--workers', '0'))
    expect(data.code).toBe(1)
    expect(data.lines[0]).toMatch(new RegExp(`^witness: seq 1: rolled back: witness ${nodes[1].peerId} received the owner's signed head at seq 1 .*, but this log's signed head is at seq 0$`))
    expect(data.lines[2]).toBe(`  evidence (this log): ${head}`)
    // (seat 1 holds the latest head, seq 1, and the one it replaced, seq 0)
    expect(data.stderr).toMatch(new RegExp(`^witnesses: asked ${nodes[1].peerId} \\(2 heads\\); not reached: ${nodes[2].peerId} \\(/ip4/127\\.0\\.0\\.1/`, 'm'))
    expect(data.lines.at(-1)).toBe('1 passed, 1 failed')
    const json = JSON.parse(lines(await cliInProcess('verify', '--data', dir, '--workers', '0', '--json')).lines.at(-1) as string)
    expect(json.witnesses.asked).toEqual([{ peer: nodes[1].peerId, heads: 2 }])
    expect(json.witnesses.unreached.map((u: { peer: string }) => u.peer)).toEqual([nodes[2].peerId])
    const restarted = await table.start(0)
    // Back up, the dealer's node offers its head to each member as it connects: seat 1, which
    // witnessed seq 1, keeps the rolled-back head (seq 0) as a contradiction, without waiting for an append.
    await nodes[1].daemon.node.dial(multiaddr(restarted.daemon.addresses()[0]))
    const held = async (): Promise<Array<number | false>> => (await nodes[1].daemon.witnessedHeads(nodes[0].peerId)).map(l => { const c = checkWitnessLine(l); return c.ok && c.statement.seq })
    const end = Date.now() + 10_000
    while ((await held()).length < 3 && Date.now() < end) await new Promise(resolve => setTimeout(resolve, 20))
    expect(await held()).toEqual([1, 0, 0]) // the latest, the contradiction, the head seq 1 replaced

    const r = lines(await cliInProcess('verify', '--peer', restarted.daemon.addresses()[0], '--as', table.dataDir(2), '--witness', nodes[1].daemon.addresses()[0], '--workers', '0'))
    expect(r.code).toBe(1)
    expect(r.lines[0]).toMatch(new RegExp(`^witness: seq 1: rolled back: witness ${nodes[1].peerId} received the owner's signed head at seq 1 .*, but this log's signed head is at seq 0$`))
    expect(r.lines[1]).toMatch(/^ {2}evidence \(cosigned head\): \{"body":\{"head":\{"body":\{"hash":"[0-9a-f]{64}","seq":1\}/)
    expect(r.lines[2]).toBe(`  evidence (this log): ${head}`)
    expect(r.lines.at(-1)).toBe('1 passed, 1 failed')

    // Seat 1 itself, with its node running: no --witness needed, its node is asked locally.
    const control = await startControl(nodes[1].daemon, { port: 0, dataDir: table.dataDir(1), logger: nodes[1].logs.logger })
    try {
      const own = lines(await cliInProcess('verify', '--peer', restarted.daemon.addresses()[0], '--as', table.dataDir(1), '--workers', '0'))
      expect(own.code).toBe(1)
      expect(own.lines[0]).toMatch(new RegExp(`^witness: seq 1: rolled back: witness ${nodes[1].peerId} `))
    } finally {
      await control.close()
    }

    // An honest seat's stopped data directory (issue 23): nothing but the summary, on stdout and stderr.
    const honestData = lines(await cliInProcess('verify', '--data', table.dataDir(2), '--workers', '0'))
    expect(honestData.code).toBe(0)
    expect(honestData.lines).toEqual(['2 passed, 0 failed'])
    expect(honestData.stderr).toBe('')

    // Issue 18: the rolled-back dealer plays on past the seq seat 1 witnessed (its seq 1 is now
    // another hand). Seat 1 keeps the head of the first seq 1, so verify --data still says forked
    // (before, the witness replaced it by the higher head and the fork left no trace).
    const seat2 = await table.start(2)
    const players = [restarted, nodes[1], seat2]
    for (let i = 0; i < 2; i++) await playHand(restarted, players)
    await until(() => restarted.daemon.log.keptCosignatures().some(l => { const c = checkWitnessLine(l); return c.ok && c.statement.seq === 2 && c.statement.witness === nodes[1].peerId }), 'seat 1\'s cosignature of seq 2')
    // The dealer's node running: verify --data reads its log through the control endpoint and the
    // cosignatures from its head file, as for a stopped node (docs/log.md, "Witnessed heads").
    const dealerControl = await startControl(restarted.daemon, { port: 0, dataDir: dir, logger: restarted.logs.logger })
    try {
      const live = lines(await cliInProcess('verify', '--data', dir, '--workers', '0', '--json'))
      expect(live.code).toBe(1)
      const forked = live.lines.map(l => JSON.parse(l) as { kind?: string, witness?: string, seq?: number }).filter(f => f.kind === 'forked')
      // Each witness that holds the first seq 1 says so once (its head file copy and its answer are one statement).
      expect(forked.map(f => [f.seq, f.witness]).sort()).toEqual([[1, nodes[1].peerId], [1, seat2.peerId]].sort())
    } finally {
      await dealerControl.close()
    }
    await table.stop(0)
    const grown = lines(await cliInProcess('verify', '--data', dir, '--workers', '0'))
    expect(grown.code).toBe(1)
    expect(grown.lines.filter(l => l.startsWith('witness: '))).toContainEqual(expect.stringMatching(new RegExp(`^witness: seq 1: forked: witness ${nodes[1].peerId} received the owner's signed head naming hash `)))
  })
})
