import { CoreInputError } from '../errors.js'
import { isHex } from '../bytes.js'
import { BoundedMap } from '../bounded-set.js'
import { signDocument, verifyDocument, type Signed } from '../signed.js'
import type { Signer } from '../identity.js'
import type { ChainInfo } from './chain-info.js'
import { parseBeaconEntry, type BeaconEntry } from './entry.js'
import { roundAt, roundTime } from './rounds.js'
import type { DocumentVerifier } from './dkg-documents.js'
import { publicShares } from './dkg.js'
import {
  entryFromSignature, g1FromHex, g2FromHex, hashRound, pairingTarget, partialSign, pointHex, publicKeyMatches, recoverG1, scalarFromHex, verifyOnG1,
  verifyOnTarget, type G1Point, type G2Point, type PairingTarget
} from './threshold.js'
import { verifyBeaconEntry } from './verify.js'

// The group's rounds. Every period each member signs the round with its share and sends the
// partial signature to the others; any t partials recover the group signature by Lagrange
// interpolation at 0. The recovered signature is verified once against the group key; only when
// that fails are the partials checked one by one, the bad ones dropped, and their senders named in
// a signed blame record. A member produces (and so serves) a round only once its own clock says the
// round is due and only with t partials that give a valid signature; a member's clock off by up to
// a period only delays its own view, never the group's rounds.

export const GROUP_PARTIAL = 'beacon-group/partial'
export const GROUP_BLAME = 'beacon-group/blame'

/**
 * A member's partial signature of a round. `group`, present only in a group made by a reshare, is
 * that reshare's session: the old and the new group of one chain give members different indices
 * and shares, so a partial names its group and is never checked against the other's shares (a
 * member still signing for the old group after the transition is refused, not blamed).
 */
export interface PartialBody { chain: string, round: number, index: number, partial: string, group?: string }
export interface BlameBody {
  chain: string
  round: number
  /** Each bad partial as its sender signed it (verifiable by anyone holding the chain's DKG result). */
  bad: Array<{ index: number, reason: 'bad-partial', partial: Signed<PartialBody> }>
}

/** Frames of the round protocol besides partials: catch-up requests and answers (entries verify alone). */
export interface SyncRequest { type: 'beacon-group/sync', chain: string, from: number, to: number }
export interface SyncReply { type: 'beacon-group/rounds', chain: string, entries: BeaconEntry[] }

/** Rounds a member still signs when it falls behind (a restart, a slow clock). */
export const SIGN_BACKLOG = 8
/** Partials are kept for rounds this far back (and one period ahead, for clocks that run fast). */
export const PENDING_ROUNDS = 32
/** Catch-up looks this far back, asks at most this many rounds at once. */
export const CATCHUP_WINDOW = 256
export const MAX_SYNC_ENTRIES = 64
/** Produced entries kept in memory (older ones are in the member's store). */
export const KEEP_ENTRIES = 4096
/**
 * Rounds the group did not produce when they were due (fewer than t members were up) are made
 * afterwards, oldest first, one per catch-up period (as drand's catch-up): partials are taken for
 * this many rounds from the oldest one missing.
 */
export const BACKLOG_WINDOW = 8

export type RoundEffect =
  | { kind: 'broadcast', msg: Signed<PartialBody> }
  | { kind: 'send', to: string, msg: SyncRequest | SyncReply }
  | { kind: 'produced', entry: BeaconEntry, via: 'partials' | 'catch-up' }
  | { kind: 'blame', record: Signed<BlameBody> }
  | { kind: 'rejected', from: string, reason: string }

export interface RoundInit {
  chain: ChainInfo
  members: string[]
  threshold: number
  /** Summed commitments of the DKG (public shares derive from them). */
  commitments: string[]
  index: number
  /** This member's secret share (hex scalar). */
  share: string
  signer: Signer
  verify?: DocumentVerifier
  /** Entries already stored (after a restart). */
  stored?: Iterable<BeaconEntry>
  /**
   * The catch-up period: a round the group missed is made at most once per this many ms, oldest
   * first (default: half the chain's period). Rounds still in the signing window (SIGN_BACKLOG)
   * are made as soon as t partials are in, as always.
   */
  catchupMs?: number
  /**
   * The rounds this group signs, for a group made or ended by a reshare (docs/beacon-group.md
   * "Resharing"): partials for rounds outside [firstRound, lastRound] are another group's and are
   * refused; rounds outside it are still kept and served when fetched (the key is the same).
   */
  firstRound?: number
  lastRound?: number
  /** The session of the reshare that made this group (PartialBody.group); absent for a group's first DKG. */
  group?: string
}

