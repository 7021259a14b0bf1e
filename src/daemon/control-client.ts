import type { PlayView } from '../protocol/contracts.js'
import type { ChildProcess } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { NodeInputError } from './errors.js'
import { CONTROL_FILE, type ControlInfo } from './control.js'
import { EventWatcher, type EventSource, type NodeEvent } from './events.js'
import { readDraft } from './table-join.js'

/** `table=ID` as a query parameter (after `sep`), or nothing for the node's only table. */
function tableQuery (table: string | undefined, sep: '?' | '&'): string {
  return table === undefined ? '' : `${sep}table=${encodeURIComponent(table)}`
}

/** The seats still open of a table joining by links in `dataDir`, if it is one. */
async function openLinkSeats (dataDir: string): Promise<{ table: string, seats: number[] } | undefined> {
  const draft = await readDraft(dataDir).catch(() => undefined)
  if (draft?.links === undefined) return undefined
  const seats = draft.table.seats.flatMap((s, i) => s === null ? [i] : [])
  return seats.length === 0 ? undefined : { table: draft.table.id, seats }
}

/** A response body's lines, without their newlines; empty lines (an event stream's keep-alives) skipped. */
async function * responseLines (body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  let rest = ''
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    const parts = (rest + decoder.decode(chunk, { stream: true })).split('\n')
    rest = parts.pop() ?? ''
    for (const p of parts) if (p !== '') yield p
  }
  rest += decoder.decode()
  if (rest !== '') yield rest
}

/** A client of a running node's control endpoint, found through the node's data directory. */
export class ControlClient {
  constructor (readonly info: ControlInfo) {}

  static async forDataDir (dataDir: string): Promise<ControlClient> {
    let text: string
    try {
      text = await readFile(join(dataDir, CONTROL_FILE), 'utf8')
    } catch {
      // A table joining by links has no control endpoint until every seat is taken (src/daemon/table-join.ts).
      const open = await openLinkSeats(dataDir)
      if (open !== undefined) throw new NodeInputError(`table ${open.table} of ${dataDir} is still taking its seats (seat ${open.seats.join(', ')} not joined yet): its node (if running) takes commands once every seat has joined`)
      throw new NodeInputError(`no running node found for ${dataDir} (no ${CONTROL_FILE}); start it with 'fairdeal node --config FILE'`)
    }
    try {
      return new ControlClient(JSON.parse(text) as ControlInfo)
    } catch {
      throw new NodeInputError(`${join(dataDir, CONTROL_FILE)} is not valid JSON`)
    }
  }

