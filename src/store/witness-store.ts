import type { Level } from 'level'
import { checkLine, type DocVerifier } from '../core/log/check.js'
import type { LogHead } from '../core/log/format.js'
import { cosignHead, MAX_CONFLICTS_KEPT, MAX_HISTORY_KEPT } from '../core/log/witness.js'
import type { Signer } from '../core/identity.js'
import { nativeVerifyDocument } from '../crypto/native-crypto.js'

export { MAX_CONFLICTS_KEPT, MAX_HISTORY_KEPT }

interface Held {
  /** Cosigned line of the highest head received from the peer. */
  latest: string
  latestSeq: number
  latestHash: string
  /**
   * Evidence, kept as long as the store: cosigned lines of heads that contradicted the latest when
   * they came (lower seq, or same seq and another hash), and each latest that was contradicted,
   * once a higher head replaces it (the other half of the proof).
   */
  conflicts: string[]
  /** The latest was contradicted: when it is replaced, it joins `conflicts`, not `history`. */
  latestContradicted?: boolean
  /**
   * Earlier latest heads, replaced by higher ones, thinned to {@link MAX_HISTORY_KEPT}: a log forked
   * (or rolled back and regrown) past the head a witness held still disagrees with one of them.
   */
  history?: string[]
}

const seqOfCosigned = (line: string): number => (JSON.parse(line) as { body: { head: LogHead } }).body.head.body.seq

/**
 * Adds a replaced head to the history and thins it back to its bound: the newest is always kept,
 * as is the oldest; otherwise the head whose removal opens the smallest gap, weighed against its
 * distance from the newest, goes, so the heads kept are dense near the latest and sparse far back.
 */
export function thinHistory (history: string[], added: string, max = MAX_HISTORY_KEPT): string[] {
  const out = [...history, added]
  while (out.length > max) {
    const seqs = out.map(seqOfCosigned)
    const newest = seqs[seqs.length - 1]
    let drop = 1
    let best = Infinity
    for (let i = 1; i < out.length - 1; i++) {
      const cost = (seqs[i + 1] - seqs[i - 1]) / (newest - seqs[i] + 1)
      if (cost < best) { best = cost; drop = i }
    }
    out.splice(drop, 1)
  }
  return out
}

/** What {@link WitnessStore.observe} made of a head. */
export interface Observed {
  status: 'new' | 'known' | 'conflict'
  /** The cosigned head: the new latest, the one held, or the conflicting one. */
  line: string
}

/** Why a peer's head was not witnessed. */
export class WitnessRefusal extends Error {
  override name = 'WitnessRefusal'
}

interface JsonLevel {
  get: (key: string) => Promise<unknown>
  batch: (ops: Array<{ type: 'put', key: string, value: unknown }>, options: { sync: boolean }) => Promise<void>
}

interface Request {
  from: string
  headLine: string
  resolve: (observed: Observed) => void
  reject: (err: unknown) => void
}

/**
 * The heads this node witnessed for its table's members (sublevel `witness`, key = the owner's
 * peer id): the latest one received from each, cosigned with the time it came; up to
 * {@link MAX_CONFLICTS_KEPT} heads that contradicted the latest, and each contradicted latest once
 * it is replaced (both halves of every proof, kept for as long as the store); and up to
 * {@link MAX_HISTORY_KEPT} earlier latest heads. Writes are synced (heads that come together in one
 * batch): what a witness has cosigned, it still holds after a crash. A head's signature is checked
 * with `verifyDoc`: by default Node's own Ed25519 (OpenSSL, same contract as core verifyDocument);
 * the daemon passes its verify memo.
 */
export class WitnessStore {
  private readonly store: JsonLevel
  private pending: Request[] = []
  private draining = false

  constructor (db: Level<string, any>, private readonly signer: Signer, private readonly now: () => number = Date.now, private readonly verifyDoc: DocVerifier = nativeVerifyDocument) {
    this.store = db.sublevel<string, unknown>('witness', { keyEncoding: 'utf8', valueEncoding: 'json' }) as unknown as JsonLevel
  }