export interface RoundStatus {
  now: number
  currentRound: number
  latestRound: number
  produced: number
  /** Why the current round is not out yet, if it is not. */
  waiting?: string
  suspects: number[]
}

export class RoundMachine {
  readonly chain: ChainInfo
  private readonly members: string[]
  private readonly t: number
  private readonly index: number
  private readonly share: bigint
  private readonly signer: Signer
  private readonly verify: DocumentVerifier
  private readonly groupKey: G2Point
  private readonly pubs: G2Point[]
  private readonly entries = new Map<number, BeaconEntry>()
  private readonly pending = new Map<number, Map<number, { point: G1Point, doc: Signed<PartialBody> }>>()
  private readonly hashed = new BoundedMap<number, G1Point>(PENDING_ROUNDS * 2)
  private readonly suspects = new Set<number>()
  private lastSigned = 0
  private latest = 0
  private catchupFloor = 1
  private catchupAttempts = 0
  private catchupFirst = 0
  private lastAskMs = -Infinity
  /** The oldest round not produced since this machine started (or since the last stored one). */
  private backlogFloor = 1
  private nextBacklogMs = -Infinity
  private readonly catchupMs: number
  readonly firstRound: number
  private last: number
  private readonly group: string | undefined
  /**
   * The next round's work done while the member is idle (after the current round is out): its
   * point, this member's partial, and e(H(r), key). When the round is due only the partials'
   * recovery and one pairing are left, so a round's latency is about half a full check's.
   */
  private readonly prepared = new Map<number, { partial?: G1Point, target: PairingTarget }>()

  constructor (init: RoundInit) {
    this.chain = init.chain
    this.members = init.members
    this.t = init.threshold
    this.index = init.index
    this.share = scalarFromHex(init.share, 'share')
    this.signer = init.signer
    this.verify = init.verify ?? verifyDocument
    this.groupKey = g2FromHex(init.chain.public_key, 'group key')
    this.pubs = publicShares(init.commitments, init.members.length)
    if (!publicKeyMatches(this.share, this.pubs[this.index - 1])) throw new CoreInputError('the secret share does not match this member\'s public share')
    this.firstRound = init.firstRound ?? 1
    this.group = init.group
    this.last = init.lastRound ?? Number.MAX_SAFE_INTEGER
    for (const e of init.stored ?? []) this.keep(e)
    this.lastSigned = Math.max(this.latest, this.firstRound - 1)
    // Rounds before the last one stored are taken as made (the store keeps every round made).
    this.backlogFloor = Math.max(this.latest + 1, this.firstRound)
    this.catchupMs = Math.max(0, init.catchupMs ?? init.chain.period * 500)
  }

  get latestRound (): number { return this.latest }
  /** The group's members (peer ids, index order): whom its partials go to. */
  get memberIds (): readonly string[] { return this.members }
  entry (round: number): BeaconEntry | undefined { return this.entries.get(round) }

  /** Whether this group signs `round` (its range, for a group made or ended by a reshare). */
  signs (round: number): boolean { return round >= this.firstRound && round <= this.last }
  get lastRound (): number { return this.last }
  /** This group signs no round after `round` (a reshare handed the rounds after it to the new group). */
  endAt (round: number): void { this.last = Math.min(this.last, round) }

  /** A round another machine of the same chain verified (the group before or after a reshare): kept and served. */
  adopt (entry: BeaconEntry): void {
    if (!this.entries.has(entry.round)) this.keep(entry)
  }

  /** Every round this machine keeps (the last KEEP_ENTRIES made or fetched). */
  held (): IterableIterator<BeaconEntry> { return this.entries.values() }

  /** This member's partial of `round`, or a sender's as received: of this chain and, for a reshared group, of this group. */
  private partialBody (round: number, index: number, partial: string): PartialBody {
    return { chain: this.chain.hash, round, index, partial, ...(this.group !== undefined ? { group: this.group } : {}) }
  }

  private currentRound (now: number): number {
    return now < this.chain.genesis_time * 1000 ? 0 : roundAt(this.chain, now)
  }

  private hash (round: number): G1Point {
    let h = this.hashed.get(round)
    if (h === undefined) {
      h = hashRound(round)
      this.hashed.set(round, h)
    }
    return h
  }

