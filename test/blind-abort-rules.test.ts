// The abort-record rules of dealer-blind hands (docs/dealer-blind.md §11, src/core/hand/blind-abort-rules.ts),
// in memory on the smallest blind table (duo, two human seats: A on the dealer's node, B). The honest
// records the machines sign verify; for each rule, a record that breaks it and only it, re-signed with
// the test keys (so every signature is good), fails with the rule's code. Blind proofs are slow: a few
// hands are played once (seeded, so their documents agree until they part) and every other record is
// derived from their documents.
import { describe, expect, test } from 'vitest'
import { checkAbortRecord } from '../src/core/hand/abort-rules.js'
import { Reason, type ReasonCode } from '../src/core/hand/reasons.js'
import { docDigest } from '../src/core/hand/digest.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import { scalarToHex, seededRandom } from '../src/core/blind/index.js'
import { BlindSeatMachine, blindSeatHandKey, type BlindSeatSnapshot } from '../src/protocol/blind-seat.js'
import type { MachineInit } from '../src/protocol/types.js'
import { signAbort } from '../src/protocol/abort.js'
import type { AbortBody, AbortReason, SignedAbort, SignedCommit } from '../src/core/hand/messages.js'
import { blindTable, ids, signers } from './helpers/blind-memory.js'

const A = ids[0] // the dealer, and seat 0
const B = ids[1] // seat 1
const signerOf = (peer: string): typeof signers[number] => signers[ids.indexOf(peer)]

interface Played {
  /** Every document that crossed the wire (or was dropped), in order. */
  seen: Array<Signed<any>>
  /** Abort records signed by the dealer machine, by seat A's machine, by seat B's machine. */
  byDealer: SignedAbort[]
  bySeat: (peer: string) => SignedAbort[]
  t: ReturnType<typeof blindTable>
}

/** Plays a duo hand where `drop` decides which frames never arrive; the dealer's records never reach the seats (so they sign their own). */
function play (drop: (from: string, to: string, doc: Signed<any>) => boolean, steps: (t: ReturnType<typeof blindTable>, hand: number) => void): Played {
  const seen: Array<Signed<any>> = []
  let dealerLogged: Array<{ payload: any }> = []
  const t = blindTable([A, B], {
    game: 'duo',
    intercept: (from, to, doc) => {
      seen.push(doc)
      // The dealer machine's own records (logged before they are sent) never reach the seats.
      if (doc.type === 'abort' && dealerLogged.some(l => l.payload === doc)) return undefined
      return drop(from, to, doc) ? undefined : doc
    }
  })
  dealerLogged = t.dealerNode.log
  const hand = t.deal()
  steps(t, hand)
  const aborts = seen.filter(d => d.type === 'abort') as SignedAbort[]
  const once = (list: SignedAbort[]): SignedAbort[] => list.filter((r, i) => list.findIndex(o => docDigest(o) === docDigest(r)) === i)
  // Seat A's records also carry signer A: the dealer's machine never signs a seat's reason.
  const dealerReasons = new Set(['missing-key', 'missing-shares', 'missing-secret', 'dealer-stopped', 'beacon-unavailable'])
  const byDealer = once(t.dealerNode.log.filter(l => l.entry === 'abort').map(l => l.payload as SignedAbort).filter(r => r.signer === A))
  return {
    seen, t, byDealer,
    bySeat: peer => once(aborts.filter(r => r.signer === peer && (peer !== A || !dealerReasons.has(r.body.reason)) && !byDealer.some(d => docDigest(d) === docDigest(r))))
  }
}

const lazy = <T>(make: () => T): () => T => { let v: T | undefined; return () => (v ??= make()) }

