import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { randomBytes } from 'node:crypto'
import { appendFile, mkdir, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { AddressInfo, Socket } from 'node:net'
import type { Libp2p } from '@libp2p/interface'
import type { Logger } from 'pino'
import { canonicalBytes } from '../../core/canonical.js'
import { fromUtf8 } from '../../core/bytes.js'
import { BoundedMap } from '../../core/bounded-set.js'
import type { Signer } from '../../core/identity.js'
import type { Signed } from '../../core/signed.js'
import {
  DkgMachine, DKG_RECORD_KIND, GROUP_PARTIAL, parseGroupParams, PENDING_ROUNDS, SIGN_BACKLOG, makeDkgRecord, dealersOf, groupSession, participantsOf, parseBeaconEntry, parseChainInfo, roundAt, roundTime, RoundMachine, verifyBeaconEntry, verifyDkgResult,
  BLAME_RECORD_KIND, type BlameBody, type BlameRecord, assertRefusalRecord, makeRefusalRecord, RESHARE_REFUSED_KIND, type RefusalRecord,
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
/** After a reshare, the old group's share, kept until the new group has taken over its rounds (then deleted). */
export const PREVIOUS_SHARE_FILE = 'share-previous.json'
/** A reshare's machine state (it holds the member's secret polynomial), one file per reshare session. */
export function reshareStateFile (session: string): string { return `reshare-state-${session.slice(0, 16)}.json` }
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
  phase: 'waiting-for-dkg' | 'dkg' | 'rounds' | 'dkg-failed' | 'left'
  dkgPhase?: string
  /** The documents of the DKG (or reshare) run this member holds: deals (one per dealer), its own shares, responses. */
  dkgHeld?: { deals: number, shares: number, responses: number }
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
  /** A reshare this member takes part in: the round the new group signs from, and how it went. */
  reshare?: { transition: number, oldMembers: number, oldThreshold: number, state: 'running' | 'done' | 'left' | 'refused' | 'failed', message?: string }
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

/** `group`: for a group made by a reshare, its session, which its partials name (PartialBody.group). */
interface ShareFile { version: 1, session: string, index: number, share: string, group?: string }

/**
 * Where a round message goes. A partial goes to the group that signs its round (the old one before
 * a reshare's transition, the new one from it); catch-up requests and answers go to the newest,
 * which holds every round. A partial for a round before the first any group here signs is the old
 * group's, before a reshare's transition, from a member that still counts this one in it: this
 * member joined with the reshare, lost its old share (it comes back through the reshare only), or
 * dropped the old group once past its transition. That is 'old-group', not a fault of the sender.
 * Any other partial no group here signs is 'refused'; with no group here at all, 'none'.
 */
export function routeRoundMessage<M extends { signs: (round: number) => boolean, readonly firstRound: number }> (machines: readonly M[], partial: boolean, round: unknown): M | 'old-group' | 'refused' | 'none' {
  if (machines.length === 0) return 'none'
  if (!partial || typeof round !== 'number') return machines[machines.length - 1]
  const machine = machines.find(m => m.signs(round))
  if (machine !== undefined) return machine
  return Number.isSafeInteger(round) && round >= 1 && round < Math.min(...machines.map(m => m.firstRound)) ? 'old-group' : 'refused'
}

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

  const reshare = params.reshare
  const session = groupSession(params)
  const stateFile = reshare === undefined ? DKG_STATE_FILE : reshareStateFile(session)
  const savedShare = (await readJson(path(SHARE_FILE))) as ShareFile | undefined
  // In a reshare, this node's share of the old group: share.json until the reshare is done, then
  // share-previous.json until the new group has taken over.
  const oldShareFile = reshare === undefined
    ? undefined
    : [savedShare, (await readJson(path(PREVIOUS_SHARE_FILE))) as ShareFile | undefined].find(f => f?.session === reshare.session)
  // The run is done here once share.json names its session (written last: after the transcript)
  // and transcript.json is that run's. Otherwise (a crash in between) the run's saved state, which
  // holds every document, gives the same outcome again (DkgMachine recomputes a finished run).
  const savedTranscript = (await readJson(path(TRANSCRIPT_FILE))) as DkgResult | undefined
  const transcriptSession = ((): string | undefined => {
    try { return savedTranscript === undefined ? undefined : groupSession(parseGroupParams(savedTranscript.transcript.params)) } catch { return undefined }
  })()
  const runDoneBefore = savedShare?.session === session && transcriptSession === session
  if (savedShare?.session === session && !runDoneBefore) log.warn({ session }, 'share.json of this run without its transcript.json (stopped while writing them): computing the run\'s outcome again from its saved state')
  let dkg: DkgMachine | undefined
  try {
    dkg = new DkgMachine({ params, signer, random: (n) => new Uint8Array(randomBytes(n)), verify: nativeVerifyDocument, oldShare: oldShareFile?.share },
      (await readJson(path(stateFile))) as DkgSnapshot | undefined)
  } catch (err) {
    // A member that left in a reshare and no longer holds the old share has no run to take part in.
    if (!runDoneBefore && !(reshare !== undefined && oldShareFile === undefined && !params.members.includes(signer.peerId))) throw err
  }
  const oldIndex = reshare === undefined ? 0 : dealersOf(params).indexOf(signer.peerId) + 1
  const index = params.members.indexOf(signer.peerId) + 1 || oldIndex
  const participants = participantsOf(params)
  /** The groups signing this chain here: the old one until a reshare's transition, then the new one. */
  const machines: RoundMachine[] = []
  const newest = (): RoundMachine | undefined => machines[machines.length - 1]
  let runDone = runDoneBefore
  let reshareState: NonNullable<GroupMemberStatus['reshare']>['state'] = 'running'
  let reshareMessage: string | undefined
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
  const recent = new BoundedMap<number, number>(RECENT_ROUNDS)

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
        if (retry && !closed && !runDone && failure === undefined) setTimeout(attempt, DKG_RETRY_MS).unref()
      })
    }
    attempt()
  }
  const broadcast = (doc: unknown, retry = false, to: readonly string[] = participants): void => {
    for (const peer of to) if (peer !== signer.peerId) send(peer, doc, retry)
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

  function startRounds (result: Pick<DkgResult, 'chainInfo' | 'commitments' | 'share' | 'index'>, stored: Iterable<BeaconEntry>): void {
    groupCommitments = result.commitments
    chain = parseChainInfo(result.chainInfo)
    const rounds = new RoundMachine({
      chain, members: params.members, threshold: params.threshold, commitments: result.commitments, index: result.index,
      share: result.share, signer, verify: nativeVerifyDocument, stored, catchupMs: init.catchupMs,
      ...(reshare !== undefined ? { firstRound: reshare.transition, group: session } : {})
    })
    machines.push(rounds)
    log.info({ chainHash: chain.hash, index, latestRound: rounds.latestRound, firstRound: rounds.firstRound }, 'beacon group chain ready')
    markReady(chain)
  }

  /** The old group's rounds, before a reshare's transition (after it, when the reshare did not happen). */
  function startOldRounds (from: NonNullable<typeof reshare>, share: ShareFile, stored: Iterable<BeaconEntry>, ended: boolean): void {
    chain = from.chain
    const rounds = new RoundMachine({
      chain, members: from.members, threshold: from.threshold, commitments: from.commitments, index: oldIndex,
      share: share.share, signer, verify: nativeVerifyDocument, stored, catchupMs: init.catchupMs,
      ...(share.group !== undefined ? { group: share.group } : {}), ...(ended ? { lastRound: from.transition - 1 } : {})
    })
    machines.unshift(rounds)
    log.info({ chainHash: chain.hash, oldIndex, latestRound: rounds.latestRound }, 'the old group signs until the reshare\'s transition')
    markReady(chain)
  }

  function markReady (c: ChainInfo): void {
    // Ready once the share and transcript written before this point are on disk.
    void writes.then(() => { resolveReady(c) })
  }

  /** Every round this member holds, from each group (the same chain, so any holds any). */
  function heldEntries (): BeaconEntry[] {
    return machines.flatMap(m => [...m.held()])
  }

  function onRoundEffects (machine: RoundMachine, out: RoundEffect[]): void {
    for (const e of out) {
      switch (e.kind) {
        case 'broadcast': broadcast(e.msg, false, machine.memberIds); break
        case 'send': send(e.to, e.msg); break
        case 'produced': {
          const at = clock.now()
          recent.set(e.entry.round, at)
          const line = JSON.stringify(e.entry) + '\n'
          write(async () => { await appendFile(path(ROUNDS_FILE), line, { mode: 0o644 }) })
          for (const m of machines) if (m !== machine) m.adopt(e.entry)
          for (const l of listeners) l(e.entry, at)
          break
        }
        case 'blame': {
          const members = e.record.body.bad.map(b => b.index)
          refused({ round: e.record.body.round, reason: `member ${members.join(', ')} sent a bad partial`, oldGroup: machine !== newest() }, 'bad partial signatures: named in a blame record')
          if (!keepBlame(machine, e.record)) break
          const line = JSON.stringify(e.record) + '\n'
          write(async () => { await appendFile(path(RECORDS_FILE), line, { mode: 0o644 }) })
          // The old group's blame stays in records.jsonl only: the group logged beside it (members,
          // commitments) is the newest one's, which would not be the group the record is judged by.
          if (machine === newest()) logBlame(e.record)
          break
        }
        case 'rejected':
          log.debug({ peer: e.from, reason: e.reason }, 'round message refused')
          break
      }
    }
  }

  // Every signed result we hold, rewritten as more arrive: `beacon group verify` compares them with our transcript.
  function saveResults (): void {
    if (dkg === undefined) return
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
          write(async () => { await writeAtomic(path(stateFile), text, 0o600) })
          log.info({ phase: e.phase }, 'DKG phase')
          break
        }
        case 'done': {
          const r = e.result
          dkgMs = clock.now() - params.dkg.start
          const share: ShareFile = { version: 1, session, index: r.index, share: r.share, ...(reshare !== undefined ? { group: session } : {}) }
          const transcript = { ...r, share: undefined, index: r.index }
          const keepOld = oldShareFile !== undefined ? JSON.stringify(oldShareFile) + '\n' : undefined
          runDone = true
          write(async () => {
            // The old share first, so that a crash in between leaves both shares on disk; the new
            // share last: share.json naming this run says the run is done here (its transcript in).
            if (keepOld !== undefined) await writeAtomic(path(PREVIOUS_SHARE_FILE), keepOld, 0o600)
            await writeAtomic(path(TRANSCRIPT_FILE), JSON.stringify(transcript) + '\n', 0o644)
            await writeAtomic(path(SHARE_FILE), JSON.stringify(share) + '\n', 0o600)
          })
          saveResults()
          logDkg(r, dkg === undefined ? [] : [...dkg.announcedResults.values()])
          log.info({ qual: r.qual, disqualified: r.disqualified.map(d => ({ dealer: d.dealer, reason: d.reason })), dkgMs, reshare: reshare !== undefined }, reshare === undefined ? 'DKG done' : `reshare done: the new group signs from round ${reshare.transition}`)
          if (reshare !== undefined) { reshareState = 'done'; machines[0]?.endAt(reshare.transition - 1) }
          startRounds(r, heldEntries())
          break
        }
        case 'left':
          runDone = true
          reshareState = 'left'
          if (reshare !== undefined) machines[0]?.endAt(reshare.transition - 1)
          log.info({ qual: e.outcome.qual }, `reshare done: this member is not in the new group; it signs no round from ${reshare?.transition ?? 0} on`)
          break
        case 'refused':
          reshareState = 'refused'
          reshareMessage = e.record.body.message
          log.error({ dealers: e.record.body.dealers, rejected: e.record.body.rejected }, `${e.record.body.message}; the old group goes on signing`)
          write(async () => { await appendFile(path(RECORDS_FILE), JSON.stringify(e.record) + '\n', { mode: 0o644 }) })
          logRefusal(makeRefusalRecord(e.transcript, e.record))
          break
        case 'failed':
          failure = e.reason
          if (reshare !== undefined) {
            // Refused: nobody has a new share, the old group goes on. Missed (this node came up
            // late): it does not know whether the others reshared, so it goes on signing for the
            // old group (its partials are refused by a new group, never blamed). Failed here only
            // (this member lacks its new share): it stops at the transition with the others and
            // comes back through a later reshare.
            if (e.cause !== 'refused') {
              reshareState = 'failed'
              reshareMessage = e.reason
              if (e.cause !== 'missed') machines[0]?.endAt(reshare.transition - 1)
            }
            log.error({ reason: e.reason }, 'reshare failed')
            if (machines.length === 0) rejectReady(new Error(e.reason))
            break
          }
          log.error({ reason: e.reason }, 'DKG failed')
          rejectReady(new Error(e.reason))
          break
        case 'rejected':
          refused({ peer: e.from, reason: e.reason }, 'DKG document refused')
          break
      }
    }
  }

  // A member sending bad partials every round decides how often it is blamed, not how much we
  // write: its blame records go into records.jsonl at most once an hour of rounds per member named
  // (by group: an old group's index is another member than the new group's), and the warning is a
  // rate-limited summary. The first record of each member (after a start) is always kept.
  const blameKept = new Map<RoundMachine, Map<number, number>>()
  function keepBlame (machine: RoundMachine, record: Signed<BlameBody>): boolean {
    let kept = blameKept.get(machine)
    if (kept === undefined) { kept = new Map(); blameKept.set(machine, kept) }
    return namesAnew(kept, record, 3600)
  }

  /**
   * Whether `record` names a member not named in the `seconds` of rounds before its round, `last`
   * holding the round each member was last named in (updated for those it names anew).
   */
  function namesAnew (last: Map<number, number>, record: Signed<BlameBody>, seconds: number): boolean {
    const { round } = record.body
    const every = Math.max(1, Math.floor(seconds / params.period))
    const fresh = record.body.bad.filter(b => { const at = last.get(b.index); return at === undefined || round >= at + every })
    for (const b of fresh) last.set(b.index, round)
    return fresh.length > 0
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
    if (!namesAnew(blameLogged, record, 86_400)) return
    const payload: BlameRecord = { record, members: params.members, commitments: groupCommitments }
    write(async () => {
      if (!dkgLogged) return
      try { await recordFn(BLAME_RECORD_KIND, payload) } catch (err) { log.warn({ reason: (err as Error).message }, 'a blame record could not be logged: it stays in records.jsonl') }
    })
  }

  // A refused reshare into the node's log too (kind beacon-reshare-refused), once per run: checked
  // first as any verifier will check it, so a record the transcript does not support is never signed.
  function logRefusal (payload: RefusalRecord): void {
    const record = init.record
    if (record === undefined) return
    write(async () => {
      try {
        assertRefusalRecord(payload, signer.peerId, nativeVerifyDocument)
        await record(RESHARE_REFUSED_KIND, payload)
      } catch (err) {
        log.warn({ reason: (err as Error).message }, 'the refused reshare could not be logged: its record stays in records.jsonl')
      }
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
        await writeAtomic(path(DKG_LOGGED_FILE), JSON.stringify({ session }) + '\n', 0o644)
        log.info({ session }, 'DKG record logged')
      } catch (err) {
        log.warn({ reason: (err as Error).message }, 'the DKG record could not be logged: the transcript stays in transcript.json')
      }
    })
  }

  // A member restarted after the DKG loads its share and the public transcript (re-checked) instead.
  if (savedShare !== undefined && (runDoneBefore || (reshare === undefined && savedShare.session !== session))) {
    const saved = savedTranscript
    if (saved === undefined || !runDoneBefore) throw new Error(`${init.dir}: share.json without a matching transcript.json for this group`)
    verifyDkgResult({ ...saved, share: savedShare.share, index: savedShare.index }, nativeVerifyDocument)
    chain = parseChainInfo(saved.chainInfo)
    const logged = (await readJson(path(DKG_LOGGED_FILE))) as { session?: unknown } | undefined
    dkgLogged = logged?.session === session
    if (!dkgLogged) {
      const kept = await readJson(path(RESULTS_FILE))
      logDkg({ ...saved, share: savedShare.share, index: savedShare.index }, Array.isArray(kept) ? kept : [])
    }
    const stored = await loadRounds()
    if (reshare !== undefined) {
      reshareState = 'done'
      if (oldShareFile !== undefined) startOldRounds(reshare, oldShareFile, stored, true)
    }
    startRounds({ ...saved, share: savedShare.share, index: savedShare.index }, stored)
  } else if (reshare !== undefined) {
    // Before (or during) a reshare: an old member that holds its old share goes on signing the old
    // group's rounds; one that left in it (its run done, restarted since) until the transition only.
    chain = reshare.chain
    // Left: its run done (saved), or its old share already deleted after the transition (above).
    const left = !params.members.includes(signer.peerId) && (dkg?.currentPhase === 'done' || oldShareFile === undefined)
    if (left) { reshareState = 'left'; runDone = true }
    if (oldShareFile !== undefined) startOldRounds(reshare, oldShareFile, await loadRounds(), left)
  }

  messenger.onFrame((from, frame) => {
    if (closed) return
    let doc: unknown
    try { doc = JSON.parse(fromUtf8(frame)) } catch { log.debug({ peer: from }, 'frame is not JSON'); return }
    const type = (doc as { type?: unknown } | null)?.type
    const now = clock.now()
    if (typeof type === 'string' && /^beacon-group\/(deal|share|responses|result)$/.test(type)) {
      if (dkg === undefined) return
      const before = dkg.announcedResults.size
      onDkgEffects(dkg.receive(from, doc, now))
      if (dkg.announcedResults.size !== before && dkg.outcome !== undefined) saveResults()
      return
    }
    const round = type === GROUP_PARTIAL ? (doc as { body?: { round?: unknown } }).body?.round : undefined
    const route = routeRoundMessage(machines, type === GROUP_PARTIAL, round)
    if (typeof route === 'object') onRoundEffects(route, route.receive(from, doc, now))
    else if (route === 'old-group') log.debug({ peer: from, round }, 'a partial of the old group, which this member does not sign for')
    else if (route === 'refused') refused({ peer: from, reason: `a partial for round ${String(round)}, which no group here signs` }, 'round message refused')
  })

  // Once the new group has signed past the window in which the old group's partials still count,
  // the old group's machine is dropped and every file its share can be had from is deleted: the
  // old share itself (share-previous.json; share.json for a member that left) and the runs' saved
  // states (the DKG's and each reshare's hold the member's polynomial and the shares it received,
  // a reshare's polynomial has the old share as its constant). This member can no longer sign for
  // the old group (forward security of its own old share; docs/beacon-group.md says what that does
  // not cover). Once a process: the deletions are idempotent, and a restart does them again.
  let retired = false
  function retireOldGroup (now: number): void {
    if (retired || reshare === undefined || chain === undefined || (reshareState !== 'done' && reshareState !== 'left')) return
    if (now < roundTime(chain, reshare.transition + PENDING_ROUNDS + SIGN_BACKLOG)) return
    retired = true
    if (reshareState === 'done' && machines.length >= 2) {
      const old = machines.shift() as RoundMachine
      for (const e of old.held()) newest()?.adopt(e)
    }
    const files = [PREVIOUS_SHARE_FILE, DKG_STATE_FILE, reshareStateFile(reshare.session), stateFile, ...(reshareState === 'left' ? [SHARE_FILE] : [])]
    write(async () => { for (const f of files) await rm(path(f), { force: true }) })
    log.info({ transition: reshare.transition }, reshareState === 'left'
      ? 'this member left the group: its old share and the runs\' saved states deleted'
      : 'the old group\'s share and the runs\' saved states deleted: the new group signs every round now')
  }

  const stopLoop = new AbortController()
  const step = (): number => {
    const now = clock.now()
    try {
      for (const m of [...machines]) onRoundEffects(m, m.tick(now))
      if (dkg !== undefined && !runDone && failure === undefined && now >= params.dkg.start) {
        onDkgEffects(dkg.currentPhase === 'idle' ? dkg.start(now) : dkg.tick(now))
      }
      retireOldGroup(now)
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
  const entryOf = (round: number): BeaconEntry | undefined => {
    for (let k = machines.length - 1; k >= 0; k--) { const e = machines[k].entry(round); if (e !== undefined) return e }
    return undefined
  }
  const latestServable = (): number => {
    if (machines.length === 0 || chain === undefined) return 0
    const now = clock.now()
    const due = now < chain.genesis_time * 1000 ? 0 : roundAt(chain, now)
    let r = Math.min(Math.max(...machines.map(m => m.latestRound)), due)
    while (r > 0 && entryOf(r) === undefined) r--
    return r
  }
  const status = (): GroupMemberStatus => {
    const now = clock.now()
    const current = newest()
    const s = current?.status(now)
    const mine = dkg?.announcedResults.get(index)?.body.groupHash
    const left = reshareState === 'left' && reshare !== undefined && chain !== undefined && now >= roundTime(chain, reshare.transition)
    return {
      id: params.id,
      index,
      members: params.members.length,
      threshold: params.threshold,
      phase: left ? 'left' : machines.length > 0 ? 'rounds' : failure !== undefined ? 'dkg-failed' : now < params.dkg.start ? 'waiting-for-dkg' : 'dkg',
      dkgPhase: dkg?.currentPhase ?? 'done',
      ...(dkg !== undefined ? { dkgHeld: dkg.held } : {}),
      failure,
      chain,
      latestRound: latestServable(),
      currentRound: s?.currentRound ?? 0,
      waiting: s?.waiting,
      suspects: s?.suspects ?? [],
      agreeing: mine === undefined || dkg === undefined ? undefined : [...dkg.announcedResults.values()].filter(r => r.body.groupHash === mine).map(r => r.body.member).sort((a, b) => a - b),
      dkgMs,
      recent: [...recent.entries()],
      ...(reshare !== undefined
        ? { reshare: { transition: reshare.transition, oldMembers: reshare.members.length, oldThreshold: reshare.threshold, state: reshareState, ...(reshareMessage !== undefined ? { message: reshareMessage } : {}) } }
        : {})
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
        if (chain === undefined || machines.length === 0) {
          res.writeHead(503, { 'content-type': 'application/json', 'cache-control': 'no-store' })
          res.end(JSON.stringify({ error: failure !== undefined ? `the group's DKG failed: ${failure}` : 'the group\'s DKG has not finished' }))
          return
        }
        const c = chain
        handler ??= drandV1Handler({
          info: c,
          latestRound: latestServable,
          expectedRound: () => { const now = clock.now(); return now < c.genesis_time * 1000 ? 0 : roundAt(c, now) },
          entry: (round) => round <= latestServable() ? entryOf(round) : undefined
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
    entry: entryOf,
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
