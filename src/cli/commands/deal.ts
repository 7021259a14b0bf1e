import { defineCommand, type OptionSpecs, type OptionValues, type ParsedArgs } from '../command.js'
import { fromHex } from '../../core/bytes.js'
import {
  cardLabel, dealTarot, getScheme, rollWithEngineSeed, TAROT_CARDS,
  type BeaconInput, type CardScheme, type Deal, type DiceScheme, type KeyInputs
} from '../../core/schemes/index.js'
import { orList } from '../../core/schemes/inputs.js'
import { UsageError } from '../errors.js'

const USAGE = `usage: fairdeal deal --scheme ID [inputs] [--json]

  atout-v1 | atout-drand-v1
      --game coinche|belote|duo --secret S --nonce N (once per seat, seat 0 first; '' for a robot)
      [--dealer D] [--taker T (belote: without it the deal stops before the second round)]
      atout-drand-v1 also: --chain-hash HEX64 --round R --randomness HEX64
  tarot-v1 (or tarot)
      --secret S --nonce N (3 to 5 times) [--dealer D]
      --seed N --players 3|4|5 [--dealer D]         (the bare sha256-fisher-yates-v1 method)
  bitjack21
      --r1 SERVER_SEED --r2 PLAYER_SEED [--rx SALT] [--cards N (1..416, default 416)]
  dice-v1 (or dice)
      --secret S --nonce N... --roll NdS            (e.g. --roll 3d20)
      --engine-seed HEX64 --roll NdS                (the bare PHP Xoshiro256** engine)

Prints the commitment, key, deck and each seat's cards (--json: one JSON object).
The specification of every scheme is docs/schemes.md.`

const OPTIONS = {
  scheme: { type: 'string' },
  game: { type: 'string' },
  secret: { type: 'string' },
  nonce: { type: 'string', multiple: true },
  dealer: { type: 'string' },
  taker: { type: 'string' },
  'chain-hash': { type: 'string' },
  round: { type: 'string' },
  randomness: { type: 'string' },
  seed: { type: 'string' },
  players: { type: 'string' },
  r1: { type: 'string' },
  r2: { type: 'string' },
  rx: { type: 'string' },
  cards: { type: 'string' },
  roll: { type: 'string' },
  'engine-seed': { type: 'string' },
  json: { type: 'boolean' }
} satisfies OptionSpecs

type Values = OptionValues<typeof OPTIONS>

/** Short names people type; a receipt always carries the full id. */
const ALIASES: Record<string, string> = { tarot: 'tarot-v1', dice: 'dice-v1', atout: 'atout-v1' }

export const command = defineCommand({
  name: 'deal',
  summary: 'compute one deal of any scheme from its inputs',
  help: USAGE,
  options: OPTIONS,
  run
})

async function run ({ values }: ParsedArgs<typeof OPTIONS>): Promise<number> {
  if (values.scheme === undefined) throw new UsageError('--scheme is required (atout-v1, atout-drand-v1, tarot-v1, bitjack21, dice-v1)')
  const scheme = getScheme(ALIASES[values.scheme] ?? values.scheme)
  const out = scheme.kind === 'dice' ? dice(scheme, values) : cards(scheme, values)
  process.stdout.write(values.json === true ? JSON.stringify(out.json) + '\n' : out.text.join('\n') + '\n')
  return 0
}

interface Output { json: Record<string, unknown>, text: string[] }

function cards (scheme: CardScheme, v: Values): Output {
  if (scheme.id === 'bitjack21') return shoe(scheme, v)
  if (scheme.id === 'tarot-v1' && v.seed !== undefined) return bareTarot(v)
  const allowed = ['game', 'secret', 'nonce', 'dealer', 'taker']
  if (scheme.beacon) allowed.push('chain-hash', 'round', 'randomness')
  refuseOthers(v, allowed, scheme.id)
  if (v.taker !== undefined && v.game !== 'belote') throw new UsageError('--taker applies only to belote')

  const game = v.game ?? (scheme.games.length === 1 ? scheme.games[0] : undefined)
  if (game === undefined) throw new UsageError(`--game is required for ${scheme.id} (${scheme.games.join(', ')})`)
  if (!scheme.games.includes(game)) throw new UsageError(`${scheme.id} has no game '${game}' (it has ${scheme.games.join(', ')})`)
  const inputs = keyInputs(scheme.id, v, scheme.beacon)
  const seats = inputs.nonces.length
  if (!scheme.seatsFor(game).includes(seats)) {
    throw new UsageError(`${game} is played by ${orList(scheme.seatsFor(game))} seats: give one --nonce per seat (got ${seats})`)
  }
  const dealer = seatArg(v.dealer, '--dealer', seats) ?? 0
  const taker = seatArg(v.taker, '--taker', seats)
  const keyText = scheme.keyText(inputs)
  const key = scheme.key(inputs)
  const commitment = scheme.commitment(inputs.secret)
  const deal = scheme.deal(game, key, { seats, dealer, taker })
  return {
    json: { scheme: scheme.id, version: scheme.version, game, seats, taker, keyText, commitment, key, ...dealJson(deal) },
    text: [
      `scheme      ${scheme.id} · ${game} · ${seats} seats · dealer ${dealer}${taker === undefined ? '' : ` · taker ${taker}`}`,
      `key text    ${keyText}`,
      `commitment  ${commitment}`,
      `key         ${key}`,
      ...dealText(deal)
    ]
  }
}

