// What `verify` and `log show` tell a user (issue 23): nothing failed but a hand lacks a seat's
// countersignature (exit 3, said in words) is not a forgery (exit 1), nor a pass (exit 0); and
// `log show` exits as verify does when it shows a failed entry. Spawned, as a user runs them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { memoryTable, type MemoryTable } from './helpers/memory-table.js'
import { cliInProcess } from './helpers/cli-in-process.js'
import { fairdeal } from './helpers/cli.js'
import { requireBuild } from './helpers/node-process.js'
import { docDigest } from '../src/core/hand/digest.js'
import { signedLogLines } from './helpers/verify-as-log.js'
import type { Receipt } from '../src/core/hand/messages.js'

const receipts = (t: MemoryTable): Receipt[] => {
  const all = (t.appended.get(t.table.dealer) ?? []).filter(e => e.entry === 'receipt').map(e => e.payload as Receipt)
  return all.filter((p, i) => all.findIndex(o => docDigest(o) === docDigest(p)) === i)
}

let tmp: string
const files: Record<'honest' | 'incomplete' | 'forged', string> = { honest: '', incomplete: '', forged: '' }

beforeAll(async () => {
  requireBuild()
  const t = memoryTable({ dealerSeat: false })
  const dealer = t.signers[4]
  for (const h of [1, 2]) { t.run(t.table.dealer, t.dealer.startHand({ dealer: 0 }).effects); t.run(t.table.dealer, t.dealer.end(h)) }
  const [r1, r2] = receipts(t)
  const logs = {
    honest: [r1, r2],
    // Seat 2 was away when hand 2 ended: its countersignature is missing, nothing is forged.
    incomplete: [r1, { ...r2, acks: r2.acks.filter(a => a.body.seat !== 2) }],
    // The same with hand 1's commitment changed after the seats signed it.
    forged: [{ ...r1, commit: { ...r1.commit, body: { ...r1.commit.body, commitment: '0'.repeat(64) } } }, { ...r2, acks: r2.acks.filter(a => a.body.seat !== 2) }]
  }
  tmp = await mkdtemp(join(tmpdir(), 'fairdeal-verdict-'))
  for (const [name, payloads] of Object.entries(logs)) {
    files[name as keyof typeof files] = join(tmp, `${name}.jsonl`)
    await writeFile(files[name as keyof typeof files], signedLogLines(dealer, payloads.map(payload => ({ kind: 'receipt', payload }))).join('\n') + '\n')
  }
})

afterAll(async () => { if (tmp !== undefined) await rm(tmp, { recursive: true, force: true }) })

describe('verify and log show: passed 0, failed 1, nothing failed but incomplete 3', () => {
  it('verify', async () => {
    // The incomplete verdict's exit code 3 from the real binary; the others through the same entry point in process.
    const incomplete = await fairdeal('verify', files.incomplete)
    const honest = await cliInProcess('verify', files.honest, '--workers', '0')
    const forged = await cliInProcess('verify', files.forged, '--workers', '0')
    expect([honest.code, honest.stdout]).toEqual([0, '2 passed, 0 failed\n'])
    expect(incomplete.code, incomplete.stderr).toBe(3)
    expect(incomplete.stdout.trim().split('\n').at(-1)).toBe('1 passed, 0 failed, 1 incomplete: nothing failed; 1 hand is not countersigned by every seat')
    expect(forged.code).toBe(1)
    expect(forged.stdout.trim().split('\n').at(-1)).toMatch(/^0 passed, [12] failed, [01] incomplete$/)
  })

  it('log show exits non-zero when it shows a failed entry (1), or an incomplete one (3)', async () => {
    const forged = await fairdeal('log', 'show', files.forged)
    const honest = await cliInProcess('log', 'show', files.honest)
    const incomplete = await cliInProcess('log', 'show', files.incomplete)
    expect(honest.code).toBe(0)
    expect(honest.stdout).not.toMatch(/✗|countersignature/)
    expect(incomplete.code).toBe(3)
    expect(incomplete.stdout).toMatch(/ … [^\n]*no countersignature from seat 2/)
    expect(forged.code).toBe(1)
    expect(forged.stdout).toMatch(/✗/)
  })
})