// The dealer never sends BKEYS: it names seat A at its deadline; seat B names the dealer (missing-deal, its own key).
// (A seat asks the dealer once before it records the dealer's silence: the last tick of each run, ackMs later.)
const noKeys = lazy(() => play((from, _to, doc) => from === A && doc.type === 'bkeys', t => { t.tick(21_000); t.tick(41_000); t.tick(10_001) }))
// Seat B never sends its key: missing-key.
const keyWithheld = lazy(() => play((from, _to, doc) => from === B && doc.type === 'bkey', t => t.tick(21_000)))
// Seat B's shuffle never arrives: the dealer and seat A name B (missing-shuffle); B, which shuffled, names the dealer (missing-deal).
const shuffleWithheld = lazy(() => play((from, _to, doc) => from === B && doc.type === 'bshuffle', t => { t.tick(21_000); t.tick(41_000); t.tick(10_001) }))
// Seat B's shares never arrive: missing-shares; later both seats name the dealer (missing-reveal, before any BEND).
const sharesWithheld = lazy(() => play((from, _to, doc) => from === B && doc.type === 'bshares', t => { t.tick(21_000); t.tick(61_000); t.tick(10_001) }))
// Seat A's hand key never arrives: missing-secret; seat B, which sent its own, names the dealer (missing-reveal after the BEND).
const secretWithheld = lazy(() => play((from, _to, doc) => from === A && doc.type === 'bsecret', (t, hand) => { t.end(hand); t.tick(11_000); t.tick(61_000); t.tick(10_001) }))

/** The documents of the hand every run shares (secretWithheld went furthest). */
function docs () {
  const { seen } = secretWithheld()
  const one = (type: string, pick: (d: Signed<any>) => boolean = () => true): Signed<any> => {
    const d = seen.find(x => x.type === type && pick(x))
    if (d === undefined) throw new Error(`no ${type} seen`)
    return d
  }
  const commit = one('commit') as SignedCommit
  return {
    commit,
    keyA: one('bkey', d => d.body.seat === 0),
    keyB: one('bkey', d => d.body.seat === 1),
    keys: one('bkeys'),
    shuffle0: one('bshuffle', d => d.body.seat === 0),
    shuffle1: one('bshuffle', d => d.body.seat === 1),
    deal: one('bdeal'),
    sharesAtoB: one('bshares', d => d.body.seat === 0 && d.body.to === 1),
    sharesBtoA: one('bshares', d => d.body.seat === 1 && d.body.to === 0),
    bend: one('bend'),
    secretA: one('bsecret', d => d.body.seat === 0),
    secretB: one('bsecret', d => d.body.seat === 1)
  }
}

function record (reason: AbortReason, by: string, blame: string[], evidence: Array<Signed<unknown>>, change?: (b: AbortBody) => void): SignedAbort {
  const doc = signAbort(docs().commit, reason, blame, 'test', evidence, signerOf(by))
  if (change === undefined) return doc
  const body = structuredClone(doc.body)
  change(body)
  return signDocument('abort', body, signerOf(by))
}
/** A record with its body changed, signed again by its author. */
function resign (r: SignedAbort, change: (b: AbortBody) => void): SignedAbort {
  const body = structuredClone(r.body)
  change(body)
  return signDocument('abort', body, signerOf(r.signer))
}
/** A document with its body changed, signed again by its signer: a party that really made a faulty one. */
function forge<T> (d: Signed<T>, change: (b: T) => void): Signed<T> {
  const body = structuredClone(d.body)
  change(body)
  return signDocument(d.type, body, signerOf(d.signer))
}
const codes = (r: unknown): ReasonCode[] => [...new Set(checkAbortRecord(r).problems.map(p => p.code))]
const expectValid = (r: unknown): void => { expect(checkAbortRecord(r).problems).toEqual([]) }
const only = (r: unknown, code: ReasonCode): void => { expect(codes(r)).toEqual([code]) }
const reasonOf = (r: SignedAbort): string => r.body.reason

