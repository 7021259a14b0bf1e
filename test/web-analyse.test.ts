// The verifier page's logic (src/web/verify/analyse.ts) in Node, on real receipts played by the
// state machines in memory: its verdicts are the core's (the CLI's), with either Ed25519 engine,
// and it recognises every input the page takes. The browser test (web-verify.test.ts) runs the
// same code in Chromium.
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { randomBytes } from 'node:crypto'
import { signerFromSeed } from '../src/core/identity.js'
import { GENESIS_PREV, makeEntry, makeHead, verifyLog, formatFailure, type LogFailure } from '../src/core/log/index.js'
import { verifyLogPayload } from '../src/core/receipt.js'
import { parseChainInfo, roundTime, type BeaconEntry } from '../src/core/beacon/index.js'
import { memoryHands } from '../scripts/bench/lib/memory-hands.js'
import { analyse, summaryText, verdictText, InputError } from '../src/web/verify/analyse.js'
import { bestEngine, pureEngine } from '../src/web/verify/ed25519.js'
import { makeDkgRecord } from '../src/core/beacon/dkg-record.js'
import { groupParams, memberSigners, runDkg } from './helpers/beacon-group.js'

const owner = signerFromSeed(randomBytes(32))

function logOf (payloads: Array<{ kind: string, payload: unknown }>): string[] {
  const lines: string[] = []
  let prev = GENESIS_PREV
  payloads.forEach(({ kind, payload }, seq) => {
    const made = makeEntry(owner, { seq, prev, kind, payload, time: 1_700_000_000_000 + seq })
    lines.push(made.line)
    prev = made.hash
  })
  return [makeHead(owner, payloads.length - 1, prev).line, ...lines]
}

const plain = memoryHands({ game: 'belote' })
const receipts = [plain.play(), plain.play()]
const fixture = JSON.parse(await readFile(new URL('fixtures/drand/quicknet.json', import.meta.url), 'utf8')) as { info: unknown, entries: BeaconEntry[] }
const chain = parseChainInfo(fixture.info)
const bound = memoryHands({ scheme: 'atout-drand-v1', beacon: { chain, marginMs: 1_000 }, now: 0 })
const round = fixture.entries[0].round
bound.clock.now = roundTime(chain, round) - 1_000 - bound.timeouts.contributeMs - 1
receipts.push(bound.play(r => fixture.entries.find(e => e.round === r) as BeaconEntry))
const lines = logOf(receipts.map(payload => ({ kind: 'receipt', payload })))

async function cliFailures (input: string[]): Promise<string[]> {
  const out: LogFailure[] = []
  await verifyLog(input, { verifyPayload: verifyLogPayload, onFailure: f => out.push(f) })
  return out.map(formatFailure)
}

