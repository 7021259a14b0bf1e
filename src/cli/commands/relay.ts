import { ROBOT } from '../../core/hand/messages.js'
import { defineCommand, type OptionSpecs, type ParsedArgs } from '../command.js'
import { stat } from 'node:fs/promises'
import { UsageError } from '../errors.js'
import { NetInputError } from '../../net/errors.js'
import { loadOrCreateIdentity } from '../../net/identity.js'
import { dialAddress, parseListenAddress } from '../../net/addresses.js'
import { createRelay, reservationsOf } from '../../net/relay.js'
import { MAX_STRANGER_CONNECTIONS } from '../../net/limits.js'
import { nodeMembers, parseNodeConfig, peerAddress, readNodeConfigJson } from '../../daemon/config.js'
import { createLogger } from '../../daemon/logger.js'
import { peerIdSchema } from '../../core/peer-id-schema.js'

const HELP = `usage: fairdeal relay --data DIR --listen ADDR... [--announce ADDR]... (--config FILE | --member PEERID | --dealer PEERID)...

Runs a circuit relay for tables whose dealer nobody can dial (a home without port forwarding): the
dealer's node holds a reservation on the relay, and the players' nodes reach the dealer through it.
Only the tables' members may connect (everyone else is refused after the handshake); while a
table of a --config still takes seats by links, a player joining by link (no member yet) may
connect too, and be relayed to that table's dealer only, whose node asks it for its link's
one-time secret and serves it nothing else. The members' relayed connections are not cut after 2 minutes or 128 KiB as a public relay's are. Give the printed
address to 'fairdeal table new --relay ADDR' (or a table block's "relay"). Runs until SIGINT or SIGTERM.

  --data DIR       the relay's data directory (its identity, created when missing)
  --listen ADDR    where it listens, /ip4/HOST/tcp/PORT or …/tcp/PORT/ws (repeatable; required)
  --announce ADDR  the address the tables' nodes dial, when it is not a listen address (a public
                   address or /dns4/NAME/tcp/PORT; repeatable)
  --config FILE    a node config (the dealer's DIR/node.json): every member of its tables may use
                   the relay, and players joining its tables by links reach the dealer through it;
                   re-read when it changes, so seats that join later are let in (repeatable)
  --member PEERID  a peer id that may use the relay (repeatable)
  --dealer PEERID  a dealer whose node.json this machine does not have (the relay runs elsewhere):
                   it may use the relay, and anyone may be relayed to it (at most
                   ${MAX_STRANGER_CONNECTIONS} non-members at once), so its players join by their links
                   and then play through the relay; its node serves a non-member nothing but the
                   join of a seat still open (repeatable)`

const OPTIONS = {
  data: { type: 'string' },
  listen: { type: 'string', multiple: true },
  announce: { type: 'string', multiple: true },
  config: { type: 'string', multiple: true },
  member: { type: 'string', multiple: true },
  dealer: { type: 'string', multiple: true }
} satisfies OptionSpecs

export const command = defineCommand({
  name: 'relay',
  summary: 'run a circuit relay for a dealer nobody can dial',
  help: HELP,
  options: OPTIONS,
  run
})

