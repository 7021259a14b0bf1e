import type { LineCheck } from './check.js'
import { HandChains } from './hand-chain.js'
import { lateAckProblems } from './late-ack.js'
import type { AcksDue, LateAck, LogFailure } from './types.js'
import { Reason } from '../hand/reasons.js'

export type { LogFailure } from './types.js'

export interface ChainOptions {
  /** The first seq the input must hold. Default 0 (a whole log). */
  from?: number
  /**
   * The last seq the input must hold. Default: the seq named by the signed head, which is then
   * required; with `to` the head may be absent (a partial export) and must not be below `to`.
   */
  to?: number
  /** The peer id that must own the log (for a log fetched from a peer: that peer). */
  expectOwner?: string
  /**
   * The input is a node's whole store, not an export: entries missing before the head are lost,
   * and no hint about checking a partial export is given.
   */
  store?: boolean
}

export interface LogVerdict {
  /** Entries that passed every check. */
  passed: number
  /** Failed entries, plus missing entries and missing hands, plus 1 if the head check failed. */
  failed: number
  /** Entries that verify but are incomplete (receipts missing a countersignature): neither passed nor failed. */
  incomplete: number
  /** Lines read (head included). */
  lines: number
  owner: string | null
  /** The signed head, when present and authentic. */
  head: { seq: number, hash: string } | null
  /** Highest seq reached in the input, or null when it held no entry. */
  lastSeq: number | null
  /**
   * Receipts reported incomplete where they were read, completed by late-ack entries after them
   * (counted passed): a reader that holds the incomplete lines back until the end may drop these.
   */
  completed: number[]
}

interface Anchor {
  seq: number
  /** null when the entry at `seq` is absent or not authentic: the next link cannot be checked. */
  hash: string | null
}

/**
 * The in-order half of verification: sequence numbers, links, owner, head. It sees each line's
 * {@link LineCheck} once, in input order, and keeps O(1) state, so logs of any length verify in
 * constant memory.
 *
 * Blame goes to the entry that is wrong: after an entry that fails its own checks the next link is
 * not checked (the tampered entry is the one at fault, not its successor); an authentic entry that
 * jumps ahead makes the skipped range "missing"; one that goes back is "out of order" or a repeat.
 */
export class ChainVerifier {
  private readonly from: number
  private readonly to: number | undefined
  private readonly store: boolean
  private owner: string | undefined
  private readonly report: (failure: LogFailure) => void
  private anchor: Anchor | null = null
  private head: { seq: number, hash: string } | null = null
  private headPresent = false
  /** Seq of the first authentic entry: where a partial export starts. */
  private firstSeq: number | undefined
  private lines = 0
  private passed = 0
  private failed = 0
  private incomplete = 0
  private readonly hands = new HandChains()
  /**
   * Failures of entries that hold a hand (a link), kept until the hand chains are checked so that a
   * chain problem of the same entry joins its failure: each entry is reported once (rare: failures only).
   */
  private readonly held = new Map<number, LogFailure>()
  /**
   * Incomplete receipts by COMMIT digest: the acks still due and the seats acked late (late-ack
   * entries after it may complete it). Rare: only receipts that lack an ack are kept.
   */
  private readonly due = new Map<string, { seq: number, due: AcksDue, late: Set<string> }>()
  /** The groups of the passing `dkg` entries read so far (groupRef): a blame record must name one. Few: one per DKG the owner took part in. */
  private readonly groups = new Set<string>()
  /** Seqs of the receipts late acks completed (LogVerdict.completed). */
  private readonly completed = new Set<number>()
  /** An entry could not be read (or is missing): the hand it held is unknown, so no hand-chain gap is reported. */
  private blind = false

  constructor (options: ChainOptions, report: (failure: LogFailure) => void) {
    this.from = options.from ?? 0
    this.to = options.to
    this.store = options.store === true
    this.owner = options.expectOwner
    this.report = report
  }

  private fail (failure: LogFailure): void {
    this.failed += failure.count
    this.report(failure)
  }

