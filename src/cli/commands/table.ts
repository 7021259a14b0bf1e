import { WEB_HOSTS } from '../../daemon/web-server.js'
import { defineCommand, type OptionSpecs } from '../command.js'
import { rm } from 'node:fs/promises'
import { exists } from '../files.js'
import { readBounded } from '../../store/bounded-read.js'
import { randomBytes } from 'node:crypto'
import { join, resolve } from 'node:path'
import { UsageError } from '../errors.js'
import { parseIntOption } from '../options.js'
import { loadOrCreateIdentity, IDENTITY_FILE, type NodeIdentity } from '../../net/identity.js'
import { parseListenAddress } from '../../net/addresses.js'
import { DEFAULT_LISTEN, REACH_CHECK_MS } from '../../net/limits.js'
import { createNode } from '../../net/node.js'
import { probePeer, type ReachResult } from '../../net/reach.js'
import { circuitAddress } from '../../net/relay.js'
import { pino } from 'pino'
import { getScheme } from '../../core/schemes/registry.js'
import { ROBOT } from '../../core/hand/messages.js'
import { RECOVERED_RULES, type RecoveredRule } from '../../core/hand/recovered.js'
import { DEFAULT_TIMEOUTS } from '../../protocol/types.js'
import { peerIdFromPublicKey } from '../../core/identity.js'
import { nativePublicKey } from '../../crypto/native-crypto.js'
import { parseNodeConfig, peerAddress, readNodeConfigJson } from '../../daemon/config.js'
import { multiaddr } from '@multiformats/multiaddr'
import {
  decodeAnswer, decodeInvite, encodeAnswer, encodeInvite, openSeats, type DraftTable, type Invite
} from '../../daemon/invite.js'
import {
  CONFIG_FILE, DRAFT_FILE, configFor, dealerAddressesOf, joinOverStream, joiningTable, readDraft as readDraftFile, writeJson, type Draft
} from '../../daemon/table-join.js'
import { formatLink, isLink, JOIN_PROTOCOL, linkUsedUp, newJoinSecret, parseLink, SEAT_PAGE_PATH, secretDigest, type LinkInvite } from '../../core/join.js'
import { dialAddress } from '../../net/addresses.js'
import { dialFailureHint, dialFailureKind } from '../../net/reach.js'
import { checkOwnGroup, finalOwnGroup, ownGroupBeaconOf, ownGroupSize, ownGroupThreshold, recoverableWithoutDealer, type OwnGroupBeacon, type OwnGroupMember } from '../../core/own-group.js'
import { DEFAULT_GROUP_HTTP_PORT, DEFAULT_GROUP_LISTEN, memberSettings } from '../group-member.js'
import type { DraftGroup } from '../../daemon/table-join.js'

/** A beacon file for --beacon (a chain's info and relays, or a group's beacon.json): a few KB. */
const MAX_BEACON_FILE_BYTES = 256 * 1024

export { CONFIG_FILE }
/** Where the dealer's node serves the seat page the links open, unless --web-port says otherwise. */
const DEFAULT_WEB_PORT = 7402
/** How long 'table new' waits for a public beacon's relays to answer. */
const BEACON_CHECK_MS = 3_000

