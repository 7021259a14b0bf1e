// Time-locked tables (docs/protocol.md §6a, §10a) on the pure machines in memory, injected clock,
// a local beacon: ciphertexts produced and checked before any nonce leaves, a withheld nonce
// recovered by the dealer, a stopped dealer's hand finished by the seats (and by the dealer after
// its restart) with RECOVERED records whose deal verifies offline, and faults named with evidence.
import { describe, expect, test } from 'vitest'
import { memoryTable, type MemoryTable } from './helpers/memory-table.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { verifyRecovered, type SignedRecovered } from '../src/core/hand/recovered.js'
import { localBeaconSecretKey, localChainInfo, parseChainInfo, signLocalRound, type ChainInfo } from '../src/core/beacon/index.js'
import { sealTimelockText, timelockTarget } from '../src/core/timelock/index.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import { docDigest } from '../src/core/hand/digest.js'
import type { CardsBody, CommitBody, PledgeBody, PledgesBody, Receipt, SignedCommit, SignedPledge } from '../src/core/hand/messages.js'
import type { Effect } from '../src/protocol/types.js'
import { randomBytes } from 'node:crypto'
import { signAbort } from '../src/protocol/abort.js'
import { dealerHandKey } from '../src/protocol/dealer.js'
import { parseNodeConfig } from '../src/daemon/config.js'
import { seatWaitText } from '../src/cli/commands/hand.js'

const beaconKey = localBeaconSecretKey(new Uint8Array(48).fill(7))
const chain: ChainInfo = parseChainInfo(localChainInfo({ secretKey: beaconKey, period: 3, genesisTime: 1_690_000_000 }))
const otherKey = localBeaconSecretKey(new Uint8Array(48).fill(9))
const otherChain: ChainInfo = parseChainInfo(localChainInfo({ secretKey: otherKey, period: 3, genesisTime: 1_690_000_000 }))
const random = (n: number): Uint8Array => new Uint8Array(randomBytes(n))

function lockedTable (): MemoryTable {
  return memoryTable({ scheme: 'atout-drand-v1', beacon: { chain, marginMs: 1_000 }, timelock: { rule: 'open' } })
}

const peerOf = (t: MemoryTable, seat: number): string => t.signers[seat].peerId
const logOf = (t: MemoryTable, peer: string): Array<{ entry: string, hand: number, payload: unknown }> => t.appended.get(peer) ?? []
const roundOf = (t: MemoryTable, hand: number): number => (commitOf(t, hand).body.beacon as NonNullable<CommitBody['beacon']>).round

const commits = new WeakMap<MemoryTable, SignedCommit>()
/** The COMMIT seat 1 took (kept at the start: a finished hand's saved state is gone). */
function commitOf (t: MemoryTable, _hand: number): SignedCommit {
  return commits.get(t) as SignedCommit
}

function start (t: MemoryTable): number {
  const { hand, effects } = t.dealer.startHand({ dealer: 0 })
  t.run(t.table.dealer, effects)
  const saved = t.persisted.get(peerOf(t, 1))?.get(`seat/${t.table.id}/hand/${String(hand).padStart(16, '0')}`) as { commit: SignedCommit } | undefined
  if (saved !== undefined) commits.set(t, saved.commit)
  return hand
}

/** The dealer's node goes silent: nothing it sends arrives any more. */
function silenceDealer (t: MemoryTable): void {
  t.intercept = (from, _to, doc) => from === t.table.dealer ? undefined : doc
}

