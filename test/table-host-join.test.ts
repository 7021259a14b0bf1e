import { afterEach, describe, expect, it } from 'vitest'
import { HostTable, type HostNode } from './helpers/host-table.js'
import { seatHandKey } from '../src/protocol/seat.js'
import { dealerHandKey, dealerMetaKey } from '../src/protocol/dealer.js'
import type { NodeEvent } from '../src/daemon/events.js'

// Hands in flight share a synced batch (docs/protocol.md §11, src/protocol/persist-join.ts): a
// table's real TableHosts on real LevelDB, frames carried in memory. A seat's write is held so that
// the REVEALs of the hands after it queue behind it; their saves then go to disk in one batch, and
// a crash right after that batch (before the ACKs leave) costs nobody anything.
let table: HostTable | undefined
afterEach(async () => { await table?.close(); table = undefined })

const until = async (n: HostNode, match: (e: NodeEvent) => boolean, what: string): Promise<NodeEvent> => await n.events.watch().until(match, `node ${n.index}: ${what}`, 20_000)
const aborted = (e: NodeEvent): boolean => e.event.type === 'aborted'

/** Three hands dealt, every node's seat holding its cards of each. */
async function threeDealt (t: HostTable): Promise<{ hands: number[], key: (hand: number) => string }> {
  const dealer = t.nodes[0]
  const hands = [await dealer.host.deal(), await dealer.host.deal(), await dealer.host.deal()]
  for (const n of t.nodes) {
    for (const hand of hands) {
      await until(n, e => e.hand === hand && e.role === 'seat' && e.event.type === 'cards' && !e.event.public, `its cards of hand ${hand}`)
    }
  }
  return { hands, key: hand => seatHandKey(t.local.configs[0].tables[0].table.id, hand) }
}

/** Ends the three hands with node 1's save of the first held, so that the next two REVEALs queue behind it. */
async function endBehindHeldSave (t: HostTable, hands: number[], key: (hand: number) => string, after: (keys: string[]) => 'crash-after' | undefined): Promise<void> {
  const seat = t.nodes[1]
  let release = (): void => {}
  const held = new Promise<void>(resolve => { release = resolve })
  let holding = false
  let nowHolding = (): void => {}
  const holdingNow = new Promise<void>(resolve => { nowHolding = resolve })
  seat.gate = keys => {
    if (keys.includes(key(hands[0])) && !holding) {
      holding = true
      nowHolding()
      return held
    }
    return after(keys)
  }
  const revealed = hands.map(hand => seat.whenReceived('reveal', hand))
  for (const hand of hands) await t.nodes[0].host.end(hand)
  // Node 1's save of the first REVEAL is held, and the other REVEALs reached it (queued behind it).
  await holdingNow
  await Promise.all(revealed)
  release()
}

describe('hands in flight share a synced batch', () => {
  it('hands dealt at once: the dealer\'s saves and hand counter go in one batch, the counter reaches the head file before any COMMIT leaves, and every hand ends', async () => {
    const t = table = await HostTable.start()
    const dealer = t.nodes[0]
    const id = t.local.configs[0].tables[0].table.id
    const hands = await Promise.all([dealer.host.deal(), dealer.host.deal(), dealer.host.deal()])
    expect(hands).toEqual([1, 2, 3])
    // The first list's batch holds the next two lists' saves: the counter (written once, its last value) and each hand.
    expect(dealer.writes[0]).toEqual([dealerHandKey(id, 1), dealerMetaKey(id), dealerHandKey(id, 2), dealerHandKey(id, 3)])
    const commits = dealer.sent.filter(s => s.type === 'commit')
    // To the three other nodes (the dealer's own seat is fed in memory), and again to any that has not pledged yet.
    for (const hand of hands) expect(commits.filter(c => c.hand === hand).length).toBeGreaterThanOrEqual(3)
    for (const c of commits) expect(c.counter).toBe(4)
    for (const hand of hands) {
      for (const n of t.nodes) await until(n, e => e.hand === hand && e.role === 'seat' && e.event.type === 'cards' && !e.event.public, `its cards of hand ${hand}`)
      await dealer.host.end(hand)
    }
    for (const hand of hands) {
      const receipt = await until(dealer, e => e.hand === hand && e.role === 'dealer' && (e.event.type === 'receipt' || aborted(e)), `the receipt of hand ${hand}`)
      expect(receipt.event).toEqual({ type: 'receipt', acked: [0, 1, 2, 3] })
    }
    for (const n of t.nodes) expect(n.events.after(0).filter(aborted)).toEqual([])
  })

  it('writes the saves of the lists queued behind a held one in one synced batch, and every hand ends as before', async () => {
    const t = table = await HostTable.start()
    const { hands, key } = await threeDealt(t)
    await endBehindHeldSave(t, hands, key, () => undefined)
    const dealer = t.nodes[0]
    for (const hand of hands) {
      const receipt = await until(dealer, e => e.hand === hand && e.role === 'dealer' && (e.event.type === 'receipt' || aborted(e)), `the receipt of hand ${hand}`)
      expect(receipt.event).toEqual({ type: 'receipt', acked: [0, 1, 2, 3] })
    }
    // Node 1 has logged each hand (so everything it writes of them is written).
    for (const hand of hands) await until(t.nodes[1], e => e.hand === hand && e.role === 'seat' && (e.event.type === 'receipt' || aborted(e)), `its receipt of hand ${hand}`)
    // The seat's last save of a hand through the state store is its `acked` one (the deletion goes
    // with the receipt's log entry): the second and third hands' went to disk in one batch.
    const last = (hand: number): string[] | undefined => t.nodes[1].writes.findLast(w => w.includes(key(hand)))
    expect(last(hands[1])).toEqual([key(hands[1]), key(hands[2])])
    expect(last(hands[2])).toBe(last(hands[1]))
    for (const n of t.nodes) expect(n.events.after(0).filter(aborted)).toEqual([])
  })

  it('a crash right after the shared batch, before the ACKs leave: the seat restarts with both hands acknowledged, and every receipt holds every ACK', async () => {
    const t = table = await HostTable.start()
    const { hands, key } = await threeDealt(t)
    let shared: string[] | undefined
    await endBehindHeldSave(t, hands, key, keys => {
      if (shared !== undefined || !keys.includes(key(hands[1]))) return undefined
      shared = keys
      return 'crash-after'
    })
    const dealer = t.nodes[0]
    // Hand 1's ACK left before the crash.
    const first = await until(dealer, e => e.hand === hands[0] && e.role === 'dealer' && (e.event.type === 'receipt' || aborted(e)), `the receipt of hand ${hands[0]}`)
    expect(first.event).toEqual({ type: 'receipt', acked: [0, 1, 2, 3] })
    await t.nodes[1].whenCrashed
    expect(shared).toEqual([key(hands[1]), key(hands[2])])

    const seat = await t.restart(1)
    for (const hand of hands.slice(1)) {
      const receipt = await until(dealer, e => e.hand === hand && e.role === 'dealer' && (e.event.type === 'receipt' || aborted(e)), `the receipt of hand ${hand}`)
      expect(receipt.event).toEqual({ type: 'receipt', acked: [0, 1, 2, 3] })
      const own = await until(seat, e => e.hand === hand && e.role === 'seat' && (e.event.type === 'receipt' || aborted(e)), `its receipt of hand ${hand}`)
      expect(own.event.type).toBe('receipt')
    }
    for (const n of t.nodes) expect(n.events.after(0).filter(aborted)).toEqual([])
  })
})