describe('honest blind records, signed by the machines, verify', () => {
  test('the dealer\'s: missing-key, missing-shuffle (seat 0 and seat 1), missing-shares, missing-secret', () => {
    for (const [run, reason, blame] of [
      [keyWithheld, 'missing-key', [B]], [noKeys, 'missing-shuffle', [A]], [shuffleWithheld, 'missing-shuffle', [B]],
      [sharesWithheld, 'missing-shares', [B]], [secretWithheld, 'missing-secret', [A]]
    ] as const) {
      const r = run().byDealer[0]
      expect([reasonOf(r), r.body.blame]).toEqual([reason, blame])
      expectValid(r)
    }
  })

  test('the seats\': missing-deal (before the keys, after the shuffles), missing-shuffle, missing-reveal (before and after the BEND)', () => {
    const cases: Array<[SignedAbort | undefined, string, number]> = [
      [noKeys().bySeat(B)[0], 'missing-deal', 1], // its own key
      [shuffleWithheld().bySeat(B)[0], 'missing-deal', 3], // both keys and its own (last) shuffle
      [shuffleWithheld().bySeat(A)[0], 'missing-shuffle', 3], // both keys and shuffle 0
      [sharesWithheld().bySeat(B)[0], 'missing-reveal', 1], // the BDEAL
      [secretWithheld().bySeat(B)[0], 'missing-reveal', 3] // BDEAL, BEND, its hand key
    ]
    for (const [r, reason, pieces] of cases) {
      expect(r, reason).toBeDefined()
      expect([reasonOf(r!), r!.body.evidence.length]).toEqual([reason, pieces])
      expectValid(r)
    }
  })

  test('the seats\' records against the dealer\'s BKEYS: a relayed key its seat did not sign (invalid-key), a key of another COMMIT (equivocation)', () => {
    for (const [reason, tamper] of [
      ['invalid-key', (k: Signed<any>) => ({ ...k, sig: 'ab'.repeat(64) })],
      ['equivocation', (k: Signed<any>) => forge(k, b => { b.commit = 'cd'.repeat(32) })]
    ] as const) {
      const t = blindTable([A, B], {
        game: 'duo',
        // Seat A never gets the BKEYS (so nobody shuffles: cheap); seat B gets them tampered.
        intercept: (from, to, doc) => from !== A || doc.type !== 'bkeys' ? doc
          : to === B ? signDocument('bkeys', { ...doc.body, keys: [tamper(doc.body.keys[0]), doc.body.keys[1]] }, signers[0]) : undefined
      })
      t.deal()
      const r = t.nodes.get(B)!.log.find(l => l.entry === 'abort')!.payload as SignedAbort
      expect([reasonOf(r), r.body.blame, r.body.evidence.map(e => e.type)]).toEqual([reason, [A], ['bkeys']])
      expectValid(r)
      // The dealer checked it with the same rules and logged it.
      expect(t.dealerNode.log.map(l => l.payload.body?.reason)).toEqual([reason])
    }
  })

  test('a seat restarted before the keys came still signs its missing-deal with its own key (kept in its snapshot)', () => {
    const d = docs()
    let now = d.commit.body.deadline - 10_000
    const init = (): MachineInit => ({
      table: { id: d.commit.body.table, game: 'duo', scheme: 'blind-v1', seats: [A, B], dealer: A }, signer: signers[1],
      timeouts: { contributeMs: 20_000, ackMs: 10_000, revealMs: 60_000 }, beacon: null, now: () => now, random: seededRandom(new Uint8Array(32).fill(99))
    })
    const before = new BlindSeatMachine(init())
    const saved = before.receive(A, d.commit).filter(e => e.kind === 'persist' && e.key === blindSeatHandKey(d.commit.body.table, 1))
    const snapshot = JSON.parse(JSON.stringify((saved.at(-1) as { value: unknown }).value)) as BlindSeatSnapshot
    const after = new BlindSeatMachine(init())
    after.restore(undefined, [snapshot])
    now += 100_000
    // It asks the dealer first; no answer comes.
    expect(after.tick(now).map(e => e.kind === 'send' ? e.doc.type : e.kind)).toEqual(['ask'])
    now += 10_001
    const r = after.tick(now).find(e => e.kind === 'append')?.payload as SignedAbort
    expect([reasonOf(r), r.body.evidence.map(e => e.type)]).toEqual(['missing-deal', ['bkey']])
    expect(r.body.evidence[0]).toEqual(snapshot.ownKey)
    expectValid(r)
  })

  test('a seat\'s record that breaks a rule is refused by the dealer machine, not logged', () => {
    const fresh = blindTable([A, B], { game: 'duo', intercept: (from, _to, doc) => (from === A && doc.type === 'bkeys' ? undefined : doc) })
    const hand = fresh.deal()
    const commit = fresh.nodes.get(B)!.frames.find(f => f.type === 'commit') as SignedCommit
    // A missing-deal without its author's key: the dealer refuses it and goes on.
    const bogus = signAbort(commit, 'missing-deal', [A], 'no deal', [], signers[1])
    fresh.run(fresh.nodes.get(B)!, 'seat', [{ kind: 'send', to: A, doc: bogus }])
    expect(fresh.rejections.some(r => r.includes('does not verify') && r.includes(Reason.ABORT_EVIDENCE))).toBe(true)
    expect(fresh.dealerNode.log).toEqual([])
    expect(fresh.dealerNode.dealer!.status().map(s => s.hand)).toEqual([hand])
  })
})

