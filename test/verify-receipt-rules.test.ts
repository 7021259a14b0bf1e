// Receipts and hand chains (docs/protocol.md §9, docs/log.md "Hand chains"), in memory: honest logs
// of every game, with and without a beacon, verify; a receipt missing a countersignature is
// *incomplete* (never a pass); each order and stage rule, and each hand-chain rule, broken alone by
// documents re-signed with the test keys, fails with its code.
import { describe, expect, test } from 'vitest'
import { memoryTable, type MemoryTable } from './helpers/memory-table.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { shieldProblems } from '../src/core/hand/shield.js'
import { cardSchemeFor } from '../src/core/hand/recompute.js'
import { Reason } from '../src/core/hand/reasons.js'
import { docDigest } from '../src/core/hand/digest.js'
import { verifyLogPayload } from '../src/core/receipt.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import { GENESIS_PREV, inThreadChecker, makeEntry, makeHead, verifyLog, type LogFailure, type LogVerdict } from '../src/core/log/index.js'
import { verifyMemo } from '../src/daemon/verify-memo.js'
import { localBeaconSecretKey, localChainInfo, parseChainInfo, signLocalRound } from '../src/core/beacon/index.js'
import type { AbortBody, AckBody, CommitBody, Receipt, RevealBody, SignedAbort } from '../src/core/hand/messages.js'
import type { Signer } from '../src/core/identity.js'

const beaconKey = localBeaconSecretKey(new Uint8Array(48).fill(11))
const chain = parseChainInfo(localChainInfo({ secretKey: beaconKey, period: 3, genesisTime: 1_690_000_000 }))

interface Game { game: string, scheme: string, stages: Array<{ stage: string, taker?: number }>, beacon: boolean }
const GAMES: Game[] = [
  { game: 'coinche', scheme: 'atout-v1', stages: [], beacon: false },
  { game: 'coinche', scheme: 'atout-drand-v1', stages: [], beacon: true },
  { game: 'belote', scheme: 'atout-v1', stages: [{ stage: 'take', taker: 2 }], beacon: false },
  { game: 'belote', scheme: 'atout-drand-v1', stages: [{ stage: 'take', taker: 1 }], beacon: true },
  { game: 'duo', scheme: 'atout-v1', stages: [{ stage: 'faceUp' }], beacon: false },
  { game: 'duo', scheme: 'atout-drand-v1', stages: [{ stage: 'faceUp' }], beacon: true },
  { game: 'tarot', scheme: 'tarot-v1', stages: [{ stage: 'dog' }], beacon: false }
]

function tableFor (g: Game): MemoryTable {
  return memoryTable({ game: g.game, scheme: g.scheme, beacon: g.beacon ? { chain, marginMs: 1_000 } : null })
}

/** Plays one hand to its end: every stage of the game delivered, the beacon round fetched. */
function play (t: MemoryTable, g: Game): number {
  const { hand, effects } = t.dealer.startHand({ dealer: 0 })
  t.run(t.table.dealer, effects)
  const fetch = t.dealer.status().find(h => h.hand === hand)
  if (fetch?.phase === 'beacon') {
    const round = (lastCommit(t, hand).body.beacon as NonNullable<CommitBody['beacon']>).round
    t.run(t.table.dealer, t.dealer.beaconResult(hand, { entry: signLocalRound(beaconKey, round) }))
  }
  for (const s of g.stages) t.run(t.table.dealer, t.dealer.deliverStage(hand, s.stage, s.taker))
  t.run(t.table.dealer, t.dealer.end(hand))
  return hand
}

function lastCommit (t: MemoryTable, hand: number): Signed<CommitBody> {
  const frames = (t.frames.get(t.signers[1].peerId) ?? []).map(f => JSON.parse(new TextDecoder().decode(f)) as Signed<CommitBody>)
  return frames.filter(d => d.type === 'commit' && d.body.hand === hand)[0]
}

/** The dealer's log entries (its seat machine logs nothing twice), in order. */
function dealerLog (t: MemoryTable): Array<{ kind: string, payload: unknown }> {
  const seen = new Set<string>()
  const out: Array<{ kind: string, payload: unknown }> = []
  for (const e of t.appended.get(t.table.dealer) ?? []) {
    const d = docDigest(e.payload)
    if (seen.has(d)) continue
    seen.add(d)
    out.push({ kind: e.entry, payload: e.payload })
  }
  return out
}

