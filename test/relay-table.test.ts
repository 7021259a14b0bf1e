// A dealer behind NAT (issue 20): nobody can dial the dealer's node; it holds a reservation on a
// `fairdeal relay`, and every seat reaches it through the relay. Real libp2p on 127.0.0.1.
import { afterEach, describe, expect, it } from 'vitest'
import { until } from './helpers/until.js'
import pino from 'pino'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { multiaddr } from '@multiformats/multiaddr'
import type { Libp2p } from '@libp2p/interface'
import { createNode } from '../src/net/node.js'
import { circuitAddress, createRelay, parseRelayAddress, relayGater, reservationsOf } from '../src/net/relay.js'
import { verifyDataDir } from '../src/daemon/verify-data.js'
import { verifyLogPayload } from '../src/core/receipt.js'
import type { NodeConfig } from '../src/daemon/config.js'
import { playHand, TestTable } from './helpers/table-nodes.js'
import { CapturedLogger } from './helpers/captured-logger.js'
import { cliInProcess } from './helpers/cli-in-process.js'
import { NodeProcess } from './helpers/node-process.js'
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'fairdeal.js')

const quiet = pino({ level: 'silent' })
const started: Libp2p[] = []
let table: TestTable | undefined
afterEach(async () => {
  await table?.cleanup()
  table = undefined
  for (const n of started.splice(0)) await n.stop()
})

async function relayFor (members: Set<string>): Promise<{ relay: Libp2p, address: string }> {
  const key = await generateKeyPair('Ed25519')
  const relay = await createRelay({ privateKey: key, listen: ['/ip4/127.0.0.1/tcp/0'], members, logger: quiet })
  started.push(relay)
  return { relay, address: relay.getMultiaddrs()[0].toString() }
}


describe('fairdeal relay', () => {
  it('carries a transfer past relay v2\'s default 128 KiB cut, on a connection with no duration limit', async () => {
    const [a, b] = [await generateKeyPair('Ed25519'), await generateKeyPair('Ed25519')]
    const { peerIdFromPrivateKey } = await import('@libp2p/peer-id')
    const [idA, idB] = [peerIdFromPrivateKey(a).toString(), peerIdFromPrivateKey(b).toString()]
    const { relay, address } = await relayFor(new Set([idA, idB]))
    const dealer = await createNode({ privateKey: a, listen: [], members: new Set([idB]), logger: quiet, relays: [{ address, reserve: true }] })
    started.push(dealer)
    // The daemon keeps this connection (keepConnected); the reservation rides on it.
    await dealer.dial(multiaddr(address))
    await until(() => reservationsOf(relay) === 1, 'the reservation')
    let received = 0
    let finished: () => void = () => {}
    const done = new Promise<void>(resolve => { finished = resolve })
    await dealer.handle('/fairdeal/test-transfer/1', async (stream) => {
      for await (const chunk of stream) received += chunk.byteLength
      finished()
    })
    const seat = await createNode({ privateKey: b, listen: [], members: new Set([idA]), logger: quiet, relays: [{ address, reserve: false }] })
    started.push(seat)
    const stream = await seat.dialProtocol(multiaddr(circuitAddress(address, idA)), '/fairdeal/test-transfer/1')
    const chunk = new Uint8Array(16 * 1024).fill(7)
    for (let i = 0; i < 16; i++) stream.send(chunk)
    await stream.close()
    await done
    expect(received).toBe(256 * 1024)
    const relayed = seat.getConnections(dealer.peerId)
    expect(relayed.map(c => c.remoteAddr.toString())).toEqual([circuitAddress(address, idA)])
    // Relay v2's defaults would make this a limited connection (2 minutes, 128 KiB): none is set.
    expect(relayed[0].limits).toBeUndefined()
  })

  it('refuses a stranger: no reservation, no relayed connection', async () => {
    const member = await generateKeyPair('Ed25519')
    const { peerIdFromPrivateKey } = await import('@libp2p/peer-id')
    const { relay, address } = await relayFor(new Set([peerIdFromPrivateKey(member).toString()]))
    const stranger = await createNode({ privateKey: await generateKeyPair('Ed25519'), listen: [], logger: quiet, relays: [{ address, reserve: true }] })
    started.push(stranger)
    // The relay refuses it right after the handshake (its gater): the connection does not stay.
    await stranger.dial(multiaddr(address)).then(() => {}, () => {})
    await until(() => stranger.getConnections().length === 0 && relay.getConnections().length === 0, 'the refused connection closed')
    expect(reservationsOf(relay)).toBe(0)
    expect(stranger.getMultiaddrs().filter(a => a.toString().includes('/p2p-circuit'))).toEqual([])
  })

  it('a table whose dealer listens nowhere plays a hand through the relay; every log verifies', async () => {
    const t = table = await TestTable.prepare({ game: 'duo', scheme: 'atout-v1', seats: 2, seatsListenNowhere: true, timeouts: { contributeMs: 5_000, ackMs: 10_000, revealMs: 60_000 } })
    const { address } = await relayFor(new Set(t.peerIds))
    expect(parseRelayAddress(address).peerId).toMatch(/^12D3KooW/)
    // Nobody listens anywhere and nobody has an address: the relay is the one way to the dealer.
    t.local.configs.forEach((c, i) => { t.local.configs[i] = relayed(c, address) })
    const dealer = await t.start(0, new CapturedLogger('debug'))
    const seat = await t.start(1)
    await until(() => (dealer.daemon.status().peers as Array<{ connected: boolean }>).some(p => p.connected), 'the seat connected through the relay')
    // hand status says which path each peer uses.
    expect(dealer.daemon.status().peers).toEqual([expect.objectContaining({ peer: t.peerIds[1], connected: true, path: 'relayed' })])
    const hand = await playHand(dealer, [dealer, seat])
    expect(hand).toBe(1)
    for (const i of [0, 1]) {
      const dir = t.dataDir(i)
      await t.stop(i)
      const verdict = await verifyDataDir(dir, verifyLogPayload)
      expect(verdict).toMatchObject({ failed: 0, incomplete: 0, passed: 1 })
    }
  })
})

