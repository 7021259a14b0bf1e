import { defineCommand, type OptionSpecs, type ParsedArgs } from '../command.js'
import { mkdtemp, rm, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { runDemo, type HandReport } from '../../daemon/demo.js'
import { createLogger, envLogLevel } from '../../daemon/logger.js'
import { startLocalBeacon, type LocalBeacon } from '../../beacon/index.js'
import { startLocalGroupBeacon, type LocalGroupBeacon } from '../../beacon/group/group-beacon.js'
import { cardLabel } from '../../core/schemes/labels.js'
import { UsageError } from '../errors.js'
import { parseIntOption } from '../options.js'

const HELP = `usage: fairdeal demo [--hands N] [--game coinche|belote|duo|tarot] [--processes] [--data DIR]
                    [--beacon local|group|none] [--transport tcp|ws] [--timelock] [--blind]
                    [--kill-dealer-after nonces] [--play] [--json]

Starts a dealer node holding seat 0 and one node per other seat on 127.0.0.1, plays N hands
(default 3, coinche), prints each seat's cards and its own check of the hand ("shield"), then
re-verifies every node's receipt log. Exit 0 when everything verified.
  --hands N     hands to play (default 3); the dealer seat moves round the table each hand
  --game G      coinche (default), belote, duo or tarot (4 players); blackjack (2 boxes against the
                bank, shoe-v1: bitjack21's shoe) or dice (2 seats, a series of 20 dice-v1 rolls):
                these draw during the hand, so they are always played (as --play), without a beacon
  --processes   each node its own OS process, talking only over the network
  --data DIR    keep each node's data directory and config under DIR (DIR/node0 is the dealer;
                with --processes also DIR/nodeN.log); default: a temporary one, removed
  --beacon      local (default): bind each hand to a round of a local drand-compatible beacon
                (its trust = its operator: this demo); group: the table's four nodes also run a
                3-of-4 beacon group (duo: its two nodes, 2 of 2; DKG, threshold BLS rounds,
                drand's format) in this process and every hand binds one of its rounds (5 s
                contribution window instead of 2 s); none: no beacon (atout-v1 exactly);
                tarot always plays without one (tarot-v1 binds none)
  --transport   tcp (default) or ws (WebSockets)
  --timelock    time-lock every hand's secret and nonces to its beacon round (needs --beacon local):
                a withheld reveal is opened once the round is out, and the hand finished anyway
  --kill-dealer-after nonces
                with --timelock --processes: SIGKILL the dealer's process once the nonces of hand 2
                are in; the seats finish that hand from its timelocks (RECOVERED records), then the
                dealer is restarted for the next hand
  --blind       dealer-blind deals (scheme blind-v1, docs/dealer-blind.md), with any --game: the
                seats shuffle an encrypted deck in turn with proofs, so no node, the dealer's
                included, sees a card before its seat; with --beacon local the round also fixes
                the final order. Tarot's 78-card shuffles get 30 s (the others 10 s)
  --play        play each hand at the table (docs/games.md "Playing a dealt hand"): every node
                plays its seat with the game's robot, the dealer's node the robot seats; bids and
                cards are signed, chained and checked, the game deals its own stages and ends the
                hand, and the receipt carries the action chain and score. A hand nobody bids on is
                thrown in and dealt again (up to 6N + 4 deals): N counts hands played out. With --blind,
                each card opened as it is played; not with --timelock unless --blind
  --json        one JSON object on stdout: {"hands","aborts","seats":[{"seat","peerId","verified"}],"failures"}
                (with --timelock also "recovered": hands the seats finished without the dealer;
                with --play also "played": [{"hand","actions","tricks","score"}], one per hand dealt)`

const OPTIONS = {
  hands: { type: 'string', default: '3' },
  game: { type: 'string', default: 'coinche' },
  processes: { type: 'boolean', default: false },
  data: { type: 'string' },
  beacon: { type: 'string', default: 'local' },
  transport: { type: 'string', default: 'tcp' },
  blind: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
  timelock: { type: 'boolean', default: false },
  'kill-dealer-after': { type: 'string' },
  play: { type: 'boolean', default: false }
} satisfies OptionSpecs

export const command = defineCommand({
  name: 'demo',
  summary: 'play a demo table on loopback',
  help: HELP,
  options: OPTIONS,
  run
})

async function run ({ values }: ParsedArgs<typeof OPTIONS>): Promise<number> {
  const hands = parseIntOption(values.hands, '--hands', 1, 100_000) as number
  if (!['coinche', 'belote', 'duo', 'tarot', 'blackjack', 'dice'].includes(values.game)) throw new UsageError(`--game must be coinche, belote, duo, tarot, blackjack or dice, got ${JSON.stringify(values.game)}`)
  const draws = values.game === 'blackjack' || values.game === 'dice'
  if (draws && (values.blind || values.timelock || values.beacon === 'group')) throw new UsageError(`--game ${values.game} plays without a beacon, blind deals or timelocks (its scheme binds none)`)
  if (values.beacon !== 'local' && values.beacon !== 'group' && values.beacon !== 'none') throw new UsageError(`--beacon must be local, group or none, got ${JSON.stringify(values.beacon)}`)
  if (values.transport !== 'tcp' && values.transport !== 'ws') throw new UsageError(`--transport must be tcp or ws, got ${JSON.stringify(values.transport)}`)
  if (values.timelock && (values.beacon !== 'local' || values.game === 'tarot')) throw new UsageError('--timelock needs --beacon local (and a game other than tarot, whose scheme binds no beacon)')
  const killDealerAfter = values['kill-dealer-after']
  if (killDealerAfter !== undefined && killDealerAfter !== 'nonces') throw new UsageError(`--kill-dealer-after takes nonces, got ${JSON.stringify(killDealerAfter)}`)
  if (killDealerAfter !== undefined && (!values.timelock || !values.processes)) throw new UsageError('--kill-dealer-after needs --timelock and --processes')
  if (values.play && values.timelock && !values.blind) throw new UsageError('--play is built for commit–reveal tables without --timelock, and for blind tables (--blind)')
  const json = values.json
  // Node logs go to stderr at warn: the demo's own output is the readable story on stdout. Made
  // before the temporary directory: a bad FAIRDEAL_LOG_LEVEL is refused with nothing left behind.
  const logger = createLogger({ fd: 2, level: envLogLevel('warn') })
  const keep = values.data !== undefined
  const root = keep ? resolve(values.data as string) : await mkdtemp(join(tmpdir(), 'fairdeal-demo-'))
  await mkdir(root, { recursive: true })
  const say = (text: string): void => { if (!json) process.stdout.write(text + '\n') }
  // tarot-v1 binds no beacon round: tarot plays without one, unless blind (blind-v1 binds one when there is one).
  const useBeacon = values.beacon === 'local' && (values.game !== 'tarot' || values.blind) && !draws
  let beacon: LocalBeacon | undefined
  let group: LocalGroupBeacon | undefined
  try {
    if (values.beacon === 'group' && values.game !== 'tarot') {
      // The table's nodes (node0 … node3: the same identities and data directories) double as the group.
      const nodes = values.game === 'duo' ? 2 : 4
      group = await startLocalGroupBeacon({
        root: join(root, 'group'),
        dataDirs: Array.from({ length: nodes }, (_, i) => join(root, `node${i}`)),
        threshold: nodes === 4 ? 3 : 2,
        period: 1,
        logger
      })
      say(`beacon: group ${group.chain.metadata.beaconID} of the table's ${nodes} nodes, threshold ${group.group.configs[0].params.threshold}, chain ${group.chain.hash} (${group.config.trust})`)
    } else if (useBeacon) {
      beacon = await startLocalBeacon({ dataDir: join(root, 'beacon'), period: 1 })
      say(`beacon: local drand-compatible beacon at ${beacon.url} (${beacon.trust})`)
    } else if (values.beacon !== 'none') {
      say(`beacon: none (${values.game === 'tarot' ? 'tarot-v1' : values.game === 'blackjack' ? 'shoe-v1' : values.game === 'dice' ? 'dice-v1' : 'the scheme'} binds no beacon round)`)
    }
    say(`table: ${values.game}${values.blind ? ' (dealer-blind, blind-v1)' : ''}, ${values.processes ? 'one OS process per node' : 'all nodes in this process'}, ${values.transport} on 127.0.0.1, data in ${root}${keep ? '' : ' (temporary)'}`)
    const result = await runDemo({
      root,
      hands,
      game: values.game,
      processes: values.processes,
      beacon: group?.config ?? beacon?.config ?? null,
      transport: values.transport,
      timelock: values.timelock,
      killDealerAfter: killDealerAfter === 'nonces' ? 'nonces' : null,
      blind: values.blind,
      play: values.play,
      logger,
      // The group's members are the table's own nodes, in this process: every round they also sign
      // and check BLS partials, so on a busy machine a COMMIT could reach the seats after a 2 s
      // deadline (missing-pledge). A group table gets a 5 s contribution window.
      contributeMs: group !== undefined && !values.blind ? 5_000 : undefined,
      onHand: (r) => { if (!json) printHand(r) }
    })
    if (json) {
      const recovered = values.timelock ? { recovered: result.recovered } : {}
      const played = values.play || draws ? { played: result.played } : {}
      process.stdout.write(JSON.stringify({ hands: result.hands, aborts: result.aborts, ...recovered, seats: result.seats, failures: result.failures, ...played }) + '\n')
    } else {
      say('')
      for (const l of result.logs) say(`log ${l.node}: ${l.passed} passed, ${l.failed} failed${keep ? `  (fairdeal verify --data ${l.dataDir})` : ""}`)
      for (const f of result.failures) say(`FAILED: ${f}`)
      say(`${result.hands} ${result.hands === 1 ? 'hand' : 'hands'} played, ${result.aborts} aborted; ${result.seats.map(s => `seat ${s.seat} verified ${s.verified}`).join(', ')}`)
    }
    // With --play a thrown-in hand is dealt again: every hand dealt must verify, and N be played out.
    const playedOut = result.played.filter(p => p.tricks > 0).length
    const ok = result.failures.length === 0 && result.aborts === 0 && result.seats.every(s => s.verified === result.hands) && result.hands >= hands && (!values.play || draws || playedOut === hands)
    return ok ? 0 : 1
  } finally {
    await beacon?.close()
    await group?.close()
    if (!keep) await rm(root, { recursive: true, force: true })
  }
}

function printHand (r: HandReport): void {
  const beacon = r.beaconRound === null ? '' : `, beacon round ${r.beaconRound}`
  process.stdout.write(`\nhand ${r.hand} (dealer seat ${r.dealerSeat}${beacon})\n`)
  if (r.aborted !== null) {
    process.stdout.write(`  ABORTED: ${r.aborted.reason}: ${r.aborted.detail}\n`)
    return
  }
  if (r.recovered !== null) {
    process.stdout.write(`  dealer killed after the nonces: finished by ${r.seats.length} seats from its timelocks (RECOVERED, rule ${r.recovered.rule}, ${r.recovered.faults} faults)\n`)
    return
  }
  if (r.played !== undefined) {
    process.stdout.write(`  played: ${r.played.actions} actions, ${r.played.tricks} tricks; ${r.played.score.summary} (points ${r.played.score.points.join(' ')})\n`)
  }
  for (const s of r.seats) {
    const own = s.cards.filter(c => !c.public).flatMap(c => c.cards).map(cardLabel).join(' ')
    const shown = s.cards.filter(c => c.public).map(c => `${c.stage}${c.seat === null ? '' : ` (seat ${c.seat})`}: ${c.cards.map(cardLabel).join(' ')}`).join('; ')
    const shield = s.shield?.ok === true ? 'shield ✓ verified' : `shield ✗ ${s.shield?.problems.join('; ') ?? 'missing'}`
    process.stdout.write(`  seat ${s.seat} ${s.peerId.slice(-6)}: ${own}${shown === '' ? '' : `  | ${shown}`}  ${shield}\n`)
  }
}
