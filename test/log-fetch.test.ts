import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { lpStream } from '@libp2p/utils'
import type { Libp2p, Ed25519PrivateKey } from '@libp2p/interface'
import type { Multiaddr } from '@multiformats/multiaddr'
import { createNode } from '../src/net/node.js'
import { REJECTION_LINES_PER_KIND } from '../src/net/rejection-log.js'
import { registerLogFetch, fetchLog, LogFetchError, LOG_FETCH_PROTOCOL, type ServedLog, type LogFetchInit } from '../src/net/log-fetch.js'
import { openLog, type Log } from '../src/store/log.js'
import { headFilePath } from '../src/store/head-file.js'
import { verifyLog, formatFailure, MAX_ENTRY_BYTES, type LogLine } from '../src/core/log/index.js'
import { signerFromSeed, type Signer } from '../src/core/identity.js'
import { OWNER, buildLog, testPayload, verifyTestPayload } from './helpers/log-fixtures.js'

const logger = pino({ level: 'silent' })

interface Peer { node: Libp2p, id: string, signer: Signer, addr: Multiaddr }

async function peer (): Promise<Peer> {
  const privateKey = await generateKeyPair('Ed25519') as Ed25519PrivateKey
  const node = await createNode({ privateKey, listen: ['/ip4/127.0.0.1/tcp/0'], logger })
  const signer = signerFromSeed(privateKey.raw.slice(0, 32))
  expect(signer.peerId).toBe(node.peerId.toString())
  return { node, id: node.peerId.toString(), signer, addr: node.getMultiaddrs()[0] }
}

async function verifyFetched (lines: AsyncIterable<LogLine>, expectOwner: string, range: { from?: number, to?: number } = {}): Promise<{ passed: number, failures: string[] }> {
  const failures: string[] = []
  const verdict = await verifyLog(lines, { verifyPayload: verifyTestPayload, expectOwner, ...range, onFailure: f => failures.push(formatFailure(f)) })
  return { passed: verdict.passed, failures }
}

/** A server that serves whatever lines it is given: a peer that lies. */
function servedLines (lines: string[]): ServedLog {
  return {
    headLine: () => lines[0] ?? null,
    lines: async function * ({ from, to }) {
      for (const line of lines.slice(1)) {
        const seq = (JSON.parse(line) as { body: { seq: number } }).body.seq
        if (seq >= from && seq <= to) yield line
      }
    }
  }
}

let server: Peer
let client: Peer
let dir: string
let log: Log
let unregister: (() => Promise<void>) | undefined

async function serve (source: ServedLog, init: LogFetchInit = { policy: 'anyone' }): Promise<void> {
  await unregister?.()
  unregister = await registerLogFetch(server.node, source, { logger, ...init })
}

beforeAll(async () => {
  ;[server, client] = await Promise.all([peer(), peer()])
  dir = await mkdtemp(join(tmpdir(), 'fairdeal-fetch-'))
  log = await openLog(dir, server.signer)
  for (let i = 0; i < 30; i++) await log.append(i % 5 === 4 ? 'abort' : 'receipt', testPayload(i))
})

afterAll(async () => {
  await log?.close()
  await Promise.all([server?.node.stop(), client?.node.stop()])
  // The head file lies beside the store's directory (head-file.ts), here in the system's temp directory.
  if (dir !== undefined) await Promise.all([rm(dir, { recursive: true, force: true }), rm(headFilePath(dir), { force: true })])
})

describe('fetching a log over libp2p', () => {
  it('a whole log fetched page by page from a real LevelDB log verifies', async () => {
    await serve(log, { policy: 'anyone', maxEntriesPerResponse: 7 })
    const fetch = fetchLog(client.node, server.addr)
    expect(await verifyFetched(fetch, server.id)).toEqual({ passed: 30, failures: [] })
    expect(fetch.remotePeer).toBe(server.id)
  })

  it('a range verifies as that range', async () => {
    await serve(log, { policy: 'anyone', maxEntriesPerResponse: 4 })
    expect(await verifyFetched(fetchLog(client.node, server.addr, { from: 5, to: 17 }), server.id, { from: 5, to: 17 }))
      .toEqual({ passed: 13, failures: [] })
  })

  it('appends made during a fetch do not tear it: the copy ends at the head it started from', async () => {
    const dir2 = await mkdtemp(join(tmpdir(), 'fairdeal-fetch-'))
    const live = await openLog(dir2, server.signer)
    for (let i = 0; i < 10; i++) await live.append('receipt', testPayload(i))
    await serve(live, { policy: 'anyone', maxEntriesPerResponse: 3 })
    const lines: LogLine[] = []
    for await (const line of fetchLog(client.node, server.addr, { pageSize: 3 })) {
      lines.push(line)
      if (lines.length === 2) for (let i = 10; i < 15; i++) await live.append('receipt', testPayload(i))
    }
    expect(lines).toHaveLength(1 + 10)
    expect(await verifyFetched(lines.values() as unknown as AsyncIterable<LogLine>, server.id)).toEqual({ passed: 10, failures: [] })
    await live.close()
    await Promise.all([rm(dir2, { recursive: true, force: true }), rm(headFilePath(dir2), { force: true })])
  })

  it('an empty log is an empty fetch', async () => {
    await serve(servedLines([]))
    const lines = []
    for await (const line of fetchLog(client.node, server.addr)) lines.push(line)
    expect(lines).toEqual([])
  })
})

