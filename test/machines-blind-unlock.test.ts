// Time-locked blind tables (docs/dealer-blind.md §14): nobody can walk away. In memory, on the real
// wire encoding, one injected clock, a local beacon: every hand key also travels sealed to the key
// round; a seat that withholds its shares after seeing its cards, or its hand key after the BEND, is
// opened from that timelock once the round is out, the others get their cards and finish the hand,
// the receipt verifies offline and the dealer's signed BUNLOCK in it names the seat.
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { verifyLogPayload } from '../src/core/receipt.js'
import { checkAbortRecord } from '../src/core/hand/abort-rules.js'
import { blindKeyRound } from '../src/core/hand/blind-timelock.js'
import { localBeaconSecretKey, localChainInfo, parseChainInfo, roundTime, signLocalRound } from '../src/core/beacon/index.js'
import { scalarToHex } from '../src/core/blind/index.js'
import { sealTimelockText, timelockTarget } from '../src/core/timelock/index.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import { docDigest } from '../src/core/hand/digest.js'
import { blindTable, ids, signers } from './helpers/blind-memory.js'
import { signAbort } from '../src/protocol/abort.js'

const beaconKey = localBeaconSecretKey(new Uint8Array(48).fill(7))
const chain = parseChainInfo(localChainInfo({ secretKey: beaconKey, period: 3, genesisTime: 900 }))
const HAND_MS = 600_000
const timelocked = { beacon: { chain, marginMs: 1_000 }, timelock: { rule: 'open' as const, handMs: HAND_MS } }

type Table = ReturnType<typeof blindTable>

/**
 * A coinche table of 4 seats (duo: 2) whose last seat walks away: once `gone.on` nothing to or from
 * it arrives; before, `withhold` drops its frames of that type and `change` rewrites the others.
 */
function table (game: 'coinche' | 'duo', withhold: string | null, change?: (doc: Signed<any>) => Signed<any>): { t: Table, gone: { on: boolean }, walker: number } {
  const gone = { on: false }
  const seats = game === 'duo' ? ids.slice(0, 2) : ids
  const walker = seats.length - 1
  const t = blindTable(seats, {
    ...timelocked,
    game,
    intercept: (from, to, doc) => {
      if (gone.on && (from === ids[walker] || to === ids[walker])) return undefined
      if (from === ids[walker] && doc.type === withhold) return undefined
      return from === ids[walker] && change !== undefined ? change(doc) : doc
    }
  })
  return { t, gone, walker }
}

const commitOf = (t: Table): any => (t.nodes.get(ids[1])!.saved.get([...t.nodes.get(ids[1])!.saved.keys()].find(k => k.includes('/hand/'))!) as any).commit

/** Deals hand 1 through its bound round. */
function deal (t: Table): { hand: number, round: number, keyRound: number } {
  const hand = t.deal()
  const { round } = commitOf(t).body.beacon
  t.run(t.dealerNode, 'dealer', t.dealerNode.dealer!.beaconResult(hand, { entry: signLocalRound(beaconKey, round) }))
  return { hand, round, keyRound: commitOf(t).body.keyRound }
}

const privateCards = (t: Table, seat: number, hand: number): unknown[] => t.nodes.get(ids[seat])!.seat!.cards(hand).filter(c => !c.public && c.seat === seat)
const receiptsOf = (t: Table, seats: number[]): unknown[] => seats.map(s => t.nodes.get(ids[s])!.log.find(l => l.entry === 'receipt')?.payload)

/** The seats but the walker end the hand: one receipt in every log, verifying, the walker's ack missing; returns it. */
function endWithout (t: Table, walker: number): any {
  const others = [...Array(walker).keys()]
  const receipts = receiptsOf(t, others)
  for (const r of receipts) expect(canonicalJson(r)).toBe(canonicalJson(receipts[0]))
  const verdict = verifyReceipt(receipts[0])
  expect(verdict.status).toBe('incomplete')
  expect(verdict.problems).toEqual([])
  expect((receipts[0] as any).acks.map((a: any) => a.body.seat)).toEqual(others)
  expect([...t.nodes.values()].flatMap(n => n.log.filter(l => l.entry === 'abort'))).toEqual([])
  return receipts[0]
}

