import { persistRun, type Effect } from './types.js'

/**
 * A host carries out its machines' lists of effects one after the other, each list's persists
 * durable before the effect that follows them (types.ts). With several hands in flight, lists queue
 * up behind the one running, and most begin with a persist: each would pay its own fsync. This file
 * says which of those leading persists may go to disk in the synced batch the running list writes
 * now — one fsync for several, without changing what any crash can leave behind.
 *
 * Writing a waiting list's leading persists early (together with the running list's, atomically)
 * is the same, for that list's hand, as a crash just after its own persists and before its other
 * effects: a point every machine already restarts from. It stays so only while no effect still to
 * run before it concerns the same hand. So a waiting list joins when:
 * - it begins with persists, none of them written already;
 * - every effect of it names a hand (a hand's own saves are `…/hand/<16 digits>` and a played
 *   hand's `…/play`), or is a persist of a table's counter (`…/meta`: the dealer's hand counter,
 *   the seat's last hand), which every hand shares;
 * - none of its hands is one that an effect still to run ahead of it concerns: the running list's
 *   (from the persists being written on) and every list joining before it, whatever the role (the
 *   dealer's and its own seat's machines on one node deal the same hands);
 * - no counter it writes in its leading persists is written after the batch by an effect ahead of
 *   it: a counter's writes stay in their order (in the batch, the last of a key's writes stands).
 * The scan stops at the first list that cannot join, so the lists joining are the first in the queue.
 * Two lists of the same hand never join: a seat's `contributed` save on disk before its VIEWs leave
 * would, after a crash there, restart it past the VIEWs it never sent.
 */

/** The most waiting lists whose persists join one batch (bounds the batch). */
export const MAX_JOINING_LISTS = 32

/** A hand's own saved state: `<family>/<table>/hand/<16 digits>`, and a played hand's `…/play`. */
const HAND_KEY = /\/hand\/(\d{16})(?:\/play)?$/

/** The hand an effect concerns, or undefined where it names none (a counter, a document without a hand). */
export function effectHand (e: Effect): number | undefined {
  switch (e.kind) {
    case 'persist': {
      const m = HAND_KEY.exec(e.key)
      return m === null ? undefined : Number(m[1])
    }
    case 'send': {
      const body = e.doc.body as { hand?: unknown } | null
      return typeof body === 'object' && body !== null && typeof body.hand === 'number' ? body.hand : undefined
    }
    default:
      return e.hand
  }
}

/** A list waiting in a host's queue: its effects, and how many of its leading persists are on disk already. */
export interface WaitingList {
  readonly effects: readonly Effect[]
  readonly written: number
}

/**
 * How many leading persists of each of the first waiting lists join the batch of the running list
 * `effects`, whose persists from `index` on are being written: one count per joining list, in
 * queue order (empty when none joins).
 */
export function joiningPersists (effects: readonly Effect[], index: number, waiting: readonly WaitingList[]): number[] {
  // What the effects still to run ahead of a waiting list concern: hands, and counters they write.
  const busy = new Set<number>()
  const later = new Set<string>()
  const run = persistRun(effects, index).length
  for (let i = index; i < effects.length; i++) {
    const e = effects[i]
    const hand = effectHand(e)
    if (hand !== undefined) busy.add(hand)
    // A counter written in this very batch is on disk with it; one written after it must not be overtaken.
    else if (e.kind === 'persist') { if (i >= index + run) later.add(e.key) } else return []
  }
  const counts: number[] = []
  for (const list of waiting) {
    if (counts.length === MAX_JOINING_LISTS || list.written > 0) break
    const leading = persistRun(list.effects, 0).length
    if (leading === 0) break
    const hands = new Set<number>()
    const writesLater: string[] = []
    for (const [i, e] of list.effects.entries()) {
      const hand = effectHand(e)
      if (hand !== undefined) {
        if (busy.has(hand)) return counts
        hands.add(hand)
      } else if (e.kind === 'persist') {
        if (i >= leading) writesLater.push(e.key)
        else if (later.has(e.key)) return counts
      } else {
        return counts
      }
    }
    for (const hand of hands) busy.add(hand)
    for (const key of writesLater) later.add(key)
    counts.push(leading)
  }
  return counts
}
