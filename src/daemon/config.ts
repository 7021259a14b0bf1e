import { BoundedReadError, readBounded } from '../store/bounded-read.js'
import { dirname, resolve } from 'node:path'
import * as z from 'zod'
import { parseBeaconConfig, type BeaconConfig } from '../core/beacon/index.js'
import { resolveBeaconConfig } from '../beacon/presets.js'
import { getScheme } from '../core/schemes/registry.js'
import { DEFAULT_LISTEN } from '../net/limits.js'
import { ROBOT } from '../core/hand/messages.js'
import { NodeInputError } from './errors.js'
import { peerIdSchema } from '../core/peer-id-schema.js'
import { dialAddress, parseListenAddress } from '../net/addresses.js'
import { circuitAddress, parseRelayAddress } from '../net/relay.js'
import { DEFAULT_TIMEOUTS, type TableSpec, type TimelockConfig, type Timeouts } from '../protocol/types.js'
import { RECOVERED_RULES } from '../core/hand/recovered.js'
import { timelockSupported } from '../core/timelock/index.js'
import { checkOwnGroup, ownGroupBeaconOf, type OwnGroupBeacon } from '../core/own-group.js'
import { parseGroupConfig } from '../beacon/group/config.js'

/** The largest config file read: a table config is a few KiB. */
const MAX_CONFIG_BYTES = 256 * 1024
/** The most tables one node serves (`tables`): each is a machine, a queue and its timers. */
export const MAX_TABLES = 32

const peerId = peerIdSchema
// Listening needs an IP address; peers may also be named by DNS.
const listenAddr = z.string().regex(/^\/(ip4|ip6)\/[^/\s]+\/tcp\/\d{1,5}(\/ws)?$/, 'must be a listen multiaddr like /ip4/127.0.0.1/tcp/7400 or …/tcp/7401/ws')
/** A member's address in `table.peers` (also what `table new/join --announce` accepts). */
export const peerAddress = z.string().regex(/^\/(ip4|ip6|dns|dns4|dns6)\/[^/\s]+\/tcp\/\d{1,5}(\/ws)?(\/p2p\/[1-9A-HJ-NP-Za-km-z]+)?$/, 'must be a multiaddr like /ip4/127.0.0.1/tcp/7400 or …/tcp/7401/ws')

export { DEFAULT_TIMEOUTS }

/** One table's block: `table` in a one-table config, each entry of `tables` in a node serving several. */
const tableSchema = z.object({
  id: z.string().min(1).max(64).regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : - only'),
  game: z.string().min(1).max(32),
  scheme: z.string().min(1).max(32),
  dealer: peerId,
  seats: z.array(z.union([peerId, z.literal(ROBOT)])).min(2).max(8),
  /** How to reach the other members: peer id → multiaddrs. */
  peers: z.record(peerId, z.array(peerAddress).min(1).max(8)).default({}),
  timeouts: z.object({
    contributeMs: z.number().int().min(100).max(3_600_000).default(DEFAULT_TIMEOUTS.contributeMs),
    ackMs: z.number().int().min(100).max(3_600_000).default(DEFAULT_TIMEOUTS.ackMs),
    revealMs: z.number().int().min(1_000).max(7 * 86_400_000).default(DEFAULT_TIMEOUTS.revealMs),
    /** Time to play (docs/games.md): this node's seat is played from the terminal or page, and its robot plays a turn left this long. Absent: the robot plays at once. */
    playMs: z.number().int().min(1_000).max(86_400_000).optional()
  }).strict().default(DEFAULT_TIMEOUTS),
  /**
   * "none", a preset name ("quicknet", "default"), a path to a beacon JSON, {info, relays}, or the
   * table's own group, {group: ID, threshold, period} (src/core/own-group.ts: the node's `group`
   * block is that group, its members the table's nodes; its chain is bound once its DKG is done).
   */
  beacon: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).default('none'),
  /** The bound round is the first published this long after the contribution deadline. */
  beaconMarginMs: z.number().int().min(0).max(600_000).default(1_000),
  /**
   * "off", or time-lock every hand's secret and nonces to its bound round (docs/protocol.md §16),
   * with the table's rule for a hand the seats finish without the dealer: "replay" it, "void"
   * it, or play it "open".
   */
  timelock: z.enum(['off', ...RECOVERED_RULES]).default('off'),
  /**
   * A time-locked blind-v1 table's planned length of a hand, deal to end: every hand key is sealed
   * to the first round due this long after the bound round (docs/dealer-blind.md §14). Default 30 minutes.
   */
  timelockHandMs: z.number().int().min(1_000).max(7 * 86_400_000).optional(),
  /**
   * The table's relay, `/ip4/HOST/tcp/PORT[/ws]/p2p/RELAYID` (`fairdeal relay` prints it): the dealer
   * holds a reservation there and every member also reaches the dealer through it
   * (docs/network.md, "A dealer behind NAT: the relay").
   */
  relay: z.string().min(1).max(256).optional()
}).strict()
type TableBlock = z.infer<typeof tableSchema>