/** Every seat machine (but the dealer node's own, which is silenced with it) gives up waiting and finishes from R. */
function seatsRecover (t: MemoryTable, hand: number, at: number): void {
  t.clock.now = at
  for (const [peer, seat] of t.seats) {
    if (peer === t.table.dealer) continue
    // It asks the dealer first (docs/protocol.md §7); no answer comes, so it finishes the hand.
    const asked = seat.tick(t.clock.now)
    expect(asked.map(e => e.kind === 'send' ? e.doc.type : e.kind)).toEqual(['ask'])
    t.run(peer, asked)
  }
  t.clock.now = at + 5_001
  for (const [peer, seat] of t.seats) {
    if (peer === t.table.dealer) continue
    const effects: Effect[] = seat.tick(t.clock.now)
    t.run(peer, effects)
    expect(effects.filter(e => e.kind === 'fetchBeacon'), `seat ${seat.seat} fetches R`).toEqual([{ kind: 'fetchBeacon', hand, round: roundOf(t, hand) }])
    t.run(peer, seat.beaconResult(hand, { entry: signLocalRound(beaconKey, roundOf(t, hand)) }))
  }
}

function recoveredOf (t: MemoryTable, peer: string, hand: number): SignedRecovered {
  const entries = logOf(t, peer).filter(e => e.hand === hand && e.entry === 'recovered')
  expect(entries, `${peer} logged one RECOVERED record`).toHaveLength(1)
  return entries[0].payload as SignedRecovered
}

