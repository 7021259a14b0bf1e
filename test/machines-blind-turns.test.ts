// Each human seat's shuffle is due by the end of its own turn, not all of them by the COMMIT's
// deadline (docs/dealer-blind.md §3, "Turns"): a seat that takes the time is named at its turn's
// end, so the seat after it always has its share and is never named for it. On the injected clock,
// with the tables of test/helpers/blind-memory.ts (contributeMs 20 s: the COMMIT's deadline is 20 s
// after the hand starts).
import { describe, expect, test } from 'vitest'
import type { Signed } from '../src/core/signed.js'
import type { SignedAbort } from '../src/core/hand/messages.js'
import { checkAbortRecord } from '../src/core/hand/abort-rules.js'
import { turnEnd } from '../src/protocol/blind-dealer.js'
import { blindTable, ids } from './helpers/blind-memory.js'

const [A, B, C] = ids
type Table = ReturnType<typeof blindTable>

/** The dealer's records so far: reason and whom each names. */
const records = (t: Table): Array<[string, string[]]> =>
  t.dealerNode.log.filter(l => l.entry === 'abort').map(l => [(l.payload as SignedAbort).body.reason, (l.payload as SignedAbort).body.blame])

/** A table whose seats' documents of `type` from `held` are kept back (in `kept`) until the test sends them on. */
function holding (seats: string[], game: string, type: string, held: Set<string>) {
  const kept: Array<{ from: string, to: string, doc: Signed<any> }> = []
  const t = blindTable(seats, {
    game,
    intercept: (from, to, doc) => {
      if (doc.type !== type || !held.has(from)) return doc
      kept.push({ from, to, doc })
      return undefined
    }
  })
  /** Sends on what `from` sent and was kept back (to the dealer: it relays), as the seat's node would have. */
  const release = (from: string): void => {
    held.delete(from)
    const doc = kept.find(k => k.from === from && k.to === A)?.doc
    if (doc === undefined) throw new Error(`nothing of ${from} kept back`)
    t.run(t.nodes.get(from)!, 'seat', [{ kind: 'send', to: A, doc }])
  }
  return { t, release }
}

describe('blind-v1: each turn has its own end', () => {
  test('turnEnd: the keys by halfway, the shuffles in equal turns of the second half, the last at the deadline', () => {
    // Four humans, a 20 s contribution time ending at 100 s: the keys by 90 s, then turns of 2.5 s.
    expect([0, 1, 2, 3, 4].map(i => turnEnd(100_000, 20_000, 4, i))).toEqual([90_000, 92_500, 95_000, 97_500, 100_000])
    // Rounded down to the millisecond (so later, never earlier).
    expect([0, 1, 2, 3].map(i => turnEnd(100_000, 20_000, 3, i))).toEqual([90_000, 93_334, 96_667, 100_000])
  })

  test('a seat that overruns its turn is named at the turn\'s end (not at the deadline), the keys and the shuffle before it as evidence', () => {
    // Four humans, 20 s: the keys by 10 s, then turns of 2.5 s. Seat 1 (B) never sends its shuffle.
    const { t } = holding(ids, 'coinche', 'bshuffle', new Set([B]))
    t.deal()
    // Its turn is the second shuffle: it ends at 15 s, whenever the keys and seat 0's shuffle came.
    t.tick(15_000)
    expect(records(t)).toEqual([])
    t.tick(1)
    expect(records(t)).toEqual([['missing-shuffle', [B]]])
    const r = t.dealerNode.log[0].payload as SignedAbort
    expect(r.body.evidence.map(e => e.type)).toEqual(['bkey', 'bkey', 'bkey', 'bkey', 'bshuffle'])
    expect(checkAbortRecord(r).problems).toEqual([])
  })

  test('after a seat that took the whole of its turn, the next seat still has its own: nobody is named and the hand is dealt', () => {
    const { t, release } = holding(ids, 'coinche', 'bshuffle', new Set([B, C]))
    const hand = t.deal()
    // Seat 1 sends its shuffle as its turn ends (15 s); seat 2 takes the whole of its own turn
    // (to 17.5 s). With one deadline for every shuffle, seat 2 would have had whatever seat 1 left.
    t.tick(15_000)
    release(B)
    t.tick(2_500)
    expect(records(t)).toEqual([])
    release(C)
    // Seat 3 shuffles at once; the deck is dealt.
    expect(t.dealerNode.dealer!.status().find(h => h.hand === hand)?.phase).toBe('dealt')
    t.tick(2_501)
    expect(records(t)).toEqual([])
    expect(t.rejections).toEqual([])
  })

  test('a seat may use the time the turns before it left: seat 1, its input at once, has until its own turn ends', () => {
    const { t, release } = holding(ids, 'coinche', 'bshuffle', new Set([B]))
    const hand = t.deal()
    // The keys and seat 0's shuffle took no time: seat 1 has 15 s.
    t.tick(14_999)
    release(B)
    expect(t.dealerNode.dealer!.status().find(h => h.hand === hand)?.phase).toBe('dealt')
    expect(records(t)).toEqual([])
  })

  test('the keys have the first half: a key later than that is missing (the shuffles keep the second half)', () => {
    const { t } = holding([A, B], 'duo', 'bkey', new Set([B]))
    t.deal()
    t.tick(10_000)
    expect(records(t)).toEqual([])
    t.tick(1)
    expect(records(t)).toEqual([['missing-key', [B]]])
  })

  test('a dealer restarted during a turn keeps the turn\'s end', () => {
    const { t } = holding(ids, 'coinche', 'bshuffle', new Set([B]))
    t.deal()
    t.tick(3_000)
    t.restartDealer()
    t.tick(12_000)
    expect(records(t)).toEqual([])
    t.tick(1)
    expect(records(t)).toEqual([['missing-shuffle', [B]]])
  })
})
