import { describe, expect, it } from 'vitest'
import { verifyLog, formatFailure, checkLine, inThreadChecker, type LogFailure, type VerifyLogOptions } from '../src/core/log/index.js'
import { verifyMemo } from '../src/daemon/verify-memo.js'
import { makeEntry, makeHead, entryHash, GENESIS_PREV, MAX_ENTRY_BYTES } from '../src/core/log/format.js'
import { canonicalJson } from '../src/core/canonical.js'
import { signDocument } from '../src/core/signed.js'
import { OWNER, SEAT, STRANGER, buildLog, prng, testPayload, valuePositions, verifyTestPayload } from './helpers/log-fixtures.js'

async function run (lines: string[], options: Partial<VerifyLogOptions> = {}): Promise<{ failures: LogFailure[], passed: number, failed: number, text: string[] }> {
  const failures: LogFailure[] = []
  const verdict = await verifyLog(lines, { verifyPayload: verifyTestPayload, onFailure: f => failures.push(f), ...options })
  return { failures, passed: verdict.passed, failed: verdict.failed, text: failures.map(formatFailure) }
}

const N = 8
const LOG = buildLog(N)

describe('log verification: a whole log', () => {
  it('passes every entry of an untouched log, head included', async () => {
    const failures: LogFailure[] = []
    const verdict = await verifyLog(LOG, { verifyPayload: verifyTestPayload, onFailure: f => failures.push(f), batchLines: 3 })
    expect(failures).toEqual([])
    expect(verdict).toMatchObject({ passed: N, failed: 0, lines: N + 1, owner: OWNER.peerId, lastSeq: N - 1 })
    expect(verdict.head).toEqual({ seq: N - 1, hash: entryHash(LOG[N]) })
  })

  it('accepts the same lines as bytes (as read from a file or a network frame)', async () => {
    const r = await run(LOG.map(l => new TextEncoder().encode(l)) as unknown as string[])
    expect(r.failures).toEqual([])
    expect(r.passed).toBe(N)
  })

  it('an empty log is empty, not a failure', async () => {
    const r = await run([])
    expect(r.failed).toBe(0)
    expect(r.passed).toBe(0)
  })
})

