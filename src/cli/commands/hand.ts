import { parseArgs } from 'node:util'
import { ControlClient } from '../../daemon/control-client.js'
import { cardLabel } from '../../core/schemes/labels.js'
import { UsageError } from '../errors.js'
import { parseIntOption } from '../options.js'

const HELP = `usage:
  fairdeal hand deal   --data DIR [--dealer SEAT]           start a hand (dealer node); prints its number
  fairdeal hand stage  --data DIR --hand N --stage S [--taker SEAT]  deliver a later stage (take, faceUp, dog)
  fairdeal hand end    --data DIR --hand N                  reveal the hand (dealer node)
  fairdeal hand status --data DIR                           the node's table, role and hands in play (JSON)
  fairdeal hand cards  --data DIR --hand N                  this seat's cards in a hand in play

  --data DIR     the data directory of the running node to drive (its control.json)
  --dealer SEAT  the seat that deals this hand in the game (default 0; see docs/schemes.md for how
                 it orders the deal); not the dealer node, which is the table's
  --taker SEAT   belote's take stage: the seat that took
All take --json for machine-readable output.`

/** The options each subcommand takes, so one meant for another is refused, not ignored. */
const OPTIONS: Record<'deal' | 'stage' | 'end' | 'status' | 'cards', readonly string[]> = {
  deal: ['dealer'],
  stage: ['hand', 'stage', 'taker'],
  end: ['hand'],
  status: [],
  cards: ['hand']
}

export async function run (sub: 'deal' | 'stage' | 'end' | 'status' | 'cards', argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string' }, hand: { type: 'string' }, stage: { type: 'string' }, taker: { type: 'string' },
      dealer: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean' }
    },
    strict: true
  })
  if (values.help === true) { process.stdout.write(HELP + '\n'); return 0 }
  for (const name of ['hand', 'stage', 'taker', 'dealer'] as const) {
    if (values[name] !== undefined && !OPTIONS[sub].includes(name)) throw new UsageError(`hand ${sub} takes no --${name} (see --help)`)
  }
  if (values.data === undefined) throw new UsageError('--data DIR is required (the node\'s data directory)')
  // Every option is checked before the node is asked anything.
  const hand = parseIntOption(values.hand, '--hand')
  if (hand === undefined && OPTIONS[sub].includes('hand')) throw new UsageError('--hand is required')
  if (values.stage === undefined && sub === 'stage') throw new UsageError('--stage is required')
  const taker = parseIntOption(values.taker, '--taker')
  const dealer = parseIntOption(values.dealer, '--dealer')
  const client = await ControlClient.forDataDir(values.data)
  const out = (json: unknown, text: string): void => { process.stdout.write((values.json === true ? JSON.stringify(json) : text) + '\n') }
  switch (sub) {
    case 'deal': {
      const dealt = await client.deal(dealer)
      out({ hand: dealt }, `hand ${dealt} committed`)
      return 0
    }
    case 'stage': {
      await client.stage(hand as number, values.stage as string, taker)
      out({ hand, stage: values.stage }, `hand ${hand}: ${values.stage} delivered`)
      return 0
    }
    case 'end': {
      await client.end(hand as number)
      out({ hand }, `hand ${hand} revealed`)
      return 0
    }
    case 'status': {
      const status = await client.status()
      out(status, JSON.stringify(status, null, 2))
      return 0
    }
    case 'cards': {
      const cards = await client.cards(hand as number)
      const lines = cards.cards.map(c => `${c.stage.padEnd(7)} ${c.public ? `public${c.seat === null ? ' (table)' : ` (seat ${c.seat})`}` : `seat ${String(c.seat)}`}: ${c.cards.map(cardLabel).join(' ')}`)
      out(cards, lines.length > 0 ? lines.join('\n') : values.json === true ? '' : await noCards(client, hand as number))
      return 0
    }
  }
}

/** Why a seat shows no cards: the hand is not dealt yet (say so, since it is worth waiting), or not here. */
async function noCards (client: ControlClient, hand: number): Promise<string> {
  const status = await client.status() as { seatHands?: Array<{ hand: number, phase: string }> }
  const mine = status.seatHands?.find(h => h.hand === hand)
  if (mine !== undefined && (mine.phase === 'pledged' || mine.phase === 'contributed')) {
    return `hand ${hand}: no cards yet (${mine.phase}; the deal waits for every nonce, and a beacon-bound hand also for its round)`
  }
  return `no cards for hand ${hand} here` + (mine === undefined ? ': it is not in play at this node (not started, over, or this node holds no seat)' : '')
}
