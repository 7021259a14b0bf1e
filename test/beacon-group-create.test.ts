import { afterAll, describe, expect, it, vi } from 'vitest'
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCommand } from '../src/cli/command.js'
import { command } from '../src/cli/commands/beacon-group.js'
import { parseGroupConfig } from '../src/beacon/group/config.js'
import { repoRoot } from './helpers/cli.js'
import { requireBuild } from './helpers/node-process.js'

// Issue 22: a group across machines. `beacon group create` writes configs whose members bind a
// chosen address and are reached at announced hosts; it tells where the table beacon config appears.
const root = await mkdtemp(join(tmpdir(), 'fairdeal-group-create-'))
afterAll(async () => { await rm(root, { recursive: true, force: true }) })

async function create (args: string[]): Promise<{ code: number, out: string }> {
  let out = ''
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => { out += String(s); return true })
  try { return { code: await runCommand(command, ['create', ...args]), out } } finally { spy.mockRestore() }
}

describe('beacon group create across machines', () => {
  it('binds the listen host, announces each member at its host, fixed ports from --base-port', async () => {
    const out = join(root, 'g1')
    const r = await create(['--out', out, '--members', '3', '--listen-host', '0.0.0.0', '--announce', 'alice.example.org', '--announce', '192.0.2.7', '--announce', '2001:db8::5', '--base-port', '26500'])
    expect(r.code).toBe(0)
    const configs = await Promise.all([1, 2, 3].map(async i => parseGroupConfig(JSON.parse(await readFile(join(out, `member${i}.json`), 'utf8')).group)))
    const c2 = configs[1]
    expect(c2.listen).toEqual(['/ip4/0.0.0.0/tcp/26502'])
    expect(c2.http).toEqual({ host: '0.0.0.0', port: 26503 })
    const peers = c2.params.members
    expect(peers.map(p => c2.addresses.get(p))).toEqual([['/dns/alice.example.org/tcp/26500'], ['/ip4/192.0.2.7/tcp/26502'], ['/ip6/2001:db8::5/tcp/26504']])
    expect(peers.map(p => c2.urls.get(p))).toEqual(['http://alice.example.org:26501', 'http://192.0.2.7:26503', 'http://[2001:db8::5]:26505'])
    // Every member's config names the group identically (the DKG session hashes it).
    for (const c of configs) expect(c.params).toEqual(c2.params)
    expect(r.out).toContain(`fairdeal table new --beacon ${join(out, 'member1', 'beacon-group', 'fairdeal-demo-group', 'beacon.json')}`)
  })

  it('defaults to loopback, and refuses announce lists of the wrong length or a listen host that is not an IP', async () => {
    const out = join(root, 'g2')
    expect((await create(['--out', out, '--members', '2'])).code).toBe(0)
    const c = parseGroupConfig(JSON.parse(await readFile(join(out, 'member1.json'), 'utf8')).group)
    expect(c.http.host).toBe('127.0.0.1')
    expect([...c.urls.values()].every(u => u.startsWith('http://127.0.0.1:'))).toBe(true)
    await expect(create(['--out', join(root, 'g3'), '--members', '3', '--announce', 'a', '--announce', 'b'])).rejects.toThrow(/one announce host for all members or one per member \(3\), not 2/)
    await expect(create(['--out', join(root, 'g4'), '--members', '2', '--listen-host', 'example.org'])).rejects.toThrow(/listen host example.org must be an IP address/)
  })

  it('a member\'s node started before its DKG says when the DKG starts (it is silent until then)', async () => {
    requireBuild()
    const out = join(root, 'g5')
    expect((await create(['--out', out, '--members', '2', '--start-in', '600'])).code).toBe(0)
    const child = spawn(process.execPath, [join(repoRoot, 'bin', 'fairdeal.js'), 'node', '--config', join(out, 'member1.json')], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FAIRDEAL_LOG_LEVEL: 'info' } })
    const exited = new Promise(resolve => child.once('exit', resolve))
    try {
      const started = await new Promise<{ msg: string, dkgStart?: string }>((resolve, reject) => {
        let text = ''
        child.once('exit', code => { reject(new Error(`the node exited (${String(code)}) before it started: ${text}`)) })
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk
          for (const line of text.split('\n')) {
            try {
              const e = JSON.parse(line) as { msg: string, dkgStart?: string }
              if (e.msg.startsWith('beacon group member started')) resolve(e)
            } catch {}
          }
        })
      })
      expect(started.msg).toMatch(/^beacon group member started: its DKG starts at \d{4}-\d\d-\d\dT[\d:.]+Z \(in (59\d|600) s\), every member's node up by then$/)
      expect(started.dkgStart).toBeDefined()
    } finally {
      child.kill('SIGTERM')
      await exited
    }
  })
})
