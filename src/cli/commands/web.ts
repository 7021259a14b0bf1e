import { defineCommand, type OptionSpecs, type ParsedArgs } from '../command.js'
import { UsageError } from '../errors.js'
import { parseIntOption } from '../options.js'
import { DataDirError, openDataDirLog } from '../../store/data-dir.js'
import { send, startWebServer, WebPagesMissingError, type Route } from '../../daemon/web-server.js'

export const DEFAULT_WEB_PORT = 7490

const USAGE = `usage: fairdeal web [--data DIR] [--port PORT]

Serves the web pages on 127.0.0.1 until Ctrl-C: the verifier at /verify, which checks a receipt,
a log entry, an abort record, a whole exported log or a drand {info, entries} file entirely in the
browser, with the same code as 'fairdeal verify'. The pages are static files (dist/web after
'npm run build'): any static file server can serve them too.

  --data DIR     also serve the log of that (stopped) node's data directory at /log.jsonl, as
                 'fairdeal log export' writes it; the verifier page offers it with one click.
                 If that node is running, print a fresh one-time login link to its table page instead
  --port PORT    TCP port on 127.0.0.1 (default ${DEFAULT_WEB_PORT}; 0 for any free port)`

const OPTIONS = {
  data: { type: 'string' },
  port: { type: 'string' }
} satisfies OptionSpecs

export const command = defineCommand({
  name: 'web',
  summary: 'serve the web pages (the verifier at /verify)',
  help: USAGE,
  options: OPTIONS,
  run
})

async function run ({ values, positionals }: ParsedArgs<typeof OPTIONS>): Promise<number> {
  const port = parseIntOption(values.port, '--port', 0, 65535) ?? DEFAULT_WEB_PORT
  const routes: Record<string, Route> = { '/': (_req, res) => { res.writeHead(302, { location: '/verify' }); res.end() } }
  let owner: string | null = null
  if (values.data !== undefined) {
    const dir = values.data
    // Opened once now, so a wrong directory is said at once, not on the first click. A running
    // node serves its own pages: it is asked for a fresh login link instead.
    let log
    try {
      log = await openDataDirLog(dir)
    } catch (err) {
      if (!(err instanceof DataDirError) || !/in use by a running node/.test(err.message)) throw err
      const { ControlClient } = await import('../../daemon/control-client.js')
      const link = await (await ControlClient.forDataDir(dir)).loginLink()
      process.stdout.write(`the node of ${dir} is running and serves its table page itself; open this one-time login link (ten minutes):\n${link}\n`)
      return 0
    }
    owner = log.owner
    await log.close()
    routes['/log.jsonl'] = async (req, res) => { await serveLog(dir, owner, req.method === 'HEAD', res) }
  }
  let server
  try {
    server = await startWebServer({ port, routes })
  } catch (err) {
    if (err instanceof WebPagesMissingError) throw new UsageError(err.message)
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EADDRINUSE') throw new UsageError(`port ${port} on 127.0.0.1 is in use: choose another with --port`)
    throw err
  }
  process.stdout.write(`verifier: ${server.url}/verify\n`)
  if (values.data !== undefined) process.stdout.write(`log of ${owner ?? 'an empty log'} (${values.data}) at ${server.url}/log.jsonl\n`)
  await new Promise<void>(resolve => {
    process.once('SIGINT', () => { resolve() })
    process.once('SIGTERM', () => { resolve() })
  })
  await server.close()
  return 0
}

/** The data directory's log as 'fairdeal log export' writes it, read afresh on each request. */
async function serveLog (dir: string, owner: string | null, headOnly: boolean, res: Parameters<Route>[1]): Promise<void> {
  let log
  try {
    log = await openDataDirLog(dir)
  } catch (err) {
    send(res, 409, `${(err as Error).message}\n`)
    return
  }
  try {
    res.writeHead(200, {
      'content-type': 'application/jsonl; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-fairdeal-log': `log of ${owner ?? 'an empty log'}`
    })
    if (headOnly) { res.end(); return }
    for await (const line of log.copy()) {
      if (!res.write(line + '\n')) await new Promise(resolve => res.once('drain', resolve))
    }
    res.end()
  } finally {
    await log.close()
  }
}
