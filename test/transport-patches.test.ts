import { spawnSync } from 'node:child_process'
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { Socket } from 'node:net'
import { afterEach, describe, expect, test } from 'vitest'
import pino from 'pino'
import { LengthPrefixedDecoder } from '@libp2p/utils'
import { generateKeyPair } from '@libp2p/crypto/keys'
import type { Libp2p, Stream } from '@libp2p/interface'
import { varintLength } from '../src/net/transport-patches.js'
import { createNode } from '../src/net/node.js'

// The local transport patches (src/net/transport-patches.ts): the decode loop stops on an empty
// buffer instead of throwing and catching a RangeError, and still yields exactly the frames sent,
// however the bytes are split. (The yamux window and the one-write noise messages are exercised by
// every network test: net-messenger's backpressure and 1,000-frame tests among them.)
describe('the length-prefixed decoder, patched', () => {
  const frames = [new Uint8Array([1]), new Uint8Array(300).fill(7), new Uint8Array([2, 3]), new Uint8Array(130).fill(9)]
  const varint = (n: number): number[] => n < 128 ? [n] : [(n & 0x7f) | 0x80, n >> 7]
  const wire = Uint8Array.from(frames.flatMap(f => [...varint(f.length), ...f]))

  test('yields the same frames for every split of the bytes, never asking for a length on an empty buffer', () => {
    for (let cut = 1; cut < wire.length; cut++) {
      const decoder = new LengthPrefixedDecoder()
      const inner = (decoder as unknown as { lengthDecoder: (b: { byteLength: number }) => number }).lengthDecoder
      let emptyAsks = 0
      ;(decoder as unknown as { lengthDecoder: (b: { byteLength: number }) => number }).lengthDecoder = (b) => { if (b.byteLength === 0) emptyAsks++; return inner(b) }
      const out = [...decoder.decode(wire.subarray(0, cut)), ...decoder.decode(wire.subarray(cut))].map(l => l.subarray())
      expect(out).toEqual(frames)
      expect(emptyAsks).toBe(0)
    }
  })

  test('still refuses a length over the limit', () => {
    const decoder = new LengthPrefixedDecoder({ maxDataLength: 100 })
    expect(() => [...decoder.decode(wire)]).toThrow(/Invalid message length/)
  })
})

describe('varintLength, the length decoder lpStream is given', () => {
  test('decodes what uint8-varint decodes, and throws one RangeError object while a length is incomplete', () => {
    // Unsigned LEB128, as uint8-varint writes it.
    const encode = (n: number): Uint8Array => {
      const out: number[] = []
      while (n >= 128) { out.push((n % 128) | 0x80); n = Math.floor(n / 128) }
      return Uint8Array.from([...out, n])
    }
    for (const n of [0, 1, 127, 128, 300, 16_383, 16_384, 131_072, 2 ** 31, Number.MAX_SAFE_INTEGER]) {
      const bytes = encode(n)
      expect(varintLength(bytes)).toBe(n)
      expect(varintLength({ subarray: () => bytes })).toBe(n)
      if (bytes.length > 1) {
        let first: unknown
        let second: unknown
        try { varintLength(bytes.subarray(0, bytes.length - 1)) } catch (err) { first = err }
        try { varintLength(bytes.subarray(0, 1)) } catch (err) { second = err }
        expect(first).toBeInstanceOf(RangeError)
        expect(second).toBe(first)
      }
    }
    expect(() => varintLength(new Uint8Array(9).fill(0x80))).toThrow(RangeError)
  })
})

// The same fixes drafted for upstream (docs/upstream/): each patch, in its repository's layout,
// still applies to the source the pinned version ships, so what is there to file matches what runs.
describe('the upstream drafts', () => {
  const drafts: Array<{ patch: string, files: Record<string, string> }> = [
    { patch: 'js-libp2p-noise.patch', files: { 'src/utils.ts': '@chainsafe/libp2p-noise/src/utils.ts' } },
    {
      patch: 'js-libp2p.patch',
      files: {
        'packages/utils/src/length-prefixed-decoder.ts': '@libp2p/utils/src/length-prefixed-decoder.ts',
        'packages/utils/src/stream-utils.ts': '@libp2p/utils/src/stream-utils.ts',
        'packages/stream-multiplexer-yamux/src/stream.ts': '@libp2p/yamux/src/stream.ts'
      }
    }
  ]
  for (const { patch, files } of drafts) {
    test(`docs/upstream/${patch} applies to the pinned versions' sources, touching only ${Object.keys(files).length} file(s)`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'fairdeal-upstream-'))
      try {
        for (const [upstream, shipped] of Object.entries(files)) {
          await mkdir(dirname(join(dir, upstream)), { recursive: true })
          await cp(join('node_modules', shipped), join(dir, upstream))
        }
        const patchFile = join(process.cwd(), 'docs', 'upstream', patch)
        const check = spawnSync('git', ['apply', '--check', '--verbose', patchFile], { cwd: dir, encoding: 'utf8' })
        expect(check.status, check.stderr).toBe(0)
        const touched = [...check.stderr.matchAll(/^Checking patch (.+)\.\.\.$/gm)].map(m => m[1]).sort()
        expect(touched).toEqual(Object.keys(files).sort())
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    })
  }
})

