import { checkLine, ChainVerifier, summaryLine, type LogFailure, type PayloadProblem } from '../../core/log/index.js'
import { verifyLogPayload } from '../../core/receipt.js'
import { parseChainInfo, verifyBeaconEntry, type ChainInfo } from '../../core/beacon/index.js'
import { receiptSchema, signedAbortSchema, ROBOT } from '../../core/hand/messages.js'
import { noncesBySeat, recomputeDeal } from '../../core/hand/recompute.js'
import { pureEngine, type SignatureEngine } from './ed25519.js'
import { InputError as BaseInputError } from '../../core/errors.js'

/**
 * What the verifier page shows, computed without the DOM: the input is recognised, every entry is
 * checked by the core (src/core: the same checks as `fairdeal verify`), and each verified hand is
 * laid out as its players saw it. Nothing here decides validity: verdicts are the core's problems.
 */

export type Status = 'verified' | 'incomplete' | 'failed'

export interface StageCards { stage: string, cards: string[], public: boolean }

export interface SeatView {
  seat: number
  /** Peer id, or 'robot'. */
  player: string
  /** What this seat alone received, stage by stage (and the public cards dealt in its name). */
  cards: StageCards[]
  countersigned: boolean
}

export interface HandView {
  table: string
  hand: number
  game: string
  scheme: string
  /** The dealing seat of this hand (the game's dealer, not the dealer node). */
  dealerSeat: number
  dealerNode: string
  commitment: string
  beaconRound: number | null
  key: string
  seats: SeatView[]
  /** Cards that lie on the table for everyone: the turned-up card, the dog. */
  onTable: StageCards[]
}

export interface AbortView {
  table: string
  hand: number
  reason: string
  detail: string
  by: string
  blame: string[]
}

export interface EntryResult {
  /** 'seq 3', 'seq 4..6', 'head', 'receipt', 'round 1234', … */
  label: string
  status: Status
  /** Empty when verified: the core's problems, as `fairdeal verify` prints them. */
  problems: string[]
  kind?: string
  /** Epoch ms the owner appended the entry (informative). */
  time?: number
  hand?: HandView
  abort?: AbortView
  beacon?: { round: number, chain: string }
}

export interface Analysis {
  input: 'log' | 'entry' | 'receipt' | 'abort' | 'beacon'
  /** The log's owner (log input), when known. */
  owner?: string | null
  headSeq?: number | null
  entries: EntryResult[]
  passed: number
  failed: number
  /** Entries that verify but are incomplete (receipts missing a countersignature): never a pass. */
  incomplete?: number
}

export class InputError extends BaseInputError {
  override name = 'InputError'
}

/** The one-line verdict text: `verified`, `incomplete: …` or `failed: …`. */
export function verdictText (entry: EntryResult): string {
  if (entry.status === 'verified') return 'verified'
  // The core words an incomplete receipt "incomplete: no countersignature …": said once, not twice.
  const prefix = `${entry.status}: `
  return prefix + entry.problems.map(p => p.startsWith(prefix) ? p.slice(prefix.length) : p).join('; ')
}

/** How many entries of the input were checked: passed, failed and incomplete alike. */
export function entriesChecked (analysis: Pick<Analysis, 'passed' | 'failed' | 'incomplete'>): number {
  return analysis.passed + analysis.failed + (analysis.incomplete ?? 0)
}

export function summaryText (analysis: Analysis): string {
  return summaryLine({ ...analysis, incomplete: analysis.incomplete ?? 0 })
}

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

export interface AnalyseOptions {
  engine?: SignatureEngine
  /** Lines per batch (default 64). */
  batch?: number
  /** Called after each batch with the entries checked so far. */
  onProgress?: (done: number, total: number) => void
}

/**
 * Checks a file's text: a log exported as JSON Lines (`fairdeal log export`), one log entry, one
 * receipt, one abort record, or a drand `{info, entries}` file. Throws InputError when the text
 * is none of these.
 */