describe('claims of absence', () => {
  test('missing-key: signer, blame, robots, foreign evidence', () => {
    const r = keyWithheld().byDealer[0]
    const d = docs()
    only(resign(r, b => { b.evidence.push(d.keyB) }), Reason.ABORT_BLAME) // blames B, whose key it holds
    only(resign(r, b => { b.blame = [] }), Reason.ABORT_BLAME)
    only(signDocument('abort', r.body, signers[1]), Reason.ABORT_SIGNER) // a seat signs the dealer's reason
    only(resign(r, b => { b.evidence.push(forge(d.keyB, k => { k.hand = 7 })) }), Reason.ABORT_FOREIGN_EVIDENCE)
    only(resign(r, b => { b.evidence.push(d.shuffle0) }), Reason.ABORT_EVIDENCE) // a kind the reason never carries
  })

  test('missing-shuffle: blames the seat after the last shuffle in its evidence, carries every key and that shuffle', () => {
    const r = shuffleWithheld().byDealer[0]
    const d = docs()
    expect(r.body.evidence.map(e => e.type)).toEqual(['bkey', 'bkey', 'bshuffle'])
    only(resign(r, b => { b.evidence.push(d.shuffle1) }), Reason.ABORT_BLAME) // B's shuffle is in it
    only(resign(r, b => { b.evidence = b.evidence.slice(0, 2) }), Reason.ABORT_BLAME) // then it was seat 0's turn
    only(resign(r, b => { b.evidence = b.evidence.slice(1) }), Reason.ABORT_EVIDENCE) // a key missing
    // Seat A's own record, the keys given as the dealer's BKEYS: the same rules.
    expectValid(record('missing-shuffle', A, [B], [d.keys, d.shuffle0]))
  })

  test('missing-shares: blames exactly the seats with shares asked and absent', () => {
    const r = sharesWithheld().byDealer[0]
    const d = docs()
    expect(r.body.evidence.map(e => e.type)).toEqual(['bdeal', 'bshares'])
    only(resign(r, b => { b.evidence.push(d.sharesBtoA) }), Reason.ABORT_BLAME)
    only(resign(r, b => { b.blame = [A, B] }), Reason.ABORT_BLAME) // A's shares are in it
    only(resign(r, b => { b.evidence = b.evidence.slice(1) }), Reason.ABORT_EVIDENCE) // no BDEAL
    only(resign(r, b => { b.evidence.push(forge(d.sharesAtoB, s => { s.stage = 'faceUp' })) }), Reason.ABORT_EVIDENCE) // shares nobody asked for
  })

  test('missing-secret: the BEND and every hand key held; blames exactly the seats without one', () => {
    const r = secretWithheld().byDealer[0]
    const d = docs()
    expect(r.body.evidence.map(e => e.type)).toEqual(['bend', 'bsecret'])
    only(resign(r, b => { b.evidence.push(d.secretA) }), Reason.ABORT_BLAME)
    only(resign(r, b => { b.evidence = b.evidence.slice(1) }), Reason.ABORT_EVIDENCE)
    only(resign(r, b => { b.blame = [A, B] }), Reason.ABORT_BLAME)
  })

  test('missing-deal and missing-reveal: the author\'s own contribution, never another seat\'s hand key', () => {
    const deal = noKeys().bySeat(B)[0]
    const late = shuffleWithheld().bySeat(B)[0]
    const reveal = secretWithheld().bySeat(B)[0]
    const d = docs()
    only(resign(deal, b => { b.evidence = [] }), Reason.ABORT_EVIDENCE)
    only(resign(deal, b => { b.blame = [B] }), Reason.ABORT_BLAME) // it blames the dealer, nobody else
    only(resign(late, b => { b.evidence = b.evidence.filter(e => e.type !== 'bshuffle').concat(d.shuffle0) }), Reason.ABORT_EVIDENCE) // not the last shuffle
    only(resign(reveal, b => { b.evidence = b.evidence.filter(e => e.type !== 'bsecret') }), Reason.ABORT_EVIDENCE) // after the BEND, its key
    only(resign(reveal, b => { b.evidence.push(d.secretA) }), Reason.ABORT_EVIDENCE) // a hand key it never held
    only(resign(reveal, b => { b.evidence = b.evidence.filter(e => e.type !== 'bdeal') }), Reason.ABORT_EVIDENCE)
  })
})