  private keep (entry: BeaconEntry): void {
    this.entries.set(entry.round, entry)
    if (entry.round > this.latest) this.latest = entry.round
    if (this.entries.size > KEEP_ENTRIES) {
      const oldest = Math.min(...this.entries.keys())
      this.entries.delete(oldest)
    }
    this.pending.delete(entry.round)
    this.prepared.delete(entry.round)
  }

  /** Signs every due round not yet signed (at most SIGN_BACKLOG back), recovers what can be, asks for what is missing. */
  tick (now: number): RoundEffect[] {
    const out: RoundEffect[] = []
    const current = this.currentRound(now)
    if (current === 0) return out
    for (let r = Math.max(this.lastSigned + 1, current - SIGN_BACKLOG + 1, this.firstRound); r <= Math.min(current, this.last); r++) {
      if (this.entries.has(r)) continue
      this.signRound(r, current, out)
    }
    this.lastSigned = Math.max(this.lastSigned, current)
    // Rounds the member never saw recovered (it was down, or partitioned): ask peers, one per period.
    for (const r of [...this.pending.keys()]) if (r <= current) this.tryRecover(r, current, out)
    this.catchUp(now, current, out)
    this.remakeBacklog(now, current, out)
    // In the period's second half: right after a round, the other members may still be checking it,
    // and on a shared machine this work would slow the last of them.
    if (current === 0 || (this.entries.has(current) && now >= roundTime(this.chain, current) + this.chain.period * 500)) this.prepare(current + 1)
    for (const r of this.pending.keys()) if (r < current - PENDING_ROUNDS && !this.inBacklog(r)) this.pending.delete(r)
    return out
  }

  private inBacklog (round: number): boolean {
    return round >= this.backlogFloor && round < this.backlogFloor + BACKLOG_WINDOW
  }

  /**
   * The oldest round past the signing window that nobody made (a peer that has it answers the
   * partial with the round, or the catch-up above fetches it): signed, and its partial sent again,
   * once per catch-up period until t partials make it; then the next one. So every round of the
   * chain is made in the end, and a timelock sealed to a round due while the group was down opens.
   */
  private remakeBacklog (now: number, current: number, out: RoundEffect[]): void {
    while (this.entries.has(this.backlogFloor)) this.backlogFloor++
    const r = this.backlogFloor
    if (r > current - SIGN_BACKLOG || r > this.last || now < this.nextBacklogMs) return
    this.nextBacklogMs = now + this.catchupMs
    const mine = this.pending.get(r)?.get(this.index)?.doc
    if (mine !== undefined) {
      out.push({ kind: 'broadcast', msg: mine })
      return
    }
    this.signRound(r, current, out)
  }

  private prepare (round: number): void {
    // Nothing ahead for a group past its last round (the old group after a reshare's transition).
    if (this.prepared.has(round) || this.entries.has(round) || round > this.last) return
    const h = this.hash(round)
    this.prepared.set(round, { ...(this.signs(round) ? { partial: partialSign(this.share, h) } : {}), target: pairingTarget(h, this.groupKey) })
    for (const r of this.prepared.keys()) if (r < round - SIGN_BACKLOG) this.prepared.delete(r)
  }

  /** This member's partial for round `r`: kept, sent to the others, and the round recovered if t are in. */
  private signRound (r: number, current: number, out: RoundEffect[]): void {
    const point = this.prepared.get(r)?.partial ?? partialSign(this.share, this.hash(r))
    const doc = signDocument<PartialBody>(GROUP_PARTIAL, this.partialBody(r, this.index, pointHex(point)), this.signer)
    this.addPartial(r, this.index, point, doc)
    out.push({ kind: 'broadcast', msg: doc })
    this.tryRecover(r, current, out)
  }

  private catchUp (now: number, current: number, out: RoundEffect[]): void {
    if (this.members.length < 2 || now - this.lastAskMs < this.chain.period * 1000) return
    const low = Math.max(this.catchupFloor, current - CATCHUP_WINDOW, 1)
    const high = current - 2
    let first = 0
    let last = 0
    for (let r = low; r <= high; r++) {
      if (this.entries.has(r)) continue
      if (first === 0) first = r
      last = r
      if (last - first + 1 >= MAX_SYNC_ENTRIES) break
    }
    if (first === 0) {
      this.catchupFloor = Math.max(this.catchupFloor, high + 1)
      this.catchupAttempts = 0
      return
    }
    // Progress (the first missing round moved) starts a new round of asking.
    if (first !== this.catchupFirst) { this.catchupFirst = first; this.catchupAttempts = 0 }
    if (this.catchupAttempts >= this.members.length - 1) {
      // Every peer was asked: the group did not produce these rounds (fewer than t were up).
      this.catchupFloor = last + 1
      this.catchupAttempts = 0
      return
    }
    const peers = this.members.filter((_, i) => i + 1 !== this.index)
    const to = peers[(this.index + this.catchupAttempts) % peers.length]
    this.catchupAttempts++
    this.lastAskMs = now
    out.push({ kind: 'send', to, msg: { type: 'beacon-group/sync', chain: this.chain.hash, from: first, to: last } })
  }

