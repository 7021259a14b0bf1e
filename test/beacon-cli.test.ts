import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { FIXTURE_CHAINS, loadDrandFixture, tamperEntry } from './helpers/drand-server.js'
import { cliInProcess } from './helpers/cli-in-process.js'

// Runs the built CLI (`npm test` builds first; alone: `npx tsc -p tsconfig.json` before vitest).
const root = fileURLToPath(new URL('..', import.meta.url))
const bin = join(root, 'bin', 'fairdeal.js')
const fixtureFile = (name: string): string => join(root, 'test', 'fixtures', 'drand', `${name}.json`)

interface Result { code: number | null, stdout: string, stderr: string }

async function cli (...args: string[]): Promise<Result> {
  const child = spawn(process.execPath, [bin, ...args], { cwd: root })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', d => { stdout += String(d) })
  child.stderr.on('data', d => { stderr += String(d) })
  const code = await new Promise<number | null>(resolve => child.on('close', resolve))
  return { code, stdout, stderr }
}

const cleanup: Array<() => Promise<void>> = []
afterEach(async () => { for (const f of cleanup.splice(0).reverse()) await f() })

async function tempDir (): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fairdeal-beacon-cli-'))
  cleanup.push(async () => await rm(dir, { recursive: true, force: true }))
  return dir
}

beforeAll(async () => {
  await access(join(root, 'dist', 'src', 'cli', 'commands', 'beacon-verify.js')).catch(() => {
    throw new Error('dist/ has no beacon commands: build first (npm run build)')
  })
})

describe('fairdeal beacon verify', () => {
  it('passes every recorded real entry of the six chains ({info, entries} files)', async () => {
    const r = await cli('beacon', 'verify', ...FIXTURE_CHAINS.map(fixtureFile))
    const total = FIXTURE_CHAINS.reduce((n, c) => n + loadDrandFixture(c).entries.length, 0)
    expect(r).toEqual({ code: 0, stdout: `${total} passed, 0 failed\n`, stderr: '' })
  })

  it('fails tampered entries, one line each, and exits 1', async () => {
    const dir = await tempDir()
    const q = loadDrandFixture('quicknet')
    const [a, b, c] = q.entries
    const entries = [a, tamperEntry(b), { ...c, signature: a.signature, randomness: a.randomness }, { ...a, round: a.round + 7 }]
    await writeFile(join(dir, 'mixed.json'), JSON.stringify({ info: q.info, entries }))
    const r = await cliInProcess('beacon', 'verify', join(dir, 'mixed.json'))
    expect(r.code).toBe(1)
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(4)
    expect(lines[0]).toMatch(/^FAIL round 2 \(.*mixed\.json entry 2, chain quicknet\): (bad-signature|malformed-point): /)
    expect(lines[1]).toMatch(/^FAIL round 3 .*entry 3.*: bad-signature: /)
    expect(lines[2]).toMatch(/^FAIL round 8 .*entry 4.*: bad-signature: /)
    expect(lines[3]).toBe('1 passed, 3 failed')
  })

  it('with --chain: drand entry files pass against their chain, and every one fails against the wrong chain', async () => {
    const dir = await tempDir()
    const d = loadDrandFixture('default')
    await writeFile(join(dir, 'info.json'), JSON.stringify(d.info))
    const files = await Promise.all(d.entries.map(async (e, i) => {
      const f = join(dir, `entry-${i}.json`)
      await writeFile(f, JSON.stringify(e))
      return f
    }))
    expect(await cliInProcess('beacon', 'verify', '--chain', join(dir, 'info.json'), ...files)).toMatchObject({ code: 0, stdout: `${files.length} passed, 0 failed\n` })
    expect(await cliInProcess('beacon', 'verify', '--chain', 'mainnet', ...files)).toMatchObject({ code: 0 })

    // Wrong chain info (a preset, a fixture file, a bare info): all fail.
    for (const wrong of ['quicknet', fixtureFile('testnet-unchained-3s')]) {
      const r = await cliInProcess('beacon', 'verify', '--chain', wrong, ...files)
      expect(r.code).toBe(1)
      expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(`0 passed, ${files.length} failed`)
    }
    // --chain overrides the info inside {info, entries} files.
    const r = await cliInProcess('beacon', 'verify', '--chain', fixtureFile('fastnet'), fixtureFile('testnet-g'))
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(`0 passed, ${loadDrandFixture('testnet-g').entries.length} failed`)
  })

  it('--round checks the round a COMMIT named', async () => {
    const r = await cliInProcess('beacon', 'verify', '--chain', 'quicknet', '--round', '1000', fixtureFile('quicknet'))
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/round-mismatch: entry is for round 1, expected round 1000/)
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('1 passed, 5 failed')
  })

  it('bad usage and bad chain info exit 2 with one line', async () => {
    const dir = await tempDir()
    const q = loadDrandFixture('quicknet')
    await writeFile(join(dir, 'bad-info.json'), JSON.stringify({ ...q.info, period: 30 }))
    const cases = [[], ['--chain', 'nosuch', fixtureFile('quicknet')], ['--chain', join(dir, 'bad-info.json'), fixtureFile('quicknet')],
      ['--round', 'x', fixtureFile('quicknet')], [join(dir, 'missing.json')]]
    // Through the CLI's entry point in this process (the first test ran the real binary).
    for (const args of cases) {
      const r = await cliInProcess('beacon', 'verify', ...args)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stderr.trimEnd().split('\n'), args.join(' ')).toHaveLength(1)
      expect(r.stderr).toMatch(/^fairdeal beacon verify: /)
    }
  })
})

describe('fairdeal beacon serve', () => {
  it('serves a persisted local beacon whose entries `beacon verify` accepts, and stops on SIGTERM', async () => {
    const dir = await tempDir()
    const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [bin, 'beacon', 'serve', '--data', dir, '--period', '1'], { cwd: root })
    cleanup.push(async () => { if (child.exitCode === null) child.kill('SIGKILL') })
    let out = ''
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', d => {
        out += String(d)
        const m = /url: +(\S+)/.exec(out)
        if (m !== null && out.includes('table config:')) resolve(m[1])
      })
      child.on('close', code => reject(new Error(`beacon serve exited ${code}: ${out}`)))
    })
    expect(out).toMatch(/^local drand beacon \(local, trust = its operator\)/)
    const info = await (await fetch(`${url}/info`)).json()
    expect(JSON.parse(await readFile(join(dir, 'chain-info.json'), 'utf8'))).toEqual(info)
    expect(JSON.parse(await readFile(join(dir, 'beacon-config.json'), 'utf8'))).toMatchObject({ kind: 'drand', trust: 'local, trust = its operator', relays: [url] })
    const entry = await (await fetch(`${url}/public/1`)).json()
    await writeFile(join(dir, 'entry.json'), JSON.stringify(entry))
    expect(await cli('beacon', 'verify', '--chain', join(dir, 'chain-info.json'), join(dir, 'entry.json'))).toMatchObject({ code: 0, stdout: '1 passed, 0 failed\n' })
    expect((await fetch(`${url}/public/99999999`)).status).toBe(404)

    const exited = new Promise<number | null>(resolve => child.on('close', resolve))
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
  })

  it('refuses to run without --data', async () => {
    const r = await cliInProcess('beacon', 'serve')
    expect(r.code).toBe(2)
    expect(r.stderr).toBe('fairdeal beacon serve: --data DIR is required (the beacon key lives there)\n')
  })
})
