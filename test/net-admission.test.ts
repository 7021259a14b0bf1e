import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { generateKeyPair } from '@libp2p/crypto/keys'
import type { Libp2p } from '@libp2p/interface'
import { multiaddr } from '@multiformats/multiaddr'
import { createNode } from '../src/net/node.js'
import { MAX_CONNECTIONS, MAX_CONNECTIONS_PER_MEMBER, MAX_PENDING_UPGRADES, MAX_STRANGER_CONNECTIONS } from '../src/net/limits.js'
import { CapturedLogger } from './helpers/captured-logger.js'

// Issue 9, item 2: strangers must not starve members of connection slots. Before noise a member's
// socket and a stranger's look alike, so pending upgrades drop the OLDEST socket for a newcomer
// (a socket held open without a handshake goes first); after noise strangers are refused, or, with
// a public log, held to MAX_STRANGER_CONNECTIONS so members keep the rest. Real libp2p on loopback.

const nodes: Libp2p[] = []
const sockets: Array<Socket | WebSocket> = []

afterEach(async () => {
  for (const s of sockets.splice(0)) s instanceof WebSocket ? s.terminate() : s.destroy()
  for (const n of nodes.splice(0).reverse()) await n.stop()
})

async function node (listen: string[], members: Set<string> | 'anyone', strangers?: 'admit', logs = new CapturedLogger()): Promise<Libp2p> {
  const n = await createNode({ privateKey: await generateKeyPair('Ed25519'), listen, members, strangers, logger: logs.logger })
  nodes.push(n)
  return n
}

/** A member (the dealer) and a seat that admits only the two of them (or also strangers). */
async function pair (transport: 'tcp' | 'ws', strangers?: 'admit'): Promise<{ dealer: Libp2p, seat: Libp2p, address: string, port: number }> {
  const dealerKey = await generateKeyPair('Ed25519')
  const seatKey = await generateKeyPair('Ed25519')
  const { peerIdFromPrivateKey } = await import('@libp2p/peer-id')
  const members = new Set([peerIdFromPrivateKey(dealerKey).toString(), peerIdFromPrivateKey(seatKey).toString()])
  const logger = new CapturedLogger().logger
  const listen = transport === 'tcp' ? '/ip4/127.0.0.1/tcp/0' : '/ip4/127.0.0.1/tcp/0/ws'
  const seat = await createNode({ privateKey: seatKey, listen: [listen], members, strangers, logger })
  nodes.push(seat)
  const dealer = await createNode({ privateKey: dealerKey, listen: [], members, logger })
  nodes.push(dealer)
  const address = seat.getMultiaddrs()[0].toString()
  return { dealer, seat, address, port: Number(address.split('/')[4]) }
}

/** `count` raw sockets to `port` that never say a word (no multistream, no noise); resolves once all are open. */
async function silentSockets (port: number, count: number): Promise<Array<{ closed: boolean }>> {
  return await Promise.all(Array.from({ length: count }, async () => await new Promise<{ closed: boolean }>((resolve, reject) => {
    const state = { closed: false }
    const s = connect(port, '127.0.0.1', () => { resolve(state) })
    s.on('error', () => {})
    s.on('close', () => { state.closed = true; resolve(state) })
    s.setTimeout(0)
    sockets.push(s)
    s.once('error', reject)
  })))
}

/** `count` WebSocket connections that complete the HTTP upgrade and then never start noise. */
async function silentWebSockets (url: string, count: number): Promise<Array<{ closed: boolean }>> {
  return await Promise.all(Array.from({ length: count }, async () => await new Promise<{ closed: boolean }>((resolve) => {
    const state = { closed: false }
    const ws = new WebSocket(url)
    sockets.push(ws)
    ws.on('open', () => { resolve(state) })
    ws.on('error', () => {})
    ws.on('close', () => { state.closed = true; resolve(state) })
  })))
}

const open = (states: Array<{ closed: boolean }>): number => states.filter(s => !s.closed).length

