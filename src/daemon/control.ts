import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import type { Logger } from 'pino'
import { Rejection } from '../protocol/types.js'
import { CoreInputError } from '../core/errors.js'
import { isPeerId } from '../core/identity.js'
import type { Daemon } from './daemon.js'
import type { NodeEvent } from './events.js'
import { TableChoiceError } from './errors.js'

/** Where a running node tells local clients how to reach its control endpoint. */
export const CONTROL_FILE = 'control.json'
const MAX_BODY_BYTES = 16 * 1024
const MAX_WAIT_MS = 30_000
/** A connection that sends nothing for this long is closed (a long poll gets its wait on top). */
export const CONTROL_IDLE_MS = 10_000
/** At most this many connections at once: the endpoint serves a few local clients. */
const MAX_CONNECTIONS = 64

export interface ControlInfo {
  url: string
  token: string
  pid: number
  peerId: string
}

/** A refusal with its HTTP status (also used by the table page's API, src/daemon/table-web.ts). */
export class HttpError extends Error {
  constructor (readonly status: number, message: string) { super(message) }
}

/** The table page's login links, once the page runs (`fairdeal node` sets `make` after starting it). */
export interface LoginLinks { make?: () => string }

/**
 * The node's local control endpoint: HTTP on 127.0.0.1 only, every request carrying the bearer
 * token kept (mode 0600) in the data directory, so only someone who can read that directory can
 * drive the node. JSON in, JSON out. Its file (CONTROL_FILE: URL, token and pid) is what says the
 * node is up: the CLI, the demo and the tests find and wait for the node by it. `publish: false`
 * leaves the file out until `publish()` is called, for a node that has more to start first
 * (`fairdeal node`: its table page), so that whoever the file lets in finds all of it.
 */
export async function startControl (daemon: Daemon, options: { port: number, dataDir: string, logger: Logger, idleMs?: number, loginLinks?: LoginLinks, publish?: boolean }): Promise<{ info: ControlInfo, publish: () => Promise<void>, close: () => Promise<void> }> {
  const token = randomBytes(32).toString('hex')
  const expected = Buffer.from(`Bearer ${token}`)
  const server: Server = createServer((req, res) => {
    handle(daemon, req, res, expected, options.loginLinks).catch((err: unknown) => {
      const status = httpStatusOf(err, err instanceof CoreInputError ? 400 : 500)
      if (status === 500) options.logger.error({ err }, 'control request failed')
      reply(res, status, { error: (err as Error).message })
    })
  })
  // Idle sockets are closed (one that never sends a request, or stops halfway, holds nothing).
  const idleMs = options.idleMs ?? CONTROL_IDLE_MS
  server.setTimeout(idleMs)
  server.headersTimeout = idleMs
  server.requestTimeout = 2 * idleMs
  server.keepAliveTimeout = Math.min(5_000, idleMs)
  server.maxConnections = MAX_CONNECTIONS
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, '127.0.0.1', () => { server.off('error', reject); resolve() })
  })
  const port = (server.address() as AddressInfo).port
  const info: ControlInfo = { url: `http://127.0.0.1:${port}`, token, pid: process.pid, peerId: daemon.peerId }
  const file = join(options.dataDir, CONTROL_FILE)
  let published: Promise<void> | undefined
  const publish = async (): Promise<void> => {
    published ??= (async () => {
      await writeFile(file + '.tmp', JSON.stringify(info) + '\n', { mode: 0o600 })
      await rename(file + '.tmp', file)
    })()
    await published
  }
  if (options.publish !== false) {
    try { await publish() } catch (err) { server.close(); throw err }
  }
  return {
    info,
    publish,
    close: async () => {
      await rm(file, { force: true })
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => { resolve() }))
    }
  }
}

/** The HTTP status of an error a request ended with (`otherwise` for anything not listed). */
export function httpStatusOf (err: unknown, otherwise: number): number {
  if (err instanceof HttpError) return err.status
  if (err instanceof Rejection) return 409
  if (err instanceof TableChoiceError) return err.kind === 'missing' ? 400 : 404
  return otherwise
}

/**
 * The table a request names: `table` in its body or query (a table id), or none (the node's only
 * table; a node serving several refuses, listing them: Daemon.table).
 */
export function tableField (value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string' || value === '' || value.length > 64) throw new HttpError(400, 'field table must be a table id')
  return value
}

function reply (res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) { res.end(); return }
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

/** How long an event stream stays silent before it sends a blank line (a client that went away shows then). */
const STREAM_KEEPALIVE_MS = 15_000

/**
 * `GET /events?stream=1`: every event after `after` as it happens, one JSON object a line
 * (NodeEvent), on one response that stays open until the client closes it or the node stops; a
 * blank line after 15 s without one. A client that drives a table hears each event as one write
 * on a socket already open, not as one request: a long poll costs the node a request and a
 * response per event (per hand at a four-seat table, about 8 at every node). Nothing piles up for
 * a client that reads slowly: the next events are taken from the feed only once the last write
 * has drained, and the feed keeps a bounded number (EventFeed), so one that falls further behind
 * sees a gap in `seq`, as a long poll would.
 */