describe('changing a single value byte of an exported log', () => {
  it('is detected at many random positions, naming exactly the entry that was changed', async () => {
    const seed = 20240607
    const random = prng(seed)
    const trials = 150
    // The documents' signatures are checked the way a node and the CLI check them (OpenSSL Ed25519
    // behind a node's memo of valid triples): each trial changes one line, so the seven others cost
    // a lookup, not ~20 pure-JS verifications per trial. The pure verifier is the one of the tests above.
    const memo = verifyMemo()
    const checker = inThreadChecker(verifyTestPayload, memo.verify)
    const hitFields = new Set<string>()
    const fields = ['type', 'signer', 'sig', 'seq', 'prev', 'kind', 'time', 'payload']
    for (let t = 0; t < trials; t++) {
      // Every entry and every field is hit, at a random value byte of that field.
      const seq = t % N
      const lineIndex = seq + 1
      const line = LOG[lineIndex]
      const field = fields[Math.floor(t / N) % fields.length]
      const positions = valuePositions(line).filter(p => fieldAt(line, p) === field)
      const pos = positions[Math.floor(random() * positions.length)]
      let replacement = line[pos]
      while (replacement === line[pos]) replacement = String.fromCharCode(0x20 + Math.floor(random() * 95))
      const tampered = [...LOG]
      tampered[lineIndex] = line.slice(0, pos) + replacement + line.slice(pos + 1)
      hitFields.add(fieldAt(line, pos))

      const r = await run(tampered, { checker })
      const context = `seed ${seed} trial ${t}: seq ${seq} char ${pos} ${JSON.stringify(line[pos])}→${JSON.stringify(replacement)} in ${fieldAt(line, pos)}`
      expect(r.failures.map(f => f.seq), context).toEqual([seq])
      expect(r.text[0], context).toMatch(new RegExp(`^seq ${seq}: `))
      expect(r.failed, context).toBe(1)
      expect(r.passed, context).toBe(N - 1)
    }
    // The positions reached every part of an entry, payload included.
    for (const field of fields) expect(hitFields, field).toContain(field)
  })

  it('is detected in the head line, and blamed on the head', async () => {
    const random = prng(7)
    const head = LOG[0]
    const positions = valuePositions(head)
    for (let t = 0; t < 20; t++) {
      const pos = positions[Math.floor(random() * positions.length)]
      const replacement = head[pos] === 'a' ? 'b' : 'a'
      const r = await run([head.slice(0, pos) + replacement + head.slice(pos + 1), ...LOG.slice(1)])
      expect(r.failures.map(f => f.seq), `char ${pos}`).toEqual([null])
      expect(r.text[0]).toMatch(/^head: /)
      expect(r.passed).toBe(N)
    }
  })

  it('reports what failed: signature, canonical form, JSON', async () => {
    const line = LOG[3]
    const flippedSig = line.replace(/"sig":"(.)/, (_, c: string) => `"sig":"${c === '0' ? '1' : '0'}`)
    expect((await run([LOG[0], ...LOG.slice(1, 3), flippedSig, ...LOG.slice(4)])).text).toEqual(['seq 2: owner signature does not verify'])
    const spaced = line.replace('{"body":', '{ "body":')
    expect((await run([...LOG.slice(0, 3), spaced, ...LOG.slice(4)])).text[0]).toMatch(/^seq 2: not in canonical form/)
    const cut = line.slice(0, 40)
    expect((await run([...LOG.slice(0, 3), cut, ...LOG.slice(4)])).text[0]).toMatch(/^seq 2: not JSON/)
  })
})

describe('removing, reordering or duplicating entries', () => {
  const without = (i: number): string[] => LOG.filter((_, j) => j !== i)

  it('a removed entry in the middle is reported missing by its seq', async () => {
    const r = await run(without(1 + 4))
    expect(r.text).toEqual(['seq 4: missing: the line after seq 3 is seq 5'])
    expect(r.passed).toBe(N - 1)
  })

  it('a removed first entry is missing', async () => {
    const r = await run(without(1))
    expect(r.failures.map(f => [f.seq, f.count])).toEqual([[0, 1]])
  })

  it('a removed last entry is missing: the signed head says where the log ends', async () => {
    const r = await run(without(N))
    expect(r.text).toEqual([`seq ${N - 1}: missing: the signed head says the log ends at seq ${N - 1} (to check a partial export, pass the range it holds: --to ${N - 2})`])
  })

  it('several removed entries at the end are one missing range', async () => {
    const r = await run(LOG.slice(0, N - 2))
    expect(r.failures.map(f => [f.seq, f.toSeq, f.count])).toEqual([[N - 3, N - 1, 3]])
    expect(r.failed).toBe(3)
  })

  it('a removed head is a failure: nothing else proves where the log ends', async () => {
    const r = await run(LOG.slice(1))
    expect(r.failures.map(f => f.seq)).toEqual([null])
    expect(r.text[0]).toMatch(/^head: missing/)
  })

  it('two swapped entries are named', async () => {
    const swapped = [...LOG]
    ;[swapped[3], swapped[4]] = [swapped[4], swapped[3]] // seq 2 and 3
    const r = await run(swapped)
    expect(r.text).toEqual([
      'seq 2: missing: the line after seq 1 is seq 3',
      'seq 2: out of order: found after seq 3'
    ])
  })

  it('an entry moved far away is named where it is found', async () => {
    const moved = [...LOG.slice(0, 2), ...LOG.slice(3), LOG[2]] // seq 1 moved to the end
    const r = await run(moved)
    expect(r.failures.map(f => f.seq)).toEqual([1, 1])
    expect(r.text[1]).toBe(`seq 1: out of order: found after seq ${N - 1}`)
  })

  it('a duplicated entry is named', async () => {
    const r = await run([...LOG.slice(0, 4), LOG[3], ...LOG.slice(4)])
    expect(r.text).toEqual(['seq 2: repeats the previous line'])
    expect(r.passed).toBe(N)
  })

  it('a head moved to the end is refused there and missing at the start', async () => {
    const r = await run([...LOG.slice(1), LOG[0]])
    expect(r.text).toEqual([
      'head: a head is only allowed as the first line',
      expect.stringMatching(/^head: missing/)
    ])
    // Its owner's line out of place, as an entry out of order is (docs/log.md, "Blame").
    expect(r.failures[0].fault).toBe('owner')
  })

  it('a head line changed, or signed by another, is its owner\'s fault, as an entry\'s would be', async () => {
    const changed = LOG[0].replace(/"seq":(\d+)/, (_, n: string) => `"seq":${Number(n) + 1}`)
    const r = await run([changed, ...LOG.slice(1)])
    expect(r.failures[0]).toMatchObject({ seq: null, fault: 'owner' })
    const r2 = await run([buildLog(N, STRANGER)[0], ...LOG.slice(1)], { expectOwner: OWNER.peerId })
    expect(r2.failures[0]).toMatchObject({ seq: null, problems: [`signed by ${STRANGER.peerId}, not by the log owner ${OWNER.peerId}`], fault: 'owner' })
  })
})

describe('forgeries that keep every signature valid', () => {
  it('an entry from another log (another owner) is named', async () => {
    const other = buildLog(N, STRANGER)
    const r = await run([...LOG.slice(0, 4), other[4], ...LOG.slice(5)])
    expect(r.text).toEqual([`seq 3: signed by ${STRANGER.peerId}, not by the log owner ${OWNER.peerId}`])
  })

  it('the owner re-signing a whole chain around a forged payload is caught by the payload check', async () => {
    const forgedPayload = { ...testPayload(5), body: { ...testPayload(5).body, game: 'tarot' } }
    const forged = buildLog(N, OWNER, seq => seq === 5 ? forgedPayload : testPayload(seq))
    const r = await run(forged)
    expect(r.text).toEqual(['seq 5: receipt signature does not verify'])
  })

  it('a payload signed by another seat is accepted by the log but not by a payload checker that says so', async () => {
    const log = buildLog(3, OWNER, seq => testPayload(seq, STRANGER))
    expect((await run(log)).failed).toBe(0)
    const strict = (kind: string, payload: unknown): string[] => {
      const p = payload as { signer: string }
      return [...verifyTestPayload(kind, payload), ...(p.signer === SEAT.peerId ? [] : ['not signed by the expected seat'])]
    }
    expect((await run(log, { verifyPayload: strict })).failures.map(f => f.seq)).toEqual([0, 1, 2])
  })

  it('a fork (two valid chains spliced) breaks the link at the splice', async () => {
    const fork = buildLog(N, OWNER, seq => testPayload(seq + 100))
    const r = await run([...LOG.slice(0, 5), ...fork.slice(5)])
    expect(r.text[0]).toBe('seq 4: prev does not match the hash of seq 3')
    // The fork's last entry is not the one the (original) head names.
    expect(r.text[r.text.length - 1]).toBe(`seq ${N - 1}: its hash does not match the signed head`)
  })

  it('a log that must belong to a given peer fails when signed by another', async () => {
    const r = await run(LOG, { expectOwner: STRANGER.peerId })
    expect(r.failures[0].seq).toBeNull()
    expect(r.failed).toBe(N + 1)
  })

  it('a payload checker that throws fails only its entry', async () => {
    const r = await run(LOG, { verifyPayload: (_kind, p) => { if ((p as { body: { hand: number } }).body.hand === 2) throw new Error('boom'); return [] } })
    expect(r.text).toEqual(['seq 2: payload check failed: boom'])
  })
})

describe('ranges (partial exports)', () => {
  const range = [LOG[0], ...LOG.slice(1 + 2, 1 + 6)] // head + seq 2..5

  it('verify when the range is stated', async () => {
    const r = await run(range, { from: 2, to: 5 })
    expect(r.failures).toEqual([])
    expect(r.passed).toBe(4)
  })

  it('fail as incomplete when it is not', async () => {
    const r = await run(range)
    expect(r.failures.map(f => [f.seq, f.toSeq])).toEqual([[0, 1], [6, N - 1]])
  })

  it('a range without its head verifies only with --to', async () => {
    expect((await run(range.slice(1), { from: 2, to: 5 })).failed).toBe(0)
    expect((await run(range.slice(1), { from: 2 })).text[0]).toMatch(/^head: missing/)
  })

  it('a head older than the stated end fails', async () => {
    const r = await run(LOG, { to: N + 1 })
    expect(r.failures.map(f => f.seq)).toEqual([null, N])
  })

  it('a range that starts after the head fails instead of passing empty', async () => {
    const r = await run(LOG.slice(0, 1), { from: N + 5 })
    expect(r.text).toEqual([`head: the signed head is at seq ${N - 1}, before the start of the range (seq ${N + 5})`])
  })
})

describe('line checks', () => {
  it('refuses oversize lines, non-UTF-8 bytes, unknown fields and floats', () => {
    expect(checkLine('x'.repeat(MAX_ENTRY_BYTES + 1), null).problems[0]).toMatch(/longer than \d+ bytes/)
    expect(checkLine(new Uint8Array([0x7b, 0xff, 0x7d]), null).problems).toEqual(['not valid UTF-8'])
    const entry = JSON.parse(LOG[1]) as Record<string, unknown>
    expect(checkLine(canonicalJson({ ...entry, extra: 1 }), null).problems).toContain('unexpected field extra')
    expect(checkLine(LOG[1].replace('"seq":0', '"seq":0.5'), null).problems.join()).toMatch(/not canonical JSON/)
    const body = { seq: 0, prev: GENESIS_PREV, kind: 'receipt', payload: 1, note: 'x' }
    expect(checkLine(canonicalJson(signDocument('log-entry', body, OWNER)), null).problems).toContain('unexpected body field note')
  })

  it('makeEntry refuses what the verifier would refuse', () => {
    expect(() => makeEntry(OWNER, { seq: 1, prev: GENESIS_PREV, kind: 'receipt', payload: 1 })).toThrow(/all zeros exactly for seq 0/)
    expect(() => makeEntry(OWNER, { seq: 0, prev: GENESIS_PREV, kind: 'Receipt!', payload: 1 })).toThrow(/kind must match/)
    expect(() => makeEntry(OWNER, { seq: 0, prev: GENESIS_PREV, kind: 'receipt', payload: 0.5 })).toThrow(/safe integers/)
    expect(() => makeEntry(OWNER, { seq: 0, prev: GENESIS_PREV, kind: 'receipt', payload: 'x'.repeat(MAX_ENTRY_BYTES) })).toThrow(/limit is/)
  })

  it('a head signature cannot be passed off as an entry signature', () => {
    const { head } = makeHead(OWNER, 0, entryHash(LOG[1]))
    const asEntry = canonicalJson({ ...head, type: 'log-entry', body: { seq: 0, prev: GENESIS_PREV, kind: 'receipt', payload: 1 } })
    expect(checkLine(asEntry, null)).toMatchObject({ authentic: false, problems: ['owner signature does not verify'] })
  })
})

// Which field of an entry line a position falls in. Canonical order puts the body's keys first
// (kind, payload, prev, seq, time), then sig, signer, type; the payload's own keys never collide
// with the last occurrence of these.
function fieldAt (line: string, pos: number): string {
  const marks: Array<[string, number]> = [
    ['kind', line.indexOf('"kind":')],
    ['payload', line.indexOf('"payload":')],
    ['prev', line.lastIndexOf('"prev":')],
    ['seq', line.lastIndexOf('"seq":')],
    ['time', line.lastIndexOf('"time":')],
    ['sig', line.lastIndexOf('"sig":')],
    ['signer', line.lastIndexOf('"signer":')],
    ['type', line.lastIndexOf('"type":')]
  ]
  let field = '?'
  for (const [name, at] of marks) if (at >= 0 && at < pos) field = name
  return field
}