/** A signed log (head first) holding these entries, signed by `owner`. */
function signedLog (owner: Signer, entries: Array<{ kind: string, payload: unknown }>): string[] {
  const lines: string[] = []
  let prev = GENESIS_PREV
  entries.forEach((e, seq) => {
    const made = makeEntry(owner, { seq, prev, kind: e.kind, payload: e.payload, time: 1_700_000_000_000 + seq })
    lines.push(made.line)
    prev = made.hash
  })
  return [makeHead(owner, entries.length - 1, prev).line, ...lines]
}

// Whole logs are checked the way a node and the CLI check them: OpenSSL Ed25519 behind a node's memo
// of valid triples (the receipts' documents recur from log to log). The rules are the core's either
// way; each receipt below is also verified alone with the pure verifier.
const memo = verifyMemo()
async function check (lines: string[]): Promise<{ verdict: LogVerdict, failures: LogFailure[] }> {
  const failures: LogFailure[] = []
  const verdict = await verifyLog(lines, { verifyPayload: verifyLogPayload, checker: inThreadChecker(verifyLogPayload, memo.verify), onFailure: f => failures.push(f) })
  return { verdict, failures }
}

const signerOf = (t: MemoryTable, peer: string): Signer => t.signers.find(s => s.peerId === peer) as Signer

/** The receipt with its REVEAL changed and re-signed by the dealer, and every ack re-signed for it by its seat. */
function resignReveal (t: MemoryTable, receipt: Receipt, change: (body: RevealBody) => void): Receipt {
  const out = structuredClone(receipt)
  change(out.reveal.body)
  out.reveal = signDocument('reveal', out.reveal.body, signerOf(t, t.table.dealer)) as Receipt['reveal']
  const digest = docDigest(out.reveal)
  out.acks = out.acks.map(a => signDocument('ack', { ...a.body, reveal: digest } satisfies AckBody, signerOf(t, a.signer)) as Receipt['acks'][number])
  return out
}

describe('honest logs of every game, with and without a beacon, verify', () => {
  test.each(GAMES)('$game ($scheme): every receipt verified, the dealer\'s log passes whole', async (g) => {
    const t = tableFor(g)
    for (let i = 0; i < 2; i++) play(t, g)
    expect(t.rejections).toEqual([])
    const entries = dealerLog(t)
    expect(entries.map(e => e.kind)).toEqual(['receipt', 'receipt'])
    for (const e of entries) expect(verifyReceipt(e.payload)).toMatchObject({ ok: true, status: 'verified', problems: [] })
    const { verdict, failures } = await check(signedLog(signerOf(t, t.table.dealer), entries))
    expect(failures).toEqual([])
    expect(verdict).toMatchObject({ passed: 2, failed: 0, incomplete: 0 })
    // A seat's log too.
    const seat = t.signers[1]
    const own = (t.appended.get(seat.peerId) ?? []).map(e => ({ kind: e.entry, payload: e.payload }))
    expect((await check(signedLog(seat, own))).verdict).toMatchObject({ passed: 2, failed: 0, incomplete: 0 })
  })
})