export async function analyse (text: string, options: AnalyseOptions = {}): Promise<Analysis> {
  const engine = options.engine ?? pureEngine
  let whole: unknown
  let parsed = false
  try { whole = JSON.parse(text); parsed = true } catch {}
  if (parsed) {
    if (!isObj(whole)) throw new InputError('not a fairdeal file: expected a JSON object or JSON Lines')
    if (whole.type === 'log-head') return await analyseLog([text.trim()], engine, options)
    if (whole.type === 'log-entry') return await analyseEntry(text.trim(), whole, engine)
    if ('commit' in whole && 'reveal' in whole) return await analysePayload('receipt', whole, engine)
    if (whole.type === 'abort') return await analysePayload('abort', whole, engine)
    if ('info' in whole && 'entries' in whole) return analyseBeacon(whole)
    throw new InputError('not a fairdeal file: expected a log, a log entry, a receipt, an abort record or a drand {info, entries} file')
  }
  const lines = text.split('\n').map(l => l.endsWith('\r') ? l.slice(0, -1) : l)
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  if (lines.length === 0) throw new InputError('the file is empty')
  let first: unknown
  try { first = JSON.parse(lines[0]) } catch {}
  if (!isObj(first) || (first.type !== 'log-head' && first.type !== 'log-entry')) {
    throw new InputError('not a fairdeal file: not JSON, and its first line is not a log head or entry')
  }
  return await analyseLog(lines, engine, options)
}

async function analyseLog (lines: string[], engine: SignatureEngine, options: AnalyseOptions): Promise<Analysis> {
  const out: Analysis = { input: 'log', entries: [], passed: 0, failed: 0 }
  const pending: LogFailure[] = []
  const chain = new ChainVerifier({}, f => pending.push(f))
  const failureRow = (f: LogFailure): EntryResult => ({
    label: f.seq === null ? 'head' : f.toSeq !== undefined && f.toSeq !== f.seq ? `seq ${f.seq}..${f.toSeq}` : `seq ${f.seq}`,
    status: 'failed',
    problems: f.problems
  })
  const batch = Math.max(1, options.batch ?? 64)
  for (let start = 0; start < lines.length; start += batch) {
    const slice = lines.slice(start, start + batch)
    const values = slice.map(line => { try { return JSON.parse(line) as unknown } catch { return undefined } })
    await engine.prepare(values)
    try {
      slice.forEach((line, i) => {
        const lineNo = start + i + 1
        const check = checkLine(line, verifyLogPayload, engine.verifyDoc)
        chain.push(check)
        const mine = pending.filter(f => f.line === lineNo && f.seq !== null)
        for (const f of pending) if (!mine.includes(f)) out.entries.push(failureRow(f))
        pending.length = 0
        if (check.type === 'head' && mine.length === 0) {
          if (lineNo === 1 && check.authentic) { out.owner = check.owner ?? null; out.headSeq = check.seq ?? null }
          return
        }
        const body = isObj(values[i]) ? (values[i] as Obj).body : undefined
        const seq = mine[0]?.seq ?? check.seq
        const entry: EntryResult = {
          label: seq === undefined || seq === null ? `line ${lineNo}` : `seq ${seq}`,
          status: mine.length === 0 ? 'verified' : mine.every(f => f.incomplete === true) ? 'incomplete' : 'failed',
          problems: mine.flatMap(f => f.problems),
          kind: check.kind
        }
        if (isObj(body) && typeof body.time === 'number') entry.time = body.time
        if (isObj(body)) describePayload(entry, check.kind, body.payload)
        out.entries.push(entry)
      })
    } finally {
      engine.clear()
    }
    options.onProgress?.(Math.min(lines.length, start + batch), lines.length)
  }
  const verdict = chain.finish()
  for (const f of pending) out.entries.push(failureRow(f))
  out.owner ??= verdict.owner
  out.passed = verdict.passed
  out.failed = verdict.failed
  out.incomplete = verdict.incomplete
  return out
}

async function analyseEntry (line: string, value: Obj, engine: SignatureEngine): Promise<Analysis> {
  await engine.prepare([value])
  try {
    const check = checkLine(line, verifyLogPayload, engine.verifyDoc)
    const entry: EntryResult = {
      label: check.seq === undefined ? 'entry' : `seq ${check.seq}`,
      status: !check.authentic || check.problems.length > 0 ? 'failed' : (check.incomplete ?? []).length > 0 ? 'incomplete' : 'verified',
      problems: check.problems.length > 0 ? check.problems : check.incomplete ?? [],
      kind: check.kind
    }
    const body = value.body
    if (isObj(body)) {
      if (typeof body.time === 'number') entry.time = body.time
      describePayload(entry, check.kind, body.payload)
    }
    return single('entry', entry, check.owner ?? null)
  } finally {
    engine.clear()
  }
}