describe('time-locked hands', () => {
  test('every COMMIT and PLEDGE carries its value locked to the bound round; the receipt verifies', () => {
    const t = lockedTable()
    const hand = start(t)
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'beacon' }])
    const round = roundOf(t, hand)
    expect(timelockTarget(commitOf(t, hand).body.timelock as string)).toEqual({ round, chainHash: chain.hash })
    t.run(t.table.dealer, t.dealer.beaconResult(hand, { entry: signLocalRound(beaconKey, round) }))
    t.run(t.table.dealer, t.dealer.end(hand))
    const receipt = logOf(t, t.table.dealer).find(e => e.entry === 'receipt')?.payload as Receipt
    expect(verifyReceipt(receipt).problems).toEqual([])
    expect(receipt.pledges.every(p => p.body.timelock !== undefined)).toBe(true)
    expect(t.rejections).toEqual([])
  })

  test('the bound round cannot be had (the beacon fails, or the node stops waiting): the dealer signs no beacon-unavailable, it finishes the hand from its timelocks once R comes', () => {
    const t = lockedTable()
    const hand = start(t)
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'beacon' }])
    const failed = t.dealer.beaconResult(hand, { error: 'AbortError: This operation was aborted' })
    expect(failed.filter(e => e.kind === 'append' || e.kind === 'send')).toEqual([])
    t.run(t.table.dealer, failed)
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'recovering' }])
    t.run(t.table.dealer, t.dealer.beaconResult(hand, { entry: signLocalRound(beaconKey, roundOf(t, hand)) }))
    expect(logOf(t, t.table.dealer).map(e => e.entry)).toEqual(['recovered'])
    expect(verifyRecovered(recoveredOf(t, t.table.dealer, hand)).problems).toEqual([])
  })

  test('a seat that pledges and never sends its nonce: the dealer opens it from the pledge and deals', () => {
    const t = lockedTable()
    t.intercept = (from, _to, doc) => doc.type === 'nonce' && from === peerOf(t, 3) ? undefined : doc
    const hand = start(t)
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'contributing' }])
    t.clock.now = commitOf(t, hand).body.deadline + 1
    const effects = t.dealer.tick(t.clock.now)
    expect(effects.filter(e => e.kind === 'fetchBeacon')).toEqual([{ kind: 'fetchBeacon', hand, round: roundOf(t, hand) }])
    t.run(t.table.dealer, effects)
    t.run(t.table.dealer, t.dealer.beaconResult(hand, { entry: signLocalRound(beaconKey, roundOf(t, hand)) }))
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'dealt' }])
    expect(t.seats.get(peerOf(t, 3))?.cards(hand).length).toBeGreaterThan(0)
    t.run(t.table.dealer, t.dealer.end(hand))
    const receipt = logOf(t, t.table.dealer).find(e => e.entry === 'receipt')?.payload as Receipt
    expect(receipt.reveal.body.recovered?.map(r => r.seat)).toEqual([3])
    const verdict = verifyReceipt(receipt)
    expect(verdict.problems).toEqual([])
    expect(verdict.summary?.acked).toEqual([0, 1, 2, 3])
  })

  test('dealer stopped after the nonces: every seat finishes the hand with a RECOVERED record; so does the restarted dealer', () => {
    const t = lockedTable()
    const hand = start(t)
    silenceDealer(t)
    const waitUntil = Math.max(commitOf(t, hand).body.deadline, chain.genesis_time * 1000 + (roundOf(t, hand) - 1) * 3000) + 10_001
    seatsRecover(t, hand, waitUntil)
    const verdicts = [1, 2, 3].map(s => verifyRecovered(recoveredOf(t, peerOf(t, s), hand)))
    for (const v of verdicts) {
      expect(v.problems).toEqual([])
      expect(v.summary).toMatchObject({ faults: [], rule: 'open' })
    }
    expect(verdicts[1].summary?.hands).toEqual(verdicts[0].summary?.hands)
    expect(verdicts[0].summary?.hands).toHaveLength(4)
    // The dealer comes back: it does not deal a hand the seats have finished, it records the same deal.
    t.intercept = undefined
    const effects = t.restartDealer()
    expect(effects.filter(e => e.kind === 'fetchBeacon')).toEqual([{ kind: 'fetchBeacon', hand, round: roundOf(t, hand) }])
    t.run(t.table.dealer, effects)
    t.run(t.table.dealer, t.dealer.beaconResult(hand, { entry: signLocalRound(beaconKey, roundOf(t, hand)) }))
    const own = verifyRecovered(recoveredOf(t, t.table.dealer, hand))
    expect(own.problems).toEqual([])
    expect(own.summary?.hands).toEqual(verdicts[0].summary?.hands)
    expect(t.dealer.status()).toEqual([])
  })

  test('dealer stopped after dealing: the seats check the cards they hold against the recovered deal', () => {
    const t = lockedTable()
    const hand = start(t)
    t.run(t.table.dealer, t.dealer.beaconResult(hand, { entry: signLocalRound(beaconKey, roundOf(t, hand)) }))
    const shown = t.seats.get(peerOf(t, 1))?.cards(hand)
    // Meanwhile a seat's status says when the hand goes on without the dealer (issue 23).
    const waiting = t.seats.get(peerOf(t, 1))?.status().find(h => h.hand === hand)
    expect(waiting).toEqual({ hand, phase: 'dealt', waitUntil: t.clock.now + 60_000, timelocked: true })
    expect(seatWaitText(waiting as NonNullable<typeof waiting>, t.clock.now)).toMatch(/^ \(time-locked: if the dealer has not revealed by \d\d:\d\d:\d\d UTC, in 60 s, the seats ask it once, then finish the hand from its timelocks\)$/)
    silenceDealer(t)
    seatsRecover(t, hand, t.clock.now + 60_001)
    const record = recoveredOf(t, peerOf(t, 1), hand)
    expect(record.body.cards.map(c => c.body.cards)).toEqual(shown?.map(c => c.cards))
    const verdict = verifyRecovered(record)
    expect(verdict.problems).toEqual([])
    expect(verdict.summary?.faults).toEqual([])
    expect(verdict.summary?.hands?.[1]).toEqual(shown?.[0].cards)
  })

  test('a dealer that dealt wrong cards and never revealed is named, its signed CARDS the evidence', () => {
    const t = lockedTable()
    const dealerSigner = t.signers[0]
    t.intercept = (_from, to, doc) => doc.type === 'cards' && to === peerOf(t, 2)
      ? signDocument('cards', { ...(doc.body as CardsBody), cards: [...(doc.body as CardsBody).cards].reverse() }, dealerSigner)
      : doc
    const hand = start(t)
    t.run(t.table.dealer, t.dealer.beaconResult(hand, { entry: signLocalRound(beaconKey, roundOf(t, hand)) }))
    silenceDealer(t)
    seatsRecover(t, hand, t.clock.now + 60_001)
    const verdict = verifyRecovered(recoveredOf(t, peerOf(t, 2), hand))
    expect(verdict.problems).toEqual([])
    expect(verdict.summary?.faults).toEqual([{ party: t.table.dealer, kind: 'cards', seat: 2, stage: 'deal' }])
    expect(verifyRecovered(recoveredOf(t, peerOf(t, 1), hand)).summary?.faults).toEqual([])
  })

  test('a seat whose ciphertext holds another nonce, and that withholds it, is named by the dealer and by every seat', () => {
    const t = lockedTable()
    const cheat = t.signers[3]
    t.intercept = (from, _to, doc) => {
      if (from !== cheat.peerId) return doc
      if (doc.type === 'nonce') return undefined
      if (doc.type !== 'pledge') return doc
      const body = doc.body as PledgeBody
      return signDocument('pledge', { ...body, timelock: sealTimelockText('another nonce', chain, timelockTarget(body.timelock as string).round, random) }, cheat)
    }
    const hand = start(t)
    t.clock.now = commitOf(t, hand).body.deadline + 1
    t.run(t.table.dealer, t.dealer.tick(t.clock.now))
    t.run(t.table.dealer, t.dealer.beaconResult(hand, { entry: signLocalRound(beaconKey, roundOf(t, hand)) }))
    const fault = [{ party: cheat.peerId, kind: 'mismatch', seat: 3, stage: null }]
    const byDealer = verifyRecovered(recoveredOf(t, t.table.dealer, hand))
    expect(byDealer.problems).toEqual([])
    expect(byDealer.summary?.faults).toEqual(fault)
    silenceDealer(t)
    seatsRecover(t, hand, t.clock.now + 60_001)
    expect(verifyRecovered(recoveredOf(t, peerOf(t, 1), hand)).summary?.faults).toEqual(fault)
  })

  test('a dealer whose ciphertext holds another secret, then stops, is named by every seat', () => {
    const t = lockedTable()
    const dealerSigner = t.signers[0]
    const pledges: SignedPledge[] = []
    let forged: SignedCommit | undefined
    t.intercept = (from, _to, doc) => {
      if (doc.type === 'commit') {
        const body = doc.body as CommitBody
        forged ??= signDocument('commit', { ...body, timelock: sealTimelockText('another secret', chain, body.beacon!.round, random) }, dealerSigner)
        return forged
      }
      if (doc.type === 'pledge') { pledges.push(doc as SignedPledge); return undefined }
      return from === t.table.dealer ? undefined : doc
    }
    const hand = start(t)
    const c = forged as SignedCommit
    const pledgesDoc = signDocument('pledges', { table: t.table.id, hand, commit: docDigest(c), pledges: [...pledges].sort((a, b) => a.body.seat - b.body.seat) } satisfies PledgesBody, dealerSigner)
    // The dealer's node passes the PLEDGES on and its own seat shows its view (the seats' peer check), nothing more.
    t.intercept = (from, _to, doc) => from === t.table.dealer && doc.type !== 'pledges' && doc.type !== 'view' ? undefined : doc
    for (const s of [0, 1, 2, 3]) t.run(t.table.dealer, [{ kind: 'send', to: peerOf(t, s), doc: pledgesDoc }])
    silenceDealer(t)
    seatsRecover(t, hand, Math.max(c.body.deadline, chain.genesis_time * 1000 + (roundOf(t, hand) - 1) * 3000) + 10_001)
    for (const s of [1, 2, 3]) {
      const verdict = verifyRecovered(recoveredOf(t, peerOf(t, s), hand))
      expect(verdict.problems).toEqual([])
      expect(verdict.summary?.faults).toEqual([{ party: t.table.dealer, kind: 'mismatch', seat: null, stage: null }])
    }
  })
})