  private missing (first: number, last: number, why: string): void {
    this.blind = true
    const n = last - first + 1
    this.fail({ seq: first, toSeq: last, problems: [`missing${n > 1 ? ` (${n} entries)` : ''}: ${why}`], count: n, fault: 'owner' })
  }

  push (check: LineCheck): void {
    const line = ++this.lines
    if (check.type === 'head') { this.pushHead(check, line); return }

    const expected = this.anchor === null ? this.from : this.anchor.seq + 1
    const claims = check.seq !== undefined && check.seq !== expected ? [`the line claims seq ${check.seq}`] : []
    if (!check.authentic) {
      this.blind = true
      this.fail({ seq: expected, line, problems: [...check.problems, ...claims], count: 1, fault: 'owner' })
      this.anchor = { seq: expected, hash: null }
      return
    }
    if (this.owner === undefined) this.owner = check.owner
    else if (check.owner !== this.owner) {
      this.blind = true
      this.fail({ seq: expected, line, problems: [`signed by ${check.owner ?? '?'}, not by the log owner ${this.owner}`, ...claims], count: 1, fault: 'owner' })
      this.anchor = { seq: expected, hash: null }
      return
    }

    const seq = check.seq as number
    if (seq < expected) {
      const problem = this.anchor === null
        ? `before the start of the range (seq ${this.from})`
        : seq === this.anchor.seq && check.hash === this.anchor.hash
          ? 'repeats the previous line'
          : `out of order: found after seq ${this.anchor.seq}`
      this.fail({ seq, line, problems: [problem], count: 1, fault: 'owner' })
      return
    }
    if (seq > expected) {
      this.missing(expected, seq - 1, this.anchor === null ? `the first entry is seq ${seq}` : `the line after seq ${this.anchor.seq} is seq ${seq}`)
      this.anchor = { seq: seq - 1, hash: null }
    }

    const problems: string[] = []
    if (this.to !== undefined && seq > this.to) problems.push(`beyond the end of the range (seq ${this.to})`)
    else if (this.head !== null && seq > this.head.seq) problems.push(`beyond the signed head (seq ${this.head.seq})`)
    const anchor = this.anchor
    if (seq > 0 && anchor !== null && anchor.seq === seq - 1 && anchor.hash !== null && check.prev !== anchor.hash) {
      problems.push(`prev does not match the hash of seq ${seq - 1}`)
    }
    if (this.head !== null && seq === this.head.seq && check.hash !== this.head.hash) {
      problems.push('its hash does not match the signed head')
    }
    problems.push(...check.problems)
    // Problems of the log itself (order, prev, head) are its owner's; a payload's are its signers'.
    const fault = problems.length > check.problems.length ? { fault: 'owner' } : {}
    const lateCodes: string[] = []
    if (problems.length === 0 && check.lateAck !== undefined) this.matchLateAck(check.lateAck, problems, lateCodes)
    // A blame record names its group; a whole log holds the DKG that made it before it (docs/log.md).
    if (problems.length === 0 && check.groupRef !== undefined && this.from === 0 && !this.groups.has(check.groupRef)) {
      problems.push(`blame record: its group (members and commitments) is that of no dkg entry before it in this log`)
      lateCodes.push(Reason.BLAME_UNMATCHED)
    }
    if (problems.length === 0 && check.group !== undefined) this.groups.add(check.group)
    this.firstSeq ??= seq
    const allCodes = [...(check.codes ?? []), ...lateCodes.filter(c => check.codes?.includes(c) !== true)]
    const codes = allCodes.length === 0 ? {} : { codes: allCodes }
    // Said at once, in seq order (the terminal and the page show each entry's row as it comes);
    // remembered for an entry that holds a hand, so that a hand-chain problem found at the end for
    // that same entry is not said a second time (finish).
    const report = (failure: LogFailure): void => { if (check.link !== undefined) this.held.set(seq, failure); this.report(failure) }
    if (problems.length > 0) {
      this.failed++
      report({ seq, line, problems, ...codes, ...fault, count: 1 })
    } else if (check.incomplete !== undefined && check.incomplete.length > 0) {
      this.incomplete++
      report({ seq, line, problems: check.incomplete, ...codes, incomplete: true, count: 1 })
      // Late-ack entries after it may still bring the acks it lacks (docs/log.md, "Late acks").
      if (check.due !== undefined && !this.due.has(check.due.commit)) this.due.set(check.due.commit, { seq, due: check.due, late: new Set() })
    } else this.passed++
    if (check.link !== undefined) this.hands.add(check.link, seq, line, problems.length > 0 ? 'failed' : check.incomplete !== undefined && check.incomplete.length > 0 ? 'incomplete' : 'passed')
    this.anchor = { seq, hash: check.hash ?? null }
  }