  async request<T> (method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = 40_000): Promise<T> {
    let res: Response
    try {
      res = await fetch(this.info.url + path, {
        method,
        headers: { authorization: `Bearer ${this.info.token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs)
      })
    } catch (err) {
      throw new NodeInputError(`cannot reach the node at ${this.info.url} (${(err as Error).message}); is it running?`)
    }
    const value = await res.json().catch(() => ({})) as T & { error?: string }
    if (!res.ok) throw new NodeInputError(value.error ?? `control request failed with HTTP ${res.status}`)
    return value
  }

  /** The node's log as JSON Lines (signed head first), line by line, as 'fairdeal log export' writes it. */
  async * logLines (range: { from?: number, to?: number } = {}): AsyncGenerator<string> {
    const query = new URLSearchParams()
    if (range.from !== undefined) query.set('from', String(range.from))
    if (range.to !== undefined) query.set('to', String(range.to))
    let res: Response
    try {
      res = await fetch(`${this.info.url}/log?${query.toString()}`, { headers: { authorization: `Bearer ${this.info.token}` } })
    } catch (err) {
      throw new NodeInputError(`cannot reach the node at ${this.info.url} (${(err as Error).message}); is it running?`)
    }
    if (!res.ok || res.body === null) throw new NodeInputError(`the node refused its log: HTTP ${res.status}`)
    yield * responseLines(res.body)
  }

  /** A fresh one-time login link to the node's table page. */
  async loginLink (): Promise<string> { return (await this.request<{ link: string }>('POST', '/web/login', {})).link }

  /** The node and one of its tables (`table`: its id; needed when the node serves several). */
  async status (table?: string): Promise<Record<string, unknown>> { return await this.request('GET', `/status${tableQuery(table, '?')}`) }
  /** Every table the node serves. */
  async tables (): Promise<Array<{ id: string, game: string, scheme: string, role: string }>> { return (await this.request<{ tables: Array<{ id: string, game: string, scheme: string, role: string }> }>('GET', '/tables')).tables }
  /** `play`: the hand is played at the table once dealt (docs/games.md "Playing a dealt hand"). */
  async deal (dealer?: number, table?: string, play?: boolean): Promise<number> { return (await this.request<{ hand: number }>('POST', '/hand/deal', { dealer, table, ...(play === true ? { play } : {}) })).hand }
  async stage (hand: number, stage: string, taker?: number, table?: string): Promise<void> { await this.request('POST', '/hand/stage', { hand, stage, taker, table }) }
  async end (hand: number, table?: string): Promise<void> { await this.request('POST', '/hand/end', { hand, table }) }
  /** This node's seat's action in a played hand. */
  async act (hand: number, action: unknown, table?: string): Promise<void> { await this.request('POST', '/hand/act', { hand, action, table }) }
  /** A played hand as this node's seat sees it (src/protocol/contracts.ts PlayView). */
  async play (hand: number, table?: string): Promise<PlayView> { return await this.request('GET', `/hand/play?hand=${hand}${tableQuery(table, '&')}`) }
  async cards (hand: number, table?: string): Promise<{ hand: number, seat: number | null, cards: Array<{ stage: string, seat: number | null, public: boolean, cards: string[] }>, robots?: Array<{ stage: string, seat: number, cards: string[] }> }> {
    return await this.request('GET', `/hand/cards?hand=${hand}${tableQuery(table, '&')}`)
  }

  /** The cosigned heads the node witnessed for `peer`. */
  async witnessed (peer: string): Promise<string[]> {
    return (await this.request<{ heads: string[] }>('GET', `/witnessed?peer=${encodeURIComponent(peer)}`)).heads
  }

  async events (after: number, waitMs: number): Promise<{ events: NodeEvent[], last: number }> {
    return await this.request('GET', `/events?after=${after}&wait=${waitMs}`, undefined, waitMs + 10_000)
  }

  /**
   * The node's events after `after` as they happen, on one streamed response (`GET /events?stream=1`),
   * as an EventSource (what EventWatcher and the benchmarks read) and a `close` that ends the stream.
   * Events wait here until they are asked for: at most `capacity`, the oldest dropped beyond it
   * (a gap in `seq`, as the node's own feed leaves for a client that falls behind). Once the stream
   * ends (the node stopped, or went away), a call with nothing left to return fails saying so.
   */
  eventStream (after = 0, capacity = 4096): { source: EventSource, close: () => void } {
    const abort = new AbortController()
    const queue: NodeEvent[] = []
    let ended: Error | undefined
    const waiting = new Set<() => void>()
    const notify = (): void => { for (const w of waiting) w() }
    const read = async (): Promise<void> => {
      const res = await fetch(`${this.info.url}/events?after=${after}&stream=1`, { headers: { authorization: `Bearer ${this.info.token}` }, signal: abort.signal })
      if (!res.ok || res.body === null) {
        const value = await res.json().catch(() => ({})) as { error?: string }
        throw new Error(value.error ?? `HTTP ${res.status}`)
      }
      for await (const line of responseLines(res.body)) {
        queue.push(JSON.parse(line) as NodeEvent)
        if (queue.length > capacity) queue.shift()
        notify()
      }
      throw new Error('the node closed its event stream')
    }
    read().catch((err: unknown) => {
      ended = abort.signal.aborted ? new Error('event stream closed') : new NodeInputError(`lost the event stream of the node at ${this.info.url} (${(err as Error).message})`)
      notify()
    })
    const source: EventSource = async (from, waitMs) => {
      const take = (): NodeEvent[] => {
        while (queue.length > 0 && queue[0].seq <= from) queue.shift()
        return queue.slice()
      }
      let events = take()
      if (events.length > 0 || waitMs <= 0) return events
      if (ended !== undefined) throw ended
      await new Promise<void>(resolve => {
        const done = (): void => { clearTimeout(timer); waiting.delete(done); resolve() }
        const timer = setTimeout(done, waitMs)
        waiting.add(done)
      })
      events = take()
      if (events.length === 0 && ended !== undefined) throw ended
      return events
    }
    return { source, close: () => { abort.abort() } }
  }

  /** A watcher of the node's events, through the endpoint's long poll (see EventWatcher). */
  watch (): EventWatcher {
    return new EventWatcher(async (after, waitMs) => (await this.events(after, waitMs)).events)
  }
}

/**
 * The control client of a `fairdeal node` process just spawned as `child`. The node writes its
 * control file into `dataDir` once it is ready (naming its pid, so a file left by an earlier run is
 * not taken for it), the only sign of readiness it gives. Rejects when the process ends first, or
 * when `timeoutMs` passes (the process is then killed); `detail` adds what the caller knows, such
 * as the process's output or where its log is.
 */
export async function controlOfSpawnedNode (
  child: ChildProcess,
  dataDir: string,
  options: { name?: string, timeoutMs?: number, detail?: () => string } = {}
): Promise<ControlClient> {
  const name = options.name ?? 'fairdeal node'
  const timeoutMs = options.timeoutMs ?? 30_000
  const file = join(dataDir, CONTROL_FILE)
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const text = await readFile(file, 'utf8').catch(() => '')
    if (text.includes(`"pid":${child.pid ?? -1},`)) return await ControlClient.forDataDir(dataDir)
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${name} exited with ${child.exitCode !== null ? `code ${child.exitCode}` : child.signalCode}${options.detail?.() ?? ''}`)
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`${name} did not start within ${timeoutMs} ms${options.detail?.() ?? ''}`)
    }
    await new Promise(resolve => setTimeout(resolve, 25))
  }
}
