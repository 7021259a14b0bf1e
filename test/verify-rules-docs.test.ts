// Every rule the docs state is enforced, and every rule enforced is stated (issue 18). Each record
// below breaks one rule of docs/protocol.md §10 / §16.4 and is re-signed with the test keys, so only
// that rule catches it; and every reason code the verifier can report is listed in the docs, and
// every code the docs list is one it reports.
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { checkAbortRecord } from '../src/core/hand/abort-rules.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { docDigest } from '../src/core/hand/digest.js'
import { Reason } from '../src/core/hand/reasons.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import type { Signer } from '../src/core/identity.js'
import type { AbortBody, AbortReason } from '../src/core/hand/messages.js'
import { DEALER, ENTRY, SECRET, SEAT1, SEAT2, timelockedHand, type Hand } from './helpers/timelock-hand.js'
import { openHand, verifyRecovered } from '../src/core/hand/recovered.js'

const codes = (record: unknown): string[] => checkAbortRecord(record).problems.map(p => p.code)

function record (h: Hand, signer: Signer, reason: AbortReason, blame: string[], evidence: Array<Signed<unknown>>, secret?: string): Signed<AbortBody> {
  return signDocument('abort', {
    table: 'tl-test', hand: 1, reason, blame, commit: h.commit, evidence: evidence as AbortBody['evidence'], detail: 'test', ...(secret === undefined ? {} : { secret })
  }, signer)
}

describe('time-locked hands are never given up once every seat pledged (docs/protocol.md §16.4)', () => {
  test('the dealer\'s beacon-unavailable, and its dealer-stopped or unreachable holding every pledge, fail with abort-timelocked alone; before every pledge they verify', async () => {
    const h = await timelockedHand()
    expect(codes(record(h, DEALER, 'beacon-unavailable', [], [...h.pledges, ...h.nonces]))).toEqual([Reason.ABORT_TIMELOCKED])
    expect(codes(record(h, DEALER, 'dealer-stopped', [DEALER.peerId], h.pledges, SECRET))).toEqual([Reason.ABORT_TIMELOCKED])
    expect(codes(record(h, DEALER, 'unreachable', [], h.pledges))).toEqual([Reason.ABORT_TIMELOCKED])
    const some = h.pledges.filter(p => p.body.seat !== 3)
    expect(codes(record(h, DEALER, 'dealer-stopped', [DEALER.peerId], some, SECRET))).toEqual([])
    expect(codes(record(h, DEALER, 'unreachable', [], some))).toEqual([])
  })

  test('a seat\'s missing-deal after its NONCE went out, and its missing-reveal, fail with abort-timelocked alone; one that never got the PLEDGES verifies', async () => {
    const h = await timelockedHand()
    const digest = docDigest(h.commit)
    const pledgesDoc = signDocument('pledges', { table: 'tl-test', hand: 1, commit: digest, pledges: h.pledges }, DEALER)
    const own = h.nonces.find(n => n.body.seat === 1) as Signed<unknown>
    expect(codes(record(h, SEAT1, 'missing-deal', [DEALER.peerId], [pledgesDoc, own]))).toEqual([Reason.ABORT_TIMELOCKED])
    expect(codes(record(h, SEAT1, 'missing-reveal', [DEALER.peerId], [pledgesDoc, own, ...h.cards]))).toEqual([Reason.ABORT_TIMELOCKED])
    expect(codes(record(h, SEAT2, 'missing-deal', [DEALER.peerId], h.pledges.filter(p => p.body.seat === 3)))).toEqual([])
  })
})

describe('the hand\'s secret is published by dealer-stopped only (docs/protocol.md §10)', () => {
  test('a record of another reason carrying `secret` fails with abort-secret alone', async () => {
    const h = await timelockedHand()
    const ownPledge = h.pledges.filter(p => p.body.seat === 3)
    expect(codes(record(h, SEAT2, 'missing-deal', [DEALER.peerId], ownPledge, SECRET))).toEqual([Reason.ABORT_SECRET])
  })
})

describe('receipt orders are strictly increasing (docs/protocol.md §9 step 5)', () => {
  test('a pledge listed twice breaks one-per-seat and the order alike: seat-set and order', async () => {
    const h = await timelockedHand()
    expect(verifyReceipt(h.receipt).status).toBe('incomplete')
    const twice = { ...h.receipt, pledges: [h.receipt.pledges[0], h.receipt.pledges[1], h.receipt.pledges[1], h.receipt.pledges[2]] }
    expect(new Set(verifyReceipt(twice).problems.map(p => p.code))).toEqual(new Set([Reason.SEAT_SET, Reason.ORDER]))
  })
})

describe('a RECOVERED record\'s pledges are by seat (docs/protocol.md §16.5)', () => {
  test('the honest record verifies; its pledges out of seat order fail with order alone', async () => {
    const h = await timelockedHand()
    const opened = openHand(h.commit, h.pledges, ENTRY, h.cards)
    const record = (pledges: typeof h.pledges): unknown => signDocument('recovered', {
      table: 'tl-test', hand: 1, commit: h.commit, pledges, beacon: ENTRY, secret: opened.secret, nonces: opened.nonces, cards: h.cards, faults: opened.faults, rule: 'replay', detail: 'test'
    }, SEAT1)
    expect(verifyRecovered(record(h.pledges)).problems).toEqual([])
    expect(verifyRecovered(record([...h.pledges].reverse())).problems.map(p => p.code)).toEqual([Reason.ORDER])
  })
})

describe('reason codes: the code and the docs list the same set', () => {
  const docs = ['docs/protocol.md', 'docs/log.md', 'docs/dealer-blind.md'].map(f => readFileSync(f, 'utf8')).join('\n')
  /** The codes the docs give a rule: backticked in a bracket, before its first ": " (`[`code`, `code`: why]`). */
  const listed = new Set([...docs.matchAll(/\[(`[^\]]*?)\]/gs)].flatMap(m => [...m[1].split(/:\s/)[0].matchAll(/`([a-z-]+)`/g)].map(c => c[1])))
  /** The Reason codes some check of src/ can report (Reason.X used outside reasons.ts, or the code written out: `codes: ['…']`, `code: '…'`, `add('…'`). */
  const sources = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap(e => e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [])
  const code = sources('src').filter(f => !f.endsWith('reasons.ts')).map(f => readFileSync(f, 'utf8')).join('\n')
  const emitted = Object.entries(Reason).filter(([key, value]) => new RegExp(`Reason\\.${key}\\b|codes: \\['${value}'\\]|code: '${value}'|add\\('${value}'`).test(code)).map(([, value]) => value)

  test('every code a check reports is listed in the docs, with the rule it names', () => {
    expect(emitted.filter(c => !listed.has(c))).toEqual([])
  })

  test('every code the docs give a rule is one the verifier reports; the one code no check reports any more (`blind`) is documented as such', () => {
    expect([...listed].filter(c => !emitted.includes(c as never))).toEqual([])
    const unused = Object.values(Reason).filter(c => !emitted.includes(c))
    expect(unused).toEqual([Reason.BLIND])
    expect(docs).toMatch(/The code `blind` is reported by no check any more/)
  })
})
