import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { randomBytes } from 'node:crypto'
import { appendFile, mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { AddressInfo, Socket } from 'node:net'
import type { Libp2p } from '@libp2p/interface'
import type { Logger } from 'pino'
import { canonicalBytes } from '../../core/canonical.js'
import { fromUtf8 } from '../../core/bytes.js'
import type { Signer } from '../../core/identity.js'
import type { Signed } from '../../core/signed.js'
import {
  DkgMachine, DKG_RECORD_KIND, makeDkgRecord, parseBeaconEntry, parseChainInfo, roundAt, roundTime, RoundMachine, verifyBeaconEntry, verifyDkgResult,
  BLAME_RECORD_KIND, type BlameBody, type BlameRecord,
  type BeaconEntry, type ChainInfo, type DkgEffect, type DkgResult, type DkgSnapshot, type GroupParams, type RoundEffect
} from '../../core/beacon/index.js'
import { nativeVerifyDocument } from '../../crypto/native-crypto.js'
import { createMessenger, type Messenger } from '../../net/messenger.js'
import { createRejectionLog } from '../../net/rejection-log.js'
import { systemClock, type Clock } from '../clock.js'
import { drandV1Handler } from '../http-api.js'
import { writeAtomic } from '../local-beacon.js'

/** The libp2p protocol of a beacon group: DKG documents and round messages, one JSON document per frame. */
export const GROUP_PROTOCOL = '/fairdeal/beacon-group/1'
/** A DKG frame holds at most a complaint list with n signed shares; rounds frames are far smaller. */
export const GROUP_MAX_FRAME_BYTES = 256 * 1024
export const SHARE_FILE = 'share.json'
export const DKG_STATE_FILE = 'dkg-state.json'
export const TRANSCRIPT_FILE = 'transcript.json'
/** The signed results the other members announced (theirs and ours), kept beside the transcript for `beacon group verify`. */
export const RESULTS_FILE = 'results.json'
export const ROUNDS_FILE = 'rounds.jsonl'
export const RECORDS_FILE = 'records.jsonl'
/** Written once the DKG's record is in the node's log (the session), so a restarted member logs it once. */
export const DKG_LOGGED_FILE = 'dkg-logged.json'
export const STATUS_PATH = '/fairdeal/group/status'
/** Production times kept for the status (the demo's latency figures). */
export const RECENT_ROUNDS = 1024
/** Real milliseconds between attempts to deliver a DKG document. */
const DKG_RETRY_MS = 200

export interface GroupMemberInit {
  params: GroupParams
  /** The member's libp2p node (its peer id must be one of params.members), already started. */
  node: Libp2p
  signer: Signer
  /** peer id → multiaddrs of the other members. */
  addresses: ReadonlyMap<string, string[]>
  /** Where the share (mode 0600), the transcript and the rounds are kept. */
  dir: string
  logger: Logger
  clock?: Clock
  /** drand v1 HTTP API: host (loopback by default) and port (0: any free one); `false` for none. */
  http?: { host?: string, port?: number } | false
  /** Real-time interval of the loop that ticks the machines (default 100 ms). */
  tickMs?: number
  /** The catch-up period for rounds the group missed (RoundInit.catchupMs; default half the period). */
  catchupMs?: number
  /**
   * Appends an entry to the node's signed log: the DKG's record (kind `dkg`, src/core/beacon/dkg-record.ts)
   * goes there once the DKG is done, or when a member restarted after it finds it not logged yet.
   */
  record?: (kind: string, payload: unknown) => Promise<void>
}

export interface GroupMemberStatus {
  id: string
  index: number
  members: number
  threshold: number
  phase: 'waiting-for-dkg' | 'dkg' | 'rounds' | 'dkg-failed'
  dkgPhase?: string
  failure?: string
  chain?: ChainInfo
  latestRound: number
  currentRound: number
  waiting?: string
  suspects: number[]
  /** Members whose announced DKG result matches ours (by groupHash), including us. */
  agreeing?: number[]
  dkgMs?: number
  /** [round, clock ms when this member had it verified], for the last RECENT_ROUNDS rounds. */
  recent?: Array<[number, number]>
}

export interface GroupMember {
  readonly peerId: string
  readonly index: number
  /** http://host:port of the drand API, when serving. */
  readonly httpUrl: string | undefined
  /** Resolves with the chain once the DKG is done (rejects when it failed). */
  readonly ready: Promise<ChainInfo>
  /** Each produced round, with the time (clock ms) it was produced. */
  onRound: (listener: (entry: BeaconEntry, atMs: number) => void) => void
  entry: (round: number) => BeaconEntry | undefined
  status: () => GroupMemberStatus
  /** Bytes this member's messenger sent (for the benchmark). */
  bytesSent: () => number
  close: () => Promise<void>
}


async function readJson (path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8'))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new Error(`${path}: ${(err as Error).message}`)
  }
}