describe('time-locked blind hands: nobody can walk away', () => {
  it('coinche, seat 3 withholds its shares after seeing its cards: at the key round (handMs after the bound round, every key sealed to it) the dealer opens its key, the others get their cards, the hand ends with a receipt naming it', () => {
    const { t, gone } = table('coinche', 'bshares')
    const { hand, round, keyRound } = deal(t)
    expect(keyRound).toBe(blindKeyRound(chain, round, HAND_MS))
    expect(roundTime(chain, keyRound)).toBeGreaterThan(roundTime(chain, round) + HAND_MS)
    const bkeys = t.nodes.get(ids[1])!.frames.find(f => f.type === 'bkeys')!
    for (const k of bkeys.body.keys) expect(timelockTarget(k.body.timelock)).toEqual({ chainHash: chain.hash, round: keyRound })
    expect(privateCards(t, 3, hand)).toHaveLength(1)
    gone.on = true
    for (const s of [0, 1, 2]) expect(privateCards(t, s, hand)).toEqual([])
    expect(() => { t.end(hand) }).toThrow(/shares due from seat 3/)
    // At the shares' deadline the dealer waits for the key round instead of aborting; a beacon failure is retried.
    t.tick(20_001)
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'unlocking' }])
    expect(t.dealerNode.dealer!.beaconResult(hand, { error: 'round not out yet' })).toEqual([])
    // Retried contributeMs after the key round's time, not before.
    expect(t.dealerNode.dealer!.tick(roundTime(chain, keyRound))).toEqual([])
    expect(t.dealerNode.dealer!.tick(roundTime(chain, keyRound) + 20_001).filter(e => e.kind === 'fetchBeacon')).toEqual([{ kind: 'fetchBeacon', hand, round: keyRound }])
    t.run(t.dealerNode, 'dealer', t.dealerNode.dealer!.beaconResult(hand, { entry: signLocalRound(beaconKey, keyRound) }))
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'dealt' }])
    for (const s of [0, 1, 2]) expect(privateCards(t, s, hand)).toHaveLength(1)
    for (const s of [1, 2]) expect(t.nodes.get(ids[s])!.events.filter(e => e.type === 'unlocked')).toEqual([{ role: 'seat', hand, type: 'unlocked', seats: [3], reason: 'missing-shares' }])
    t.end(hand)
    const receipt = endWithout(t, 3)
    const unlock = receipt.reveal.body.unlock
    expect(unlock.signer).toBe(ids[0])
    expect(unlock.body.keys.map((k: any) => [k.seat, k.reason])).toEqual([[3, 'missing-shares']])
    // What verify and log show print for the hand: seat 3 named.
    const line = verifyLogPayload('receipt', receipt).problems.flatMap(p => typeof p === 'string' || p.code !== 'receipt-incomplete' ? [] : [p.message])[0]
    expect(line).toBe(`incomplete: no countersignature from seat 3 (${ids[3]}); seat 3 walked away (withheld its shares; its key was opened from its timelock)`)
    expect(receipt.reveal.body.secrets.map((s: any) => s.body.seat)).toEqual([0, 1, 2])
    expect(t.rejections).toEqual([])
  }, 60_000)

  it('duo, seat 1 withholds its hand key after the BEND: at the key round it is opened, the BREVEAL carries the BUNLOCK, the receipt verifies; tampered, it fails', () => {
    const { t, gone, walker } = table('duo', null)
    const { hand, keyRound } = deal(t)
    for (const s of [0, 1]) expect(privateCards(t, s, hand).length).toBeGreaterThan(0)
    gone.on = true
    t.end(hand)
    t.tick(10_001)
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'unlocking' }])
    t.run(t.dealerNode, 'dealer', t.dealerNode.dealer!.beaconResult(hand, { entry: signLocalRound(beaconKey, keyRound) }))
    const receipt = endWithout(t, walker)
    expect(receipt.reveal.body.unlock.body.keys.map((k: any) => [k.seat, k.reason])).toEqual([[1, 'missing-secret']])
    // The verifier opens the timelock itself: a key that is not what it holds fails, so does another round's entry.
    const forged = structuredClone(receipt)
    forged.reveal.body.unlock.body.keys[0].secret = scalarToHex(5n)
    forged.reveal.body.unlock = signDocument('bunlock', forged.reveal.body.unlock.body, signers[0])
    forged.reveal = signDocument('breveal', forged.reveal.body, signers[0])
    expect(verifyReceipt(forged).problems.map(p => p.code)).toContain('blind-hand-key')
    // A key that is not a canonical scalar (64 hex characters, not below ℓ): a problem, not a throw (issue 18).
    const huge = structuredClone(receipt)
    huge.reveal.body.unlock.body.keys[0].secret = 'f'.repeat(64)
    huge.reveal.body.unlock = signDocument('bunlock', huge.reveal.body.unlock.body, signers[0])
    huge.reveal = signDocument('breveal', huge.reveal.body, signers[0])
    expect(verifyReceipt(huge).problems.map(p => p.code)).toEqual(['blind-hand-key'])
    const early = structuredClone(receipt)
    early.reveal.body.unlock = signDocument('bunlock', { ...early.reveal.body.unlock.body, beacon: signLocalRound(beaconKey, keyRound - 1) }, signers[0])
    early.reveal = signDocument('breveal', early.reveal.body, signers[0])
    expect(verifyReceipt(early).problems.map(p => p.message).join('\n')).toMatch(/unlock: key round entry/)
    // An invalid-reveal record runs the receipt's hand-key rule on the BREVEAL (issue 18): the honest
    // one, with its BUNLOCK, refutes the walker's record; the forged one holds a seat's record.
    const deals = t.nodes.get(ids[0])!.frames.filter((f: any) => f.type === 'bdeal')
    const against = (reveal: any, by: number): string[] => checkAbortRecord(signAbort(receipt.commit, 'invalid-reveal', [ids[0]], 'test', [...receipt.keys, ...deals, reveal], signers[by])).problems.map(p => p.code)
    expect(against(receipt.reveal, 1)).toEqual(['abort-refuted'])
    expect(against(forged.reveal, 0)).toEqual([])
    expect(against(early.reveal, 0)).toEqual([])
    expect(t.rejections).toEqual([])
  }, 60_000)

  it('a seat whose timelock does not hold its key and walks away is named as on other tables (missing-shares), a record that verifies', () => {
    // Seat 1 seals another key: nobody can tell before the key round.
    const { t, gone } = table('duo', 'bshares', doc => doc.type !== 'bkey'
      ? doc
      : signDocument('bkey', { ...doc.body, timelock: sealTimelockText(scalarToHex(7n), chain, timelockTarget(doc.body.timelock).round, (n: number) => new Uint8Array(n).fill(1)) }, signers[ids.indexOf(doc.signer)]))
    const { hand, keyRound } = deal(t)
    gone.on = true
    t.tick(20_001)
    t.run(t.dealerNode, 'dealer', t.dealerNode.dealer!.beaconResult(hand, { entry: signLocalRound(beaconKey, keyRound) }))
    const record = t.dealerNode.log.find(l => l.entry === 'abort')!.payload
    expect(record.body.reason).toBe('missing-shares')
    expect(record.body.blame).toEqual([ids[1]])
    expect(record.body.detail).toMatch(/timelock of seat 1 opens to a key that is not its public key's/)
    expect(checkAbortRecord(record, { table: { id: 'blind-mem', dealer: ids[0], seats: ids.slice(0, 2) } }).problems).toEqual([])
  }, 60_000)

  it('a missing-shares record of a time-locked hand without the key round\'s entry, or blaming a seat whose timelock opens, fails (re-signed with the test keys)', () => {
    // Duo, seat 1 withholds its shares and its timelock is honest: the dealer unlocks it (no record).
    const { t, gone } = table('duo', 'bshares')
    const { hand, keyRound } = deal(t)
    gone.on = true
    t.tick(20_001)
    const entry = signLocalRound(beaconKey, keyRound)
    t.run(t.dealerNode, 'dealer', t.dealerNode.dealer!.beaconResult(hand, { entry }))
    expect(t.dealerNode.log.filter(l => l.entry === 'abort')).toEqual([])
    // What a dealer that blamed seat 1 instead would sign: every BDEAL and share it held, seat 1's key.
    const snap = t.dealerNode.saved.get([...t.dealerNode.saved.keys()].find(k => k.includes('/hand/') && !k.endsWith('/play'))!) as any
    const evidence = [...snap.deals, ...snap.sharesIn, snap.keys[1]]
    const spec = { table: { id: 'blind-mem', dealer: ids[0], seats: ids.slice(0, 2) } }
    const codes = (record: any): string[] => checkAbortRecord(record, spec).problems.map(p => p.code)
    // Without the key round's entry: the dealer was to wait for it and open the seat's timelock.
    expect(codes(signAbort(snap.commit, 'missing-shares', [ids[1]], 'silent', evidence, signers[0]))).toEqual(['abort-timelocked'])
    // With it: seat 1's timelock opens to its key, so seat 1 is unlocked, not blamed.
    expect(codes(signAbort(snap.commit, 'missing-shares', [ids[1]], 'silent', evidence, signers[0], undefined, entry))).toEqual(['abort-timelocked'])
    // Its key left out: nothing shows its timelock fails.
    expect(codes(signAbort(snap.commit, 'missing-shares', [ids[1]], 'silent', evidence.slice(0, -1), signers[0], undefined, entry))).toContain('abort-evidence')
    // Another round's entry.
    expect(codes(signAbort(snap.commit, 'missing-shares', [ids[1]], 'silent', evidence, signers[0], undefined, signLocalRound(beaconKey, keyRound - 1)))).toEqual(['abort-timelocked'])
    // A key round entry on a record that is not a time-locked missing-shares or missing-secret one.
    expect(codes(signAbort(snap.commit, 'missing-key', [ids[1]], 'silent', [snap.keys[0]], signers[0], undefined, entry))).toContain('abort-evidence')
  }, 60_000)

  it('a key without its timelock is refused by the dealer (then missing-key); a COMMIT without a key round is refused by a time-locked seat', () => {
    const { t } = table('coinche', null, doc => doc.type === 'bkey' ? signDocument('bkey', (({ timelock, ...rest }) => rest)(doc.body), signers[3]) : doc)
    t.deal()
    expect(t.rejections.join('\n')).toMatch(/key of seat 3: no timelock on a time-locked table/)
    const first = commitOf(t)
    const { keyRound, ...body } = first.body
    expect(keyRound).toBeGreaterThan(body.beacon.round)
    const second = signDocument('commit', { ...body, hand: 2, prev: docDigest(first) }, signers[0])
    expect(() => t.nodes.get(ids[1])!.seat!.receive(ids[0], second)).toThrow(/commit: names no key round on a time-locked table/)
  }, 60_000)

  it('a seat shown a key without its timelock records invalid-key against its author before it shuffles; a record whose key carries its timelock is refuted', () => {
    let proper: Signed<any> | undefined
    const t = blindTable(ids.slice(0, 2), {
      ...timelocked,
      game: 'duo',
      // What seat 1 is shown: seat 0's key stripped of its timelock (signed again by seat 0's node, the dealer's).
      intercept: (_from, to, doc) => {
        if (doc.type !== 'bkeys' || to !== ids[1]) return doc
        proper = doc.body.keys[0]
        const { timelock, ...bare } = doc.body.keys[0].body
        const keys = [signDocument('bkey', bare, signers[0]), ...doc.body.keys.slice(1)]
        return signDocument('bkeys', { ...doc.body, keys }, signers[0])
      }
    })
    t.deal()
    const record = t.nodes.get(ids[1])!.log.find(l => l.entry === 'abort')!.payload
    expect([record.body.reason, record.body.blame, record.body.detail]).toEqual(['invalid-key', [ids[0]], 'key of seat 0: no timelock on a time-locked table'])
    expect(t.nodes.get(ids[1])!.frames.filter(f => f.type === 'bshuffle' && f.signer === ids[1])).toEqual([])
    const table = { table: { id: 'blind-mem', dealer: ids[0], seats: ids.slice(0, 2) } }
    expect(checkAbortRecord(record, table).problems).toEqual([])
    const refuted = signAbort(record.body.commit, 'invalid-key', [ids[0]], 'no timelock', [proper!], signers[1])
    expect(checkAbortRecord(refuted, table).problems.map(p => p.code)).toEqual(['abort-refuted'])
  }, 60_000)

  it('restarts: a dealer restarted while it waits for the key round fetches it again and finishes; a seat restarted after the BUNLOCK keeps it; the seat named, back before the end, takes it and finishes the hand', () => {
    const { t, gone, walker } = table('duo', 'bshares')
    const { hand, keyRound } = deal(t)
    gone.on = true
    t.tick(20_001)
    expect(t.restartDealer().filter(e => e.kind === 'fetchBeacon')).toEqual([{ kind: 'fetchBeacon', hand, round: keyRound }])
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'unlocking' }])
    t.run(t.dealerNode, 'dealer', t.dealerNode.dealer!.beaconResult(hand, { entry: signLocalRound(beaconKey, keyRound) }))
    expect(privateCards(t, 0, hand).length).toBeGreaterThan(0)
    t.restartSeat(ids[0])
    t.restartDealer()
    expect(t.dealerNode.dealer!.status()).toMatchObject([{ hand, phase: 'dealt' }])
    // Seat 1 was only cut off: back before the end, it asks, takes the BUNLOCK naming it with its own
    // key, and finishes the hand with the others: one receipt everywhere, seat 1 named in it.
    gone.on = false
    t.restartSeat(ids[walker])
    expect(t.nodes.get(ids[walker])!.events.filter(e => e.type === 'unlocked')).toEqual([{ role: 'seat', hand, type: 'unlocked', seats: [walker], reason: 'missing-shares' }])
    t.end(hand)
    const receipts = receiptsOf(t, [0, 1])
    expect(canonicalJson(receipts[1])).toBe(canonicalJson(receipts[0]))
    expect(verifyReceipt(receipts[0]).problems).toEqual([])
    expect((receipts[0] as any).reveal.body.unlock.body.keys.map((k: any) => k.seat)).toEqual([walker])
    // The hand did not wait for seat 1's countersignature: it came after the receipt, and is refused as late.
    expect(t.rejections.map(r => r.slice(6))).toEqual(['ack for hand 1, which is not in play (replayed or late)'])
  }, 60_000)
})