  private addPartial (round: number, index: number, point: G1Point, doc: Signed<PartialBody>): void {
    let m = this.pending.get(round)
    if (m === undefined) { m = new Map(); this.pending.set(round, m) }
    if (!m.has(index)) m.set(index, { point, doc })
  }

  private tryRecover (round: number, current: number, out: RoundEffect[]): void {
    if (round > current || this.entries.has(round)) return
    const m = this.pending.get(round)
    if (m === undefined || m.size < this.t) return
    const h = this.hash(round)
    const chosen = [...m.entries()].sort((a, b) => a[0] - b[0]).slice(0, this.t)
    const signature = recoverG1(chosen.map(([index, p]) => ({ index, point: p.point })))
    const target = this.prepared.get(round)?.target
    if (target !== undefined ? verifyOnTarget(signature, target) : verifyOnG1(signature, h, this.groupKey)) {
      const entry = entryFromSignature(round, signature)
      this.keep(entry)
      out.push({ kind: 'produced', entry, via: 'partials' })
      return
    }
    // Some partial is wrong: check each, drop and name the bad ones, recover from the good. A bad
    // one is named only with its sender's signature (checked now: partials are not signature-checked
    // on arrival, the connection proves the sender), the evidence a blame record's verifier needs.
    const bad: BlameBody['bad'] = []
    for (const [index, p] of m) {
      if (!verifyOnG1(p.point, h, this.pubs[index - 1])) {
        m.delete(index)
        this.suspects.add(index)
        if (this.verify(p.doc)) bad.push({ index, reason: 'bad-partial', partial: p.doc })
      }
    }
    if (bad.length > 0) {
      out.push({ kind: 'blame', record: signDocument<BlameBody>(GROUP_BLAME, { chain: this.chain.hash, round, bad }, this.signer) })
    }
    if (m.size >= this.t) {
      const good = [...m.entries()].sort((a, b) => a[0] - b[0]).slice(0, this.t)
      // Each was checked against its sender's public share: interpolation gives the group's signature.
      const entry = entryFromSignature(round, recoverG1(good.map(([index, p]) => ({ index, point: p.point }))))
      this.keep(entry)
      out.push({ kind: 'produced', entry, via: 'partials' })
    }
  }

