import { afterEach, describe, expect, it } from 'vitest'
import pino from 'pino'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import type { Libp2p, PrivateKey } from '@libp2p/interface'
import type { Multiaddr } from '@multiformats/multiaddr'
import { createNode } from '../src/net/node.js'
import { createMessenger, type Messenger } from '../src/net/messenger.js'
import { NetInputError, SendError } from '../src/net/errors.js'
import type { Membership } from '../src/net/gater.js'
import { sendRoute } from '../src/net/send-route.js'
import { keepConnected, tagMembers } from '../src/net/keep-connected.js'
import { MEMBER_TAG, MEMBER_TAG_VALUE } from '../src/net/limits.js'

type Transport = 'tcp' | 'ws'
interface LogLine { level: number, msg: string, [key: string]: unknown }

const PROTOCOL = '/fairdeal-test/frames/1'
const WARN = 40
const running: Array<{ stop: () => void | Promise<void> }> = []

afterEach(async () => {
  await Promise.all(running.splice(0).map(async n => { await n.stop() }))
})

/** A pino logger writing JSON lines into an array the test can inspect. */
function capturedLogger (): { logger: pino.Logger, lines: LogLine[] } {
  const lines: LogLine[] = []
  const logger = pino({ level: 'debug' }, { write: (line: string) => { lines.push(JSON.parse(line) as LogLine) } })
  return { logger, lines }
}

interface TestNode { node: Libp2p, id: string, lines: LogLine[], logger: pino.Logger, addr: Multiaddr }

async function startNode (transport: Transport, members: Membership = 'anyone', privateKey?: PrivateKey): Promise<TestNode> {
  const { logger, lines } = capturedLogger()
  const key = privateKey ?? await generateKeyPair('Ed25519')
  const listen = [transport === 'tcp' ? '/ip4/127.0.0.1/tcp/0' : '/ip4/127.0.0.1/tcp/0/ws']
  const node = await createNode({ privateKey: key, listen, members, logger })
  running.push(node)
  const addr = node.getMultiaddrs()[0]
  return { node, id: node.peerId.toString(), lines, logger, addr }
}

async function messengerOn (n: TestNode, maxFrameBytes = 65536, book?: Map<string, Multiaddr[]>): Promise<Messenger> {
  const m = await createMessenger(n.node, { protocol: PROTOCOL, maxFrameBytes, logger: n.logger, addressBook: book })
  running.push({ stop: async () => { await m.close() } })
  return m
}

async function waitFor (what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 5))
  }
}

function frameOf (text: string): Uint8Array { return new TextEncoder().encode(text) }
function textOf (frame: Uint8Array): string { return new TextDecoder().decode(frame) }

function protocolStreams (n: TestNode, peer: TestNode): number {
  return n.node.getConnections(peer.node.peerId).flatMap(c => c.streams).filter(s => s.protocol === PROTOCOL).length
}

function warnings (n: TestNode): LogLine[] { return n.lines.filter(l => l.level === WARN) }