describe('ciphertexts for another chain or round are refused before any nonce is sent', () => {
  test('a COMMIT locked to another chain, or to another round, gets no pledge', () => {
    for (const lock of [(b: CommitBody) => sealTimelockText('s', otherChain, b.beacon!.round, random), (b: CommitBody) => sealTimelockText('s', chain, b.beacon!.round + 1, random)]) {
      const t = lockedTable()
      t.intercept = (_from, _to, doc) => doc.type === 'commit' ? signDocument('commit', { ...(doc.body as CommitBody), timelock: lock(doc.body as CommitBody) }, t.signers[0]) : doc
      start(t)
      expect(t.rejections.map(r => r.reason)).toEqual([expect.stringMatching(/^commit: timelock locked to (chain|round)/), expect.anything(), expect.anything(), expect.anything()].slice(0, t.rejections.length))
      expect(t.rejections).toHaveLength(4)
      expect(t.dealer.status()).toMatchObject([{ phase: 'pledging', joined: 0 }])
    }
  })

  test('a pledge locked to another round: the dealer refuses it, and a rogue dealer relaying it gets no nonce', () => {
    const t = lockedTable()
    const seat3 = t.signers[3]
    let bad: SignedPledge | undefined
    t.intercept = (from, _to, doc) => {
      if (doc.type === 'pledge' && from === seat3.peerId) {
        const body = doc.body as PledgeBody
        bad = signDocument('pledge', { ...body, timelock: sealTimelockText('n', chain, timelockTarget(body.timelock as string).round + 1, random) }, seat3)
        return bad
      }
      return doc
    }
    const hand = start(t)
    expect(t.rejections.map(r => r.reason)).toEqual([expect.stringMatching(/^pledge of seat 3: timelock locked to round/)])
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'pledging', joined: 3 }])
    // A rogue dealer relays it in its PLEDGES anyway: every seat refuses, and no NONCE is sent.
    const honest = [0, 1, 2].map(s => JSON.parse(new TextDecoder().decode(t.frames.get(t.table.dealer)?.find(f => {
      const d = JSON.parse(new TextDecoder().decode(f)) as Signed<PledgeBody>
      return d.type === 'pledge' && d.body.seat === s
    }))) as SignedPledge)
    const rogue = signDocument('pledges', { table: t.table.id, hand, commit: docDigest(commitOf(t, hand)), pledges: [...honest, bad as SignedPledge] } satisfies PledgesBody, t.signers[0])
    const before = t.rejections.length
    t.intercept = (_from, _to, doc) => doc.type === 'nonce' ? (() => { throw new Error('a nonce was sent') })() : doc
    for (const s of [1, 2, 3]) t.run(t.table.dealer, [{ kind: 'send', to: peerOf(t, s), doc: rogue }])
    expect(t.rejections.slice(before).map(r => r.reason)).toEqual(Array(3).fill(expect.stringMatching(/^pledges: pledge of seat 3: timelock locked to round/)))
  })

  test('an abort record after the nonces are out cannot make a time-locked hand disappear', () => {
    const t = lockedTable()
    const hand = start(t)
    // A valid record (docs/protocol.md §10): dealer-stopped publishes the hand's secret.
    const saved = t.persisted.get(t.table.dealer)?.get(dealerHandKey(t.table.id, hand)) as { secret: string }
    const stop = signAbort(commitOf(t, hand), 'dealer-stopped', [t.table.dealer], 'stopped', [], t.signers[0], saved.secret)
    for (const s of [1, 2, 3]) t.run(t.table.dealer, [{ kind: 'send', to: peerOf(t, s), doc: stop }])
    silenceDealer(t)
    const round = roundOf(t, hand)
    for (const s of [1, 2, 3]) {
      const seat = t.seats.get(peerOf(t, s))!
      expect(seat.status()).toEqual([{ hand, phase: 'recovering' }])
      t.run(peerOf(t, s), seat.beaconResult(hand, { entry: signLocalRound(beaconKey, round) }))
      expect(logOf(t, peerOf(t, s)).map(e => e.entry)).toEqual(['abort', 'recovered'])
      expect(verifyRecovered(recoveredOf(t, peerOf(t, s), hand)).problems).toEqual([])
    }
  })
})

