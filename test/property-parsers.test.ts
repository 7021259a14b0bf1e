import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/core/canonical.js'
import { verifyAbort } from '../src/core/hand/abort-rules.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { checkLine, GENESIS_PREV, inThreadChecker, makeEntry, makeHead, verifyLog } from '../src/core/log/index.js'
import { verifyLogPayload } from '../src/core/receipt.js'
import { loadNodeConfig, parseNodeConfig } from '../src/daemon/config.js'
import { NodeInputError } from '../src/daemon/errors.js'
import { verifyMemo } from '../src/daemon/verify-memo.js'
import { prepareLocalTable } from '../src/daemon/local-table.js'
import { fcParams, garbageBytes, mutate, mutationArb, nastyValue } from './helpers/hostile.js'
import { memoryTable } from './helpers/memory-table.js'

// Hostile input for the parsers, property-based (fast-check, fixed seed): log lines, whole logs,
// receipts and abort records, and node config files. Each input is mutated from a real, valid one
// (or is raw garbage); every parser must answer with its own kind of refusal and a reason, never
// throw anything else, and must refuse every input that is not byte for byte the valid one.

// Signatures are checked as a node checks them: OpenSSL Ed25519 behind the node's memo of valid
// (signer, bytes, signature) triples. A mutated input changes one or two documents; the others are
// the valid originals, whose checks would otherwise be repeated thousands of times.
const verifyDoc = verifyMemo().verify
/** A plain check for the hot loops: an expect() per generated input costs more than the input. */
function check (ok: boolean, what: () => string): void { if (!ok) throw new Error(what()) }
/** Equal as canonical JSON; a value canonical JSON refuses (an unsafe number) is not equal to a valid one. */
const sameJson = (a: unknown, b: unknown): boolean => { try { return canonicalJson(a) === canonicalJson(b) } catch { return false } }

/** `mutated` is `base` with some elements of its top-level (or body's) `list` removed, nothing else. */
function onlyDropped (base: unknown, mutated: unknown, list: 'acks' | 'evidence'): boolean {
  const holder = (v: unknown): Record<string, unknown> | undefined => {
    const o = v as Record<string, unknown> | null
    if (o === null || typeof o !== 'object') return undefined
    return list in o ? o : (o.body as Record<string, unknown> | undefined)
  }
  const b = holder(base)
  const m = holder(mutated)
  if (b === undefined || m === undefined || !Array.isArray(m[list]) || !Array.isArray(b[list])) return false
  const kept = (m[list] as unknown[]).every(x => (b[list] as unknown[]).some(y => sameJson(x, y)))
  const rest = (v: unknown, h: Record<string, unknown>): unknown => { const saved = h[list]; h[list] = []; const out = structuredClone(v); h[list] = saved; return out }
  return kept && sameJson(rest(base, b), rest(mutated, m))
}
let material: { receipts: unknown[], abort: unknown, lines: string[], owner: string }

beforeAll(() => {
  // Two hands and an abort on a seeded in-memory table; the dealer's log of them, signed.
  const t = memoryTable({ seed: 'property-parsers', timeouts: { contributeMs: 5_000 } })
  for (let h = 0; h < 2; h++) {
    const { hand, effects } = t.dealer.startHand({ dealer: h })
    t.run(t.table.dealer, effects)
    t.run(t.table.dealer, t.dealer.end(hand))
  }
  t.intercept = (from, _to, doc) => (from === t.signers[2].peerId ? undefined : doc)
  t.run(t.table.dealer, t.dealer.startHand({ dealer: 2 }).effects)
  t.clock.now += 6_000
  t.run(t.table.dealer, t.dealer.tick(t.clock.now))
  const dealerLog = (t.appended.get(t.table.dealer) ?? []).filter((_, i, all) => all.findIndex(x => x.hand === all[i].hand && x.entry === all[i].entry) === i)
  const owner = t.signers[0]
  let prev = GENESIS_PREV
  const lines: string[] = []
  dealerLog.forEach((e, seq) => {
    const made = makeEntry(owner, { seq, prev, kind: e.entry, payload: e.payload, time: 1_700_000_000_000 + seq })
    lines.push(made.line)
    prev = made.hash
  })
  lines.unshift(makeHead(owner, lines.length - 1, prev).line)
  material = {
    receipts: dealerLog.filter(e => e.entry === 'receipt').map(e => e.payload),
    abort: dealerLog.find(e => e.entry === 'abort')?.payload,
    lines,
    owner: owner.peerId
  }
})

