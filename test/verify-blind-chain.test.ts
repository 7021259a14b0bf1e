// Blind (version-2) receipts and blind abort records in a log, as `fairdeal verify` checks them
// (verifyLog with verifyLogPayload): they enter the hand chains exactly as version-1 ones do
// (docs/log.md, "Hand chains"), and a blind receipt's stage list and ack order follow
// docs/protocol.md §9 under the same codes as a version-1 receipt's. Three duo hands are played once
// in memory by the blind machines (hand 2 aborted: seat B never sends its key); every tampered case
// is re-signed with the test keys, so only the rule under test catches it.
import { describe, expect, test } from 'vitest'
import { verifyLog, type LogFailure } from '../src/core/log/index.js'
import { verifyLogPayload } from '../src/core/receipt.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { docDigest, seatCardsDigest } from '../src/core/hand/digest.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import { Reason } from '../src/core/hand/reasons.js'
import type { BlindReceipt } from '../src/core/hand/blind-messages.js'
import { blindTable, ids, signers } from './helpers/blind-memory.js'
import { signedLogLines } from './helpers/verify-as-log.js'

const A = ids[0] // the dealer, and seat 0
const B = ids[1]
const signerOf = (peer: string): typeof signers[number] => signers[ids.indexOf(peer)]

/** The dealer's log after hand 1 (receipt), hand 2 (B's key withheld: missing-key), hand 3 (receipt). */
function played (): Array<{ kind: string, payload: any }> {
  let dropKey = false
  const t = blindTable([A, B], { game: 'duo', intercept: (from, _to, doc) => dropKey && from === B && doc.type === 'bkey' ? undefined : doc })
  t.end(t.deal())
  dropKey = true
  t.deal()
  t.tick(21_000)
  dropKey = false
  t.end(t.deal())
  return t.dealerNode.log.map(l => ({ kind: l.entry, payload: l.payload }))
}

async function failures (entries: Array<{ kind: string, payload: unknown }>): Promise<LogFailure[]> {
  const found: LogFailure[] = []
  await verifyLog(signedLogLines(signers[0], entries), { verifyPayload: verifyLogPayload, onFailure: f => { found.push(f) } })
  return found
}
const codesOf = (found: LogFailure[]): string[] => found.flatMap(f => f.codes ?? [])

/** A receipt whose REVEAL's body is changed, signed again by the dealer, and its acks signed again by their seats over it. */
function withReveal (receipt: BlindReceipt, change: (stages: string[]) => string[]): BlindReceipt {
  const deliveries = verifyReceipt(receipt).summary?.deliveries ?? []
  const out = structuredClone(receipt)
  out.reveal = signDocument('breveal', { ...receipt.reveal.body, stages: change([...receipt.reveal.body.stages]) }, signerOf(A)) as BlindReceipt['reveal']
  const revealDigest = docDigest(out.reveal)
  out.acks = receipt.acks.map(a => signDocument('ack', { ...a.body, reveal: revealDigest, cards: seatCardsDigest(deliveries, a.body.seat, out.reveal.body.stages) }, signerOf(a.signer)) as Signed<any>)
  return out
}

describe('blind hands in the hand chains', () => {
  const log = played()

  test('the honest log (two receipts and the dealer\'s missing-key record) passes', async () => {
    expect(log.map(e => e.kind)).toEqual(['receipt', 'abort', 'receipt'])
    expect(log.map(e => e.payload.v ?? e.payload.body.reason)).toEqual([2, 'missing-key', 2])
    expect(await failures(log)).toEqual([])
  })

  test('a blind receipt removed: hand-chain-gap', async () => {
    const found = await failures([log[0], log[2]])
    expect(codesOf(found)).toEqual([Reason.CHAIN_GAP])
    const noAbort = await failures([log[1], log[2]])
    expect(codesOf(noAbort)).toEqual([Reason.CHAIN_GAP])
  })

  test('a second dealer-signed COMMIT for a hand that has its receipt: hand-chain-fork', async () => {
    // The dealer's missing-key record of hand 2 again, over a COMMIT it signed with another deadline
    // (seat A's key in it signed again for that COMMIT: a claim of absence does not check its proof).
    const record = log[1].payload
    const commit = signDocument('commit', { ...record.body.commit.body, deadline: record.body.commit.body.deadline + 1 }, signerOf(A))
    const evidence = record.body.evidence.map((d: Signed<any>) => signDocument(d.type, { ...d.body, commit: docDigest(commit) }, signerOf(d.signer)))
    const forked = signDocument('abort', { ...record.body, commit, evidence }, signerOf(A))
    const found = await failures([...log, { kind: 'abort', payload: forked }])
    expect(codesOf(found)).toEqual([Reason.CHAIN_FORK])
  })

  test('a malformed receipt whose COMMIT is valid and dealer-signed keeps its hand: no gap after it', async () => {
    const broken = structuredClone(log[0].payload)
    delete broken.keys
    const found = await failures([{ kind: 'receipt', payload: broken }, log[1], log[2]])
    expect(found.map(f => f.seq)).toEqual([0])
    expect(codesOf(found)).toEqual([Reason.MALFORMED])
  })

  test('a blind receipt listing a stage twice fails with stage; acks out of seat order with order', async () => {
    const receipt = log[0].payload as BlindReceipt
    expect(receipt.reveal.body.stages).toEqual(['deal'])
    const twice = withReveal(receipt, s => [...s, 'deal'])
    expect(verifyReceipt(twice).problems.map(p => p.code)).toEqual([Reason.STAGE])
    expect(codesOf(await failures([{ kind: 'receipt', payload: twice }, log[1], log[2]]))).toEqual([Reason.STAGE])
    const reordered = { ...receipt, acks: [...receipt.acks].reverse() }
    expect(receipt.acks.map(a => a.body.seat)).toEqual([0, 1])
    expect(verifyReceipt(reordered).problems.map(p => p.code)).toEqual([Reason.ORDER])
  })
})
