import type { Signer } from '../../core/identity.js'
import type { Signed } from '../../core/signed.js'
import type { SeatSide } from '../../protocol/contracts.js'
import { handKeyPrefix, machinesFor } from '../../protocol/machines.js'
import { seatMetaKey } from '../../protocol/seat.js'
import { DEFAULT_TIMEOUTS, MachineFailure, persistRun, Rejection, type BeaconBindingConfig, type Effect, type HandEvent, type TableSpec, type Timeouts } from '../../protocol/types.js'
import { decodeFrame, encodeFrame, WireError } from '../../protocol/wire.js'
import type { SeatStore } from './store.js'

/**
 * The page's host of the seat machine: the same src/protocol seat machine a seat node runs, its
 * effects carried out in order, as src/daemon/table-host.ts does for a node: `persist` into
 * IndexedDB before anything after it, `send` to the dealer (a document for another seat goes as
 * its RELAY through the dealer: the page reaches no one else), `append` to the page's log, `event`
 * to the page. A table's beacon round comes in the dealer's documents and is checked offline; a
 * seat fetches a round itself only to finish a time-locked hand (`fetchBeacon`), which the page
 * does not do: it hosts no time-locked table.
 */
/** How long a page's player has for a turn before its robot plays, at a table that sets no `playMs`. */
export const PAGE_PLAY_MS = 120_000

export class PageSeatHost {
  readonly seat: SeatSide
  readonly table: TableSpec
  #queue: Promise<void> = Promise.resolve()

  constructor (
    table: TableSpec & { timeouts?: Partial<Timeouts> },
    beacon: BeaconBindingConfig | null,
    signer: Signer,
    private readonly store: SeatStore,
    private readonly sendToDealer: (frame: Uint8Array) => Promise<void>,
    private readonly onEvent: (hand: number, event: HandEvent) => void,
    private readonly onLog: (seq: number) => void,
    private readonly onProblem: (message: string) => void
  ) {
    this.table = { id: table.id, game: table.game, scheme: table.scheme, seats: table.seats, dealer: table.dealer }
    const random = (n: number): Uint8Array => crypto.getRandomValues(new Uint8Array(n))
    // A person plays at the page: its seat plays by hand (its robot only after the table's time to
    // play, or PAGE_PLAY_MS where the table sets none), where a seat node without `playMs` lets its robot play.
    const timeouts = { ...DEFAULT_TIMEOUTS, ...table.timeouts, playMs: table.timeouts?.playMs ?? PAGE_PLAY_MS }
    this.seat = machinesFor(table.scheme).seat({ table: this.table, signer, timeouts, beacon, now: () => Date.now(), random, timelock: null })
    this.signer = signer
  }

  private readonly signer: Signer

  /** Back to where the page was: the saved meta and hands, as a restarted seat node (its ASKs go out). */
  async restore (): Promise<void> {
    const machines = machinesFor(this.table.scheme)
    const meta = await this.store.get(seatMetaKey(this.table.id))
    const hands = await this.store.values(handKeyPrefix(machines.seatHandKey, this.table.id))
    await this.#enqueue(this.seat.restore(meta, hands))
  }

  /** This seat's bid or card in a played hand: refused (thrown, nothing signed) when it is not legal now. */
  async act (hand: number, action: unknown): Promise<void> {
    if (this.seat.act === undefined) throw new Rejection('this table\'s seats do not play their hands here')
    await this.#enqueue(this.seat.act(hand, action))
  }

  /** A frame from the dealer's node. */
  receive (from: string, frame: Uint8Array): void {
    try {
      const doc = decodeFrame(frame)
      if ((doc.body as { table?: unknown }).table !== this.table.id) throw new Rejection(`${doc.type} for another table`)
      void this.#enqueue(this.seat.receive(from, doc)).catch(() => {})
    } catch (err) {
      this.#failed(err)
    }
  }

  tick (now: number): void {
    try { void this.#enqueue(this.seat.tick(now)).catch(() => {}) } catch (err) { this.#failed(err) }
  }

  #failed (err: unknown): void {
    if (err instanceof MachineFailure) { void this.#enqueue(err.effects).catch(() => {}); this.onProblem(err.message); return }
    if (err instanceof Rejection || err instanceof WireError) { console.warn('message rejected:', err.message); return }
    this.onProblem((err as Error).message)
  }

  async #enqueue (effects: Effect[]): Promise<void> {
    const run = this.#queue.then(async () => { await this.#execute(effects) })
    this.#queue = run.catch((err: unknown) => { this.onProblem(`effect failed: ${(err as Error).message}`) })
    await run
  }

  async #execute (effects: Effect[]): Promise<void> {
    for (let i = 0; i < effects.length; i++) {
      const e = effects[i]
      switch (e.kind) {
        case 'persist': {
          // Persists in a row are one IndexedDB batch, durable before the effect that follows.
          const run = persistRun(effects, i)
          await this.store.persist(run)
          i += run.length - 1
          break
        }
        case 'send': this.#send(e.to, e.doc, e.fallback); break
        case 'append': this.onLog(await this.store.append(this.signer, e.entry, e.payload)); break
        case 'fetchBeacon': this.onProblem('this hand needs its beacon round fetched to be finished from its timelocks, which the seat page does not do: use a seat node'); break
        case 'event': this.onEvent(e.hand, e.event); break
      }
    }
  }

  #send (to: string, doc: Signed<unknown>, fallback?: () => Signed<unknown>): void {
    // The page dials the dealer alone; a document for another seat goes as its RELAY, through the dealer
    // (signed only now: a fallback is signed only when it is sent).
    const which = to === this.table.dealer ? doc : fallback?.()
    if (which === undefined) { console.warn(`no route to ${to} for ${doc.type}`); return }
    this.sendToDealer(encodeFrame(which)).catch((err: unknown) => { console.warn(`send of ${which.type} failed:`, (err as Error).message) })
  }
}
