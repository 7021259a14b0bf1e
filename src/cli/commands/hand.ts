import { defineCommand } from '../command.js'
import { dataDirLogLines } from '../node-log.js'
import { verifyReceipt } from '../../core/hand/verify.js'
import { ControlClient } from '../../daemon/control-client.js'
import { cardLabel } from '../../core/schemes/labels.js'
import { UsageError } from '../errors.js'
import { parseIntOption } from '../options.js'

const COMMON = `  --data DIR     the data directory of the running node to drive (its control.json)
  --table ID     the table, on a node that serves several (config 'tables'); optional with one
  --json         machine-readable output (one JSON object)`

const BASE = { data: { type: 'string' }, table: { type: 'string' }, json: { type: 'boolean' } } as const

type Sub = 'deal' | 'stage' | 'end' | 'status' | 'cards'
interface HandValues { data?: string, table?: string, json?: boolean, hand?: string, stage?: string, taker?: string, dealer?: string, wait?: boolean, play?: boolean }

export const commands = [
  defineCommand({
    name: 'hand deal',
    summary: 'dealer: commit a new hand; prints its number',
    help: `usage: fairdeal hand deal --data DIR [--dealer SEAT] [--play] [--table ID] [--json]

Starts a hand at the dealer node: commits it and prints its number. A seat the dealer node is not
connected to is named on stderr at once (unless it connects in time, the hand ends at its
contribution deadline as unreachable, blaming nobody).
  --dealer SEAT  the seat that deals this hand in the game (default 0; see docs/schemes.md for how
                 it orders the deal); not the dealer node, which is the table's
  --play         the hand is played at the table (docs/games.md "Playing a dealt hand"): bids and
                 cards signed and checked ('hand show', 'hand bid', 'hand play'), the game's stages
                 dealt when it asks, the hand revealed when it is over
${COMMON}`,
    options: { ...BASE, dealer: { type: 'string' }, play: { type: 'boolean' } },
    run: async ({ values }) => await run('deal', values)
  }),
  defineCommand({
    name: 'hand stage',
    summary: 'dealer: deliver a later stage (take, faceUp, dog)',
    help: `usage: fairdeal hand stage --data DIR [--hand N] --stage S [--taker SEAT] [--table ID] [--json]

Delivers a later stage of a hand in play at the dealer node: belote's take (with --taker), duo's
faceUp, tarot's dog.
  --hand N       the hand (its number from 'hand deal'; default: the dealer's one hand in play)
  --stage S      take, faceUp or dog, as the game has them
  --taker SEAT   belote's take stage: the seat that took
${COMMON}`,
    options: { ...BASE, hand: { type: 'string' }, stage: { type: 'string' }, taker: { type: 'string' } },
    run: async ({ values }) => await run('stage', values)
  }),
  defineCommand({
    name: 'hand end',
    summary: 'dealer: reveal the hand',
    help: `usage: fairdeal hand end --data DIR [--hand N] [--table ID] [--json]

Ends a hand at the dealer node: reveals its secret, so every seat can check the whole deal and
countersign the receipt.
  --hand N       the hand (its number from 'hand deal'; default: the dealer's one hand in play)
${COMMON}`,
    options: { ...BASE, hand: { type: 'string' } },
    run: async ({ values }) => await run('end', values)
  }),
  defineCommand({
    name: 'hand status',
    summary: 'the node\'s table, role, peers and hands in play',
    help: `usage: fairdeal hand status --data DIR [--table ID] [--json]

The node's table, its role there, its peers (connected or not, who dialled whom, the last failed
dial) and the hands in play with their phase and, for a beacon-bound hand, its round's due time.
${COMMON}`,
    options: { ...BASE },
    run: async ({ values }) => await run('status', values)
  }),
  defineCommand({
    name: 'hand cards',
    summary: 'this seat\'s cards in a hand (default: the latest), and the public ones',
    help: `usage: fairdeal hand cards --data DIR [--hand N] [--wait] [--table ID] [--json]

This seat's cards in a hand, and the public ones (face-up cards, robots' cards the dealer node
plays). A hand that has ended shows its cards from the node's log.
  --hand N       the hand (default: the latest hand this node holds a seat in, in play or logged)
  --wait         wait until the cards are there or the hand ends (with the beacon round's
                 countdown on a terminal), then say how it ended
${COMMON}`,
    options: { ...BASE, hand: { type: 'string' }, wait: { type: 'boolean' } },
    run: async ({ values }) => await run('cards', values)
  })
]

