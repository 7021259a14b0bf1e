// blind-v1 receipts (version 2) verify offline from the receipt alone, through the one verifier
// (verifyReceipt); any single-byte change, a document moved from another hand, a wrong hand key or
// a bad beacon entry is refused.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { canonicalBytes } from '../src/core/canonical.js'
import { seededRandom } from '../src/core/blind/index.js'
import { docDigest } from '../src/core/hand/digest.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { signerFromSeed, type Signer } from '../src/core/identity.js'
import { signDocument } from '../src/core/signed.js'
import { ATOUT_CARDS } from '../src/core/schemes/atout.js'
import { playBlindHand, type BlindRunInit } from '../src/protocol/blind-run.js'
import { fromUtf8, utf8 } from '../src/core/bytes.js'

const signer = (i: number): Signer => signerFromSeed(new Uint8Array(32).fill(i + 1))
const dealer = signer(0)
const seats = [dealer, signer(1), 'robot' as const, signer(3)]
const base = (over: Partial<BlindRunInit> = {}): BlindRunInit => ({
  table: 'blind-test', hand: 1, game: 'coinche', dealer, seats, params: { dealer: 0 }, random: seededRandom(new Uint8Array(32).fill(9)), ...over
})
const quicknet = JSON.parse(readFileSync(new URL('./fixtures/drand/quicknet.json', import.meta.url), 'utf8'))

