import { defineCommand, type OptionSpecs, type ParsedArgs } from '../command.js'
import { access, stat } from 'node:fs/promises'
import { exists } from '../files.js'
import { join } from 'node:path'
import { UsageError } from '../errors.js'
import { verdictExitCode } from '../verdict.js'
import { parseIntOption, parseSeqRange } from '../options.js'
import { quietOnClosedStdout } from '../stdout.js'
import { verifyLog, inThreadChecker, formatFailure, summaryLine, type LineChecker, type LogFailure, type LogLine, type LogVerdict } from '../../core/log/index.js'
import { verifyLogPayload } from '../../core/receipt.js'
import { nativeVerifyDocument } from '../../crypto/native-crypto.js'
import { createCheckPool, defaultWorkerCount } from '../../store/check-pool.js'
import { readJsonLines } from '../../store/jsonl.js'
import { LogInputError } from '../../store/errors.js'
import { checkWitnessLine, WitnessComparer, type WitnessStatement } from '../../core/log/witness.js'
import type { Libp2p } from '@libp2p/interface'
import { distModuleUrl } from '../../store/package-files.js'

const USAGE = `usage: fairdeal verify FILE           a log exported with 'fairdeal log export' ('-' for stdin)
       fairdeal verify --data DIR     the log of a node's data directory (running or stopped)
       fairdeal verify --peer ADDR    fetch a running node's log over libp2p and verify it here

Re-verifies every entry alone, offline: order and links, the owner's signature on every entry and
on the head, and each receipt or abort record (every message signature, commitment, nonces, key,
deck, each seat's cards, beacon signatures, the rules of each abort reason); then the hand chains:
each dealer's COMMITs at a table link hand to hand, and no committed hand is missing from the log.

  --from SEQ, --to SEQ   the range the input holds, for a partial export (default: the whole log,
                         from seq 0 to the seq named by the signed head)
  --owner PEERID         the log must be this peer's (default: with --peer, that peer; with --data,
                         the directory's identity)
  --as DIR               with --peer or --witness: dial as the node of data directory DIR (a
                         table member), instead of as a throwaway identity; when that node
                         runs, the heads it witnessed for the owner are checked too
  --witness ADDR         also fetch the heads this peer witnessed for the log's owner and check
                         the log against them (repeatable; a table node serves them to members)
  --config FILE          the node config naming the table of --data DIR (or --as DIR); default
                         DIR/node.json, or DIR.json beside DIR (the demo's layout)
  --json                 one JSON object per failure, then a summary object
  --chain-only           skip the receipt checks: order, links, signatures and head only
  --workers N            verification threads (default ${defaultWorkerCount()}, or 0 for a FILE under 1 MiB;
                         0 verifies in this thread)

With --data, the heads peers cosigned for the node (kept in DIR/db-head.json) are checked too,
and every other member of the table its config names (with --peer, of the --as node's table) is
asked, at the address the config gives, for the heads it holds for the log's owner; members that
cannot be reached are listed on stderr ("witnesses: … not reached: …"), which is not a failure.
A log shorter than a head its owner gave a witness is reported "rolled back", one whose entry
differs from it "forked", each with both signed documents as evidence.

Prints one line per failed entry, naming its seq and what failed, and one per incomplete entry (a
receipt missing a seat's countersignature: "seq N: incomplete: …"), then "N passed, M failed"
(", K incomplete" when there are). Exit status:
  0  everything passed
  1  something failed (M > 0): a forgery, a broken chain, a bad signature or a witness's
     contradiction; trust nothing the log says past it
  3  nothing failed, but some hands are not countersigned by every seat ("…: nothing failed; N
     hands are not countersigned by every seat"): a seat was away when its hand ended; every entry
     there is genuine, the log is not complete
  2  the log could not be read, or a usage error`

/** Failure lines held back at most while a late ack may still complete an incomplete receipt. */
const MAX_HELD_LINES = 10_000

interface Source {
  lines: AsyncIterable<LogLine>
  expectOwner?: string
  /** A node's store: what it lost is reported as lost, not as a partial export. */
  store?: boolean
  /** Failures found before any line is read (damage LevelDB reported), one line each. */
  notes?: string[]
  /** Cosigned heads the source itself holds for its log (a data directory's head file). */
  cosigned?: string[]
  /** The libp2p node a --peer source dialled with, reused for --witness. */
  node?: Libp2p
  close: () => Promise<void>
}

