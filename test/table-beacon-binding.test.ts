// The beacon binding at the state-machine level (in memory, real wire encoding): what a seat
// accepts in a COMMIT's beacon field, and what the dealer does with the round it is given.
import { describe, expect, test } from 'vitest'
import { memoryTable, type MemoryTable } from './helpers/memory-table.js'
import { loadDrandFixture, tamperEntry } from './helpers/drand-server.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { verifyAbort } from '../src/core/hand/abort-rules.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import { sha256Hex } from '../src/core/bytes.js'
import { docDigest } from '../src/core/hand/digest.js'
import {
  firstRoundAfter, localBeaconSecretKey, localChainInfo, parseChainInfo, roundAt, roundTime, signLocalRound,
  type BeaconEntry, type ChainInfo
} from '../src/core/beacon/index.js'
import type { CommitBody, RevealBody, SignedAbort } from '../src/core/hand/messages.js'

const MARGIN_MS = 1_000

// A local chain (pure core signing) so any round can be produced; genesis well before the table's clock.
const secretKey = localBeaconSecretKey(new Uint8Array(48).fill(7))
const chain: ChainInfo = parseChainInfo(localChainInfo({ secretKey, period: 3, genesisTime: 1_690_000_000 }))
const otherChain: ChainInfo = parseChainInfo(localChainInfo({ secretKey: localBeaconSecretKey(new Uint8Array(48).fill(9)), period: 3, genesisTime: 1_690_000_000 }))
const quicknet = parseChainInfo(loadDrandFixture('quicknet').info)

function beaconTable (overrides: { beacon?: null } = {}): MemoryTable {
  return memoryTable({
    scheme: 'atout-drand-v1',
    beacon: overrides.beacon === null ? null : { chain, marginMs: MARGIN_MS },
    timeouts: { contributeMs: 5_000 }
  })
}

const docsOfType = (t: MemoryTable, to: string, type: string): Array<Signed<unknown>> =>
  (t.frames.get(to) ?? []).map(f => JSON.parse(new TextDecoder().decode(f)) as Signed<unknown>).filter(d => d.type === type)

/** Runs a hand until every nonce is in and the dealer waits for the bound round (the host's fetch). */
function upToBeacon (t: MemoryTable): { hand: number, round: number } {
  const { hand, effects } = t.dealer.startHand({ dealer: 0 })
  t.run(t.table.dealer, effects)
  const phase = t.dealer.status().find(h => h.hand === hand)?.phase
  if (phase !== 'beacon') throw new Error(`hand ${hand} is ${String(phase)}, not waiting for its beacon round (rejections: ${JSON.stringify(t.rejections)})`)
  const commit = docsOfType(t, t.signers[1].peerId, 'commit')[0] as Signed<CommitBody>
  return { hand, round: commit.body.beacon!.round }
}

/** Re-signs the COMMIT every seat receives with `change` applied: a rogue dealer. */
function rogueCommit (t: MemoryTable, change: (body: CommitBody) => CommitBody): void {
  const dealerSigner = t.signers[0]
  t.intercept = (from, to, doc) => doc.type === 'commit' ? signDocument('commit', change(doc.body as CommitBody), dealerSigner) : doc
}

function expectRefusedByEverySeat (t: MemoryTable, reason: RegExp): void {
  const seats = [...t.seats.keys()]
  expect(t.rejections.map(r => r.to).sort()).toEqual([...seats].sort())
  for (const r of t.rejections) expect(r.reason).toMatch(reason)
  // Nobody pledged: no contribution was made to a commit with a bad binding.
  expect(docsOfType(t, t.table.dealer, 'pledge')).toEqual([])
}