const configSchema = z.object({
  /** The node's data directory (identity key, LevelDB); relative to the config file. */
  data: z.string().min(1),
  listen: z.array(listenAddr).max(8).default([...DEFAULT_LISTEN]),
  control: z.object({
    /** Loopback TCP port of the control endpoint; 0 picks a free one (written to DATA/control.json). */
    port: z.number().int().min(0).max(65535).default(0)
  }).strict().default({ port: 0 }),
  web: z.object({
    /** Loopback TCP port of the table page (`fairdeal node` prints a one-time login link); 0 picks a free one. */
    port: z.number().int().min(0).max(65535).default(0),
    /**
     * Where it listens: 127.0.0.1 (default), or 0.0.0.0 / :: in a container whose port is published
     * (then the seat page and its assets answer any host; the table page and its API still answer
     * only at 127.0.0.1: src/daemon/web-server.ts).
     */
    host: z.enum(['127.0.0.1', '0.0.0.0', '::']).default('127.0.0.1'),
    enabled: z.boolean().default(true)
  }).strict().default({ port: 0, host: '127.0.0.1', enabled: true }),
  log: z.object({
    /** Who may fetch this node's receipt log over libp2p. */
    access: z.enum(['members', 'anyone']).default('members')
  }).strict().default({ access: 'members' }),
  table: tableSchema.optional(),
  /** A node serving several tables: one block each, ids unique (docs/network.md, "Several tables on one node"). */
  tables: z.array(tableSchema).min(1).max(MAX_TABLES).optional(),
  /** A beacon group this node is a member of: checked by src/beacon/group/config.ts. */
  group: z.unknown().optional()
}).strict()

/** One table a node serves: the table itself and its own peers, timeouts, beacon and time-lock rule. */
export interface TableConfig {
  table: TableSpec
  /** How to reach this table's other members: peer id → multiaddrs. */
  peers: Record<string, string[]>
  timeouts: Timeouts
  /**
   * The table's beacon. For a table on its own group (`ownGroup`), `{kind: "none"}` until the
   * group's chain is bound (Daemon.bindOwnGroup): no hand is dealt or taken before.
   */
  beacon: BeaconConfig
  /** The table's own beacon group, when its nodes are its beacon (its chain comes after the DKG); null otherwise. */
  ownGroup: OwnGroupBeacon | null
  beaconMarginMs: number
  /** null: hands are not time-locked. */
  timelock: TimelockConfig | null
  /** The table's relay (`…/p2p/RELAYID`), or null when the dealer is dialled directly. */
  relay: string | null
}

/**
 * A node's config. `tables` is every table the node serves (one for a config with `table`, each
 * entry of `tables` otherwise); the table fields at the top level (`table`, `peers`, …) are the
 * first of them, which is the whole story for a one-table node.
 */
export interface NodeConfig extends TableConfig {
  /** Where the config came from (errors name it). */
  source: string
  dataDir: string
  listen: string[]
  controlPort: number
  /** The table page's port on 127.0.0.1, or null when the config turns the page off. */
  webPort: number | null
  /** Where the table page's server listens (`web.host`). */
  webHost: '127.0.0.1' | '0.0.0.0' | '::'
  logAccess: 'members' | 'anyone'
  tables: TableConfig[]
}

/** Reads and validates a node config file: a wrong or missing field is a NodeInputError naming it. */
export async function loadNodeConfig (path: string): Promise<NodeConfig> {
  return await parseNodeConfig(await readNodeConfigJson(path), path)
}

/** A node config file's JSON, size-limited; a table, a beacon group, or both are then parsed from it. */
export async function readNodeConfigJson (path: string): Promise<unknown> {
  let text: string
  try {
    text = (await readBounded(path, MAX_CONFIG_BYTES)).toString('utf8')
  } catch (err) {
    // /dev/zero or a huge file is refused at the limit, not read until memory runs out.
    if (err instanceof BoundedReadError && err.tooLarge) throw new NodeInputError(`${path}: config is over ${MAX_CONFIG_BYTES} bytes`)
    throw new NodeInputError(`cannot read config ${path}: ${(err as Error).message}`)
  }
  try { return JSON.parse(text) } catch (err) { throw new NodeInputError(`${path}: not JSON (${(err as Error).message})`) }
}