describe('receipts: exactly one ack per human seat, or incomplete', () => {
  test('a missing ack, or none at all, is incomplete with the seats named; never a pass, in the log too', async () => {
    const g = GAMES[0]
    const t = tableFor(g)
    play(t, g)
    const receipt = dealerLog(t)[0].payload as Receipt
    const one = { ...receipt, acks: receipt.acks.filter(a => a.body.seat !== 2) }
    const verdict = verifyReceipt(one)
    expect(verdict).toMatchObject({ ok: false, status: 'incomplete', problems: [] })
    expect(verdict.summary?.missingAcks).toEqual([2])
    const none = verifyReceipt({ ...receipt, acks: [] })
    expect(none.status).toBe('incomplete')
    expect(none.summary?.missingAcks).toEqual([0, 1, 2, 3])
    const { verdict: logVerdict, failures } = await check(signedLog(signerOf(t, t.table.dealer), [{ kind: 'receipt', payload: one }]))
    expect(logVerdict).toMatchObject({ passed: 0, failed: 0, incomplete: 1 })
    expect(failures).toHaveLength(1)
    expect(failures[0]).toMatchObject({ seq: 0, incomplete: true, codes: [Reason.INCOMPLETE] })
    expect(failures[0].problems[0]).toBe(`incomplete: no countersignature from seat 2 (${t.signers[2].peerId})`)
  })

  test('a robot\'s ack, or a seat\'s twice, fails', () => {
    const g = GAMES[0]
    const t = tableFor(g)
    play(t, g)
    const receipt = dealerLog(t)[0].payload as Receipt
    expect(verifyReceipt({ ...receipt, acks: [...receipt.acks, receipt.acks[3]] }).status).toBe('failed')
  })
})

describe('every order the docs state is checked', () => {
  test('pledges, acks and the REVEAL\'s nonces by seat', () => {
    const g = GAMES[0]
    const t = tableFor(g)
    play(t, g)
    const receipt = dealerLog(t)[0].payload as Receipt
    const swap = <T>(list: T[]): T[] => [list[1], list[0], ...list.slice(2)]
    const codes = (r: Receipt): string[] => verifyReceipt(r).problems.map(p => p.code)
    expect(codes({ ...receipt, pledges: swap(receipt.pledges) })).toEqual([Reason.ORDER])
    expect(codes({ ...receipt, acks: swap(receipt.acks) })).toEqual([Reason.ORDER])
    expect(codes(resignReveal(t, receipt, b => { b.nonces = swap(b.nonces) }))).toEqual([Reason.ORDER])
  })
})

describe('stage rules of each game', () => {
  test('belote: take without a taker fails; coinche/duo/tarot: stages twice or out of the game\'s order fail', () => {
    const codes = (r: Receipt): string[] => verifyReceipt(r).problems.map(p => p.code)
    const belote = tableFor(GAMES[2])
    play(belote, { ...GAMES[2], stages: [] })
    const b = dealerLog(belote)[0].payload as Receipt
    expect(verifyReceipt(b).status).toBe('verified')
    // The dealer lists take, without a taker: the seats' card digests do not change (take deals nothing), only the rule catches it.
    expect(codes(resignReveal(belote, b, r => { r.stages = [...r.stages, 'take'] }))).toEqual([Reason.STAGE])
    // turnUp is dealt with the deal, at once.
    expect(codes(resignReveal(belote, b, r => { r.stages = ['turnUp', 'deal'] }))).toEqual([Reason.STAGE])
    const tarot = tableFor(GAMES[6])
    play(tarot, GAMES[6])
    const tr = dealerLog(tarot)[0].payload as Receipt
    expect(codes(resignReveal(tarot, tr, r => { r.stages = ['deal', 'dog', 'dog'] }))).toEqual([Reason.STAGE])
    expect(codes(resignReveal(tarot, tr, r => { r.stages = ['dog', 'deal'] }))).toEqual([Reason.STAGE])
    const duo = tableFor(GAMES[4])
    play(duo, GAMES[4])
    const d = dealerLog(duo)[0].payload as Receipt
    expect(codes(resignReveal(duo, d, r => { r.stages = [] }))).toEqual([Reason.STAGE])
  })
})

