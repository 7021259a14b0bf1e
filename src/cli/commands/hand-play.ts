import { defineCommand, type ParsedArgs } from '../command.js'
import { ControlClient } from '../../daemon/control-client.js'
import { actionWords, cardAction, parseBid } from '../../core/games/play-words.js'
import { cardLabel } from '../../core/schemes/labels.js'
import { UsageError } from '../errors.js'
import { parseIntOption } from '../options.js'

/**
 * A terminal player's commands for a played hand (docs/games.md "Playing from the terminal"): see
 * the hand, bid, play a card. The node checks each action with the game's engine before it signs
 * it; an illegal one is refused with the reason, and nothing is sent.
 */
const COMMON = `  --data DIR     the data directory of the running node whose seat plays
  --hand N       the hand (default: the latest hand this node's seat is in)
  --table ID     the table, on a node that serves several
  --json         machine-readable output (one JSON object)`

const BASE = { data: { type: 'string' }, hand: { type: 'string' }, table: { type: 'string' }, json: { type: 'boolean' } } as const
const BID = { ...BASE, action: { type: 'string' } } as const

export const commands = [
  defineCommand({
    name: 'hand show',
    summary: 'a played hand as this seat sees it: its cards, the actions, whose turn, its legal moves',
    help: `usage: fairdeal hand show --data DIR [--hand N] [--table ID] [--json]

A hand played at the table, as this node's seat sees it: its cards, every action so far (bids,
cards, the dealer's draws), whose turn it is, and this seat's legal actions when it is its turn
(and when its robot plays for it, with the table's time to play).
${COMMON}`,
    options: BASE,
    run: async (args: ParsedArgs<typeof BASE>) => await run('show', args)
  }),
  defineCommand({
    name: 'hand bid',
    summary: 'this seat\'s bid in a played hand (pass, 80H, coinche, take, garde, …)',
    help: `usage: fairdeal hand bid --data DIR [--hand N] WORDS... | --action JSON [--table ID] [--json]

This seat's bid: pass; coinche and duo: 80H (a value and a suit S H D C), capot S, generale S,
coinche, surcoinche; belote: take, or take S in the second round; tarot: petite, garde,
garde-sans, garde-contre. Any other action of the game as JSON with --action (tarot's
{"type":"call","card":"KS"}, {"type":"ecart","cards":[…]}, {"type":"chelem","announce":false},
blackjack's {"type":"hit"}, {"type":"stand"}, dice's {"type":"roll","n":3,"expression":"2d6"}).
Refused, and nothing signed, when it is not legal now.
${COMMON}
  --action JSON  the action itself (docs/games.md lists every game's actions)`,
    options: BID,
    positionals: { min: 0, max: 3, missing: 'give the bid' },
    run: async (args: ParsedArgs<typeof BID>) => await run('bid', args)
  }),
  defineCommand({
    name: 'hand play',
    summary: 'this seat plays a card in a played hand',
    help: `usage: fairdeal hand play --data DIR [--hand N] CARD [--table ID] [--json]

This seat plays CARD (its code: AS, TH, 7C; tarot T21, EXC, KS). Refused, and nothing signed, when
it is not legal now (not its turn, a card it does not hold, a suit it must follow…).
${COMMON}`,
    options: BASE,
    positionals: { min: 1, max: 1, missing: 'give the card' },
    run: async (args: ParsedArgs<typeof BASE>) => await run('play', args)
  })
]

async function run (sub: 'show' | 'bid' | 'play', { values, positionals }: ParsedArgs<typeof BID> | ParsedArgs<typeof BASE>): Promise<number> {
  if (values.data === undefined) throw new UsageError('--data DIR is required (the node\'s data directory)')
  const given = parseIntOption(values.hand, '--hand')
  const actionJson = (values as { action?: string }).action
  if (sub === 'bid' && (actionJson === undefined) === (positionals.length === 0)) throw new UsageError('give the bid in words, or --action JSON (one of them)')
  let custom: unknown
  if (actionJson !== undefined) {
    try { custom = JSON.parse(actionJson) } catch { throw new UsageError('--action must be a JSON object') }
    if (typeof custom !== 'object' || custom === null || Array.isArray(custom)) throw new UsageError('--action must be a JSON object')
  }
  const client = await ControlClient.forDataDir(values.data)
  const tables = await client.tables()
  const table = values.table ?? (tables.length === 1 ? tables[0].id : undefined)
  if (table === undefined) throw new UsageError(`this node serves ${tables.length} tables: name one with --table ID`)
  const game = tables.find(t => t.id === table)?.game ?? ''
  let hand = given
  if (hand === undefined) {
    const status = await client.status(table) as { seatHands?: Array<{ hand: number }> }
    const hands = (status.seatHands ?? []).map(h => h.hand)
    if (hands.length === 0) throw new UsageError('this node\'s seat has no hand in play (give --hand N)')
    hand = Math.max(...hands)
  }
  const out = (json: unknown, text: string): void => { process.stdout.write((values.json === true ? JSON.stringify(json) : text) + '\n') }
  if (sub !== 'show') {
    let action: unknown
    try { action = custom ?? (sub === 'play' ? cardAction(game, positionals[0]) : parseBid(game, positionals)) } catch (e) { throw new UsageError((e as Error).message) }
    await client.act(hand, action, table)
    out({ hand, action }, `hand ${hand}: ${actionWords(action)}`)
    return 0
  }
  const view = await client.play(hand, table)
  const cards = await client.cards(hand, table)
  const seatName = (s: number): string => (s === -1 ? 'dealer' : s === view.seat ? `seat ${s} (you)` : `seat ${s}`)
  const lines = [
    `hand ${hand} (${view.game}), you are seat ${view.seat}`,
    ...cards.cards.map(c => `${c.stage.padEnd(7)} ${c.public ? (c.seat === null ? 'table' : `seat ${c.seat}, face up`) : 'yours'}: ${c.cards.map(cardLabel).join(' ')}`),
    ...view.actions.map(a => `  ${String(a.n).padStart(3)} ${seatName(a.seat)}: ${actionWords(a.action)}`),
    view.over ? 'the hand is over (the dealer reveals it)' : view.toAct === null ? 'waiting for the dealer' : `${seatName(view.toAct)} to act`,
    ...(view.legal.length > 0 ? [`your legal actions: ${view.legal.map(actionWords).join(', ')}`] : []),
    ...(view.robotAt !== undefined ? [`your robot plays at ${new Date(view.robotAt).toISOString()} if you do not`] : [])
  ]
  out({ ...view, cards: cards.cards }, lines.join('\n'))
  return 0
}
