import { describe, expect, test } from 'vitest'
import { memoryTable } from './helpers/memory-table.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { verifyAbort } from '../src/core/hand/abort-rules.js'
import { signDocument } from '../src/core/signed.js'
import type { CommitBody } from '../src/core/hand/messages.js'

function playHand (t: ReturnType<typeof memoryTable>, opts: { stages?: Array<{ stage: string, taker?: number }> } = {}): number {
  const { hand, effects } = t.dealer.startHand({ dealer: 0 })
  t.run(t.table.dealer, effects)
  for (const s of opts.stages ?? []) t.run(t.table.dealer, t.dealer.deliverStage(hand, s.stage, s.taker))
  t.run(t.table.dealer, t.dealer.end(hand))
  return hand
}

describe('table protocol state machines (in memory, real wire encoding)', () => {
  test('a coinche hand ends with the same verified receipt in every log', () => {
    const t = memoryTable()
    playHand(t)
    expect(t.rejections).toEqual([])
    for (const peer of new Set([t.table.dealer, ...t.seats.keys()])) {
      const log = t.appended.get(peer) ?? []
      const receipts = log.filter(e => e.entry === 'receipt')
      expect(receipts.length, peer).toBe(peer === t.table.dealer ? 2 : 1) // dealer node: dealer + its own seat
      const verdict = verifyReceipt(receipts[0].payload)
      expect(verdict.problems).toEqual([])
      expect(verdict.summary?.acked).toEqual([0, 1, 2, 3])
    }
  })

  test('robots: empty nonces, their cards never leave the dealer', () => {
    const t = memoryTable({ robots: [2, 3] })
    playHand(t)
    expect(t.rejections).toEqual([])
    const receipt = (t.appended.get(t.table.dealer) ?? []).find(e => e.entry === 'receipt')?.payload
    const verdict = verifyReceipt(receipt)
    expect(verdict.ok).toBe(true)
    const robotCards = [...(verdict.summary?.hands?.[2] ?? []), ...(verdict.summary?.hands?.[3] ?? [])]
    expect(robotCards).toHaveLength(16)
    const seat1 = t.frames.get(t.signers[1].peerId) ?? []
    for (const frame of seat1) {
      const text = new TextDecoder().decode(frame)
      const doc = JSON.parse(text)
      if (doc.type === 'reveal' || doc.type === 'final') continue
      for (const card of robotCards) expect(text.includes(`"${card}"`), `${doc.type} leaks ${card}`).toBe(false)
    }
  })

  test('a seat that never pledges is named in a signed abort', () => {
    const t = memoryTable()
    const silent = t.signers[2].peerId
    t.intercept = (from, to, doc) => (from === silent ? undefined : doc)
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    t.clock.now += 6_000
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    const abort = (t.appended.get(t.table.dealer) ?? []).find(e => e.entry === 'abort')
    expect(abort?.hand).toBe(hand)
    const verdict = verifyAbort(abort?.payload)
    expect(verdict.problems).toEqual([])
    expect(verdict.summary?.reason).toBe('missing-pledge')
    expect(verdict.summary?.blame).toEqual([silent])
    // every other seat logged the same signed record
    expect((t.appended.get(t.signers[1].peerId) ?? []).map(e => e.entry)).toEqual(['abort'])
  })

  test('a dealer showing two seats different commits is caught before any nonce is revealed', () => {
    const t = memoryTable()
    const victim = t.signers[3].peerId
    const dealerSigner = t.signers[0]
    t.intercept = (from, to, doc) => {
      if (doc.type === 'commit' && to === victim) {
        const body = { ...(doc.body as CommitBody), commitment: 'ab'.repeat(32) }
        return signDocument('commit', body, dealerSigner)
      }
      return doc
    }
    const { effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    // The dealer machine itself refuses the victim's pledge (it answers another commit): an
    // equivocating dealer has to forge PLEDGES to go on. It can only pass on the pledges as signed.
    expect(t.rejections.some(r => r.reason.includes('answers another commit'))).toBe(true)
    const toDealer = (t.frames.get(t.table.dealer) ?? []).map(f => JSON.parse(new TextDecoder().decode(f)))
    const pledges = toDealer.filter(d => d.type === 'pledge').sort((a, b) => a.body.seat - b.body.seat)
    expect(pledges).toHaveLength(4)
    const forged = signDocument('pledges', { table: t.table.id, hand: 1, commit: pledges[1].body.commit, pledges }, dealerSigner)
    t.intercept = undefined
    t.run(t.table.dealer, [1, 2, 3].map(i => ({ kind: 'send' as const, to: t.signers[i].peerId, doc: forged })))
    for (const i of [1, 2]) {
      const abort = (t.appended.get(t.signers[i].peerId) ?? []).find(e => e.entry === 'abort')
      const verdict = verifyAbort(abort?.payload)
      expect(verdict.problems).toEqual([])
      expect(verdict.summary?.reason).toBe('equivocation')
      expect(verdict.summary?.blame).toEqual([t.table.dealer])
    }
    // No seat revealed its nonce.
    const nonces = (t.frames.get(t.table.dealer) ?? []).map(f => JSON.parse(new TextDecoder().decode(f))).filter(d => d.type === 'nonce')
    expect(nonces.filter(n => n.signer !== t.table.dealer)).toEqual([])
  })
})