  /**
   * Witnesses a head line received from `from`. It must be an authentic log head signed by `from`
   * itself (a node only announces its own head). One at a time, in the order they came, so two
   * heads of one peer never race. Heads that come while a write is on its way are written together,
   * in one synced batch (heads from several members arrive at once after each hand): each answer,
   * and so each cosignature, is given only once the batch that holds it is on disk; if the batch
   * fails, every head in it is refused.
   */
  async observe (from: string, headLine: string): Promise<Observed> {
    return await new Promise<Observed>((resolve, reject) => {
      this.pending.push({ from, headLine, resolve, reject })
      if (!this.draining) void this.drain()
    })
  }

  private async drain (): Promise<void> {
    this.draining = true
    try {
      while (this.pending.length > 0) {
        const requests = this.pending
        this.pending = []
        // What this batch will write, by owner: later heads in it see the earlier ones' state.
        const writes = new Map<string, Held>()
        const outcomes: Array<{ ok: true, observed: Observed } | { ok: false, err: unknown }> = []
        for (const r of requests) {
          try { outcomes.push({ ok: true, observed: await this.observeNow(r.from, r.headLine, writes) }) } catch (err) { outcomes.push({ ok: false, err }) }
        }
        let failed: unknown
        if (writes.size > 0) {
          try {
            await this.store.batch([...writes].map(([key, value]) => ({ type: 'put' as const, key, value })), { sync: true })
          } catch (err) { failed = err }
        }
        requests.forEach((r, i) => {
          const o = outcomes[i]
          if (failed !== undefined) r.reject(failed)
          else if (o.ok) r.resolve(o.observed)
          else r.reject(o.err)
        })
      }
    } finally {
      this.draining = false
    }
  }

  private async observeNow (from: string, headLine: string, writes: Map<string, Held>): Promise<Observed> {
    const check = checkLine(headLine, null, this.verifyDoc)
    if (check.type !== 'head' || !check.authentic) throw new WitnessRefusal(`not an authentic log head: ${check.problems.join('; ')}`)
    if (check.owner !== from) throw new WitnessRefusal(`the head is signed by ${check.owner ?? '?'}, not by the peer that sent it (${from})`)
    if (from === this.signer.peerId) throw new WitnessRefusal('a node does not witness its own head')
    const seq = check.seq as number
    const hash = check.hash as string
    const held = writes.get(from) ?? await this.store.get(from) as Held | undefined
    if (held !== undefined && held.latestSeq === seq && held.latestHash === hash) return { status: 'known', line: held.latest }
    const { line } = cosignHead(this.signer, JSON.parse(headLine) as LogHead, this.now())
    if (held === undefined || seq > held.latestSeq) {
      // The head it replaces stays: as evidence when it was contradicted, else in the thinned history.
      // (A store from before this flag: its conflicts contradicted the latest it holds, or one before.)
      const contradicted = held !== undefined && (held.latestContradicted ?? held.conflicts.length > 0)
      const conflicts = held === undefined ? [] : contradicted ? [...held.conflicts, held.latest] : held.conflicts
      const history = held === undefined ? [] : contradicted ? held.history ?? [] : thinHistory(held.history ?? [], held.latest)
      writes.set(from, { latest: line, latestSeq: seq, latestHash: hash, conflicts, latestContradicted: false, history } satisfies Held)
      return { status: 'new', line }
    }
    // Lower, or the same seq with another hash: the owner contradicts itself. Keep it as evidence.
    const same = held.conflicts.find(c => { const h = (JSON.parse(c) as { body: { head: LogHead } }).body.head.body; return h.seq === seq && h.hash === hash })
    if (same !== undefined) return { status: 'conflict', line: same }
    // Room for this line, and for the latest it contradicts once a higher head replaces it.
    const need = (held.latestContradicted ?? held.conflicts.length > 0) ? 1 : 2
    if (held.conflicts.length + need <= 2 * MAX_CONFLICTS_KEPT) {
      writes.set(from, { ...held, conflicts: [...held.conflicts, line], latestContradicted: true } satisfies Held)
    }
    return { status: 'conflict', line }
  }

  /** The cosigned heads held for `owner`: the latest first, then the evidence of contradictions, then the history. */
  async heldFor (owner: string): Promise<string[]> {
    const held = await this.store.get(owner) as Held | undefined
    return held === undefined ? [] : [held.latest, ...held.conflicts, ...held.history ?? []]
  }
}