// Patch 5: what a node sends on one connection in one tick (the frames of many hands, pipelined)
// leaves as one noise message and one socket write, on a real connection over 127.0.0.1.
describe('a secured connection, patched: the frames of one tick in one write', () => {
  const PROTOCOL = '/fairdeal-test/tick/1'
  const nodes: Libp2p[] = []
  afterEach(async () => { await Promise.all(nodes.splice(0).map(async n => { await n.stop() })) })

  const concat = (list: Uint8Array[]): Uint8Array => Uint8Array.from(list.flatMap(c => [...c]))

  /** What the streams it is given receive, as one array, and when one of them ends. */
  function collector (): { take: (stream: Stream) => void, received: () => Uint8Array, ended: Promise<void> } {
    const chunks: Uint8Array[] = []
    let end!: () => void
    const ended = new Promise<void>(resolve => { end = resolve })
    const take = (stream: Stream): void => {
      stream.addEventListener('message', (evt) => { chunks.push(evt.data.subarray().slice()) })
      stream.addEventListener('remoteCloseWrite', () => { end() })
      stream.addEventListener('close', () => { end() })
    }
    return { take, received: () => concat(chunks), ended }
  }

  async function pair (): Promise<{ a: Libp2p, b: Libp2p, received: () => Uint8Array, ended: Promise<void> }> {
    const logger = pino({ level: 'silent' })
    const a = await createNode({ privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'], logger })
    const b = await createNode({ privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'], logger })
    nodes.push(a, b)
    const atB = collector()
    await b.handle(PROTOCOL, atB.take)
    return { a, b, received: atB.received, ended: atB.ended }
  }

  /** Counts the socket writes toward `port` while `run` runs (and the tick it ends in). */
  async function writesTo (port: number, run: () => Promise<void>): Promise<number> {
    const write = Socket.prototype.write
    let count = 0
    Socket.prototype.write = function (this: Socket, ...args: Parameters<Socket['write']>) {
      if (this.remotePort === port) count++
      return write.apply(this, args)
    } as Socket['write']
    try {
      await run()
      await new Promise(resolve => setImmediate(resolve))
    } finally {
      Socket.prototype.write = write
    }
    return count
  }

  const chunk = (i: number): Uint8Array => new Uint8Array(100 + i).fill(i)

  test('40 frames sent in one tick are one socket write, and arrive whole and in order', async () => {
    const { a, b, received } = await pair()
    const port = Number(b.getMultiaddrs()[0].toString().split('/')[4])
    const stream = await a.dialProtocol(b.getMultiaddrs()[0], PROTOCOL)
    await new Promise(resolve => setImmediate(resolve))
    const sent = Array.from({ length: 40 }, (_, i) => chunk(i))
    const writes = await writesTo(port, async () => {
      for (const c of sent) expect(stream.send(c)).toBe(true)
    })
    // Unpatched: one noise message and one socket write per yamux frame, 40.
    expect(writes).toBe(1)
    const want = concat(sent)
    const deadline = Date.now() + 10_000
    while (received().length < want.length && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 5))
    expect(received()).toEqual(want)
  })

  test('frames sent in the tick the connection is closed still arrive, before its end', async () => {
    const { a, b, received, ended } = await pair()
    const stream = await a.dialProtocol(b.getMultiaddrs()[0], PROTOCOL)
    const sent = Array.from({ length: 30 }, (_, i) => chunk(i))
    for (const c of sent) stream.send(c)
    const closing = stream.close()
    await Promise.all([closing, a.hangUp(b.peerId)])
    await ended
    expect(received()).toEqual(concat(sent))
  })

  test('frames a node sends in the tick it stops still arrive: its listener destroys the sockets it accepted', async () => {
    const { a, b } = await pair()
    const sent = Array.from({ length: 30 }, (_, i) => chunk(i))
    await a.handle('/fairdeal-test/tick-back/1', (stream: Stream) => {
      for (const c of sent) stream.send(c)
      void a.stop()
    })
    // b dials a, so a's socket to b is one a's listener accepted (and destroys on stop).
    const atB = collector()
    atB.take(await b.dialProtocol(a.getMultiaddrs()[0], '/fairdeal-test/tick-back/1'))
    await atB.ended
    expect(atB.received()).toEqual(concat(sent))
  })
})
