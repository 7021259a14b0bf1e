import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Daemon } from './daemon.js'
import type { TableHost } from './table-host.js'
import type { NodeEvent } from './events.js'
import { send, startWebServer, type Route, type WebHost, type WebServer } from './web-server.js'
import { followEvents, HttpError, httpStatusOf, intField, queryInt, readBody, readQuery, tableField } from './control.js'
import { BoundedSet } from '../core/bounded-set.js'

/**
 * The table page of a running node (`fairdeal node`): the page at `/` and a JSON API with the
 * control endpoint's powers, on 127.0.0.1. Nothing but `/login` answers without credentials: the
 * control token (`Authorization: Bearer …`, as in DATA/control.json), or the session cookie a
 * one-time login link sets. The API serves this node's own cards only (its seat's private cards and
 * the public ones), never another seat's.
 */

const LOGIN_CODE_MS = 10 * 60_000
const MAX_SESSIONS = 64

export interface TableWeb {
  url: string
  port: number
  /** A new one-time login link (valid ten minutes, usable once). */
  loginLink: () => string
  close: () => Promise<void>
}

function sameSecret (given: string, expected: string): boolean {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

function cookieOf (req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=')
    if (k === name) return v.join('=')
  }
  return undefined
}

function json (res: ServerResponse, status: number, body: unknown): void {
  send(res, status, JSON.stringify(body), 'application/json; charset=utf-8')
}

/** Only what this node may show: a seat's own cards and public ones (a node's events hold no other). */
function shareable (e: NodeEvent, seat: number | null): boolean {
  return e.event.type !== 'cards' || e.event.public || (seat !== null && e.event.seat === seat)
}