describe('a seat checks the beacon binding of every COMMIT', () => {
  test('the honest dealer binds the first round after the deadline plus the margin, and every seat pledges', () => {
    const t = beaconTable()
    const { round } = upToBeacon(t)
    expect(t.rejections).toEqual([])
    const commit = docsOfType(t, t.signers[1].peerId, 'commit')[0] as Signed<CommitBody>
    const { deadline, beacon } = commit.body
    expect(beacon?.chainHash).toBe(chain.hash)
    expect(beacon?.round).toBe(round)
    // R is due strictly after deadline + margin, and the round before it is not.
    expect(roundTime(chain, round)).toBeGreaterThan(deadline + MARGIN_MS)
    expect(roundTime(chain, round - 1)).toBeLessThanOrEqual(deadline + MARGIN_MS)
    expect(docsOfType(t, t.table.dealer, 'pledge')).toHaveLength(4)
  })

  test('a round already published at the deadline is refused', () => {
    const t = beaconTable()
    rogueCommit(t, body => ({ ...body, beacon: { ...body.beacon!, round: roundAt(chain, body.deadline) } }))
    t.run(t.table.dealer, t.dealer.startHand({ dealer: 0 }).effects)
    expectRefusedByEverySeat(t, /published before the contribution deadline/)
  })

  test('a round due exactly at the deadline is refused (it must come strictly after)', () => {
    const t = beaconTable()
    rogueCommit(t, body => {
      const round = roundAt(chain, body.deadline) + 1
      return { ...body, deadline: roundTime(chain, round), beacon: { ...body.beacon!, round } }
    })
    t.run(t.table.dealer, t.dealer.startHand({ dealer: 0 }).effects)
    expectRefusedByEverySeat(t, /published before the contribution deadline/)
  })

  test('a round far after the one the table\'s rule gives is refused (the hand would stall)', () => {
    const t = beaconTable()
    rogueCommit(t, body => ({ ...body, beacon: { ...body.beacon!, round: body.beacon!.round + 1_000 } }))
    t.run(t.table.dealer, t.dealer.startHand({ dealer: 0 }).effects)
    expectRefusedByEverySeat(t, /the table's rule .* gives round \d+/)
  })

  test('another chain is refused, named by its own hash and info', () => {
    const t = beaconTable()
    rogueCommit(t, body => ({ ...body, beacon: { chainHash: otherChain.hash, round: firstRoundAfter(otherChain, body.deadline, MARGIN_MS), info: { ...otherChain } } }))
    t.run(t.table.dealer, t.dealer.startHand({ dealer: 0 }).effects)
    expectRefusedByEverySeat(t, /another drand chain/)
  })

  test('a real public chain (quicknet) is refused by a table bound to another chain', () => {
    const t = beaconTable()
    rogueCommit(t, body => ({ ...body, beacon: { chainHash: quicknet.hash, round: firstRoundAfter(quicknet, body.deadline, MARGIN_MS), info: { ...quicknet } } }))
    t.run(t.table.dealer, t.dealer.startHand({ dealer: 0 }).effects)
    expectRefusedByEverySeat(t, /another drand chain/)
  })

  test('the table\'s chain hash over another chain\'s info is refused', () => {
    const t = beaconTable()
    rogueCommit(t, body => ({ ...body, beacon: { ...body.beacon!, info: { ...otherChain } } }))
    t.run(t.table.dealer, t.dealer.startHand({ dealer: 0 }).effects)
    expectRefusedByEverySeat(t, /another drand chain/)
  })

  test('chain info whose hash does not recompute is refused', () => {
    const t = beaconTable()
    rogueCommit(t, body => ({ ...body, beacon: { ...body.beacon!, info: { ...chain, public_key: otherChain.public_key } } }))
    t.run(t.table.dealer, t.dealer.startHand({ dealer: 0 }).effects)
    expectRefusedByEverySeat(t, /commit beacon chain info: /)
  })

  test('a COMMIT without a round is refused by a beacon table, and one with a round by a table without', () => {
    const t = beaconTable()
    rogueCommit(t, body => ({ ...body, beacon: null }))
    t.run(t.table.dealer, t.dealer.startHand({ dealer: 0 }).effects)
    expectRefusedByEverySeat(t, /binds no beacon round, the table requires one/)

    const plain = memoryTable({ scheme: 'atout-v1' })
    rogueCommit(plain, body => ({ ...body, scheme: 'atout-v1', beacon: { chainHash: chain.hash, round: firstRoundAfter(chain, body.deadline, MARGIN_MS), info: { ...chain } } }))
    plain.run(plain.table.dealer, plain.dealer.startHand({ dealer: 0 }).effects)
    expectRefusedByEverySeat(plain, /binds a beacon the table does not use/)
  })
})

describe('the dealer deals only with the bound round', () => {
  test('with the bound round: a full hand whose receipt verifies alone and whose key holds the round', () => {
    const t = beaconTable()
    const { hand, round } = upToBeacon(t)
    const entry = signLocalRound(secretKey, round)
    t.run(t.table.dealer, t.dealer.beaconResult(hand, { entry }))
    for (const seat of t.seats.keys()) expect(docsOfType(t, seat, 'cards').length).toBeGreaterThan(0)
    t.run(t.table.dealer, t.dealer.end(hand))
    expect(t.rejections).toEqual([])
    const receipt = (t.appended.get(t.signers[2].peerId) ?? []).find(e => e.entry === 'receipt')?.payload
    const verdict = verifyReceipt(receipt)
    expect(verdict.problems).toEqual([])
    expect(verdict.summary?.beaconRound).toBe(round)
    // The key is atout-v1's text with the chain hash, the round and its randomness appended.
    const reveal = (receipt as { reveal: Signed<RevealBody> }).reveal.body
    const text = ['atout-drand-v1', reveal.secret, ...reveal.nonces.map(n => n.body.nonce), chain.hash, String(round), entry.randomness].join('|')
    expect(verdict.summary?.key).toBe(sha256Hex(text))
  })

  const refusals: Array<[string, (round: number) => { entry: BeaconEntry } | { error: string }, RegExp]> = [
    ['the fetch failed', () => ({ error: 'timeout: round not obtained before the deadline' }), /timeout: round not obtained/],
    ['another round was handed back', (round) => ({ entry: signLocalRound(secretKey, round + 1) }), /gave round \d+, not the bound round/]
  ]
  for (const [what, result, detail] of refusals) {
    test(`no cards, a signed beacon-unavailable abort in every log, when ${what}`, () => {
      const t = beaconTable()
      const { hand, round } = upToBeacon(t)
      t.run(t.table.dealer, t.dealer.beaconResult(hand, result(round)))
      expect(t.rejections).toEqual([])
      for (const seat of t.seats.keys()) {
        expect(docsOfType(t, seat, 'cards')).toEqual([])
        const log = t.appended.get(seat) ?? []
        // The dealer's node holds seat 0: its dealer and its seat each log the record.
        expect(log.map(e => e.entry), seat).toEqual(seat === t.table.dealer ? ['abort', 'abort'] : ['abort'])
        const verdict = verifyAbort(log[0].payload)
        expect(verdict.problems).toEqual([])
        expect(verdict.summary).toMatchObject({ reason: 'beacon-unavailable', blame: [], by: t.table.dealer })
        expect((log[0].payload as SignedAbort).body.detail).toMatch(detail)
      }
      // A late result for the aborted hand changes nothing.
      expect(t.dealer.beaconResult(hand, { entry: signLocalRound(secretKey, round) })).toEqual([])
    })
  }

  test('a reveal carrying a beacon entry that does not verify fails every seat\'s own check', () => {
    const t = beaconTable()
    const { hand, round } = upToBeacon(t)
    t.run(t.table.dealer, t.dealer.beaconResult(hand, { entry: signLocalRound(secretKey, round) }))
    // A dealer that swaps in a forged entry at the reveal (and signs it) is caught by each seat alone.
    const dealerSigner = t.signers[0]
    const forged = tamperEntry(signLocalRound(secretKey, round))
    t.intercept = (from, to, doc) => doc.type === 'reveal'
      ? signDocument('reveal', { ...(doc.body as RevealBody), beacon: forged }, dealerSigner)
      : doc
    t.run(t.table.dealer, t.dealer.end(hand))
    for (const [seat] of t.seats) {
      // One record per seat. On the dealer's node its own seat's record also reaches its dealer
      // machine, which logs it too (the harness keeps both machines' log effects; the node's host
      // keeps the dealer's): the same signed document twice.
      const aborts = (t.appended.get(seat) ?? []).filter(e => e.entry === 'abort' && (e.payload as SignedAbort).signer === seat)
        .filter((e, i, all) => all.findIndex(o => docDigest(o.payload) === docDigest(e.payload)) === i)
      expect(aborts, seat).toHaveLength(1)
      const body = (aborts[0].payload as SignedAbort).body
      expect(body.reason).toBe('invalid-reveal')
      expect(body.blame).toEqual([t.table.dealer])
      expect(body.detail).toMatch(/beacon: (bad-signature|malformed-point)/)
      expect((t.appended.get(seat) ?? []).some(e => e.entry === 'receipt')).toBe(false)
    }
  })
})
