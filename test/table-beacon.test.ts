// Beacon-bound hands over the real stack: Daemons on 127.0.0.1 (libp2p, LevelDB), the real
// drand-client through src/beacon, a loopback relay serving recorded quicknet rounds (or the local
// beacon, in the demo). An injected clock puts the recorded rounds just ahead of the table, so hands bound to
// real quicknet rounds run offline.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { spawn } from 'node:child_process'
import { access, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { pino } from 'pino'
import { Daemon } from '../src/daemon/daemon.js'
import { prepareLocalTable } from '../src/daemon/local-table.js'
import type { NodeEvent } from '../src/daemon/events.js'
import { manualClock } from '../src/beacon/index.js'
import { firstRoundAfter, parseChainInfo, roundTime, type BeaconEntry } from '../src/core/beacon/index.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { verifyAbort } from '../src/core/hand/abort-rules.js'
import type { Receipt, RevealBody, SignedAbort } from '../src/core/hand/messages.js'
import { signDocument } from '../src/core/signed.js'
import { signerFromSeed } from '../src/core/identity.js'
import { canonicalJson } from '../src/core/canonical.js'
import { sha256Hex } from '../src/core/bytes.js'
import { loadOrCreateIdentity } from '../src/net/identity.js'
import { logDbPath, openLog, type Log } from '../src/store/log.js'
import { loadDrandFixture, startDrandServer, tamperEntry, type DrandServer, type FaultMode } from './helpers/drand-server.js'
import { until } from './helpers/until.js'

const logger = pino({ level: 'silent' })
const quicknet = loadDrandFixture('quicknet')
const chain = parseChainInfo(quicknet.info)
const recorded = (round: number): BeaconEntry => {
  const e = quicknet.entries.find(x => x.round === round)
  if (e === undefined) throw new Error(`round ${round} is not recorded`)
  return e
}
const CONTRIBUTE_MS = 1_000
const MARGIN_MS = 1_000

/** The table's clock time at which a new COMMIT binds exactly `round`: deadline + margin lands 500 ms before it is due. */
const clockStartFor = (round: number): number => roundTime(chain, round) - CONTRIBUTE_MS - MARGIN_MS - 500

const temps: string[] = []
afterAll(async () => { for (const d of temps) await rm(d, { recursive: true, force: true }) })
async function tempDir (): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fairdeal-table-beacon-'))
  temps.push(dir)
  return dir
}

type LogItem = { kind: string, payload: unknown }

async function entries (log: Log): Promise<LogItem[]> {
  const out: LogItem[] = []
  for await (const e of log.read()) out.push({ kind: e.body.kind, payload: e.body.payload })
  return out
}

const handOf = (item: LogItem): number => item.kind === 'receipt'
  ? (item.payload as Receipt).commit.body.hand
  : (item.payload as SignedAbort).body.hand

/** The first event of `d` matching `pred`, waiting for it (real time). */
async function waitEvent (d: Daemon, pred: (e: NodeEvent) => boolean, what: string, timeoutMs = 20_000): Promise<NodeEvent> {
  return await d.events.watch().until(pred, `${d.peerId.slice(-6)}: ${what}`, timeoutMs)
}

/** The seat-side outcome of a hand on every node: `type` or an abort, whichever comes first. */
async function seatOutcome (daemons: Daemon[], hand: number, type: NodeEvent['event']['type']): Promise<NodeEvent[]> {
  return await Promise.all(daemons.map(async d => await waitEvent(
    d, e => e.hand === hand && e.role === 'seat' && (e.event.type === type || e.event.type === 'aborted'), `hand ${hand} ${type}`
  )))
}

interface BeaconTable {
  daemons: Daemon[]
  dealer: Daemon
  clock: ReturnType<typeof manualClock>
  relay: DrandServer
  dataDirs: string[]
  stop: () => Promise<void>
}

/**
 * A 4-seat coinche table (dealer on seat 0) bound to quicknet, its only relay a loopback server of
 * the recorded rounds, every node on one manual clock: it stands still while seats contribute and
 * jumps to R's time when the dealer's beacon client waits for R.
 */