async function run ({ values }: ParsedArgs<typeof OPTIONS>): Promise<number> {
  if (values.data === undefined || values.data === '') throw new UsageError('--data DIR is required')
  if (values.listen === undefined) throw new UsageError('--listen ADDR is required (where the tables\' nodes reach the relay)')
  const configs = values.config ?? []
  const given = values.member ?? []
  const dealers = values.dealer ?? []
  if (configs.length === 0 && given.length === 0 && dealers.length === 0) throw new UsageError('give --config FILE, --member PEERID or --dealer PEERID: the relay serves the tables\' members only')
  for (const m of given) if (!peerIdSchema.safeParse(m).success) throw new UsageError(`--member ${m.slice(0, 80)}: not an Ed25519 libp2p peer id`)
  for (const m of dealers) if (!peerIdSchema.safeParse(m).success) throw new UsageError(`--dealer ${m.slice(0, 80)}: not an Ed25519 libp2p peer id`)
  let listen: string[]
  try { listen = values.listen.map(a => parseListenAddress(a).toString()) } catch (err) {
    throw new UsageError(`--listen: ${(err as NetInputError).message}`)
  }
  for (const a of values.announce ?? []) {
    if (!peerAddress.safeParse(a).success || a.includes('/p2p/')) throw new UsageError(`--announce ${a.slice(0, 100)}: expected /ip4|ip6|dns|dns4|dns6/HOST/tcp/PORT or …/tcp/PORT/ws`)
  }
  const members = new Set<string>([...given, ...dealers])
  // Dealers whose table still takes seats by links: joining players are relayed to them. A --dealer
  // stays in the set: this relay cannot read its table, so its players are never members here.
  const joining = new Set<string>(dealers)
  const fromConfigs = new ConfigMembers(configs)
  const take = (found: ConfigRead): string[] => {
    const added = found.members.filter(m => !members.has(m))
    for (const m of added) members.add(m)
    for (const d of found.complete) if (!dealers.includes(d)) joining.delete(d)
    for (const d of found.joining) joining.add(d)
    return added
  }
  // Read once before starting, so that a wrong path or config is refused in one line.
  take(await fromConfigs.read(true))
  const identity = await loadOrCreateIdentity(values.data)
  if (identity.created) process.stderr.write(`created a new identity in ${identity.path} (peer id ${identity.peerId})\n`)
  process.umask(0o077)
  const logger = createLogger()
  const relay = await createRelay({ privateKey: identity.privateKey, listen, announce: values.announce, members, joining, logger })
  const addresses = (values.announce ?? relay.getMultiaddrs().map(a => a.toString().replace(/\/p2p\/[^/]+$/, '')))
    .map(a => dialAddress(a, identity.peerId).toString())
  for (const a of addresses) process.stdout.write(`relay: ${a}\n`)
  logger.info({ addresses, members: members.size, joining: joining.size }, `relay ready for ${members.size} member${members.size === 1 ? '' : 's'}: give a dealer's table --relay ${addresses[0]}`)
  // Seats that join a table later appear in its dealer's config: the relay lets them in too.
  const timer = setInterval(() => {
    fromConfigs.read(false).then(found => {
      const added = take(found)
      if (added.length > 0) logger.info({ added, members: members.size, joining: joining.size }, 'members added from the configs')
    }, (err: unknown) => { logger.warn({ err: (err as Error).message }, 'could not re-read a config') })
  }, 2_000)
  timer.unref()
  await new Promise<void>(resolve => {
    const stop = (signal: string): void => { logger.info({ signal, reservations: reservationsOf(relay) }, 'stopping'); resolve() }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
  clearInterval(timer)
  await relay.stop()
  logger.flush?.()
  return 0
}

/**
 * A dealer's config for a table still taking its seats by links has `null` for each seat not taken
 * yet (src/daemon/table-join.ts). An open seat is nobody the relay serves until it is taken: it is
 * read as a robot (no member), and the file is read again once the node writes the final table.
 */
function openSeatsAsRobots (raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null) return raw
  const fix = (t: unknown): unknown => {
    const seats = (t as { seats?: unknown } | null)?.seats
    return Array.isArray(seats) ? { ...(t as object), seats: seats.map(s => s === null ? ROBOT : s) } : t
  }
  const r = raw as { table?: { table?: unknown }, tables?: Array<{ table?: unknown }> }
  return {
    ...r,
    ...(r.table !== undefined ? { table: fix(r.table) } : {}),
    ...(Array.isArray(r.tables) ? { tables: r.tables.map(fix) } : {})
  }
}

/** What the configs read name: their tables' members, and the dealers of tables still taking seats by links (or no more). */
interface ConfigRead { members: string[], joining: string[], complete: string[] }

/** The dealers of a config's tables, split by whether a seat is still open (null). */
function dealersByJoining (raw: unknown): { joining: string[], complete: string[] } {
  const r = raw as { table?: unknown, tables?: unknown[] } | null
  const tables = [r?.table, ...(Array.isArray(r?.tables) ? r.tables : [])].filter((t): t is { dealer?: unknown, seats?: unknown } => typeof t === 'object' && t !== null)
  const out = { joining: [] as string[], complete: [] as string[] }
  for (const t of tables) {
    if (typeof t.dealer !== 'string') continue
    ;(Array.isArray(t.seats) && t.seats.includes(null) ? out.joining : out.complete).push(t.dealer)
  }
  return out
}

/** The members named by node configs, re-read only when a file changed. */
class ConfigMembers {
  readonly #seen = new Map<string, number>()
  constructor (private readonly files: readonly string[]) {}

  async read (first: boolean): Promise<ConfigRead> {
    const out: ConfigRead = { members: [], joining: [], complete: [] }
    for (const file of this.files) {
      let mtime: number
      try { mtime = (await stat(file)).mtimeMs } catch (err) {
        if (first) throw new UsageError(`--config ${file}: ${(err as Error).message}`)
        continue
      }
      if (!first && this.#seen.get(file) === mtime) continue
      this.#seen.set(file, mtime)
      try {
        const raw = await readNodeConfigJson(file)
        const config = await parseNodeConfig(openSeatsAsRobots(raw), file)
        out.members.push(...nodeMembers(config.tables))
        const dealers = dealersByJoining(raw)
        out.joining.push(...dealers.joining)
        out.complete.push(...dealers.complete)
      } catch (err) {
        if (first) throw new UsageError(`--config ${file}: ${(err as Error).message}`)
        throw err
      }
    }
    return out
  }
}