async function streamEvents (daemon: Daemon, res: ServerResponse, after: number): Promise<void> {
  // The stream is quiet between events: the connection's idle limit does not apply to it.
  res.socket?.setTimeout(0)
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' })
  await followEvents(daemon, res, after, e => JSON.stringify(e) + '\n', '\n')
}

/**
 * Writes the node's events after `after` to a streamed response (headers already sent) until the
 * client closes it, then ends it: each batch the feed gives, as `format` makes it (an empty string
 * leaves an event out), in one write; `keepAlive` after STREAM_KEEPALIVE_MS without an event. After
 * a write that fills the response's buffer it waits for the buffer to drain before it takes more
 * from the feed, so a client that reads slowly holds at most one buffer of events here. The
 * control endpoint's event stream and the table page's server-sent events.
 */
export async function followEvents (daemon: Daemon, res: ServerResponse, after: number, format: (e: NodeEvent) => string, keepAlive: string): Promise<void> {
  const abort = new AbortController()
  res.on('close', () => { abort.abort() })
  let cursor = after
  while (!abort.signal.aborted) {
    const events = await daemon.events.wait(cursor, STREAM_KEEPALIVE_MS, abort.signal)
    if (abort.signal.aborted) break
    let text = events.length === 0 ? keepAlive : ''
    for (const e of events) { text += format(e); cursor = e.seq }
    if (text !== '' && !res.write(text)) await drained(res)
  }
  res.end()
}

/**
 * Resolves once `res` can take more (its 'drain'), or is closed (the client went: no drain comes
 * then). What a streamed response waits on after a write that filled its buffer, so a client that
 * reads slowly holds at most one buffer of it in memory.
 */
export async function drained (res: ServerResponse): Promise<void> {
  if (res.closed) return
  await new Promise<void>(resolve => {
    const done = (): void => { res.off('drain', done); res.off('close', done); resolve() }
    res.once('drain', done)
    res.once('close', done)
  })
}

/** The JSON object body of a request, with no field but `allowed` (a misspelt field is an error, not ignored). */
export async function readBody (req: IncomingMessage, allowed: string[]): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `request body over ${MAX_BODY_BYTES} bytes`)
    chunks.push(chunk as Buffer)
  }
  if (size === 0) return {}
  let value: unknown
  try { value = JSON.parse(Buffer.concat(chunks).toString('utf8')) } catch { throw new HttpError(400, 'request body is not JSON') }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new HttpError(400, 'request body must be a JSON object')
  const unknown = Object.keys(value).find(k => !allowed.includes(k))
  if (unknown !== undefined) throw new HttpError(400, `unknown field ${JSON.stringify(unknown.slice(0, 40))} (this request takes: ${allowed.join(', ')})`)
  return value as Record<string, unknown>
}

/** Query parameters of a GET, none but `allowed`. */
export function readQuery (url: URL, allowed: string[]): void {
  const unknown = [...url.searchParams.keys()].find(k => !allowed.includes(k))
  if (unknown !== undefined) throw new HttpError(400, `unknown query parameter ${JSON.stringify(unknown.slice(0, 40))} (this request takes: ${allowed.join(', ') || 'none'})`)
}

/** A query parameter that is a non-negative integer (digits only: Number() would read '' as 0). */
export function queryInt (url: URL, name: string, fallback?: number): number {
  const text = url.searchParams.get(name)
  if (text === null && fallback !== undefined) return fallback
  if (text === null || !/^\d{1,15}$/.test(text)) throw new HttpError(400, `query parameter ${name} must be a non-negative integer`)
  return Number(text)
}

export function intField (body: Record<string, unknown>, name: string, required: boolean): number | undefined {
  const v = body[name]
  if (v === undefined && !required) return undefined
  // -0 is refused too: it is no integer of canonical JSON, and nothing a client means.
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0 || Object.is(v, -0)) throw new HttpError(400, `field ${name} must be a non-negative integer`)
  return v
}

