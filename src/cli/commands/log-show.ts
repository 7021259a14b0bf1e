import { defineCommand, type OptionSpecs, type ParsedArgs } from '../command.js'
import { access } from 'node:fs/promises'
import { UsageError } from '../errors.js'
import { verdictExitCode } from '../verdict.js'
import { parseSeqRange } from '../options.js'
import { quietOnClosedStdout } from '../stdout.js'
import { checkLine, ChainVerifier, formatFailure, summaryLine, type LogFailure, type LogLine } from '../../core/log/index.js'
import { verifyLogPayload } from '../../core/receipt.js'
import { gameLine, summarizeGames, type ScoredHand } from '../../core/games/game-summary.js'
import { nativeVerifyDocument } from '../../crypto/native-crypto.js'
import { readJsonLines } from '../../store/jsonl.js'
import { dataDirLogLines } from '../node-log.js'

const USAGE = `usage: fairdeal log show --data DIR [--from SEQ] [--to SEQ] [--chain-only]
       fairdeal log show FILE [--from SEQ] [--to SEQ] [--chain-only]

Prints a node's receipt log (or an exported one) as a table: one row per entry with its hand,
game, seats, beacon round and shield: ✓ when the entry verifies (the same checks as 'fairdeal
verify'), … and what is missing when it verifies but is incomplete (a receipt without every
seat's countersignature), ✗ and what failed otherwise. Exits as 'fairdeal verify' does: 0 when
every entry passed, 1 when any failed (a ✗ is shown), 3 when nothing failed but some hands are not
countersigned by every seat, 2 when the log could not be read. Then, for the played hands whose
receipts verify, one line per game: each seat's points added up from hand to hand, until a side
reaches the game's target (coinche 2000, belote and duo 1000; tarot none), when the next hand
starts a new game (docs/games.md "A game").

  --data DIR     the node's data directory (a running node's log comes through its control endpoint)
  --from SEQ     first entry (default 0)
  --to SEQ       last entry (default: the last one)
  --chain-only   the shield checks order, links, signatures and head, not the receipts`

/** What a row shows of a payload. Read from the receipt's shape, with nothing verified here. */
export interface PayloadColumns {
  table?: string
  /** null: the entry has no hand (a beacon group's records), shown as '-'. */
  hand?: number | null
  game?: string
  seats?: string[]
  beaconRound?: number | null
  note?: string
}

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj | undefined => typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Obj : undefined

/**
 * Columns of a receipt (its COMMIT body: table, hand, game, seats, beacon) or an abort record
 * (its body, and the COMMIT it refers to); for other payloads, the same field names wherever they are.
 */