describe('the verifier page logic', () => {
  it('verifies a whole log, plain and beacon-bound, with either Ed25519 engine, and shows the hands', async () => {
    const webcrypto = await bestEngine()
    expect(webcrypto.name).toBe('webcrypto') // Node 20 has WebCrypto Ed25519, as Chromium does
    for (const engine of [webcrypto, pureEngine]) {
      const a = await analyse(lines.join('\n') + '\n', { engine })
      expect(summaryText(a)).toBe('3 passed, 0 failed')
      expect(a.owner).toBe(owner.peerId)
      expect(a.entries.map(verdictText)).toEqual(['verified', 'verified', 'verified'])
      const hand = a.entries[0].hand
      expect(hand?.game).toBe('belote')
      // Belote: five cards each, then the turned-up card on the table (no taker in these hands).
      expect(hand?.seats.map(s => s.cards.flatMap(c => c.cards).length)).toEqual([5, 5, 5, 5])
      expect(hand?.onTable.map(s => s.stage)).toEqual(['turnUp'])
      expect(a.entries[2].hand?.beaconRound).toBe(round)
    }
  })

  it('fails a tampered log on the right entry with the reason the CLI gives', async () => {
    const tampered = [...lines]
    tampered[2] = tampered[2].replace(/"nonce":"([0-9a-f])/, (_m, c: string) => `"nonce":"${c === '0' ? '1' : '0'}`)
    expect(tampered[2]).not.toBe(lines[2])
    const a = await analyse(tampered.join('\n'), { engine: await bestEngine() })
    expect(summaryText(a)).toBe('2 passed, 1 failed')
    expect(a.entries.map(e => e.label)).toEqual(['seq 0', 'seq 1', 'seq 2'])
    expect(a.entries[1].status).toBe('failed')
    expect(a.entries[1].hand).toBeUndefined()
    expect(await cliFailures(tampered)).toEqual([`seq 1: ${a.entries[1].problems.join('; ')}`])

    // An entry missing from the middle: the gap is reported where it is, as the CLI does.
    const gap = [lines[0], lines[1], lines[3]]
    const g = await analyse(gap.join('\n'), { engine: pureEngine })
    expect(await cliFailures(gap)).toEqual([`seq 1: ${g.entries[1].problems.join('; ')}`])
    expect(g.entries.map(e => `${e.label} ${e.status}`)).toEqual(['seq 0 verified', 'seq 1 failed', 'seq 2 verified'])
    expect(summaryText(g)).toBe('2 passed, 1 failed')
  })

  it('verifies a beacon group member\'s dkg entry in its log, and fails it in another\'s (docs/log.md "DKG records")', async () => {
    const signers = memberSigners(4)
    const run = runDkg(groupParams(signers, 3), signers)
    const record = makeDkgRecord(run.results[0]!, [...run.machines[0]!.announcedResults.values()])
    for (const [who, verdict] of [[signers[0], 'verified'], [signers[1], 'failed']] as const) {
      const made = makeEntry(who, { seq: 0, prev: GENESIS_PREV, kind: 'dkg', payload: record, time: 1_700_000_000_000 })
      const a = await analyse(`${makeHead(who, 0, made.hash).line}\n${made.line}\n`, { engine: await bestEngine() })
      expect(a.entries.map(e => e.status)).toEqual([verdict])
      if (verdict === 'failed') expect(a.entries[0].problems).toEqual([expect.stringMatching(/^dkg record of member 1 .* in the log of /)])
    }
  })

  it('takes one receipt, one log entry and a drand {info, entries} file, and refuses anything else', async () => {
    const r = await analyse(JSON.stringify(receipts[2], null, 2))
    expect([r.input, summaryText(r), r.entries[0].hand?.beaconRound]).toEqual(['receipt', '1 passed, 0 failed', round])
    const bad = structuredClone(receipts[0])
    bad.reveal.body.secret = 'x' + bad.reveal.body.secret.slice(1)
    const rb = await analyse(JSON.stringify(bad))
    expect(verdictText(rb.entries[0])).toBe(`failed: ${verifyLogPayload('receipt', bad).problems.map(p => typeof p === 'string' ? p : p.message).join('; ')}`)
    // A receipt missing one seat's countersignature is not a forgery: the core calls it incomplete
    // (reason code receipt-incomplete), or, before that code, accepts it; never "failed".
    const partial = structuredClone(receipts[0])
    partial.acks = partial.acks.slice(1)
    const p = await analyse(JSON.stringify(partial))
    expect(['verified', 'incomplete']).toContain(p.entries[0].status)
    if (p.entries[0].status === 'incomplete') expect(verdictText(p.entries[0])).toMatch(/^incomplete: /)
    const e = await analyse(lines[1])
    expect([e.input, verdictText(e.entries[0]), e.entries[0].label]).toEqual(['entry', 'verified', 'seq 0'])
    const beacon = await analyse(JSON.stringify(fixture))
    expect(summaryText(beacon)).toBe(`${fixture.entries.length} passed, 0 failed`)
    const forged = { info: fixture.info, entries: [{ ...fixture.entries[0], round: fixture.entries[0].round + 1 }] }
    expect(verdictText((await analyse(JSON.stringify(forged))).entries[0])).toMatch(/^failed: /)
    await expect(analyse('hello')).rejects.toThrow(InputError)
    await expect(analyse('{"a":1}')).rejects.toThrow(/not a fairdeal file/)
  })
})
