import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import type { Libp2p } from '@libp2p/interface'
import { sha256Hex, toHex } from '../src/core/bytes.js'
import { signerFromSeed, type Signer } from '../src/core/identity.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import { docDigest, ZERO_HASH } from '../src/core/hand/digest.js'
import { verifyAbort } from '../src/core/hand/abort-rules.js'
import type { AbortBody, CommitBody, PledgeBody, PledgesBody, SignedPledge } from '../src/core/hand/messages.js'
import { loadOrCreateIdentity } from '../src/net/identity.js'
import { createNode } from '../src/net/node.js'
import { createMessenger, type Messenger } from '../src/net/messenger.js'
import { dialAddress } from '../src/net/addresses.js'
import { decodeFrame, encodeFrame, MAX_FRAME_BYTES, TABLE_PROTOCOL, type WireDoc } from '../src/protocol/wire.js'
import { CapturedLogger } from './helpers/captured-logger.js'
import { logEntries, seatEvent, TestTable, verifyNodeLog, waitEvent, type TableNode } from './helpers/table-nodes.js'

// Guarantee 6 over the network: a dealer built by hand from the dealer's own key (a libp2p node,
// a messenger and signDocument, no DealerMachine) shows seats 1 and 2 one COMMIT and seat 3 another.
// Honest seat Daemons must catch it from the pledges before any of them reveals its nonce.

type Transport = 'tcp' | 'ws'

/** A member's identity (the dealer's, by default) on a bare node: it sends whatever it likes and keeps what it receives. */
class RogueDealer {
  readonly received: Array<{ from: string, doc: WireDoc }> = []
  #waiters = new Set<() => void>()
  private constructor (readonly node: Libp2p, readonly messenger: Messenger, readonly signer: Signer) {}