describe('blind-v1 receipts', () => {
  const run = playBlindHand(base())

  it('a coinche hand with a robot seat verifies, and every seat holds 8 of the 32 cards', () => {
    const verdict = verifyReceipt(JSON.parse(JSON.stringify(run.receipt)))
    expect(verdict.problems).toEqual([])
    expect(verdict.ok).toBe(true)
    expect(verdict.summary?.hands?.map(h => h.length)).toEqual([8, 8, 8, 8])
    expect(verdict.summary?.hands?.flat().sort()).toEqual([...ATOUT_CARDS].sort())
    expect(verdict.summary?.hands).toEqual(run.deliveries.map(d => d.cards))
    expect(verdict.summary?.acked).toEqual([0, 1, 3])
  }, 300_000)

  it('any single-byte change of the receipt fails', () => {
    const bytes = canonicalBytes(run.receipt)
    const step = Math.max(1, Math.floor(bytes.length / 60))
    let tried = 0
    for (let i = 0; i < bytes.length; i += step) {
      const changed = bytes.slice()
      const c = changed[i]
      // Keep it plausible: a hex digit becomes another hex digit, anything else another printable byte.
      changed[i] = c >= 0x30 && c <= 0x39 ? (c === 0x39 ? 0x61 : c + 1) : c >= 0x61 && c <= 0x66 ? (c === 0x66 ? 0x30 : c + 1) : (c === 0x7a ? 0x79 : c + 1)
      let value: unknown
      try { value = JSON.parse(fromUtf8(changed)) } catch { continue }
      tried++
      expect(verifyReceipt(value).ok, `byte ${i}`).toBe(false)
    }
    expect(tried).toBeGreaterThan(40)
  }, 300_000)

  // Hand 2, bound to a recorded quicknet round, from the same randomness as hand 1: the same keys,
  // permutations and re-encryptions, so a proof moved from hand 1 into it proves the very same
  // statement and fails only because its transcript binds hand 1's context. Played once, used by
  // the replay and beacon tests (a blind hand costs seconds of CPU).
  const entry = quicknet.entries[0]
  const bound = playBlindHand(base({
    hand: 2,
    beacon: { binding: { chainHash: quicknet.info.hash, round: entry.round, info: quicknet.info }, entry },
    deadline: quicknet.info.genesis_time * 1000 - 1000
  }))

  it('a shuffle proof replayed into another hand is refused, even re-signed by its seat', () => {
    const other = bound
    expect(other.receipt.shuffles[1].body.deck).toEqual(run.receipt.shuffles[1].body.deck) // the same statement
    const receipt = structuredClone(other.receipt)
    const replayed = run.receipt.shuffles[1]
    receipt.shuffles[1] = signDocument('bshuffle', { ...replayed.body, hand: 2, commit: docDigest(other.receipt.commit) }, seats[1] as Signer)
    const verdict = verifyReceipt(receipt)
    expect(verdict.ok).toBe(false)
    expect(verdict.problems.map(p => p.message).join('\n')).toMatch(/shuffle of seat 1: its shuffle proof does not verify/)
    const keys = structuredClone(other.receipt)
    keys.keys[3] = signDocument('bkey', { ...run.receipt.keys[3].body, hand: 2, commit: docDigest(other.receipt.commit) }, seats[3] as Signer)
    expect(verifyReceipt(keys).problems.map(p => p.message).join('\n')).toMatch(/key of seat 3: its proof of knowledge/)
  }, 300_000)

  it('a hand key that is not the seat\'s is refused', () => {
    const receipt = structuredClone(run.receipt)
    const secrets = receipt.reveal.body.secrets
    secrets[1] = signDocument('bsecret', { ...secrets[1].body, secret: secrets[3].body.secret }, seats[1] as Signer)
    receipt.reveal = signDocument('breveal', receipt.reveal.body, dealer)
    expect(verifyReceipt(receipt).problems.map(p => p.message)).toContain('hand key of seat 1: its hand key does not match its public key')
  }, 300_000)

  it('hand keys one short and out of order: both rules report, as for keys (docs/dealer-blind.md §10 step 1)', () => {
    const receipt = structuredClone(run.receipt)
    const secrets = receipt.reveal.body.secrets
    receipt.reveal = signDocument('breveal', { ...receipt.reveal.body, secrets: [secrets[1], secrets[0], secrets[2]] }, dealer)
    expect([...new Set(verifyReceipt(receipt).problems.map(p => p.code))]).toEqual(['seat-set', 'order'])
  }, 300_000)

  it('a countersignature of other cards is refused', () => {
    const receipt = structuredClone(run.receipt)
    receipt.acks[1] = signDocument('ack', { ...receipt.acks[1].body, cards: receipt.acks[0].body.cards }, seats[1] as Signer)
    expect(verifyReceipt(receipt).problems.map(p => p.message)).toContain("countersignature of seat 1: the cards it held are not that seat's cards of this deck")
  }, 300_000)

  // duo (two seats) is played and verified by the machines in test/blind-machines.test.ts.
  it('belote with the take verifies', () => {
    const belote = playBlindHand(base({ game: 'belote', params: { dealer: 1, taker: 2 } }))
    const v = verifyReceipt(belote.receipt)
    expect(v.problems).toEqual([])
    expect(v.summary?.hands?.map(h => h.length)).toEqual([8, 8, 8, 8])
    expect(v.summary?.deliveries?.map(d => d.stage)).toEqual(['deal', 'deal', 'deal', 'deal', 'turnUp', 'take', 'take', 'take', 'take'])
  }, 300_000)

  it('bound to a recorded quicknet round: verifies; another entry fails', () => {
    const v = verifyReceipt(bound.receipt)
    expect(v.problems).toEqual([])
    expect(v.summary?.beaconRound).toBe(entry.round)
    // The final permutation depends on R: the same shuffles without the beacon deal other hands.
    expect(bound.deliveries.map(d => d.cards)).not.toEqual(run.deliveries.map(d => d.cards))
    const receipt = structuredClone(bound.receipt)
    receipt.reveal = signDocument('breveal', { ...receipt.reveal.body, beacon: quicknet.entries[1] }, dealer)
    expect(verifyReceipt(receipt).ok).toBe(false)
  }, 300_000)

  it('a blind receipt names only blind-v1', () => {
    expect(utf8(JSON.stringify(run.receipt)).length).toBeLessThan(80_000)
    const receipt = structuredClone(run.receipt)
    receipt.commit = signDocument('commit', { ...receipt.commit.body, scheme: 'atout-v1' }, dealer)
    expect(verifyReceipt(receipt).problems.map(p => p.message).join('\n')).toMatch(/scheme atout-v1 is not blind-v1/)
  }, 300_000)
})