export async function startTableWeb (daemon: Daemon, options: { port: number, token: string, host?: WebHost }): Promise<TableWeb> {
  // Named after the port: cookies are per host, not per port, and two nodes may run side by side.
  let cookie = 'fairdeal_session'
  const loginCodes = new Map<string, number>()
  const sessions = new BoundedSet(MAX_SESSIONS)
  // A node serving several tables: the page names one (`?table=ID`, sent on with every request).
  const tableOf = (url: URL): TableHost => daemon.table(tableField(url.searchParams.get('table')))

  const authorised = (req: IncomingMessage): boolean => {
    const auth = req.headers.authorization ?? ''
    if (auth.startsWith('Bearer ') && sameSecret(auth.slice(7), options.token)) return true
    const session = cookieOf(req, cookie)
    return session !== undefined && sessions.has(session)
  }

  const guarded = (route: Route): Route => async (req, res) => {
    if (!authorised(req)) {
      send(res, 401, 'not logged in: open a one-time login link (`fairdeal node` prints one on its terminal; `fairdeal web --data DIR` prints a new one)\n')
      return
    }
    try {
      await route(req, res)
    } catch (err) {
      const status = httpStatusOf(err, 500)
      if (!res.headersSent) json(res, status, { error: (err as Error).message })
      else res.end()
    }
  }

  const api: Record<string, Route> = {
    '/api/status': (req, res) => {
      const url = new URL(req.url ?? '/', 'http://x')
      readQuery(url, ['table'])
      json(res, 200, daemon.status(tableOf(url).id))
    },
    '/api/tables': (_req, res) => { json(res, 200, { tables: daemon.tableList() }) },
    '/api/cards': (req, res) => {
      const url = new URL(req.url ?? '/', 'http://x')
      readQuery(url, ['hand', 'table'])
      const hand = queryInt(url, 'hand')
      const table = tableOf(url)
      // The seat machine holds only this seat's cards and the public ones.
      json(res, 200, { hand, seat: table.seat?.seat ?? null, cards: table.seat === undefined ? [] : table.cards(hand) })
    },
    '/api/play': (req, res) => {
      // A played hand as this node's seat sees it (whose turn, its legal actions, the actions so
      // far): what the page's card table draws, as `fairdeal hand show` prints it.
      const url = new URL(req.url ?? '/', 'http://x')
      readQuery(url, ['hand', 'table'])
      const hand = queryInt(url, 'hand')
      const view = tableOf(url).playView(hand)
      if (view === undefined) throw new HttpError(404, `hand ${hand} is not played at this node's seat (not played, not dealt yet, or over)`)
      json(res, 200, view)
    },
    '/api/events': async (req, res) => {
      // Server-sent events: every event of this node's table from `after` (or Last-Event-ID) on.
      const url = new URL(req.url ?? '/', 'http://x')
      const table = tableOf(url)
      const seat = table.seat?.seat ?? null
      let after = Number(req.headers['last-event-id'] ?? url.searchParams.get('after') ?? 0)
      if (!Number.isSafeInteger(after) || after < 0) after = 0
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' })
      res.write('retry: 1000\n\n')
      await followEvents(daemon, res, after, e => e.table === table.id && shareable(e, seat) ? `id: ${e.seq}\ndata: ${JSON.stringify(e)}\n\n` : '', ': keep-alive\n\n')
    }
  }
  /** Each action's body fields: anything else is refused, as by the control endpoint. */
  const fields: Record<string, string[]> = { '/api/deal': ['dealer', 'table', 'play'], '/api/stage': ['hand', 'stage', 'taker', 'table'], '/api/end': ['hand', 'table'], '/api/act': ['hand', 'action', 'table'] }
  const actions: Record<string, (body: Record<string, unknown>) => Promise<unknown>> = {
    '/api/deal': async (body) => {
      if (body.play !== undefined && typeof body.play !== 'boolean') throw new HttpError(400, 'field play must be a boolean')
      return { hand: await daemon.deal({ dealer: intField(body, 'dealer', false), table: tableField(body.table), play: body.play === true }) }
    },
    '/api/act': async (body) => {
      // This node's seat's bid or card, checked by the seat's engine before it is signed (as `hand bid` / `hand play`).
      const hand = intField(body, 'hand', true) as number
      if (typeof body.action !== 'object' || body.action === null || Array.isArray(body.action)) throw new HttpError(400, 'field action must be an object')
      await daemon.act(hand, body.action, tableField(body.table))
      return { hand, action: body.action }
    },
    '/api/stage': async (body) => {
      const hand = intField(body, 'hand', true) as number
      if (typeof body.stage !== 'string') throw new HttpError(400, 'field stage must be a string')
      await daemon.stage(hand, body.stage, intField(body, 'taker', false), tableField(body.table))
      return { hand, stage: body.stage }
    },
    '/api/end': async (body) => {
      const hand = intField(body, 'hand', true) as number
      await daemon.end(hand, tableField(body.table))
      return { hand }
    }
  }

  const routes: Record<string, Route> = {
    '/login': (req, res) => {
      const code = new URL(req.url ?? '/', 'http://x').searchParams.get('code') ?? ''
      const expires = loginCodes.get(code)
      loginCodes.delete(code)
      if (expires === undefined || expires < Date.now()) {
        send(res, 401, 'this login link is not valid (each works once, for ten minutes): ask the node for a new one\n')
        return
      }
      const session = randomBytes(32).toString('hex')
      sessions.add(session)
      res.writeHead(303, {
        location: '/',
        'set-cookie': `${cookie}=${session}; HttpOnly; SameSite=Strict; Path=/`,
        'cache-control': 'no-store'
      })
      res.end()
    }
  }
  for (const [path, route] of Object.entries(api)) {
    routes[path] = guarded(async (req, res) => {
      if (req.method !== 'GET') throw new HttpError(405, `${path} takes GET`)
      await route(req, res)
    })
  }
  for (const [path, action] of Object.entries(actions)) {
    routes[path] = guarded(async (req, res) => {
      if (req.method !== 'POST') throw new HttpError(405, `${path} takes POST`)
      // A form of another site cannot post here: it can neither set this header nor read the token.
      if (req.headers['content-type']?.startsWith('application/json') !== true) throw new HttpError(415, 'send JSON (content-type: application/json)')
      json(res, 200, await action(await readBody(req, fields[path])))
    })
  }
  // The seat page and the built code are static and public (docs/browser-seat.md): a player opens
  // the page from a link, with no login; only the API and the table page need credentials.
  const open = (req: IncomingMessage): boolean => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    return path === '/seat' || path === '/seat.html' || path === '/bundle.json' || path.startsWith('/assets/') || authorised(req)
  }
  const server: WebServer = await startWebServer({ port: options.port, routes, page: '/table.html', guard: open, host: options.host })
  cookie = `fairdeal_session_${server.port}`
  return {
    url: server.url,
    port: server.port,
    loginLink: () => {
      const code = randomBytes(16).toString('hex')
      for (const [c, expires] of loginCodes) if (expires < Date.now()) loginCodes.delete(c)
      loginCodes.set(code, Date.now() + LOGIN_CODE_MS)
      return `${server.url}/login?code=${code}`
    },
    close: async () => { await server.close() }
  }
}