const HELP = `usage: fairdeal table new --game GAME --seats N --data DIR [--listen ADDR]... [--announce ADDR]... [--web-port P]
                          [--web-host H] [--page-url URL] [--robots SEATS] [--beacon B] [--timelock RULE [--hand-length MIN]] [--scheme S] [--id ID]
                          [--contribute-seconds S] [--relay ADDR] [--answers] [--force] [--json]
       fairdeal table new --beacon own [--group-threshold T] [--group-period S] [--group-start-in S] [--group-phase-ms MS]
                          [--group-listen ADDR]... [--group-announce ADDR]... [--group-http-port P] [--group-url URL] …

Sets up a table without copying peer ids by hand. 'table new' prints one line per seat to fill,
'seat N: LINK', and writes the dealer's DIR/${CONFIG_FILE} at once:
  1. the dealer sends each player their link and starts 'fairdeal node --config DIR/${CONFIG_FILE}';
     its node serves the seat page on 127.0.0.1:P (--web-port, default ${DEFAULT_WEB_PORT}), takes the seats
     as their players join, in any order, and runs the table once every seat is taken
     ('fairdeal hand deal --data DIR' then deals each hand);
  2. each player opens the link in a browser (the page is the seat: docs/browser-seat.md), or runs
     'fairdeal table join LINK --data DIR', which writes their node config once every seat is taken.
A link carries a one-time secret (in the URL's fragment, which a browser sends to no server): the
dealer's node binds its seat to the first player that proves it, refuses anyone else, and sends
every player the final table, signed. Nothing goes back to the dealer by hand.
With --answers, the earlier three steps instead (invites hold no secret):
  1. 'table new' prints one invite per seat (fairdeal-invite:…);
  2. each player: 'table join INVITE' prints a one-line answer (its peer id and addresses);
  3. the dealer: 'table add ANSWER' for each; once every seat is taken it writes the dealer's
     DIR/${CONFIG_FILE} and prints the table line, which each player gives to 'table join' again
     to write theirs. Then everyone runs 'fairdeal node --config DIR/${CONFIG_FILE}'.
'table new' and 'table join' create the node's identity (DIR/${IDENTITY_FILE}) when DIR has none, as
'fairdeal init' does, and say so; no other command but init creates one. The table being set up is
kept in DIR/${DRAFT_FILE}; a second 'table new' there refuses to replace it unless given --force.

How the cards are dealt. A table of people is dealt blind-v1 (docs/dealer-blind.md): the seats
shuffle an encrypted deck in turn, with proofs, so no node, the dealer's included, sees a card before
its seat. A table with robots (--robots) is dealt atout-v1 (atout-drand-v1 with a beacon, tarot-v1 for
tarot): the dealer's node plays the robots and sees their cards anyway, and commit-reveal is cheaper.
--scheme chooses otherwise. Invites and the table line carry the scheme and the timelock, so every
node runs the same table.

Only the dealer needs an address the players can reach: a player's node dials the dealer and keeps
that connection, and the dealer sends on it, so a player behind a home router needs no open port.
The table line's 'table join' tries the dealer's address and says whether it answered.

  --game GAME     coinche, belote (4 seats), duo (2), tarot (3 to 5)
  --seats N       number of seats; the dealer node holds seat 0
  --robots SEATS  seats the dealer plays (comma-separated, e.g. 2,3): no invite for them
  --beacon B      none (default), quicknet, default (alias mainnet), a beacon config file (its
                  content goes into the table block, so every node reads the same), or own (below).
                  With a beacon each hand binds a future round; blind-v1 then also lets it fix the
                  final order. 'table new' checks (within ${Math.round(BEACON_CHECK_MS / 1000)} s) that a public beacon answers from here
  --timelock RULE off (default), replay, void or open: every hand's secrets are also time-locked
                  to a beacon round. At a commit-reveal table (with robots) a hand whose dealer
                  stops is then finished by the seats once the round is out; RULE says what such a
                  hand counts for (replay it, void it, or play it open). At a blind-v1 table a seat
                  that walks away is opened from its timelock (--hand-length, below); a dealer that
                  stops still ends the hand. Needs a beacon whose scheme has timelock encryption
                  (quicknet's, bls-unchained-g1-rfc9380: quicknet, a local or a group beacon, or own)
  --hand-length MIN with --timelock on a blind-v1 table: the longest a hand may last, in minutes
                  (default 30). Each seat's hand key is also time-locked to the first round due
                  that long after the hand's round, so a seat that walks away is opened then, and
                  not before (docs/dealer-blind.md §14): set it above your slowest hand
  --scheme S      blind-v1 (default without robots), atout-v1, atout-drand-v1, tarot-v1
  --contribute-seconds S
                  how long the seats have for their part of each hand before a silent one is
                  named: at a blind-v1 table every seat's key by halfway, then every seat's
                  shuffle in an equal turn of the second half (a seat may use what the turns
                  before it left); at a commit-reveal table every pledge and nonce (default ${DEFAULT_TIMEOUTS.contributeMs / 1000}).
                  A seat still working when its turn ends is named as if silent, so give a blind
                  table of seats on slow devices (old phones in the seat page) more, e.g. 30.
                  Without a beacon it costs nothing while everyone answers; with one, every hand's
                  round comes after it
  --id ID         the table's name (default: GAME-night)
  --listen ADDR   where this node listens (repeatable). The dealer's default: ${DEFAULT_LISTEN.join(' and ')}
                  (loopback: players on other machines need e.g. /ip4/0.0.0.0/tcp/7400 with --announce).
                  A player's default is none: it listens nowhere and dials the dealer (behind NAT);
                  give addresses only if other players can reach it directly
  --announce ADDR the address others dial to reach this node, when it is not a listen address
                  (the public address a router forwards to it, or a DNS name: /dns4/HOST/tcp/PORT);
                  goes into the invites or the answer
  --relay ADDR    a 'fairdeal relay' (its address line, …/p2p/RELAYID) for a dealer nobody can
                  dial: the dealer holds a reservation there and the players reach it through it
                  (then --listen none is allowed for the dealer)
  --data DIR      the node's data directory; the config is written there as ${CONFIG_FILE}
  --web-port P    where the dealer's node serves the seat page the links open (127.0.0.1:P; default ${DEFAULT_WEB_PORT})
  --web-host H    where that server listens: 127.0.0.1 (default), or 0.0.0.0 in a container whose
                  port is published (the seat page and its assets then answer any host; the table
                  page and its API still answer only at 127.0.0.1). With it, give --page-url: the
                  page's address as the players reach it
  --page-url URL  the seat page's URL the links name instead (a copy of dist/web hosted where the
                  players reach it, e.g. https://example.org/fairdeal/seat.html, or the dealer's
                  own page at its public address with --web-host)
  --answers       the invite/answer/table-line steps instead of links
  --force         replace a table being set up in DIR (its links, invites and answers so far are lost)
  --json          print one JSON object instead of text: {peerId, config, links: [{seat, link}]}
                  ({peerId, invites: [{seat, invite}]} with --answers)

The table's own beacon (--beacon own): the table's nodes, the dealer's and each human seat's (n of
them; robots are the dealer's), are also its beacon group, a t-of-n threshold group (its rounds are
unpredictable unless t of them collude: docs/beacon-group.md, "A table's own group"). No League of
Entropy, no outside operator, for the beacon or the timelocks. Links only (not --answers): each
player runs 'fairdeal table join LINK --data DIR --group-listen ADDR …' (the seat page cannot be a
member), which says where the group reaches its node. Once every seat is taken the dealer's final
table carries the group; the group's DKG starts --group-start-in seconds later, so every player
starts 'fairdeal node' before then. The table deals nothing before the DKG is done: each node
takes the group's chain from its own member then ('hand deal' until then says why it waits).
Every node must be reachable by every other at its --group-announce (or --group-listen) address.
With --timelock, a hand one node left (its dealer at a commit-reveal table, a seat at a blind-v1
one) is finished by the others once the round is out, which the n − 1 other nodes make only if
n − 1 ≥ t: with the default t = floor(n/2) + 1 a table needs three nodes or more (a 2-node table,
t = 2, cannot recover a hand without one of them; 3 nodes: t = 2; 4 nodes: t = 3; 5 nodes: t = 3,
and two nodes may be gone).
  --group-threshold T  members whose partials make a round: 2 to n (default floor(n/2) + 1)
  --group-period S     seconds between rounds (default 3)
  --group-start-in S   the DKG starts S seconds after the last seat joined (default 60)
  --group-phase-ms MS  each DKG phase, ms (default 10000); round 1 is due one phase after the start
  --group-listen ADDR  where this node's group member listens (libp2p; default ${DEFAULT_GROUP_LISTEN},
                       /ip4/0.0.0.0/tcp/PORT for other machines, with --group-announce)
  --group-announce ADDR how the others dial it: a multiaddr, or a host on the first listen port
  --group-http-port P  its drand HTTP API, the table's relay for its rounds (default ${DEFAULT_GROUP_HTTP_PORT})
  --group-url URL      that API as the others reach it (default http://ANNOUNCED-HOST:PORT)`

