// The dealer-blind machines in memory (the in-memory harness every family shares), on the real wire encoding (test/blind-machines.test.ts,
// test/blind-abort-rules.test.ts): the dealer's node (ids[0]) also holds seat 0 when it is seated.
// Seeded randomness and one clock: two tables started alike make the same documents until they part.
import { signerFromSeed, type Signer } from '../../src/core/identity.js'
import type { Signed } from '../../src/core/signed.js'
import { seededRandom } from '../../src/core/blind/index.js'
import { BlindDealerMachine, blindDealerHandKey, blindDealerMetaKey, type BlindDealerSnapshot } from '../../src/protocol/blind-dealer.js'
import type { DealerMeta } from '../../src/protocol/dealer.js'
import { handKeyPrefix } from '../../src/protocol/machines.js'
import { BlindSeatMachine, blindSeatHandKey, blindSeatMetaKey, type BlindSeatSnapshot } from '../../src/protocol/blind-seat.js'
import type { SeatMeta } from '../../src/protocol/seat.js'
import { inMemoryTable } from '../../src/protocol/in-memory.js'
import { PlayingDealer, PlayingSeat } from '../../src/protocol/play.js'
import type { BeaconBindingConfig, Effect, MachineInit, TimelockConfig } from '../../src/protocol/types.js'

export const signers: Signer[] = [0, 1, 2, 3].map(i => signerFromSeed(new Uint8Array(32).fill(40 + i)))
export const ids = signers.map(s => s.peerId)

export interface Node {
  id: string
  dealer?: BlindDealerMachine
  seat?: BlindSeatMachine
  log: Array<{ entry: string, payload: any }>
  events: any[]
  frames: Array<Signed<any>>
  /** What the node's machines saved, as JSON (the store's encoding), by key. */
  saved: Map<string, unknown>
}