// Seats behind NAT on a relayed table (issue 20): every member holds a reservation on the relay, so
// the seats reach each other through it and exchange their VIEWs and NONCEs seat to seat (a NONCE
// that reaches another seat is what refutes a dealer's false missing-nonce, docs/protocol.md §6,
// §14), not through the dealer.
describe('seats that reach each other only through the relay', () => {
  it('send their VIEWs and NONCEs to each other through it: no document goes by the dealer (RELAY), and the hand verifies', async () => {
    const t = table = await TestTable.prepare({ game: 'coinche', scheme: 'atout-v1', seats: 4, robots: [3], seatsListenNowhere: true, timeouts: { contributeMs: 5_000, ackMs: 10_000, revealMs: 60_000 } })
    const { address } = await relayFor(new Set(t.peerIds))
    t.local.configs.forEach((c, i) => { t.local.configs[i] = relayed(c, address) })
    const logs = [new CapturedLogger('debug'), new CapturedLogger('debug'), new CapturedLogger('debug')]
    const nodes = [await t.start(0, logs[0]), await t.start(1, logs[1]), await t.start(2, logs[2])]
    await until(() => (nodes[0].daemon.status().peers as Array<{ connected: boolean }>).every(p => p.connected), 'the seats connected through the relay')
    const hand = await playHand(nodes[0], nodes)
    // Seat 1 and seat 2 reached each other through the relay.
    for (const [a, b] of [[1, 2], [2, 1]]) {
      expect(nodes[a].daemon.status().peers, `seat ${a}`).toContainEqual(expect.objectContaining({ peer: t.peerIds[b], connected: true, path: 'relayed' }))
    }
    // DCUtR is there (the upgrade of a relayed connection to a direct one), and leaves these alone:
    // loopback addresses are private, which it never tries.
    for (const n of nodes) expect(n.daemon.node.getProtocols()).toContain('/libp2p/dcutr')
    // No seat fell back to sending a document through the dealer.
    for (const [i, l] of logs.entries()) expect(l.lines.filter(x => x.msg === 'send failed' && (x as { relay?: boolean }).relay === true), `node ${i}`).toEqual([])
    expect(hand).toBe(1)
    for (const i of [0, 1, 2]) {
      const dir = t.dataDir(i)
      await t.stop(i)
      expect(await verifyDataDir(dir, verifyLogPayload)).toMatchObject({ failed: 0, incomplete: 0, passed: 1 })
    }
  })
})