describe('who may fetch', () => {
  it('by default only table members', async () => {
    await serve(log, {})
    await expect(verifyFetched(fetchLog(client.node, server.addr), server.id))
      .rejects.toThrow(`${server.id} refused: not allowed: this node serves its log to its table members only`)
  })

  it('a member may (set or function)', async () => {
    await serve(log, { members: [client.id] })
    expect((await verifyFetched(fetchLog(client.node, server.addr), server.id)).passed).toBe(30)
    await serve(log, { policy: 'members', members: id => id === client.id })
    expect((await verifyFetched(fetchLog(client.node, server.addr), server.id)).passed).toBe(30)
  })
})

describe('a peer that serves a forged log is caught', () => {
  const genuine = buildLog(12)

  it('a changed byte in an entry names the entry', async () => {
    const forged = [...genuine]
    forged[1 + 4] = forged[1 + 4].replace('"kind":"abort"', '"kind":"receipt"')
    await serve(servedLines(forged))
    // The server is not OWNER: the log it serves must be its own, so check against OWNER explicitly.
    expect(await verifyFetched(fetchLog(client.node, server.addr), OWNER.peerId))
      .toEqual({ passed: 11, failures: ['seq 4: owner signature does not verify'] })
  })

  it('a dropped entry is missing', async () => {
    await serve(servedLines(genuine.filter((_, i) => i !== 1 + 7)))
    const r = await verifyFetched(fetchLog(client.node, server.addr), OWNER.peerId)
    expect(r.failures).toEqual(['seq 7: missing: the line after seq 6 is seq 8'])
  })

  it('another node\'s log passed off as the peer\'s own fails on every line', async () => {
    await serve(servedLines(genuine))
    const fetch = fetchLog(client.node, server.addr)
    const r = await verifyFetched(fetch, server.id)
    expect(r.passed).toBe(0)
    expect(r.failures[0]).toBe(`head: signed by ${OWNER.peerId}, not by the log owner ${server.id}`)
    expect(r.failures).toHaveLength(13)
  })

  it('a log re-signed by the peer itself around a forged payload fails the payload check', async () => {
    const forgedPayload = { ...testPayload(3), body: { ...testPayload(3).body, seats: ['robot'] } }
    await serve(servedLines(buildLog(6, server.signer, seq => seq === 3 ? forgedPayload : testPayload(seq))))
    expect(await verifyFetched(fetchLog(client.node, server.addr), server.id))
      .toEqual({ passed: 5, failures: ['seq 3: receipt signature does not verify'] })
  })

  it('an oversize frame is refused by the client\'s limit', async () => {
    const huge: ServedLog = { headLine: () => genuine[0], lines: async function * () { yield 'x'.repeat(MAX_ENTRY_BYTES + 10) } }
    await serve(huge)
    await expect(verifyFetched(fetchLog(client.node, server.addr), OWNER.peerId)).rejects.toThrow(LogFetchError)
  })
})

describe('the server side', () => {
  it('answers a malformed request with a clear error frame', async () => {
    await serve(log, { policy: 'anyone' })
    for (const [request, expected] of [
      ['{"from":-1}', /bad request: .*from/],
      ['{"from":0,"max":100000}', /bad request: .*max/],
      ['{"from":0,"extra":1}', /bad request: .*extra/],
      ['not json', /bad request: /]
    ] as const) {
      const stream = await client.node.dialProtocol(server.addr, LOG_FETCH_PROTOCOL)
      const lp = lpStream(stream)
      await lp.write(new TextEncoder().encode(request))
      const reply = (await lp.read()).subarray()
      expect(reply[0]).toBe(0x04)
      expect(new TextDecoder().decode(reply.subarray(1))).toMatch(expected)
      await stream.close()
    }
  })

  it('cuts an oversize request at the frame limit', async () => {
    await serve(log, { policy: 'anyone' })
    const stream = await client.node.dialProtocol(server.addr, LOG_FETCH_PROTOCOL)
    const lp = lpStream(stream)
    await lp.write(new TextEncoder().encode(JSON.stringify({ from: 0, pad: 'x'.repeat(1000) })))
    await expect(lp.read()).rejects.toThrow()
  })

  it('requests that break, however many, are logged in rate-limited summaries (issue 18: the log flood)', async () => {
    const lines: string[] = []
    const captured = pino({ level: 'warn' }, { write: (line: string) => { lines.push(line) } })
    await serve(log, { policy: 'anyone', logger: captured })
    for (let i = 0; i < 30; i++) {
      const stream = await client.node.dialProtocol(server.addr, LOG_FETCH_PROTOCOL)
      const lp = lpStream(stream)
      await lp.write(new TextEncoder().encode(JSON.stringify({ from: 0, pad: 'x'.repeat(1000) })))
      await expect(lp.read()).rejects.toThrow()
    }
    const failed = lines.filter(l => l.includes('log fetch failed'))
    expect(failed.length).toBeGreaterThan(0)
    expect(failed.length).toBeLessThanOrEqual(REJECTION_LINES_PER_KIND)
    await serve(log, { policy: 'anyone' })
  })
})