async function run (sub: Sub, values: HandValues): Promise<number> {
  if (values.data === undefined) throw new UsageError('--data DIR is required (the node\'s data directory)')
  // Every option is checked before the node is asked anything.
  const hand = parseIntOption(values.hand, '--hand')
  if (values.stage === undefined && sub === 'stage') throw new UsageError('--stage is required')
  const taker = parseIntOption(values.taker, '--taker')
  const dealer = parseIntOption(values.dealer, '--dealer')
  const client = await ControlClient.forDataDir(values.data)
  // A node serving several tables needs --table; it says which ones it serves (one line).
  const table = values.table ?? await onlyTable(client)
  const out = (json: unknown, text: string): void => { process.stdout.write((values.json === true ? JSON.stringify(json) : text) + '\n') }
  switch (sub) {
    case 'deal': {
      const dealt = await client.deal(dealer, table, values.play === true)
      out({ hand: dealt }, `hand ${dealt} committed`)
      // A seat the dealer cannot reach is said now, not when its hand aborts contributeMs later.
      const missing = await unreachableSeats(client, table)
      for (const p of missing) {
        process.stderr.write(`warning: seat ${p.seats.join(', ')} (${p.peer}) is not connected: unless it connects in time, hand ${dealt} ` +
          'ends at its contribution deadline as unreachable, blaming nobody (is its node running? it dials this node, or this node dials the address in its config)\n')
      }
      return 0
    }
    case 'stage': {
      const which = hand ?? await onlyHandInPlay(client, table)
      await client.stage(which, values.stage as string, taker, table)
      out({ hand: which, stage: values.stage }, `hand ${which}: ${values.stage} delivered`)
      return 0
    }
    case 'end': {
      const which = hand ?? await onlyHandInPlay(client, table)
      await client.end(which, table)
      out({ hand: which }, `hand ${which} revealed`)
      return 0
    }
    case 'status': {
      const status = await client.status(table)
      out(status, values.json === true ? '' : await statusText(client, status as unknown as NodeStatus))
      return 0
    }
    case 'cards': {
      const status = await client.status(table) as unknown as NodeStatus
      // Without --hand: the latest hand this node holds a seat in, in play or ended (from its log).
      const logged = await loggedReceipts(values.data, table)
      const which = hand ?? latestHand(status, logged)
      if (values.wait === true) return await waitForCards(client, which, table, values.json === true)
      const cards = await client.cards(which, table)
      const lines = [...cardLines(cards.cards), ...(cards.robots ?? []).map(r => `${r.stage.padEnd(7)} robot seat ${r.seat}: ${r.cards.map(cardLabel).join(' ')}`)]
      const inPlay = status.seatHands.some(h => h.hand === which)
      const receipt = logged.get(which)
      if (lines.length === 0 && !inPlay && receipt !== undefined && status.seat !== null) {
        // An ended hand's cards are in its receipt: every card is known once the hand is over.
        const ended = endedCards(receipt, status.seat)
        out({ hand: which, seat: status.seat, ended: true, cards: ended }, `hand ${which} (ended; from the node's log):\n${cardLines(ended).join('\n')}`)
        return 0
      }
      if (hand === undefined && values.json !== true) process.stderr.write(`hand ${which}:\n`)
      out(cards, lines.length > 0 ? lines.join('\n') : values.json === true ? '' : await noCards(client, which, table))
      return 0
    }
  }
}

/** The receipts of `table` in the node's log (read from its store, or through its control endpoint while it runs), by hand. */
async function loggedReceipts (dir: string, table: string): Promise<Map<number, unknown>> {
  const source = await dataDirLogLines(dir)
  const receipts = new Map<number, unknown>()
  try {
    for await (const line of source.lines) {
      let doc: { body?: { kind?: unknown, payload?: { commit?: { body?: { table?: unknown, hand?: unknown } } } } } | undefined
      try { doc = JSON.parse(typeof line === 'string' ? line : new TextDecoder().decode(line as Uint8Array)) } catch { continue }
      const commit = doc?.body?.payload?.commit?.body
      if (doc?.body?.kind === 'receipt' && commit?.table === table && typeof commit.hand === 'number') receipts.set(commit.hand, doc.body.payload)
    }
  } finally {
    await source.close()
  }
  return receipts
}

