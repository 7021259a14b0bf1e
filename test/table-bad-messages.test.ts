import { afterEach, describe, expect, it } from 'vitest'
import { peerIdFromString } from '@libp2p/peer-id'
import { encodeFrame, MAX_FRAME_BYTES, TABLE_PROTOCOL } from '../src/protocol/wire.js'
import type { Signed } from '../src/core/signed.js'
import { canonicalBytes } from '../src/core/canonical.js'
import { sha256Hex } from '../src/core/bytes.js'
import { docDigest } from '../src/core/hand/digest.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import type { PledgeBody, PledgesBody } from '../src/core/hand/messages.js'
import { WARN, type LogLine } from './helpers/captured-logger.js'
import { RawSeat } from './helpers/raw-seat.js'
import { logEntries, playHand, TestTable, verifyNodeLog, type TableNode } from './helpers/table-nodes.js'

// Every network message is size-limited and schema-validated, and the protocol refuses replays.
// A member of the table (seat 3, a raw node holding that seat's real key) sends the dealer and a
// seat garbage, oversized frames and replays of real signed messages; each is refused with a
// logged reason, nothing is logged as a hand, and the nodes go on to finish a hand with it.

type Transport = 'tcp' | 'ws'
let table: TestTable | undefined
let raw: RawSeat | undefined

afterEach(async () => {
  await raw?.stop()
  raw = undefined
  await table?.cleanup()
  table = undefined
})

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)

/** Sends `frame` and waits for the one refusal it must cause at `node`, returning its log line. */
async function refusedBy (r: RawSeat, node: TableNode, frame: Uint8Array, what: string): Promise<LogLine> {
  const before = node.logs.lines.length
  const count = node.daemon.rejections
  await r.sendRaw(node.peerId, frame)
  const line = await node.logs.waitFor(l => node.logs.lines.indexOf(l) >= before && l.msg === 'message rejected', `${node.name} refuses ${what}`)
  expect(line).toMatchObject({ level: WARN, from: r.peerId })
  expect(node.daemon.rejections).toBe(count + 1)
  return line
}

/** Sends a frame over the table's limit; the receiver resets the stream before reading its body. */
async function oversizedTo (r: RawSeat, node: TableNode): Promise<LogLine> {
  const before = node.logs.lines.length
  const huge = bytes(JSON.stringify({ type: 'pledge', padding: 'x'.repeat(MAX_FRAME_BYTES) }))
  expect(huge.length).toBeGreaterThan(MAX_FRAME_BYTES)
  await r.sendRaw(node.peerId, huge)
  const line = await node.logs.waitFor(l => node.logs.lines.indexOf(l) >= before && l.msg === 'rejected frame; resetting the stream', `${node.name} resets the oversized frame`)
  // The reset reaches the sender; frames sent after it go on a new stream (not into the dead one).
  const peer = peerIdFromString(node.peerId)
  const deadline = Date.now() + 5_000
  while (r.node.getConnections(peer).flatMap(c => c.streams).some(s => s.protocol === TABLE_PROTOCOL && s.direction === 'outbound' && s.status === 'open')) {
    if (Date.now() > deadline) throw new Error('the reset stream never closed at the sender')
    await new Promise(resolve => setTimeout(resolve, 10))
  }
  return line
}