describe('members are never starved of connection slots by strangers', () => {
  it('over tcp: 200 stranger sockets that never start noise; the dealer still connects at once, the oldest silent ones are dropped', async () => {
    const { dealer, seat, address, port } = await pair('tcp')
    const held = await silentSockets(port, 200)
    // The seat keeps at most MAX_PENDING_UPGRADES of them; the rest were dropped for newer ones.
    await expect.poll(() => open(held), { timeout: 5_000 }).toBeLessThanOrEqual(MAX_PENDING_UPGRADES)
    const connection = await dealer.dial(multiaddr(address), { signal: AbortSignal.timeout(4_000) })
    expect(connection.remotePeer.equals(seat.peerId)).toBe(true)
    await expect.poll(() => seat.getConnections(dealer.peerId).length, { timeout: 4_000 }).toBe(1)
  })

  it('over ws: 60 WebSocket connections that never start noise; the dealer still connects', async () => {
    const { dealer, seat, address, port } = await pair('ws')
    const held = await silentWebSockets(`ws://127.0.0.1:${port}`, 60)
    await expect.poll(() => open(held), { timeout: 5_000 }).toBeLessThanOrEqual(MAX_PENDING_UPGRADES)
    const connection = await dealer.dial(multiaddr(address), { signal: AbortSignal.timeout(4_000) })
    expect(connection.remotePeer.equals(seat.peerId)).toBe(true)
  })

  it('with a public log: 64 strangers hold real connections; at most MAX_STRANGER_CONNECTIONS get in and the dealer still connects', async () => {
    const { dealer, seat, address } = await pair('tcp', 'admit')
    const strangers = await Promise.all(Array.from({ length: 64 }, async () => await node([], 'anyone')))
    // In waves, as connections are held open one after another.
    const results: Array<PromiseSettledResult<unknown>> = []
    for (let i = 0; i < strangers.length; i += 16) {
      results.push(...await Promise.allSettled(strangers.slice(i, i + 16).map(async s => await s.dial(multiaddr(address), { signal: AbortSignal.timeout(8_000) }))))
    }
    const admitted = results.filter(r => r.status === 'fulfilled').length
    expect(admitted).toBeGreaterThan(0)
    const inbound = (): number => seat.getConnections().filter(c => c.status === 'open').length
    await expect.poll(inbound, { timeout: 5_000 }).toBeLessThanOrEqual(MAX_STRANGER_CONNECTIONS)
    const connection = await dealer.dial(multiaddr(address), { signal: AbortSignal.timeout(4_000) })
    expect(connection.remotePeer.equals(seat.peerId)).toBe(true)
    await expect.poll(() => seat.getConnections(dealer.peerId).length, { timeout: 4_000 }).toBe(1)
  })
})

// Issue 18: on a node serving two tables, a member of table A that opens the node's whole
// connection limit must not lock out a seat of table B that dials in (behind NAT, restarting).
describe('connection room per member', () => {
  it('a member of one table holding connections cannot keep a seat of another table out of a shared dealer', async () => {
    const { peerIdFromPrivateKey } = await import('@libp2p/peer-id')
    const [dealerKey, aKey, bKey] = await Promise.all([generateKeyPair('Ed25519'), generateKeyPair('Ed25519'), generateKeyPair('Ed25519')])
    const ids = [dealerKey, aKey, bKey].map(k => peerIdFromPrivateKey(k).toString())
    const members = new Set(ids) // the union of table A (dealer, a) and table B (dealer, b)
    const logger = new CapturedLogger().logger
    const dealer = await createNode({ privateKey: dealerKey, listen: ['/ip4/127.0.0.1/tcp/0'], members, logger })
    nodes.push(dealer)
    const a = await createNode({ privateKey: aKey, listen: [], members, logger })
    nodes.push(a)
    const b = await createNode({ privateKey: bKey, listen: [], members, logger })
    nodes.push(b)
    const address = multiaddr(dealer.getMultiaddrs()[0].toString())
    // A opens more connections than the node's whole limit (each dial forced to be a new one).
    // (one after the other: libp2p joins dials to one peer that run at once)
    for (let i = 0; i < MAX_CONNECTIONS + 4; i++) await a.dial(address, { force: true }).catch(() => {})
    const held = (): number => dealer.getConnections(a.peerId).filter(c => c.status === 'open').length
    await expect.poll(held).toBeLessThanOrEqual(MAX_CONNECTIONS_PER_MEMBER)
    const connection = await b.dial(address)
    expect(connection.status).toBe('open')
    await expect.poll(() => dealer.getConnections(b.peerId).length).toBeGreaterThan(0)
  })
})