function bareTarot (v: Values): Output {
  refuseOthers(v, ['seed', 'players', 'dealer', 'game'], 'tarot-v1 --seed')
  if (v.game !== undefined && v.game !== 'tarot') throw new UsageError(`tarot-v1 has no game '${String(v.game)}' (it has tarot)`)
  const players = intArg(v.players, '--players')
  if (players === undefined) throw new UsageError('--players (3, 4 or 5) is required with --seed')
  const dealer = seatArg(v.dealer, '--dealer', players) ?? 0
  const d = dealTarot(String(v.seed), players, dealer)
  const deal: Deal = {
    scheme: 'tarot-v1', game: 'tarot', seats: players, dealer: d.dealer, deck: d.deck, hands: d.hands, dog: d.dog,
    fingerprint: d.fingerprint, redeals: d.redeals,
    deliveries: [...d.hands.map((cards, seat) => ({ stage: 'deal', seat, public: false, cards })), { stage: 'dog', seat: null, public: true, cards: d.dog }]
  }
  return {
    json: { scheme: 'tarot-v1', version: 1, game: 'tarot', seats: players, method: 'sha256-fisher-yates-v1', seed: d.seed, ...dealJson(deal) },
    text: [
      `scheme      tarot-v1 (bare sha256-fisher-yates-v1 from a seed) · ${players} players · dealer ${dealer}`,
      `seed        ${d.seed}${d.redeals.length > 0 ? ` (after ${d.redeals.length} redeal${d.redeals.length > 1 ? 's' : ''})` : ''}`,
      ...dealText(deal)
    ]
  }
}

function shoe (scheme: CardScheme, v: Values): Output {
  refuseOthers(v, ['r1', 'r2', 'rx', 'cards', 'game'], 'bitjack21')
  if (v.game !== undefined && v.game !== 'shoe') throw new UsageError(`bitjack21 has no game '${String(v.game)}' (it has shoe)`)
  if (v.r1 === undefined || v.r2 === undefined) throw new UsageError('bitjack21 needs --r1 (the server seed) and --r2 (the player seed)')
  const n = intArg(v.cards, '--cards') ?? 416
  const inputs = { secret: String(v.r1), nonces: [String(v.r2)] }
  const key = scheme.key(inputs)
  const commitment = scheme.commitment(String(v.r1), String(v.rx ?? ''))
  const deck = scheme.deck(key, { cards: n })
  const rows: string[] = []
  for (let i = 0; i < deck.length; i += 13) rows.push(`${i === 0 ? 'shoe' : ''}`.padEnd(12) + deck.slice(i, i + 13).map(cardLabel).join(' '))
  return {
    json: { scheme: scheme.id, version: scheme.version, game: 'shoe', r1: v.r1, r2: v.r2, rx: v.rx ?? '', cards: n, commitment, shoe: deck },
    text: [
      `scheme      bitjack21 · ${n} cards`,
      `commitment  ${commitment}  (SHA-256 of r1 ‖ rx)`,
      `stream      SHA-256(${String(v.r1)}${String(v.r2)}<k>)`,
      ...rows
    ]
  }
}

function dice (scheme: DiceScheme, v: Values): Output {
  if (v['engine-seed'] !== undefined) {
    refuseOthers(v, ['engine-seed', 'roll'], 'dice --engine-seed')
    const seed = fromHex(String(v['engine-seed']), '--engine-seed', 32)
    const { rolls, total, roll } = rollWithEngineSeed(seed, requireRoll(v))
    return {
      json: { engine: 'php-xoshiro256starstar', engineSeed: String(v['engine-seed']).toLowerCase(), expression: roll.text, rolls, total },
      text: [`engine      PHP Xoshiro256** seeded with ${String(v['engine-seed']).toLowerCase()}`, `roll        ${roll.text}: ${rolls.join(' ')}  (total ${total})`]
    }
  }
  refuseOthers(v, ['secret', 'nonce', 'roll', 'game'], scheme.id)
  if (v.game !== undefined && v.game !== 'dice') throw new UsageError(`${scheme.id} has no game '${String(v.game)}' (it has dice)`)
  const inputs = keyInputs(scheme.id, v, false)
  const counts = scheme.seatsFor('dice')
  if (!counts.includes(inputs.nonces.length)) {
    throw new UsageError(`${scheme.id} takes ${counts[0]} to ${counts[counts.length - 1]} seats: give one --nonce per seat (got ${inputs.nonces.length})`)
  }
  const keyText = scheme.keyText(inputs)
  const key = scheme.key(inputs)
  const commitment = scheme.commitment(inputs.secret)
  const r = scheme.roll(key, requireRoll(v))
  return {
    json: { scheme: scheme.id, version: scheme.version, keyText, commitment, key, expression: r.expression, engineSeed: r.engineSeed, rolls: r.rolls, total: r.total },
    text: [
      `scheme      ${scheme.id}`,
      `key text    ${keyText}`,
      `commitment  ${commitment}`,
      `key         ${key}`,
      `engine seed ${r.engineSeed}  (HMAC-SHA256 keyed with the key over '${r.expression}')`,
      `roll        ${r.expression}: ${r.rolls.join(' ')}  (total ${r.total})`
    ]
  }
}

