import { parseArgs } from 'node:util'
import { access, readFile, rename, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { UsageError } from '../errors.js'
import { parseIntOption } from '../options.js'
import { loadOrCreateIdentity, IDENTITY_FILE, type NodeIdentity } from '../../net/identity.js'
import { parseListenAddress } from '../../net/addresses.js'
import { DEFAULT_LISTEN } from '../../net/limits.js'
import { getScheme } from '../../core/schemes/registry.js'
import { ROBOT } from '../../core/hand/messages.js'
import { signerFromSeed } from '../../core/identity.js'
import { parseNodeConfig } from '../../daemon/config.js'
import {
  decodeAnswer, decodeInvite, encodeAnswer, encodeInvite, openSeats, type DraftTable, type Invite
} from '../../daemon/invite.js'

/** The node config `table` writes in the data directory; `fairdeal node --config DIR/node.json` runs it. */
export const CONFIG_FILE = 'node.json'
/** The table being set up, until every seat is taken. */
const DRAFT_FILE = 'table-draft.json'

const HELP = `usage: fairdeal table new --game GAME --seats N --data DIR [--listen ADDR]... [--robots SEATS]
                          [--beacon B] [--id ID] [--scheme S]
       fairdeal table join INVITE --data DIR [--listen ADDR]...
       fairdeal table add ANSWER --data DIR

Sets up a table without copying peer ids by hand:
  1. the dealer: 'table new' prints one invite per seat to fill (nothing secret in it);
  2. each player: 'table join INVITE' prints a one-line answer (its peer id and addresses);
  3. the dealer: 'table add ANSWER' for each; once every seat is taken it writes the dealer's
     DIR/${CONFIG_FILE} and prints the table line, which each player gives to 'table join' again
     to write theirs. Then everyone runs 'fairdeal node --config DIR/${CONFIG_FILE}'.
'table new' and 'table join' create the node's identity (DIR/${IDENTITY_FILE}) when DIR has none, as
'fairdeal init' does, and say so; no other command but init creates one.

  --game GAME     coinche, belote (4 seats), duo (2), tarot (3 to 5)
  --seats N       number of seats; the dealer node holds seat 0
  --robots SEATS  seats the dealer plays (comma-separated, e.g. 2,3): no invite for them
  --beacon B      none (default), quicknet, default (alias mainnet), or a beacon config file
                  (its content goes into the table block, so every node reads the same)
  --id ID         the table's name (default: GAME-night)
  --scheme S      default: atout-v1, atout-drand-v1 with a beacon, tarot-v1 for tarot
  --listen ADDR   where this node listens (repeatable; default ${DEFAULT_LISTEN.join(' and ')});
                  the dealer's go into the invites, a player's into its answer
  --data DIR      the node's data directory; the config is written there as ${CONFIG_FILE}`

type Sub = 'new' | 'join' | 'add'

export async function run (sub: Sub, argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      game: { type: 'string' },
      seats: { type: 'string' },
      robots: { type: 'string' },
      beacon: { type: 'string' },
      id: { type: 'string' },
      scheme: { type: 'string' },
      listen: { type: 'string', multiple: true },
      data: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' }
    }
  })
  if (values.help === true) { process.stdout.write(HELP + '\n'); return 0 }
  if (values.data === undefined || values.data === '') throw new UsageError('--data DIR is required (see --help)')
  const onlyFor: Record<string, Sub> = { game: 'new', seats: 'new', robots: 'new', beacon: 'new', id: 'new', scheme: 'new' }
  for (const [option, owner] of Object.entries(onlyFor)) {
    if ((values as Record<string, unknown>)[option] !== undefined && owner !== sub) throw new UsageError(`table ${sub} takes no --${option} (see --help)`)
  }
  if (sub === 'add' && values.listen !== undefined) throw new UsageError('table add takes no --listen (see --help)')
  if (sub === 'new') {
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])} (see --help)`)
    return await newTable(values as NewOptions)
  }
  if (positionals.length !== 1) throw new UsageError(sub === 'join' ? 'give the INVITE (one argument; quote it)' : 'give the ANSWER (one argument; quote it)')
  return sub === 'join'
    ? await joinTable(positionals[0], values.data, values.listen, values.json === true)
    : await add(positionals[0], values.data)
}

interface NewOptions { game?: string, seats?: string, robots?: string, beacon?: string, id?: string, scheme?: string, listen?: string[], data: string, json?: boolean }

function listenAddresses (given: string[] | undefined): string[] {
  return (given ?? [...DEFAULT_LISTEN]).map(a => parseListenAddress(a).toString())
}

/** init's identity step: the key in DIR, created (and said so) when DIR has none. */
async function identityOf (dir: string): Promise<NodeIdentity> {
  const identity = await loadOrCreateIdentity(dir)
  if (identity.created) process.stderr.write(`created a new identity in ${identity.path} (peer id ${identity.peerId})\n`)
  return identity
}

async function exists (path: string): Promise<boolean> {
  try { await access(path); return true } catch { return false }
}

/** Written whole or not at all. */
async function writeJson (path: string, value: unknown): Promise<void> {
  const temp = `${path}.${process.pid}.tmp`
  await writeFile(temp, JSON.stringify(value, null, 2) + '\n', { mode: 0o600 })
  await rename(temp, path)
}

interface Draft { listen: string[], table: DraftTable, peers: Record<string, string[]> }

async function readDraft (dir: string): Promise<Draft> {
  const path = join(dir, DRAFT_FILE)
  let text: string
  try { text = await readFile(path, 'utf8') } catch {
    throw new UsageError(`${dir} has no table being set up (${DRAFT_FILE}): run 'fairdeal table new' there first`)
  }
  return JSON.parse(text) as Draft
}

async function newTable (o: NewOptions): Promise<number> {
  if (o.game === undefined) throw new UsageError('--game is required (coinche, belote, duo or tarot)')
  const seatsN = parseIntOption(o.seats, '--seats', 2, 8)
  if (seatsN === undefined) throw new UsageError('--seats N is required')
  const robots = o.robots === undefined || o.robots === '' ? [] : o.robots.split(',').map(r => parseIntOption(r.trim(), '--robots', 1, seatsN - 1) as number)
  const beacon = o.beacon ?? 'none'
  const scheme = o.scheme ?? (o.game === 'tarot' ? 'tarot-v1' : beacon === 'none' ? 'atout-v1' : 'atout-drand-v1')
  const listen = listenAddresses(o.listen)
  if (await exists(join(o.data, CONFIG_FILE))) throw new UsageError(`${join(o.data, CONFIG_FILE)} exists: this node already has a table (remove it to set up another)`)
  let beaconValue: DraftTable['beacon'] = beacon
  if (beacon.includes('/') || beacon.endsWith('.json')) {
    // A file is read here and travels in the table block: the players' machines do not have it.
    try { beaconValue = JSON.parse(await readFile(beacon, 'utf8')) as Record<string, unknown> } catch (err) {
      throw new UsageError(`--beacon ${beacon}: ${(err as Error).message}`)
    }
  }
  const seatsFor = (dealer: string): DraftTable['seats'] => Array.from({ length: seatsN }, (_, i) => i === 0 ? dealer : robots.includes(i) ? ROBOT : null)
  const tableFor = (dealer: string): DraftTable => ({ id: o.id ?? `${o.game}-night`, game: o.game as string, scheme, dealer, seats: seatsFor(dealer), beacon: beaconValue })
  // Everything a node config checks (game, seat count, scheme against beacon) is checked now, on the
  // complete table it will become, before any key is made.
  await checkTable(tableFor(placeholder(9)), listen, {}, o.data)
  const identity = await identityOf(o.data)
  const table = tableFor(identity.peerId)
  await writeJson(join(o.data, DRAFT_FILE), { listen, table, peers: {} } satisfies Draft)
  const dealerAddresses = listen.map(a => `${a}/p2p/${identity.peerId}`)
  const invites = openSeats(table).map(seat => ({ seat, invite: encodeInvite({ v: 1, table, seat, dealerAddresses, peers: {} }) }))
  if (o.json === true) {
    process.stdout.write(JSON.stringify({ peerId: identity.peerId, invites }) + '\n')
    return 0
  }
  process.stdout.write(`table ${table.id}: ${table.game}, ${seatsN} seats, dealer ${identity.peerId} (seat 0)` +
    `${robots.length > 0 ? `, robots at seat ${robots.join(', ')}` : ''}\n`)
  if (invites.length === 0) {
    await finish(o.data, { listen, table, peers: {} })
    return 0
  }
  process.stdout.write(`send each player their invite; they run 'fairdeal table join INVITE --data DIR':\n`)
  for (const { seat, invite } of invites) process.stdout.write(`seat ${seat}: ${invite}\n`)
  return 0
}

/** Throws a UsageError naming what a node config would refuse in this table, seats not yet taken filled in. */
async function checkTable (table: DraftTable, listen: string[], peers: Record<string, string[]>, dir: string): Promise<void> {
  try {
    getScheme(table.scheme)
    await parseNodeConfig(configFor({ listen, table: { ...table, seats: table.seats.map((s, i) => s ?? placeholder(i)) }, peers }), join(dir, CONFIG_FILE))
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/field table\./, 'table '))
  }
}

/** Stand-in peer ids (valid keys nobody uses) for seats not yet taken, only to check the rest of the table. */
function placeholder (i: number): string {
  return signerFromSeed(new Uint8Array(32).fill(200 + i)).peerId
}

function configFor (draft: Draft): unknown {
  const { table } = draft
  return {
    data: '.',
    listen: draft.listen,
    table: {
      id: table.id,
      game: table.game,
      scheme: table.scheme,
      dealer: table.dealer,
      seats: table.seats,
      peers: draft.peers,
      beacon: table.beacon,
      ...(table.timeouts !== undefined ? { timeouts: table.timeouts } : {}),
      ...(table.beaconMarginMs !== undefined ? { beaconMarginMs: table.beaconMarginMs } : {})
    }
  }
}

async function joinTable (text: string, dir: string, listenGiven: string[] | undefined, json: boolean): Promise<number> {
  const invite: Invite = decodeInvite(text)
  const listen = listenAddresses(listenGiven)
  const configPath = join(dir, CONFIG_FILE)
  if (invite.seat === null) {
    // The final table line: every seat is taken; this node's config is written.
    const identity = await identityOf(dir)
    if (!invite.table.seats.includes(identity.peerId)) {
      throw new UsageError(`this table (${invite.table.id}) has no seat for this node (${identity.peerId}, the key in ${dir}): join with the invite first`)
    }
    const draftPath = join(dir, DRAFT_FILE)
    const mine = await exists(draftPath) ? await readDraft(dir) : undefined
    const peers: Record<string, string[]> = {}
    for (const [p, addrs] of Object.entries(invite.peers)) if (p !== identity.peerId) peers[p] = addrs
    peers[invite.table.dealer] = invite.dealerAddresses.map(a => a.replace(/\/p2p\/[^/]+$/, ''))
    const draft: Draft = { listen: listenGiven !== undefined ? listen : mine?.listen ?? listen, table: invite.table, peers }
    await writeConfig(dir, draft)
    process.stdout.write(`wrote ${configPath}: seat ${invite.table.seats.indexOf(identity.peerId)} of table ${invite.table.id}; ` +
      `start the node with 'fairdeal node --config ${configPath}'\n`)
    return 0
  }
  if (await exists(configPath)) throw new UsageError(`${configPath} exists: this node already has a table (remove it to join another)`)
  const identity = await identityOf(dir)
  if (identity.peerId === invite.table.dealer) throw new UsageError(`${dir} holds the dealer's own key: join from the player's data directory`)
  const table = { ...invite.table, seats: [...invite.table.seats] }
  table.seats[invite.seat] = identity.peerId
  await writeJson(join(dir, DRAFT_FILE), { listen, table, peers: { [invite.table.dealer]: invite.dealerAddresses } } satisfies Draft)
  const answer = encodeAnswer({ v: 1, table: table.id, seat: invite.seat, peer: identity.peerId, addresses: listen })
  if (json) {
    process.stdout.write(JSON.stringify({ peerId: identity.peerId, seat: invite.seat, answer }) + '\n')
    return 0
  }
  process.stderr.write(`seat ${invite.seat} of table ${table.id} (${table.game}); send this answer to the dealer, who runs 'fairdeal table add ANSWER':\n`)
  process.stdout.write(answer + '\n')
  return 0
}

async function add (text: string, dir: string): Promise<number> {
  const answer = decodeAnswer(text)
  const draft = await readDraft(dir)
  const { table } = draft
  if (answer.table !== table.id) throw new UsageError(`this answer is for table ${answer.table}, not ${table.id}`)
  const current = table.seats[answer.seat]
  if (current === undefined) throw new UsageError(`table ${table.id} has no seat ${answer.seat}`)
  if (current !== null && current !== answer.peer) throw new UsageError(`seat ${answer.seat} is already taken by ${current}`)
  const elsewhere = table.seats.indexOf(answer.peer)
  if (elsewhere !== -1 && elsewhere !== answer.seat) throw new UsageError(`${answer.peer} already holds seat ${elsewhere}`)
  table.seats[answer.seat] = answer.peer
  if (answer.addresses.length > 0) draft.peers[answer.peer] = answer.addresses
  await checkTable(table, draft.listen, draft.peers, dir)
  await writeJson(join(dir, DRAFT_FILE), draft)
  const open = openSeats(table)
  process.stdout.write(`seat ${answer.seat}: ${answer.peer}\n`)
  if (open.length > 0) {
    process.stdout.write(`waiting for seat ${open.join(', ')}\n`)
    return 0
  }
  await finish(dir, draft)
  return 0
}

/** Every seat is taken: the dealer's config, and the table line for the players. */
async function finish (dir: string, draft: Draft): Promise<void> {
  await writeConfig(dir, draft)
  const configPath = join(dir, CONFIG_FILE)
  process.stdout.write(`every seat is taken: wrote ${configPath}; start it with 'fairdeal node --config ${configPath}'\n`)
  const humans = draft.table.seats.filter(s => s !== ROBOT && s !== draft.table.dealer)
  if (humans.length === 0) return
  const line = encodeInvite({
    v: 1,
    table: draft.table,
    seat: null,
    dealerAddresses: draft.listen.map(a => `${a}/p2p/${draft.table.dealer}`),
    peers: draft.peers
  })
  process.stdout.write(`send every player this table line; they run 'fairdeal table join TABLE --data DIR' with it:\n${line}\n`)
}

async function writeConfig (dir: string, draft: Draft): Promise<void> {
  const config = configFor(draft)
  const path = join(dir, CONFIG_FILE)
  try {
    await parseNodeConfig(config, resolve(path))
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  await writeJson(path, config)
}