const JOIN_HELP = `usage: fairdeal table join LINK --data DIR [--listen ADDR|none]... [--json]
       fairdeal table join LINK --data DIR --group-listen ADDR [--group-announce ADDR]... [--group-http-port P] [--group-url URL]
       fairdeal table join INVITE --data DIR [--listen ADDR|none]... [--announce ADDR]... [--json]
       fairdeal table join TABLE-LINE --data DIR

A player's side of 'fairdeal table new' (its help explains the steps). With a LINK (http://…/seat#…):
dials the dealer's node, proves the link's one-time secret, waits until every seat has joined, checks
the dealer's signed final table and writes DIR/${CONFIG_FILE} from it (a used or altered link is refused
in one sentence; the same command run again from the same DIR waits again). With the INVITE the
dealer sent, prints a one-line answer (this node's peer id and addresses) to send back to the dealer;
with the table line the dealer sends once every seat is taken, writes DIR/${CONFIG_FILE} and checks
that the dealer's address answers. Creates the node's identity (DIR/${IDENTITY_FILE}) when DIR has none.

  --listen ADDR   where this node listens (repeatable). Default none: it listens nowhere and dials
                  the dealer (behind NAT); give addresses only if other players can reach it directly
  --announce ADDR the address others dial to reach this node, when it is not a listen address
  --data DIR      the node's data directory; the config is written there as ${CONFIG_FILE}
  --json          print one JSON object instead of text
A table whose nodes are also its beacon group ('table new --beacon own'): its LINK makes this node a
member too. The --group-* options say where the group reaches it (as for 'table new': default
--group-listen ${DEFAULT_GROUP_LISTEN}, --group-http-port ${DEFAULT_GROUP_HTTP_PORT}); the others must reach it there. The config
written then also holds the group; start 'fairdeal node' before the group's DKG starts (said then).`

const ADD_HELP = `usage: fairdeal table add ANSWER --data DIR

The dealer's second step of 'fairdeal table new' (its help explains the three steps): takes a
player's answer to its invite. Once every seat is taken, writes the dealer's DIR/${CONFIG_FILE} and
prints the table line, which each player gives to 'fairdeal table join' to write theirs.

  --data DIR      the dealer node's data directory (where 'table new' ran)`

/** Where a table's own beacon group reaches this node (`--beacon own`, and the join of such a table). */
const GROUP_MEMBER_OPTIONS = {
  'group-listen': { type: 'string', multiple: true },
  'group-announce': { type: 'string', multiple: true },
  'group-http-port': { type: 'string' },
  'group-url': { type: 'string' }
} satisfies OptionSpecs
type GroupMemberValues = { 'group-listen'?: string[], 'group-announce'?: string[], 'group-http-port'?: string, 'group-url'?: string }

/** This node's settings as a member of its table's own group. */
function groupMember (o: GroupMemberValues): { listen: string[], http: { host: string, port: number }, member: OwnGroupMember } {
  const me = memberSettings({ listen: o['group-listen'], announce: o['group-announce'], httpPort: o['group-http-port'], url: o['group-url'] }, 'group-')
  return { listen: me.listen, http: me.http, member: { addrs: me.addrs, url: me.url } }
}

/** The first --group-* option given, if any. */
function groupOptionGiven (o: Record<string, unknown>): string | undefined {
  const name = Object.keys(o).find(k => k.startsWith('group-') && o[k] !== undefined)
  return name === undefined ? undefined : `--${name}`
}

const NEW_OPTIONS = {
  game: { type: 'string' },
  seats: { type: 'string' },
  robots: { type: 'string' },
  beacon: { type: 'string' },
  id: { type: 'string' },
  scheme: { type: 'string' },
  timelock: { type: 'string' },
  'hand-length': { type: 'string' },
  'contribute-seconds': { type: 'string' },
  relay: { type: 'string' },
  listen: { type: 'string', multiple: true },
  announce: { type: 'string', multiple: true },
  data: { type: 'string' },
  force: { type: 'boolean' },
  answers: { type: 'boolean' },
  'web-port': { type: 'string' },
  'web-host': { type: 'string' },
  'page-url': { type: 'string' },
  json: { type: 'boolean' },
  'group-threshold': { type: 'string' },
  'group-period': { type: 'string' },
  'group-start-in': { type: 'string' },
  'group-phase-ms': { type: 'string' },
  ...GROUP_MEMBER_OPTIONS
} satisfies OptionSpecs

const JOIN_OPTIONS = {
  listen: { type: 'string', multiple: true },
  announce: { type: 'string', multiple: true },
  data: { type: 'string' },
  json: { type: 'boolean' },
  ...GROUP_MEMBER_OPTIONS
} satisfies OptionSpecs

const ADD_OPTIONS = {
  data: { type: 'string' }
} satisfies OptionSpecs

function requireData (data: string | undefined): string {
  if (data === undefined || data === '') throw new UsageError('--data DIR is required (see --help)')
  return data
}

export const commands = [
  defineCommand({
    name: 'table new',
    summary: 'dealer: set up a table; prints one link per seat (--answers: one invite per seat)',
    help: HELP,
    options: NEW_OPTIONS,
    run: async ({ values }) => await newTable({ ...values, data: requireData(values.data) })
  }),
  defineCommand({
    name: 'table join',
    summary: 'player: take the seat a link offers (an invite: prints the answer); writes the node config',
    help: JOIN_HELP,
    options: JOIN_OPTIONS,
    positionals: { min: 1, max: 1, missing: 'give the LINK (or INVITE, or table line) the dealer sent: one argument, quoted' },
    run: async ({ values, positionals }) => await joinTable(positionals[0], requireData(values.data), values.listen, values.announce, values.json === true, values)
  }),
  defineCommand({
    name: 'table add',
    summary: 'dealer (--answers): add a player\'s answer; when all are in, the table line',
    help: ADD_HELP,
    options: ADD_OPTIONS,
    positionals: { min: 1, max: 1, missing: 'give the ANSWER (one argument; quote it)' },
    run: async ({ values, positionals }) => await add(positionals[0], requireData(values.data))
  })
]

interface NewOptions extends GroupMemberValues { 'group-threshold'?: string, 'group-period'?: string, 'group-start-in'?: string, 'group-phase-ms'?: string, answers?: boolean, 'web-port'?: string, 'web-host'?: string, 'page-url'?: string, game?: string, seats?: string, robots?: string, beacon?: string, id?: string, scheme?: string, timelock?: string, 'hand-length'?: string, 'contribute-seconds'?: string, relay?: string, listen?: string[], announce?: string[], data: string, force?: boolean, json?: boolean }