  /**
   * A late-ack entry whose ACK verified, checked against the incomplete receipt of its COMMIT
   * earlier in this log exactly as an ack of that receipt (docs/log.md, "Late acks"); when it
   * holds, that seat's ack is no longer due.
   */
  private matchLateAck (ack: LateAck, problems: string[], codes: string[]): void {
    const add = (code: string, message: string): void => { problems.push(message); if (!codes.includes(code)) codes.push(code) }
    const held = this.due.get(ack.commit)
    const what = `late ack of seat ${ack.seat}`
    if (held === undefined) {
      // A partial range may not hold the receipt: nothing to match it with, nothing against it.
      if (this.from === 0) add('late-ack-unmatched', `${what}: no incomplete receipt of its COMMIT (${ack.commit.slice(0, 12)}…) earlier in this log`)
      return
    }
    for (const p of lateAckProblems(held.due, held.late, ack, `the receipt at seq ${held.seq}`)) add(p.code, p.message)
    if (problems.length === 0) held.late.add(String(ack.seat))
  }

  private pushHead (check: LineCheck, line: number): void {
    if (line !== 1 || this.headPresent) {
      this.fail({ seq: null, line, problems: ['a head is only allowed as the first line'], count: 1, fault: 'owner' })
      return
    }
    this.headPresent = true
    if (!check.authentic) {
      this.fail({ seq: null, line, problems: check.problems, count: 1, fault: 'owner' })
      return
    }
    if (this.owner !== undefined && check.owner !== this.owner) {
      this.fail({ seq: null, line, problems: [`signed by ${check.owner ?? '?'}, not by the log owner ${this.owner}`], count: 1, fault: 'owner' })
      return
    }
    this.owner = check.owner
    this.head = { seq: check.seq as number, hash: check.hash as string }
    if (this.to !== undefined && this.head.seq < this.to) {
      this.fail({ seq: null, line, problems: [`the signed head is at seq ${this.head.seq}, before the end of the range (seq ${this.to})`], count: 1 })
    } else if (this.head.seq < this.from) {
      this.fail({ seq: null, line, problems: [`the signed head is at seq ${this.head.seq}, before the start of the range (seq ${this.from})`], count: 1 })
    }
  }