const OPTIONS = {
  data: { type: 'string' },
  peer: { type: 'string' },
  as: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  owner: { type: 'string' },
  json: { type: 'boolean' },
  'chain-only': { type: 'boolean' },
  workers: { type: 'string' },
  witness: { type: 'string', multiple: true },
  config: { type: 'string' }
} satisfies OptionSpecs

export const command = defineCommand({
  name: 'verify',
  summary: 're-verify a log (file, data directory or running peer)',
  help: USAGE,
  options: OPTIONS,
  positionals: { min: 0, max: 1 },
  run
})

async function run ({ values, positionals }: ParsedArgs<typeof OPTIONS>): Promise<number> {
  const sources = [positionals.length > 0, values.data !== undefined, values.peer !== undefined].filter(Boolean).length
  if (sources !== 1 || positionals.length > 1) throw new UsageError('give exactly one of FILE, --data DIR or --peer ADDR (see --help)')
  const witnesses = values.witness ?? []
  if (values.as !== undefined && values.peer === undefined && witnesses.length === 0) throw new UsageError('--as goes with --peer or --witness')
  // The member whose table config says who else to ask: the data directory, or the --as node.
  const memberDir = values.data ?? values.as
  if (values.config !== undefined && memberDir === undefined) throw new UsageError('--config goes with --data DIR or --as DIR')
  if (witnesses.length > 0 && positionals.length > 0 && values.owner === undefined) throw new UsageError('--witness with a FILE needs --owner PEERID (whose heads to ask for)')
  const { from, to } = parseSeqRange(values)
  const workers = parseIntOption(values.workers, '--workers', 0, 64) ?? await defaultWorkers(positionals[0])
  if (values.owner !== undefined) {
    const { isPeerId } = await import('../../core/identity.js')
    if (!isPeerId(values.owner)) throw new UsageError(`--owner must be an Ed25519 peer id, got ${JSON.stringify(values.owner)}`)
  }
  const chainOnly = values['chain-only'] === true
  const json = values.json === true
  quietOnClosedStdout()

  const source = positionals.length > 0
    ? await fileSource(positionals[0])
    : values.data !== undefined
      ? await dataSource(values.data, { from, to })
      : await peerSource(values.peer as string, values.as, { from, to })
  let checker: (LineChecker & { close?: () => Promise<void> }) | undefined
  let witnessNode: { node: Libp2p, stop: boolean } | undefined
  try {
    // Heads witnessed for the log's owner: kept by the source itself (--data), fetched (--witness).
    const owner = values.owner ?? source.expectOwner ?? null
    const statements: WitnessStatement[] = []
    const takeStatement = (line: string, from: string): void => {
      const c = checkWitnessLine(line)
      if (c.ok) statements.push(c.statement)
      else process.stderr.write(`witness ${from}: a cosigned head that does not verify was ignored (${c.problem})\n`)
    }
    for (const line of source.cosigned ?? []) takeStatement(line, 'kept in the head file')
    if (values.as !== undefined && owner !== null) {
      // The --as member's own node, when it runs, witnessed the owner's heads too: ask it locally.
      const { ControlClient } = await import('../../daemon/control-client.js')
      const { CONTROL_FILE } = await import('../../daemon/control.js')
      const running = await exists(join(values.as, CONTROL_FILE))
      if (running) {
        try {
          const lines = await (await ControlClient.forDataDir(values.as)).witnessed(owner)
          for (const line of lines) takeStatement(line, `the node of ${values.as}`)
        } catch (err) {
          process.stderr.write(`the node of ${values.as} could not be asked for the heads it witnessed: ${(err as Error).message}\n`)
        }
      }
    }
    const asked = new Set<string>()
    if (witnesses.length > 0 && owner !== null) {
      witnessNode = source.node !== undefined ? { node: source.node, stop: false } : { node: await dialer(values.as), stop: true }
      for (const address of witnesses) {
        const { peer, lines } = await fetchWitnessesFrom(witnessNode.node, address, owner, values.as)
        asked.add(peer)
        if (lines.length === 0) process.stderr.write(`witness ${peer}: holds no head of ${owner}\n`)
        for (const line of lines) takeStatement(line, peer)
      }
    }
    // Every other member of the table, found in the member's config: the heads it holds for the owner.
    let discovery: Discovery | undefined
    if (memberDir !== undefined && owner !== null) {
      const table = await tableMembers(memberDir, values.config)
      if (table !== null) {
        const self = await identityOf(memberDir)
        const others = table.members.filter(m => m !== owner && m !== self && !asked.has(m))
        if (others.length > 0) {
          witnessNode ??= source.node !== undefined ? { node: source.node, stop: false } : { node: await dialer(memberDir), stop: true }
          discovery = await askMembers(witnessNode.node, others, table.peers, owner)
          for (const { peer, lines } of discovery.answers) for (const line of lines) takeStatement(line, peer)
        }
      }
    }
    // A file may be an older copy; a data directory or a running node's log is the log as it is now.
    const comparer = new WitnessComparer(statements, owner, { current: positionals.length === 0 })
    checker = workers === 0
      ? inThreadChecker(chainOnly ? null : verifyLogPayload, nativeVerifyDocument)
      : await createCheckPool({
        workers,
        payloadModule: chainOnly ? null : distModuleUrl('cli/verify-payload.js').href,
        verifyDocModule: distModuleUrl('crypto/native-crypto.js').href
      })
    const progress = new Progress(!json && process.stderr.isTTY === true, from ?? 0, to)
    const write = (failure: LogFailure): void => {
      progress.clear()
      process.stdout.write((json ? JSON.stringify(failure) : formatFailure(failure)) + '\n')
    }
    // From the first incomplete receipt on, lines are held (in order) until the end: a late-ack entry
    // further on may complete that receipt (docs/log.md, "Late acks"), and then its incomplete line
    // is not said. Bounded: past MAX_HELD_LINES everything held is said as it is.
    const held: LogFailure[] = []
    let holding = true
    const print = (failure: LogFailure): void => {
      if (holding && (held.length > 0 || failure.incomplete === true)) {
        held.push(failure)
        if (held.length > MAX_HELD_LINES) { holding = false; for (const f of held.splice(0)) write(f) }
        return
      }
      write(failure)
    }
    let verdict: LogVerdict
    for (const note of source.notes ?? []) {
      process.stdout.write((json ? JSON.stringify({ seq: null, store: true, problems: [note], count: 1 }) : `store: ${note}`) + '\n')
    }
    try {
      verdict = await verifyLog(comparer.tap(progress.tap(source.lines)), {
        verifyPayload: chainOnly ? null : verifyLogPayload,
        checker,
        from,
        to,
        expectOwner: values.owner ?? source.expectOwner,
        store: source.store,
        onFailure: print,
        onProgress: done => { progress.update(done) }
      })
    } catch (err) {
      progress.clear()
      const { LogFetchError } = await import('../../net/log-fetch.js')
      // The input broke off (peer gone or refusing, unreadable file): what was found so far is
      // printed; the verdict cannot be given.
      if (err instanceof LogFetchError || err instanceof LogInputError || typeof (err as NodeJS.ErrnoException).code === 'string') {
        // A table node's log is for its members by default, and a refusal is just a closed stream.
        const hint = err instanceof LogFetchError && values.as === undefined ? `; ${AS_HINT}` : ''
        throw new UsageError(`${(err as Error).message} (verification incomplete${hint})`)
      }
      throw err
    }
    progress.clear()
    const completed = new Set(verdict.completed)
    for (const f of held.splice(0)) if (!(f.incomplete === true && f.seq !== null && completed.has(f.seq))) write(f)
    if (source.notes !== undefined) verdict = { ...verdict, failed: verdict.failed + source.notes.length }
    const contradictions = comparer.finish()
    for (const c of contradictions) {
      process.stdout.write(json
        ? JSON.stringify({ seq: c.seq, witness: c.witness, kind: c.kind, problems: [c.message], evidence: c.evidence, count: 1 }) + '\n'
        : `witness: seq ${c.seq}: ${c.message}\n  evidence (cosigned head): ${c.evidence[0]}\n` + (c.evidence[1] === '' ? '' : `  evidence (this log): ${c.evidence[1]}\n`))
    }
    verdict = { ...verdict, failed: verdict.failed + contradictions.length }
    // Who was asked is said (stderr; in the JSON verdict), never a failure: a member may be down.
    const witnessed = discovery === undefined ? undefined : { asked: discovery.answers.map(a => ({ peer: a.peer, heads: a.lines.length })), unreached: discovery.unreached }
    // Said only when something failed: on an honest table a member that dials in (no address) or
    // whose node is stopped is no news, and the summary is all there is to say.
    if (witnessed !== undefined && !json && verdict.failed > 0) {
      process.stderr.write(`witnesses: asked ${witnessed.asked.length === 0 ? 'none' : witnessed.asked.map(a => `${a.peer} (${a.heads} head${a.heads === 1 ? '' : 's'})`).join(', ')}` +
        (witnessed.unreached.length === 0 ? '' : `; not reached: ${witnessed.unreached.map(u => `${u.peer} (${u.reason})`).join(', ')}`) + '\n')
    }
    if (json) {
      process.stdout.write(JSON.stringify({ ...verdict, receipts: chainOnly ? 'not checked' : 'checked', ...(witnessed === undefined ? {} : { witnesses: witnessed }) }) + '\n')
    } else {
      if (chainOnly) process.stderr.write('receipts not checked (--chain-only): order, links, signatures and head only\n')
      process.stdout.write(summaryLine(verdict) + '\n')
    }
    // An incomplete receipt is not a pass, nor a failure.
    return verdictExitCode(verdict)
  } finally {
    await checker?.close?.()
    if (witnessNode?.stop === true) await witnessNode.node.stop()
    await source.close()
  }
}

