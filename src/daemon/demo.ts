import { spawn, type ChildProcess } from 'node:child_process'
import { open } from 'node:fs/promises'
import { join, dirname } from 'node:path'
import type { Logger } from 'pino'
import { getScheme } from '../core/schemes/registry.js'
import { verifyLogPayload } from '../core/receipt.js'
import { ROBOT } from '../core/hand/messages.js'
import { BLIND_PLAYED_GAMES } from '../core/hand/blind-play.js'
import type { DrandBeaconConfig } from '../core/beacon/index.js'
import { Daemon } from './daemon.js'
import { startControl } from './control.js'
import { ControlClient, controlOfSpawnedNode } from './control-client.js'
import { prepareLocalTable, type LocalTable } from './local-table.js'
import type { NodeEvent } from './events.js'
import type { HandEvent } from '../protocol/types.js'
import { verifyDataDir } from './verify-data.js'
import { binPath } from '../store/package-files.js'

export interface DemoOptions {
  root: string
  hands: number
  game: string
  /** Seats at the table (tarot: 3 to 5); default the game's usual number (tarot 4). */
  seats?: number
  /** Each node its own OS process, talking only over the network. */
  processes: boolean
  /** A local drand-compatible beacon (label: local, trust = its operator), or none. */
  beacon: DrandBeaconConfig | null
  transport: 'tcp' | 'ws'
  /** Dealer-blind deals (blind-v1, docs/dealer-blind.md): no node sees a card before its seat. */
  blind?: boolean
  logger: Logger
  /** Time-lock every hand to its bound round (needs the beacon); the recovered-hand rule is 'replay'. */
  timelock?: boolean
  /**
   * Kills the dealer's process with SIGKILL once the nonces of one hand (the second, or the only
   * one) are in, lets the seats finish that hand from its timelocks, and restarts the dealer for
   * the next hand. Needs `processes` and `timelock`.
   */
  killDealerAfter?: 'nonces' | null
  /** Called once per finished hand, for live output. */
  onHand?: (report: HandReport) => void
  /** The hands' contribution window in ms (default: see prepareLocalTable's timeouts below). */
  contributeMs?: number
  /**
   * Play each hand at the table (docs/games.md "Playing a dealt hand"): every node plays its seat
   * with the game's robot, the dealer's node the robot seats. A hand nobody bids on is thrown in
   * and dealt again: `hands` counts hands played out.
   */
  play?: boolean
}

/** A played hand as the demo reports it (`played` in the JSON). */
export interface PlayedReport {
  hand: number
  actions: number
  tricks: number
  score: { points: number[], summary: string, detail: Record<string, unknown> }
}

export interface SeatReport {
  seat: number
  peerId: string
  cards: Array<{ stage: string, public: boolean, seat: number | null, cards: string[] }>
  shield: { ok: boolean, problems: string[] } | null
  receipt: boolean
}

export interface HandReport {
  hand: number
  dealerSeat: number
  beaconRound: number | null
  aborted: { reason: string, detail: string } | null
  /** Finished by the seats from its timelocks, without the dealer (RECOVERED records). */
  recovered: { rule: string, faults: number } | null
  seats: SeatReport[]
  /** From the dealer's COMMIT to the last seat holding its first cards, ms (node clocks, one machine). */
  dealtMs?: number
  /** A played hand (--play): its actions, tricks and score as the dealer's node saw the game end. */
  played?: PlayedReport
}

export interface DemoResult {
  hands: number
  aborts: number
  /** Hands the seats finished without the dealer (time-locked tables). */
  recovered: number
  seats: Array<{ seat: number, peerId: string, verified: number }>
  failures: string[]
  reports: HandReport[]
  /** With `play`: one entry per hand dealt, in order (thrown-in hands too, with 0 tricks). */
  played: PlayedReport[]
  /** Each node's log re-verified from its data directory after the run. */
  logs: Array<{ node: string, dataDir: string, passed: number, failed: number }>
  table: LocalTable
}

const SEATS_FOR_GAME: Record<string, number> = { coinche: 4, belote: 4, duo: 2, tarot: 4, blackjack: 2, dice: 2 }
/** The demo's games that draw during the hand (docs/games.md "Draws on the chain"): always played; the table's game as its scheme names it. */
const DRAW_GAME_TABLES: Record<string, string> = { blackjack: 'shoe', dice: 'dice' }

/** The scheme a demo of `game` uses, with or without a beacon. */
export function demoScheme (game: string, beacon: boolean, blind = false): string {
  if (game === 'blackjack') return 'shoe-v1'
  if (game === 'dice') return 'dice-v1'
  if (blind) return 'blind-v1'
  if (game === 'tarot') return 'tarot-v1'
  return beacon ? 'atout-drand-v1' : 'atout-v1'
}