/** A 4-seat coinche table bound to the recorded quicknet rounds `relay` serves. */
async function quicknetTable (relay: DrandServer, tableId: string): ReturnType<typeof prepareLocalTable> {
  return await prepareLocalTable({
    root: await tempDir(),
    game: 'coinche',
    scheme: 'atout-drand-v1',
    seats: 4,
    tableId,
    beacon: { name: 'quicknet (recorded)', trust: 'League of Entropy (recorded rounds on loopback)', info: quicknet.info, relays: [relay.url] },
    beaconMarginMs: MARGIN_MS,
    timeouts: { contributeMs: CONTRIBUTE_MS, ackMs: 10_000, revealMs: 60_000 }
  })
}

async function startQuicknetTable (): Promise<BeaconTable> {
  const relay = await startDrandServer(quicknet)
  const table = await quicknetTable(relay, 'quicknet-table')
  const clock = manualClock(clockStartFor(2))
  const daemons: Daemon[] = []
  try {
    for (const config of table.configs) daemons.push(await Daemon.start({ config, logger, clock, tickMs: 25 }))
  } catch (err) {
    for (const d of daemons) await d.stop()
    await relay.close()
    throw err
  }
  return {
    daemons,
    dealer: daemons[0],
    clock,
    relay,
    dataDirs: table.configs.map(c => c.dataDir),
    stop: async () => {
      for (const d of [...daemons].reverse()) await d.stop({ graceMs: 0 })
      await relay.close()
    }
  }
}

describe('a hand bound to a recorded real quicknet round', () => {
  let t: BeaconTable
  const receipts = new Map<number, Receipt>()
  const rounds = [1000, 657413, 30662982]
  beforeAll(async () => { t = await startQuicknetTable() })
  afterAll(async () => { await t?.stop() })

  for (const round of rounds) {
    test(`round ${round}: dealt from it, and the receipt in every log verifies offline alone`, async () => {
      t.clock.set(clockStartFor(round))
      const hand = await t.dealer.deal()
      const committed = await waitEvent(t.dealer, e => e.hand === hand && e.role === 'dealer' && e.event.type === 'committed', 'commit')
      expect(committed.event).toMatchObject({ type: 'committed', beaconRound: round })

      const cards = await seatOutcome(t.daemons, hand, 'cards')
      for (const c of cards) expect(c.event.type, JSON.stringify(c.event)).toBe('cards')
      // The relay was asked for exactly the bound round; a latest round is never asked for.
      expect(t.relay.requests).toContain(`/${chain.hash}/public/${round}`)
      expect(t.relay.requests.filter(p => p.includes('latest'))).toEqual([])

      await t.dealer.end(hand)
      for (const r of await seatOutcome(t.daemons, hand, 'receipt')) expect(r.event.type, JSON.stringify(r.event)).toBe('receipt')

      const logged: string[] = []
      for (const d of t.daemons) {
        const forHand = (await entries(d.log)).filter(e => handOf(e) === hand)
        expect(forHand.map(e => e.kind)).toEqual(['receipt'])
        logged.push(canonicalJson(forHand[0].payload))
      }
      expect(new Set(logged).size).toBe(1) // the same receipt everywhere
      const receipt = JSON.parse(logged[0]) as Receipt
      receipts.set(round, receipt)

      const verdict = verifyReceipt(receipt)
      expect(verdict.problems).toEqual([])
      expect(verdict.summary).toMatchObject({ scheme: 'atout-drand-v1', beaconRound: round, acked: [0, 1, 2, 3] })
      expect(receipt.commit.body.beacon).toMatchObject({ chainHash: chain.hash, round })
      expect(receipt.reveal.body.beacon).toEqual(recorded(round))
      // The key: atout-v1's text, then the chain hash, the round and the real round's randomness.
      const reveal = receipt.reveal.body
      const text = ['atout-drand-v1', reveal.secret, ...reveal.nonces.map(n => n.body.nonce), chain.hash, String(round), recorded(round).randomness].join('|')
      expect(verdict.summary?.key).toBe(sha256Hex(text))
      // What each seat was dealt is that deck's hand.
      for (const [i, c] of cards.entries()) {
        const seat = t.daemons[i].seat?.seat as number
        expect(c.event).toMatchObject({ type: 'cards', seat, cards: verdict.summary?.hands?.[seat] })
      }
    })
  }

  test('a receipt whose beacon entry is altered fails offline verification, even re-signed by the dealer', async () => {
    const receipt = receipts.get(1000)
    if (receipt === undefined) throw new Error('the round-1000 hand did not produce a receipt')
    const identity = await loadOrCreateIdentity(t.dataDirs[0])
    const dealerSigner = signerFromSeed(identity.seed)
    const withBeacon = (beacon: BeaconEntry | null, resign: boolean): Receipt => {
      const body: RevealBody = { ...receipt.reveal.body, beacon }
      return { ...receipt, reveal: resign ? signDocument('reveal', body, dealerSigner) as Receipt['reveal'] : { ...receipt.reveal, body } }
    }
    const problems = (r: Receipt): string[] => verifyReceipt(r).problems.map(p => p.message)

    expect(problems(withBeacon(recorded(1000), true))).toEqual([]) // re-signing alone changes nothing
    const forged = problems(withBeacon(tamperEntry(recorded(1000)), true))
    expect(forged.some(p => /^beacon: (bad-signature|malformed-point): /.test(p)), forged.join('\n')).toBe(true)
    // A genuine entry of another round is no substitute for the bound one.
    const other = problems(withBeacon(recorded(657413), true))
    expect(other.some(p => /^beacon: round-mismatch: /.test(p)), other.join('\n')).toBe(true)
    const none = problems(withBeacon(null, true))
    expect(none).toContain('reveal: the commit bound drand round 1000 but no entry is given')
    // Not re-signed: the dealer's signature breaks as well.
    expect(problems(withBeacon(tamperEntry(recorded(1000)), false))).toContain('reveal: bad signature')
  })
})