interface ShareFile { version: 1, session: string, index: number, share: string }

/**
 * One member of a beacon group: runs the DKG (or loads its result), then signs every round with
 * its share, recovers rounds from the others' partials, stores them and serves them over drand's
 * v1 HTTP API. Everything public (the DKG transcript, blame records) is kept beside the rounds; the
 * secret share stays in `share.json`, mode 0600.
 */
export async function startGroupMember (init: GroupMemberInit): Promise<GroupMember> {
  const { params, node, signer, logger } = init
  const log = logger.child({ component: 'beacon-group', group: params.id })
  // A member decides how many documents it sends that are refused: they are logged in rate-limited summaries.
  const refused = createRejectionLog(log)
  const clock = init.clock ?? systemClock
  const tickMs = init.tickMs ?? 100
  await mkdir(init.dir, { recursive: true, mode: 0o700 })
  const path = (f: string): string => join(init.dir, f)

  const dkg = new DkgMachine({ params, signer, random: (n) => new Uint8Array(randomBytes(n)), verify: nativeVerifyDocument },
    (await readJson(path(DKG_STATE_FILE))) as DkgSnapshot | undefined)
  const index = dkg.index
  let rounds: RoundMachine | undefined
  let chain: ChainInfo | undefined
  /** The group's summed commitments, once its chain is known (a blame record in the log carries them). */
  let groupCommitments: string[] | undefined
  let failure: string | undefined
  let dkgMs: number | undefined
  let closed = false
  const listeners: Array<(e: BeaconEntry, at: number) => void> = []
  let resolveReady!: (c: ChainInfo) => void
  let rejectReady!: (e: Error) => void
  const ready = new Promise<ChainInfo>((resolve, reject) => { resolveReady = resolve; rejectReady = reject })
  ready.catch(() => {})
  let bytesSent = 0
  const recent = new Map<number, number>()

  const messenger: Messenger = await createMessenger(node, {
    protocol: GROUP_PROTOCOL, maxFrameBytes: GROUP_MAX_FRAME_BYTES, logger: log, addressBook: init.addresses
  })
  // A DKG document that cannot be delivered (a member not up yet, a dropped connection) is sent
  // again until the DKG is over: a lost deal or answer would cost its dealer its place in the group.
  // Round messages are not: a lost partial is replaced by another member's, a lost round by catch-up.
  const send = (to: string, doc: unknown, retry = false): void => {
    const frame = canonicalBytes(doc)
    const attempt = (): void => {
      bytesSent += frame.byteLength
      messenger.send(to, frame).catch((err: Error) => {
        log.debug({ peer: to, reason: err.message }, 'send failed')
        if (retry && !closed && rounds === undefined && failure === undefined) setTimeout(attempt, DKG_RETRY_MS).unref()
      })
    }
    attempt()
  }
  const broadcast = (doc: unknown, retry = false): void => {
    for (const peer of params.members) if (peer !== signer.peerId) send(peer, doc, retry)
  }
  // Writes are chained so the files see effects in the order the machines produced them.
  let writes: Promise<void> = Promise.resolve()
  const write = (job: () => Promise<void>): void => {
    writes = writes.then(job).catch((err: Error) => { log.error({ reason: err.message }, 'cannot write the beacon group store') })
  }

  async function loadRounds (): Promise<BeaconEntry[]> {
    let text = ''
    try { text = await readFile(path(ROUNDS_FILE), 'utf8') } catch (err) { if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err }
    const out: BeaconEntry[] = []
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue
      // A torn last line (a crash mid-append) is skipped; every kept entry is re-verified.
      try {
        const e = parseBeaconEntry(JSON.parse(line))
        if (chain !== undefined && verifyBeaconEntry(chain, e, e.round).ok) out.push(e)
      } catch { /* skipped */ }
    }
    return out
  }

  function startRounds (result: Pick<DkgResult, 'chainInfo' | 'commitments' | 'share' | 'index'>, stored: BeaconEntry[]): void {
    groupCommitments = result.commitments
    chain = parseChainInfo(result.chainInfo)
    rounds = new RoundMachine({
      chain, members: params.members, threshold: params.threshold, commitments: result.commitments, index: result.index,
      share: result.share, signer, verify: nativeVerifyDocument, stored, catchupMs: init.catchupMs
    })
    log.info({ chainHash: chain.hash, index, latestRound: rounds.latestRound }, 'beacon group chain ready')
    const ready = chain
    // Ready once the share and transcript written before this point are on disk.
    void writes.then(() => { resolveReady(ready) })
  }

  function onRoundEffects (out: RoundEffect[]): void {
    for (const e of out) {
      switch (e.kind) {
        case 'broadcast': broadcast(e.msg); break
        case 'send': send(e.to, e.msg); break
        case 'produced': {
          const at = clock.now()
          recent.set(e.entry.round, at)
          if (recent.size > RECENT_ROUNDS) recent.delete(recent.keys().next().value as number)
          const line = JSON.stringify(e.entry) + '\n'
          write(async () => { await appendFile(path(ROUNDS_FILE), line, { mode: 0o644 }) })
          for (const l of listeners) l(e.entry, at)
          break
        }
        case 'blame':
          log.warn({ round: e.record.body.round, members: e.record.body.bad.map(b => b.index) }, 'bad partial signatures: named in a blame record')
          write(async () => { await appendFile(path(RECORDS_FILE), JSON.stringify(e.record) + '\n', { mode: 0o644 }) })
          logBlame(e.record)
          break
        case 'rejected':
          log.debug({ peer: e.from, reason: e.reason }, 'round message refused')
          break
      }
    }
  }

  // Every signed result we hold, rewritten as more arrive: `beacon group verify` compares them with our transcript.
  function saveResults (): void {
    const text = JSON.stringify([...dkg.announcedResults.values()].sort((a, b) => a.body.member - b.body.member)) + '\n'
    write(async () => { await writeAtomic(path(RESULTS_FILE), text, 0o644) })
  }

  function onDkgEffects (out: DkgEffect[]): void {
    for (const e of out) {
      switch (e.kind) {
        case 'send': send(e.to, e.doc, true); break
        case 'broadcast': broadcast(e.doc, true); break
        case 'persist': {
          const text = JSON.stringify(e.snapshot)
          write(async () => { await writeAtomic(path(DKG_STATE_FILE), text, 0o600) })
          log.info({ phase: e.phase }, 'DKG phase')
          break
        }
        case 'done': {
          const r = e.result
          dkgMs = clock.now() - params.dkg.start
          const share: ShareFile = { version: 1, session: dkg.session, index: r.index, share: r.share }
          const transcript = { ...r, share: undefined, index: r.index }
          write(async () => {
            await writeAtomic(path(SHARE_FILE), JSON.stringify(share) + '\n', 0o600)
            await writeAtomic(path(TRANSCRIPT_FILE), JSON.stringify(transcript) + '\n', 0o644)
          })
          saveResults()
          logDkg(r, [...dkg.announcedResults.values()])
          log.info({ qual: r.qual, disqualified: r.disqualified.map(d => ({ dealer: d.dealer, reason: d.reason })), dkgMs }, 'DKG done')
          startRounds(r, [])
          break
        }
        case 'failed':
          failure = e.reason
          log.error({ reason: e.reason }, 'DKG failed')
          rejectReady(new Error(e.reason))
          break
        case 'rejected':
          refused({ peer: e.from, reason: e.reason }, 'DKG document refused')
          break
      }
    }
  }

  // A blame record into the node's log too (kind `beacon-blame`), at most once a day of rounds per
  // member it names: a member sending bad partials every round must not grow our log every round.
  const blameLogged = new Map<number, number>()
  // Whether the DKG's record is in the log: a blame record is judged by it (docs/log.md), so none is
  // logged without it (it would fail `beacon-blame-unmatched`): it then stays in records.jsonl only.
  let dkgLogged = false
  function logBlame (record: Signed<BlameBody>): void {
    const recordFn = init.record
    if (recordFn === undefined || groupCommitments === undefined) return
    const { round } = record.body
    const perDay = Math.max(1, Math.floor(86_400 / params.period))
    const fresh = record.body.bad.filter(b => { const last = blameLogged.get(b.index); return last === undefined || round >= last + perDay })
    if (fresh.length === 0) return
    for (const b of fresh) blameLogged.set(b.index, round)
    const payload: BlameRecord = { record, members: params.members, commitments: groupCommitments }
    write(async () => {
      if (!dkgLogged) return
      try { await recordFn(BLAME_RECORD_KIND, payload) } catch (err) { log.warn({ reason: (err as Error).message }, 'a blame record could not be logged: it stays in records.jsonl') }
    })
  }

  // The DKG's record into the node's log, after the transcript is on disk; then a mark beside it, so
  // a member restarted in between logs it again (a second record of one session verifies as well).
  function logDkg (r: DkgResult, results: unknown[]): void {
    const record = init.record
    if (record === undefined) return
    write(async () => {
      try {
        await record(DKG_RECORD_KIND, makeDkgRecord(r, results))
        dkgLogged = true
        await writeAtomic(path(DKG_LOGGED_FILE), JSON.stringify({ session: dkg.session }) + '\n', 0o644)
        log.info({ session: dkg.session }, 'DKG record logged')
      } catch (err) {
        log.warn({ reason: (err as Error).message }, 'the DKG record could not be logged: the transcript stays in transcript.json')
      }
    })
  }

  // A member restarted after the DKG loads its share and the public transcript (re-checked) instead.
  const savedShare = (await readJson(path(SHARE_FILE))) as ShareFile | undefined
  if (savedShare !== undefined) {
    const saved = (await readJson(path(TRANSCRIPT_FILE))) as DkgResult | undefined
    if (saved === undefined || savedShare.session !== dkg.session) throw new Error(`${init.dir}: share.json without a matching transcript.json for this group`)
    verifyDkgResult({ ...saved, share: savedShare.share, index: savedShare.index }, nativeVerifyDocument)
    chain = parseChainInfo(saved.chainInfo)
    const logged = (await readJson(path(DKG_LOGGED_FILE))) as { session?: unknown } | undefined
    dkgLogged = logged?.session === dkg.session
    if (!dkgLogged) {
      const kept = await readJson(path(RESULTS_FILE))
      logDkg({ ...saved, share: savedShare.share, index: savedShare.index }, Array.isArray(kept) ? kept : [])
    }
    startRounds({ ...saved, share: savedShare.share, index: savedShare.index }, await loadRounds())
  }

  messenger.onFrame((from, frame) => {
    if (closed) return
    let doc: unknown
    try { doc = JSON.parse(fromUtf8(frame)) } catch { log.debug({ peer: from }, 'frame is not JSON'); return }
    const type = (doc as { type?: unknown } | null)?.type
    const now = clock.now()
    if (typeof type === 'string' && /^beacon-group\/(deal|share|responses|result)$/.test(type)) {
      const before = dkg.announcedResults.size
      onDkgEffects(dkg.receive(from, doc, now))
      if (dkg.announcedResults.size !== before && dkg.outcome !== undefined) saveResults()
    } else if (rounds !== undefined) {
      onRoundEffects(rounds.receive(from, doc, now))
    }
  })

  const stopLoop = new AbortController()
  const step = (): number => {
    const now = clock.now()
    try {
      if (rounds !== undefined) onRoundEffects(rounds.tick(now))
      else if (failure === undefined && now >= params.dkg.start) {
        onDkgEffects(dkg.currentPhase === 'idle' ? dkg.start(now) : dkg.tick(now))
      }
    } catch (err) {
      log.error({ reason: (err as Error).message }, 'beacon group tick failed')
    }
    // Wake at the next round's time (not a tick later), so a round's latency is not the tick's.
    let wait = tickMs
    if (chain !== undefined) {
      const next = now < chain.genesis_time * 1000 ? chain.genesis_time * 1000 : roundTime(chain, roundAt(chain, now) + 1)
      wait = Math.max(0, Math.min(tickMs, next - now))
    } else if (now < params.dkg.start) {
      wait = Math.max(0, Math.min(tickMs, params.dkg.start - now))
    }
    return wait
  }
  const loop = (async () => {
    while (!closed) {
      const wait = step()
      // The clock's own sleep, so an injected clock (tests) decides how long a wait really is.
      await clock.sleep(Math.max(wait, 1), stopLoop.signal).catch(() => {})
    }
  })()

  // drand's v1 HTTP API over the produced rounds; a round is served only once due on our clock.
  let server: Server | undefined
  let httpUrl: string | undefined
  const sockets = new Set<Socket>()
  const latestServable = (): number => {
    if (rounds === undefined || chain === undefined) return 0
    const now = clock.now()
    const due = now < chain.genesis_time * 1000 ? 0 : roundAt(chain, now)
    let r = Math.min(rounds.latestRound, due)
    while (r > 0 && rounds.entry(r) === undefined) r--
    return r
  }
  const status = (): GroupMemberStatus => {
    const now = clock.now()
    const s = rounds?.status(now)
    const mine = dkg.announcedResults.get(index)?.body.groupHash
    return {
      id: params.id,
      index,
      members: params.members.length,
      threshold: params.threshold,
      phase: rounds !== undefined ? 'rounds' : failure !== undefined ? 'dkg-failed' : now < params.dkg.start ? 'waiting-for-dkg' : 'dkg',
      dkgPhase: dkg.currentPhase,
      failure,
      chain,
      latestRound: latestServable(),
      currentRound: s?.currentRound ?? 0,
      waiting: s?.waiting,
      suspects: s?.suspects ?? [],
      agreeing: mine === undefined ? undefined : [...dkg.announcedResults.values()].filter(r => r.body.groupHash === mine).map(r => r.body.member).sort((a, b) => a - b),
      dkgMs,
      recent: [...recent.entries()]
    }
  }
  if (init.http !== false) {
    const host = init.http?.host ?? '127.0.0.1'
    const port = init.http?.port ?? 0
    let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined
    server = createServer((req, res) => {
      try {
        if ((req.url ?? '').split('?')[0] === STATUS_PATH) {
          const text = JSON.stringify(status())
          res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
          res.end(text)
          return
        }
        if (chain === undefined || rounds === undefined) {
          res.writeHead(503, { 'content-type': 'application/json', 'cache-control': 'no-store' })
          res.end(JSON.stringify({ error: failure !== undefined ? `the group's DKG failed: ${failure}` : 'the group\'s DKG has not finished' }))
          return
        }
        const r = rounds
        const c = chain
        handler ??= drandV1Handler({
          info: c,
          latestRound: latestServable,
          expectedRound: () => { const now = clock.now(); return now < c.genesis_time * 1000 ? 0 : roundAt(c, now) },
          entry: (round) => round <= latestServable() ? r.entry(round) : undefined
        })
        handler(req, res)
      } catch {
        if (!res.headersSent) res.writeHead(500)
        res.end()
      }
    })
    server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)) })
    await new Promise<void>((resolve, reject) => {
      server?.once('error', reject)
      server?.listen(port, host, () => { server?.off('error', reject); resolve() })
    })
    const bound = (server.address() as AddressInfo).port
    httpUrl = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`
  }

  return {
    peerId: signer.peerId,
    index,
    httpUrl,
    ready,
    onRound: (l) => { listeners.push(l) },
    entry: (r) => rounds?.entry(r),
    status,
    bytesSent: () => bytesSent,
    close: async () => {
      if (closed) return
      closed = true
      stopLoop.abort()
      await loop
      rejectReady(new Error('member closed'))
      await messenger.close()
      if (server !== undefined) {
        const done = new Promise<void>(resolve => server?.close(() => resolve()))
        for (const s of sockets) s.destroy()
        await done
      }
      await writes
    }
  }
}
