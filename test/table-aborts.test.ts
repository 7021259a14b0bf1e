import { afterEach, describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { docDigest } from '../src/core/hand/digest.js'
import { verifyAbort } from '../src/core/hand/abort-rules.js'
import type { AbortBody, Receipt } from '../src/core/hand/messages.js'
import type { Signed } from '../src/core/signed.js'
import type { NodeEvent } from '../src/daemon/events.js'
import { logEntries, playHand, TestTable, verifyNodeLog, waitEvent, type TableNode } from './helpers/table-nodes.js'

// Guarantee 5 over the network: a hand that cannot go on leaves a signed abort record, kept by the
// dealer and by every other seat, verifiable offline. A seat node that is down cannot be reached:
// the record says so and blames nobody (a seat that was reached and did not answer is blamed; in
// memory, protocol-aborts.test.ts).

type Transport = 'tcp' | 'ws'
let table: TestTable | undefined

afterEach(async () => {
  await table?.cleanup()
  table = undefined
})

// Long enough for live hands on a busy 2-core machine, short enough to wait for a deadline in a test.
const TIMEOUTS = { contributeMs: 3_000, ackMs: 3_000, revealMs: 60_000 }

const aborted = (hand: number, role: 'dealer' | 'seat') => (e: NodeEvent) => e.hand === hand && e.role === role && e.event.type === 'aborted'

/** Waits for the abort of `hand` on every node; checks each names `reason` and blames exactly `blamed`. */
async function expectAbortEverywhere (dealer: TableNode, nodes: TableNode[], hand: number, reason: string, blamed: string[]): Promise<void> {
  const e = await waitEvent(dealer.daemon.events, aborted(hand, 'dealer'), `dealer: abort of hand ${hand}`)
  expect(e.event).toMatchObject({ reason, blame: blamed })
  for (const n of nodes) {
    const s = await waitEvent(n.daemon.events, aborted(hand, 'seat'), `${n.name}: abort of hand ${hand}`)
    expect(s.event).toMatchObject({ reason, blame: blamed })
  }
}

/** The abort at `index` of a stopped node's log: it verifies alone, and is the dealer's signed record. */
async function abortAt (t: TestTable, node: number, index: number): Promise<Signed<AbortBody>> {
  const entries = await logEntries(t.dataDir(node))
  expect(entries[index].body.kind).toBe('abort')
  const doc = entries[index].body.payload as Signed<AbortBody>
  expect(verifyAbort(doc).problems).toEqual([])
  expect(doc.signer).toBe(t.peerIds[0])
  return doc
}

// The rules (evidence, deadlines, a withheld nonce) are proven in memory on the injected clock
// (protocol-aborts.test.ts); these prove them over real nodes, one case per transport.
describe('refusals leave evidence over real nodes', () => {
  it('over ws: a seat node that never started: the dealer cannot reach it, and every node logs a verified unreachable abort blaming nobody', async () => {
    const transport: Transport = 'ws'
    const t = table = await TestTable.prepare({ game: 'coinche', scheme: 'atout-v1', seats: 4, transport, timeouts: TIMEOUTS })
    const nodes = [await t.start(0), await t.start(1), await t.start(2)]
    const hand = await nodes[0].daemon.deal()
    await expectAbortEverywhere(nodes[0], nodes, hand, 'unreachable', [])
    await t.stopAll()
    let reference: string | undefined
    for (const i of [0, 1, 2]) {
      const verdict = await verifyNodeLog(t.dataDir(i))
      expect(verdict.failures).toEqual([])
      expect(verdict.passed).toBe(1)
      const doc = await abortAt(t, i, 0)
      expect(doc.body).toMatchObject({ hand, reason: 'unreachable', blame: [] })
      expect(doc.body.detail).toMatch(/^the dealer could not reach seat 3 \(.+\) before the deadline$/)
      // The evidence: the pledges of every seat that did answer this very commit.
      expect(doc.body.evidence).toHaveLength(3)
      expect(new Set(doc.body.evidence.map(e => e.signer))).toEqual(new Set(t.peerIds.slice(0, 3)))
      expect(doc.body.evidence.every(e => e.type === 'pledge' && (e.body as { commit: string }).commit === docDigest(doc.body.commit))).toBe(true)
      // Recorded only once the deadline had passed: the seat had its full time to answer.
      expect((await logEntries(t.dataDir(i)))[0].body.time).toBeGreaterThan(doc.body.commit?.body.deadline as number)
      const line = canonicalJson(doc)
      if (reference === undefined) reference = line
      else expect(line).toBe(reference)
    }
  })

  it('over tcp: a seat node stopped between hands cannot be reached and is not blamed; back up, it plays the next hand', async () => {
    const transport: Transport = 'tcp'
    const t = table = await TestTable.prepare({ game: 'coinche', scheme: 'atout-v1', seats: 4, transport, timeouts: TIMEOUTS })
    const all = await t.startAll()
    await playHand(all[0], all)
    await t.stop(3)
    const up = all.slice(0, 3)
    const hand2 = await all[0].daemon.deal()
    await expectAbortEverywhere(all[0], up, hand2, 'unreachable', [])
    const again = [...up, await t.start(3)]
    const hand3 = await playHand(all[0], again)
    expect([hand2, hand3]).toEqual([2, 3])
    await t.stopAll()
    for (let i = 0; i < 4; i++) {
      const verdict = await verifyNodeLog(t.dataDir(i))
      const kinds = (await logEntries(t.dataDir(i))).map(e => e.body.kind)
      // The seat that was down asked the dealer for the hand it missed when it was back, and logged
      // its record before the next hand (issue 18): no gap in any log.
      expect(kinds).toEqual(['receipt', 'abort', 'receipt'])
      expect(verdict.passed).toBe(kinds.length)
      expect(verdict.failures).toEqual([])
    }
    const abort = await abortAt(t, 1, 1)
    expect(abort.body).toMatchObject({ hand: 2, reason: 'unreachable', blame: [] })
    // The next hand links to the aborted one: the abort cannot be dropped from the chain unnoticed.
    const third = (await logEntries(t.dataDir(3)))[2].body.payload as Receipt
    expect(third.commit.body.prev).toBe(docDigest(abort.body.commit))
  })
})