describe('the bound round cannot be had: the hand aborts, signed, and nothing is dealt or logged as verified', () => {
  let t: BeaconTable
  beforeAll(async () => { t = await startQuicknetTable() })
  afterAll(async () => { await t?.stop() })

  // Rounds increase with the table's clock. Each faulty one but the late one is recorded, so only
  // the fault stands between the dealer and a valid entry.
  const faults: Array<{ fault: FaultMode | 'late', round: number, kind: 'invalid' | 'unavailable' | 'timeout' }> = [
    { fault: 'wrong-round', round: 1, kind: 'invalid' },
    { fault: 'down', round: 2, kind: 'unavailable' },
    { fault: 'garbage', round: 3, kind: 'unavailable' },
    { fault: 'slow', round: 1000, kind: 'timeout' },
    { fault: 'tampered', round: 657413, kind: 'invalid' },
    { fault: 'late', round: 10_000_000, kind: 'timeout' } // not yet published by the deadline (404s)
  ]
  for (const { fault, round, kind } of faults) {
    test(`relay ${fault} (round ${round}): beacon-unavailable (${kind})`, async () => {
      if (fault === 'late') t.relay.setPublishedUpTo(round - 1)
      else t.relay.setMode(fault)
      try {
        t.clock.set(clockStartFor(round))
        const hand = await t.dealer.deal()
        const outcome = await seatOutcome(t.daemons, hand, 'cards')
        for (const o of outcome) expect(o.event).toMatchObject({ type: 'aborted', reason: 'beacon-unavailable', blame: [] })

        const logged: string[] = []
        for (const d of t.daemons) {
          // No seat got any card of this hand.
          expect(d.events.after(0, 4096).filter(e => e.hand === hand && e.event.type === 'cards')).toEqual([])
          const forHand = (await entries(d.log)).filter(e => handOf(e) === hand)
          expect(forHand.map(e => e.kind)).toEqual(['abort'])
          logged.push(canonicalJson(forHand[0].payload))
        }
        expect(new Set(logged).size).toBe(1)
        const abort = JSON.parse(logged[0]) as SignedAbort
        const verdict = verifyAbort(abort)
        expect(verdict.problems).toEqual([])
        expect(verdict.summary).toMatchObject({ reason: 'beacon-unavailable', blame: [], by: t.dealer.peerId, hand })
        expect(abort.body.commit?.body.beacon?.round).toBe(round)
        expect(abort.body.detail).toMatch(new RegExp(`^${kind}: `))
      } finally {
        t.relay.setMode('ok')
        t.relay.setPublishedUpTo(undefined)
      }
    })
  }

  test('with the relay healthy again the next hand is dealt and verifies', async () => {
    const round = 30662982
    t.clock.set(clockStartFor(round))
    const hand = await t.dealer.deal()
    for (const c of await seatOutcome(t.daemons, hand, 'cards')) expect(c.event.type, JSON.stringify(c.event)).toBe('cards')
    await t.dealer.end(hand)
    for (const r of await seatOutcome(t.daemons, hand, 'receipt')) expect(r.event.type).toBe('receipt')
    const items = (await entries(t.dealer.log)).filter(e => e.kind === 'receipt')
    expect(items.map(handOf)).toEqual([hand]) // the only receipt of the table: none for the aborted hands
    expect(verifyReceipt(items[0].payload).problems).toEqual([])
  })
})