/** The heads `address` holds for `owner`, in one line on failure. */
async function fetchWitnessesFrom (node: Libp2p, address: string, owner: string, asDir: string | undefined): Promise<{ peer: string, lines: string[] }> {
  const { multiaddr } = await import('@multiformats/multiaddr')
  const { fetchWitnessed } = await import('../../net/log-fetch.js')
  let target
  try { target = multiaddr(address) } catch (err) {
    throw new UsageError(`--witness must be a multiaddr like /ip4/127.0.0.1/tcp/7401/p2p/12D3KooW…: ${(err as Error).message}`)
  }
  try {
    return await fetchWitnessed(node, target, owner, { signal: AbortSignal.timeout(15_000) })
  } catch (err) {
    const self = /dial self/i.test((err as Error).message)
    const hint = self ? ' (that is the node of --as itself: name another member as witness)'
      : asDir === undefined ? ' (a table node serves witnessed heads to its members only: dial as one with --as DIR)' : ''
    throw new UsageError(`cannot get witnessed heads from ${address}: ${(err as Error).message.split('\n')[0]}${hint}`)
  }
}

interface Discovery {
  /** The members that answered, and the cosigned head lines each holds for the owner. */
  answers: Array<{ peer: string, lines: string[] }>
  /** The members that could not be asked, each with one line on why (not a failure). */
  unreached: Array<{ peer: string, reason: string }>
}

