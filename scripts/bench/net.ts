// Messenger latency and throughput between two nodes on loopback, over TCP and over WebSockets,
// each set against a plain node:net socket doing the same work in the same run: the ratio is what
// libp2p (noise, yamux, multistream, our framing) costs on this machine.
import { createServer, connect, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import pino from 'pino'
import { generateKeyPair } from '@libp2p/crypto/keys'
import type { Libp2p } from '@libp2p/interface'
import { createNode } from '../../src/net/node.js'
import { createMessenger, type Messenger } from '../../src/net/messenger.js'

const FRAME_BYTES = 64
const ROUND_TRIPS = 2000
const WARMUP = 200
const ONE_WAY_FRAMES = 20_000

interface Figures { p50: number, p99: number, framesPerSecond: number }

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

async function timeRoundTrips (roundTrip: () => Promise<void>): Promise<{ p50: number, p99: number }> {
  for (let i = 0; i < WARMUP; i++) await roundTrip()
  const samples: number[] = []
  for (let i = 0; i < ROUND_TRIPS; i++) {
    const t0 = performance.now()
    await roundTrip()
    samples.push(performance.now() - t0)
  }
  samples.sort((a, b) => a - b)
  return { p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) }
}

/** The bound: an echo server and a length-prefixed stream on a bare loopback TCP socket. */
async function rawTcp (): Promise<Figures> {
  let sink: ((chunk: Buffer) => void) | undefined
  const server = createServer(socket => {
    socket.setNoDelay(true)
    socket.on('data', chunk => { if (sink !== undefined) sink(chunk); else socket.write(chunk) })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const client: Socket = connect(port, '127.0.0.1')
  client.setNoDelay(true)
  await new Promise<void>(resolve => client.once('connect', resolve))

  const frame = Buffer.alloc(FRAME_BYTES, 1)
  let pending: (() => void) | undefined
  let received = 0
  client.on('data', chunk => {
    received += chunk.length
    if (received >= FRAME_BYTES && pending !== undefined) { received -= FRAME_BYTES; const p = pending; pending = undefined; p() }
  })
  const latency = await timeRoundTrips(async () => {
    await new Promise<void>(resolve => { pending = resolve; client.write(frame) })
  })

  // One way: length-prefixed frames parsed on the server, like the messenger's receiver does.
  const framed = Buffer.concat([Buffer.of(FRAME_BYTES), frame])
  let count = 0
  let buffered = Buffer.alloc(0)
  const done = new Promise<void>(resolve => {
    sink = chunk => {
      buffered = Buffer.concat([buffered, chunk])
      while (buffered.length > 0 && buffered.length >= 1 + buffered[0]) {
        buffered = buffered.subarray(1 + buffered[0])
        if (++count === ONE_WAY_FRAMES) resolve()
      }
    }
  })
  const t0 = performance.now()
  for (let i = 0; i < ONE_WAY_FRAMES; i++) {
    if (!client.write(framed)) await new Promise(resolve => client.once('drain', resolve))
  }
  await done
  const framesPerSecond = ONE_WAY_FRAMES / ((performance.now() - t0) / 1000)
  client.destroy()
  await new Promise(resolve => server.close(resolve))
  return { ...latency, framesPerSecond }
}

async function messenger (transport: 'tcp' | 'ws'): Promise<Figures> {
  const logger = pino({ level: 'warn' }, pino.destination(2))
  const listen = [transport === 'tcp' ? '/ip4/127.0.0.1/tcp/0' : '/ip4/127.0.0.1/tcp/0/ws']
  const nodes: Libp2p[] = []
  const messengers: Messenger[] = []
  try {
    for (let i = 0; i < 2; i++) {
      const node = await createNode({ privateKey: await generateKeyPair('Ed25519'), listen, logger })
      nodes.push(node)
    }
    const [a, b] = nodes
    const bId = b.peerId.toString()
    const ma = await createMessenger(a, { protocol: '/fairdeal-bench/1', maxFrameBytes: 1024, logger, addressBook: new Map([[bId, b.getMultiaddrs()]]) })
    const mb = await createMessenger(b, { protocol: '/fairdeal-bench/1', maxFrameBytes: 1024, logger })
    messengers.push(ma, mb)

    let echo = true
    let count = 0
    let oneWayDone: (() => void) | undefined
    mb.onFrame(async (from, frame) => {
      if (echo) { await mb.send(from, frame); return }
      if (++count === ONE_WAY_FRAMES) oneWayDone?.()
    })
    let pending: (() => void) | undefined
    ma.onFrame(() => { const p = pending; pending = undefined; p?.() })
    const frame = new Uint8Array(FRAME_BYTES).fill(1)
    const latency = await timeRoundTrips(async () => {
      const back = new Promise<void>(resolve => { pending = resolve })
      await ma.send(bId, frame)
      await back
    })

    echo = false
    const done = new Promise<void>(resolve => { oneWayDone = resolve })
    const t0 = performance.now()
    // Sends are queued in order per peer; awaiting every 256th keeps the queue from growing unbounded.
    for (let i = 0; i < ONE_WAY_FRAMES; i++) {
      const sent = ma.send(bId, frame)
      if (i % 256 === 255) await sent
    }
    await done
    const framesPerSecond = ONE_WAY_FRAMES / ((performance.now() - t0) / 1000)
    return { ...latency, framesPerSecond }
  } finally {
    for (const m of messengers) await m.close()
    for (const n of nodes) await n.stop()
  }
}

const ms = (v: number): string => `${(v * 1000).toFixed(0)} µs`
const rate = (v: number): string => `${Math.round(v).toLocaleString('en-US')} frames/s`

export async function run (): Promise<void> {
  console.log(`${FRAME_BYTES}-byte frames; round trips: ${ROUND_TRIPS} after ${WARMUP} warm-up; one way: ${ONE_WAY_FRAMES} frames`)
  const bound = await rawTcp()
  console.log(`bound  raw node:net socket   rtt p50 ${ms(bound.p50)}  p99 ${ms(bound.p99)}  one way ${rate(bound.framesPerSecond)}`)
  for (const transport of ['tcp', 'ws'] as const) {
    const f = await messenger(transport)
    console.log(`messenger over ${transport.padEnd(3)}         rtt p50 ${ms(f.p50)}  p99 ${ms(f.p99)}  one way ${rate(f.framesPerSecond)}`)
    console.log(`  ratio to bound: rtt p50 ×${(f.p50 / bound.p50).toFixed(1)}, p99 ×${(f.p99 / bound.p99).toFixed(1)}, ` +
      `throughput ${(f.framesPerSecond / bound.framesPerSecond * 100).toFixed(1)}% of the raw socket`)
  }
}