/** A table of blind machines on one injected clock; `intercept` may change or drop (undefined) any frame. */
export function blindTable (seats: string[], options: { game?: string, beacon?: BeaconBindingConfig, timelock?: TimelockConfig, intercept?: (from: string, to: string, doc: Signed<any>) => Signed<any> | undefined, play?: boolean, wholeReceiptsKept?: number } = {}) {
  let now = 1_000_000
  const spec = { id: 'blind-mem', game: options.game ?? 'coinche', scheme: 'blind-v1', seats, dealer: ids[0] }
  const init = (i: number, seed: number): MachineInit => ({
    table: spec, signer: signers[i], timeouts: { contributeMs: 20_000, ackMs: 10_000, revealMs: 60_000 }, beacon: options.beacon ?? null,
    now: () => now, random: seededRandom(new Uint8Array(32).fill(seed)), timelock: options.timelock ?? null
  })
  // With `play`, the machines that play the hands (src/protocol/play.ts), every seat playing its own robot.
  const newDealer = (i: MachineInit): BlindDealerMachine => {
    const d = { ...i, ...(options.wholeReceiptsKept !== undefined ? { wholeReceiptsKept: options.wholeReceiptsKept } : {}) }
    return options.play === true ? new PlayingDealer(d) as unknown as BlindDealerMachine : new BlindDealerMachine(d)
  }
  const newSeat = (i: MachineInit): BlindSeatMachine => (options.play === true ? new PlayingSeat({ ...i, autoplay: true }) as unknown as BlindSeatMachine : new BlindSeatMachine(i))
  const nodes = new Map<string, Node>()
  nodes.set(ids[0], { id: ids[0], dealer: newDealer(init(0, 1)), seat: seats.includes(ids[0]) ? newSeat(init(0, 2)) : undefined, log: [], events: [], frames: [], saved: new Map() })
  for (let i = 1; i < ids.length; i++) if (seats.includes(ids[i])) nodes.set(ids[i], { id: ids[i], seat: newSeat(init(i, 10 + i)), log: [], events: [], frames: [], saved: new Map() })
  const rejections: string[] = []
  const seatMachines = new Map([...nodes].flatMap(([id, n]) => n.seat === undefined ? [] : [[id, n.seat] as const]))
  // The one in-memory harness of every hand family (src/protocol/in-memory.ts).
  const feed = inMemoryTable({
    dealerId: ids[0],
    // Read at each delivery: a restarted dealer machine takes the place of the old one.
    get dealer () { return nodes.get(ids[0])!.dealer! },
    seats: seatMachines,
    intercept: () => options.intercept,
    onEffect: (id, e, role) => {
      const from = nodes.get(id)!
      if (e.kind === 'append' && !(role === 'seat' && from.dealer !== undefined)) from.log.push({ entry: e.entry, payload: e.payload })
      if (e.kind === 'event') from.events.push({ role, hand: e.hand, ...e.event })
      // The dealer's recall: the receipt read back from its node's log, as the daemon's table host does.
      if (e.kind === 'recall') {
        const logged = from.log.findLast(l => l.entry === 'receipt' && l.payload.commit.body.hand === e.hand)?.payload
        feed(id, from.dealer!.recalled(e.hand, e.to, logged), 'dealer')
      }
      if (e.kind === 'persist') {
        if (e.value === null) from.saved.delete(e.key)
        else from.saved.set(e.key, JSON.parse(JSON.stringify(e.value)))
      }
    },
    onDeliver: (to, doc) => { nodes.get(to)!.frames.push(doc) },
    onRejection: (to, err) => { rejections.push(`${to.slice(-4)}: ${err.message}`) }
  })
  const run = (node: Node, role: 'dealer' | 'seat', effects: Effect[]): void => { feed(node.id, effects, role) }
  const dealerNode = nodes.get(ids[0])!
  return {
    nodes, rejections, dealerNode, run, now: (): number => now,
    deal: (): number => { const { hand, effects } = dealerNode.dealer!.startHand({ dealer: 0, ...(options.play === true ? { play: true as const } : {}) }); run(dealerNode, 'dealer', effects); return hand },
    /**
     * The dealer machine restarted from what its node saved (a new random stream), and, with `withLog`,
     * the entries its node logged (as the daemon passes the end of its log); its restore effects run, and are returned.
     */
    restartDealer: (withLog = false): Effect[] => {
      const prefix = handKeyPrefix(blindDealerHandKey, spec.id)
      const saved = [...dealerNode.saved].filter(([k]) => k.startsWith(prefix)).sort(([a], [b]) => a < b ? -1 : 1).map(([, v]) => v as BlindDealerSnapshot)
      dealerNode.dealer = newDealer(init(0, 3))
      const logged = withLog ? dealerNode.log.map(l => ({ kind: l.entry, payload: l.payload })) : []
      const effects = dealerNode.dealer.restore(dealerNode.saved.get(blindDealerMetaKey(spec.id)) as DealerMeta | undefined, saved, logged)
      run(dealerNode, 'dealer', effects)
      return effects
    },
    /** A seat machine restarted from what its node saved (a new random stream); its restore effects run. */
    restartSeat: (id: string): void => {
      const node = nodes.get(id)!
      const prefix = handKeyPrefix(blindSeatHandKey, spec.id)
      const saved = [...node.saved].filter(([k]) => k.startsWith(prefix)).sort(([a], [b]) => a < b ? -1 : 1).map(([, v]) => v as BlindSeatSnapshot)
      node.seat = newSeat(init(ids.indexOf(id), 30 + ids.indexOf(id)))
      seatMachines.set(id, node.seat)
      run(node, 'seat', node.seat.restore(node.saved.get(blindSeatMetaKey(spec.id)) as SeatMeta | undefined, saved))
    },
    end: (hand: number): void => { run(dealerNode, 'dealer', dealerNode.dealer!.end(hand)) },
    tick: (ms: number): void => { now += ms; for (const n of nodes.values()) { if (n.dealer) run(n, 'dealer', n.dealer.tick(now)); if (n.seat) run(n, 'seat', n.seat.tick(now)) } }
  }
}


/** The receipt of `hand` in each node's log (undefined where a node logged none), nodes in table order. */
export function receiptsOf (t: ReturnType<typeof blindTable>, hand: number): any[] {
  return [...t.nodes.values()].map(n => n.log.find(l => l.entry === 'receipt' && l.payload.commit.body.hand === hand)?.payload)
}

/**
 * A played table deals until a hand is played out (one nobody bids on is thrown in and carries no
 * card action: `type` is the game's card action, `card` or tarot's `play`); that hand and its receipt.
 */
export function dealUntilPlayed (t: ReturnType<typeof blindTable>, type = 'card', deals = 8): { hand: number, receipt: any } {
  let hand = 0
  let receipt: any
  for (let i = 0; i < deals; i++) {
    hand = t.deal()
    receipt = receiptsOf(t, hand).find(r => r !== undefined)
    if (receipt?.play?.actions.some((a: { body: { action: { type?: unknown } } }) => a.body.action.type === type) === true) break
  }
  return { hand, receipt }
}