describe('the demo table bound to the local beacon', () => {
  // One run of the real binary (its own process, its own local beacon), whose kept data
  // directories are then read back: every receipt verifies offline and carries the demo beacon's chain.
  test('`fairdeal demo --hands 1 --game duo --json --data DIR` exits 0 with every seat verified; every receipt is bound by the rule', async () => {
    const root = fileURLToPath(new URL('..', import.meta.url))
    await access(join(root, 'dist', 'src', 'cli', 'commands', 'demo.js')).catch(() => {
      throw new Error('dist/ has no demo command: build first (npx tsc -p tsconfig.json)')
    })
    const data = await tempDir()
    const child = spawn(process.execPath, [join(root, 'bin', 'fairdeal.js'), 'demo', '--hands', '1', '--game', 'duo', '--json', '--data', data], { cwd: root })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', d => { stdout += String(d) })
    child.stderr.on('data', d => { stderr += String(d) })
    const code = await new Promise<number | null>(resolve => child.on('close', resolve))
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    const out = JSON.parse(stdout) as { hands: number, aborts: number, seats: Array<{ verified: number }>, failures: string[] }
    expect(out).toMatchObject({ hands: 1, aborts: 0, failures: [] })
    expect(out.seats.map(s => s.verified)).toEqual([1, 1])
    const infos = new Set<string>()
    for (const node of ['node0', 'node1']) {
      const log = await openLog({ path: logDbPath(join(data, node)), create: false, signer: null })
      try {
        const items = await entries(log)
        expect(items.map(i => i.kind)).toEqual(['receipt'])
        for (const item of items) {
          const receipt = item.payload as Receipt
          const verdict = verifyReceipt(receipt)
          expect(verdict.problems).toEqual([])
          const beacon = receipt.commit.body.beacon
          expect(receipt.commit.body.scheme).toBe('atout-drand-v1')
          expect(beacon?.info).toBeDefined()
          expect(beacon?.chainHash).toBe(parseChainInfo(beacon?.info).hash)
          expect(verdict.summary?.beaconRound).toBe(beacon?.round)
          expect(receipt.reveal.body.beacon?.round).toBe(beacon?.round)
          // Bound by the rule: the first round after the deadline (the demo's margin is 0).
          expect(beacon?.round).toBe(firstRoundAfter(parseChainInfo(beacon?.info), receipt.commit.body.deadline, 0))
          infos.add(canonicalJson(beacon?.info))
        }
      } finally {
        await log.close()
      }
    }
    expect(infos.size).toBe(1) // one beacon for the whole table
  })
})

describe('a table whose chain has not begun yet', () => {
  test('its node starts (no round is current before genesis), and finds the beacon reachable: a relay that answers without round 1', async () => {
    const relay = await startDrandServer(quicknet)
    const table = await quicknetTable(relay, 'early-table')
    // A minute before the chain's genesis: a group or local beacon set up to start later.
    const clock = manualClock(roundTime(chain, 1) - 60_000)
    const dealer = await Daemon.start({ config: table.configs[0], logger, clock, tickMs: 25 })
    try {
      const reach = (): { reachable: boolean | null } | undefined => (dealer.status('early-table').beacon as { reach?: { reachable: boolean | null } } | undefined)?.reach
      await until(() => reach()?.reachable !== null, 'the start\'s beacon check', 5_000)
      expect(reach()).toMatchObject({ reachable: true })
      expect(relay.requests.some(path => path.endsWith('/public/1'))).toBe(true)
    } finally {
      await dealer.stop({ graceMs: 0 })
      await relay.close()
    }
  })
})
