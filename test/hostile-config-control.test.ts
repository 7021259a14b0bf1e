// Issue 9's smaller findings: configs that name no real key or the wrong peer, impossible ports,
// peers who are not at the table; bad control requests; inputs that never end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect } from 'node:net'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ed25519 } from '@noble/curves/ed25519.js'
import { parseNodeConfig } from '../src/daemon/config.js'
import { isPeerId, peerIdFromPublicKey } from '../src/core/identity.js'
import { seededSigner } from './helpers/log-fixtures.js'
import { TestTable } from './helpers/table-nodes.js'
import { startControl } from '../src/daemon/control.js'
import { ControlClient } from '../src/daemon/control-client.js'
import { EventWatcher } from '../src/daemon/events.js'
import { readJsonLines, MAX_GARBAGE_LINES } from '../src/store/jsonl.js'
import { LogInputError } from '../src/store/errors.js'
import { cliInProcess } from './helpers/cli-in-process.js'
import { CapturedLogger } from './helpers/captured-logger.js'

const DEALER = seededSigner(11).peerId
const SEAT = seededSigner(12).peerId
const STRANGER = seededSigner(13).peerId

/** A 32-byte string that is no point of the curve, wrapped as a peer id: it looks right and is not a key. */
function notAKey (): string {
  for (let i = 2; ; i++) {
    const bytes = new Uint8Array(32).fill(i)
    try { ed25519.Point.fromBytes(bytes) } catch { return peerIdFromPublicKey(bytes) }
  }
}

function config (table: Record<string, unknown> = {}, top: Record<string, unknown> = {}): Record<string, unknown> {
  return { data: 'd', ...top, table: { id: 't', game: 'duo', scheme: 'atout-v1', dealer: DEALER, seats: [DEALER, SEAT], ...table } }
}

async function refusal (value: Record<string, unknown>): Promise<string> {
  return await parseNodeConfig(value, 'node.json').then(() => 'accepted', (err: Error) => err.message)
}

describe('configs', () => {
  it('refuse a peer id that is no Ed25519 key, though it looks like one', async () => {
    const fake = notAKey()
    expect(fake).toMatch(/^12D3KooW[1-9A-HJ-NP-Za-km-z]{44}$/)
    expect(isPeerId(fake)).toBe(false)
    expect(await refusal(config({ seats: [DEALER, fake] }))).toMatch(/^node\.json: field table\.seats\.1: .*Ed25519/)
    expect(await refusal(config({ dealer: fake, seats: [fake, SEAT] }))).toMatch(/field table\.dealer/)
    // Not base58 of an identity multihash of an Ed25519 key at all.
    expect(await refusal(config({ seats: [DEALER, '12D3KooW' + '1'.repeat(44)] }))).toMatch(/Ed25519/)
  })

  it('refuse an address whose /p2p names another peer, a port over 65535, peers who are not members', async () => {
    expect(await refusal(config({ peers: { [SEAT]: [`/ip4/127.0.0.1/tcp/7401/p2p/${STRANGER}`] } }))).toMatch(new RegExp(`field table\\.peers\\.${SEAT}\\.0: address .* names peer ${STRANGER}, not ${SEAT}`))
    expect(await refusal(config({ peers: { [SEAT]: ['/ip4/127.0.0.1/tcp/99999'] } }))).toMatch(/field table\.peers\..*\.0: .*65535/)
    expect(await refusal(config({}, { listen: ['/ip4/127.0.0.1/tcp/99999'] }))).toMatch(/field listen\.0: .*65535/)
    expect(await refusal(config({ peers: { [STRANGER]: ['/ip4/127.0.0.1/tcp/7402'] } }))).toMatch(`field table.peers.${STRANGER}: is not a member of the table`)
    expect(await refusal(config({ peers: { [SEAT]: [`/ip4/127.0.0.1/tcp/7401/p2p/${SEAT}`] } }))).toBe('accepted')
  })
})