function requireRoll (v: Values): string {
  if (v.roll === undefined) throw new UsageError('--roll NdS is required (e.g. --roll 3d20)')
  return String(v.roll)
}

function keyInputs (id: string, v: Values, beacon: boolean): KeyInputs {
  if (v.secret === undefined) throw new UsageError(`${id} needs --secret`)
  const nonces = (v.nonce ?? []) as string[]
  if (nonces.length === 0) throw new UsageError(`${id} needs one --nonce per seat (seat 0 first; --nonce '' for a robot)`)
  const inputs: KeyInputs = { secret: String(v.secret), nonces }
  if (beacon) {
    for (const k of ['chain-hash', 'round', 'randomness'] as const) {
      if (v[k] === undefined) throw new UsageError(`${id} needs --chain-hash, --round and --randomness (the drand round); --${k} is missing`)
    }
    const round = intArg(v.round, '--round')
    const b: BeaconInput = { chainHash: String(v['chain-hash']), round: round as number, randomness: String(v.randomness) }
    inputs.beacon = b
  }
  return inputs
}

function refuseOthers (v: Values, allowed: string[], what: string): void {
  for (const [name, value] of Object.entries(v)) {
    if (value === undefined || name === 'scheme' || name === 'json' || allowed.includes(name)) continue
    throw new UsageError(`--${name} does not apply to ${what}`)
  }
}

function intArg (value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined
  const s = String(value)
  if (!/^(0|[1-9][0-9]*)$/.test(s) || !Number.isSafeInteger(Number(s))) throw new UsageError(`${name} must be a non-negative whole number, got '${s}'`)
  return Number(s)
}

function seatArg (value: unknown, name: string, seats: number): number | undefined {
  const n = intArg(value, name)
  if (n !== undefined && n >= seats) throw new UsageError(`${name} must be a seat from 0 to ${seats - 1}, got ${n}`)
  return n
}

function dealJson (deal: Deal): Record<string, unknown> {
  // scheme, game and seats are already in the output; dealer is the dealer of the deal that stood
  const { scheme: _s, game: _g, seats: _n, ...rest } = deal
  return rest
}

const STAGE_LABELS: Record<string, string> = { deal: 'dealt', turnUp: 'turned up', take: 'second round', faceUp: 'face up', dog: 'dog' }

function dealText (deal: Deal): string[] {
  const lines: string[] = []
  const row = (label: string, codes: readonly string[]): string => label.padEnd(12) + codes.map(cardLabel).join(' ')
  if (deal.deck.length <= 32) {
    lines.push(row('deck', deal.deck))
  } else {
    for (let i = 0; i < deal.deck.length; i += 26) lines.push(row(i === 0 ? 'deck' : '', deal.deck.slice(i, i + 26)))
  }
  for (const r of deal.redeals ?? []) {
    lines.push(`redeal      seed ${r.seed}, dealer ${r.dealer}: seat ${r.petitSec} had the petit sec (the 1 of trumps alone)`)
  }
  if ((deal.redeals ?? []).length > 0) lines.push(`dealer      ${deal.dealer} (after redeals)`)
  for (let seat = 0; seat < deal.seats; seat++) {
    const parts = deal.deliveries.filter(d => d.seat === seat).map(d => {
      const label = deal.game === 'duo' && d.stage === 'deal' ? 'face down' : STAGE_LABELS[d.stage] ?? d.stage
      return `${label}: ${d.cards.map(cardLabel).join(' ')}`
    })
    const hand = deal.hands?.[seat]
    const sortedHand = hand === undefined || deal.game !== 'tarot' ? '' : `   (sorted: ${sortTarot(hand).map(cardLabel).join(' ')})`
    lines.push(`seat ${seat}`.padEnd(12) + parts.join('  |  ') + sortedHand)
  }
  for (const d of deal.deliveries.filter(d => d.seat === null)) lines.push(row(STAGE_LABELS[d.stage] ?? d.stage, d.cards))
  if (deal.game === 'belote' && deal.hands === undefined) lines.push('            (give --taker to deal the second round)')
  if (deal.fingerprint !== undefined) lines.push(`fingerprint ${deal.fingerprint}`)
  return lines
}

function sortTarot (hand: readonly string[]): string[] {
  return [...hand].sort((a, b) => TAROT_CARDS.indexOf(a) - TAROT_CARDS.indexOf(b))
}
