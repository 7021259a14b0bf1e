// The verifier page in a real headless Chromium: after `fairdeal demo --data DIR`, `fairdeal web
// --data DIR/node1` serves /verify, where the browser re-checks that seat's whole exported log with
// src/core (Ed25519 on WebCrypto and on the pure fallback), and a beacon-bound log (BLS in the page), fails a tampered copy on the right entry with the CLI's own reason, and checks a drand
// {info, entries} file. One browser for the whole file.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { requireBuild } from './helpers/node-process.js'
import { cliInProcess } from './helpers/cli-in-process.js'
import { launchBrowser, skipBrowserTests, type Browser } from './helpers/browser.js'
import { randomBytes } from 'node:crypto'
import { signerFromSeed } from '../src/core/identity.js'
import { GENESIS_PREV, makeEntry, makeHead } from '../src/core/log/index.js'
import { parseChainInfo, roundTime, type BeaconEntry } from '../src/core/beacon/index.js'
import { memoryHands } from '../scripts/bench/lib/memory-hands.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const BIN = join(ROOT, 'bin', 'fairdeal.js')
const QUICKNET = join(ROOT, 'test', 'fixtures', 'drand', 'quicknet.json')

async function cli (args: string[]): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (c: string) => { stdout += c })
  child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr += c })
  const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
  return { code, stdout, stderr }
}

/** `fairdeal web …` until it prints its URL. */
async function startWeb (args: string[]): Promise<{ child: ChildProcess, url: string }> {
  const child = spawn(process.execPath, [BIN, 'web', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stderr?.setEncoding('utf8').on('data', (c: string) => { err += c })
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (c: string) => {
      out += c
      const m = /verifier: (http:\/\/127\.0\.0\.1:\d+)\/verify/.exec(out)
      if (m !== null) resolve(m[1])
    })
    child.once('exit', code => { reject(new Error(`fairdeal web exited (${String(code)}): ${err}`)) })
  })
  return { child, url }
}

/** What the page exposes (the tests are type-checked without the DOM's types). */
interface PageGlobals {
  fairdealVerify?: { running: boolean, last?: { entries: number, ms: number, engine: string } }
  document: { querySelector: (selector: string) => unknown }
}

async function verifyInPage (page: Page, file: string): Promise<{ summary: string, verdicts: string[], labels: string[] }> {
  // The last file's summary goes first: until the new run has begun, it would satisfy the wait below.
  await page.evaluate("document.querySelector('[data-testid=summary]')?.remove()")
  await page.setInputFiles('[data-testid=receipt-input]', file)
  await page.waitForFunction(() => {
    const g = globalThis as unknown as PageGlobals
    return g.fairdealVerify?.running === false && g.document.querySelector('[data-testid=summary]') !== null
  })
  return {
    summary: await page.locator('[data-testid=summary]').innerText(),
    verdicts: await page.locator('[data-testid=verdict]').allInnerTexts(),
    labels: await page.locator('[data-testid=entry]').evaluateAll(els => els.map(e => e.getAttribute('data-label') ?? ''))
  }
}

/** A log of two coinche receipts bound to recorded quicknet rounds, played by the machines in memory. */
async function beaconBoundLog (): Promise<string> {
  const fixture = JSON.parse(await readFile(QUICKNET, 'utf8')) as { info: unknown, entries: BeaconEntry[] }
  const chain = parseChainInfo(fixture.info)
  const owner = signerFromSeed(randomBytes(32))
  const lines: string[] = []
  let prev = GENESIS_PREV
  for (const [seq, entry] of fixture.entries.slice(0, 2).entries()) {
    const table = memoryHands({ scheme: 'atout-drand-v1', beacon: { chain, marginMs: 1_000 }, now: 0 })
    table.clock.now = roundTime(chain, entry.round) - 1_000 - table.timeouts.contributeMs - 1
    const receipt = table.play(r => fixture.entries.find(e => e.round === r) as BeaconEntry)
    const made = makeEntry(owner, { seq, prev, kind: 'receipt', payload: receipt, time: 1_700_000_000_000 + seq })
    lines.push(made.line)
    prev = made.hash
  }
  return [makeHead(owner, lines.length - 1, prev).line, ...lines].join('\n') + '\n'
}

const skip = skipBrowserTests('test/web-verify.test.ts')