/** `--listen` values: addresses, or `none` alone (listen nowhere); `fallback` when not given. */
function listenAddresses (given: string[] | undefined, fallback: readonly string[]): string[] {
  if (given === undefined) return [...fallback]
  if (given.includes('none')) {
    if (given.length > 1) throw new UsageError('--listen none cannot be given with addresses')
    return []
  }
  return given.map(a => parseListenAddress(a).toString())
}

/**
 * What others dial to reach this node: `--announce` addresses, or else the listen addresses. An
 * unspecified address (0.0.0.0, ::) listens on every interface but cannot be dialled.
 */
function announcedAddresses (announce: string[] | undefined, listen: string[]): string[] {
  // Announced addresses end up in the other members' table.peers: the same rule (DNS names too).
  const out = announce === undefined ? listen : announce.map(a => {
    if (!peerAddress.safeParse(a).success || a.includes('/p2p/')) {
      throw new UsageError(`--announce ${JSON.stringify(a.slice(0, 100))}: expected /ip4|ip6|dns|dns4|dns6/HOST/tcp/PORT or …/tcp/PORT/ws`)
    }
    try { return multiaddr(a).toString() } catch (err) { throw new UsageError(`--announce ${a}: ${(err as Error).message}`) }
  })
  const bad = out.find(a => /^\/ip4\/0\.0\.0\.0\/|^\/ip6\/::\//.test(a))
  if (bad !== undefined) {
    throw new UsageError(`${bad} cannot be dialled (it means every interface): give --announce with the address others reach this node at`)
  }
  return out
}

/** Whether others on other machines can use these addresses at all. */
/**
 * A one-line warning when none of the table's beacon relays answers from this machine within
 * BEACON_CHECK_MS (every hand would wait for its round and abort), with what to do; undefined when
 * one answers or the table has no beacon.
 */
async function beaconUnreachable (value: DraftTable['beacon'], shown: string): Promise<string | undefined> {
  const { resolveBeaconConfig } = await import('../../beacon/presets.js')
  const { parseBeaconConfig } = await import('../../core/beacon/index.js')
  const config = typeof value === 'string' ? await resolveBeaconConfig(value) : parseBeaconConfig(value, 'beacon')
  if (config.kind !== 'drand' || config.relays.length === 0) return undefined
  const signal = AbortSignal.timeout(BEACON_CHECK_MS)
  const reasons = await Promise.all(config.relays.map(async relay => {
    try {
      const res = await fetch(`${relay.replace(/\/$/, '')}/info`, { signal })
      await res.body?.cancel()
      return res.ok ? undefined : `HTTP ${res.status}`
    } catch (err) {
      const e = err as Error & { cause?: { code?: string, message?: string } }
      return signal.aborted ? `no answer in ${BEACON_CHECK_MS / 1000} s` : e.cause?.code ?? e.cause?.message ?? e.message
    }
  }))
  if (reasons.some(r => r === undefined)) return undefined
  return `warning: the beacon ${typeof value === 'string' ? shown : 'of this table'} cannot be reached from this machine ` +
    `(${config.relays[0]}: ${reasons[0] as string}${config.relays.length > 1 ? `, and ${config.relays.length - 1} more relays` : ''}): ` +
    'each hand would wait for its round and abort; without internet access use a beacon of your own ' +
    '(\'fairdeal beacon serve\' or a beacon group, given to --beacon as a config file), or --beacon none'
}

/** The TCP port of the first listen address that has one (the one the hint should name). */
function tcpPort (addresses: string[]): string | undefined {
  for (const a of addresses) {
    const m = /\/tcp\/(\d+)(\/|$)/.exec(a)
    if (m !== null && m[1] !== '0') return m[1]
  }
  return undefined
}

function loopbackOnly (addresses: string[]): boolean {
  return addresses.length > 0 && addresses.every(a => /^\/ip4\/127\.|^\/ip6\/::1\//.test(a))
}

/** init's identity step: the key in DIR, created (and said so) when DIR has none. */
async function identityOf (dir: string): Promise<NodeIdentity> {
  const identity = await loadOrCreateIdentity(dir)
  if (identity.created) process.stderr.write(`created a new identity in ${identity.path} (peer id ${identity.peerId})\n`)
  return identity
}

async function readDraft (dir: string): Promise<Draft> {
  const draft = await readDraftFile(dir)
  if (draft === undefined) throw new UsageError(`${dir} has no table being set up (${DRAFT_FILE}): run 'fairdeal table new' there first`)
  return draft
}

async function newTable (o: NewOptions): Promise<number> {
  if (o.game === undefined) throw new UsageError('--game is required (coinche, belote, duo or tarot)')
  const seatsN = parseIntOption(o.seats, '--seats', 2, 8)
  if (seatsN === undefined) throw new UsageError('--seats N is required')
  const robots = o.robots === undefined || o.robots === '' ? [] : o.robots.split(',').map(r => parseIntOption(r.trim(), '--robots', 1, seatsN - 1) as number)
  const beacon = o.beacon ?? 'none'
  // People's tables are dealer-blind: no node, the dealer's included, sees a card before its seat.
  // A robot is played by the dealer's node, which sees its cards anyway: such a table keeps the
  // commit-reveal schemes, cheaper to deal.
  const scheme = o.scheme ?? (robots.length === 0 ? 'blind-v1' : o.game === 'tarot' ? 'tarot-v1' : beacon === 'none' ? 'atout-v1' : 'atout-drand-v1')
  const timelock = o.timelock ?? 'off'
  if (timelock !== 'off' && !(RECOVERED_RULES as readonly string[]).includes(timelock)) {
    throw new UsageError(`--timelock must be off, ${RECOVERED_RULES.join(', ')}, got ${JSON.stringify(timelock)}`)
  }
  const handMinutes = parseIntOption(o['hand-length'], '--hand-length', 1, 7 * 24 * 60)
  if (handMinutes !== undefined && (timelock === 'off' || scheme !== 'blind-v1')) throw new UsageError('--hand-length goes with --timelock on a blind-v1 table (it sets when a seat that walks away is opened)')
  const contributeSeconds = parseIntOption(o['contribute-seconds'], '--contribute-seconds', 1, 3_600)
  const listen = listenAddresses(o.listen, DEFAULT_LISTEN)
  // The dealer is the one member everyone dials: it must be reachable somewhere (or through its relay).
  if (listen.length === 0 && o.relay === undefined) throw new UsageError('the dealer must listen somewhere: every player\'s node dials it (give --listen ADDR, or --relay ADDR for a dealer nobody can dial)')
  const announce = announcedAddresses(o.announce, listen)
  const configPath = join(o.data, CONFIG_FILE)
  // A table still joining by links has its node.json already (seats not taken are null): a draft, not a table.
  if (await exists(configPath) && !joiningTable(await readNodeConfigJson(configPath))) throw new UsageError(`${configPath} exists: this node already has a table (remove it to set up another)`)
  if (o.force !== true && await exists(join(o.data, DRAFT_FILE))) {
    // The draft holds the seats taken so far and the port the invites name: never replaced unasked.
    const pending = await readDraft(o.data)
    const taken = pending.table.seats.filter(s => s !== null).length
    throw new UsageError(`${join(o.data, DRAFT_FILE)} holds table ${pending.table.id} being set up (${taken} of ${pending.table.seats.length} seats taken): ` +
      (pending.links !== undefined ? 'its links still work; ' : 'add its answers with \'fairdeal table add\', or ') + 'give --force to replace it')
  }
  const webPort = parseIntOption(o['web-port'], '--web-port', 1, 65535) ?? DEFAULT_WEB_PORT
  const webHost = o['web-host'] ?? '127.0.0.1'
  if (!(WEB_HOSTS as readonly string[]).includes(webHost)) throw new UsageError(`--web-host must be ${WEB_HOSTS.join(', ')}, got ${JSON.stringify(webHost.slice(0, 80))}`)
  if (webHost !== '127.0.0.1' && o['page-url'] === undefined) throw new UsageError('--web-host goes with --page-url: the links must name the page as the players reach it (the host\'s address and published port)')
  if (o.answers === true && (o['web-port'] !== undefined || o['page-url'] !== undefined || o['web-host'] !== undefined)) throw new UsageError(`${o['web-port'] !== undefined ? '--web-port' : o['web-host'] !== undefined ? '--web-host' : '--page-url'} is for the links' page: it does not go with --answers`)
  // Checked before any key is made: a bad option changes nothing.
  const page = pageUrl(o['page-url'], webPort)
  let beaconValue: DraftTable['beacon'] = beacon
  // The table's own group: its nodes are its beacon; the group's chain comes after its DKG.
  const own = beacon === 'own' ? ownGroupOptions(o, seatsN, robots.length) : undefined
  const groupOption = groupOptionGiven(o as unknown as Record<string, unknown>)
  if (own === undefined && groupOption !== undefined) throw new UsageError(`${groupOption} goes with --beacon own (a table whose nodes are also its beacon group)`)
  if (own !== undefined) beaconValue = { group: o.id ?? `${o.game}-night`, threshold: own.threshold, period: own.period } satisfies OwnGroupBeacon
  else if (beacon.includes('/') || beacon.endsWith('.json')) {
    // A file is read here and travels in the table block: the players' machines do not have it.
    try { beaconValue = JSON.parse((await readBounded(beacon, MAX_BEACON_FILE_BYTES)).toString('utf8')) as Record<string, unknown> } catch (err) {
      throw new UsageError(`--beacon ${beacon}: ${(err as Error).message}`)
    }
  }
  const seatsFor = (dealer: string): DraftTable['seats'] => Array.from({ length: seatsN }, (_, i) => i === 0 ? dealer : robots.includes(i) ? ROBOT : null)
  const tableFor = (dealer: string): DraftTable => ({
    id: o.id ?? `${o.game}-night`, game: o.game as string, scheme, dealer, seats: seatsFor(dealer), beacon: beaconValue,
    ...(timelock !== 'off' ? { timelock: timelock as RecoveredRule } : {}),
    ...(handMinutes !== undefined ? { timelockHandMs: handMinutes * 60_000 } : {}),
    // In the table block, so the links and the final table carry it: every seat checks the COMMIT's deadline against it.
    ...(contributeSeconds !== undefined ? { timeouts: { contributeMs: contributeSeconds * 1_000 } } : {}),
    ...(o.relay !== undefined ? { relay: o.relay } : {})
  })
  // Everything a node config checks (game, seat count, scheme against beacon) is checked now, on the
  // complete table it will become, before any key is made.
  await checkTable(tableFor(placeholder(9)), listen, {}, o.data)
  const beaconWarning = own !== undefined ? undefined : await beaconUnreachable(beaconValue, beacon)
  const identity = await identityOf(o.data)
  const table = tableFor(identity.peerId)
  if (beaconWarning !== undefined) process.stderr.write(beaconWarning + '\n')
  if (own !== undefined) {
    const n = ownGroupSize(table)
    process.stderr.write(`note: the table's ${n} nodes (the dealer and ${n - 1} seat${n > 2 ? 's' : ''}) are also its beacon group ${table.id}, ${own.threshold} of ${n}: ` +
      `every player joins with 'fairdeal table join LINK --data DIR --group-listen ADDR' (the seat page cannot be a member); the DKG starts ${own.draft.startInMs / 1000} s after the last one joined, and the table deals once it is done\n`)
    if (timelock !== 'off' && !recoverableWithoutDealer(n, own.threshold)) {
      process.stderr.write(`note: with its dealer gone, the ${n - 1} other node${n > 2 ? 's' : ''} of a ${own.threshold}-of-${n} group cannot make the round that opens the timelocks: ` +
        `a hand whose dealer stops cannot be finished (a table recovers with n − 1 ≥ t: three nodes or more with the default threshold)\n`)
    }
  }
  if (o.answers !== true && openSeats(table).length > 0) return await newLinks(o, { listen, announce, table, peers: {}, ...(own !== undefined ? { group: own.draft } : {}) }, webPort, page)
  // A table joining by links that --force replaces with answers leaves no half-made node.json behind.
  if (await exists(configPath)) await rm(configPath)
  await writeJson(join(o.data, DRAFT_FILE), { listen, announce, table, peers: {} } satisfies Draft)
  const dealerAddresses = announce.map(a => `${a}/p2p/${identity.peerId}`)
  const invites = openSeats(table).map(seat => ({ seat, invite: encodeInvite({ v: 1, table, seat, dealerAddresses, peers: {} }) }))
  if (o.json === true) {
    process.stdout.write(JSON.stringify({ peerId: identity.peerId, invites }) + '\n')
    return 0
  }
  process.stdout.write(`table ${table.id}: ${table.game}, ${seatsN} seats, ${table.scheme}${timelock !== 'off' ? `, time-locked (${timelock})` : ''}, ` +
    `dealer ${identity.peerId} (seat 0)${robots.length > 0 ? `, robots at seat ${robots.join(', ')}` : ''}\n`)
  if (loopbackOnly(announce) && invites.length > 0 && o.relay === undefined) {
    const port = tcpPort(listen) ?? '7400'
    process.stderr.write(`note: the invites name only loopback addresses (${announce.join(', ')}): players on other machines cannot reach them; ` +
      `give --listen /ip4/0.0.0.0/tcp/${port} and --announce /ip4/YOUR-PUBLIC-IP/tcp/${port} (with that port forwarded to this machine)\n`)
  }
  if (invites.length === 0) {
    await finish(o.data, { listen, announce, table, peers: {} })
    return 0
  }
  process.stdout.write(`send each player their invite; they run 'fairdeal table join INVITE --data DIR':\n`)
  for (const { seat, invite } of invites) process.stdout.write(`seat ${seat}: ${invite}\n`)
  return 0
}

/** The seat page's URL the links name: --page-url, or the dealer's node on 127.0.0.1. */
function pageUrl (given: string | undefined, webPort: number): string {
  if (given === undefined) return `http://127.0.0.1:${webPort}${SEAT_PAGE_PATH}`
  let url: URL
  try { url = new URL(given) } catch { throw new UsageError(`--page-url ${JSON.stringify(given.slice(0, 100))}: not a URL (e.g. https://example.org/fairdeal/seat.html)`) }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--page-url ${given}: must be an http:// or https:// URL`)
  if (url.hash !== '' || given.includes('#')) throw new UsageError(`--page-url ${given}: must have no # part (the invite goes there)`)
  return given
}

/**
 * `table new` with links: one link per open seat, each with its one-time secret, whose digest goes
 * into the draft; the dealer's node.json is written now, its open seats null, so that its node runs
 * at once and takes the seats as they join (src/daemon/table-join.ts).
 */
async function newLinks (o: NewOptions, base: Draft, webPort: number, page: string): Promise<number> {
  const { table } = base
  const secrets = new Map(openSeats(table).map(seat => [seat, newJoinSecret(n => new Uint8Array(randomBytes(n)))]))
  const draft: Draft = { ...base, links: { digests: Object.fromEntries([...secrets].map(([seat, secret]) => [String(seat), secretDigest(secret)])), webPort, ...(o['web-host'] === '0.0.0.0' || o['web-host'] === '::' ? { webHost: o['web-host'] } : {}) } }
  await writeJson(join(o.data, DRAFT_FILE), draft)
  await writeJson(join(o.data, CONFIG_FILE), configFor(draft))
  const dealerAddresses = dealerAddressesOf(draft)
  const links = [...secrets].map(([seat, secret]) => ({
    seat, link: formatLink(page, { v: 2, table, seat, secret, dealerAddresses } satisfies LinkInvite)
  }))
  const configPath = join(o.data, CONFIG_FILE)
  if (o.json === true) {
    process.stdout.write(JSON.stringify({ peerId: table.dealer, config: configPath, links }) + '\n')
    return 0
  }
  const own = ownGroupBeaconOf(table.beacon)
  process.stdout.write(`table ${table.id}: ${table.game}, ${table.seats.length} seats, ${table.scheme}${table.timelock !== undefined ? `, time-locked (${table.timelock})` : ''}` +
    `${own !== undefined ? `, on its own beacon group (${own.threshold} of its ${ownGroupSize(table)} nodes, a round every ${own.period} s)` : ''}, dealer ${table.dealer} (seat 0)\n`)
  if (loopbackOnly(base.announce ?? base.listen) && table.relay === undefined && o['page-url'] === undefined) {
    process.stderr.write('note: the links name only this machine (127.0.0.1): players on other machines need --listen/--announce addresses they reach ' +
      'and the page hosted where they can open it (docs/browser-seat.md, "Who serves the page")\n')
  }
  if (table.relay !== undefined) {
    process.stderr.write(`note: the links name the dealer's address through the relay too: run 'fairdeal relay --config ${configPath}' (it lets the joining players through to this dealer until every seat is taken)\n`)
  }
  if (!dealerAddresses.some(a => a.includes('/ws/')) && table.relay === undefined) {
    process.stderr.write('note: the dealer listens on no WebSockets address (…/tcp/PORT/ws): the seat page cannot reach it, only \'fairdeal table join LINK\' can\n')
  }
  process.stdout.write(`send each player their link (it works once); it opens the seat page in a browser, or 'fairdeal table join LINK --data DIR' takes it:\n`)
  for (const { seat, link } of links) process.stdout.write(`seat ${seat}: ${link}\n`)
  process.stdout.write(`start the dealer's node now with 'fairdeal node --config ${configPath}': it serves the page on 127.0.0.1:${webPort}, takes the seats as they join, and runs the table once every seat is taken (then 'fairdeal hand deal --data ${o.data}' deals a hand)\n`)
  return 0
}

/** Throws a UsageError naming what a node config would refuse in this table, seats not yet taken filled in. */
async function checkTable (table: DraftTable, listen: string[], peers: Record<string, string[]>, dir: string): Promise<void> {
  try {
    getScheme(table.scheme)
    const filled = { ...table, seats: table.seats.map((s, i) => s ?? placeholder(i)) }
    await parseNodeConfig(configFor({ listen, table: filled, peers, group: placeholderGroup(filled) }), join(dir, CONFIG_FILE))
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/field table\./, 'table '))
  }
}

