// Dealer-blind deals on real nodes: four daemons on 127.0.0.1 (real libp2p, real LevelDB), the
// dealer's node holding seat 0. Every seat gets exactly its cards, and nothing a node's machines
// received before the reveal lets it open another seat's card with the keys that node holds (its
// own seat's); every node's receipt and log verify.
import { afterEach, describe, expect, it } from 'vitest'
import { cardPoint, decodeDeck, mulSecret, openWithShares, pointFromHex, scalarFromHex } from '../src/core/blind/index.js'
import { beaconPermutation, blindLayout, dealtDeck } from '../src/core/hand/blind.js'
import type { BsharesBody } from '../src/core/hand/blind-messages.js'
import { docDigest } from '../src/core/hand/digest.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { blindCards } from '../src/core/schemes/blind.js'
import type { Signed } from '../src/core/signed.js'
import { logEntries, playHand, TestTable, verifyNodeLog } from './helpers/table-nodes.js'

let table: TestTable | undefined
afterEach(async () => { await table?.cleanup(); table = undefined })

describe('blind-v1 on real nodes', () => {
  it('coinche, 4 seats over TCP: each seat exactly its cards; no node can open another seat\'s before the reveal', async () => {
    const t = table = await TestTable.prepare({ game: 'coinche', scheme: 'blind-v1', seats: 4, robots: [], transport: 'tcp', timeouts: { contributeMs: 30_000, ackMs: 60_000, revealMs: 120_000 } })
    const nodes = await t.startAll()
    // Every document each node's machines are handed, in order (after the wire checks).
    const received = nodes.map(() => [] as Array<Signed<any>>)
    for (const [i, n] of nodes.entries()) {
      for (const machine of [n.daemon.seat, n.daemon.dealer]) {
        if (machine === undefined) continue
        const receive = machine.receive.bind(machine)
        machine.receive = (from: string, doc: Signed<unknown>) => { received[i].push(doc); return receive(from, doc) }
      }
    }
    const hand = await playHand(nodes[0], nodes, { timeoutMs: 90_000 })
    await t.stopAll()
    const logs = await Promise.all(nodes.map(async n => await logEntries(n.dataDir)))
    const receipt = logs[0].find(e => e.body.kind === 'receipt')!.body.payload as any
    const verdict = verifyReceipt(receipt)
    expect(verdict.problems).toEqual([])
    for (const [i, n] of nodes.entries()) {
      const mine = logs[i].find(e => e.body.kind === 'receipt')!.body.payload as any
      expect(docDigest(mine)).toBe(docDigest(receipt))
      expect(await verifyNodeLog(n.dataDir)).toMatchObject({ failed: 0 })
    }
    const seatOf = nodes.map((_, i) => t.seatOf(i))
    // Every seat countersigned exactly its own cards (the receipt's deal), which it opened itself.
    expect(verdict.summary!.acked).toEqual([0, 1, 2, 3])
    expect(verdict.summary!.hands!.flat().length).toBe(32)
    // Nothing received before the reveal opens another seat's card with the node's own key.
    const commit = receipt.commit.body
    const deck = decodeDeck(receipt.shuffles[3].body.deck, 'deck')
    const dealt = dealtDeck(deck, beaconPermutation(null, docDigest(receipt.shuffles[3]), 32))
    const xs = receipt.reveal.body.secrets.map((s: any) => scalarFromHex(s.body.secret, 'x'))
    const points = blindCards('coinche').map(cardPoint)
    for (const [i, docs] of received.entries()) {
      const reveal = docs.findIndex(d => d.type === 'breveal' && d.body.hand === hand)
      expect(reveal).toBeGreaterThan(0)
      const before = docs.slice(0, reveal).filter(d => d.type === 'bshares') as Array<Signed<BsharesBody>>
      // A seat's node gets shares only for its own cards and the table's; the dealer's node relays
      // every seat's, yet (below) cannot open any but its own seat's: it never gets the owner's share.
      if (i !== 0) expect(before.every(d => d.body.to === null || d.body.to === seatOf[i])).toBe(true)
      else expect(before.some(d => d.body.to !== null && d.body.to !== seatOf[0])).toBe(true)
      for (const d of blindLayout(commit, { dealer: 0 }).filter(l => l.seat !== seatOf[i])) {
        for (const pos of d.positions) {
          const shares = before.flatMap(s => s.body.shares.filter(x => x.pos === pos && s.body.to === d.seat).map(x => pointFromHex(x.d, 'd')))
          const m = openWithShares(dealt[pos], [...shares, mulSecret(dealt[pos].b, xs[seatOf[i]])])
          expect(points.some(p => p.equals(m)), `node ${i} could open position ${pos} of seat ${d.seat}`).toBe(false)
        }
      }
    }
  }, 300_000)
})
