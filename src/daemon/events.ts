import type { HandEvent } from '../protocol/types.js'

export interface NodeEvent {
  seq: number
  /** When the node saw it: ms since the epoch, with a fraction (not a whole number). */
  time: number
  hand: number
  /** The table the hand is played at (a node may serve several: docs/network.md). */
  table?: string
  /** 'dealer' or 'seat': which of the node's machines saw it. */
  role: 'dealer' | 'seat'
  event: HandEvent
}

/**
 * The node's recent hand events, numbered, for the control endpoint's long poll. Bounded: a client
 * that falls more than `capacity` events behind is told where the retained events start.
 */
export class EventFeed {
  readonly #events: NodeEvent[] = []
  readonly #capacity: number
  #seq = 0
  #waiters: Array<() => void> = []

  constructor (capacity = 4096) {
    this.#capacity = capacity
  }

  push (role: 'dealer' | 'seat', hand: number, event: HandEvent, time: number, table?: string): NodeEvent {
    const e: NodeEvent = { seq: ++this.#seq, time, hand, ...(table !== undefined ? { table } : {}), role, event }
    this.#events.push(e)
    // Trimmed a quarter of the capacity at a time: a splice per event, once full, moved the whole
    // array each time (a table bench's hand spent 0.7 ms here).
    if (this.#events.length > this.#capacity + (this.#capacity >> 2)) this.#events.splice(0, this.#events.length - this.#capacity)
    const waiters = this.#waiters
    this.#waiters = []
    for (const w of waiters) w()
    return e
  }

  get last (): number { return this.#seq }

  after (seq: number, limit = 1000): NodeEvent[] {
    if (this.#events.length === 0) return []
    // Retained events are numbered without gaps, so the first one after `seq` is found by arithmetic;
    // the last `capacity` of them are retained (the array holds up to a quarter more until trimmed).
    const start = Math.max(this.#events.length - this.#capacity, Math.floor(seq) - this.#events[0].seq + 1)
    return this.#events.slice(start, start + limit)
  }

  /** Resolves when an event after `seq` exists, or after `timeoutMs`. */
  async wait (seq: number, timeoutMs: number, signal?: AbortSignal): Promise<NodeEvent[]> {
    if (this.#seq > seq || timeoutMs <= 0) return this.after(seq)
    await new Promise<void>(resolve => {
      const timer = setTimeout(done, timeoutMs)
      // A long poll's loop waits again and again on one signal: each wait takes its listener off
      // when it ends (they piled up: Node's MaxListenersExceededWarning on the page's event stream).
      function done (): void { clearTimeout(timer); signal?.removeEventListener('abort', done); resolve() }
      this.#waiters.push(done)
      signal?.addEventListener('abort', done, { once: true })
    })
    return this.after(seq)
  }

  /** A watcher of this feed (see EventWatcher). */
  watch (): EventWatcher {
    return new EventWatcher(async (after, waitMs) => await this.wait(after, waitMs))
  }
}

/**
 * One node's event feed as a function, events after `after` within `waitMs`: the EventFeed of a
 * node in this process, or a node's control endpoint (ControlClient.events) in another.
 */
export type EventSource = (after: number, waitMs: number) => Promise<NodeEvent[]>

/**
 * Follows one node's events and keeps every one it has seen, so that whoever drives a table (the
 * demo, the tests, the benchmarks) can wait for the first event, past or to come, that matches.
 */
export class EventWatcher {
  readonly seen: NodeEvent[] = []
  #cursor = 0

  constructor (readonly source: EventSource) {}

  async until (match: (e: NodeEvent) => boolean, what: string, timeoutMs = 15_000): Promise<NodeEvent> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const hit = this.seen.find(match)
      if (hit !== undefined) return hit
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
      // Short polls: a control endpoint caps each one anyway, and the deadline stays close.
      for (const e of await this.source(this.#cursor, Math.min(left, 5_000))) { this.seen.push(e); this.#cursor = e.seq }
    }
  }
}
