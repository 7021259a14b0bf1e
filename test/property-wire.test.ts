import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import type { Signed } from '../src/core/signed.js'
import { signAbort } from '../src/protocol/abort.js'
import type { SignedCommit } from '../src/core/hand/messages.js'
import { Rejection, type Effect } from '../src/protocol/types.js'
import { decodeFrame, encodeFrame, WireError } from '../src/protocol/wire.js'
import { fcParams, garbageBytes, mutate, mutationArb } from './helpers/hostile.js'
import { memoryTable, type MemoryTable } from './helpers/memory-table.js'

// Hostile input on the table protocol, property-based (fast-check, fixed seed): every wire message
// type, mutated at random paths with odd values, and raw garbage, sent to the dealer and to a seat
// in every phase of a hand. Each must be refused with a reason (a WireError from the frame check, a
// Rejection from the machine), nothing may throw anything else, and nothing may change: the hand,
// finished afterwards, ends with byte-identical logs, saved state and frames to a twin table that
// saw none of it. In memory on the injected clock: thousands of inputs in a few seconds.

const TYPES = ['commit', 'pledge', 'pledges', 'view', 'nonce', 'cards', 'reveal', 'ack', 'abort', 'final'] as const
const PER_TYPE = 300
const PHASES = ['pledging', 'dealt', 'done'] as const
type Phase = typeof PHASES[number]

interface Outcome { wire: number, rejected: number, ignored: number }

/**
 * Three hands on a seeded table. The first is plain (its documents are the material the fuzzer
 * mutates: genuinely signed by the members, for another hand); in the second, seat 3's pledge is
 * held back to keep the hand in `pledging` a while, and `fuzz` runs in each phase; the third shows
 * the chain and counters were not disturbed. Returns everything the nodes keep.
 */
function playHand (fuzz: (t: MemoryTable, phase: Phase) => void): { t: MemoryTable, state: string } {
  const t = memoryTable({ seed: 'property-wire' })
  const first = t.dealer.startHand({ dealer: 3 })
  t.run(t.table.dealer, first.effects)
  t.run(t.table.dealer, t.dealer.end(first.hand))
  const late = t.signers[3].peerId
  let held: Signed<unknown> | undefined
  t.intercept = (from, _to, doc) => {
    if (from === late && doc.type === 'pledge' && held === undefined) { held = doc; return undefined }
    return doc
  }
  const { hand, effects } = t.dealer.startHand({ dealer: 0 })
  t.run(t.table.dealer, effects)
  fuzz(t, 'pledging')
  t.run(late, [{ kind: 'send', to: t.table.dealer, doc: held as Signed<unknown> }])
  fuzz(t, 'dealt')
  t.run(t.table.dealer, t.dealer.end(hand))
  fuzz(t, 'done')
  const next = t.dealer.startHand({ dealer: 1 })
  t.run(t.table.dealer, next.effects)
  t.run(t.table.dealer, t.dealer.end(next.hand))
  const frames = Object.fromEntries([...t.frames].map(([k, v]) => [k, v.map(f => new TextDecoder().decode(f))]))
  const persisted = Object.fromEntries([...t.persisted].map(([k, v]) => [k, Object.fromEntries(v)]))
  const state = canonicalJson({ appended: Object.fromEntries(t.appended), persisted, frames, rejections: t.rejections })
  return { t, state }
}

/** Real documents of every type, as they crossed the wire in a reference hand (and one abort record). */
function realDocs (): Map<string, Signed<unknown>> {
  const { t } = playHand(() => {})
  const docs = new Map<string, Signed<unknown>>()
  for (const frames of t.frames.values()) {
    for (const f of frames) {
      const doc = JSON.parse(new TextDecoder().decode(f)) as Signed<unknown>
      if (!docs.has(doc.type) && (doc.body as { hand: number }).hand === 1) docs.set(doc.type, doc)
    }
  }
  const commit = docs.get('commit') as SignedCommit
  docs.set('abort', signAbort(commit, 'missing-pledge', [t.signers[3].peerId], 'no pledge from seat 3 by the deadline', [], t.signers[1]))
  return docs
}