export async function parseNodeConfig (value: unknown, source: string): Promise<NodeConfig> {
  const parsed = configSchema.safeParse(value)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const field = issue.path.join('.')
    const what = issue.code === 'invalid_type' && /received undefined/.test(issue.message) ? 'is missing' : issue.message
    throw new NodeInputError(`${source}: field ${field === '' ? '(root)' : field}: ${what}`)
  }
  const c = parsed.data
  const fail = (field: string, message: string): never => { throw new NodeInputError(`${source}: field ${field}: ${message}`) }
  if (c.table !== undefined && c.tables !== undefined) fail('tables', 'give either table (one table) or tables (several), not both')
  const blocks: Array<[string, TableBlock]> = c.table !== undefined ? [['table', c.table]] : (c.tables ?? []).map((t, i) => [`tables.${i}`, t])
  if (blocks.length === 0) fail('table', 'is missing')
  const ids = new Set<string>()
  for (const [field, t] of blocks) {
    if (ids.has(t.id)) fail(`${field}.id`, `table ${t.id} is named twice (each table of a node needs its own id)`)
    ids.add(t.id)
  }
  // Addresses are parsed as libp2p will parse them (ports up to 65535, a /p2p part naming that very peer).
  c.listen.forEach((a, i) => { try { parseListenAddress(a) } catch (err) { fail(`listen.${i}`, (err as Error).message) } })
  const tables: TableConfig[] = []
  for (const [field, t] of blocks) tables.push(await parseTable(t, field, dirname(resolve(source)), fail))
  // A table on its own group: the node's group block is that group, of exactly the table's nodes.
  for (const [i, t] of tables.entries()) {
    if (t.ownGroup === null) continue
    const field = `${blocks[i][0]}.beacon`
    if (c.group === undefined) fail(field, `names the table's own beacon group ${t.ownGroup.group}, and this config has no group block (written by 'table new --beacon own' and 'table join' once every seat is taken)`)
    let id: string | undefined
    try { id = parseGroupConfig(c.group, 'group').params.id } catch (err) { fail('group', (err as Error).message.replace(/^group: /, '')) }
    if (id !== t.ownGroup.group) fail(field, `names the table's own beacon group ${t.ownGroup.group}, and this node's group block is group ${String(id)}`)
    const { listen: _l, http: _h, catchupMs: _c, ...body } = c.group as Record<string, unknown>
    const problem = checkOwnGroup(body, { ...t.table, beacon: t.ownGroup })
    if (problem !== undefined) fail('group', `is not table ${t.table.id}'s own group: ${problem}`)
  }
  return {
    source,
    dataDir: resolve(dirname(resolve(source)), c.data),
    listen: c.listen,
    controlPort: c.control.port,
    webPort: c.web.enabled ? c.web.port : null,
    webHost: c.web.host,
    logAccess: c.log.access,
    ...tables[0],
    tables
  }
}

/** One table block, checked beyond its schema; `field` ('table' or 'tables.N') prefixes every error. */
async function parseTable (t: TableBlock, field: string, base: string, fail: (field: string, message: string) => never): Promise<TableConfig> {
  let scheme
  try { scheme = getScheme(t.scheme) } catch (err) { fail(`${field}.scheme`, (err as Error).message) }
  // A dice scheme's table rolls a series during play (docs/games.md "Draws on the chain").
  if (scheme === undefined || (scheme.kind !== 'cards' && scheme.kind !== 'dice')) fail(`${field}.scheme`, `${t.scheme} does not deal cards or roll dice`)
  else {
    if (!scheme.games.includes(t.game)) fail(`${field}.game`, `${t.scheme} has no game ${t.game} (it has: ${scheme.games.join(', ')})`)
    else if (!scheme.seatsFor(t.game).includes(t.seats.length)) fail(`${field}.seats`, `${t.game} is played by ${scheme.seatsFor(t.game).join(' or ')} seats, not ${t.seats.length}`)
  }
  const humans = t.seats.filter(s => s !== ROBOT)
  if (new Set(humans).size !== humans.length) fail(`${field}.seats`, 'a peer id holds two seats')
  const members = new Set([t.dealer, ...humans])
  for (const [peer, addrs] of Object.entries(t.peers)) {
    if (!members.has(peer)) fail(`${field}.peers.${peer}`, 'is not a member of the table (neither its dealer nor a seat)')
    addrs.forEach((a, i) => { try { dialAddress(a, peer) } catch (err) { fail(`${field}.peers.${peer}.${i}`, (err as Error).message) } })
  }
  if (t.relay !== undefined) {
    let relay
    try { relay = parseRelayAddress(t.relay) } catch (err) { fail(`${field}.relay`, (err as Error).message) }
    if (relay !== undefined && members.has(relay.peerId)) fail(`${field}.relay`, 'names a member of the table: a relay is a node of its own (fairdeal relay)')
  }
  let beacon: BeaconConfig
  let ownGroup: OwnGroupBeacon | undefined
  try {
    ownGroup = ownGroupBeaconOf(t.beacon)
    beacon = ownGroup !== undefined
      // Its chain exists once the group's DKG is done: bound then (Daemon.bindOwnGroup).
      ? { kind: 'none' }
      : typeof t.beacon === 'string'
        ? await resolveBeaconConfig(isBeaconFile(t.beacon) ? resolve(base, t.beacon) : t.beacon)
        : parseBeaconConfig(t.beacon, `${field}.beacon`)
  } catch (err) {
    return fail(`${field}.beacon`, (err as Error).message)
  }
  // A group's chain is drand's, with timelock encryption (bls-unchained-g1-rfc9380): checked as one.
  const problem = beaconProblem({ scheme: t.scheme, timelock: t.timelock }, ownGroup !== undefined ? 'own-group' : beacon, field)
  if (problem !== undefined) fail(problem.field, problem.message)
  if (ownGroup !== undefined) {
    const n = new Set([t.dealer, ...t.seats.filter(s => s !== ROBOT)]).size
    if (n < 2) fail(`${field}.beacon`, 'the table\'s own group needs two nodes or more: this table has no human seat but the dealer\'s')
    if (ownGroup.threshold > n) fail(`${field}.beacon.threshold`, `is ${ownGroup.threshold}, and the table has ${n} nodes`)
  }
  return {
    table: { id: t.id, game: t.game, scheme: t.scheme, seats: t.seats, dealer: t.dealer },
    peers: t.peers,
    timeouts: t.timeouts,
    beacon,
    ownGroup: ownGroup ?? null,
    beaconMarginMs: t.beaconMarginMs,
    timelock: t.timelock === 'off' ? null : { rule: t.timelock, ...(t.timelockHandMs === undefined ? {} : { handMs: t.timelockHandMs }) },
    relay: t.relay ?? null
  }
}

