// Witnessed heads (issue 8): the cosigned-head format, a witness's store, and a log checked
// against what its owner gave witnesses: a rolled-back and a forked log are each caught, with
// both signed documents as evidence. In memory, plus real LevelDB for the store.
import { afterEach, describe, expect, it } from 'vitest'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import { checkWitnessLine, cosignHead, MAX_HEADS_HELD, WitnessComparer, type WitnessStatement } from '../src/core/log/witness.js'
import { canonicalJson } from '../src/core/canonical.js'
import { entryHash, makeEntry, makeHead, GENESIS_PREV, type LogHead } from '../src/core/log/format.js'
import { verifyLog } from '../src/core/log/index.js'
import { WitnessStore, WitnessRefusal } from '../src/store/witness-store.js'
import { OWNER, SEAT, STRANGER, buildLog, testPayload, verifyTestPayload } from './helpers/log-fixtures.js'

const SEEN = 1_765_000_000_000
const headOf = (lines: string[]): LogHead => JSON.parse(lines[0]) as LogHead

function statement (line: string): WitnessStatement {
  const c = checkWitnessLine(line)
  if (!c.ok) throw new Error(c.problem)
  return c.statement
}

/** What the owner's head was at `seq`, for a log built by buildLog (its entries are deterministic). */
function headAt (seq: number, lines = buildLog(seq + 1)): LogHead { return headOf(lines) }

async function compare (lines: string[], statements: WitnessStatement[]): Promise<ReturnType<WitnessComparer['finish']>> {
  const comparer = new WitnessComparer(statements, OWNER.peerId)
  async function * feed (): AsyncGenerator<string> { yield * lines }
  const verdict = await verifyLog(comparer.tap(feed()), { verifyPayload: verifyTestPayload })
  expect(verdict.failed).toBe(0) // each copy verifies alone: only the witnesses can tell
  return comparer.finish()
}

/** A witness store (SEAT's) on real LevelDB in a temp dir, its clock ticking 1 ms per cosignature from SEEN. */
const storeDirs: string[] = []
afterEach(async () => { for (const d of storeDirs.splice(0)) await rm(d, { recursive: true, force: true }) })
async function openStore (): Promise<{ store: WitnessStore, db: Level<string, any> }> {
  const dir = await mkdtemp(join(tmpdir(), 'fairdeal-witness-'))
  storeDirs.push(dir)
  const db = new Level<string, any>(dir)
  let now = SEEN
  return { store: new WitnessStore(db, SEAT, () => now++), db }
}

describe('a cosigned head', () => {
  it('verifies, names witness, owner, seq, hash and time; any change breaks it', () => {
    const head = headAt(4)
    const { line } = cosignHead(SEAT, head, SEEN)
    expect(line).toBe(canonicalJson(JSON.parse(line)))
    expect(statement(line)).toMatchObject({ witness: SEAT.peerId, owner: OWNER.peerId, seq: 4, hash: head.body.hash, seen: SEEN, headLine: canonicalJson(head) })
    expect(checkWitnessLine(line.replace(`"seen":${SEEN}`, `"seen":${SEEN + 1}`))).toEqual({ ok: false, problem: 'witness signature does not verify' })
    expect(checkWitnessLine(line.replace('"seq":4', '"seq":5'))).toMatchObject({ ok: false, problem: /the head does not verify/ })
    expect(checkWitnessLine(cosignHead(OWNER, head, SEEN).line)).toEqual({ ok: false, problem: 'a log owner cannot witness its own head' })
    expect(checkWitnessLine(line.replace('"type":"log-witness"', '"type":"log-head"'))).toMatchObject({ ok: false })
    expect(checkWitnessLine(JSON.stringify(JSON.parse(line), null, 1))).toEqual({ ok: false, problem: 'not in canonical form' })
  })
})