describe.each<Transport>(['tcp', 'ws'])('messenger over %s on 127.0.0.1', (transport) => {
  it('two members exchange frames both ways on one connection of that transport', async () => {
    const keyA = await generateKeyPair('Ed25519')
    const keyB = await generateKeyPair('Ed25519')
    const idA = peerIdFromPrivateKey(keyA).toString()
    const idB = peerIdFromPrivateKey(keyB).toString()
    const a2 = await startNode(transport, new Set([idB]), keyA)
    const b2 = await startNode(transport, new Set([idA]), keyB)
    const ma = await messengerOn(a2, 65536, new Map([[b2.id, [b2.addr]]]))
    const mb = await messengerOn(b2)
    const atB: string[] = []
    const atA: string[] = []
    mb.onFrame(async (from, frame) => {
      expect(Object.getPrototypeOf(frame)).toBe(Uint8Array.prototype) // a plain copy, not a transport Buffer
      atB.push(`${from === a2.id ? 'A' : '?'}:${textOf(frame)}`)
      await mb.send(from, frameOf(`re ${textOf(frame)}`)) // back over the connection A opened
    })
    ma.onFrame((from, frame) => { atA.push(`${from === b2.id ? 'B' : '?'}:${textOf(frame)}`) })
    await ma.send(b2.id, frameOf('hello'))
    await ma.send(b2.id, frameOf('again'))
    await ma.send(b2.id, new Uint8Array(0))
    await waitFor('all replies', () => atA.length === 3)
    expect(atB).toEqual(['A:hello', 'A:again', 'A:'])
    expect(atA).toEqual(['B:re hello', 'B:re again', 'B:re '])
    const conns = a2.node.getConnections(b2.node.peerId)
    expect(conns).toHaveLength(1)
    expect(conns[0].remoteAddr.toString().includes('/ws')).toBe(transport === 'ws')
    expect(conns[0].encryption).toBe('/noise')
    expect(conns[0].multiplexer).toBe('/yamux/1.0.0')
  })

  it('keeps the order of 1,000 frames sent at once, on one reused stream', async () => {
    const a = await startNode(transport)
    const b = await startNode(transport)
    const ma = await messengerOn(a, 1024, new Map([[b.id, [b.addr]]]))
    const mb = await messengerOn(b, 1024)
    const got: number[] = []
    mb.onFrame(async (_from, frame) => {
      const n = new DataView(frame.buffer, frame.byteOffset).getUint32(0)
      if (n % 97 === 0) await new Promise(resolve => setTimeout(resolve, 1)) // an async handler now and then
      got.push(n)
    })
    const sent = Array.from({ length: 1000 }, (_, i) => i)
    await Promise.all(sent.map(async i => {
      const frame = new Uint8Array(4 + (i % 50))
      new DataView(frame.buffer).setUint32(0, i)
      await ma.send(b.id, frame)
    }))
    await waitFor('1000 frames', () => got.length === 1000)
    expect(got).toEqual(sent)
    expect(ma.stats()).toMatchObject({ streamsOpened: 1, framesSent: 1000 })
    expect(mb.stats()).toMatchObject({ streamsAccepted: 1, framesReceived: 1000, framesRejected: 0 })
    expect(protocolStreams(a, b)).toBe(1)
    expect(protocolStreams(b, a)).toBe(1)
  })

  it('rejects an oversized frame with a logged reason and keeps serving everyone, the sender too', async () => {
    const a = await startNode(transport)
    const b = await startNode(transport)
    const c = await startNode(transport)
    // The sender's own limit is higher, standing in for a peer that ignores the receiver's.
    const ma = await messengerOn(a, 1 << 20, new Map([[b.id, [b.addr]]]))
    const mb = await messengerOn(b, 1024)
    const mc = await messengerOn(c, 1024, new Map([[b.id, [b.addr]]]))
    const got: string[] = []
    mb.onFrame((from, frame) => { got.push(`${from === a.id ? 'A' : 'C'}:${textOf(frame)}`) })
    await ma.send(b.id, frameOf('before'))
    await mc.send(b.id, frameOf('c1'))
    await waitFor('first frames', () => got.length === 2)
    // 2,000 bytes: a 2-byte length prefix announcing too much; 200,000: a prefix longer than any
    // allowed length. Both are refused on the prefix alone.
    for (const [size, detail] of [[2000, /too long - 2000 > 1024/], [200_000, /length length too long/]] as const) {
      const before = warnings(b).length
      await ma.send(b.id, new Uint8Array(size).fill(7))
      await waitFor('the rejection warning', () => warnings(b).length > before)
      const warning = warnings(b)[before]
      expect(warning).toMatchObject({ msg: 'rejected frame; resetting the stream', peer: a.id, protocol: PROTOCOL })
      expect(String(warning.reason)).toMatch(/^frame over the 1024-byte limit/)
      expect(String(warning.reason)).toMatch(detail)
      // The reset reaches the sender, whose next send opens a new stream.
      await waitFor('the reset to reach the sender', () => protocolStreams(a, b) === 0)
      await ma.send(b.id, frameOf(`after ${size}`))
      await mc.send(b.id, frameOf(`c ${size}`))
    }
    await waitFor('frames after the rejections', () => got.length === 6)
    expect(mb.stats().framesRejected).toBe(2)
    expect(got.sort()).toEqual(['A:after 2000', 'A:after 200000', 'A:before', 'C:c 2000', 'C:c 200000', 'C:c1'])
    expect(ma.stats().streamsOpened).toBe(3)
    expect(mc.stats().streamsOpened).toBe(1)
  })

  it('lets a member connect and refuses a non-member in both directions, logging each refusal', async () => {
    const a = await startNode(transport)
    const c = await startNode(transport)
    const b = await startNode(transport, new Set([a.id]))
    const ma = await messengerOn(a, 1024, new Map([[b.id, [b.addr]]]))
    const mc = await messengerOn(c, 1024, new Map([[b.id, [b.addr]]]))
    const mb = await messengerOn(b, 1024, new Map([[c.id, [c.addr]]]))
    const got: string[] = []
    mb.onFrame((from) => { got.push(from) })

    await expect(mc.send(b.id, frameOf('let me in'))).rejects.toBeInstanceOf(SendError)
    await waitFor('the inbound refusal', () => warnings(b).length > 0)
    expect(warnings(b)[0]).toMatchObject({ peer: c.id, direction: 'inbound' })
    expect(b.node.getConnections(c.node.peerId)).toHaveLength(0)

    await expect(mb.send(c.id, frameOf('hello?'))).rejects.toThrow(/gater/)
    expect(warnings(b).some(l => l.peer === c.id && l.direction === 'outbound')).toBe(true)
    expect(c.node.getConnections()).toHaveLength(0)

    await ma.send(b.id, frameOf('member'))
    await waitFor('the member frame', () => got.length === 1)
    expect(got).toEqual([a.id])
    expect(warnings(b).filter(l => l.peer === a.id)).toEqual([])
  })
})

