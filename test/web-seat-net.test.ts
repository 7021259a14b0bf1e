// The seat page's network (src/web/seat/net.ts) in Node against a node's messenger, over WebSockets
// on 127.0.0.1: frames the page's seat machine hands over together reach the dealer in the order it
// handed them, on one stream, also after the connection was lost and the page dialled again.
import { afterEach, describe, expect, it } from 'vitest'
import pino from 'pino'
import { generateKeyPair } from '@libp2p/crypto/keys'
import type { Libp2p } from '@libp2p/interface'
import { createNode } from '../src/net/node.js'
import { createMessenger } from '../src/net/messenger.js'
import { connectTable, startSeatNode, type SeatNet } from '../src/web/seat/net.js'
import { MAX_FRAME_BYTES, TABLE_PROTOCOL } from '../src/protocol/wire.js'
import { until } from './helpers/until.js'

const running: Array<() => Promise<void>> = []
afterEach(async () => { await Promise.all(running.splice(0).map(async stop => { await stop() })) })

const frameOf = (text: string): Uint8Array => new TextEncoder().encode(text)
const textOf = (frame: Uint8Array): string => new TextDecoder().decode(frame)

/** A dealer's node and messenger, and a page connected to it: what the dealer received, its inbound streams, the page's connection states. */
interface DealerAndPage { dealer: Libp2p, received: string[], streams: () => number, page: SeatNet, pageNode: Libp2p, states: boolean[] }

async function dealerAndPage (): Promise<DealerAndPage> {
  const logger = pino({ level: 'silent' })
  const dealer = await createNode({ privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0/ws'], logger })
  running.push(async () => { await dealer.stop() })
  const messenger = await createMessenger(dealer, { protocol: TABLE_PROTOCOL, maxFrameBytes: MAX_FRAME_BYTES, logger })
  const received: string[] = []
  messenger.onFrame((_from, frame) => { received.push(textOf(frame)) })
  const pageNode = await startSeatNode(crypto.getRandomValues(new Uint8Array(32)))
  const address = dealer.getMultiaddrs().map(String).find(a => a.includes('/ws/')) as string
  const states: boolean[] = []
  const page = await connectTable(pageNode, dealer.peerId.toString(), [address], () => {}, up => { states.push(up) })
  running.push(async () => { await page.stop() })
  await until(async () => page.connected(), 'the page connected to the dealer', 10_000, 10)
  return { dealer, received, streams: () => messenger.stats().streamsAccepted, page, pageNode, states }
}

describe('the seat page\'s sends to the dealer', () => {
  it('frames sent together, before any stream is open, arrive in the order sent on one stream', async () => {
    const { received, streams, page } = await dealerAndPage()
    const sent = Array.from({ length: 12 }, (_, i) => `frame ${i}`)
    await Promise.all(sent.map(async text => { await page.send(frameOf(text)) }))
    await until(async () => received.length === sent.length, 'every frame at the dealer', 10_000, 10)
    expect(received).toEqual(sent)
    expect(streams()).toBe(1)
  })

  it('after the connection is lost, the frames sent together go in order on one new stream', async () => {
    const { dealer, received, streams, page, pageNode, states } = await dealerAndPage()
    await page.send(frameOf('before'))
    await until(async () => received.length === 1, 'the first frame at the dealer', 10_000, 10)
    const seen = states.length
    await dealer.hangUp(pageNode.peerId)
    // The page saw the connection go, then dialled again (frames written meanwhile are the protocol's loss to recover).
    await until(async () => states.slice(seen).includes(false), 'the page saw the connection close', 10_000, 10)
    await until(async () => page.connected(), 'the page connected again', 10_000, 10)
    const sent = Array.from({ length: 12 }, (_, i) => `after ${i}`)
    await Promise.all(sent.map(async text => { await page.send(frameOf(text)) }))
    await until(async () => received.length === 1 + sent.length, 'every frame at the dealer', 10_000, 10)
    expect(received).toEqual(['before', ...sent])
    expect(streams()).toBe(2)
  })
})