/** For a table on its own group, a stand-in group of its nodes (addresses nobody uses), only to check the rest of the table. */
function placeholderGroup (table: DraftTable): DraftGroup | undefined {
  let beacon
  // A table id no group may have is said by the table's own check (field table.id).
  try { beacon = ownGroupBeaconOf(table.beacon) } catch { return undefined }
  if (beacon === undefined) return undefined
  const member = { addrs: ['/ip4/127.0.0.1/tcp/1'], url: 'http://127.0.0.1:1' }
  const members = new Map([table.dealer, ...table.seats.filter((s): s is string => s !== null)].map(p => [p, member]))
  let final
  try { final = finalOwnGroup({ table, beacon, members, start: Date.now(), phaseMs: 10_000 }) } catch { return undefined }
  return { listen: [DEFAULT_GROUP_LISTEN], http: { host: '127.0.0.1', port: 0 }, member, final }
}

/**
 * `--beacon own`'s settings: the group's threshold (2 to n, default floor(n/2) + 1 over the table's
 * n nodes) and period, and this node's member settings and the DKG's timing for the draft.
 */
function ownGroupOptions (o: NewOptions, seats: number, robots: number): { threshold: number, period: number, draft: DraftGroup & { startInMs: number } } {
  if (o.answers === true) throw new UsageError('--beacon own goes with the links, not --answers: each seat\'s node says where the group reaches it when it joins')
  const n = seats - robots
  if (n < 2) throw new UsageError('--beacon own needs a human seat besides the dealer\'s: the table\'s nodes are its beacon group')
  const threshold = parseIntOption(o['group-threshold'], '--group-threshold', 2, n) ?? ownGroupThreshold(n)
  const period = parseIntOption(o['group-period'], '--group-period', 1, 3600) ?? 3
  const phaseMs = parseIntOption(o['group-phase-ms'], '--group-phase-ms', 100, 3_600_000) ?? 10_000
  const startInMs = (parseIntOption(o['group-start-in'], '--group-start-in', 1, 86_400) ?? 60) * 1000
  return { threshold, period, draft: { ...groupMember(o), phaseMs, startInMs } }
}

