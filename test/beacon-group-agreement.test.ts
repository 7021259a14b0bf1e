import { afterAll, describe, expect, it, vi } from 'vitest'
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { checkDkgAgreement } from '../src/core/beacon/dkg-agreement.js'
import type { DkgMachine, DkgResult } from '../src/core/beacon/dkg.js'
import { runCommand } from '../src/cli/command.js'
import { command } from '../src/cli/commands/beacon-group.js'
import { nativeVerifyDocument } from '../src/crypto/native-crypto.js'
import { groupParams, memberSigners, runDkg } from './helpers/beacon-group.js'

// Issue 22: `beacon group verify` must fail when members computed different keys. Two runs of the
// same group's DKG (same session, different randomness) stand for a split: each transcript verifies
// on its own, but the keys differ.
const signers = memberSigners(3, 'agreement')
const params = groupParams(signers, 2)
const a = runDkg(params, signers, { seed: 'split-a' })
const b = runDkg(params, signers, { seed: 'split-b' })
const resultsOf = (run: typeof a): unknown[] => [...(run.machines[0] as DkgMachine).announcedResults.values()]
const transcriptOf = (r: DkgResult | undefined): unknown => ({ ...(r as DkgResult), share: undefined })

const dir = await mkdtemp(join(tmpdir(), 'fairdeal-agreement-'))
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

async function memberDir (name: string, transcript: unknown, results?: unknown[]): Promise<string> {
  const d = join(dir, name)
  await mkdir(d, { recursive: true })
  await writeFile(join(d, 'transcript.json'), JSON.stringify(transcript))
  if (results !== undefined) await writeFile(join(d, 'results.json'), JSON.stringify(results))
  return d
}

async function verify (...paths: string[]): Promise<{ code: number, out: string }> {
  let out = ''
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => { out += String(s); return true })
  try { return { code: await runCommand(command, ['verify', ...paths]), out } } finally { spy.mockRestore() }
}

describe('beacon group verify: members must hold one key', () => {
  it('the two runs are each valid and differ (the premise)', () => {
    expect(a.results.every(r => r !== undefined) && b.results.every(r => r !== undefined)).toBe(true)
    expect(a.results[0]?.groupKey).not.toBe(b.results[0]?.groupKey)
  })

  it('agreeing transcripts and signed results pass, naming who agrees', async () => {
    const m1 = await memberDir('ok1', transcriptOf(a.results[0]), resultsOf(a))
    const m2 = await memberDir('ok2', transcriptOf(a.results[1]))
    const { code, out } = await verify(m1, join(m2, 'transcript.json'))
    expect(code).toBe(0)
    expect(out).toContain('members agreeing (signed results or transcripts): 1, 2, 3 of 3 members')
  })

  it('two transcripts with different keys fail', async () => {
    const m1 = await memberDir('split1', transcriptOf(a.results[0]))
    const m2 = await memberDir('split2', transcriptOf(b.results[1]))
    const { code, out } = await verify(m1, m2)
    expect(code).toBe(1)
    expect(out).toContain('members computed different keys: 1 disagreement')
    expect(out).toMatch(/split2\/transcript\.json: group key [0-9a-f]{16}… differs/)
  })

  it('one transcript fails when a member it kept a signed result of computed another key', async () => {
    const other = (b.machines[1] as DkgMachine).announcedResults.get(2)
    const m1 = await memberDir('split-results', transcriptOf(a.results[0]), [...resultsOf(a).slice(0, 1), other])
    const { code, out } = await verify(m1)
    expect(code).toBe(1)
    expect(out).toContain("member 2's signed result: group key")
  })

  it('a forged result, or a transcript of another group, is refused, not compared', () => {
    const forged = { ...(resultsOf(a)[1] as any), body: { ...(resultsOf(a)[1] as any).body, groupKey: b.results[0]?.groupKey } }
    expect(() => checkDkgAgreement([{ label: 'm1', result: a.results[0] as DkgResult, results: [forged] }], nativeVerifyDocument)).toThrow(/m1: results:/)
    const other = runDkg(groupParams(signers, 2, { id: 'other-group' }), signers, { seed: 'other' })
    expect(() => checkDkgAgreement([
      { label: 'm1', result: a.results[0] as DkgResult },
      { label: 'm2', result: other.results[1] as DkgResult }
    ], nativeVerifyDocument)).toThrow(/m2: a transcript of another group/)
  })
})