describe('the control endpoint', () => {
  let table: TestTable
  let control: Awaited<ReturnType<typeof startControl>>
  beforeAll(async () => {
    table = await TestTable.prepare({ game: 'duo', scheme: 'atout-v1', seats: 2, robots: [1] })
    const node = await table.start(0)
    control = await startControl(node.daemon, { port: 0, dataDir: node.dataDir, logger: new CapturedLogger().logger, idleMs: 300 })
  })
  afterAll(async () => { await control?.close(); await table?.cleanup() })

  async function post (path: string, body: string): Promise<{ status: number, error?: string }> {
    const res = await fetch(control.info.url + path, { method: 'POST', headers: { authorization: `Bearer ${control.info.token}` }, body })
    return { status: res.status, ...(await res.json() as { error?: string }) }
  }

  it('answers bad input with 400 and a reason, changing nothing', async () => {
    expect(await post('/hand/deal', '{"dealer":-0}')).toEqual({ status: 400, error: 'field dealer must be a non-negative integer' })
    expect(await post('/hand/deal', '{"dealr":1}')).toEqual({ status: 400, error: 'unknown field "dealr" (this request takes: dealer, table, play)' })
    expect(await post('/hand/deal', '{"table":5}')).toEqual({ status: 400, error: 'field table must be a table id' })
    expect((await post('/hand/deal', '{"table":"nope"}')).status).toBe(404)
    expect(await post('/hand/end', '{"hand":1,"extra":true}')).toMatchObject({ status: 400, error: /unknown field "extra"/ })
    const cards = await fetch(`${control.info.url}/hand/cards?hand=1&x=2`, { headers: { authorization: `Bearer ${control.info.token}` } })
    expect(cards.status).toBe(400)
    const events = await fetch(`${control.info.url}/events?after=-1`, { headers: { authorization: `Bearer ${control.info.token}` } })
    expect(events.status).toBe(400)
    const witnessed = await fetch(`${control.info.url}/witnessed?peer=12D3KooWnot`, { headers: { authorization: `Bearer ${control.info.token}` } })
    expect(witnessed.status).toBe(400)
    const none = await fetch(`${control.info.url}/witnessed?peer=${SEAT}`, { headers: { authorization: `Bearer ${control.info.token}` } })
    expect(await none.json()).toEqual({ peer: SEAT, heads: [] })
    expect((await post('/hand/deal', '{"dealer":0}')).status).toBe(200)
  })

  it('streams events on one response, quiet past the idle limit, until the client closes it', async () => {
    const auth = { headers: { authorization: `Bearer ${control.info.token}` } }
    expect((await fetch(`${control.info.url}/events?stream=2`, auth)).status).toBe(400)
    expect(await (await fetch(`${control.info.url}/events?stream=1&wait=100`, auth)).json()).toEqual({ error: 'query parameter wait is for a long poll, not a stream' })
    const client = new ControlClient(control.info)
    const start = (await client.events(0, 0)).last
    const stream = client.eventStream(start)
    try {
      // Quiet for twice the idle limit (300 ms), which closes a silent long poll's socket, once the
      // hand the test above dealt has no more to say: the stream is still there after.
      let cursor = start
      for (let events = await stream.source(cursor, 600); events.length > 0; events = await stream.source(cursor, 600)) cursor = events[events.length - 1].seq
      const hand = await client.deal(0)
      const watcher = new EventWatcher(async (after, waitMs) => await stream.source(Math.max(after, cursor), waitMs))
      await watcher.until(e => e.hand === hand && e.role === 'seat' && e.event.type === 'cards', 'the seat\'s cards')
      // The same events, in the same order, as the long poll gives.
      const polled = (await client.events(cursor, 0)).events
      expect(watcher.seen.length).toBeGreaterThan(2)
      expect(watcher.seen).toEqual(polled.slice(0, watcher.seen.length))
    } finally {
      stream.close()
    }
    await expect(stream.source(Number.MAX_SAFE_INTEGER, 1_000)).rejects.toThrow('event stream closed')
  })

  it('closes a socket that sends nothing', async () => {
    const port = Number(new URL(control.info.url).port)
    const socket = connect(port, '127.0.0.1')
    const closed = await new Promise<boolean>(resolve => {
      socket.on('close', () => { resolve(true) })
      socket.on('error', () => {})
      setTimeout(() => { resolve(false) }, 5_000).unref()
    })
    socket.destroy()
    expect(closed).toBe(true)
  })
})

describe('inputs that never end', () => {
  let dir: string
  beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'fairdeal-input-')) })
  afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

  async function drain (path: string): Promise<unknown> {
    try { for await (const _ of readJsonLines(path)) { /* read on */ } return null } catch (err) { return err }
  }

  it('a line of megabytes, or a thousand lines that are no JSON, stop the reading with one line', async () => {
    const long = join(dir, 'long')
    await writeFile(long, Buffer.alloc(3 * 1024 * 1024, 0))
    const e1 = await drain(long) as Error
    expect(e1).toBeInstanceOf(LogInputError)
    expect(e1.message).toBe(`${long}: line 1 is over 1048576 bytes: not a log (stopped reading)`)
    const garbage = join(dir, 'garbage')
    await writeFile(garbage, 'x\n'.repeat(MAX_GARBAGE_LINES + 5))
    expect(((await drain(garbage)) as Error).message).toMatch(/1000 lines in a row up to line 1000 are not JSON objects/)
  })

  it('fairdeal verify /dev/zero: one line, exit 2', async () => {
    const r = await cliInProcess('verify', '/dev/zero')
    expect(r.code).toBe(2)
    expect(r.stderr).toBe('fairdeal verify: cannot read /dev/zero: it is not a regular file or a pipe\n')
  })
})
