// Where a node's web server listens (issue 20, Docker): on 127.0.0.1 it answers only requests for
// 127.0.0.1 or localhost (a DNS-rebinding page cannot reach it); bound off loopback (`web.host`
// 0.0.0.0, a container whose port is published) it serves the static seat page and the built
// assets to any host, and still nothing else (the table page, its API, the login) but at 127.0.0.1.
import { afterEach, describe, expect, it } from 'vitest'
import { request } from 'node:http'
import { startWebServer, type WebServer } from '../src/daemon/web-server.js'

let server: WebServer | undefined
afterEach(async () => { await server?.close(); server = undefined })

/** GET `path` from the server on 127.0.0.1 with the Host header `host`: the status. */
async function statusFor (port: number, path: string, host: string): Promise<number> {
  return await new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, res => { res.resume(); resolve(res.statusCode ?? 0) })
    req.on('error', reject)
    req.end()
  })
}

describe('the web server and the Host header', () => {
  it('on 127.0.0.1: only requests for 127.0.0.1 or localhost', async () => {
    server = await startWebServer({ port: 0, routes: { '/api/x': (_req, res) => { res.end('x') } } })
    const { port } = server
    expect(await statusFor(port, '/seat', `127.0.0.1:${port}`)).toBe(200)
    expect(await statusFor(port, '/seat', `localhost:${port}`)).toBe(200)
    for (const path of ['/seat', '/bundle.json', '/api/x', '/']) expect(await statusFor(port, path, `example.org:${port}`), path).toBe(421)
  })

  it('on 0.0.0.0: the seat page and the assets to any host, nothing else but at 127.0.0.1', async () => {
    server = await startWebServer({ port: 0, host: '0.0.0.0', routes: { '/api/x': (_req, res) => { res.end('x') } }, page: '/table.html' })
    const { port } = server
    for (const path of ['/seat', '/seat.html', '/bundle.json']) expect(await statusFor(port, path, `203.0.113.9:${port}`), path).toBe(200)
    for (const path of ['/api/x', '/', '/table.html', '/verify']) expect(await statusFor(port, path, `203.0.113.9:${port}`), path).toBe(421)
    expect(await statusFor(port, '/api/x', `127.0.0.1:${port}`)).toBe(200)
    expect(await statusFor(port, '/', `127.0.0.1:${port}`)).toBe(200)
  })
})