describe('hostile input for the parsers (fast-check, fixed seed)', () => {
  it('receipts and abort records: 1,200 mutations, each refused with problems, none thrown', () => {
    const [receipt] = material.receipts
    expect(verifyReceipt(receipt, { verifyDoc }).problems).toEqual([])
    expect(verifyAbort(material.abort, { verifyDoc }).problems).toEqual([])
    let refused = 0
    let n = 0
    fc.assert(fc.property(fc.boolean(), fc.array(mutationArb, { minLength: 1, maxLength: 3 }), (isReceipt, mutations) => {
      const base = isReceipt ? receipt : material.abort
      // Through JSON, as a document read from a file or the network would be.
      const mutated = JSON.parse(JSON.stringify(mutate(base, mutations)) ?? 'null') as unknown
      const verdict = isReceipt ? verifyReceipt(mutated, { verifyDoc }) : verifyAbort(mutated, { verifyDoc })
      const problems = verdict.problems
      // The log's payload check refuses it too (sampled: it doubles the cost).
      if (++n % 10 === 0 && !sameJson(mutated, base)) check(verifyLogPayload(isReceipt ? 'receipt' : 'abort', mutated, { verifyDoc }).problems.length > 0, () => 'the log payload check accepts it')
      if (sameJson(mutated, base)) return
      // A receipt with a countersignature dropped verifies as incomplete (never a pass, but no
      // problem in it is false); a record with less evidence may still hold: both are allowed.
      if (onlyDropped(base, mutated, isReceipt ? 'acks' : 'evidence')) { check(!isReceipt || !verdict.ok, () => 'a receipt short of an ack passed'); return }
      check(!verdict.ok && problems.length > 0 && problems.every(p => typeof p.code === 'string' && typeof p.message === 'string' && p.message.length > 0), () => `accepted: ${JSON.stringify(mutations)}`)
      refused++
    }), fcParams(1_200))
    expect(refused).toBeGreaterThan(900)
  })

  it('log lines: 3,000 mutated entries and heads and 1,000 garbage lines, each refused with a reason, none thrown', () => {
    for (const line of material.lines) expect(checkLine(line, verifyLogPayload, verifyDoc).problems).toEqual([])
    let refused = 0
    fc.assert(fc.property(fc.nat(), fc.array(mutationArb, { minLength: 1, maxLength: 3 }), (pick, mutations) => {
      const base = material.lines[pick % material.lines.length]
      const line = JSON.stringify(mutate(JSON.parse(base), mutations)) ?? 'null'
      const result = checkLine(line, verifyLogPayload, verifyDoc)
      if (line === base) return
      check(result.problems.length > 0, () => `accepted: ${line.slice(0, 300)}`)
      refused++
    }), fcParams(3_000))
    fc.assert(fc.property(garbageBytes, (bytes) => {
      const result = checkLine(bytes, verifyLogPayload, verifyDoc)
      check(result.problems.length > 0, () => 'garbage accepted')
      refused++
    }), fcParams(1_000))
    expect(refused).toBeGreaterThan(3_500)
  })

  it('whole logs: 250 logs with lines dropped, repeated, swapped, edited or added; every changed log fails, naming a problem', async () => {
    const edit = fc.oneof(
      fc.record({ op: fc.constant('drop' as const), at: fc.nat() }),
      fc.record({ op: fc.constant('repeat' as const), at: fc.nat() }),
      fc.record({ op: fc.constant('swap' as const), at: fc.nat(), with: fc.nat() }),
      fc.record({ op: fc.constant('replace' as const), at: fc.nat(), line: fc.string({ maxLength: 80 }) }),
      fc.record({ op: fc.constant('insert' as const), at: fc.nat(), line: fc.oneof(fc.string({ maxLength: 80 }), nastyValue.map(v => JSON.stringify(v) ?? '')) })
    )
    await fc.assert(fc.asyncProperty(fc.array(edit, { minLength: 1, maxLength: 4 }), async (edits) => {
      const lines = [...material.lines]
      for (const e of edits) {
        const i = e.at % Math.max(1, lines.length)
        if (e.op === 'drop') lines.splice(i, 1)
        else if (e.op === 'repeat') lines.splice(i, 0, lines[i] ?? '')
        else if (e.op === 'swap') { const j = e.with % Math.max(1, lines.length); [lines[i], lines[j]] = [lines[j], lines[i]] }
        else if (e.op === 'replace') lines[i] = e.line
        else lines.splice(i, 0, e.line)
      }
      const failures: string[] = []
      const verdict = await verifyLog(lines.filter(l => l !== undefined), { checker: inThreadChecker(verifyLogPayload, verifyDoc), verifyPayload: verifyLogPayload, expectOwner: material.owner, onFailure: f => { failures.push(...f.problems) } })
      if (lines.join('\n') === material.lines.join('\n')) return
      check(verdict.failed > 0 && failures.length > 0, () => `a changed log passed: ${lines.join('\n').slice(0, 400)}`)
    }), fcParams(250))
  })
})

describe('hostile node config files (fast-check, fixed seed)', () => {
  let root: string
  let valid: unknown
  let source: string
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'fairdeal-property-config-'))
    const table = await prepareLocalTable({ root, game: 'coinche', scheme: 'atout-v1', seats: 4, freePort: async () => 20_000 })
    source = table.files[1]
    valid = JSON.parse(await (await import('node:fs/promises')).readFile(source, 'utf8'))
  })
  afterAll(async () => { await rm(root, { recursive: true, force: true }) })

  it('2,000 mutated configs: each accepted whole or refused with one line naming the file and field; none thrown otherwise', async () => {
    await parseNodeConfig(valid, source)
    let refused = 0
    await fc.assert(fc.asyncProperty(fc.array(mutationArb, { minLength: 1, maxLength: 3 }), async (mutations) => {
      const value = JSON.parse(JSON.stringify(mutate(valid, mutations)) ?? 'null') as unknown
      try {
        await parseNodeConfig(value, source)
      } catch (err) {
        const message = (err as Error).message
        check(err instanceof NodeInputError && message.startsWith(`${source}: `) && !message.includes('\n'), () => String((err as Error)?.stack))
        refused++
      }
    }), fcParams(2_000))
    expect(refused).toBeGreaterThan(1_000)
  })

  it('200 garbage config files on disk: each refused with one line, never a stack trace', async () => {
    const file = join(root, 'garbage.json')
    await fc.assert(fc.asyncProperty(garbageBytes, async (bytes) => {
      await writeFile(file, bytes)
      const err = await loadNodeConfig(file).then(() => null, (e: unknown) => e)
      check(err instanceof NodeInputError && !(err as Error).message.includes('\n'), () => String((err as Error)?.stack))
    }), fcParams(200))
  })
})