/** The config with no listen address, no peer addresses, and the table's relay. */
function relayed (c: NodeConfig, relay: string): NodeConfig {
  const tables = c.tables.map(t => ({ ...t, peers: {}, relay }))
  return { ...c, ...tables[0], tables, listen: [] }
}

// A dealer that starts its relay before its seats have joined by links: the relay reads the
// dealer's node.json with its open seats (null) and serves the dealer; the seats are let in once
// the node writes the final table (the file is re-read when it changes).
describe('fairdeal relay --config on a table still taking its seats', () => {
  it('starts, serving the dealer alone, instead of refusing the config', async () => {
    const root = await mkdtemp(join(tmpdir(), 'fairdeal-relay-open-'))
    try {
      // Nothing is started on the table's ports: only its config is written.
      const made = await cliInProcess('table', 'new', '--game', 'duo', '--seats', '2', '--data', join(root, 'dealer'), '--listen', '/ip4/127.0.0.1/tcp/0', '--web-port', '18071')
      expect(made.code, made.stderr).toBe(0)
      const config = join(root, 'dealer', 'node.json')
      expect((JSON.parse(await readFile(config, 'utf8')) as { table: { seats: unknown[] } }).table.seats).toContain(null)
      const child = spawn(process.execPath, [BIN, 'relay', '--data', join(root, 'relay'), '--listen', '/ip4/127.0.0.1/tcp/0', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FAIRDEAL_LOG_LEVEL: 'info' } })
      let out = ''
      let err = ''
      child.stderr.setEncoding('utf8').on('data', (c: string) => { err += c })
      child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c })
      const exited = new Promise<number | null>(resolve => child.once('exit', resolve))
      try {
        await Promise.race([until(() => /relay ready for 1 member/.test(out + err), 'the relay ready'), exited.then(code => { throw new Error(`relay exited (${String(code)}): ${err}`) })])
        expect(out).toMatch(/^relay: \/ip4\/127\.0\.0\.1\/tcp\/\d+\/p2p\/12D3KooW\w+$/m)
      } finally {
        child.kill('SIGTERM')
        await exited
      }
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })
})

