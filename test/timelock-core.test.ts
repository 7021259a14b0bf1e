// The timelock core and adapter: opening real tlock-js ciphertexts offline with recorded quicknet
// rounds and a local beacon, the `-> tlock` stanza checks, and the verifier's timelock rules for
// receipts and RECOVERED records (each tampered field fails, even re-signed by its author).
import { describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { signDocument } from '../src/core/signed.js'
import { localChainInfo, signLocalRound } from '../src/core/beacon/index.js'
import {
  checkTimelockTarget, openTimelockText, parseTimelock, sealTimelockText, TimelockError, timelockTarget
} from '../src/core/timelock/index.js'
import { normaliseArmor, timelockDecryptWithTlockJs, timelockEncryptText } from '../src/beacon/tlock.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { openHand, verifyRecovered, type RecoveredBody } from '../src/core/hand/recovered.js'
import { verifyLogPayload } from '../src/core/receipt.js'
import type { Receipt } from '../src/core/hand/messages.js'
import {
  CHAIN, DEALER, ENTRY, NONCES, OTHER_ENTRY, SECRET, SEAT1, SEAT2, SEATS, lock, timelockedHand, type Hand
} from './helpers/timelock-hand.js'

const KAT = JSON.parse(readFileSync(new URL('./fixtures/timelock/quicknet-657413.json', import.meta.url), 'utf8')) as { round: number, chainHash: string, plaintext: string, ciphertext: string }

describe('tlock ciphertexts', () => {
  it('opens a stored tlock-js ciphertext with the recorded quicknet round, in the core (known answer)', () => {
    expect(timelockTarget(KAT.ciphertext)).toEqual({ round: KAT.round, chainHash: KAT.chainHash })
    expect(openTimelockText(KAT.ciphertext, CHAIN, ENTRY)).toBe(KAT.plaintext)
  })

  it('round-trips through tlock-js encrypt, the core and tlock-js decrypt; another round does not open it', async () => {
    const ct = await lock('n'.repeat(64))
    expect(openTimelockText(ct, CHAIN, ENTRY)).toBe('n'.repeat(64))
    expect(new TextDecoder().decode(await timelockDecryptWithTlockJs(ct, CHAIN, ENTRY))).toBe('n'.repeat(64))
    expect(() => openTimelockText(ct, CHAIN, OTHER_ENTRY)).toThrow(/IBE check failed/)
  })

  it('seals in the core (injected randomness) what tlock-js opens, to the round and chain it names', async () => {
    const random = (n: number): Uint8Array => new Uint8Array(randomBytes(n))
    const ct = sealTimelockText('sealed by the core', CHAIN, ENTRY.round, random)
    expect(parseTimelock(ct)).toMatchObject({ round: ENTRY.round, chainHash: CHAIN.hash })
    expect(new TextDecoder().decode(await timelockDecryptWithTlockJs(ct, CHAIN, ENTRY))).toBe('sealed by the core')
    expect(openTimelockText(ct, CHAIN, ENTRY)).toBe('sealed by the core')
    // Same randomness, same bytes: the machines stay deterministic under an injected source.
    const fixed = (): ((n: number) => Uint8Array) => { let i = 0; return n => new Uint8Array(n).fill(++i) }
    expect(sealTimelockText('x', CHAIN, ENTRY.round, fixed())).toBe(sealTimelockText('x', CHAIN, ENTRY.round, fixed()))
  })

  it('works with a local beacon (the same scheme as quicknet)', async () => {
    const secretKey = new Uint8Array(32).fill(7)
    const chain = localChainInfo({ secretKey, period: 3, genesisTime: 1_600_000_000 })
    const ct = await timelockEncryptText('local secret', chain, 42)
    expect(checkTimelockTarget(ct, { chainHash: chain.hash, round: 42 })).toBeUndefined()
    expect(openTimelockText(ct, chain, signLocalRound(secretKey, 42))).toBe('local secret')
    expect(() => openTimelockText(ct, chain, signLocalRound(secretKey, 43))).toThrow(TimelockError)
  })

  it('names another chain or another round (the check tlock-js does not make)', async () => {
    const ct = await lock('x', ENTRY.round)
    expect(checkTimelockTarget(ct, { chainHash: 'ab'.repeat(32), round: ENTRY.round })).toMatch(/locked to chain 52db9ba70e0cc0f6…, not the table's/)
    expect(checkTimelockTarget(ct, { chainHash: CHAIN.hash, round: ENTRY.round + 1 })).toBe(`locked to round ${ENTRY.round}, not the bound round ${ENTRY.round + 1}`)
  })

  it('accepts only the canonical armor; the adapter normalises CRLF and surrounding blanks', () => {
    const crlf = '  ' + KAT.ciphertext.replace(/\n/g, '\r\n') + '\r\n'
    expect(() => parseTimelock(crlf)).toThrow(/armored age file|canonical/)
    expect(normaliseArmor(crlf)).toBe(KAT.ciphertext)
    const lines = KAT.ciphertext.split('\n')
    const rewrapped = [lines[0], lines.slice(1, -2).join('').match(/.{1,60}/g)!.join('\n'), lines.at(-2), ''].join('\n')
    expect(() => parseTimelock(rewrapped)).toThrow(/canonical/)
  })

  it('refuses a flipped byte anywhere: malformed or undecryptable, never a wrong value', () => {
    const bytes = Buffer.from(KAT.ciphertext.split('\n').slice(1, -2).join(''), 'base64')
    for (const at of [5, 30, 80, 150, 230, bytes.length - 40, bytes.length - 1]) {
      const copy = Buffer.from(bytes)
      copy[at] ^= 1
      const armored = normaliseArmor(`-----BEGIN AGE ENCRYPTED FILE-----\n${copy.toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END AGE ENCRYPTED FILE-----`)
      expect(() => openTimelockText(armored, CHAIN, ENTRY), `byte ${at}`).toThrow(TimelockError)
    }
  })
})

function resign (hand: Hand, edit: (r: Receipt) => void): Receipt {
  const r = structuredClone(hand.receipt)
  edit(r)
  r.reveal = signDocument('reveal', r.reveal.body, DEALER)
  return r
}

describe('time-locked receipts', () => {
  it('a receipt whose commit and pledges are time-locked verifies', async () => {
    const hand = await timelockedHand()
    // No seat countersigned this hand-built receipt: every check passes, and it is incomplete.
    expect(verifyReceipt(hand.receipt)).toMatchObject({ status: 'incomplete', problems: [] })
  })

  it('a nonce recovered by the dealer from its pledge verifies; a wrong one, or one also sent, does not', async () => {
    const hand = await timelockedHand()
    const recovered = resign(hand, r => {
      r.reveal.body.nonces = r.reveal.body.nonces.filter(n => n.body.seat !== 3)
      r.reveal.body.recovered = [{ seat: 3, nonce: NONCES[3] }]
    })
    const ok = verifyReceipt(recovered)
    expect(ok.problems).toEqual([])
    expect(ok.summary?.hands).toEqual(verifyReceipt(hand.receipt).summary?.hands)
    const wrong = resign(hand, r => {
      r.reveal.body.nonces = r.reveal.body.nonces.filter(n => n.body.seat !== 3)
      r.reveal.body.recovered = [{ seat: 3, nonce: NONCES[1] }]
    })
    expect(verifyReceipt(wrong).problems.map(p => p.message)).toContain('recovered nonce of seat 3: is not what the pledge\'s timelock holds')
    const twice = resign(hand, r => { r.reveal.body.recovered = [{ seat: 3, nonce: NONCES[3] }] })
    expect(verifyReceipt(twice).problems.map(p => p.message)).toContain('recovered nonce of seat 3: the seat\'s own NONCE is in the reveal too')
  })

  it('a pledge without a timelock, or locked to another round, fails the receipt', async () => {
    const hand = await timelockedHand()
    const bare = structuredClone(hand.receipt)
    const p = bare.pledges[1]
    const { timelock: _dropped, ...body } = p.body
    bare.pledges[1] = signDocument('pledge', body, SEAT1)
    expect(verifyReceipt(bare).problems.map(p => p.message)).toContain('pledge of seat 1: no timelock on a time-locked table')
    const late = structuredClone(hand.receipt)
    late.pledges[2] = signDocument('pledge', { ...late.pledges[2].body, timelock: await lock(NONCES[3], ENTRY.round + 1) }, SEAT2)
    expect(verifyReceipt(late).problems.map(p => p.message)).toContain(`pledge of seat 3: timelock locked to round ${ENTRY.round + 1}, not the bound round ${ENTRY.round}`)
  })
})

async function recoveredRecord (hand: Hand, signer = SEAT1, edit?: (b: RecoveredBody) => void): Promise<unknown> {
  const opened = openHand(hand.commit, hand.pledges, ENTRY, hand.cards)
  const body: RecoveredBody = structuredClone({
    table: 'tl-test', hand: 1, commit: hand.commit, pledges: hand.pledges, beacon: ENTRY,
    secret: opened.secret, nonces: opened.nonces, cards: hand.cards, faults: opened.faults, rule: 'replay', detail: 'dealer stopped'
  })
  edit?.(body)
  return signDocument('recovered', body, signer)
}

describe('RECOVERED records', () => {
  it('an honest hand recovered by a seat verifies offline and gives the deal', async () => {
    const hand = await timelockedHand()
    const record = await recoveredRecord(hand)
    const verdict = verifyRecovered(record)
    expect(verdict.problems).toEqual([])
    expect(verdict.summary?.faults).toEqual([])
    expect(verdict.summary?.hands).toEqual(verifyReceipt(hand.receipt).summary?.hands)
    expect(verifyLogPayload('recovered', record).problems).toEqual([])
  })

  it('every field tampered fails, even re-signed by the seat', async () => {
    const hand = await timelockedHand()
    const tampered: Array<[string, (b: RecoveredBody) => void, RegExp]> = [
      ['secret', b => { b.secret = 'ff'.repeat(32) }, /the secret is not what/],
      ['a nonce', b => { b.nonces[1] = 'ee'.repeat(32) }, /nonce of seat 1 is not what/],
      ['the beacon entry', b => { b.beacon = { ...OTHER_ENTRY } }, /beacon/],
      ['a fault invented', b => { b.faults = [{ party: SEAT2.peerId, kind: 'mismatch', seat: 3, stage: null }] }, /faults .* are not the ones found/],
      ['a pledge dropped', b => { b.pledges = b.pledges.slice(1) }, /pledge: seat 0 is missing/],
      ['a pledge re-signed by another', b => { b.pledges[1] = signDocument('pledge', b.pledges[1].body, SEAT2) }, /pledge of seat 1: not signed by that seat/],
      ['the cards', b => { b.cards = [signDocument('cards', { ...b.cards[0].body, cards: [...b.cards[0].body.cards].reverse() }, SEAT1)] }, /cards 0: not signed by the dealer/]
    ]
    for (const [what, edit, problem] of tampered) {
      const verdict = verifyRecovered(await recoveredRecord(hand, SEAT1, edit))
      expect(verdict.ok, what).toBe(false)
      expect(verdict.problems.map(p => p.message).join('\n'), what).toMatch(problem)
    }
    const record = await recoveredRecord(hand) as { body: RecoveredBody }
    record.body.rule = 'open'
    expect(verifyRecovered(record).problems).toEqual([{ code: 'bad-signature', message: 'recovered: bad signature' }])
  })

  it('a dealer whose ciphertext holds another secret is named, its signed commit the evidence', async () => {
    const hand = await timelockedHand({ lockedSecret: 'b2'.repeat(32) })
    const opened = openHand(hand.commit, hand.pledges, ENTRY, hand.cards)
    expect(opened.faults).toEqual([{ party: DEALER.peerId, kind: 'mismatch', seat: null, stage: null }])
    expect(opened.secret).toBeNull()
    const verdict = verifyRecovered(await recoveredRecord(hand))
    expect(verdict.problems).toEqual([])
    expect(verdict.summary?.blame).toEqual([DEALER.peerId])
    expect(verifyRecovered(await recoveredRecord(hand, SEAT1, b => { b.faults = [] })).ok).toBe(false)
  })

  it('a seat whose ciphertext holds another nonce is named; one locked to another round does not open', async () => {
    const hand = await timelockedHand({ lockedNonce: { 3: 'f0'.repeat(32) } })
    const verdict = verifyRecovered(await recoveredRecord(hand, DEALER))
    expect(verdict.problems).toEqual([])
    expect(verdict.summary?.faults).toEqual([{ party: SEAT2.peerId, kind: 'mismatch', seat: 3, stage: null }])
    expect(verdict.summary?.hands).toBeUndefined()
  })

  it('cards the dealer dealt that are not the deal are a fault with its signed CARDS as evidence', async () => {
    const hand = await timelockedHand()
    const wrong = [...hand.cards[0].body.cards].reverse()
    hand.cards = [signDocument('cards', { ...hand.cards[0].body, cards: wrong }, DEALER)]
    const verdict = verifyRecovered(await recoveredRecord(hand))
    expect(verdict.problems).toEqual([])
    expect(verdict.summary?.faults).toEqual([{ party: DEALER.peerId, kind: 'cards', seat: 1, stage: 'deal' }])
  })

  it('is refused from someone not at the table', async () => {
    const hand = await timelockedHand()
    const { seededSigner } = await import('./helpers/log-fixtures.js')
    expect(verifyRecovered(await recoveredRecord(hand, seededSigner(99))).problems.map(p => p.message)).toContain('recovered: signed by someone who is not at the table')
    expect(SEATS).toContain(SEAT2.peerId)
    expect(SECRET).toHaveLength(64)
  })
})
