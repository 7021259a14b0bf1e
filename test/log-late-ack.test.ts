// Late acks in a log (docs/log.md, "Late acks"), in memory: a `late-ack` entry is checked like an
// ack against the incomplete receipt of its hand earlier in the same log, completes it when it
// brings the last missing ack, and fails with its code otherwise.
import { describe, expect, test } from 'vitest'
import { memoryTable, type MemoryTable } from './helpers/memory-table.js'
import { Reason } from '../src/core/hand/reasons.js'
import { docDigest } from '../src/core/hand/digest.js'
import { verifyLogPayload } from '../src/core/receipt.js'
import { signDocument } from '../src/core/signed.js'
import { inThreadChecker, verifyLog, type LogFailure, type LogVerdict } from '../src/core/log/index.js'
import { signedLogLines as signedLog } from './helpers/verify-as-log.js'
import type { AckBody, Receipt, SignedAck } from '../src/core/hand/messages.js'
import type { Signer } from '../src/core/identity.js'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cliInProcess } from './helpers/cli-in-process.js'

function playOne (): { t: MemoryTable, receipt: Receipt } {
  const t = memoryTable({ game: 'coinche', scheme: 'atout-v1', beacon: null })
  const { hand, effects } = t.dealer.startHand({ dealer: 0 })
  t.run(t.table.dealer, effects)
  t.run(t.table.dealer, t.dealer.end(hand))
  const entry = (t.appended.get(t.table.dealer) ?? []).find(e => e.entry === 'receipt')
  return { t, receipt: entry?.payload as Receipt }
}

async function check (lines: string[], from?: number): Promise<{ verdict: LogVerdict, failures: LogFailure[] }> {
  const failures: LogFailure[] = []
  const verdict = await verifyLog(lines, { verifyPayload: verifyLogPayload, checker: inThreadChecker(verifyLogPayload), onFailure: f => failures.push(f), ...(from === undefined ? {} : { from }) })
  return { verdict, failures }
}

const { t, receipt } = playOne()
const dealer = t.signers.find(s => s.peerId === t.table.dealer) as Signer
const signerOf = (peer: string): Signer => t.signers.find(s => s.peerId === peer) as Signer
const ackOf = (seat: number): SignedAck => receipt.acks.find(a => a.body.seat === seat) as SignedAck
const without = (...seats: number[]): Receipt => ({ ...receipt, acks: receipt.acks.filter(a => !seats.includes(a.body.seat)) })
const rcpt = (r: Receipt): { kind: string, payload: unknown } => ({ kind: 'receipt', payload: r })
const late = (ack: unknown): { kind: string, payload: unknown } => ({ kind: 'late-ack', payload: { ack } })
const codes = (failures: LogFailure[]): string[] => failures.flatMap(f => f.codes ?? [])

describe('a late ack completes the receipt it countersigns', () => {
  test('the receipt lacks seat 2\'s ack, a late-ack entry brings it: every entry passes', async () => {
    expect(receipt.acks.map(a => a.body.seat)).toEqual([0, 1, 2, 3])
    const { verdict, failures } = await check(signedLog(dealer, [rcpt(without(2)), late(ackOf(2))]))
    // Reported as read (what the receipt alone holds), in reading order; counted passed at the end.
    expect(failures).toMatchObject([{ seq: 0, incomplete: true, codes: [Reason.INCOMPLETE] }])
    expect(verdict).toMatchObject({ passed: 2, failed: 0, incomplete: 0, completed: [0] })
  })

  test('fairdeal verify says nothing but its summary for a receipt a late ack completed; exit 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fairdeal-late-ack-'))
    try {
      const file = join(dir, 'log.jsonl')
      await writeFile(file, signedLog(dealer, [rcpt(without(2)), late(ackOf(2))]).join('\n') + '\n')
      const done = await cliInProcess('verify', file, '--workers', '0')
      expect(done).toMatchObject({ code: 0, stdout: '2 passed, 0 failed\n' })
      // Still missing at the end: the incomplete line is said, and the status is 3.
      await writeFile(file, signedLog(dealer, [rcpt(without(2, 3)), late(ackOf(2))]).join('\n') + '\n')
      const half = await cliInProcess('verify', file, '--workers', '0')
      expect(half.code).toBe(3)
      expect(half.stdout).toMatch(/^seq 0: incomplete: no countersignatures? from seats? /)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  test('without the late ack the same receipt is incomplete (what the late ack cures)', async () => {
    const { verdict, failures } = await check(signedLog(dealer, [rcpt(without(2))]))
    expect(verdict).toMatchObject({ passed: 0, failed: 0, incomplete: 1 })
    expect(codes(failures)).toEqual([Reason.INCOMPLETE])
  })

  test('two acks missing, one arrives late: still incomplete, naming the seat still missing', async () => {
    const { verdict, failures } = await check(signedLog(dealer, [rcpt(without(1, 2)), late(ackOf(2))]))
    expect(verdict).toMatchObject({ passed: 1, failed: 0, incomplete: 1 })
    expect(failures).toHaveLength(1)
    expect(failures[0]).toMatchObject({ seq: 0, incomplete: true, codes: [Reason.INCOMPLETE] })
    const both = await check(signedLog(dealer, [rcpt(without(1, 2)), late(ackOf(2)), late(ackOf(1))]))
    expect(both.failures).toMatchObject([{ seq: 0, incomplete: true }])
    expect(both.verdict).toMatchObject({ passed: 3, failed: 0, incomplete: 0 })
  })
})