describe('messenger behaviour (tcp)', () => {
  it('keeps its stream when a send\'s signal fires later; opens a new stream and connection after the connection dies', async () => {
    const a = await startNode('tcp')
    const b = await startNode('tcp')
    const ma = await messengerOn(a, 1024, new Map([[b.id, [b.addr]]]))
    const mb = await messengerOn(b, 1024)
    const got: string[] = []
    mb.onFrame((_from, frame) => { got.push(textOf(frame)) })
    // A send's signal bounds its dial only: the stream it opened outlives it.
    const caller = new AbortController()
    await ma.send(b.id, frameOf('one'), { signal: caller.signal })
    caller.abort() // the caller gives up later on (a timeout of its own): nothing is left to abandon
    await new Promise(resolve => setTimeout(resolve, 50))
    await ma.send(b.id, frameOf('two'))
    await waitFor('frame two', () => got.length === 2)
    expect(ma.stats().streamsOpened).toBe(1)
    await b.node.hangUp(a.node.peerId)
    await waitFor('the hang-up to reach A', () => a.node.getConnections(b.node.peerId).length === 0)
    await ma.send(b.id, frameOf('three'))
    await waitFor('frame three', () => got.length === 3)
    expect(got).toEqual(['one', 'two', 'three'])
    expect(ma.stats().streamsOpened).toBe(2)
  })

  it('holds frames that arrive before the handler is set, and slows a sender that outruns the handler', async () => {
    const a = await startNode('tcp')
    const b = await startNode('tcp')
    const ma = await messengerOn(a, 65536, new Map([[b.id, [b.addr]]]))
    const mb = await messengerOn(b, 65536)
    // 48 frames of 64 KiB (3 MiB) with no handler yet: more than the pause threshold.
    const sends = Array.from({ length: 48 }, async (_, i) => { await ma.send(b.id, new Uint8Array(65536).fill(i)) })
    let settled = 0
    for (const s of sends) void s.then(() => { settled++ })
    await new Promise(resolve => setTimeout(resolve, 300))
    // Paused: yamux granted no more window, so some sends are still waiting on the peer.
    expect(settled).toBeLessThan(48)
    const got: number[] = []
    mb.onFrame(async (_from, frame) => {
      await new Promise(resolve => setTimeout(resolve, 1))
      got.push(frame[0])
      expect(frame.every(byte => byte === frame[0])).toBe(true)
    })
    await Promise.all(sends)
    await waitFor('every frame', () => got.length === 48)
    expect(got).toEqual(Array.from({ length: 48 }, (_, i) => i))
    expect(mb.stats()).toMatchObject({ streamsAccepted: 1, framesRejected: 0 })
  })

  it('a send whose signal fires while the peer is not reading fails alone: the frames before it, and it, still arrive in order', async () => {
    const a = await startNode('tcp')
    const b = await startNode('tcp')
    const ma = await messengerOn(a, 65536, new Map([[b.id, [b.addr]]]))
    const mb = await messengerOn(b, 65536)
    // No handler yet: the receiver pauses, yamux grants no more window, and a write ends up waiting.
    let failedAt = -1
    for (let i = 0; i < 200 && failedAt < 0; i++) {
      const err = await ma.send(b.id, new Uint8Array(65536).fill(i % 256), { signal: AbortSignal.timeout(300) }).catch((e: unknown) => e)
      if (err !== undefined) {
        expect(err).toBeInstanceOf(SendError)
        expect((err as Error).message).toMatch(/gave up waiting/)
        failedAt = i
      }
    }
    expect(failedAt).toBeGreaterThan(0)
    const got: number[] = []
    mb.onFrame((_from, frame) => { got.push(frame[0]) })
    await waitFor('every frame, the abandoned one last', () => got.length === failedAt + 1)
    expect(got).toEqual(Array.from({ length: failedAt + 1 }, (_, i) => i % 256))
    expect(ma.stats()).toMatchObject({ streamsOpened: 1 })
  })

  it('logs a throwing handler and goes on; a closed receiver makes sends fail', async () => {
    const a = await startNode('tcp')
    const b = await startNode('tcp')
    const ma = await messengerOn(a, 1024, new Map([[b.id, [b.addr]]]))
    const mb = await messengerOn(b, 1024)
    const got: string[] = []
    mb.onFrame((_from, frame) => {
      if (textOf(frame) === 'bad') throw new Error('schema says no')
      got.push(textOf(frame))
    })
    for (const text of ['one', 'bad', 'two']) await ma.send(b.id, frameOf(text))
    await waitFor('two good frames', () => got.length === 2)
    expect(got).toEqual(['one', 'two'])
    expect(warnings(b)).toMatchObject([{ msg: 'frame handler failed', peer: a.id, reason: 'schema says no' }])

    await mb.close()
    await waitFor('the reset to reach the sender', () => protocolStreams(a, b) === 0)
    const err = await ma.send(b.id, frameOf('anyone there?')).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SendError)
    expect((err as SendError).peer).toBe(b.id)
    expect((err as Error).message).toMatch(/protocol selection failed|not supported/i)
  })

  it('refuses bad input to send and createMessenger with clear errors', async () => {
    const a = await startNode('tcp')
    const b = await startNode('tcp')
    const ma = await messengerOn(a, 16)
    await expect(ma.send(b.id, new Uint8Array(17))).rejects.toThrow('frame of 17 bytes is over the 16-byte limit')
    await expect(ma.send('not-a-peer', new Uint8Array(1))).rejects.toBeInstanceOf(NetInputError)
    await expect(ma.send(a.id, new Uint8Array(1))).rejects.toThrow(/own peer id/)
    // Not connected and no address: refused at once, nothing dialled (the caller's fallback goes).
    const unrouted = await ma.send(b.id, new Uint8Array(1)).catch((e: unknown) => e)
    expect(unrouted).toBeInstanceOf(SendError)
    expect((unrouted as SendError).unrouted).toBe(true)
    expect((unrouted as Error).message).toMatch(/^not connected, and no address is known/)
    await expect(createMessenger(a.node, { protocol: 'no-slash', maxFrameBytes: 10, logger: a.logger })).rejects.toBeInstanceOf(NetInputError)
    await expect(createMessenger(a.node, { protocol: '/x/1', maxFrameBytes: 0, logger: a.logger })).rejects.toThrow(/maxFrameBytes/)
    const mb = await messengerOn(b, 16)
    expect(() => { mb.onFrame(() => {}); mb.onFrame(() => {}) }).toThrow(/already set/)
  })

  it('refuses an unsupported listen address and a port already in use', async () => {
    const { logger } = capturedLogger()
    const privateKey = await generateKeyPair('Ed25519')
    await expect(createNode({ privateKey, listen: ['/ip4/127.0.0.1/udp/1/quic-v1'], logger })).rejects.toThrow(/unsupported listen address/)
    const a = await startNode('tcp')
    const inUse = await createNode({ privateKey, listen: [a.addr.decapsulate('/p2p').toString()], logger }).catch((e: unknown) => e)
    expect(inUse).toBeInstanceOf(NetInputError)
    const [ip, port] = a.addr.getComponents().map(c => c.value)
    expect((inUse as Error).message).toBe(`cannot listen on /ip4/${ip}/tcp/${port}: address already in use ${ip}:${port} (EADDRINUSE)`)
  })
})