  finish (): LogVerdict {
    // Hand chains, once every entry is in (hands may end out of order). A passed or incomplete
    // entry that breaks a link becomes a failed one; missing hands count as failed entries.
    // A chain problem of an entry that failed or is incomplete joins that entry's one failure.
    const extra: LogFailure[] = []
    // An incomplete receipt whose every missing ack came in a late-ack entry after it counts as
    // passed (it was reported as read, incomplete: what that entry alone holds).
    const completed = this.completed
    for (const { seq, due, late } of this.due.values()) {
      if (Object.keys(due.seats).some(s => !late.has(s))) continue
      completed.add(seq)
      this.held.delete(seq)
      this.incomplete--
      this.passed++
    }
    this.due.clear()
    // A tail missing (entries the head or the range says exist, not read) may have held any hand:
    // no gap is reported then, as for an entry that could not be read (docs/log.md, "Hand chains").
    const lastRead = this.anchor === null ? this.from - 1 : this.anchor.seq
    const tailMissing = this.to !== undefined ? lastRead < this.to : this.head !== null && lastRead < this.head.seq
    // An entry that breaks two chain rules fails once: its second problem is said, not counted again.
    const turned = new Set<number>()
    for (const found of this.hands.finish(this.from === 0, !this.blind && !tailMissing)) {
      const failure = found.failure
      const status = found.status === 'incomplete' && failure.seq !== null && completed.has(failure.seq) ? 'passed' : found.status
      const held = failure.seq === null || status === 'missing' ? undefined : this.held.get(failure.seq)
      if (held !== undefined) {
        // An entry that failed already was said once, where it is: a chain problem it causes is not
        // a second failure. An incomplete one that also breaks a chain is failed now, said again.
        if (held.incomplete === true) {
          if (!turned.has(failure.seq as number)) { this.incomplete--; this.failed++ }
          turned.add(failure.seq as number)
          extra.push(failure)
        }
        continue
      }
      if (status !== 'missing' && failure.seq !== null && turned.has(failure.seq)) { extra.push(failure); continue }
      if (status === 'passed') this.passed--
      if (status === 'incomplete') this.incomplete--
      this.failed += failure.count
      if (status !== 'missing' && failure.seq !== null) turned.add(failure.seq)
      extra.push(failure)
    }
    for (const failure of extra.sort((a, b) => (a.seq ?? -1) - (b.seq ?? -1))) this.report(failure)
    this.held.clear()
    const last = this.anchor === null ? this.from - 1 : this.anchor.seq
    const entries = this.anchor !== null
    if (this.to !== undefined) {
      if (last < this.to) this.missing(last + 1, this.to, `the range ends at seq ${this.to}`)
    } else if (this.head !== null) {
      if (last < this.head.seq) {
        this.missing(last + 1, this.head.seq, `the signed head says the log ends at seq ${this.head.seq}` +
          (entries && !this.store ? ` (to check a partial export, pass the range it holds: ${this.firstSeq !== undefined && this.firstSeq > 0 ? `--from ${this.firstSeq} ` : ''}--to ${last})` : ''))
      }
    } else if (!this.headPresent && (entries || this.lines > 0)) {
      this.fail({
        seq: null,
        problems: ['missing: the input does not start with the signed head, so nothing proves where the log ends (to check a partial export, pass the range it holds: --to SEQ)'],
        count: 1
      })
    }
    return {
      passed: this.passed,
      failed: this.failed,
      incomplete: this.incomplete,
      lines: this.lines,
      owner: this.owner ?? null,
      head: this.head,
      lastSeq: entries ? last : null,
      completed: [...this.completed].sort((a, b) => a - b)
    }
  }
}

/** "N passed, M failed", with ", K incomplete" when some entries are: the last line of a verification. */
export function summaryLine (verdict: Pick<LogVerdict, 'passed' | 'failed' | 'incomplete'>): string {
  const counts = `${verdict.passed} passed, ${verdict.failed} failed${verdict.incomplete > 0 ? `, ${verdict.incomplete} incomplete` : ''}`
  // With nothing failed, an incomplete count says what it means (the page shows this line too), so
  // that a hand a seat walked away from is not read as a forgery.
  if (verdict.failed === 0 && verdict.incomplete > 0) {
    return `${counts}: nothing failed; ${verdict.incomplete} ${verdict.incomplete === 1 ? 'hand is' : 'hands are'} not countersigned by every seat`
  }
  return counts
}

/** "seq 5: …", "seq 5..9: missing …", "head: …": one line per failure. */
export function formatFailure (failure: LogFailure): string {
  const where = failure.seq === null
    ? 'head'
    : failure.toSeq !== undefined && failure.toSeq !== failure.seq ? `seq ${failure.seq}..${failure.toSeq}` : `seq ${failure.seq}`
  return `${where}: ${failure.problems.join('; ')}`
}