export function payloadColumns (kind: string, payload: unknown): PayloadColumns {
  const p = obj(payload)
  const body = obj(p?.body)
  const commit = obj(obj(p?.commit)?.body) ?? obj(obj(body?.commit)?.body)
  const places = [commit, body, p].filter((x): x is Obj => x !== undefined)
  const pick = (key: string): unknown => places.find(x => key in x)?.[key]
  const beacon = obj(pick('beacon'))
  const out: PayloadColumns = {
    table: typeof pick('table') === 'string' ? pick('table') as string : undefined,
    hand: typeof pick('hand') === 'number' ? pick('hand') as number : undefined,
    game: typeof pick('game') === 'string' ? pick('game') as string : undefined,
    seats: Array.isArray(pick('seats')) ? (pick('seats') as unknown[]).map(String) : undefined,
    beaconRound: beacon === undefined ? (pick('beacon') === null ? null : undefined) : typeof beacon.round === 'number' ? beacon.round : undefined
  }
  if (kind === 'dkg' && p !== undefined) {
    // A beacon group member's DKG (docs/log.md "DKG records"): no table, hand or seats of its own.
    const params = obj(p.params)
    const members = Array.isArray(params?.members) ? params.members.length : '?'
    const key = obj(p.outcome)?.groupKey
    const reshared = obj(params?.reshare) !== undefined ? ' (reshare)' : ''
    return groupRow(`beacon group ${String(params?.id ?? '?')}${reshared}: member ${String(p.member ?? '?')} of ${members}, threshold ${String(params?.threshold ?? '?')}${typeof key === 'string' ? `, key ${key.slice(0, 16)}…` : ''}`)
  }
  if (kind === 'beacon-reshare-refused' && p !== undefined) {
    // A refused reshare (docs/log.md "Refused reshares"): why, in the refusal's own words.
    const params = obj(p.params)
    const refusal = obj(obj(p.refusal)?.body)
    return groupRow(`beacon group ${String(params?.id ?? '?')}: ${typeof refusal?.message === 'string' ? refusal.message : 'reshare refused'}`)
  }
  if (kind === 'beacon-blame' && p !== undefined) {
    // A group member named for bad partials (docs/log.md "Blame records of a beacon group").
    const record = obj(obj(p.record)?.body)
    const named = Array.isArray(record?.bad) ? (record.bad as unknown[]).map(b => String(obj(b)?.index ?? '?')).join(', ') : '?'
    return groupRow(`beacon group: member ${named} named for a bad partial of round ${String(record?.round ?? '?')}`)
  }
  if (kind === 'abort' && body !== undefined) {
    const blame = Array.isArray(body.blame) ? (body.blame as unknown[]).map(b => short(String(b))).join(' ') : ''
    out.note = `${typeof body.reason === 'string' ? body.reason : 'abort'}${blame !== '' ? `, blames ${blame}` : ''}`
  }
  return out
}

/** A beacon group's row: none of a table's columns apply. */
function groupRow (note: string): PayloadColumns {
  return { table: '-', hand: null, game: '-', seats: [], beaconRound: null, note }
}

function short (peer: string): string {
  return peer.length > 12 ? '…' + peer.slice(-6) : peer
}

function cell (text: string, width: number, right = false): string {
  const t = text.length > width ? text.slice(0, width - 1) + '…' : text
  return right ? t.padStart(width) : t.padEnd(width)
}

const HEADER = `${cell('SEQ', 6, true)}  ${cell('TIME', 16)}  ${cell('KIND', 7)}  ${cell('TABLE', 12)}  ${cell('HAND', 5, true)}  ` +
  `${cell('GAME', 8)}  ${cell('SEATS', 32)}  ${cell('BEACON', 10, true)}  SHIELD`

function row (seq: string, time: string, kind: string, c: PayloadColumns, shield: string): string {
  const seats = c.seats === undefined ? '?' : c.seats.map(s => s === 'robot' ? 'robot' : short(s)).join(' ')
  const beacon = c.beaconRound === undefined ? '?' : c.beaconRound === null ? '-' : String(c.beaconRound)
  return `${cell(seq, 6, true)}  ${cell(time, 16)}  ${cell(kind, 7)}  ${cell(c.table ?? '?', 12)}  ${cell(c.hand === undefined ? '?' : c.hand === null ? '-' : String(c.hand), 5, true)}  ` +
    `${cell(c.game ?? '?', 8)}  ${cell(seats, 32)}  ${cell(beacon, 10, true)}  ${shield}`
}

const OPTIONS = {
  data: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  'chain-only': { type: 'boolean' }
} satisfies OptionSpecs

export const command = defineCommand({
  name: 'log show',
  summary: 'one row per log entry, with its shield',
  help: USAGE,
  options: OPTIONS,
  positionals: { min: 0, max: 1 },
  run
})