describe('claims of a faulty document are re-checked', () => {
  test('invalid-key: a key whose proof fails is shown; a key that passes refutes the record', () => {
    const d = docs()
    const bad = forge(d.keyA, k => { k.proof = { ...k.proof, s: scalarToHex(12345n) } })
    expectValid(record('invalid-key', B, [A], [bad]))
    only(record('invalid-key', B, [A], [d.keyA]), Reason.ABORT_REFUTED)
    only(record('invalid-key', B, [B], [bad]), Reason.ABORT_EVIDENCE) // blames someone whose key is not there
    // The dealer's BKEYS relaying a key its seat did not sign: a seat blames the dealer.
    const relayed = forge(d.keys, k => { k.keys[0] = { ...k.keys[0], sig: k.keys[1].sig } })
    expectValid(record('invalid-key', B, [A], [relayed]))
    only(record('invalid-key', B, [A], [d.keys]), Reason.ABORT_REFUTED)
  })

  test('invalid-shuffle: the shuffle, its input and every key; a proof that passes refutes it', () => {
    const d = docs()
    const reversed = forge(d.shuffle1, s => { s.deck = s.deck.slice().reverse() })
    expectValid(record('invalid-shuffle', A, [B], [d.keyA, d.keyB, d.shuffle0, reversed]))
    only(record('invalid-shuffle', A, [B], [d.keyA, d.keyB, d.shuffle0, d.shuffle1]), Reason.ABORT_REFUTED)
    only(record('invalid-shuffle', A, [B], [d.keyA, d.keyB, reversed]), Reason.ABORT_EVIDENCE) // no input
    only(record('invalid-shuffle', A, [B], [d.keyA, d.shuffle0, reversed]), Reason.ABORT_EVIDENCE) // a key missing
    only(record('invalid-shuffle', B, [A], [d.keys, d.shuffle0, reversed]), Reason.ABORT_BLAME) // blames another than its author
    only(record('invalid-shuffle', ids[2], [B], [d.keys, d.shuffle0, reversed]), Reason.ABORT_SIGNER) // signed by no party of the hand
  })

  test('invalid-shares: the shares, their author\'s key, the last shuffle and the BDEAL; shares that verify refute it', () => {
    const d = docs()
    const wrong = forge(d.sharesAtoB, s => { s.shares[0] = { ...s.shares[0], d: s.shares[1].d } })
    expectValid(record('invalid-shares', B, [A], [d.keyA, d.shuffle1, d.deal, wrong]))
    only(record('invalid-shares', B, [A], [d.keyA, d.shuffle1, d.deal, d.sharesAtoB]), Reason.ABORT_REFUTED)
    only(record('invalid-shares', B, [A], [d.keyA, d.shuffle1, wrong]), Reason.ABORT_EVIDENCE) // no BDEAL
    only(record('invalid-shares', B, [A], [d.keyA, d.shuffle0, d.deal, wrong]), Reason.ABORT_EVIDENCE) // not the last shuffle
    // A last shuffle whose deck is not the game's size (re-signed by its seat): faulty evidence, not a crash (issue 18).
    const short = forge(d.shuffle1, b => { b.deck = b.deck.slice(0, 10) })
    only(record('invalid-shares', B, [A], [d.keyA, short, d.deal, d.sharesAtoB]), Reason.ABORT_EVIDENCE)
  })

  test('invalid-reveal: the BDEAL or BREVEAL and what checks it; one that passes refutes it', () => {
    const d = docs()
    const reveal = (secrets: Array<Signed<any>>): Signed<any> => signDocument('breveal', {
      table: d.commit.body.table, hand: d.commit.body.hand, commit: docDigest(d.commit), beacon: null, params: d.deal.body.params, stages: d.deal.body.stages, secrets
    }, signers[0])
    const honest = reveal([d.secretA, d.secretB])
    only(record('invalid-reveal', B, [A], [d.keys, d.deal, honest]), Reason.ABORT_REFUTED)
    const badKey = forge(d.secretA, s => { s.secret = d.secretB.body.secret })
    expectValid(record('invalid-reveal', B, [A], [d.keys, d.deal, reveal([badKey, d.secretB])]))
    only(record('invalid-reveal', B, [A], [d.deal, reveal([badKey, d.secretB])]), Reason.ABORT_EVIDENCE) // no keys to check them with
    only(record('invalid-reveal', B, [A], [d.deal]), Reason.ABORT_REFUTED) // the BDEAL passes
    expectValid(record('invalid-reveal', B, [A], [forge(d.deal, b => { b.params = { dealer: 1 } })]))
    // A BREVEAL listing a stage twice fails the seat's receipt check (§10 step 1): the record holds, not refuted (issue 18).
    const twice = signDocument('breveal', { ...honest.body, stages: [...d.deal.body.stages, ...d.deal.body.stages] }, signers[0])
    expectValid(record('invalid-reveal', B, [A], [d.keys, d.deal, twice]))
    // An unlock on a hand that is not time-locked fails the seat's receipt check (§10 step 4, §14.2): the record holds (issue 18).
    const unlock = signDocument('bunlock', {
      table: d.commit.body.table, hand: d.commit.body.hand, commit: docDigest(d.commit), beacon: { round: 5, randomness: 'ab'.repeat(32), signature: 'cd'.repeat(48) },
      keys: [{ seat: 1, secret: d.secretB.body.secret, reason: 'missing-secret' }]
    }, signers[0])
    expectValid(record('invalid-reveal', B, [A], [d.keys, d.deal, signDocument('breveal', { ...honest.body, unlock }, signers[0])]))
    expectValid(record('invalid-reveal', B, [A], [d.keys, d.deal, signDocument('breveal', { ...honest.body, secrets: [d.secretA], unlock }, signers[0])]))
  })

  test('equivocation needs two conflicting documents signed by the dealer', () => {
    const d = docs()
    only(record('equivocation', B, [A], [d.keys]), Reason.ABORT_NO_CONFLICT)
    const other = forge(d.commit, c => { c.deadline += 1 })
    expectValid(record('equivocation', B, [A], [other]))
    const keyForOther = forge(d.keyA, k => { k.commit = docDigest(other) })
    expectValid(record('equivocation', B, [A], [forge(d.keys, k => { k.keys[0] = keyForOther })]))
  })
})

describe('reasons and fields of the scheme', () => {
  test('a commit-reveal reason in a blind hand, a blind reason in a commit-reveal hand, a dealer secret, a beacon that was never bound', () => {
    const d = docs()
    only(record('missing-pledge', A, [B], []), Reason.ABORT_REASON)
    only(record('dealer-stopped', A, [A], [], b => { b.secret = 'ab'.repeat(32) }), Reason.ABORT_SECRET)
    expectValid(record('dealer-stopped', A, [A], []))
    only(record('beacon-unavailable', A, [], []), Reason.ABORT_NO_BEACON)
    const plain = forge(d.commit, c => { c.scheme = 'atout-v1' })
    const r = signAbort(plain, 'missing-key', [B], 'x', [], signers[0])
    expect(codes(r)).toContain(Reason.ABORT_REASON)
  })
})