/**
 * What a table's scheme and timelock rule refuse in its beacon (`own-group`: the table's own group,
 * whose chain is drand's with timelock encryption), as the config field and the reason; undefined
 * when they fit. Checked when the config is read, and again when an own group's chain is bound.
 */
export function beaconProblem (t: { scheme: string, timelock: string }, beacon: BeaconConfig | 'own-group', field: string): { field: string, message: string } | undefined {
  let scheme
  try { scheme = getScheme(t.scheme) } catch { return undefined }
  const drand = beacon === 'own-group' || beacon.kind === 'drand'
  // A dealer-blind scheme binds a beacon round when the table has one, and works without.
  if (scheme.kind === 'cards' && scheme.family !== 'blind' && scheme.beacon !== drand) {
    return { field: `${field}.scheme`, message: drand ? `${t.scheme} cannot bind a beacon round: use atout-drand-v1` : `${t.scheme} needs a beacon: set ${field}.beacon` }
  }
  if (t.timelock !== 'off' && beacon !== 'own-group' && (beacon.kind !== 'drand' || !timelockSupported(beacon.chain))) {
    return {
      field: `${field}.timelock`,
      message: beacon.kind === 'drand'
        ? `the beacon's scheme ${beacon.chain.schemeID} has no timelock encryption (needs bls-unchained-g1-rfc9380: quicknet, a local or a group beacon)`
        : `a time-locked table needs a beacon (${field}.beacon)`
    }
  }
  return undefined
}

/** A beacon given as a file (a path, or a name ending in .json) is read relative to the config file. */
function isBeaconFile (spec: string): boolean {
  return spec.includes('/') || spec.endsWith('.json')
}

/** Every member of any of the node's tables (dealers and human seats), once each: the node's members. */
export function nodeMembers (tables: readonly TableConfig[]): string[] {
  return [...new Set(tables.flatMap(({ table }) => [table.dealer, ...table.seats.filter(s => s !== ROBOT)]))]
}

/**
 * How to reach every member of any of the node's tables: each table's `peers`, merged (addresses in
 * config order, once each), then every member of a relayed table through its relay (each holds a
 * reservation there).
 */
export function addressBookOf (tables: readonly TableConfig[]): Map<string, string[]> {
  const book = new Map<string, string[]>()
  const add = (peer: string, addrs: string[]): void => { book.set(peer, [...new Set([...(book.get(peer) ?? []), ...addrs])]) }
  for (const t of tables) {
    for (const [peer, addrs] of Object.entries(t.peers)) add(peer, addrs)
  }
  // Through the relay last: a direct address, when there is one, is tried first.
  for (const t of tables) {
    if (t.relay === null) continue
    const relay = t.relay
    for (const peer of [t.table.dealer, ...t.table.seats.filter(s => s !== ROBOT)]) add(peer, [circuitAddress(relay, peer)])
  }
  return book
}