describe.each<Transport>(['tcp'])('bad and replayed messages over %s', (transport) => {
  it('are refused with a logged reason, and the nodes keep serving', async () => {
    const t = table = await TestTable.prepare({ game: 'coinche', scheme: 'atout-v1', seats: 4, transport, timeouts: { contributeMs: 10_000, ackMs: 10_000, revealMs: 60_000 } })
    const nodes = [await t.start(0), await t.start(1), await t.start(2)]
    const [dealer, seat1] = nodes
    // The raw seat may send frames up to 1 MiB: the limit that matters is the receiver's.
    const r = raw = await RawSeat.start({ config: t.local.configs[3], maxFrameBytes: 1024 * 1024, duplicate: ['pledge'] })

    // Hand 1: seat 3 sends its pledge twice; the very same document again is a duplicate (a seat
    // answering a COMMIT sent again does that, docs/protocol.md §7): it changes nothing, is not
    // refused, and the hand goes on.
    await playHand(dealer, nodes)
    await r.until(() => r.appended.length === 1, 'hand 1 at the raw seat')
    // Twice, or four times when the COMMIT came again on the new connection (docs/protocol.md §7): one document.
    const pledges = r.sent.filter(s => s.doc.type === 'pledge').map(s => canonicalBytes(s.doc).join())
    expect(pledges.length).toBeGreaterThanOrEqual(2)
    expect(new Set(pledges).size).toBe(1)
    expect(dealer.logs.rejections().filter(x => x.from === r.peerId)).toEqual([])
    r.duplicate.clear()

    // Replays of seat 3's own signed messages of hand 1, after the hand.
    const old = (type: string): Signed<unknown> => {
      const found = r.sent.find(s => s.doc.type === type)
      if (found === undefined) throw new Error(`seat 3 sent no ${type}`)
      return found.doc
    }
    for (const type of ['pledge', 'nonce']) {
      const line = await refusedBy(r, dealer, encodeFrame(old(type)), `a replayed ${type}`)
      expect(line.reason).toBe(`${type} for hand 1, which is not in play (replayed or late)`)
    }
    // An ACK after the hand may be a late countersignature (docs/protocol.md §11): this one is in
    // the receipt already, so it is refused as such.
    const ack = await refusedBy(r, dealer, encodeFrame(old('ack')), 'a replayed ack')
    expect(ack.reason).toBe('late ack of seat 3: the receipt already holds seat 3\'s countersignature, or the seat is not a human seat')
    // The dealer's COMMIT of hand 1, replayed to seat 1 by another member: seats hear only the dealer.
    const commit = r.frames.find(f => f.doc?.type === 'commit')
    expect(commit?.from).toBe(dealer.peerId)
    expect((await refusedBy(r, seat1, commit?.bytes as Uint8Array, 'a replayed commit')).reason).toBe(`commit from ${r.peerId}, who is not the dealer`)

    // Malformed frames, to the dealer and to a seat.
    for (const node of [dealer, seat1]) {
      expect((await refusedBy(r, node, bytes('this is not JSON'), 'text')).reason).toBe('frame is not UTF-8 JSON')
      expect((await refusedBy(r, node, new Uint8Array([0xff, 0xfe, 0x00, 0x7b]), 'binary')).reason).toBe('frame is not UTF-8 JSON')
      expect((await refusedBy(r, node, bytes('{"type":"deal-me-aces"}'), 'an unknown type')).reason).toMatch(/^invalid message: type: /)
      const noSig = { ...old('pledge') as Signed<Record<string, unknown>>, sig: 'not a signature' }
      expect((await refusedBy(r, node, canonicalBytes(noSig), 'a schema-invalid pledge')).reason).toMatch(/^invalid message: sig: /)
      const extra = { ...old('nonce') as Signed<Record<string, unknown>>, body: { ...(old('nonce').body as Record<string, unknown>), cards: ['AS'] } }
      expect((await refusedBy(r, node, canonicalBytes(extra), 'a nonce with an extra field')).reason).toMatch(/^invalid message: body: /)
      const line = await oversizedTo(r, node)
      expect(line).toMatchObject({ level: WARN, peer: r.peerId, reason: expect.stringMatching(new RegExp(`^frame over the ${MAX_FRAME_BYTES}-byte limit`)) })
    }

    // Hand 2: seat 3 plays, but first slips in a pledge with a broken signature (before its real
    // one, so only the signature can be what is wrong) and relays seat 1's pledge as its own message.
    r.beforeHandle = async ({ doc }) => {
      if (doc?.type === 'commit') {
        const body: PledgeBody = { table: doc.body.table, hand: doc.body.hand, commit: docDigest(doc), seat: 3, nonceHash: sha256Hex('guess') }
        const badlySigned = { type: 'pledge', signer: r.peerId, body, sig: 'ab'.repeat(64) }
        await r.sendRaw(dealer.peerId, canonicalBytes(badlySigned))
      } else if (doc?.type === 'pledges') {
        const seat1Pledge = (doc as Signed<PledgesBody>).body.pledges.find(p => p.body.seat === 1) as Signed<unknown>
        await r.sendRaw(dealer.peerId, encodeFrame(seat1Pledge))
      }
    }
    const rejectedBefore = dealer.daemon.rejections
    const hand = await playHand(dealer, nodes)
    expect(hand).toBe(2)
    await r.until(() => r.appended.length === 2, 'hand 2 at the raw seat')
    expect(dealer.daemon.rejections).toBe(rejectedBefore + 2)
    expect(dealer.logs.rejections().slice(-2).map(x => x.reason)).toEqual([
      'pledge of seat 3: bad signature',
      `pledge relayed: signed by ${seat1.peerId} but sent by ${r.peerId}`
    ])
    // Every refusal is on record with its reason, one line each, and the hands went on.
    expect(dealer.logs.rejections()).toHaveLength(dealer.daemon.rejections)
    // (Hand 1's second PLEDGE was a duplicate, not refused: the replays after it, the malformed frames, hand 2's two.)
    expect(dealer.daemon.rejections).toBe(3 + 5 + 2)
    expect(seat1.daemon.rejections).toBe(1 + 5)
    for (const a of r.appended) expect(verifyReceipt(a.payload).problems).toEqual([])
    await t.stopAll()
    for (const n of nodes) {
      const verdict = await verifyNodeLog(n.dataDir)
      expect(verdict.failures).toEqual([])
      expect((await logEntries(n.dataDir)).map(e => e.body.kind)).toEqual(['receipt', 'receipt'])
    }
  })
})

// Issue 18: every refused frame wrote a warn line (4,000 garbage frames: ~0.8 MB of log in 0.7 s).
// Rejected input is logged in rate-limited summaries, per peer and reason, members' too.
describe('a flood of garbage frames from a member', () => {
  it('is counted in full and leaves a bounded log', async () => {
    const t = table = await TestTable.prepare({ game: 'coinche', scheme: 'atout-v1', seats: 4, transport: 'tcp' })
    const dealer = await t.start(0)
    const r = raw = await RawSeat.start({ config: t.local.configs[3], maxFrameBytes: 1024 * 1024 })
    const before = dealer.logs.raw.length
    const count = dealer.daemon.rejections
    const frames = 4_000
    for (let i = 0; i < frames; i++) await r.sendRaw(dealer.peerId, bytes(i % 2 === 0 ? `garbage ${i}` : `{"type":"junk-${i}"}`))
    await expect.poll(() => dealer.daemon.rejections, { timeout: 15_000 }).toBe(count + frames)
    const written = dealer.logs.raw.slice(before)
    const bytesWritten = written.reduce((n, l) => n + l.length, 0)
    // Five lines per reason in full (two reasons), the rest counted: a few KB, not 0.8 MB.
    expect(written.filter(l => l.includes('"message rejected"'))).toHaveLength(10)
    expect(bytesWritten).toBeLessThan(8_000)
  })
})