/** The latest hand this node's seat is in: in play, or ended with a receipt in its log. */
function latestHand (status: NodeStatus, logged: Map<number, unknown>): number {
  const hands = [...status.seatHands.map(h => h.hand), ...logged.keys()]
  if (hands.length === 0) throw new UsageError(`no hand yet at table ${status.table.id} on this node (give --hand N, or wait for 'hand deal')`)
  return Math.max(...hands)
}

/** A seat's cards and the public ones, recomputed from an ended hand's receipt (the same check as verify). */
function endedCards (receipt: unknown, seat: number): CardsReply['cards'] {
  const verdict = verifyReceipt(receipt)
  const deliveries = verdict.summary?.deliveries
  if (deliveries === undefined) {
    throw new UsageError(`the receipt of this hand in the node's log does not verify (${verdict.problems.map(p => p.message).join('; ')}): run 'fairdeal verify'`)
  }
  return deliveries.filter(d => d.public || d.seat === seat).map(d => ({ stage: d.stage, seat: d.seat, public: d.public, cards: d.cards }))
}

/** The node's only table; on a node serving several, a usage error naming them (--table is needed). */
async function onlyTable (client: ControlClient): Promise<string> {
  const tables = await client.tables()
  if (tables.length !== 1) throw new UsageError(`this node serves ${tables.length} tables: name one with --table ID (${tables.map(t => t.id).join(', ')})`)
  return tables[0].id
}

/**
 * A seat's phases before its cards are open, with what the deal waits for: commit–reveal's
 * (pledged, viewing, contributed) and blind-v1's (keyed, shuffling; dealt until every other seat's
 * decryption shares for its cards are in).
 */
const NONCES = 'the deal waits for every nonce, and a beacon-bound hand also for its round'
const NOT_YET: Record<string, string> = {
  pledged: NONCES,
  viewing: NONCES,
  contributed: NONCES,
  keyed: 'the deal waits for every seat\'s key and shuffle, and a beacon-bound hand also for its round',
  shuffling: 'the deal waits for every seat\'s shuffle, and a beacon-bound hand also for its round',
  dealt: 'its cards open once the other seats\' decryption shares for them are in'
}

/** Why a seat shows no cards: the hand is not dealt yet (say so, since it is worth waiting), or not here. */
async function noCards (client: ControlClient, hand: number, table: string): Promise<string> {
  const status = await client.status(table) as { seatHands?: Array<{ hand: number, phase: string }> }
  return noCardsText(hand, status.seatHands?.find(h => h.hand === hand))
}

/** `hand cards` with no cards to show, from this node's seat's state of the hand (undefined: none). */
export function noCardsText (hand: number, mine: { phase: string } | undefined): string {
  const why = mine === undefined ? undefined : NOT_YET[mine.phase]
  if (mine !== undefined && why !== undefined) return `hand ${hand}: no cards yet (${mine.phase}; ${why})`
  return `no cards for hand ${hand} here` + (mine === undefined ? ': it is not in play at this node (not started, over, or this node holds no seat)' : '')
}

type CardsReply = Awaited<ReturnType<ControlClient['cards']>>

function cardLines (cards: CardsReply['cards']): string[] {
  return cards.map(c => `${c.stage.padEnd(7)} ${c.public ? `public${c.seat === null ? ' (table)' : ` (seat ${c.seat})`}` : `seat ${String(c.seat)}`}: ${c.cards.map(cardLabel).join(' ')}`)
}

interface PeerState { peer: string, seats: number[], dealer: boolean, connected: boolean, direction?: 'inbound' | 'outbound' | null, lastDialError?: string, path?: 'direct' | 'relayed' }
interface NodeStatus {
  peerId: string
  role: string
  seat: number | null
  table: { id: string, game: string, scheme: string }
  peers?: PeerState[]
  dealerHands: Array<{ hand: number, family: string, phase: string, stages: string[], joined: number, contributed: number, acks: number }>
  seatHands: SeatHandState[]
  log: { entries: number }
  beacon: { name?: string, genesisTime?: number, period?: number, pending?: string, reach?: { reachable: boolean | null, reason?: string } } | null
}