/** Stand-in peer ids (valid keys nobody uses) for seats not yet taken, only to check the rest of the table. */
function placeholder (i: number): string {
  return peerIdFromPublicKey(nativePublicKey(new Uint8Array(32).fill(200 + i)))
}

async function joinTable (text: string, dir: string, listenGiven: string[] | undefined, announceGiven: string[] | undefined, json: boolean, groupValues: GroupMemberValues = {}): Promise<number> {
  // A player listens nowhere unless told: its node dials the dealer (the usual player is behind NAT).
  const listen = listenAddresses(listenGiven, [])
  if (isLink(text)) return await joinByLink(parseLink(text), dir, listen, json, groupValues)
  const given = groupOptionGiven(groupValues as Record<string, unknown>)
  if (given !== undefined) throw new UsageError(`${given} goes with the LINK of a table whose nodes are also its beacon group`)
  const invite: Invite = decodeInvite(text)
  const announce = announcedAddresses(announceGiven, listen)
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
    for (const [p, addrs] of Object.entries(invite.peers)) if (p !== identity.peerId && addrs.length > 0) peers[p] = addrs
    // The dealer's own addresses (its address through the relay is the table's relay, not a peer address).
    const dealerAddresses = invite.dealerAddresses.filter(a => !a.includes('/p2p-circuit')).map(a => a.replace(/\/p2p\/[^/]+$/, ''))
    if (dealerAddresses.length > 0) peers[invite.table.dealer] = dealerAddresses
    const draft: Draft = { listen: listenGiven !== undefined ? listen : mine?.listen ?? listen, table: invite.table, peers }
    await writeConfig(dir, draft)
    const reach = await reachDealer(identity, invite)
    if (json) {
      process.stdout.write(JSON.stringify({ peerId: identity.peerId, config: configPath, reach }) + '\n')
    } else {
      process.stdout.write(`wrote ${configPath}: seat ${invite.table.seats.indexOf(identity.peerId)} of table ${invite.table.id}; ` +
        `start the node with 'fairdeal node --config ${configPath}'\n`)
      process.stderr.write(reachText(reach) + '\n')
    }
    return 0
  }
  if (await exists(configPath)) throw new UsageError(`${configPath} exists: this node already has a table (remove it to join another)`)
  const identity = await identityOf(dir)
  if (identity.peerId === invite.table.dealer) throw new UsageError(`${dir} holds the dealer's own key: join from the player's data directory`)
  const table = { ...invite.table, seats: [...invite.table.seats] }
  table.seats[invite.seat] = identity.peerId
  await writeJson(join(dir, DRAFT_FILE), { listen, announce, table, peers: { [invite.table.dealer]: invite.dealerAddresses } } satisfies Draft)
  const answer = encodeAnswer({ v: 1, table: table.id, seat: invite.seat, peer: identity.peerId, addresses: announce })
  // No dial now: the dealer's node starts only once every seat is taken, so nothing can answer yet.
  if (json) {
    process.stdout.write(JSON.stringify({ peerId: identity.peerId, seat: invite.seat, answer }) + '\n')
    return 0
  }
  process.stderr.write(`seat ${invite.seat} of table ${table.id} (${table.game}, ${table.scheme}${table.timelock !== undefined && table.timelock !== 'off' ? `, time-locked: ${table.timelock}` : ''}); ` +
    'send this answer to the dealer, who runs \'fairdeal table add ANSWER\':\n')
  process.stdout.write(answer + '\n')
  process.stderr.write('the dealer starts its node once every seat is taken and sends you the table line; ' +
    '\'fairdeal table join TABLE-LINE\' then writes your config and checks that your machine reaches the dealer\n')
  return 0
}

