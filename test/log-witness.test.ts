// Witnessed heads (issue 8): the cosigned-head format, a witness's store, and a log checked
// against what its owner gave witnesses: a rolled-back and a forked log are each caught, with
// both signed documents as evidence. In memory, plus real LevelDB for the store.
import { afterEach, describe, expect, it } from 'vitest'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import { checkWitnessLine, cosignHead, WitnessComparer, type WitnessStatement } from '../src/core/log/witness.js'
import { canonicalJson } from '../src/core/canonical.js'
import { makeEntry, makeHead, GENESIS_PREV, type LogHead } from '../src/core/log/format.js'
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
})

describe('a witness\'s store (real LevelDB)', () => {
  const dirs: string[] = []
  afterEach(async () => { for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true }) })

  it('keeps the latest head of each peer, cosigned, and the ones that contradict it as evidence', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fairdeal-witness-'))
    dirs.push(dir)
    const db = new Level<string, any>(dir)
    let now = SEEN
    const store = new WitnessStore(db, SEAT, () => now++)
    const h = (seq: number): string => canonicalJson(headAt(seq))
    expect((await store.observe(OWNER.peerId, h(2))).status).toBe('new')
    expect((await store.observe(OWNER.peerId, h(2))).status).toBe('known')
    expect((await store.observe(OWNER.peerId, h(4))).status).toBe('new')
    const back = await store.observe(OWNER.peerId, h(1))
    expect(back.status).toBe('conflict')
    const forkHead = canonicalJson(makeHead(OWNER, 4, 'ab'.repeat(32)).head)
    expect((await store.observe(OWNER.peerId, forkHead)).status).toBe('conflict')
    const held = (await store.heldFor(OWNER.peerId)).map(statement)
    expect(held.map(s => [s.seq, s.witness])).toEqual([[4, SEAT.peerId], [1, SEAT.peerId], [4, SEAT.peerId]])
    expect(held[0].seen).toBe(SEEN + 1)
    await expect(store.observe(STRANGER.peerId, h(3))).rejects.toThrow(WitnessRefusal)
    await expect(store.observe(OWNER.peerId, h(3).replace('"seq":3', '"seq":9'))).rejects.toThrow(/not an authentic log head/)
    expect(await store.heldFor(STRANGER.peerId)).toEqual([])
    await db.close()
  })
})