/** Without --hand, `hand end` and `hand stage` act on the dealer's one hand in play; with none or several, they say so. */
async function onlyHandInPlay (client: ControlClient, table: string): Promise<number> {
  const status = await client.status(table) as unknown as NodeStatus
  const hands = status.dealerHands.map(h => h.hand)
  if (!status.role.startsWith('dealer')) throw new UsageError('this node is not the table\'s dealer: only the dealer ends a hand or delivers a stage')
  if (hands.length === 1) return hands[0]
  if (hands.length === 0) throw new UsageError('no hand is in play at this dealer (\'fairdeal hand deal\' starts one)')
  throw new UsageError(`${hands.length} hands are in play (${hands.join(', ')}): name one with --hand N`)
}

/** The seats the node has no open connection to, after giving fresh dials a moment. */
async function unreachableSeats (client: ControlClient, table: string): Promise<PeerState[]> {
  const deadline = Date.now() + 2_000
  for (;;) {
    const status = await client.status(table) as unknown as NodeStatus
    const missing = (status.peers ?? []).filter(p => !p.connected && p.seats.length > 0)
    if (missing.length === 0 || Date.now() >= deadline) return missing
    await new Promise(resolve => setTimeout(resolve, 200))
  }
}

/** The drand round each hand at this table is bound to, from its 'committed' events. */
async function boundRounds (client: ControlClient, table: string): Promise<Map<number, number>> {
  const rounds = new Map<number, number>()
  const { events } = await client.events(0, 0)
  for (const e of events) if (e.table === table && e.event.type === 'committed' && e.event.beaconRound !== null) rounds.set(e.hand, e.event.beaconRound)
  return rounds
}

function dueText (status: NodeStatus, round: number, now = Date.now()): string {
  const b = status.beacon
  if (b?.genesisTime === undefined || b.period === undefined) return `drand round ${round}`
  const due = (b.genesisTime + (round - 1) * b.period) * 1000
  const secs = Math.ceil((due - now) / 1000)
  return `drand round ${round}, ${secs > 0 ? `due in ${secs} s` : 'due'} (${new Date(due).toISOString().slice(11, 19)} UTC)`
}

async function statusText (client: ControlClient, status: NodeStatus): Promise<string> {
  const rounds = await boundRounds(client, status.table.id)
  const lines = [
    `node ${status.peerId}: ${status.role}${status.seat !== null && !status.role.includes('seat') ? `, seat ${status.seat}` : ''} of table ${status.table.id} (${status.table.game}, ${status.table.scheme})`,
    'peers:'
  ]
  for (const p of status.peers ?? []) {
    const what = [p.dealer ? 'dealer' : '', p.seats.length > 0 ? `seat ${p.seats.join(', ')}` : ''].filter(w => w !== '').join(', ')
    // "dialled in": the peer opened the connection (a seat behind NAT does; the dealer sends on it).
    const how = (p.direction === 'inbound' ? ' (dialled in)' : p.direction === 'outbound' ? ' (dialled out)' : '') +
      (p.path === 'relayed' ? ' (through the relay)' : '')
    lines.push(`  ${p.connected ? 'connected    ' : 'not connected'}  ${what.padEnd(14)} ${p.peer}${how}`)
    // This node keeps dialling its dealer: why the last dial failed, with what to check.
    if (p.lastDialError !== undefined) lines.push(`                 last dial: ${p.lastDialError}`)
  }
  if ((status.peers ?? []).length === 0) lines.push('  (none)')
  // What the node's check of its beacon at start found (said only when it could not reach it).
  const reach = status.beacon?.reach
  // A table on its own group deals once the group's DKG is done.
  if (status.beacon?.pending !== undefined) lines.push(`beacon: ${status.beacon.pending}`)
  if (reach?.reachable === false) lines.push(`beacon ${status.beacon?.name ?? ''}: cannot be reached from this node (${reach.reason ?? 'no answer'}): hands would wait for their round and abort; use a local beacon (fairdeal beacon serve) or your own group`)
  const hands = new Map<number, string[]>()
  for (const h of status.dealerHands) hands.set(h.hand, [`dealer: ${h.phase} (${h.family === 'blind' ? 'keys' : 'pledges'} ${h.joined}, ${h.family === 'blind' ? 'shuffles' : 'nonces'} ${h.contributed}, countersignatures ${h.acks}${h.stages.length > 0 ? `, stages ${h.stages.join(' ')}` : ''})`])
  for (const h of status.seatHands) hands.set(h.hand, [...(hands.get(h.hand) ?? []), `seat: ${h.phase}${seatWaitText(h, Date.now())}`])
  lines.push(hands.size === 0 ? 'no hand in play' : 'hands in play:')
  for (const [hand, parts] of [...hands.entries()].sort((a, b) => a[0] - b[0])) {
    const round = rounds.get(hand)
    lines.push(`  hand ${hand}: ${parts.join('; ')}${round !== undefined ? `; ${dueText(status, round)}` : ''}`)
  }
  lines.push(`log: ${status.log.entries} ${status.log.entries === 1 ? 'entry' : 'entries'}`)
  return lines.join('\n')
}