describe('hand chains in a log', () => {
  /** A dealer's log of four coinche hands, hand 3 aborted (seat 2 never pledges). */
  function fourHands (): { t: MemoryTable, entries: Array<{ kind: string, payload: unknown }>, owner: Signer } {
    const g = GAMES[0]
    const t = tableFor(g)
    play(t, g)
    play(t, g)
    t.intercept = (from, _to, doc) => (from === t.signers[2].peerId && doc.type === 'pledge' ? undefined : doc)
    const { effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    t.clock.now += 6_000
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    t.intercept = undefined
    play(t, g)
    return { t, entries: dealerLog(t), owner: signerOf(t, t.table.dealer) }
  }

  test('receipts and records link hand to hand; pipelined hands may end out of order', async () => {
    const { entries, owner } = fourHands()
    expect(entries.map(e => e.kind)).toEqual(['receipt', 'receipt', 'abort', 'receipt'])
    expect((await check(signedLog(owner, entries))).verdict).toMatchObject({ passed: 4, failed: 0 })
    expect((await check(signedLog(owner, [entries[1], entries[0], entries[3], entries[2]]))).verdict).toMatchObject({ passed: 4, failed: 0 })
  })

  test('a dropped hand is a gap, named by its hand numbers', async () => {
    const { t, entries, owner } = fourHands()
    const { verdict, failures } = await check(signedLog(owner, [entries[0], entries[3]]))
    expect(verdict).toMatchObject({ passed: 2, failed: 2 })
    expect(failures).toEqual([{
      seq: 1,
      line: 3,
      codes: [Reason.CHAIN_GAP],
      count: 2,
      problems: [`hands 2..3 of table ${t.table.id} (dealer ${t.table.dealer}) were committed (hand 4 follows) but end in neither a receipt nor an abort record of this log`]
    }])
    // The first hands dropped: hand 1 missing is a gap too.
    const first = await check(signedLog(owner, entries.slice(1)))
    expect(first.failures.map(f => f.codes)).toEqual([[Reason.CHAIN_GAP]])
    expect(first.failures[0].problems[0]).toMatch(/^hand 1 of table /)
  })

  test('a log whose last entries are missing reports them missing, and no gap for the hands they may have held (issue 18)', async () => {
    const { entries, owner } = fourHands()
    // Hand 4 ended before hand 3 (pipelined); the last entry (hand 3's) is lost.
    const lines = signedLog(owner, [entries[0], entries[1], entries[3], entries[2]]).slice(0, -1)
    const { verdict, failures } = await check(lines)
    expect(failures.map(f => f.codes ?? [])).toEqual([[]])
    expect(failures[0].problems[0]).toMatch(/^missing/)
    expect(verdict).toMatchObject({ passed: 3, failed: 1 })
  })

  test('a COMMIT whose prev skips its predecessor, and two COMMITs for one hand, fail', async () => {
    const { t, entries, owner } = fourHands()
    const dealer = signerOf(t, t.table.dealer)
    // The dealer's own record for hand 3, re-signed around a COMMIT whose prev is another digest.
    const record = entries[2].payload as SignedAbort
    const commit = record.body.commit as Signed<CommitBody>
    const relinked = signDocument('commit', { ...commit.body, prev: 'a'.repeat(64) }, dealer)
    const bad = signDocument('abort', { ...record.body, commit: relinked, evidence: [] as AbortBody['evidence'], blame: commit.body.seats } satisfies AbortBody, dealer)
    const relinkedLog = await check(signedLog(owner, [entries[0], entries[1], { kind: 'abort', payload: bad }, entries[3]]))
    expect(relinkedLog.failures.flatMap(f => f.codes)).toContain(Reason.CHAIN_LINK)
    expect(relinkedLog.failures.find(f => f.codes?.includes(Reason.CHAIN_LINK))?.seq).toBe(2)
    // Hand 2 twice, with two COMMITs: the receipt, and a record around another COMMIT of hand 2.
    const two = (entries[1].payload as Receipt).commit
    const other = signDocument('commit', { ...two.body, deadline: two.body.deadline + 1 }, dealer)
    const fork = signDocument('abort', { ...record.body, hand: 2, commit: other, evidence: [] as AbortBody['evidence'], blame: two.body.seats } satisfies AbortBody, dealer)
    const forked = await check(signedLog(owner, [...entries, { kind: 'abort', payload: fork }]))
    expect(forked.failures.flatMap(f => f.codes)).toEqual([Reason.CHAIN_FORK])
    expect(forked.verdict).toMatchObject({ passed: 4, failed: 1 })
  })
})

describe('well-formed contributions (docs/protocol.md §5): one rule for the receipt, the shield and the invalid-reveal re-run', () => {
  test('a secret that opens the commitment but is not 64 lowercase hex fails with contribution, and the shield finds it', () => {
    const g = GAMES[0]
    const t = tableFor(g)
    play(t, g)
    const receipt = dealerLog(t)[0].payload as Receipt
    const dealer = signerOf(t, t.table.dealer)
    // The whole hand signed again (by its real signers) under a COMMIT to the secret in upper case.
    const secret = receipt.reveal.body.secret.toUpperCase()
    const commit = signDocument('commit', { ...receipt.commit.body, commitment: cardSchemeFor(receipt.commit.body).commitment(secret) }, dealer) as Receipt['commit']
    const digest = docDigest(commit)
    const pledges = receipt.pledges.map(p => signDocument('pledge', { ...p.body, commit: digest }, signerOf(t, p.signer)) as Receipt['pledges'][number])
    const nonces = receipt.reveal.body.nonces.map(n => signDocument('nonce', { ...n.body, commit: digest }, signerOf(t, n.signer)) as RevealBody['nonces'][number])
    const reveal = signDocument('reveal', { ...receipt.reveal.body, commit: digest, secret, nonces }, dealer) as Receipt['reveal']
    const verdict = verifyReceipt({ v: 1, commit, pledges, reveal, acks: [] })
    expect(verdict.problems.map(p => p.code)).toEqual([Reason.CONTRIBUTION])
    expect(verdict.problems[0].message).toMatch(/reveal: the secret is not 64 lowercase hex characters/)
    // The shield (the seat's check, and the re-run of an invalid-reveal record) decides it the same way: not refuted.
    const shield = shieldProblems({ commit, pledges, reveal, cards: [], seat: 1 })
    expect(shield.map(p => p.code)).toContain(Reason.CONTRIBUTION)
  })
})

describe('time-locked receipts (docs/protocol.md §16.1)', () => {
  test('recovered is absent when empty: recovered: [] fails with timelock', async () => {
    const { timelockedHand, DEALER } = await import('./helpers/timelock-hand.js')
    const h = await timelockedHand()
    expect(verifyReceipt(h.receipt).problems).toEqual([])
    const reveal = signDocument('reveal', { ...h.receipt.reveal.body, recovered: [] }, DEALER) as Receipt['reveal']
    const verdict = verifyReceipt({ ...h.receipt, reveal })
    expect(verdict.problems.map(p => p.code)).toEqual([Reason.TIMELOCK])
    expect(verdict.problems[0].message).toMatch(/recovered is empty/)
  })
})

describe('each failure once, at its entry, with who is at fault (docs/log.md)', () => {
  test('a tampered receipt line fails once, the owner at fault, with no knock-on gap after it; a chain problem of a failed entry is not said twice', async () => {
    const g = GAMES[0]
    const t = tableFor(g)
    for (let i = 0; i < 3; i++) play(t, g)
    const owner = signerOf(t, t.table.dealer)
    const entries = dealerLog(t)
    const lines = signedLog(owner, entries)
    // One byte of hand 2's receipt changed after signing: the owner's signature no longer covers the line.
    lines[2] = lines[2].replace('"hand":2', '"hand":7')
    const { verdict, failures } = await check(lines)
    expect(failures.map(f => [f.seq, f.fault])).toEqual([[1, "owner"]])
    expect(verdict).toMatchObject({ passed: 2, failed: 1 })
    // Hand 2's receipt with an ack dropped and a COMMIT re-signed with another deadline: its own
    // documents answer the other COMMIT, so it fails where it is read; the fork the hand chains find
    // at the end is a consequence of the same entry and is not said a second time.
    const receipt = entries[1].payload as Receipt
    const commit = signDocument('commit', { ...receipt.commit.body, deadline: receipt.commit.body.deadline + 1 }, owner) as Receipt['commit']
    const forked = { ...receipt, commit, acks: [] }
    const second = await check(signedLog(owner, [...entries, { kind: 'receipt', payload: forked }]))
    const at3 = second.failures.filter(f => f.seq === 3)
    expect(at3).toHaveLength(1)
    expect(at3[0].incomplete).toBeUndefined()
    expect(at3[0].codes).toEqual([Reason.OTHER_COMMIT])
    expect(second.verdict.incomplete).toBe(0)
    expect(second.verdict.failed).toBe(second.failures.reduce((n, f) => n + (f.incomplete === true ? 0 : f.count), 0))
  })
})