describe('a late ack that does not hold fails with its code, and completes nothing', () => {
  test('no receipt of its COMMIT earlier in the log: late-ack-unmatched (also when the receipt comes after it)', async () => {
    const alone = await check(signedLog(dealer, [late(ackOf(2))]))
    expect(alone.verdict).toMatchObject({ passed: 0, failed: 1 })
    expect(codes(alone.failures)).toEqual([Reason.LATE_ACK_UNMATCHED])
    const before = await check(signedLog(dealer, [late(ackOf(2)), rcpt(without(2))]))
    expect(before.verdict).toMatchObject({ passed: 0, failed: 1, incomplete: 1 })
    expect(codes(before.failures)).toEqual([Reason.LATE_ACK_UNMATCHED, Reason.INCOMPLETE])
  })

  test('a seat that already acked, in the receipt or late: late-ack-acked', async () => {
    const inReceipt = await check(signedLog(dealer, [rcpt(without(2)), late(ackOf(1)), late(ackOf(2))]))
    expect(inReceipt.verdict).toMatchObject({ passed: 2, failed: 1, incomplete: 0 })
    expect(inReceipt.failures).toMatchObject([{ seq: 0, incomplete: true }, { seq: 1, codes: [Reason.LATE_ACK_ACKED] }])
    expect(inReceipt.failures[1].fault).toBeUndefined()
    const twice = await check(signedLog(dealer, [rcpt(without(2)), late(ackOf(2)), late(ackOf(2))]))
    expect(twice.verdict).toMatchObject({ passed: 2, failed: 1, incomplete: 0 })
    expect(twice.failures).toMatchObject([{ seq: 0, incomplete: true }, { seq: 2, codes: [Reason.LATE_ACK_ACKED] }])
  })

  test('a bad signature, another signer, a wrong cards digest, another reveal: each its code, the receipt stays incomplete', async () => {
    const ack = ackOf(2)
    const cases: Array<[unknown, string]> = [
      [{ ...ack, body: { ...ack.body, cards: 'ab'.repeat(32) } }, Reason.BAD_SIGNATURE],
      [signDocument('ack', ack.body, t.signers[3]), Reason.WRONG_SIGNER],
      [signDocument('ack', { ...ack.body, cards: ackOf(3).body.cards } satisfies AckBody, signerOf(ack.signer)), Reason.ACK_CARDS],
      [signDocument('ack', { ...ack.body, reveal: docDigest(receipt.commit) } satisfies AckBody, signerOf(ack.signer)), Reason.ACK_REVEAL],
      [signDocument('ack', { ...ack.body, hand: 7 } satisfies AckBody, signerOf(ack.signer)), Reason.OTHER_HAND]
    ]
    for (const [bad, code] of cases) {
      const { verdict, failures } = await check(signedLog(dealer, [rcpt(without(2)), late(bad)]))
      expect(verdict).toMatchObject({ passed: 0, failed: 1, incomplete: 1 })
      expect(failures.find(f => f.seq === 1)?.codes).toEqual([code])
      expect(failures.find(f => f.seq === 0)?.codes).toEqual([Reason.INCOMPLETE])
    }
  })

  test('a payload not of the form { ack }: late-ack-form', async () => {
    const { verdict, failures } = await check(signedLog(dealer, [rcpt(without(2)), { kind: 'late-ack', payload: { ack: ackOf(2), commit: 'x' } }]))
    expect(verdict).toMatchObject({ passed: 0, failed: 1, incomplete: 1 })
    expect(failures.find(f => f.seq === 1)?.codes).toEqual([Reason.LATE_ACK_FORM])
  })
})