/**
 * `table join LINK`: dials the dealer's node, proves the link's secret on the join protocol, waits
 * until every seat has joined, checks the dealer's signed final table and writes this node's config
 * from it. Run again with the same link (same data directory) it asks again: the seat is this key's.
 */
async function joinByLink (invite: LinkInvite, dir: string, listen: string[], json: boolean, groupValues: GroupMemberValues): Promise<number> {
  const configPath = join(dir, CONFIG_FILE)
  // A table whose nodes are also its beacon group: this node is a member, reachable by the others.
  let own
  try { own = ownGroupBeaconOf(invite.table.beacon) } catch (err) { throw new UsageError(`this link is damaged or from another fairdeal version: ${(err as Error).message}`) }
  const given = groupOptionGiven(groupValues as Record<string, unknown>)
  if (own === undefined && given !== undefined) throw new UsageError(`${given} goes with a table whose nodes are also its beacon group, and table ${invite.table.id}'s beacon is another`)
  const me = own !== undefined ? groupMember(groupValues) : undefined
  if (await exists(configPath)) throw new UsageError(`${configPath} exists: this node already has a table (remove it to join another)`)
  const identity = await identityOf(dir)
  if (identity.peerId === invite.table.dealer) throw new UsageError(`${dir} holds the dealer's own key: join from the player's data directory`)
  const relay = invite.table.relay
  const addresses = [...new Set([...invite.dealerAddresses, ...(relay !== undefined ? [circuitAddress(relay, invite.table.dealer)] : [])])]
  const node = await createNode({ privateKey: identity.privateKey, listen: [], logger: pino({ level: 'silent' }), relays: relay !== undefined ? [{ address: relay, reserve: false }] : [] })
  let final
  // Waiting for the other seats is waiting on a socket alone, which does not keep Node running.
  const alive = setInterval(() => {}, 60_000)
  try {
    let stream
    const failures: string[] = []
    let hungUp = 0
    for (const a of addresses) {
      try {
        stream = await node.dialProtocol(dialAddress(a, invite.table.dealer), JOIN_PROTOCOL, { signal: AbortSignal.timeout(REACH_CHECK_MS) })
        break
      } catch (err) {
        failures.push(`${a}: ${dialFailureHint(err)}`)
        if (dialFailureKind(err) === 'closed') hungUp++
      }
    }
    // A dealer's node past joining admits only the table's members: a stranger is hung up on.
    if (stream === undefined && hungUp > 0 && hungUp === addresses.length) {
      throw new UsageError(linkUsedUp(invite.table.id))
    }
    if (stream === undefined) throw new UsageError(`cannot reach the dealer's node (is it running? 'fairdeal node --config …' on the dealer's machine): ${failures.join('; ')}`)
    final = await joinOverStream(stream, invite, identity.peerId, waiting => {
      process.stderr.write(`took seat ${invite.seat} of table ${invite.table.id} (${invite.table.game}, ${invite.table.scheme}${own !== undefined ? `, its own beacon group, ${own.threshold} of its nodes` : ''})` +
        (waiting.length > 0 ? `; waiting for seat ${waiting.join(', ')} to join (the same command, run again, waits again)\n` : '\n'))
    }, me?.member)
  } finally {
    // The dealer's joining node stops once every seat is taken: a graceful close may wait on it forever.
    for (const c of node.getConnections()) c.abort(new Error('join done'))
    try { await node.stop() } catch {}
    clearInterval(alive)
  }
  const peers: Record<string, string[]> = {}
  for (const [p, addrs] of Object.entries(final.body.peers)) if (p !== identity.peerId && addrs.length > 0) peers[p] = addrs
  // The dealer's own addresses (its address through the relay is the table's relay, not a peer address).
  const dealerAddresses = final.body.dealerAddresses.filter(a => !a.includes('/p2p-circuit')).map(a => a.replace(/\/p2p\/[^/]+$/, ''))
  if (dealerAddresses.length > 0) peers[invite.table.dealer] = dealerAddresses
  let group: DraftGroup | undefined
  if (me !== undefined) {
    // The group the dealer made of the table's nodes, as this node accepts it.
    const problem = checkOwnGroup(final.body.group, final.body.table, identity.peerId, me.member)
    if (problem !== undefined) throw new UsageError(`the dealer's table is refused: its own beacon group: ${problem}`)
    group = { ...me, final: final.body.group }
  }
  await writeConfig(dir, { listen, table: final.body.table, peers, ...(group !== undefined ? { group } : {}) })
  const dkg = (final.body.group as { dkg?: { start?: number } } | undefined)?.dkg?.start
  if (json) process.stdout.write(JSON.stringify({ peerId: identity.peerId, seat: invite.seat, config: configPath, table: final.body.table, ...(dkg !== undefined ? { dkgStart: dkg } : {}) }) + '\n')
  else {
    process.stdout.write(`wrote ${configPath}: seat ${invite.seat} of table ${invite.table.id}, every seat taken ` +
      `(${final.body.table.seats.map((p, i) => `${i}: ${String(p)}`).join(', ')}); start the node with 'fairdeal node --config ${configPath}'` +
      (dkg !== undefined && me !== undefined ? ` before ${new Date(dkg).toISOString()}, when the table's own beacon group starts its DKG (this node's member listens on ${me.listen.join(', ')}, its drand API at ${me.member.url})` : '') + '\n')
  }
  return 0
}

