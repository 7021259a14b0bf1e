import { describe, expect, it } from 'vitest'
import { effectHand, joiningPersists, MAX_JOINING_LISTS, type WaitingList } from '../src/protocol/persist-join.js'
import { dealerHandKey, dealerMetaKey } from '../src/protocol/dealer.js'
import { seatHandKey, seatMetaKey } from '../src/protocol/seat.js'
import { blindSeatHandKey } from '../src/protocol/blind-seat.js'
import { playSaveKey } from '../src/protocol/play-save.js'
import type { Effect } from '../src/protocol/types.js'
import type { Signed } from '../src/core/signed.js'

// Which waiting lists' leading persists go to disk in the running list's synced batch
// (docs/protocol.md §11, "Hands in flight share a synced batch").
const T = 'tbl'
const save = (hand: number, key = seatHandKey(T, hand)): Effect => ({ kind: 'persist', key, value: { hand } })
const send = (hand: unknown, type = 'view'): Effect => ({ kind: 'send', to: 'peer', doc: { type, signer: 's', body: { table: T, hand }, sig: '00' } as Signed<unknown> })
const event = (hand: number): Effect => ({ kind: 'event', hand, event: { type: 'contributed' } })
const waiting = (...lists: Effect[][]): WaitingList[] => lists.map(effects => ({ effects, written: 0 }))

describe('effectHand', () => {
  it('reads the hand from a hand\'s own save keys, every family\'s and a played hand\'s, and from the other effects', () => {
    expect(effectHand(save(7, dealerHandKey(T, 7)))).toBe(7)
    expect(effectHand(save(7, seatHandKey(T, 7)))).toBe(7)
    expect(effectHand(save(7, blindSeatHandKey(T, 7)))).toBe(7)
    expect(effectHand(save(7, playSaveKey(seatHandKey(T, 7))))).toBe(7)
    expect(effectHand(send(7))).toBe(7)
    expect(effectHand(event(7))).toBe(7)
    expect(effectHand({ kind: 'append', entry: 'receipt', hand: 7, payload: {} })).toBe(7)
    expect(effectHand({ kind: 'fetchBeacon', hand: 7, round: 1 })).toBe(7)
    expect(effectHand({ kind: 'recall', hand: 7, to: 'p' })).toBe(7)
  })

  it('names no hand for a table\'s counters, a document without a numeric hand, or a key that only looks like a hand\'s', () => {
    expect(effectHand(save(0, dealerMetaKey(T)))).toBeUndefined()
    expect(effectHand(save(0, seatMetaKey(T)))).toBeUndefined()
    expect(effectHand(save(0, `seat/x/hand/${'0'.repeat(15)}1/meta`))).toBeUndefined()
    expect(effectHand(save(0, 'seat/tbl/hand/12'))).toBeUndefined()
    expect(effectHand(send('7'))).toBeUndefined()
    expect(effectHand(send(undefined))).toBeUndefined()
  })
})

describe('joiningPersists', () => {
  const running = [save(1), event(1), send(1), send(1)]

  it('takes the whole leading run of each waiting list of other hands, in queue order', () => {
    expect(joiningPersists(running, 0, waiting(
      [save(2), event(2), send(2)],
      [save(3, dealerHandKey(T, 3)), save(3, playSaveKey(dealerHandKey(T, 3))), send(3)],
      [save(4)]
    ))).toEqual([1, 2, 1])
  })

  it('stops at a list of a hand the running list still concerns (whatever the machine), and at the second list of one hand', () => {
    // The running list's own hand, through the dealer machine of the same node.
    expect(joiningPersists(running, 0, waiting([save(1, dealerHandKey(T, 1)), send(1)], [save(2)]))).toEqual([])
    // Hand 2 twice: the second save must wait for the first list's sends.
    expect(joiningPersists(running, 0, waiting([save(2), send(2)], [save(2), send(2)], [save(3)]))).toEqual([1])
    // A hand the running list touches only after its persists (a later send).
    expect(joiningPersists([save(1), send(5)], 0, waiting([save(5)]))).toEqual([])
    // A list that touches a busy hand anywhere in it, not only in its persists.
    expect(joiningPersists(running, 0, waiting([save(2), send(1)]))).toEqual([])
  })

  it('stops at a list that does not begin with persists, whose persists were written already, or with an effect that names no hand and is no counter\'s save', () => {
    expect(joiningPersists(running, 0, waiting([event(2), save(2)], [save(3)]))).toEqual([])
    expect(joiningPersists(running, 0, [{ effects: [save(2), send(2)], written: 1 }, { effects: [save(3)], written: 0 }])).toEqual([])
    expect(joiningPersists(running, 0, waiting([save(2), send(undefined)], [save(3)]))).toEqual([])
    expect(joiningPersists(running, 0, waiting([save(2)], [save(3), send('x')], [save(4)]))).toEqual([1])
  })

  it('lets nothing join when an effect of the running list still to run names no hand and is no save; a counter in the batch itself is no bar', () => {
    expect(joiningPersists([save(1), send(undefined)], 0, waiting([save(2)]))).toEqual([])
    expect(joiningPersists([save(0, dealerMetaKey(T)), save(1), event(1), send(1)], 0, waiting([save(2), send(2)]))).toEqual([1])
    // Effects before the batch have run: they bar nothing.
    expect(joiningPersists([send(undefined), send(2), save(1), send(1)], 2, waiting([save(2), send(2)]))).toEqual([1])
  })

  it('joins a list that saves a table\'s counter, unless an effect ahead of it writes that counter after the batch', () => {
    // The seat's save on a COMMIT: the hand and the table's last hand.
    expect(joiningPersists(running, 0, waiting([save(2), save(0, seatMetaKey(T)), event(2), send(2)], [save(3), save(0, seatMetaKey(T)), send(3)]))).toEqual([2, 2])
    expect(joiningPersists(running, 0, waiting([save(0, dealerMetaKey(T)), save(2, dealerHandKey(T, 2)), send(2)]))).toEqual([2])
    // The running list writes the counter again after its batch: a list writing it now would be overtaken.
    expect(joiningPersists([save(1), event(1), save(0, seatMetaKey(T)), send(1)], 0, waiting([save(2)], [save(3), save(0, seatMetaKey(T))], [save(4)]))).toEqual([1])
    // So does a list joining ahead, with a later effect of its own.
    expect(joiningPersists(running, 0, waiting([save(2), send(2), save(0, seatMetaKey(T))], [save(0, seatMetaKey(T)), save(3)]))).toEqual([1])
    // Another counter is no bar.
    expect(joiningPersists(running, 0, waiting([save(2), send(2), save(0, seatMetaKey(T))], [save(0, dealerMetaKey(T)), save(3)]))).toEqual([1, 2])
  })

  it('joins a log append\'s batch the same way (no persist at the index: every effect from it on names its hand)', () => {
    const ending: Effect[] = [{ kind: 'append', entry: 'receipt', hand: 1, payload: {} }, event(1), save(1)]
    expect(joiningPersists(ending, 0, waiting([save(2), send(2)]))).toEqual([1])
    expect(joiningPersists(ending, 0, waiting([save(1, dealerHandKey(T, 1)), send(1)]))).toEqual([])
  })

  it(`joins at most ${MAX_JOINING_LISTS} lists`, () => {
    const many = waiting(...Array.from({ length: MAX_JOINING_LISTS + 5 }, (_, k) => [save(k + 2), send(k + 2)]))
    expect(joiningPersists(running, 0, many)).toHaveLength(MAX_JOINING_LISTS)
  })
})
