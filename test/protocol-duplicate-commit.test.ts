import { describe, expect, test } from 'vitest'
import { memoryTable } from './helpers/memory-table.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import type { Signed } from '../src/core/signed.js'
import type { CommitBody } from '../src/core/hand/messages.js'

// The dealer resends a COMMIT it could not confirm was delivered (docs/protocol.md §7): a seat that
// got the first copy takes the second as a duplicate — no rejection, no second PLEDGE — and the
// hand goes on; a different COMMIT for a hand already committed is still refused as a replay.
describe('a seat given the same COMMIT twice', () => {
  test('takes the copy silently, and the hand ends with a verified receipt', () => {
    const t = memoryTable()
    let commit: Signed<CommitBody> | undefined
    let copies = 0
    t.intercept = (from, to, doc) => {
      if (doc.type === 'commit' && to === t.signers[1].peerId) { commit = doc as Signed<CommitBody>; copies++ }
      return doc
    }
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    expect(copies).toBe(1)
    const seat1 = t.seats.get(t.signers[1].peerId)!
    const pledgesBefore = (t.frames.get(t.table.dealer) ?? []).length
    expect(seat1.receive(t.table.dealer, commit!)).toEqual([])
    expect((t.frames.get(t.table.dealer) ?? []).length).toBe(pledgesBefore)
    t.run(t.table.dealer, t.dealer.end(hand))
    expect(t.rejections).toEqual([])
    const receipt = (t.appended.get(t.signers[1].peerId) ?? []).find(e => e.entry === 'receipt')
    expect(verifyReceipt(receipt?.payload).ok).toBe(true)
    // Another COMMIT for the same hand (another digest) is still a replay.
    const other = { ...commit!, body: { ...commit!.body, deadline: commit!.body.deadline + 1 } }
    expect(() => seat1.receive(t.table.dealer, other)).toThrow(/replayed/)
  })
})
