// A connection that came back, over libp2p on 127.0.0.1 with real daemons (docs/protocol.md §7
// "A connection that came back"): seat 3's PLEDGE never reaches the dealer (the raw seat keeps it
// back, as a connection that died with the frame in it would), then its connection to the dealer
// is closed and opened again. The dealer's node, told by libp2p that the peer connected, sends the
// COMMIT again; the seat answers with its PLEDGE; the hand is dealt and ends in a receipt, before
// any deadline, with nothing refused. The machines' side is test/protocol-resync.test.ts.
import { afterEach, expect, it } from 'vitest'
import { multiaddr } from '@multiformats/multiaddr'
import { peerIdFromString } from '@libp2p/peer-id'
import { RawSeat } from './helpers/raw-seat.js'
import { TestTable, seatEvent, waitEvent } from './helpers/table-nodes.js'

let table: TestTable | undefined
let raw: RawSeat | undefined

afterEach(async () => {
  await raw?.stop()
  raw = undefined
  await table?.cleanup()
  table = undefined
})

it('a PLEDGE lost with its connection: the connection comes back, the COMMIT goes again, the seat pledges again, and the hand ends in a receipt', async () => {
  // A long contribution time: the hand must go on because of the resync, not end at a deadline.
  const t = table = await TestTable.prepare({ game: 'coinche', scheme: 'atout-v1', seats: 4, transport: 'tcp', timeouts: { contributeMs: 60_000, ackMs: 10_000, revealMs: 60_000 } })
  const nodes = [await t.start(0), await t.start(1), await t.start(2)]
  const [dealer] = nodes
  const r = raw = await RawSeat.start({ config: t.local.configs[3], withhold: ['pledge'] })
  const hand = await dealer.daemon.deal({ dealer: 0 })
  await r.until(() => r.frames.some(f => f.doc?.type === 'commit'), 'the COMMIT at seat 3')
  await r.until(() => r.sent.length === 0 && r.machine.status().some(h => h.phase === 'pledged'), 'seat 3 pledged (its PLEDGE kept back)')
  await expect.poll(() => dealer.daemon.dealer?.status()[0]).toMatchObject({ hand, phase: 'pledging', joined: 3 })

  // The connection dies and comes back (seat 3 dials the dealer again). (The COMMIT may have come
  // twice already: the dealer's send opened seat 3's first connection, which resyncs too.)
  const commits = (): number => r.frames.filter(f => f.doc?.type === 'commit').length
  const before = commits()
  r.withhold.clear()
  const dealerId = peerIdFromString(dealer.peerId)
  await r.node.hangUp(dealerId)
  const address = dealer.daemon.addresses().find(a => a.includes('/tcp/')) as string
  await r.node.dial(multiaddr(address))

  await r.until(() => commits() > before, 'the COMMIT again at seat 3')
  await r.until(() => r.sent.some(s => s.doc.type === 'pledge'), 'seat 3 pledging again')
  await r.until(() => r.frames.some(f => f.doc?.type === 'cards'), 'seat 3\'s cards')
  await dealer.daemon.end(hand)
  await r.until(() => r.appended.some(e => e.hand === hand && e.entry === 'receipt'), 'the receipt at seat 3')
  for (const n of nodes) await waitEvent(n.daemon.events, seatEvent(hand, 'receipt'), `${n.name}: receipt of hand ${hand}`)
  expect(r.appended.filter(e => e.entry === 'abort')).toEqual([])
  expect(r.refused).toEqual([])
  for (const n of nodes) expect(n.logs.rejections(), n.name).toEqual([])
})
