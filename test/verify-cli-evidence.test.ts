// Issue 8's cases through `fairdeal verify FILE` as a user runs it (the built CLI, its worker
// threads): a log holding honest hands and, re-signed with the test keys, every kind of weak
// evidence the issue lists. Each fails with a reason naming its rule; a receipt missing an ack is
// *incomplete*: alone it makes verify exit 3, beside failures 1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { memoryTable, type MemoryTable } from './helpers/memory-table.js'
import { fairdeal, repoRoot, withLines } from './helpers/cli.js'
import { cliInProcess } from './helpers/cli-in-process.js'
import { docDigest } from '../src/core/hand/digest.js'
import { Reason } from '../src/core/hand/reasons.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import { signedLogLines } from './helpers/verify-as-log.js'
import type { AbortBody, CommitBody, Receipt, SignedAbort } from '../src/core/hand/messages.js'
import type { Signer } from '../src/core/identity.js'

const root = repoRoot

function hand (t: MemoryTable, drop?: (from: string, doc: Signed<unknown>) => boolean): number {
  t.intercept = drop === undefined ? undefined : (from, _to, doc) => (drop(from, doc) ? undefined : doc)
  const { hand, effects } = t.dealer.startHand({ dealer: 0 })
  t.run(t.table.dealer, effects)
  t.intercept = undefined
  return hand
}

const once = (t: MemoryTable, kind: string): unknown[] => {
  const all = (t.appended.get(t.table.dealer) ?? []).filter(e => e.entry === kind).map(e => e.payload)
  return all.filter((p, i) => all.findIndex(o => docDigest(o) === docDigest(p)) === i)
}

let tmp: string
let file: string
let expected: Array<{ seq: number, codes: string[], incomplete?: true }>
let signers: { dealer: Signer }
let receipts: { r1: Receipt, r2: Receipt }

beforeAll(async () => {
  if (!existsSync(join(root, 'dist', 'src', 'cli', 'commands', 'verify.js'))) throw new Error('run `npm run build` first')
  const t = memoryTable({ dealerSeat: false })
  const dealer = t.signers[4]
  const seat = (i: number): Signer => t.signers[i]
  // Hands 1 and 2 dealt and revealed; hand 3 stalls (seat 3 withholds its nonce) and is aborted;
  // hand 4 is dealt and revealed but dropped from the log; hand 5 is dealt and revealed.
  for (const h of [1, 2]) { hand(t); t.run(t.table.dealer, t.dealer.end(h)) }
  hand(t, (from, doc) => from === seat(3).peerId && doc.type === 'nonce')
  t.clock.now += 6_000
  t.run(t.table.dealer, t.dealer.tick(t.clock.now))
  for (const h of [4, 5]) { hand(t); t.run(t.table.dealer, t.dealer.end(h)) }
  const [r1, r2, , r5] = once(t, 'receipt') as Receipt[]
  signers = { dealer }
  receipts = { r1, r2 }
  const missingNonce = once(t, 'abort')[0] as SignedAbort
  const commit3 = missingNonce.body.commit as Signed<CommitBody>
  const record = (by: Signer, body: Partial<AbortBody>): SignedAbort => signDocument('abort', {
    table: t.table.id, hand: 3, reason: 'missing-deal', blame: [t.table.dealer], commit: commit3, evidence: [], detail: 'test', ...body
  } satisfies AbortBody, by)

  const entries: Array<{ kind: string, payload: unknown, codes: string[], incomplete?: true }> = [
    { kind: 'receipt', payload: r1, codes: [] },
    // Countersignatures missing: one, then none.
    { kind: 'receipt', payload: { ...r2, acks: r2.acks.filter(a => a.body.seat !== 2) }, codes: [Reason.INCOMPLETE], incomplete: true },
    { kind: 'receipt', payload: { ...r2, acks: [] }, codes: [Reason.INCOMPLETE], incomplete: true },
    // Pledges in any order.
    { kind: 'receipt', payload: { ...r2, pledges: [r2.pledges[1], r2.pledges[0], ...r2.pledges.slice(2)] }, codes: [Reason.ORDER] },
    { kind: 'abort', payload: missingNonce, codes: [] },
    // A dealer's missing-nonce against a seat that did send its nonce.
    { kind: 'abort', payload: signDocument('abort', { ...missingNonce.body, blame: [seat(1).peerId] }, dealer), codes: [Reason.ABORT_BLAME] },
    // Fabricated equivocation: a seat's own pledge naming a made-up COMMIT.
    {
      kind: 'abort',
      payload: record(seat(1), {
        reason: 'equivocation',
        evidence: [signDocument('pledge', { table: t.table.id, hand: 3, commit: 'f'.repeat(64), seat: 1, nonceHash: 'b'.repeat(64) }, seat(1))] as AbortBody['evidence']
      }),
      codes: [Reason.ABORT_NO_CONFLICT]
    },
    // missing-deal that drops the documents its author held; and one tied to no COMMIT.
    { kind: 'abort', payload: record(seat(1), {}), codes: [Reason.ABORT_EVIDENCE] },
    { kind: 'abort', payload: record(seat(2), { commit: null }), codes: [Reason.ABORT_NO_COMMIT] },
    // A missing-pledge blaming a seat whose pledge is in its evidence; a beacon-unavailable blaming a seat.
    { kind: 'abort', payload: signDocument('abort', { ...missingNonce.body, reason: 'missing-pledge', evidence: missingNonce.body.evidence.filter(e => e.type === 'pledge'), blame: [seat(0).peerId] }, dealer), codes: [Reason.ABORT_BLAME] },
    // Evidence from another hand: hand 2's pledges in hand 3's record.
    { kind: 'abort', payload: signDocument('abort', { ...missingNonce.body, evidence: [...r2.pledges] as AbortBody['evidence'], blame: [] }, dealer), codes: [Reason.ABORT_FOREIGN_EVIDENCE, Reason.ABORT_EVIDENCE, Reason.ABORT_BLAME] },
    // A dealer-stopped record whose secret does not open the commitment.
    { kind: 'abort', payload: signDocument('abort', { ...missingNonce.body, reason: 'dealer-stopped', blame: [t.table.dealer], secret: '0'.repeat(64), evidence: missingNonce.body.evidence.filter(e => e.type !== 'view') }, dealer), codes: [Reason.ABORT_SECRET] },
    // Hand 4 dropped: hand 5 follows hand 3.
    { kind: 'receipt', payload: r5, codes: [Reason.CHAIN_GAP] }
  ]
  tmp = await mkdtemp(join(tmpdir(), 'fairdeal-evidence-'))
  file = join(tmp, 'log.jsonl')
  await writeFile(file, signedLogLines(dealer, entries).join('\n') + '\n')
  expected = entries.flatMap((e, seq) => e.codes.length === 0 ? [] : [{ seq, codes: e.codes, ...(e.incomplete === true ? { incomplete: true as const } : {}) }])
})