interface RunningNode {
  name: string
  dataDir: string
  client: ControlClient
  stop: () => Promise<void>
  /** SIGKILL (own process only): no shutdown, nothing finished. */
  kill?: () => Promise<void>
}

async function startInProcess (table: LocalTable, index: number, logger: Logger): Promise<RunningNode> {
  const config = table.configs[index]
  const daemon = await Daemon.start({ config, logger: logger.child({ node: table.names[index] }) })
  const control = await startControl(daemon, { port: 0, dataDir: config.dataDir, logger })
  return {
    name: table.names[index],
    dataDir: config.dataDir,
    client: new ControlClient(control.info),
    stop: async () => { await control.close(); await daemon.stop() }
  }
}

const BIN = binPath()

async function startProcess (table: LocalTable, index: number): Promise<RunningNode> {
  const config = table.configs[index]
  const name = table.names[index]
  const logFile = await open(join(dirname(table.files[index]), `${name}.log`), 'a')
  const child: ChildProcess = spawn(process.execPath, [BIN, 'node', '--config', table.files[index]], {
    stdio: ['ignore', logFile.fd, logFile.fd],
    env: { ...process.env, FAIRDEAL_LOG_LEVEL: process.env.FAIRDEAL_LOG_LEVEL ?? 'info' }
  })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => { resolve(code) }))
  const client = await controlOfSpawnedNode(child, config.dataDir, { name: `node ${name}`, detail: () => `; see ${name}.log` })
  return {
    name,
    dataDir: config.dataDir,
    client,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
      await exited
      clearTimeout(timer)
      await logFile.close()
    },
    kill: async () => {
      child.kill('SIGKILL')
      await exited
      await logFile.close()
    }
  }
}

/** The later stages the demo asks for, in order, with the taker where one is needed. */
function laterStages (game: string, hand: number, seats: number): Array<{ stage: string, taker?: number }> {
  if (game === 'belote') return [{ stage: 'take', taker: hand % seats }]
  if (game === 'duo') return [{ stage: 'faceUp' }]
  if (game === 'tarot') return [{ stage: 'dog' }]
  return []
}

/**
 * The embedded demo: a dealer node holding seat 0 and one node per other seat, on loopback, playing
 * `hands` hands; every seat checks every hand itself, and every node's log is re-verified at the end.
 */
/**
 * Ends the hand once the dealer holds every share it asked for. Each seat's own cards can open
 * before a public stage's last shares reach the dealer (tarot's dog: the dealer checks them before
 * relaying), and the dealer refuses to end until they have ("cannot end yet"); no event announces
 * that last share, so the refusal is tried again every 20 ms until the timeout.
 */
async function endOnceDealt (client: ControlClient, hand: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs
  for (;;) {
    try {
      await client.end(hand)
      return
    } catch (err) {
      if (!(err instanceof Error) || !err.message.includes('cannot end yet') || Date.now() > until) throw err
      await new Promise(resolve => setTimeout(resolve, 20))
    }
  }
}