/**
 * The table members (of every table, for a node serving several) named by the node config of data directory `dir` (`--config FILE`, else
 * DIR/node.json, else DIR.json beside it), with the addresses the config gives; null when there is
 * no config for that directory (said on stderr when one was found but does not fit).
 */
async function tableMembers (dir: string, explicit: string | undefined): Promise<{ members: string[], peers: Record<string, string[]> } | null> {
  const { resolve } = await import('node:path')
  const { addressBookOf, nodeMembers, parseNodeConfig, readNodeConfigJson } = await import('../../daemon/config.js')
  const { CONFIG_FILE } = await import('./table.js')
  const candidates = explicit !== undefined ? [explicit] : [join(dir, CONFIG_FILE), `${resolve(dir)}.json`]
  for (const file of candidates) {
    if (explicit === undefined && !(await exists(file))) continue
    let config
    try {
      const raw = await readNodeConfigJson(file)
      // A beacon group member alone (no table): nobody witnesses its log, so there is nobody to ask.
      const o = raw as { group?: unknown, table?: unknown, tables?: unknown } | null
      if (explicit === undefined && o?.group !== undefined && o.table === undefined && o.tables === undefined) return null
      config = await parseNodeConfig(raw, file)
    } catch (err) {
      if (explicit !== undefined) throw new UsageError(`--config: ${(err as Error).message}`)
      process.stderr.write(`${file}: not a table config this can use (${(err as Error).message}); the table's members were not asked for witnessed heads\n`)
      return null
    }
    if (resolve(config.dataDir) !== resolve(dir)) {
      if (explicit !== undefined) throw new UsageError(`--config ${file} is the config of ${config.dataDir}, not of ${dir}`)
      continue
    }
    // A node serving several tables: the members of every one of them, each with every address given.
    return { members: nodeMembers(config.tables), peers: Object.fromEntries(addressBookOf(config.tables)) }
  }
  return null
}