describe('table.timelock in a node config', () => {
  const raw = (beacon: string, scheme: string, timelock: string): unknown => ({
    data: 'd',
    table: { id: 't', game: 'coinche', scheme, dealer: 'robot', seats: [], beacon, timelock }
  })
  const base = async (beacon: string, scheme: string, timelock: string): Promise<unknown> => {
    const peer = t0.signers[0].peerId
    const value = raw(beacon, scheme, timelock) as { table: { dealer: string, seats: string[] } }
    value.table.dealer = peer
    value.table.seats = [peer, 'robot', 'robot', 'robot']
    return await parseNodeConfig(value, 'node.json')
  }
  const t0 = lockedTable()

  test('quicknet gives a time-locked table with its rule; off is the default', async () => {
    expect(await base('quicknet', 'atout-drand-v1', 'open')).toMatchObject({ timelock: { rule: 'open' } })
    expect(await base('quicknet', 'atout-drand-v1', 'off')).toMatchObject({ timelock: null })
  })

  test('no beacon, or a chained one, is refused with a one-line reason', async () => {
    await expect(base('none', 'atout-v1', 'replay')).rejects.toThrow('node.json: field table.timelock: a time-locked table needs a beacon (table.beacon)')
    await expect(base('default', 'atout-drand-v1', 'void')).rejects.toThrow(/field table.timelock: the beacon's scheme pedersen-bls-chained has no timelock encryption/)
    await expect(base('quicknet', 'atout-drand-v1', 'later')).rejects.toThrow(/field table.timelock/)
  })
})

describe('a seat\'s abort record on a time-locked hand', () => {
  test('after the nonces are out, the dealer relays it and finishes the hand from its timelocks like the seats', () => {
    const t = lockedTable()
    const hand = start(t)
    expect(t.dealer.status()).toMatchObject([{ hand, phase: 'beacon' }])
    // A valid claim (docs/protocol.md §10) carries what the seat held: a seat that never got the
    // PLEDGES (its nonce never went out) holds its own PLEDGE. (One holding the PLEDGES and its own
    // NONCE is no valid claim on a time-locked hand: that seat finishes the hand from its timelocks.)
    const decoded = (peer: string): Array<Signed<{ seat?: number }>> => (t.frames.get(peer) ?? []).map(f => JSON.parse(new TextDecoder().decode(f)) as Signed<{ seat?: number }>)
    const held = [decoded(t.table.dealer).find(d => d.type === 'pledge' && d.body.seat === 2)] as Array<Signed<unknown>>
    const claim = signAbort(commitOf(t, hand), 'missing-deal', [t.table.dealer], 'no cards yet', held, t.signers[2])
    const fetches: Effect[] = []
    const out = t.dealer.receive(peerOf(t, 2), claim)
    fetches.push(...out.filter(e => e.kind === 'fetchBeacon'))
    t.run(t.table.dealer, out)
    expect(fetches).toEqual([{ kind: 'fetchBeacon', hand, round: roundOf(t, hand) }])
    t.run(t.table.dealer, t.dealer.beaconResult(hand, { entry: signLocalRound(beaconKey, roundOf(t, hand)) }))
    // (The dealer node's own seat machine logs the relayed record too; a node's daemon keeps the dealer's copy.)
    expect(logOf(t, t.table.dealer).filter(e => e.hand === hand).map(e => e.entry)).toEqual(['abort', 'abort', 'recovered'])
    expect(verifyRecovered(recoveredOf(t, t.table.dealer, hand)).problems).toEqual([])
    for (const s of [1, 3]) expect(t.seats.get(peerOf(t, s))?.status()).toEqual([{ hand, phase: 'recovering' }])
  })
})