export async function runDemo (options: DemoOptions): Promise<DemoResult> {
  const { game, hands } = options
  const usual = SEATS_FOR_GAME[game]
  if (usual === undefined) throw new Error(`the demo plays coinche, belote, duo, tarot, blackjack or dice, not ${game}`)
  const seats = options.seats ?? usual
  if (seats !== usual && !(game === 'tarot' && seats >= 3 && seats <= 5)) throw new Error(`the ${game} demo seats ${usual} (tarot: 3 to 5), not ${seats}`)
  const draws = DRAW_GAME_TABLES[game] !== undefined
  if (draws && (options.beacon !== null || options.blind === true)) throw new Error(`the ${game} demo's scheme (${demoScheme(game, false)}) binds no beacon and is not blind`)
  const scheme = demoScheme(game, options.beacon !== null, options.blind === true)
  getScheme(scheme)
  const timelock = options.timelock === true
  if (timelock && options.beacon === null) throw new Error('--timelock needs a beacon (--beacon local)')
  if (options.killDealerAfter != null && (!timelock || !options.processes)) throw new Error('--kill-dealer-after needs --timelock and --processes')
  const play = options.play === true || draws
  if (play && timelock && options.blind !== true) throw new Error('--play is built for commit–reveal tables without --timelock, and for blind tables')
  if (play && options.blind === true && !BLIND_PLAYED_GAMES.has(game)) throw new Error(`--play --blind plays ${[...BLIND_PLAYED_GAMES].join(', ')}, not ${game}`)
  const killHand = options.killDealerAfter != null ? Math.min(2, hands) : 0
  const table = await prepareLocalTable({
    root: options.root,
    game: DRAW_GAME_TABLES[game] ?? game,
    scheme,
    seats,
    transport: options.transport,
    beacon: options.beacon === null ? 'none' : { name: options.beacon.name, trust: options.beacon.trust, info: options.beacon.chain, relays: options.beacon.relays },
    beaconMarginMs: 0,
    // With a beacon every hand waits out the contribution deadline (R comes after it), so it is kept
    // short; 1 s proved too short on a loaded machine (the first hand also dials every peer).
    // Time-locked, each contribution is also sealed (~0.1 s, more on a loaded machine): a little more time.
    // Blind hands shuffle in turn, every seat checking every proof, within the contribution time:
    // a tarot deck is 78 cards, 2.5 times coinche's, and its four shuffles overran 10 s on a loaded
    // 2-core machine (missing-shuffle), in one process and in four.
    timeouts: { contributeMs: options.contributeMs ?? (options.blind === true ? (game === 'tarot' ? 30_000 : 10_000) : options.beacon === null ? 10_000 : timelock ? 4_000 : 2_000), ackMs: 10_000, revealMs: 600_000 },
    timelock: timelock ? 'replay' : 'off'
  })
  const nodes: RunningNode[] = []
  const failures: string[] = []
  const reports: HandReport[] = []
  const verified = new Map<number, number>()
  const seatList = table.configs[0].table.seats
  const watchers: Array<ReturnType<ControlClient['watch']>> = []
  /**
   * The dealer's process is SIGKILLed once every nonce of `hand` is in; each seat finishes the hand
   * from its timelocks (a RECOVERED record); the dealer is restarted and finishes it the same way.
   */
  const killDealerAndRecover = async (hand: number, report: HandReport): Promise<void> => {
    await watchers[0].until(e => e.hand === hand && e.role === 'dealer' && e.event.type === 'contributed', `hand ${hand} nonces`, 60_000)
    await (nodes[0].kill as () => Promise<void>)()
    const outcomes: NodeEvent[] = []
    for (const w of watchers.slice(1)) outcomes.push(await w.until(e => e.hand === hand && e.role === 'seat' && (e.event.type === 'recovered' || e.event.type === 'aborted'), `hand ${hand} recovered`, 60_000))
    nodes[0] = await startProcess(table, 0)
    watchers[0] = nodes[0].client.watch()
    outcomes.unshift(await watchers[0].until(e => e.hand === hand && e.role === 'seat' && e.event.type === 'recovered', `hand ${hand} recovered by the restarted dealer node's seat`, 60_000))
    await watchers[0].until(e => e.hand === hand && e.role === 'dealer' && e.event.type === 'recovered', `hand ${hand} recovered by the restarted dealer`, 60_000)
    let faults = 0
    for (const [i, e] of outcomes.entries()) {
      const seat = seatList.indexOf(table.peerIds[i])
      if (e.event.type !== 'recovered') { failures.push(`hand ${hand} seat ${seat}: not recovered (${e.event.type})`); continue }
      faults += e.event.faults.length
      if (e.event.faults.length === 0) verified.set(seat, (verified.get(seat) ?? 0) + 1)
      else failures.push(`hand ${hand} seat ${seat}: recovered with faults ${JSON.stringify(e.event.faults)}`)
      report.seats.push({ seat, peerId: table.peerIds[i], cards: [], shield: null, receipt: false })
    }
    report.recovered = { rule: outcomes[0].event.type === 'recovered' ? outcomes[0].event.rule : 'replay', faults }
  }
  try {
    for (let i = 0; i < table.configs.length; i++) {
      nodes.push(options.processes ? await startProcess(table, i) : await startInProcess(table, i, options.logger))
    }
    watchers.push(...nodes.map(n => n.client.watch()))
    // A played hand thrown in (nobody bid) is dealt again, up to this many deals in all.
    const maxDeals = play ? 6 * hands + 4 : hands
    // A hand counts once played out: a card game's hand thrown in does not; every draw game's does.
    const counted = (r: HandReport): boolean => !play || draws || (r.played?.tricks ?? 0) > 0 || r.aborted !== null
    for (let h = 0; h < maxDeals && reports.filter(counted).length < hands; h++) {
      const dealerSeat = h % seats
      const hand = await nodes[0].client.deal(dealerSeat, undefined, play)
      const report: HandReport = { hand, dealerSeat, beaconRound: null, aborted: null, recovered: null, seats: [] }
      const timeout = 60_000
      const isHand = (e: NodeEvent): boolean => e.hand === hand && e.role === 'seat'
      const ended = (t: HandEvent['type']) => (e: NodeEvent) => isHand(e) && (e.event.type === t || e.event.type === 'aborted')
      try {
        const committed = await watchers[0].until(e => e.hand === hand && e.role === 'dealer' && e.event.type === 'committed', `hand ${hand} commit`, timeout)
        report.beaconRound = committed.event.type === 'committed' ? committed.event.beaconRound : null
        if (h + 1 === killHand) {
          await killDealerAndRecover(hand, report)
          reports.push(report)
          options.onHand?.(report)
          continue
        }
        let lastCards = committed.time
        // A draw game deals no card before play.
        for (const w of draws ? [] : watchers) {
          const e = await w.until(ended('cards'), `hand ${hand} cards`, timeout)
          if (e.event.type === 'aborted') throw new AbortedHand(e.event.reason, e.event.detail)
          lastCards = Math.max(lastCards, e.time)
        }
        if (!draws) report.dealtMs = lastCards - committed.time
        let cards: Array<Awaited<ReturnType<ControlClient['cards']>>>
        if (play) {
          // The game deals its own stages and ends the hand: the dealer's node says when, and how.
          const over = await watchers[0].until(e => e.hand === hand && e.role === 'dealer' && (e.event.type === 'played' || e.event.type === 'aborted'), `hand ${hand} played`, 4 * timeout)
          if (over.event.type === 'aborted') throw new AbortedHand(over.event.reason, over.event.detail)
          if (over.event.type === 'played') report.played = { hand, actions: over.event.actions, tricks: over.event.tricks, score: over.event.score }
          cards = []
        } else {
          for (const s of laterStages(game, hand, seats)) await nodes[0].client.stage(hand, s.stage, s.taker)
          cards = await Promise.all(nodes.map(async n => await n.client.cards(hand)))
          await endOnceDealt(nodes[0].client, hand, timeout)
        }
        for (const [i, w] of watchers.entries()) {
          const shield = await w.until(ended('shield'), `hand ${hand} shield`, timeout)
          const receipt = await w.until(ended('receipt'), `hand ${hand} receipt`, timeout)
          const seat = seatList.indexOf(table.peerIds[i])
          // A played hand's cards as the seat was shown them (its stages came during the game).
          if (play) cards[i] = { cards: w.seen.flatMap(e => e.hand === hand && e.role === 'seat' && e.event.type === 'cards' ? [{ stage: e.event.stage, seat: e.event.seat, public: e.event.public, cards: e.event.cards }] : []) } as (typeof cards)[number]
          const ok = shield.event.type === 'shield' && shield.event.ok
          if (ok) verified.set(seat, (verified.get(seat) ?? 0) + 1)
          else failures.push(`hand ${hand} seat ${seat}: shield failed: ${shield.event.type === 'shield' ? shield.event.problems.join('; ') : 'aborted'}`)
          report.seats.push({
            seat,
            peerId: table.peerIds[i],
            cards: cards[i].cards,
            shield: shield.event.type === 'shield' ? { ok: shield.event.ok, problems: shield.event.problems } : null,
            receipt: receipt.event.type === 'receipt'
          })
        }
      } catch (err) {
        if (!(err instanceof AbortedHand)) throw err
        report.aborted = { reason: err.reason, detail: err.detail }
      }
      reports.push(report)
      options.onHand?.(report)
    }
  } finally {
    for (const n of [...nodes].reverse()) await n.stop().catch((err: unknown) => { failures.push(`stopping ${n.name}: ${(err as Error).message}`) })
  }
  const logs: DemoResult['logs'] = []
  for (const [i, c] of table.configs.entries()) {
    const result = await verifyDataDir(c.dataDir, verifyLogPayload)
    logs.push({ node: table.names[i], dataDir: c.dataDir, passed: result.passed, failed: result.failed })
    for (const f of result.failures) failures.push(`${table.names[i]} log: ${f}`)
  }
  return {
    hands: reports.filter(r => r.aborted === null).length,
    aborts: reports.filter(r => r.aborted !== null).length,
    recovered: reports.filter(r => r.recovered !== null).length,
    seats: seatList.map((p, seat) => ({ seat, peerId: p, verified: verified.get(seat) ?? 0 })).filter(s => s.peerId !== ROBOT),
    failures,
    reports,
    played: reports.flatMap(r => (r.played === undefined ? [] : [r.played])),
    logs,
    table
  }
}

class AbortedHand extends Error {
  constructor (readonly reason: string, readonly detail: string) { super(`hand aborted: ${reason}`) }
}
