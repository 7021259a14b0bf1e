import { BrowserLevel } from 'browser-level'
import { GENESIS_PREV, makeEntry, makeHead, type LogHead } from '../../core/log/format.js'
import type { Signer } from '../../core/identity.js'
import type { FinalTableBody } from '../../core/join.js'
import type { Signed } from '../../core/signed.js'

/**
 * What the seat page keeps in IndexedDB (browser-level, the `level` family's browser store), one
 * database per link: the page's key, the final table, the seat machine's saved hands (the same
 * keys a seat node keeps in LevelDB) and its append-only receipt log (the same signed, hash-chained
 * entries and head as a node's log, src/core/log/format.ts). A reload reads them back and the seat
 * machine resumes from them, as a restarted seat node does.
 */

const ENTRY_PREFIX = 'log!e!'
const HEAD_KEY = 'log!head'
const STATE_PREFIX = 'state!'

/** An entry's key: its seq in 16 digits, so keys sort as seqs do. */
const entryKey = (seq: number): string => ENTRY_PREFIX + String(seq).padStart(16, '0')

export class SeatStore {
  readonly #db: BrowserLevel<string, unknown>
  #head: LogHead | null = null
  #queue: Promise<unknown> = Promise.resolve()

  private constructor (db: BrowserLevel<string, unknown>) { this.#db = db }

  /** The database of one link (`name`, from its secret's digest). */
  static async open (name: string): Promise<SeatStore> {
    const db = new BrowserLevel<string, unknown>(`fairdeal-seat-${name}`, { valueEncoding: 'json' })
    await db.open()
    const store = new SeatStore(db)
    const head = await db.get(HEAD_KEY) as string | undefined
    store.#head = head === undefined ? null : JSON.parse(head) as LogHead
    return store
  }

  /** The page's key seed: the one kept, or a new one from `make`, kept before it is used. */
  async seed (make: () => Promise<Uint8Array>): Promise<Uint8Array> {
    const kept = await this.#db.get('identity') as number[] | undefined
    if (kept !== undefined) return new Uint8Array(kept)
    const seed = await make()
    await this.#db.put('identity', [...seed])
    return seed
  }

  async table (): Promise<Signed<FinalTableBody> | undefined> {
    return await this.#db.get('table') as Signed<FinalTableBody> | undefined
  }

  async keepTable (doc: Signed<FinalTableBody>): Promise<void> { await this.#db.put('table', doc) }

  async get (key: string): Promise<unknown> { return await this.#db.get(STATE_PREFIX + key) }

  /** The machine's writes, in one batch (a null value deletes its key). */
  async persist (writes: Array<{ key: string, value: unknown }>): Promise<void> {
    await this.#db.batch(writes.map(w => w.value === null
      ? { type: 'del' as const, key: STATE_PREFIX + w.key }
      : { type: 'put' as const, key: STATE_PREFIX + w.key, value: w.value }))
  }

  async values (prefix: string): Promise<unknown[]> {
    const out: unknown[] = []
    for await (const v of this.#db.values({ gt: STATE_PREFIX + prefix, lt: STATE_PREFIX + prefix + '\xff' })) out.push(v)
    return out
  }

  /** Appends a log entry (and its new head), one after the other. */
  async append (signer: Signer, kind: string, payload: unknown): Promise<number> {
    const run = this.#queue.then(async () => {
      const seq = this.#head === null ? 0 : this.#head.body.seq + 1
      const prev = this.#head === null ? GENESIS_PREV : this.#head.body.hash
      const made = makeEntry(signer, { seq, prev, kind, payload, time: Date.now() })
      const { head, line } = makeHead(signer, seq, made.hash)
      await this.#db.batch([{ type: 'put', key: entryKey(seq), value: made.line }, { type: 'put', key: HEAD_KEY, value: line }])
      this.#head = head
      return seq
    })
    this.#queue = run.catch(() => {})
    return await run
  }

  /** The log as `fairdeal verify` reads an export: the signed head line, then every entry line. */
  async exportLines (): Promise<string[]> {
    const head = await this.#db.get(HEAD_KEY) as string | undefined
    if (head === undefined) return []
    const lines = [head]
    for await (const v of this.#db.values({ gte: ENTRY_PREFIX, lt: ENTRY_PREFIX + '\xff' })) lines.push(v as string)
    return lines
  }

  async close (): Promise<void> { await this.#db.close() }
}
