import type { Level } from 'level'
import { checkLine } from '../core/log/check.js'
import type { LogHead } from '../core/log/format.js'
import { cosignHead } from '../core/log/witness.js'
import type { Signer } from '../core/identity.js'

/** Conflicting heads kept per peer, besides the latest: evidence, not history. */
export const MAX_CONFLICTS_KEPT = 4

interface Held {
  /** Cosigned line of the highest head received from the peer. */
  latest: string
  latestSeq: number
  latestHash: string
  /** Cosigned lines of heads that contradicted it when they came (lower seq, or same seq and another hash). */
  conflicts: string[]
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
  put: (key: string, value: unknown, options: { sync: boolean }) => Promise<void>
}

/**
 * The heads this node witnessed for its table's members (sublevel `witness`, key = the owner's
 * peer id): the latest one received from each, cosigned with the time it came, and up to
 * {@link MAX_CONFLICTS_KEPT} heads that contradicted it. Writes are synced: what a witness has
 * cosigned, it still holds after a crash.
 */
export class WitnessStore {
  private readonly store: JsonLevel
  private queue: Promise<unknown> = Promise.resolve()

  constructor (db: Level<string, any>, private readonly signer: Signer, private readonly now: () => number = Date.now) {
    this.store = db.sublevel<string, unknown>('witness', { keyEncoding: 'utf8', valueEncoding: 'json' }) as unknown as JsonLevel
  }

  /**
   * Witnesses a head line received from `from`. It must be an authentic log head signed by `from`
   * itself (a node only announces its own head). One at a time, so two heads of one peer never race.
   */
  async observe (from: string, headLine: string): Promise<Observed> {
    const run = this.queue.then(async () => await this.observeNow(from, headLine))
    this.queue = run.catch(() => {})
    return await run
  }

  private async observeNow (from: string, headLine: string): Promise<Observed> {
    const check = checkLine(headLine, null)
    if (check.type !== 'head' || !check.authentic) throw new WitnessRefusal(`not an authentic log head: ${check.problems.join('; ')}`)
    if (check.owner !== from) throw new WitnessRefusal(`the head is signed by ${check.owner ?? '?'}, not by the peer that sent it (${from})`)
    if (from === this.signer.peerId) throw new WitnessRefusal('a node does not witness its own head')
    const seq = check.seq as number
    const hash = check.hash as string
    const held = await this.store.get(from) as Held | undefined
    if (held !== undefined && held.latestSeq === seq && held.latestHash === hash) return { status: 'known', line: held.latest }
    const { line } = cosignHead(this.signer, JSON.parse(headLine) as LogHead, this.now())
    if (held === undefined || seq > held.latestSeq) {
      await this.store.put(from, { latest: line, latestSeq: seq, latestHash: hash, conflicts: held?.conflicts ?? [] } satisfies Held, { sync: true })
      return { status: 'new', line }
    }
    // Lower, or the same seq with another hash: the owner contradicts itself. Keep it as evidence.
    const same = held.conflicts.find(c => { const h = (JSON.parse(c) as { body: { head: LogHead } }).body.head.body; return h.seq === seq && h.hash === hash })
    if (same !== undefined) return { status: 'conflict', line: same }
    if (held.conflicts.length < MAX_CONFLICTS_KEPT) {
      await this.store.put(from, { ...held, conflicts: [...held.conflicts, line] } satisfies Held, { sync: true })
    }
    return { status: 'conflict', line }
  }

  /** The cosigned heads held for `owner`: the latest first, then conflicting ones. */
  async heldFor (owner: string): Promise<string[]> {
    const held = await this.store.get(owner) as Held | undefined
    return held === undefined ? [] : [held.latest, ...held.conflicts]
  }
}
