// On real nodes (libp2p on 127.0.0.1, LevelDB, one process): the demo's 4-seat coinche table plays
// a hand at the table (docs/games.md "Playing a dealt hand"): bids and eight tricks, every seat's
// shield, every node's log verified with the action chain replayed; and a dice series of 20 rolls (issue 25).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { afterAll, expect, test } from 'vitest'
import { runDemo } from '../src/daemon/demo.js'
import { logDbPath, openLog } from '../src/store/log.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import type { Receipt } from '../src/core/hand/messages.js'
import { cliInProcess } from './helpers/cli-in-process.js'

const roots: string[] = []
afterAll(async () => { for (const r of roots) await rm(r, { recursive: true, force: true }) })

test('a 4-seat coinche demo hand is played out on real nodes, and every log replays its chain', async () => {
  const root = await mkdtemp(join(tmpdir(), 'fairdeal-play-demo-'))
  roots.push(root)
  const result = await runDemo({ root, hands: 1, game: 'coinche', processes: false, beacon: null, transport: 'tcp', logger: pino({ level: 'silent' }), play: true })
  expect(result.failures).toEqual([])
  expect(result.aborts).toBe(0)
  const out = result.played.filter(p => p.tricks > 0)
  expect(out).toHaveLength(1)
  expect(out[0].tricks).toBe(8)
  for (const s of result.seats) expect(s.verified).toBe(result.hands)
  for (const l of result.logs) expect(l).toMatchObject({ failed: 0, passed: result.hands })
  // The dealer's log holds the played hand's receipt with its chain, which replays to the reported score.
  const log = await openLog(logDbPath(result.table.configs[0].dataDir))
  const receipts: Receipt[] = []
  try {
    for await (const e of log.read()) if (e.body.kind === 'receipt') receipts.push(e.body.payload as Receipt)
    const played = receipts.find(r => r.commit.body.hand === out[0].hand) as Receipt
    expect(played.play?.actions.length).toBe(out[0].actions)
    expect(verifyReceipt(played).summary?.play?.score?.points).toEqual(out[0].score.points)
  } finally {
    await log.close()
  }
  // log show adds the scored hands (those thrown in score nothing) up into the table's game (docs/games.md "A game").
  const shown = await cliInProcess('log', 'show', '--data', result.table.configs[0].dataDir)
  const scored = receipts.filter(r => r.play?.score != null).sort((a, b) => a.commit.body.hand - b.commit.body.hand)
  const totals = [0, 1, 2, 3].map(i => scored.reduce((t, r) => t + (r.play?.score?.points[i] ?? 0), 0))
  const span = `${scored[0].commit.body.hand}–${scored[scored.length - 1].commit.body.hand}`
  // (Robots' coinches and surcoinches could reach 2000 in a few hands: then the game is won, and split.)
  if (Math.max(...totals) >= 2000) expect(shown.stdout).toMatch(/^game at table .*; won at hand \d+ by seat \d+ and \d+$/m)
  else expect(shown.stdout).toContain(`game at table ${result.table.configs[0].table.id} (coinche, to 2000): ${scored.length} hand${scored.length === 1 ? '' : 's'} (${span}), ${totals.map((p, i) => `seat ${i} ${p}`).join(', ')}; not reached yet`)
}, 60_000)

test('a dice series of 20 rolls on two real nodes: every roll is the key\'s, every seat verified, every log passes', async () => {
  const root = await mkdtemp(join(tmpdir(), 'fairdeal-play-dice-'))
  roots.push(root)
  const result = await runDemo({ root, hands: 1, game: 'dice', processes: false, beacon: null, transport: 'tcp', logger: pino({ level: 'silent' }) })
  expect(result.failures).toEqual([])
  expect(result.aborts).toBe(0)
  for (const s of result.seats) expect(s.verified).toBe(1)
  for (const l of result.logs) expect(l).toMatchObject({ failed: 0, passed: 1 })
  expect(result.played[0].score.summary).toMatch(/^20 rolls: #0 seat \d /)
  const log = await openLog(logDbPath(result.table.configs[1].dataDir))
  try {
    for await (const e of log.read()) {
      if (e.body.kind !== 'receipt') continue
      const receipt = e.body.payload as Receipt
      // Every roll on the chain, numbered 0…19, recomputed from the revealed key by the verifier.
      const rolls = (receipt.play?.actions ?? []).filter(a => a.body.seat === -1 && (a.body.action as { stage: string }).stage === 'roll')
      expect(rolls.map(a => (a.body.action as { inputs: { n: number } }).inputs.n)).toEqual(Array.from({ length: 20 }, (_, i) => i))
      expect(verifyReceipt(receipt).problems).toEqual([])
    }
  } finally {
    await log.close()
  }
}, 60_000)