describe('hostile frames on the table protocol (fast-check, fixed seed)', () => {
  it(`${TYPES.length} message types × ${PER_TYPE} mutations and raw garbage, in every phase, to the dealer and a seat: each refused with a reason, nothing changed`, () => {
    const docs = realDocs()
    for (const type of TYPES) expect(docs.has(type), type).toBe(true)
    const reference = playHand(() => {}).state
    const outcome: Outcome = { wire: 0, rejected: 0, ignored: 0 }
    const reasons = new Set<string>()

    /** Hands one frame to one machine as the host does; checks it is refused or a no-op. */
    const deliver = (t: MemoryTable, to: 'dealer' | 'seat', frame: Uint8Array, base: unknown): void => {
      let doc
      try {
        doc = decodeFrame(frame)
      } catch (err) {
        // Plain checks in this hot loop: an expect() per input costs more than the input itself.
        if (!(err instanceof WireError) || !/^(frame|invalid message|not canonical JSON)/.test(err.message)) throw new Error(`not a WireError with a reason: ${String(err)}`)
        reasons.add((err as Error).message.replace(/: .*$/s, ''))
        outcome.wire++
        return
      }
      let effects: Effect[]
      try {
        effects = to === 'dealer'
          ? t.dealer.receive(t.signers[1].peerId, doc)
          : (t.seats.get(t.signers[1].peerId) as NonNullable<ReturnType<typeof t.seats.get>>).receive(t.table.dealer, doc)
      } catch (err) {
        if (!(err instanceof Rejection) || err.message.length === 0) throw new Error(`not a Rejection with a reason: ${String((err as Error)?.stack)}`)
        reasons.add((err as Error).message.slice(0, 40))
        outcome.rejected++
        return
      }
      // Accepted without a word: only a document identical to one already handled (a replay that
      // changes nothing) may be; anything else slipping through is a failure.
      expect(effects.filter(e => e.kind !== 'event'), canonicalJson(doc)).toEqual([])
      expect(canonicalJson(doc)).toBe(canonicalJson(base))
      outcome.ignored++
    }

    const fuzzed = playHand((t, phase) => {
      for (const type of TYPES) {
        const base = docs.get(type) as Signed<unknown>
        let i = 0
        fc.assert(fc.property(fc.array(mutationArb, { minLength: 1, maxLength: 3 }), (mutations) => {
          const mutated = mutate(base, mutations)
          const frame = new TextEncoder().encode(JSON.stringify(mutated) ?? 'null')
          deliver(t, i++ % 2 === 0 ? 'dealer' : 'seat', frame, base)
        }), fcParams(PER_TYPE / PHASES.length))
      }
      let i = 0
      fc.assert(fc.property(garbageBytes, (bytes) => { deliver(t, i++ % 2 === 0 ? 'dealer' : 'seat', bytes, null) }), fcParams(300))
      // The real documents themselves, replayed in this phase: refused or harmless.
      for (const doc of docs.values()) for (const to of ['dealer', 'seat'] as const) deliver(t, to, encodeFrame(doc), doc)
    }).state

    const total = outcome.wire + outcome.rejected + outcome.ignored
    expect(total).toBeGreaterThanOrEqual(TYPES.length * PER_TYPE + 3 * 300)
    // Most mutations break the schema; the rest reach the machines and are refused there.
    expect(outcome.wire).toBeGreaterThan(total / 3)
    expect(outcome.rejected).toBeGreaterThan(100)
    expect(fuzzed).toBe(reference)
    console.log(`hostile frames: ${total} inputs, ${outcome.wire} refused by the frame check, ${outcome.rejected} by the machines, ${outcome.ignored} harmless replays; ${reasons.size} distinct reasons`)
  })
})

describe('a frame with no canonical form is refused before any machine sees it', () => {
  it('a fraction, -0 or a number past 2^53 anywhere (fields a schema leaves open included), and nesting past 64 levels: each a WireError naming it', () => {
    const docs = realDocs()
    const abort = docs.get('abort') as Signed<{ evidence: unknown[] }>
    for (const [value, reason] of [[1.5, /not a safe integer \(1\.5\)/], [-0, /not a safe integer \(0\)/], [2 ** 53 + 2, /not a safe integer/]] as const) {
      // Abort evidence bodies are open (z.unknown()): only the canonical check can refuse this.
      const doc = { ...abort, body: { ...abort.body, evidence: [{ type: 'x', signer: abort.signer, body: { n: value }, sig: '00' }] } }
      expect(() => decodeFrame(new TextEncoder().encode(JSON.stringify(doc).replace('"n":0', '"n":-0')))).toThrow(reason)
    }
    let deep: unknown = 1
    for (let i = 0; i < 70; i++) deep = [deep]
    const nested = { ...abort, body: { ...abort.body, evidence: [{ type: 'x', signer: abort.signer, body: deep, sig: '00' }] } }
    expect(() => decodeFrame(encodeFrame(nested as Signed<unknown>))).toThrow(new WireError('not canonical JSON: nested deeper than 64 levels'))
    // Every real document passes it.
    for (const doc of docs.values()) expect(() => decodeFrame(encodeFrame(doc))).not.toThrow()
  })
})