/**
 * Dials the dealer once from this machine, with this node's key, and hangs up: the one address a
 * player needs. A throwaway node that listens nowhere, as the player's own node will.
 */
async function reachDealer (identity: NodeIdentity, invite: Invite): Promise<ReachResult> {
  const relay = invite.table.relay
  // Through the relay last, as the node will: a direct address, when there is one, is tried first.
  const addresses = [...new Set([...invite.dealerAddresses, ...(relay !== undefined ? [circuitAddress(relay, invite.table.dealer)] : [])])]
  if (addresses.length === 0) return { ok: false, addresses: [], reason: 'the invite names no address for the dealer', kind: 'other' }
  const node = await createNode({ privateKey: identity.privateKey, listen: [], logger: pino({ level: 'silent' }), relays: relay !== undefined ? [{ address: relay, reserve: false }] : [] })
  try {
    return await probePeer(node, invite.table.dealer, addresses, REACH_CHECK_MS)
  } finally {
    try { await node.stop() } catch {}
  }
}

/** One or two lines for the player on whether the dealer's node answered, and what to do if not. */
function reachText (r: ReachResult): string {
  if (r.ok) return `reachable: the dealer's node answered at ${r.address} (${r.ms} ms)`
  const where = r.addresses.length > 0 ? ` at ${r.addresses.join(' or ')}` : ''
  return `cannot reach the dealer${where}: ${r.reason}\n` +
    'Your node dials the dealer when it starts and keeps trying; it needs no open port of its own.'
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
  // A player that listens nowhere (behind NAT) is reached on the connection its node opens.
  process.stdout.write(`seat ${answer.seat}: ${answer.peer}${answer.addresses.length === 0 ? ' (no address: its node dials this one)' : ''}\n`)
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
    dealerAddresses: (draft.announce ?? draft.listen).map(a => `${a}/p2p/${draft.table.dealer}`),
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
