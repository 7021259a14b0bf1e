// The legal moves of each hand machine are data (a transition table per family and role): the hand
// book takes every move a table lists, setting the deadline and returning the save, and refuses
// any other without changing the hand (issue 17). The machines' runs in the protocol-*, blind-*,
// timelock-* and machines-* tests take their moves through these tables.
import { describe, expect, it } from 'vitest'
import { HandBook } from '../src/protocol/hand-book.js'
import { DEALER_MOVES } from '../src/protocol/dealer.js'
import { SEAT_MOVES } from '../src/protocol/seat.js'
import { BLIND_DEALER_MOVES } from '../src/protocol/blind-dealer.js'
import { BLIND_SEAT_MOVES } from '../src/protocol/blind-seat.js'

describe('the four machines\' transition tables, in the hand book', () => {
  type Moves = Readonly<Record<string, readonly string[]>>
  const book = (moves: Moves): HandBook<string, { hand: number, phase: string, due?: number }, string> => new HandBook({
    transitions: moves,
    deadlines: { keys: () => 100, dealt: (_h, now) => now + 5 },
    final: ['done', 'aborted'],
    key: hand => `k/${hand}`,
    snapshot: h => h.phase,
    now: () => 1_000
  })

  it.each([
    ['commit-reveal dealer', DEALER_MOVES as Moves], ['commit-reveal seat', SEAT_MOVES as Moves],
    ['blind dealer', BLIND_DEALER_MOVES as Moves], ['blind seat', BLIND_SEAT_MOVES as Moves]
  ])('%s: every move the table lists is taken (deadline set, save returned); the ended phases lead nowhere', (_role, moves) => {
    for (const [from, tos] of Object.entries(moves)) {
      for (const to of tos) {
        const b = book(moves)
        const h: { hand: number, phase: string, due?: number } = { hand: 7, phase: from }
        b.open(h)
        const save = b.enter(h, to)
        const gone = to === 'done' || to === 'aborted'
        expect(save).toEqual({ kind: 'persist', key: 'k/7', value: gone ? null : to })
        expect(b.get(7)).toBe(gone ? undefined : h)
        expect(h.due).toBe(to === 'dealt' ? 1_005 : undefined)
      }
    }
    expect([moves.done, moves.aborted]).toEqual([[], []])
    // A closed table: every move leads to one of its phases; every phase but the ended ones can be aborted.
    for (const tos of Object.values(moves)) for (const to of tos) expect(Object.keys(moves)).toContain(to)
    for (const [from, tos] of Object.entries(moves)) if (from !== 'done' && from !== 'aborted') expect(tos).toContain('aborted')
  })

  it('a move the table does not list is refused, changing nothing', () => {
    const b = book(BLIND_DEALER_MOVES as Moves)
    const h: { hand: number, phase: string, due?: number } = { hand: 8, phase: 'keys' }
    b.open(h)
    expect(h.due).toBe(100)
    expect(() => b.enter(h, 'dealt')).toThrow('hand 8: no move from keys to dealt')
    expect(h).toEqual({ hand: 8, phase: 'keys', due: 100 })
    expect(() => b.enter(h, 'done')).toThrow('no move from keys to done')
    expect(b.due(101)).toEqual([h])
    expect(b.nextDeadline()).toBe(100)
  })
})