describe.skipIf(skip)('the verifier page in Chromium', () => {
  let dir: string
  let browser: Browser
  let web: { child: ChildProcess, url: string } | undefined
  let exported: string
  let beaconLog: string

  beforeAll(async () => {
    requireBuild()
    dir = await mkdtemp(join(tmpdir(), 'fairdeal-web-'))
    // No beacon: the demo's beacon-bound deadline (2 s) is too tight on a loaded machine; the
    // beacon-bound log below is made in memory, bound to recorded quicknet rounds.
    const [demo, launched] = await Promise.all([cli(['demo', '--data', dir, '--hands', '2', '--beacon', 'none', '--json']), launchBrowser()])
    browser = launched
    expect(demo.code, demo.stderr).toBe(0)
    exported = join(dir, 'node1.jsonl')
    const exp = await cliInProcess('log', 'export', '--data', join(dir, 'node1'), '--out', exported)
    expect(exp.code, exp.stderr).toBe(0)
    web = await startWeb(['--data', join(dir, 'node1'), '--port', '0'])
    beaconLog = join(dir, 'beacon-bound.jsonl')
    await writeFile(beaconLog, await beaconBoundLog())
  })

  afterAll(async () => {
    web?.child.kill('SIGTERM')
    await browser?.close()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it('verifies the seat\'s whole demo log, and a beacon-bound one, on WebCrypto and on the pure fallback, and shows the hands', async () => {
    const page = await browser.context.newPage()
    const errors: string[] = []
    page.on('pageerror', e => errors.push(e.message))
    // A fetch cut short by leaving the page is not a failure.
    page.on('requestfailed', r => { if (r.failure()?.errorText !== 'net::ERR_ABORTED') errors.push(`request failed: ${r.url()}`) })
    await page.goto(`${web?.url ?? ''}/verify`)
    const result = await verifyInPage(page, exported)
    expect(result.summary).toBe('2 passed, 0 failed')
    expect(result.verdicts).toEqual(['verified', 'verified'])
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).fairdealVerify?.last?.engine)).toBe('webcrypto')
    // The hands as the players saw them: a coinche hand is 8 cards for each of 4 seats, bound to a round.
    const first = page.locator('[data-testid=entry]').first()
    const cards = await first.locator('[data-testid=hand-cards]').evaluateAll(els => els.map(e => e.querySelectorAll('[data-card]').length))
    expect(cards).toEqual([8, 8, 8, 8])
    expect(await first.locator('.card.red').count()).toBeGreaterThan(0)

    // Beacon-bound receipts: BLS checked in the page too.
    const bound = await verifyInPage(page, beaconLog)
    expect(bound.summary).toBe('2 passed, 0 failed')
    expect(await page.locator('[data-testid=entry]').first().innerText()).toMatch(/drand round \d+/)

    // The node's log as served by `fairdeal web`, through the pure Ed25519 fallback.
    await page.goto(`${web?.url ?? ''}/verify?ed25519=pure`)
    await page.click('[data-testid=load-served-log]')
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).fairdealVerify?.last !== undefined)
    expect(await page.locator('[data-testid=summary]').innerText()).toBe('2 passed, 0 failed')
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).fairdealVerify?.last?.engine)).toBe('pure')
    expect(errors).toEqual([])
    await page.close()
  })

  // Issue 23: a log with a receipt missing one countersignature: every entry is counted as checked,
  // and its verdict says "incomplete" once.
  it('counts an incomplete entry as checked and says incomplete once', async () => {
    const receipts = (await readFile(exported, 'utf8')).trimEnd().split('\n').slice(1).map(l => JSON.parse(l) as { body: { kind: string, payload: { acks: unknown[] } } })
    const last = receipts[receipts.length - 1].body
    const payloads = [...receipts.slice(0, -1).map(r => r.body), { kind: last.kind, payload: { ...last.payload, acks: last.payload.acks.slice(0, -1) } }]
    const signer = signerFromSeed(new Uint8Array(randomBytes(32)))
    let prev = GENESIS_PREV
    const entries: string[] = []
    payloads.forEach((e, seq) => {
      const made = makeEntry(signer, { seq, prev, kind: e.kind, payload: e.payload })
      entries.push(made.line)
      prev = made.hash
    })
    const file = join(dir, 'incomplete.jsonl')
    await writeFile(file, [makeHead(signer, entries.length - 1, prev).line, ...entries].join('\n') + '\n')
    const offline = await cliInProcess('verify', file, '--workers', '0')
    const page = await browser.context.newPage()
    await page.goto(`${web?.url ?? ''}/verify`)
    const result = await verifyInPage(page, file)
    expect(result.summary).toBe(offline.stdout.trim().split('\n').at(-1))
    expect(result.summary).toMatch(/, 1 incomplete: nothing failed; 1 hand is not countersigned by every seat$/)
    expect(await page.locator('#status').innerText()).toMatch(new RegExp(`^incomplete\\.jsonl: ${entries.length} entries checked in `))
    expect(result.verdicts.at(-1)).toMatch(/^incomplete: no countersignature from seat \d/)
    await page.close()
  })

  it('fails a tampered copy on the right entry, with the reason the CLI gives, and checks drand entries', async () => {
    const lines = (await readFile(exported, 'utf8')).trimEnd().split('\n')
    // Entry seq 1 (line 3): one hex digit of a nonce changed.
    lines[2] = lines[2].replace(/"nonce":"([0-9a-f])/, (_m, c: string) => `"nonce":"${c === '0' ? '1' : '0'}`)
    const tampered = join(dir, 'tampered.jsonl')
    await writeFile(tampered, lines.join('\n') + '\n')
    const offline = await cliInProcess('verify', tampered, '--workers', '0')
    expect(offline.code).toBe(1)
    const cliFailure = offline.stdout.split('\n').find(l => l.startsWith('seq 1: ')) ?? ''
    expect(cliFailure).not.toBe('')

    const page = await browser.context.newPage()
    await page.goto(`${web?.url ?? ''}/verify`)
    const result = await verifyInPage(page, tampered)
    expect(result.summary).toBe('1 passed, 1 failed')
    expect(result.labels).toEqual(['seq 0', 'seq 1'])
    expect(result.verdicts).toEqual(['verified', `failed: ${cliFailure.slice('seq 1: '.length)}`])

    const fixture = JSON.parse(await readFile(QUICKNET, 'utf8')) as { entries: unknown[] }
    const beacon = await verifyInPage(page, QUICKNET)
    expect(beacon.summary).toBe(`${fixture.entries.length} passed, 0 failed`)
    expect(beacon.verdicts.every(v => v === 'verified')).toBe(true)
    await page.close()
  })
})