describe('a log checked against witnessed heads', () => {
  const honest = buildLog(8)
  const witnessed = [statement(cosignHead(SEAT, headAt(5), SEEN).line), statement(cosignHead(STRANGER, headOf(honest), SEEN + 5).line)]

  it('the honest log agrees with every head its owner gave', async () => {
    expect(await compare(honest, witnessed)).toEqual([])
  })

  it('a rolled-back log (re-signed shorter) is caught, with the witnessed head and the log\'s head', async () => {
    const entries = honest.slice(1, 5) // seq 0..3
    const last = JSON.parse(entries[3]) as { body: { seq: number } }
    const rolledHead = makeHead(OWNER, last.body.seq, (await import('../src/core/log/format.js')).entryHash(entries[3])).line
    const failures = await compare([rolledHead, ...entries], witnessed)
    expect(failures.map(f => [f.kind, f.seq, f.witness])).toEqual([['rolled-back', 5, SEAT.peerId], ['rolled-back', 7, STRANGER.peerId]])
    expect(failures[0].message).toMatch(/^rolled back: witness .* received the owner's signed head at seq 5 .* on 2025-12-06T05:46:40\.000Z, but this log's signed head is at seq 3$/)
    expect(failures[0].evidence).toEqual([witnessed[0].line, rolledHead])
  })

  it('a forked log (another entry 4, then more) is caught at the witnessed seqs', async () => {
    const lines: string[] = []
    let prev = GENESIS_PREV
    for (let seq = 0; seq < 8; seq++) {
      const made = makeEntry(OWNER, { seq, prev, kind: 'receipt', payload: testPayload(seq === 4 ? 99 : seq), time: 1_700_000_000_000 + seq })
      lines.push(made.line)
      prev = made.hash
    }
    const fork = [makeHead(OWNER, 7, prev).line, ...lines]
    const failures = await compare(fork, witnessed)
    expect(failures.map(f => [f.kind, f.seq])).toEqual([['forked', 5], ['forked', 7]])
    expect(failures[0].evidence[1]).toBe(fork[6]) // the log's own entry at seq 5
    expect(failures[1].evidence[1]).toBe(fork[0]) // at the head: two heads signed by the owner for one seq
    expect(failures[1].message).toMatch(/^forked: .* at seq 7 /)
  })

  it('an entry at a witnessed seq changed by someone else is no fork: only its own line check fails (issue 18)', async () => {
    const tampered = [...honest]
    tampered[6] = tampered[6].replace('"time":', '"time":1') // seq 5, no longer what the owner signed
    const comparer = new WitnessComparer(witnessed, OWNER.peerId)
    async function * feed (): AsyncGenerator<string> { yield * tampered }
    const verdict = await verifyLog(comparer.tap(feed()), { verifyPayload: verifyTestPayload })
    expect(verdict.failed).toBeGreaterThan(0)
    expect(comparer.finish()).toEqual([])
  })
})

describe('a witness\'s store (real LevelDB)', () => {
  it('keeps the latest head of each peer, cosigned, and the ones that contradict it as evidence', async () => {
    const { store, db } = await openStore()
    const h = (seq: number): string => canonicalJson(headAt(seq))
    expect((await store.observe(OWNER.peerId, h(2))).status).toBe('new')
    expect((await store.observe(OWNER.peerId, h(2))).status).toBe('known')
    expect((await store.observe(OWNER.peerId, h(4))).status).toBe('new')
    const back = await store.observe(OWNER.peerId, h(1))
    expect(back.status).toBe('conflict')
    const forkHead = canonicalJson(makeHead(OWNER, 4, 'ab'.repeat(32)).head)
    expect((await store.observe(OWNER.peerId, forkHead)).status).toBe('conflict')
    const held = (await store.heldFor(OWNER.peerId)).map(statement)
    expect(held.map(s => [s.seq, s.witness])).toEqual([[4, SEAT.peerId], [1, SEAT.peerId], [4, SEAT.peerId], [2, SEAT.peerId]])
    expect(held[0].seen).toBe(SEEN + 1)
    await expect(store.observe(STRANGER.peerId, h(3))).rejects.toThrow(WitnessRefusal)
    await expect(store.observe(OWNER.peerId, h(3).replace('"seq":3', '"seq":9'))).rejects.toThrow(/not an authentic log head/)
    expect(await store.heldFor(STRANGER.peerId)).toEqual([])
    await db.close()
  })
})

/** The owner's log of `n` entries after a repair at `at`: entries from `at` on are other hands (issue 18). */
function regrownLog (n: number, at: number): string[] {
  const lines: string[] = []
  let prev = GENESIS_PREV
  for (let seq = 0; seq < n; seq++) {
    const made = makeEntry(OWNER, { seq, prev, kind: 'receipt', payload: testPayload(seq >= at ? 100 + seq : seq), time: 1_700_000_000_000 + seq })
    lines.push(made.line)
    prev = made.hash
  }
  return [makeHead(OWNER, n - 1, prev).line, ...lines]
}