  receive (from: string, msg: unknown, now: number): RoundEffect[] {
    const out: RoundEffect[] = []
    const reject = (reason: string): RoundEffect[] => [{ kind: 'rejected', from, reason }]
    const fromIndex = this.members.indexOf(from) + 1
    if (fromIndex === 0) return reject('not a member of the group')
    if (typeof msg !== 'object' || msg === null) return reject('not a JSON object')
    const m = msg as Record<string, unknown>
    const current = this.currentRound(now)
    if (m.type === GROUP_PARTIAL) {
      const body = m.body as Record<string, unknown> | undefined
      if (typeof body !== 'object' || body === null || m.signer !== from || typeof m.sig !== 'string') return reject('partial: malformed or not signed by its sender')
      if (body.chain !== this.chain.hash) return reject('partial: another chain')
      if (body.group !== this.group) return reject('partial: of another group of this chain (before or after a reshare)')
      if (body.index !== fromIndex) return reject(`partial: index ${String(body.index)} is not the sender's (${fromIndex})`)
      const round = body.round
      if (typeof round !== 'number' || !Number.isSafeInteger(round) || round < 1) return reject('partial: round must be an integer >= 1')
      // One period of tolerance ahead: a member whose clock runs fast is not refused, only buffered.
      if (round > current + 1 || (round < current - PENDING_ROUNDS && !this.inBacklog(round))) return reject(`partial for round ${round} outside the window around the current round ${current}`)
      if (!this.signs(round)) return reject(`partial for round ${round}: this group signs rounds ${this.firstRound} to ${this.last === Number.MAX_SAFE_INTEGER ? 'on' : this.last} (a reshare's other group signs it)`)
      const known = this.entries.get(round)
      if (known !== undefined) {
        // The sender is behind (restarted, or its clock is late): the round, which verifies alone,
        // saves it a catch-up. Not for the round due now: every member is recovering it this
        // moment, and a round sent back would cost the slowest of them a second check.
        if (round < current) out.push({ kind: 'send', to: from, msg: { type: 'beacon-group/rounds', chain: this.chain.hash, entries: [known] } })
        return out
      }
      if (this.pending.get(round)?.has(fromIndex) === true) return out
      if (!isHex(body.partial, 48)) return reject('partial: not 48 bytes of hex')
      const doc: Signed<PartialBody> = { type: GROUP_PARTIAL, signer: from, body: this.partialBody(round, fromIndex, body.partial), sig: m.sig }
      let point: G1Point
      try {
        point = g1FromHex(body.partial, 'partial')
      } catch (err) {
        if (!this.verify(doc)) return reject('partial: not a G1 point, and its signature is bad')
        out.push({ kind: 'blame', record: signDocument<BlameBody>(GROUP_BLAME, { chain: this.chain.hash, round, bad: [{ index: fromIndex, reason: 'bad-partial', partial: doc }] }, this.signer) })
        this.suspects.add(fromIndex)
        return [...out, ...reject(`partial: ${(err as Error).message}`)]
      }
      if (this.suspects.has(fromIndex)) {
        // A member caught once is checked on arrival, so it cannot make every round pay for a full check.
        if (!verifyOnG1(point, this.hash(round), this.pubs[fromIndex - 1])) {
          if (this.verify(doc)) out.push({ kind: 'blame', record: signDocument<BlameBody>(GROUP_BLAME, { chain: this.chain.hash, round, bad: [{ index: fromIndex, reason: 'bad-partial', partial: doc }] }, this.signer) })
          return out
        }
      }
      this.addPartial(round, fromIndex, point, doc)
      this.tryRecover(round, current, out)
      return out
    }
    if (m.type === 'beacon-group/sync') {
      if (m.chain !== this.chain.hash) return reject('sync: another chain')
      const lo = m.from
      const hi = m.to
      if (typeof lo !== 'number' || typeof hi !== 'number' || !Number.isSafeInteger(lo) || !Number.isSafeInteger(hi) || lo < 1 || hi < lo) return reject('sync: bad range')
      // The held rounds in the range, oldest first: a walk over what is held (at most KEEP_ENTRIES),
      // never over the range itself, which the sender chooses.
      const top = Math.min(hi, current)
      const entries = [...this.entries.values()].filter(e => e.round >= lo && e.round <= top).sort((a, b) => a.round - b.round).slice(0, MAX_SYNC_ENTRIES)
      out.push({ kind: 'send', to: from, msg: { type: 'beacon-group/rounds', chain: this.chain.hash, entries } })
      return out
    }
    if (m.type === 'beacon-group/rounds') {
      if (m.chain !== this.chain.hash) return reject('rounds: another chain')
      if (!Array.isArray(m.entries) || m.entries.length > MAX_SYNC_ENTRIES) return reject(`rounds: at most ${MAX_SYNC_ENTRIES} entries`)
      for (const raw of m.entries) {
        let e: BeaconEntry
        try { e = parseBeaconEntry(raw) } catch (err) { return [...out, ...reject(`rounds: ${(err as Error).message}`)] }
        if (e.round > current || this.entries.has(e.round)) continue
        const verdict = verifyBeaconEntry(this.chain, e, e.round)
        if (!verdict.ok) return [...out, ...reject(`rounds: round ${e.round}: ${verdict.message}`)]
        this.keep(verdict.entry)
        out.push({ kind: 'produced', entry: verdict.entry, via: 'catch-up' })
      }
      return out
    }
    return reject(`unknown message type ${JSON.stringify(String(m.type).slice(0, 40))}`)
  }

  status (now: number): RoundStatus {
    const current = this.currentRound(now)
    const s: RoundStatus = { now, currentRound: current, latestRound: this.latest, produced: this.entries.size, suspects: [...this.suspects].sort((a, b) => a - b) }
    if (current > 0 && !this.entries.has(current)) {
      const have = this.pending.get(current)?.size ?? 0
      s.waiting = `round ${current}: ${have} of ${this.t} partial signatures (due ${new Date(roundTime(this.chain, current)).toISOString()})`
    } else if (current === 0) {
      s.waiting = `before genesis (${new Date(this.chain.genesis_time * 1000).toISOString()})`
    }
    return s
  }
}
