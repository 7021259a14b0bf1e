import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { readdir, readFile, stat } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'
import { webRoot } from '../store/package-files.js'

/**
 * The HTTP server of the web pages (`fairdeal web`, later `fairdeal node`): the files Vite built
 * into dist/web, and a few dynamic routes. Loopback only. Files are served from a list made at
 * start, so no request path ever reaches the file system; the Host header must name this server
 * (a page of another site cannot reach it through DNS rebinding).
 */

/** dist/web: next to this module's dist/src/daemon, or under the repository when run from src/ (tests). */
export const WEB_ROOT = webRoot()

export type Route = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void

export interface WebServerOptions {
  /** TCP port on 127.0.0.1; 0 takes any free one. */
  port: number
  /** Directory of the built pages (default dist/web). */
  root?: string
  /** Exact paths → handlers; checked before the files. */
  routes?: Record<string, Route>
  /** The built file `/` serves (e.g. '/table.html'); without it `/` is a route or nothing. */
  page?: string
  /** When given, every file is served only to a request it accepts (routes guard themselves). */
  guard?: (req: IncomingMessage) => boolean
  /**
   * Where it listens: 127.0.0.1 (the default), or 0.0.0.0 / :: in a container whose port is
   * published. Off loopback only the seat page and the built assets are served to a request for
   * another host (they are static and hold no secret: isSharedPath); the table page, its API and the
   * login answer only at 127.0.0.1 or localhost (a DNS-rebinding page cannot reach them).
   */
  host?: WebHost
}

/** Where a node's web server may listen (config `web.host`). */
export type WebHost = '127.0.0.1' | '0.0.0.0' | '::'
export const WEB_HOSTS = ['127.0.0.1', '0.0.0.0', '::'] as const

/** What a server bound off loopback serves to any host: the static seat page and the built assets. */
export function isSharedPath (path: string): boolean {
  return path === '/seat' || path === '/seat.html' || path === '/bundle.json' || path.startsWith('/assets/')
}

export interface WebServer {
  port: number
  url: string
  close: () => Promise<void>
}

export class WebPagesMissingError extends Error {
  override name = 'WebPagesMissingError'
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon'
}

/** Everything a page may load comes from this server; nothing inline, nothing from elsewhere. */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin'
}

/**
 * The seat page is a libp2p node: it opens WebSockets to the dealer's node (or a relay) wherever
 * the table names it, and runs libsodium's WebAssembly. Only its document gets these two more.
 */
const SEAT_PAGE_CSP = SECURITY_HEADERS['content-security-policy'] + "; connect-src 'self' ws: wss:; script-src 'self' 'wasm-unsafe-eval'"

async function listFiles (root: string): Promise<Map<string, string>> {
  const files = new Map<string, string>()
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) await walk(path)
      else if (entry.isFile()) files.set('/' + relative(root, path).split(sep).join('/'), path)
    }
  }
  await walk(root)
  return files
}

export function send (res: ServerResponse, status: number, body: string | Uint8Array, type = 'text/plain; charset=utf-8', headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'cache-control': 'no-store', ...headers })
  res.end(body)
}

export async function startWebServer (options: WebServerOptions): Promise<WebServer> {
  const root = options.root ?? WEB_ROOT
  let files: Map<string, string>
  try {
    if (!(await stat(join(root, 'verify.html'))).isFile()) throw new Error('not a file')
    files = await listFiles(root)
  } catch {
    throw new WebPagesMissingError(`the web pages are not built (${root} has no verify.html): run 'npm run build'`)
  }
  const routes = options.routes ?? {}
  const bound = options.host ?? '127.0.0.1'
  let port = options.port
  const server = createServer((req, res) => {
    void (async () => {
      const host = req.headers.host ?? ''
      const path = new URL(req.url ?? '/', 'http://x').pathname
      const local = host === `127.0.0.1:${port}` || host === `localhost:${port}`
      if (!local && !(bound !== '127.0.0.1' && isSharedPath(path) && (req.method === 'GET' || req.method === 'HEAD'))) {
        send(res, 421, 'wrong Host header: open this page at 127.0.0.1\n')
        return
      }
      if (req.method !== 'GET' && req.method !== 'HEAD' && !(req.url ?? '').startsWith('/api/')) { send(res, 405, 'method not allowed\n'); return }
      const route = routes[path]
      if (route !== undefined) { await route(req, res); return }
      if (options.guard !== undefined && !options.guard(req)) {
        send(res, 401, 'not logged in: open a one-time login link (`fairdeal node` prints one on its terminal; `fairdeal web --data DIR` prints a new one)\n')
        return
      }
      // /verify is verify.html; the pages' assets are the built files themselves.
      const file = path === '/' && options.page !== undefined ? files.get(options.page) : files.get(path) ?? files.get(`${path}.html`)
      if (file === undefined) { send(res, 404, 'not found\n'); return }
      const ext = file.slice(file.lastIndexOf('.'))
      const body = await readFile(file)
      const immutable = path.startsWith('/assets/')
      res.writeHead(200, {
        ...SECURITY_HEADERS,
        ...(file.endsWith(`${sep}seat.html`) ? { 'content-security-policy': SEAT_PAGE_CSP } : {}),
        'content-type': TYPES[ext] ?? 'application/octet-stream',
        'content-length': String(body.length),
        'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache'
      })
      res.end(req.method === 'HEAD' ? undefined : body)
    })().catch(err => {
      if (!res.headersSent) send(res, 500, `error: ${(err as Error).message}\n`)
      else res.destroy()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, bound, () => { server.off('error', reject); resolve() })
  })
  const address = server.address()
  port = typeof address === 'object' && address !== null ? address.port : options.port
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => { resolve() }))
    }
  }
}