  static async start (t: TestTable, index = 0): Promise<RogueDealer> {
    const config = t.local.configs[index]
    const id = await loadOrCreateIdentity(config.dataDir)
    const { logger } = new CapturedLogger()
    const node = await createNode({ privateKey: id.privateKey, listen: config.listen, members: new Set(t.peerIds), logger })
    const messenger = await createMessenger(node, { protocol: TABLE_PROTOCOL, maxFrameBytes: MAX_FRAME_BYTES, logger, addressBook: new Map(Object.entries(config.peers)) })
    // Connected to every seat before any COMMIT: the seats' short deadline then measures the
    // protocol, not how long a loaded machine takes to dial.
    for (const [peer, addrs] of Object.entries(config.peers)) await node.dial(addrs.map(a => dialAddress(a, peer)))
    const rogue = new RogueDealer(node, messenger, signerFromSeed(id.seed))
    messenger.onFrame((from, frame) => {
      rogue.received.push({ from, doc: decodeFrame(frame) })
      for (const w of [...rogue.#waiters]) w()
    })
    // Connected before any COMMIT names a deadline: handshakes on a busy machine do not eat into it.
    await Promise.all(Object.entries(config.peers).map(async ([peer, addrs]) => await node.dial(addrs.map(a => dialAddress(a, peer)))))
    return rogue
  }

  async send (to: string, doc: Signed<unknown>): Promise<void> { await this.messenger.send(to, encodeFrame(doc)) }

  of (type: string, hand: number): Array<{ from: string, doc: WireDoc }> {
    return this.received.filter(r => r.doc.type === type && (r.doc.body as { hand: number }).hand === hand)
  }

  async until (check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    if (check()) return
    await new Promise<void>((resolve, reject) => {
      const test = (): void => { if (check()) { done(); resolve() } }
      const timer = setTimeout(() => { done(); reject(new Error(`timed out waiting for ${what}`)) }, timeoutMs)
      const done = (): void => { clearTimeout(timer); this.#waiters.delete(test) }
      this.#waiters.add(test)
    })
  }

  async stop (): Promise<void> {
    await this.messenger.close()
    await this.node.stop()
  }
}

// Seats refuse a COMMIT whose deadline is more than twice this far ahead, and wait twice this past
// the deadline for their cards before recording that the dealer did not deal. Long enough for the
// pledges to come back in time on a busy 2-core machine (the connections are made beforehand).
const CONTRIBUTE_MS = 2_000

let table: TestTable | undefined
let rogue: RogueDealer | undefined

afterEach(async () => {
  await rogue?.stop()
  rogue = undefined
  await table?.cleanup()
  table = undefined
})

function commitFor (t: TestTable, signer: Signer, hand: number, prev: string, secret: string, deadline: number): Signed<CommitBody> {
  const spec = t.local.configs[0].table
  const body: CommitBody = {
    table: spec.id, hand, prev, scheme: spec.scheme, game: spec.game, seats: spec.seats, dealer: spec.dealer,
    params: { dealer: 0 }, commitment: sha256Hex(secret), beacon: null, deadline
  }
  return signDocument('commit', body, signer)
}

/**
 * COMMIT A to seats 1 and 2, COMMIT B to seat 3 (each linking to the commit that seat saw last);
 * returns both and the three pledges that answer them.
 */
async function equivocate (t: TestTable, r: RogueDealer, hand: number, deadline: number, prev: { a: string, b: string }): Promise<{ a: Signed<CommitBody>, b: Signed<CommitBody>, pledges: SignedPledge[] }> {
  const a = commitFor(t, r.signer, hand, prev.a, toHex(randomBytes(32)), deadline)
  const b = commitFor(t, r.signer, hand, prev.b, toHex(randomBytes(32)), deadline)
  expect(docDigest(a)).not.toBe(docDigest(b))
  await r.send(t.peerIds[1], a)
  await r.send(t.peerIds[2], a)
  await r.send(t.peerIds[3], b)
  await r.until(() => r.of('pledge', hand).length === 3, `three pledges for hand ${hand}`)
  const pledges = r.of('pledge', hand).map(p => p.doc as SignedPledge)
  // Each seat's signed pledge names the exact COMMIT it saw.
  for (const p of pledges) expect(p.body.commit).toBe(docDigest(p.body.seat === 3 ? b : a))
  return { a, b, pledges }
}

function ownPledge (t: TestTable, r: RogueDealer, hand: number, commit: Signed<CommitBody>): SignedPledge {
  const body: PledgeBody = { table: t.local.configs[0].table.id, hand, commit: docDigest(commit), seat: 0, nonceHash: sha256Hex(toHex(randomBytes(32))) }
  return signDocument('pledge', body, r.signer)
}

function pledgesDoc (t: TestTable, r: RogueDealer, hand: number, commit: Signed<CommitBody>, pledges: SignedPledge[]): Signed<PledgesBody> {
  const sorted = [...pledges].sort((x, y) => x.body.seat - y.body.seat)
  return signDocument('pledges', { table: t.local.configs[0].table.id, hand, commit: docDigest(commit), pledges: sorted }, r.signer)
}

/**
 * Every seat ends hand 1 with an equivocation abort blaming the dealer and sends its record to the
 * (rogue) dealer, and no nonce left any seat: not to the dealer, not to another seat.
 */
async function expectCaughtBeforeAnyNonce (seats: TableNode[], r: RogueDealer, dealer: string): Promise<void> {
  for (const s of seats) {
    const e = await waitEvent(s.daemon.events, seatEvent(1, 'aborted'), `${s.name}: abort of hand 1`)
    expect(e.event).toMatchObject({ type: 'aborted', reason: 'equivocation', blame: [dealer] })
  }
  // Each seat also sends its signed record to the dealer; a nonce sent before it would have arrived first.
  await r.until(() => r.of('abort', 1).length === 3, 'the three abort records')
  expect(r.of('nonce', 1)).toEqual([])
  for (const s of seats) expect(s.daemon.events.after(0).filter(e => e.event.type === 'contributed')).toEqual([])
}

describe.each<Transport>(['tcp'])('a dealer that equivocates, over %s', (transport) => {
  it('is caught from the pledges: each seat logs a verified abort blaming it and never sends its nonce', async () => {
    const t = table = await TestTable.prepare({ game: 'coinche', scheme: 'atout-v1', seats: 4, transport, timeouts: { contributeMs: CONTRIBUTE_MS, ackMs: 1_000, revealMs: 60_000 } })
    const seats: TableNode[] = []
    for (const i of [1, 2, 3]) seats.push(await t.start(i))
    const r = rogue = await RogueDealer.start(t)
    const dealer = t.peerIds[0]

    // Hand 1: the dealer passes on every pledge as signed (it cannot forge a seat's signature).
    const { a, b, pledges } = await equivocate(t, r, 1, Date.now() + CONTRIBUTE_MS, { a: ZERO_HASH, b: ZERO_HASH })
    const all = [ownPledge(t, r, 1, a), ...pledges]
    await r.send(t.peerIds[1], pledgesDoc(t, r, 1, a, all))
    await r.send(t.peerIds[2], pledgesDoc(t, r, 1, a, all))
    await r.send(t.peerIds[3], pledgesDoc(t, r, 1, b, all))
    await expectCaughtBeforeAnyNonce(seats, r, dealer)
    for (const { from, doc } of r.of('abort', 1)) {
      expect(doc.signer).toBe(from)
      const verdict = verifyAbort(doc)
      expect(verdict.problems).toEqual([])
      expect(verdict.summary).toMatchObject({ reason: 'equivocation', blame: [dealer] })
    }

    // The same COMMIT sent again (a replay by the dealer's own key) is refused with a logged reason.
    await r.send(t.peerIds[1], a)
    const line = await seats[0].logs.waitFor(l => l.msg === 'message rejected', 'the replayed commit refused')
    expect(line).toMatchObject({ from: dealer, reason: 'commit for hand 1 replayed (hands up to 1 were already committed)' })

    // Hand 2: the dealer hides the conflicting pledge instead. No seat accepts an incomplete set,
    // so none reveals its nonce, and each records at its deadline that the dealer did not deal.
    const deadline = Date.now() + CONTRIBUTE_MS
    const second = await equivocate(t, r, 2, deadline, { a: docDigest(a), b: docDigest(b) })
    const agreeing = [ownPledge(t, r, 2, second.a), ...second.pledges.filter(p => p.body.seat !== 3)]
    await r.send(t.peerIds[1], pledgesDoc(t, r, 2, second.a, agreeing))
    await r.send(t.peerIds[2], pledgesDoc(t, r, 2, second.a, agreeing))
    await r.send(t.peerIds[3], pledgesDoc(t, r, 2, second.b, second.pledges.filter(p => p.body.seat === 3)))
    for (const s of seats) {
      const refused = await s.logs.waitFor(l => l.msg === 'message rejected' && l.reason === 'pledges: not exactly one pledge per human seat', `${s.name}: incomplete pledges refused`)
      expect(refused.from).toBe(dealer)
      const e = await waitEvent(s.daemon.events, seatEvent(2, 'aborted'), `${s.name}: abort of hand 2`)
      expect(e.event).toMatchObject({ type: 'aborted', reason: 'missing-deal', blame: [dealer] })
      expect(e.time).toBeGreaterThan(deadline)
    }
    await r.until(() => r.of('abort', 2).length === 3, 'the three abort records of hand 2')
    expect(r.received.filter(x => x.doc.type === 'nonce')).toEqual([])

    for (const s of seats) await t.stop(s.index)
    for (const s of seats) {
      const verdict = await verifyNodeLog(s.dataDir)
      expect(verdict.failures).toEqual([])
      expect(verdict.passed).toBe(2)
      const entries = await logEntries(s.dataDir)
      expect(entries.map(e => e.body.kind)).toEqual(['abort', 'abort'])
      const [first, next] = entries.map(e => e.body.payload as Signed<AbortBody>)
      expect(first.signer).toBe(s.peerId)
      expect(first.body).toMatchObject({ hand: 1, reason: 'equivocation', blame: [dealer] })
      expect(docDigest(first.body.commit)).toBe(docDigest(s.index === 3 ? b : a))
      // The evidence: the dealer's own signed PLEDGES, relaying pledges that answer the other commit.
      const seen = docDigest(first.body.commit)
      expect(first.body.evidence.map(e => `${e.type}:${e.signer}`)).toEqual([`pledges:${dealer}`])
      const relayed = (first.body.evidence[0].body as { pledges: Array<Signed<PledgeBody>> }).pledges
      expect(relayed.some(p => p.body.commit !== seen)).toBe(true)
      expect(next.body).toMatchObject({ hand: 2, reason: 'missing-deal', blame: [dealer] })
      expect(verifyAbort(next).problems).toEqual([])
    }
  })
})

describe('a dealer that shows two seats different PLEDGES for one COMMIT, over tcp', () => {
  it('is caught by the seats\' views before any nonce is sent, with an equivocation record holding both PLEDGES', async () => {
    const t = table = await TestTable.prepare({ game: 'coinche', scheme: 'atout-v1', seats: 4, transport: 'tcp', timeouts: { contributeMs: 2_000, ackMs: 1_000, revealMs: 60_000 } })
    const seats: TableNode[] = []
    for (const i of [1, 2, 3]) seats.push(await t.start(i))
    const r = rogue = await RogueDealer.start(t)
    const dealer = t.peerIds[0]
    // One COMMIT to all: every seat pledges to it.
    const a = commitFor(t, r.signer, 1, ZERO_HASH, toHex(randomBytes(32)), Date.now() + 2_000)
    for (const s of seats) await r.send(s.peerId, a)
    await r.until(() => r.of('pledge', 1).length === 3, 'three pledges')
    const pledges = r.of('pledge', 1).map(p => p.doc as SignedPledge)
    // The dealer's own seat (seat 0) pledged twice, with two nonce hashes: seats 1 and 2 see one, seat 3 the other.
    const first = pledgesDoc(t, r, 1, a, [ownPledge(t, r, 1, a), ...pledges])
    const second = pledgesDoc(t, r, 1, a, [ownPledge(t, r, 1, a), ...pledges])
    expect(docDigest(first)).not.toBe(docDigest(second))
    await r.send(t.peerIds[1], first)
    await r.send(t.peerIds[2], first)
    await r.send(t.peerIds[3], second)
    await expectCaughtBeforeAnyNonce(seats, r, dealer)
    for (const { doc } of r.of('abort', 1)) {
      const record = doc as Signed<AbortBody>
      expect(record.body.evidence.map(e => docDigest(e)).sort()).toEqual([docDigest(first), docDigest(second)].sort())
      expect(verifyAbort(record).problems).toEqual([])
    }
    for (const s of seats) await t.stop(s.index)
    for (const s of seats) {
      expect((await logEntries(s.dataDir)).map(e => e.body.kind)).toEqual(['abort'])
      expect((await verifyNodeLog(s.dataDir)).failures).toEqual([])
    }
  })
})

describe('a seat that withholds its VIEW, over tcp', () => {
  it('is the only one named: the dealer\'s missing-view blames it alone, with the waiting seats\' views as evidence, and every log verifies', async () => {
    const t = table = await TestTable.prepare({ game: 'coinche', scheme: 'atout-v1', seats: 4, transport: 'tcp', timeouts: { contributeMs: CONTRIBUTE_MS, ackMs: 1_000, revealMs: 60_000 } })
    const nodes: TableNode[] = []
    for (const i of [0, 1, 2]) nodes.push(await t.start(i))
    // Seat 3's key on a bare node: it pledges, then sends neither its VIEW nor its NONCE.
    const r = rogue = await RogueDealer.start(t, 3)
    const seat = t.seatOf(3)
    const hand = await nodes[0].daemon.deal({ dealer: 0 })
    await r.until(() => r.of('commit', hand).length === 1, 'the COMMIT')
    const commit = r.of('commit', hand)[0].doc as Signed<CommitBody>
    const pledge: PledgeBody = { table: commit.body.table, hand, commit: docDigest(commit), seat, nonceHash: sha256Hex(toHex(randomBytes(32))) }
    await r.send(t.peerIds[0], signDocument('pledge', pledge, r.signer))
    for (const n of nodes) {
      const e = await waitEvent(n.daemon.events, seatEvent(hand, 'aborted'), `${n.name}: abort of hand ${hand}`)
      expect(e.event).toMatchObject({ type: 'aborted', reason: 'missing-view', blame: [t.peerIds[3]] })
    }
    await r.until(() => r.of('abort', hand).length === 1, 'the dealer\'s record')
    const record = r.of('abort', hand)[0].doc as Signed<AbortBody>
    // The three honest seats' VIEWs reached the dealer machine (the dealer node's own seat's through its loopback).
    expect(record.body.evidence.filter(e => e.type === 'view').map(e => (e.body as { seat: number }).seat)).toEqual([0, 1, 2].map(i => t.seatOf(i)).sort())
    expect(verifyAbort(record).problems).toEqual([])
    for (const n of nodes) await t.stop(n.index)
    for (const n of nodes) {
      expect((await logEntries(n.dataDir)).map(e => e.body.kind)).toEqual(['abort'])
      expect((await verifyNodeLog(n.dataDir)).failures).toEqual([])
    }
  })
})