async function analysePayload (kind: 'receipt' | 'abort', value: Obj, engine: SignatureEngine): Promise<Analysis> {
  await engine.prepare([value])
  try {
    // The core's three verdicts: failed (a problem), incomplete (a receipt missing a countersignature), verified.
    const found = verifyLogPayload(kind, value, { verifyDoc: engine.verifyDoc }).problems
    const message = (p: string | PayloadProblem): string => typeof p === 'string' ? p : p.message
    const failures = found.filter(p => typeof p === 'string' || p.incomplete !== true).map(message)
    const missing = found.filter(p => typeof p !== 'string' && p.incomplete === true).map(message)
    const status: Status = failures.length > 0 ? 'failed' : missing.length > 0 ? 'incomplete' : 'verified'
    const entry: EntryResult = { label: kind, status, problems: failures.length > 0 ? failures : missing, kind }
    describePayload(entry, kind, value)
    return single(kind, entry)
  } finally {
    engine.clear()
  }
}

function single (input: Analysis['input'], entry: EntryResult, owner?: string | null): Analysis {
  const ok = entry.status === 'verified'
  return { input, owner, entries: [entry], passed: ok ? 1 : 0, failed: entry.status === 'failed' ? 1 : 0, incomplete: entry.status === 'incomplete' ? 1 : 0 }
}

function analyseBeacon (value: Obj): Analysis {
  if (!Array.isArray(value.entries)) throw new InputError('"entries" must be a list of drand entries')
  const out: Analysis = { input: 'beacon', entries: [], passed: 0, failed: 0 }
  let chain: ChainInfo
  try {
    chain = parseChainInfo(value.info, 'chain info')
  } catch (err) {
    out.entries.push({ label: 'chain info', status: 'failed', problems: [(err as Error).message] })
    out.failed = 1
    return out
  }
  value.entries.forEach((e: unknown, i) => {
    const claimed = isObj(e) && typeof e.round === 'number' ? e.round : undefined
    const verdict = verifyBeaconEntry(chain, e, claimed ?? 0)
    const entry: EntryResult = {
      label: claimed !== undefined ? `round ${claimed}` : `entry ${i + 1}`,
      status: verdict.ok ? 'verified' : 'failed',
      problems: verdict.ok ? [] : [`${verdict.reason}: ${verdict.message}`],
      kind: 'beacon'
    }
    if (claimed !== undefined) entry.beacon = { round: claimed, chain: chain.metadata.beaconID }
    if (verdict.ok) out.passed++
    else out.failed++
    out.entries.push(entry)
  })
  return out
}

/** Fills in what the entry shows: a verified receipt's hand as its players saw it, an abort's reason. */
function describePayload (entry: EntryResult, kind: string | undefined, payload: unknown): void {
  if (kind === 'abort') {
    const parsed = signedAbortSchema.safeParse(payload)
    if (parsed.success) {
      const b = parsed.data.body
      entry.abort = { table: b.table, hand: b.hand, reason: b.reason, detail: b.detail, by: parsed.data.signer, blame: b.blame }
    }
    return
  }
  // Cards are shown only for a hand that verified: a failed receipt's cards prove nothing.
  if (kind !== 'receipt' || entry.status !== 'verified') return
  const parsed = receiptSchema.safeParse(payload)
  if (!parsed.success) return
  const { commit: { body: commit }, reveal: { body: reveal }, acks } = parsed.data
  const { key, deal } = recomputeDeal(commit, reveal.secret, noncesBySeat(commit, reveal.nonces), reveal.beacon, reveal.params)
  const deliveries = deal.deliveries.filter(d => reveal.stages.includes(d.stage))
  const acked = new Set(acks.map(a => a.body.seat))
  entry.hand = {
    table: commit.table,
    hand: commit.hand,
    game: commit.game,
    scheme: commit.scheme,
    dealerSeat: commit.params.dealer,
    dealerNode: commit.dealer,
    commitment: commit.commitment,
    beaconRound: commit.beacon?.round ?? null,
    key,
    seats: commit.seats.map((player, seat) => ({
      seat,
      player,
      cards: deliveries.filter(d => d.seat === seat).map(d => ({ stage: d.stage, cards: d.cards, public: d.public })),
      countersigned: player !== ROBOT && acked.has(seat)
    })),
    onTable: deliveries.filter(d => d.seat === null).map(d => ({ stage: d.stage, cards: d.cards, public: true }))
  }
}