/** Asks each member, at the addresses the config gives, for the heads it holds for `owner`, all at once. */
async function askMembers (node: Libp2p, members: string[], peers: Record<string, string[]>, owner: string): Promise<Discovery> {
  const { multiaddr } = await import('@multiformats/multiaddr')
  const { fetchWitnessed } = await import('../../net/log-fetch.js')
  const results = await Promise.all(members.map(async (peer): Promise<{ peer: string, lines?: string[], reason?: string }> => {
    const addresses = peers[peer] ?? []
    if (addresses.length === 0) return { peer, reason: 'no address in the table config (it dials in)' }
    let last = ''
    for (const address of addresses) {
      try {
        const target = multiaddr(address.includes('/p2p/') ? address : `${address}/p2p/${peer}`)
        const { lines } = await fetchWitnessed(node, target, owner, { signal: AbortSignal.timeout(10_000) })
        return { peer, lines }
      } catch (err) {
        last = `${address}: ${(err as Error).message.split('\n')[0]}`
      }
    }
    return { peer, reason: last }
  }))
  return {
    answers: results.filter(r => r.lines !== undefined).map(r => ({ peer: r.peer, lines: r.lines as string[] })),
    unreached: results.filter(r => r.reason !== undefined).map(r => ({ peer: r.peer, reason: r.reason as string }))
  }
}

/** A libp2p node to dial with: as the member of data directory `asDir`, or as a throwaway identity. */
async function dialer (asDir: string | undefined): Promise<Libp2p> {
  const { createNode } = await import('../../net/node.js')
  const { generateKeyPair } = await import('@libp2p/crypto/keys')
  const { default: pino } = await import('pino')
  let privateKey
  if (asDir !== undefined) {
    const { loadOrCreateIdentity, IDENTITY_FILE } = await import('../../net/identity.js')
    try { await access(join(asDir, IDENTITY_FILE)) } catch { throw new UsageError(`--as ${asDir}: no ${IDENTITY_FILE} there (run 'fairdeal init --data ${asDir}' for a node)`) }
    try { privateKey = (await loadOrCreateIdentity(asDir)).privateKey } catch (err) { throw new UsageError((err as Error).message) }
  } else {
    privateKey = await generateKeyPair('Ed25519')
  }
  return await createNode({ privateKey, listen: [], logger: pino({ level: 'silent' }) })
}

/** A log file this small is checked in this thread unless --workers says otherwise. */
const SMALL_LOG_BYTES = 1024 * 1024

/**
 * Threads for a log: none for a small file, since starting one (loading the verifier and
 * libsodium in it, ~0.2-0.5 s) costs more than checking a few receipts; the cores otherwise.
 */
async function defaultWorkers (file: string | undefined): Promise<number> {
  if (file !== undefined && file !== '-') {
    try {
      if ((await stat(file)).size < SMALL_LOG_BYTES) return 0
    } catch { /* fileSource reports an unreadable file */ }
  }
  return defaultWorkerCount()
}

async function fileSource (file: string): Promise<Source> {
  if (file !== '-') {
    try {
      await access(file)
      const s = await stat(file)
      if (s.isDirectory()) throw new Error('it is a directory (use --data DIR for a data directory)')
      // A device (/dev/zero, /dev/urandom) never ends: only files and pipes are read.
      if (!s.isFile() && !s.isFIFO()) throw new Error('it is not a regular file or a pipe')
    } catch (err) {
      throw new UsageError(`cannot read ${file}: ${(err as Error).message}`)
    }
  }
  return { lines: readJsonLines(file), close: async () => {} }
}