async function handle (daemon: Daemon, req: IncomingMessage, res: ServerResponse, expected: Buffer, loginLinks?: LoginLinks): Promise<void> {
  const auth = Buffer.from(req.headers.authorization ?? '')
  if (auth.length !== expected.length || !timingSafeEqual(auth, expected)) throw new HttpError(401, 'missing or wrong control token')
  const url = new URL(req.url ?? '/', 'http://127.0.0.1')
  const route = `${req.method ?? 'GET'} ${url.pathname}`
  switch (route) {
    case 'POST /web/login': {
      // A fresh one-time link to the table page (the one `fairdeal node` printed may be used or lost).
      await readBody(req, [])
      if (loginLinks?.make === undefined) throw new HttpError(404, 'this node serves no table page (web.enabled is false, or it could not start)')
      return reply(res, 200, { link: loginLinks.make() })
    }
    case 'GET /status':
      readQuery(url, ['table'])
      return reply(res, 200, daemon.status(tableField(url.searchParams.get('table'))))
    case 'GET /tables':
      readQuery(url, [])
      return reply(res, 200, { tables: daemon.tableList() })
    case 'POST /hand/deal': {
      const body = await readBody(req, ['dealer', 'table', 'play'])
      const table = tableField(body.table)
      if (body.play !== undefined && typeof body.play !== 'boolean') throw new HttpError(400, 'field play must be a boolean')
      const hand = await daemon.deal({ dealer: intField(body, 'dealer', false), table, play: body.play === true })
      return reply(res, 200, { hand, table: daemon.table(table).id })
    }
    case 'POST /hand/stage': {
      const body = await readBody(req, ['hand', 'stage', 'taker', 'table'])
      const hand = intField(body, 'hand', true) as number
      if (typeof body.stage !== 'string') throw new HttpError(400, 'field stage must be a string')
      await daemon.stage(hand, body.stage, intField(body, 'taker', false), tableField(body.table))
      return reply(res, 200, { hand, stage: body.stage })
    }
    case 'POST /hand/end': {
      const body = await readBody(req, ['hand', 'table'])
      const hand = intField(body, 'hand', true) as number
      await daemon.end(hand, tableField(body.table))
      return reply(res, 200, { hand })
    }
    case 'POST /hand/act': {
      // This node's seat's action in a played hand: a bid, a card, … (docs/games.md "Playing a dealt hand").
      const body = await readBody(req, ['hand', 'action', 'table'])
      const hand = intField(body, 'hand', true) as number
      if (typeof body.action !== 'object' || body.action === null || Array.isArray(body.action)) throw new HttpError(400, 'field action must be an object')
      await daemon.act(hand, body.action, tableField(body.table))
      return reply(res, 200, { hand, action: body.action })
    }
    case 'GET /hand/play': {
      readQuery(url, ['hand', 'table'])
      const hand = queryInt(url, 'hand')
      const view = daemon.table(tableField(url.searchParams.get('table'))).playView(hand)
      if (view === undefined) throw new HttpError(404, `hand ${hand} is not played at this node's seat (not played, not dealt yet, or over)`)
      return reply(res, 200, view)
    }
    case 'GET /hand/cards': {
      readQuery(url, ['hand', 'table'])
      const hand = queryInt(url, 'hand')
      const table = daemon.table(tableField(url.searchParams.get('table')))
      // The dealer node also sees the robot seats' cards it plays (never another person's).
      const robots = table.dealer?.robotCards(hand) ?? []
      return reply(res, 200, { hand, seat: table.seat?.seat ?? null, cards: table.seat === undefined && robots.length > 0 ? [] : table.cards(hand), ...(robots.length > 0 ? { robots } : {}) })
    }
    case 'GET /log': {
      // The log as 'fairdeal log export' writes it (signed head, then entries), so a running node's
      // log can be shown and verified exactly as a stopped one's.
      readQuery(url, ['from', 'to'])
      const from = url.searchParams.has('from') ? queryInt(url, 'from') : undefined
      const to = url.searchParams.has('to') ? queryInt(url, 'to') : undefined
      res.writeHead(200, { 'content-type': 'application/jsonl; charset=utf-8' })
      for await (const line of daemon.log.copy({ from, to })) {
        if (res.closed) break
        if (!res.write(line + '\n')) await drained(res)
      }
      res.end()
      return
    }
    case 'GET /witnessed': {
      // The heads this node witnessed for a peer: what `fairdeal verify --peer … --as DIR` checks.
      readQuery(url, ['peer'])
      const peer = url.searchParams.get('peer') ?? ''
      if (!isPeerId(peer)) throw new HttpError(400, 'query parameter peer must be an Ed25519 peer id')
      return reply(res, 200, { peer, heads: await daemon.witnessedHeads(peer) })
    }
    case 'GET /events': {
      readQuery(url, ['after', 'wait', 'stream'])
      const after = queryInt(url, 'after', 0)
      if (url.searchParams.has('stream')) {
        if (url.searchParams.get('stream') !== '1') throw new HttpError(400, 'query parameter stream must be 1')
        if (url.searchParams.has('wait')) throw new HttpError(400, 'query parameter wait is for a long poll, not a stream')
        return await streamEvents(daemon, res, after)
      }
      const wait = Math.min(queryInt(url, 'wait', 0), MAX_WAIT_MS)
      // The long poll is quiet for up to `wait`: the idle limit starts after it.
      req.socket.setTimeout(wait + (req.socket.timeout ?? CONTROL_IDLE_MS))
      const abort = new AbortController()
      res.on('close', () => { abort.abort() })
      const events = await daemon.events.wait(after, wait, abort.signal)
      return reply(res, 200, { events, last: daemon.events.last })
    }
    default:
      throw new HttpError(404, `no such control route: ${route}`)
  }
}