/**
 * `hand cards --wait`: the cards as soon as they are there, or how the hand ended without them.
 * On a terminal, a beacon-bound hand shows its round's countdown meanwhile.
 */
async function waitForCards (client: ControlClient, hand: number, table: string, json: boolean): Promise<number> {
  const watcher = client.watch()
  const status = await client.status(table) as unknown as NodeStatus
  const tty = !json && process.stderr.isTTY === true
  let ticker: ReturnType<typeof setInterval> | undefined
  if (tty) {
    const draw = async (): Promise<void> => {
      const round = (await boundRounds(client, table).catch(() => new Map<number, number>())).get(hand)
      process.stderr.write(`\r\x1b[Khand ${hand}: waiting for the cards${round !== undefined ? ` (${dueText(status, round)})` : ''}`)
    }
    await draw()
    ticker = setInterval(() => { void draw() }, 1000)
  }
  let ended
  try {
    ended = await watcher.until(e => e.table === table && e.hand === hand && e.role === 'seat' && (e.event.type === 'cards' || e.event.type === 'aborted' || e.event.type === 'receipt'),
      `hand ${hand}'s cards`, 7 * 86_400_000)
  } finally {
    if (ticker !== undefined) { clearInterval(ticker); process.stderr.write('\r\x1b[K') }
  }
  if (ended.event.type === 'aborted') {
    const e = ended.event
    const text = `hand ${hand} ended without cards: aborted, ${e.reason}${e.blame.length > 0 ? `, blaming ${e.blame.join(' ')}` : ''}${e.detail !== '' ? ` (${e.detail})` : ''}`
    process.stdout.write((json ? JSON.stringify({ hand, aborted: { reason: e.reason, blame: e.blame, detail: e.detail } }) : text) + '\n')
    return 1
  }
  const cards = await client.cards(hand, table)
  process.stdout.write((json ? JSON.stringify(cards) : cardLines(cards.cards).join('\n')) + '\n')
  return 0
}

interface SeatHandState { hand: number, phase: string, waitUntil?: number, timelocked?: boolean }

/**
 * What a seat waiting for its dealer is told: on a time-locked hand whose cards are dealt, when the
 * seats finish it from its timelocks if the dealer does not reveal (docs/protocol.md §16.4), so a
 * player whose dealer is gone knows the hand is not lost, and when.
 */
export function seatWaitText (h: SeatHandState, now: number): string {
  if (h.timelocked !== true || h.waitUntil === undefined || h.phase !== 'dealt') return ''
  const left = Math.max(0, Math.round((h.waitUntil - now) / 1000))
  const when = new Date(h.waitUntil).toISOString().slice(11, 19)
  const inText = left >= 120 ? `${Math.round(left / 60)} min` : `${left} s`
  return ` (time-locked: if the dealer has not revealed by ${when} UTC, in ${inText}, the seats ask it once, then finish the hand from its timelocks)`
}