async function dataSource (dir: string, range: { from?: number, to?: number }): Promise<Source> {
  // A running node's log comes through its control endpoint: the same lines, checked here.
  // Imported here: it opens LevelDB, which a FILE or --peer source never needs (start-up time).
  const { dataDirLogLines } = await import('../node-log.js')
  // Only the range asked for is read, as from a peer: the check is told the same range.
  const log = await dataDirLogLines(dir, range)
  try {
    return { lines: log.lines, expectOwner: await identityOf(dir), store: true, notes: log.notes, cosigned: log.cosigned, close: log.close }
  } catch (err) {
    await log.close()
    throw err
  }
}

/** The peer id of a data directory's identity, when it has one: its log must be signed by it. */
async function identityOf (dir: string): Promise<string | undefined> {
  const { loadOrCreateIdentity, IDENTITY_FILE } = await import('../../net/identity.js')
  try { await access(join(dir, IDENTITY_FILE)) } catch { return undefined }
  try {
    return (await loadOrCreateIdentity(dir)).peerId
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}

/** A table node serves its log to its members only (its refusal may be just a closed stream). */
const AS_HINT = 'a table node serves its log to its members only: if you hold a seat at that table, dial as your node with --as DIR (its data directory)'

async function peerSource (address: string, asDir: string | undefined, range: { from?: number, to?: number }): Promise<Source> {
  const { multiaddr } = await import('@multiformats/multiaddr')
  const { fetchLog } = await import('../../net/log-fetch.js')
  let target
  try { target = multiaddr(address) } catch (err) {
    throw new UsageError(`--peer must be a multiaddr like /ip4/127.0.0.1/tcp/7400/p2p/12D3KooW…: ${(err as Error).message}`)
  }
  const node = await dialer(asDir)
  try {
    const connection = await node.dial(target, { signal: AbortSignal.timeout(15_000) })
    const peer = connection.remotePeer
    return { lines: fetchLog(node, peer, range), expectOwner: peer.toString(), node, close: async () => { await node.stop() } }
  } catch (err) {
    await node.stop()
    throw new UsageError(`cannot reach ${address}: ${(err as Error).message.split('\n')[0]}${asDir === undefined ? ` (${AS_HINT})` : ''}`)
  }
}

const LONG_LOG_LINES = 1000

/** A one-line progress bar on stderr, only on a terminal and only for long logs. */
class Progress {
  private total: number | null = null
  private readonly started = Date.now()
  private lastDraw = 0
  private shown = false

  constructor (private readonly enabled: boolean, private readonly from: number, to: number | undefined) {
    if (to !== undefined) this.total = to - from + 2 // the entries and the head line
  }

  /** Passes lines through, reading the head's seq from the first one to know the total. */
  async * tap (lines: AsyncIterable<LogLine>): AsyncGenerator<LogLine> {
    let first = true
    for await (const line of lines) {
      if (first && this.total === null) {
        first = false
        try {
          const head = JSON.parse(typeof line === 'string' ? line : new TextDecoder().decode(line)) as { type?: unknown, body?: { seq?: unknown } }
          if (head.type === 'log-head' && typeof head.body?.seq === 'number') this.total = head.body.seq - this.from + 2
        } catch {}
      }
      yield line
    }
  }

  update (done: number): void {
    if (!this.enabled) return
    const now = Date.now()
    // A long log (by its head) gets the bar from the start; one of unknown length once it is slow.
    const long = this.total !== null ? this.total >= LONG_LOG_LINES : now - this.started >= 1000
    if (!long || now - this.lastDraw < 150) return
    this.lastDraw = now
    const rate = Math.round(done / ((now - this.started) / 1000))
    let text = `verifying: ${done.toLocaleString('en')} lines, ${rate.toLocaleString('en')}/s`
    if (this.total !== null && this.total > 0) {
      const share = Math.min(1, done / this.total)
      const width = 30
      const filled = Math.round(share * width)
      text = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.floor(share * 100)}% ` +
        `${done.toLocaleString('en')}/${this.total.toLocaleString('en')} lines, ${rate.toLocaleString('en')}/s`
    }
    process.stderr.write(`\r\x1b[K${text}`)
    this.shown = true
  }

  clear (): void {
    if (this.shown) process.stderr.write('\r\x1b[K')
    this.shown = false
  }
}