// The links of a dealer nobody can dial (issue 20): `table new --listen none --relay R` names the
// dealer's address through the relay in each link; `fairdeal relay --config` reads the dealer's
// node.json with its open seat and lets the joining player through to that dealer alone; the player
// joins by `table join LINK`, both nodes then play a hand through the relay, and both logs verify.
describe('joining by link a table whose dealer is reached only through the relay', () => {
  it('the rule: a joining player connects only while a table joins, is relayed to a joining dealer alone, and never holds a reservation', async () => {
    const { peerIdFromPrivateKey } = await import('@libp2p/peer-id')
    const [dealer, member, stranger] = await Promise.all([0, 1, 2].map(async () => peerIdFromPrivateKey(await generateKeyPair('Ed25519'))))
    const joining = new Set<string>()
    const gater = relayGater({ members: new Set([dealer.toString(), member.toString()]), joining }, quiet, () => [])
    const maConn = { remoteAddr: multiaddr('/ip4/127.0.0.1/tcp/1') } as never
    expect(await gater.denyInboundEncryptedConnection?.(stranger, maConn)).toBe(true)
    joining.add(dealer.toString())
    expect(await gater.denyInboundEncryptedConnection?.(stranger, maConn)).toBe(false)
    expect(await gater.denyInboundRelayReservation?.(stranger)).toBe(true)
    expect(await gater.denyInboundRelayReservation?.(dealer)).toBe(false)
    expect(await gater.denyOutboundRelayedConnection?.(stranger, dealer)).toBe(false)
    expect(await gater.denyOutboundRelayedConnection?.(stranger, member)).toBe(true)
    expect(await gater.denyOutboundRelayedConnection?.(member, dealer)).toBe(false)
    expect(await gater.denyOutboundRelayedConnection?.(member, stranger)).toBe(true)
    // Every seat taken: strangers are refused again.
    joining.delete(dealer.toString())
    expect(await gater.denyInboundEncryptedConnection?.(stranger, maConn)).toBe(true)
    expect(await gater.denyOutboundRelayedConnection?.(stranger, dealer)).toBe(true)
  })

  it('a seat joins by its link through the relay, then the table plays a hand', async () => {
    const root = await mkdtemp(join(tmpdir(), 'fairdeal-relay-join-'))
    const children: NodeProcess[] = []
    let relayChild: ReturnType<typeof spawn> | undefined
    try {
      const port = 18081
      const relayDir = join(root, 'relay')
      const id = await cliInProcess('init', '--data', relayDir, '--json')
      const relayAddress = `/ip4/127.0.0.1/tcp/${port}/p2p/${(JSON.parse(id.stdout) as { peerId: string }).peerId}`
      const dealerDir = join(root, 'dealer')
      const made = await cliInProcess('table', 'new', '--game', 'duo', '--seats', '2', '--scheme', 'atout-v1', '--data', dealerDir, '--listen', 'none', '--relay', relayAddress, '--web-port', '18082')
      expect(made.code, made.stderr).toBe(0)
      const link = /^seat 1: (\S+)$/m.exec(made.stdout)?.[1] as string
      expect(link).toBeDefined()
      const config = join(dealerDir, 'node.json')
      relayChild = spawn(process.execPath, [BIN, 'relay', '--data', relayDir, '--listen', `/ip4/127.0.0.1/tcp/${port}`, '--config', config], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FAIRDEAL_LOG_LEVEL: 'info' } })
      let relayOut = ''
      relayChild.stdout?.setEncoding('utf8').on('data', (c: string) => { relayOut += c })
      relayChild.stderr?.setEncoding('utf8').on('data', (c: string) => { relayOut += c })
      await until(() => /relay ready/.test(relayOut), 'the relay ready')
      // The dealer's node: it listens nowhere, holds a reservation on the relay, and takes the seat first.
      const dealerStarting = NodeProcess.start(config, dealerDir, 60_000)
      // Stopped in the end whatever happens before it is awaited.
      dealerStarting.then(d => { if (!children.includes(d)) children.push(d) }, () => {})
      const bobDir = join(root, 'bob')
      // The dealer's reservation may not be made yet: the link is tried again until it answers.
      let joined = await cliInProcess('table', 'join', link, '--data', bobDir)
      for (let i = 0; i < 40 && joined.code !== 0 && /reach|dial|answer|connect/i.test(joined.stderr); i++) {
        await new Promise(resolve => setTimeout(resolve, 250))
        joined = await cliInProcess('table', 'join', link, '--data', bobDir)
      }
      expect(joined.code, joined.stderr + joined.stdout).toBe(0)
      const dealer = await dealerStarting
      if (!children.includes(dealer)) children.push(dealer)
      const bob = await NodeProcess.start(join(bobDir, 'node.json'), bobDir)
      children.push(bob)
      for (let i = 0; ; i++) {
        const peers = ((await dealer.client.status()) as { peers?: Array<{ connected: boolean, path?: string }> }).peers ?? []
        if (peers.length > 0 && peers.every(p => p.connected && p.path === 'relayed')) break
        if (i > 300) throw new Error(`the seat never connected through the relay: ${JSON.stringify(peers)}`)
        await new Promise(resolve => setTimeout(resolve, 100))
      }
      const hand = await dealer.client.deal()
      await bob.until(e => e.hand === hand && e.event.type === 'cards', 'bob\'s cards', 20_000)
      await dealer.client.end(hand)
      await bob.until(e => e.hand === hand && e.event.type === 'receipt', 'bob\'s receipt', 20_000)
      for (const [node, dir] of [[dealer, dealerDir], [bob, bobDir]] as const) {
        await node.stop()
        expect(await verifyDataDir(dir, verifyLogPayload)).toMatchObject({ failed: 0, incomplete: 0, passed: 1 })
      }
    } finally {
      for (const c of children) await c.stop()
      relayChild?.kill('SIGTERM')
      if (relayChild !== undefined && relayChild.exitCode === null) await new Promise(resolve => relayChild?.once('exit', resolve))
      await rm(root, { recursive: true, force: true })
    }
  }, 120_000)
})