async function run ({ values, positionals }: ParsedArgs<typeof OPTIONS>): Promise<number> {
  if ((positionals.length > 0) === (values.data !== undefined) || positionals.length > 1) {
    throw new UsageError('give either FILE or --data DIR (see --help)')
  }
  const { from, to } = parseSeqRange(values)
  const payloadCheck = values['chain-only'] === true ? null : verifyLogPayload

  let log: { close: () => Promise<void> } | undefined
  let lines: AsyncIterable<LogLine>
  if (values.data !== undefined) {
    // The head, then only the asked range: a whole log is not read to show a few rows. A running
    // node's log comes through its control endpoint.
    const source = await dataDirLogLines(values.data, { from, to })
    log = source
    lines = source.lines
  } else {
    const file = positionals[0]
    if (file !== '-') { try { await access(file) } catch (err) { throw new UsageError(`cannot read ${file}: ${(err as Error).message}`) } }
    lines = readJsonLines(file)
  }

  quietOnClosedStdout()
  const out = (text: string): void => { process.stdout.write(text + '\n') }
  const failures: LogFailure[] = []
  // With FILE the range options say what the file must hold, as for verify; with --data they
  // choose what is read, and the check is told the same range.
  const chain = new ChainVerifier({ from, to }, f => failures.push(f))
  let lineNo = 0
  let headerShown = false
  const showHeader = (): void => { if (!headerShown) { out(HEADER); headerShown = true } }
  const note = (f: LogFailure): void => { showHeader(); out(`${cell('', 6)}  ✗ ${formatFailure(f)}`) }
  // The played hands whose receipts verify: added up into games (docs/games.md "A game").
  const hands: ScoredHand[] = []
  let verdict
  try {
    for await (const line of lines) {
      lineNo++
      const check = checkLine(line, payloadCheck, nativeVerifyDocument)
      chain.push(check)
      const mine = failures.filter(f => f.line === lineNo && f.seq !== null)
      for (const f of failures) if (!mine.includes(f)) note(f)
      failures.length = 0
      if (check.type === 'head' && lineNo === 1) {
        if (check.authentic) out(`log of ${check.owner ?? '?'}, signed head at seq ${String(check.seq)}`)
        continue
      }
      showHeader()
      let doc: Obj | undefined
      try { doc = obj(JSON.parse(typeof line === 'string' ? line : new TextDecoder().decode(line))) } catch {}
      const body = obj(doc?.body)
      const kind = typeof body?.kind === 'string' ? body.kind : '?'
      const time = typeof body?.time === 'number' ? new Date(body.time).toISOString().slice(0, 16).replace('T', ' ') : '?'
      const columns = payloadColumns(kind, body?.payload)
      const seq = mine[0]?.seq ?? check.seq
      const failed = mine.filter(f => f.incomplete !== true)
      const shield = failed.length > 0
        ? `✗ ${failed.flatMap(f => f.problems).join('; ')}`
        : mine.length > 0
          ? `… ${mine.flatMap(f => f.problems).join('; ')}`
          : `✓${columns.note !== undefined ? ' ' + columns.note : ''}`
      out(row(seq === undefined || seq === null ? '?' : String(seq), time, kind, columns, shield))
      const scored = kind === 'receipt' && shield.startsWith('✓') ? scoredHand(body?.payload) : undefined
      if (scored !== undefined) hands.push(scored)
    }
    verdict = chain.finish()
    for (const f of failures) note(f)
  } finally {
    await log?.close()
  }
  if (lineNo === 0) out('the log is empty')
  for (const g of summarizeGames(hands)) out(gameLine(g))
  out(`${summaryLine(verdict)}${payloadCheck === null ? ' (receipts not checked: --chain-only)' : ''}`)
  return verdictExitCode(verdict)
}

/** A receipt's table, hand and score, when it is a played hand that reached its end. */
function scoredHand (payload: unknown): ScoredHand | undefined {
  const r = payload as { commit?: { body?: { table?: unknown, dealer?: unknown, hand?: unknown, game?: unknown } }, play?: { score?: { points?: unknown } | null } } | undefined
  const c = r?.commit?.body
  const points = r?.play?.score?.points
  if (c === undefined || !Array.isArray(points) || typeof c.table !== 'string' || typeof c.dealer !== 'string' || typeof c.hand !== 'number' || typeof c.game !== 'string') return undefined
  return { table: c.table, dealer: c.dealer, hand: c.hand, game: c.game, points: points.filter((p): p is number => typeof p === 'number') }
}