describe('a witness keeps what proves a fork or a rollback (issue 18)', () => {
  const heads = (lines: string[]): string => lines[0]

  it('a log repaired at seq 4, re-logged and grown past the witnessed seq 6 is still forked', async () => {
    const { store, db } = await openStore()
    for (let seq = 0; seq <= 6; seq++) await store.observe(OWNER.peerId, canonicalJson(headAt(seq)))
    // Back at seq 3 after the repair, then the re-logged hands 4.., each head announced.
    for (let n = 4; n <= 9; n++) await store.observe(OWNER.peerId, heads(regrownLog(n, 4)))
    const held = (await store.heldFor(OWNER.peerId)).map(statement)
    expect(held[0].seq).toBe(8)
    const failures = await compare(regrownLog(9, 4), held)
    expect(failures.filter(f => f.kind === 'forked').map(f => f.seq)).toContain(6)
    expect(failures.find(f => f.seq === 6)?.evidence[0]).toBe(held.find(s => s.seq === 6 && s.hash === headAt(6).body.hash)?.line)
    await db.close()
  })

  it('a fork the witness never saw before a higher head came is caught by the head it replaced', async () => {
    const { store, db } = await openStore()
    for (let seq = 0; seq <= 6; seq++) await store.observe(OWNER.peerId, canonicalJson(headAt(seq)))
    expect((await store.observe(OWNER.peerId, heads(regrownLog(9, 4)))).status).toBe('new')
    const failures = await compare(regrownLog(9, 4), (await store.heldFor(OWNER.peerId)).map(statement))
    expect(failures.map(f => [f.kind, f.seq])).toEqual([['forked', 4], ['forked', 5], ['forked', 6]])
    await db.close()
  })

  it('holds a bounded number of heads per owner, the one just replaced among them', async () => {
    const { store, db } = await openStore()
    const honest = buildLog(40)
    for (let seq = 0; seq < 40; seq++) await store.observe(OWNER.peerId, makeHead(OWNER, seq, entryHash(honest[seq + 1])).line)
    const held = (await store.heldFor(OWNER.peerId)).map(statement)
    expect(held.length).toBeLessThanOrEqual(MAX_HEADS_HELD)
    expect(held.map(s => s.seq)).toEqual(expect.arrayContaining([39, 38, 0]))
    expect(await compare(honest, held)).toEqual([])
    await db.close()
  })
})

describe('an older copy is not a rolled-back log (issue 18)', () => {
  const older = buildLog(6) // exported at seq 5, before two more entries
  const later = statement(cosignHead(SEAT, headAt(7), SEEN).line)
  async function compareFile (statements: WitnessStatement[]): Promise<ReturnType<WitnessComparer['finish']>> {
    const comparer = new WitnessComparer(statements, OWNER.peerId, { current: false })
    async function * feed (): AsyncGenerator<string> { yield * older }
    await verifyLog(comparer.tap(feed()), { verifyPayload: verifyTestPayload })
    return comparer.finish()
  }

  it('an honest export taken before two more entries passes against the later head', async () => {
    expect(await compareFile([later, statement(cosignHead(SEAT, headAt(5), SEEN - 10).line)])).toEqual([])
  })

  it('is rolled back when the witness was given the copy\'s head after the longer one', async () => {
    const back = statement(cosignHead(SEAT, headOf(older), SEEN + 10).line)
    const failures = await compareFile([later, back])
    expect(failures.map(f => [f.kind, f.seq])).toEqual([['rolled-back', 7]])
    expect(failures[0].evidence).toEqual([later.line, back.line])
  })

  it('the same copy as a node\'s log as it is now is rolled back', async () => {
    expect((await compare(older, [later])).map(f => f.kind)).toEqual(['rolled-back'])
  })

  it('two heads the owner signed at one seq with two hashes are a fork, even against an older copy that stops before that seq', async () => {
    const other = statement(cosignHead(STRANGER, makeHead(OWNER, 7, 'ab'.repeat(32)).head, SEEN + 20).line)
    const failures = await compareFile([later, other])
    expect(failures.map(f => [f.kind, f.seq])).toEqual([['forked', 7]])
    expect(failures[0].evidence).toEqual([later.line, other.line])
  })
})

describe('a witness\'s evidence stays bounded', () => {
  it('an owner that contradicts itself again and again while its log grows fills at most 2 x 4 evidence lines', async () => {
    const { store, db } = await openStore()
    const head = (seq: number, n: number): string => makeHead(OWNER, seq, (n % 256).toString(16).padStart(2, '0').repeat(32)).line
    for (let seq = 1; seq <= 30; seq++) {
      await store.observe(OWNER.peerId, head(seq, seq))
      await store.observe(OWNER.peerId, head(seq, seq + 100)) // the same seq, another hash
    }
    const held = await store.heldFor(OWNER.peerId)
    expect(held.length).toBeLessThanOrEqual(MAX_HEADS_HELD)
    // The first contradiction is kept whole: both heads at seq 1.
    expect(held.map(statement).filter(s => s.seq === 1)).toHaveLength(2)
    await db.close()
  })
})