describe('connection choice: a peer that listens nowhere (behind NAT)', () => {
  const A = '12D3KooWAZ3xN3wcnYBrVuNTpMknVNKhTxd5yFc9CoSR7HGeCxFG'
  it('sendRoute: an open connection first (whoever opened it), else the known addresses, else nothing is dialled', () => {
    expect(sendRoute(A, true, ['/ip4/127.0.0.1/tcp/1'])).toEqual({ kind: 'connection' })
    expect(sendRoute(A, true, undefined)).toEqual({ kind: 'connection' })
    const dial = sendRoute(A, false, ['/ip4/127.0.0.1/tcp/1', `/ip4/127.0.0.1/tcp/2/ws/p2p/${A}`])
    expect(dial.kind === 'dial' && dial.addresses.map(a => a.toString())).toEqual([`/ip4/127.0.0.1/tcp/1/p2p/${A}`, `/ip4/127.0.0.1/tcp/2/ws/p2p/${A}`])
    for (const known of [undefined, []]) {
      expect(sendRoute(A, false, known)).toMatchObject({ kind: 'none', reason: expect.stringMatching(/^not connected, and no address is known/) })
    }
    // An address naming another peer is refused, not dialled.
    expect(() => sendRoute(A, false, ['/ip4/127.0.0.1/tcp/1/p2p/12D3KooWRBy97UB99e3J6hiPesre1MZeuNQvfan4gBziswrRJsNK'])).toThrow(/names peer/)
  })

  it('a node with no listen address keeps a connection to its dealer, is sent to on it, and dials again when it drops', async () => {
    const keyS = await generateKeyPair('Ed25519')
    const idS = peerIdFromPrivateKey(keyS).toString()
    const dealer = await startNode('tcp')
    const { logger, lines } = capturedLogger()
    const seatNode = await createNode({ privateKey: keyS, listen: [], members: new Set([dealer.id]), logger })
    running.push(seatNode)
    expect(seatNode.getMultiaddrs()).toEqual([])
    const seat: TestNode = { node: seatNode, id: idS, lines, logger, addr: dealer.addr }
    await tagMembers(dealer.node, [idS, dealer.id])
    expect((await dealer.node.peerStore.get(seatNode.peerId)).tags.get(MEMBER_TAG)?.value).toBe(MEMBER_TAG_VALUE)
    const md = await messengerOn(dealer) // no address book at all: the dealer cannot dial the seat
    const ms = await messengerOn(seat)
    const got: string[] = []
    ms.onFrame((_from, frame) => { got.push(textOf(frame)) })
    // Before the seat dials in, the dealer's send fails at once, without a dial.
    const early = await md.send(idS, frameOf('too early')).catch((e: unknown) => e)
    expect((early as SendError).unrouted).toBe(true)
    const kept = keepConnected(seatNode, { peer: dealer.id, addresses: [dealer.addr.toString()], logger, name: 'the dealer', minDelayMs: 50, maxDelayMs: 200 })
    running.push({ stop: () => { kept.close() } })
    await waitFor('the seat to dial in', () => dealer.node.getConnections(seatNode.peerId).length === 1)
    expect(dealer.node.getConnections(seatNode.peerId)[0].direction).toBe('inbound')
    await md.send(idS, frameOf('one'))
    await waitFor('frame one', () => got.length === 1)
    // The dealer drops the connection: the seat dials again, and the dealer sends on the new one.
    await dealer.node.hangUp(seatNode.peerId)
    await waitFor('the seat to dial in again', () => dealer.node.getConnections(seatNode.peerId).some(c => c.status === 'open'))
    await md.send(idS, frameOf('two'))
    await waitFor('frame two', () => got.length === 2)
    expect(got).toEqual(['one', 'two'])
    expect(kept.dials).toBe(2)
    // The dealer goes away: one warning saying what to check, then quiet retries with backoff.
    await dealer.node.stop()
    await waitFor('two failed dials', () => kept.dials >= 4)
    const warned = lines.filter(l => l.level === WARN && l.component === 'keep-connected')
    expect(warned).toHaveLength(1)
    expect(warned[0].msg).toMatch(/^cannot reach the dealer at \/ip4\/127\.0\.0\.1\/tcp\/\d+\/p2p\/12D3KooW\w+: .*ECONNREFUSED.* — nothing listens there: is its node running/)
    expect(kept.lastError).toMatch(/ECONNREFUSED/)
  })
})