afterAll(async () => { if (tmp !== undefined) await rm(tmp, { recursive: true, force: true }) })

describe('fairdeal verify names every weak piece of evidence', () => {
  it('--json: each entry fails with its rule\'s code; incomplete receipts are counted apart', async () => {
    const r = await fairdeal('verify', file, '--json')
    expect(r.code).toBe(1)
    const objects = r.lines.map(l => JSON.parse(l) as { seq: number, codes?: string[], incomplete?: boolean, count?: number })
    const summary = objects.pop() as unknown as { passed: number, failed: number, incomplete: number }
    expect(objects.map(o => ({ seq: o.seq, codes: o.codes, ...(o.incomplete === true ? { incomplete: true } : {}) }))).toEqual(expected)
    expect(summary).toMatchObject({ passed: 3, failed: 9, incomplete: 2 })
  })

  it('text: a receipt with a missing ack says incomplete, and verify exits 1', async () => {
    const r = withLines(await cliInProcess('verify', file, '--workers', '0'))
    expect(r.code).toBe(1)
    expect(r.lines.filter(l => /^seq 1: incomplete: no countersignature from seat 2 \(12D3KooW/.test(l))).toHaveLength(1)
    expect(r.lines.at(-1)).toBe('3 passed, 9 failed, 2 incomplete')
  })

  it('a log whose only finding is a missing countersignature: its own summary and exit 3, not 1', async () => {
    const incompleteOnly = join(tmp, 'incomplete.jsonl')
    await writeFile(incompleteOnly, signedLogLines(signers.dealer, [
      { kind: 'receipt', payload: receipts.r1 },
      { kind: 'receipt', payload: { ...receipts.r2, acks: receipts.r2.acks.filter(a => a.body.seat !== 2) } }
    ]).join('\n') + '\n')
    const r = withLines(await cliInProcess('verify', incompleteOnly, '--workers', '0'))
    expect(r.lines.at(-1)).toBe('1 passed, 0 failed, 1 incomplete: nothing failed; 1 hand is not countersigned by every seat')
    expect(r.code).toBe(3)
  })
})
