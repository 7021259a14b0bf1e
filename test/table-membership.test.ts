import { afterEach, describe, expect, it } from 'vitest'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromString } from '@libp2p/peer-id'
import type { Libp2p } from '@libp2p/interface'
import { createNode } from '../src/net/node.js'
import { createMessenger } from '../src/net/messenger.js'
import { dialAddress } from '../src/net/addresses.js'
import { SendError } from '../src/net/errors.js'
import { MAX_FRAME_BYTES, TABLE_PROTOCOL } from '../src/protocol/wire.js'
import { CapturedLogger, WARN } from './helpers/captured-logger.js'
import { logEntries, playHand, TestTable } from './helpers/table-nodes.js'

// The table's peer ids are its membership list: a peer that is not on it cannot connect to any
// table node, over either transport, and each node logs the refusal with the peer's id.

type Transport = 'tcp' | 'ws'
let table: TestTable | undefined
let outsider: Libp2p | undefined

afterEach(async () => {
  await outsider?.stop()
  outsider = undefined
  await table?.cleanup()
  table = undefined
})

describe.each<Transport>(['tcp', 'ws'])('membership over %s', (transport) => {
  it('a non-member cannot connect to a table node, the refusal is logged, and the table plays on', async () => {
    const t = table = await TestTable.prepare({ game: 'duo', scheme: 'atout-v1', seats: 2, transport })
    const nodes = await t.startAll()
    const stranger = new CapturedLogger()
    const o = outsider = await createNode({ privateKey: await generateKeyPair('Ed25519'), listen: [], members: 'anyone', logger: stranger.logger })
    const strangerId = o.peerId.toString()
    expect(t.peerIds).not.toContain(strangerId)

    for (const n of nodes) {
      const address = dialAddress(t.local.configs[n.index].listen[0], n.peerId)
      // Straight to the table protocol at the node's own address, with the node's right peer id.
      await expect(o.dialProtocol(address, TABLE_PROTOCOL)).rejects.toThrow()
      const line = await n.logs.waitFor(l => l.peer === strangerId, `${n.name}: the refusal of ${strangerId}`)
      expect(line).toMatchObject({ level: WARN, direction: 'inbound', msg: `refused inbound connection: ${strangerId} is not a member` })
      expect(String(line.remoteAddr)).toMatch(/^\/ip4\/127\.0\.0\.1\/tcp\/\d+/)
      expect(n.daemon.node.getConnections(peerIdFromString(strangerId))).toEqual([])
    }

    // Through a messenger, as a table node would send: refused the same way, nothing delivered.
    const messenger = await createMessenger(o, {
      protocol: TABLE_PROTOCOL, maxFrameBytes: MAX_FRAME_BYTES, logger: stranger.logger,
      addressBook: new Map([[nodes[0].peerId, t.local.configs[0].listen]])
    })
    const frame = new TextEncoder().encode('{"type":"pledge"}')
    await expect(messenger.send(nodes[0].peerId, frame)).rejects.toBeInstanceOf(SendError)
    await messenger.close()
    const refusals = nodes[0].logs.lines.filter(l => l.peer === strangerId)
    expect(refusals.length).toBeGreaterThanOrEqual(2)
    for (const n of nodes) {
      expect(n.daemon.rejections).toBe(0) // no frame of its ever reached the protocol
      expect(n.daemon.events.after(0)).toEqual([])
    }

    // The members are unaffected.
    await playHand(nodes[0], nodes, { stages: [{ stage: 'faceUp' }] })
    await t.stopAll()
    for (const n of nodes) expect((await logEntries(n.dataDir)).map(e => e.body.kind)).toEqual(['receipt'])
  })
})

describe('the table protocol\'s version', () => {
  it('a member speaking /fairdeal/table/1.0.0 (whose nodes refuse a VIEW or FINAL without its documents) cannot open a table stream: protocol selection fails', async () => {
    const t = table = await TestTable.prepare({ game: 'duo', scheme: 'atout-v1', seats: 2, transport: 'tcp' })
    const nodes = await t.startAll()
    expect(TABLE_PROTOCOL).toBe('/fairdeal/table/1.1.0')
    const address = dialAddress(t.local.configs[1].listen[0], nodes[1].peerId)
    await expect(nodes[0].daemon.node.dialProtocol(address, '/fairdeal/table/1.0.0')).rejects.toThrow(/Protocol selection failed - could not negotiate \/fairdeal\/table\/1\.0\.0/)
    // The same member, on the version both speak, plays on.
    await playHand(nodes[0], nodes, { stages: [{ stage: 'faceUp' }] })
    await t.stopAll()
    for (const n of nodes) expect((await logEntries(n.dataDir)).map(e => e.body.kind)).toEqual(['receipt'])
  })
})
