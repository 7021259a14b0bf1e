// The log commands as a user runs them: the built CLI in its own process (`npx tsc -p
// tsconfig.json` first; npm test does it), on real LevelDB data directories, and, for --peer, a
// node serving its log from another process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openLog, logDbPath } from '../src/store/log.js'
import { loadOrCreateIdentity } from '../src/net/identity.js'
import { GENESIS_PREV, makeEntry, makeHead } from '../src/core/log/format.js'
import { nativeSigner } from '../src/crypto/native-crypto.js'
import { OWNER, testPayload } from './helpers/log-fixtures.js'
import { cliInProcess } from './helpers/cli-in-process.js'
import { fairdeal } from './helpers/cli.js'
import { payloadColumns } from '../src/cli/commands/log-show.js'

const root = join(import.meta.dirname, '..')
const bin = join(root, 'bin', 'fairdeal.js')

const lines = (r: { stdout: string }): string[] => r.stdout.split('\n').filter(l => l !== '')
const withLines = <T extends { stdout: string }>(r: T): T & { lines: string[] } => ({ ...r, lines: lines(r) })

let tmp: string
let data: string
const N = 20

beforeAll(async () => {
  if (!existsSync(join(root, 'dist', 'src', 'cli', 'commands', 'verify.js'))) {
    throw new Error('these tests run the built CLI: run `npx tsc -p tsconfig.json` (npm test does) first')
  }
  tmp = await mkdtemp(join(tmpdir(), 'fairdeal-log-cli-'))
  data = join(tmp, 'node')
  const log = await openLog(logDbPath(data), OWNER)
  for (let i = 0; i < N; i++) await log.append(i % 5 === 4 ? 'abort' : 'receipt', testPayload(i))
  await log.close()
})

afterAll(async () => { if (tmp !== undefined) await rm(tmp, { recursive: true, force: true }) })

describe('fairdeal verify --data / log export / verify FILE', () => {
  it('a node\'s log verifies (log checks), in worker threads or in this thread alike', async () => {
    const pooled = await fairdeal('verify', '--data', data, '--chain-only')
    expect(pooled).toMatchObject({ code: 0, lines: [`${N} passed, 0 failed`] })
    expect(pooled.stderr).toBe('receipts not checked (--chain-only): order, links, signatures and head only\n')
    const single = await cliInProcess('verify', '--data', data, '--chain-only', '--workers', '0')
    expect(lines(single)).toEqual(pooled.lines)
  })

  it('a range of a stopped node\'s log verifies as that range (issue 18: the whole log was read and every entry outside failed)', async () => {
    const r = await cliInProcess('verify', '--data', data, '--chain-only', '--workers', '0', '--from', '5', '--to', '9')
    expect([r.code, lines(r)]).toEqual([0, ['5 passed, 0 failed']])
  })

  it('the receipt check runs on every entry, in the workers: test payloads are not receipts, so each fails by seq', async () => {
    const r = await fairdeal('verify', '--data', data, '--workers', '1')
    expect(r.code).toBe(1)
    expect(r.lines).toHaveLength(N + 1)
    expect(r.lines.slice(0, N).map(l => /^seq (\d+): \S/.exec(l)?.[1])).toEqual(Array.from({ length: N }, (_, i) => String(i)))
    expect(r.lines[N]).toBe(`0 passed, ${N} failed`)
    const single = await cliInProcess('verify', '--data', data, '--workers', '0')
    expect(lines(single)).toEqual(r.lines)
  })

  it('an export verifies; a tampered export fails naming the entry', async () => {
    const file = join(tmp, 'export.jsonl')
    const exported = await cliInProcess('log', 'export', '--data', data, '--out', file)
    expect(exported).toMatchObject({ code: 0, stdout: '', stderr: '' })
    const lines = (await readFile(file, 'utf8')).split('\n')
    expect(lines).toHaveLength(N + 2) // head, N entries, final newline
    expect(lines[N + 1]).toBe('')
    expect(withLines(await cliInProcess('verify', file, '--chain-only', '--workers', '0')).lines).toEqual([`${N} passed, 0 failed`])

    const k = 13
    lines[1 + k] = lines[1 + k].replace(/"hand":13/, '"hand":14')
    const tampered = join(tmp, 'tampered.jsonl')
    await writeFile(tampered, lines.join('\n'))
    const r = withLines(await cliInProcess('verify', tampered, '--chain-only', '--workers', '0'))
    expect(r.code).toBe(1)
    expect(r.lines).toEqual([`seq ${k}: owner signature does not verify`, `${N - 1} passed, 1 failed`])
  })

  it('export to stdout is the same bytes; a partial export verifies only as the range it is', async () => {
    const whole = await fairdeal('log', 'export', '--data', data)
    expect(whole.stdout).toBe(await readFile(join(tmp, 'export.jsonl'), 'utf8'))
    const part = await cliInProcess('log', 'export', '--data', data, '--from', '5', '--to', '9')
    expect(lines(part)).toHaveLength(6)
    expect(part.stderr).toBe(`exported seq 5..9 of a log whose head is at seq ${N - 1}: check it with 'fairdeal verify FILE --from 5 --to 9'\n`)
    const file = join(tmp, 'part.jsonl')
    await writeFile(file, part.stdout)
    expect(lines(await cliInProcess('verify', file, '--chain-only', '--from', '5', '--to', '9', '--workers', '0'))).toEqual(['5 passed, 0 failed'])
    const unstated = withLines(await cliInProcess('verify', file, '--chain-only', '--workers', '0'))
    expect(unstated.code).toBe(1)
    expect(unstated.lines[0]).toBe('seq 0..4: missing (5 entries): the first entry is seq 5')
  })

  it('--json gives one object per failure and a summary', async () => {
    const r = withLines(await cliInProcess('verify', '--data', data, '--json', '--workers', '0'))
    const objects = r.lines.map(l => JSON.parse(l) as Record<string, unknown>)
    expect(objects).toHaveLength(N + 1)
    expect(objects[3]).toMatchObject({ seq: 3, line: 5, count: 1 })
    expect(objects[N]).toMatchObject({ passed: 0, failed: N, owner: OWNER.peerId, head: { seq: N - 1 }, lastSeq: N - 1, receipts: 'checked' })
    expect(r.stderr).toBe('') // no progress bar off a terminal
  })

  it('bad input gets one clear line and exit 2', async () => {
    const cases: Array<[string[], string]> = [
      [['verify'], 'give exactly one of FILE, --data DIR or --peer ADDR'],
      [['verify', '--data', join(tmp, 'none')], `no log in ${join(tmp, 'none')}`],
      [['verify', join(tmp, 'none.jsonl')], `cannot read ${join(tmp, 'none.jsonl')}`],
      [['verify', '--data', data, '--from', 'x'], '--from must be a sequence number'],
      [['verify', '--peer', 'nonsense'], '--peer must be a multiaddr'],
      [['log', 'export', '--data', data, '--from', '5', '--to', '2'], '--to 2 is before --from 5']
    ]
    // The first through the real binary; the rest through the same entry point in this process.
    for (const [i, [args, message]] of cases.entries()) {
      const r = i === 0 ? await fairdeal(...args) : await cliInProcess(...args)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stderr.split('\n').filter(Boolean), args.join(' ')).toHaveLength(1)
      expect(r.stderr, args.join(' ')).toContain(message)
    }
  })
})

describe('the progress bar', () => {
  const hasScript = existsSync('/usr/bin/script') || existsSync('/bin/script')

  it.skipIf(!hasScript)('is drawn on a terminal (stderr) for a long log, and cleared before the summary', async () => {
    // 2,000 entries (over the bar's 1,000-line threshold) signed with the native signer (same signatures as the pure one, faster to make).
    const owner = nativeSigner(new Uint8Array(32).fill(1), OWNER.peerId)
    const lines: string[] = []
    let prev = GENESIS_PREV
    for (let seq = 0; seq < 2_000; seq++) {
      const made = makeEntry(owner, { seq, prev, kind: 'receipt', payload: { hand: seq } })
      lines.push(made.line)
      prev = made.hash
    }
    const file = join(tmp, 'long.jsonl')
    await writeFile(file, [makeHead(owner, 1_999, prev).line, ...lines].join('\n') + '\n')
    const command = `${process.execPath} ${bin} verify ${file} --chain-only --workers 0`
    const r = await new Promise<{ code: number | null, out: string }>(resolve => {
      const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
      let out = ''
      child.stdout.on('data', (d: Buffer) => { out += d.toString() })
      child.on('exit', code => { resolve({ code, out }) })
    })
    expect(r.code).toBe(0)
    expect(r.out).toMatch(/\r\x1b\[K\[#*\.*\] \d+% [\d,]+\/2,001 lines, [\d,]+\/s/)
    expect(r.out).toMatch(/\r\x1b\[K(receipts not checked[^\n]*\r?\n)?2000 passed, 0 failed\r?\n$/)
    // Off a terminal there is no bar at all (see the --json test for stderr being empty).
  })
})

describe('fairdeal log show', () => {
  it('prints one row per entry with hand, game, seats, beacon and shield', async () => {
    const r = withLines(await cliInProcess('log', 'show', '--data', data, '--chain-only', '--from', '2', '--to', '5'))
    expect(r.code).toBe(0)
    expect(r.lines[0]).toBe(`log of ${OWNER.peerId}, signed head at seq ${N - 1}`)
    expect(r.lines[1]).toMatch(/^\s+SEQ\s+TIME\s+KIND\s+TABLE\s+HAND\s+GAME\s+SEATS\s+BEACON\s+SHIELD$/)
    const rows = r.lines.slice(2, -1)
    expect(rows.map(l => l.trim().split(/\s+/)[0])).toEqual(['2', '3', '4', '5'])
    expect(rows[0]).toMatch(/ receipt .* 2 +coinche +…\w{6} robot robot robot +1002 +✓$/)
    expect(rows[1]).toMatch(/ receipt .* 3 +belote +…\w{6} robot robot robot +- +✓$/)
    expect(rows[2]).toMatch(/ abort .* ✓/)
    expect(r.lines.at(-1)).toBe('4 passed, 0 failed (receipts not checked: --chain-only)')
  })

  it('a beacon group\'s rows (dkg, beacon-blame, beacon-reshare-refused) have no hand: "-", not "?"; a blame row names the member and round', () => {
    const dkg = payloadColumns('dkg', { params: { id: 'friends', members: ['a', 'b', 'c'], threshold: 2 }, member: 1, outcome: { groupKey: 'ab'.repeat(48) } })
    const blame = payloadColumns('beacon-blame', { record: { type: 'beacon-group/blame', body: { chain: 'c', round: 41, bad: [{ index: 2, reason: 'bad-partial', partial: {} }] } }, members: [], commitments: [] })
    const refused = payloadColumns('beacon-reshare-refused', { params: { id: 'friends' }, refusal: { body: { message: 'reshare refused: 1 qualified old member' } } })
    for (const c of [dkg, blame, refused]) expect([c.table, c.hand, c.game, c.seats, c.beaconRound]).toEqual(['-', null, '-', [], null])
    expect(blame.note).toBe('beacon group: member 2 named for a bad partial of round 41')
    expect(dkg.note).toMatch(/^beacon group friends: member 1 of 3, threshold 2, key abab/)
  })

  it('marks failing entries with ✗ and what failed', async () => {
    const r = withLines(await cliInProcess('log', 'show', join(tmp, 'tampered.jsonl'), '--chain-only'))
    const bad = r.lines.filter(l => l.includes('✗'))
    expect(bad).toHaveLength(1)
    expect(bad[0]).toMatch(/^\s+13 .*✗ owner signature does not verify$/)
    // A shown failure is a failure: the same status as 'fairdeal verify'.
    expect(r.code).toBe(1)
  })
})

describe('fairdeal verify --peer: a log fetched from a node in another process', () => {
  const servers: ChildProcess[] = []
  afterAll(() => { for (const s of servers) s.kill('SIGTERM') })

  /** Serves each `[dir, ...options]` from one node of one log-server process; their addresses. */
  async function serveFrom (...nodes: string[][]): Promise<string[]> {
    const args = nodes.flatMap((n, i) => [...(i === 0 ? [] : ['+']), n[0], '12', ...n.slice(1)])
    const child = spawn(process.execPath, [join(root, 'test', 'helpers', 'log-server.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    servers.push(child)
    let err = ''
    child.stderr?.on('data', (d: Buffer) => { err += d.toString() })
    return await new Promise<string[]>((resolve, reject) => {
      child.stdout?.once('data', (d: Buffer) => { resolve(d.toString().trim().split(' ')) })
      child.once('exit', code => { reject(new Error(`log server exited (${String(code)}): ${err}`)) })
    })
  }

  it('verifies, refuses strangers under the members policy, and catches a forging peer', async () => {
    const open = join(tmp, 'open-node')
    const member = join(tmp, 'member')
    const memberId = (await loadOrCreateIdentity(member)).peerId
    // Three nodes, one process (separate from this one and from the CLI's).
    const [openAddr, closedAddr, forgedAddr] = await serveFrom(
      [open, '--anyone'],
      [join(tmp, 'closed-node'), '--member', memberId],
      [join(tmp, 'forging-node'), '--anyone', '--forge', '7']
    )

    // The real binary once; then the same entry point in this process (the servers stay separate processes).
    const ok = await fairdeal('verify', '--peer', openAddr, '--chain-only')
    expect(ok).toMatchObject({ code: 0, lines: ['12 passed, 0 failed'] })

    // A running node holds its data directory: the CLI says so and points to --peer.
    const locked = await cliInProcess('verify', '--data', open)
    expect(locked.code).toBe(2)
    expect(locked.stderr).toBe(`fairdeal verify: ${open} is in use by a running node: stop it, or fetch its log over the network with 'fairdeal verify --peer ADDRESS'\n`)
    // A beacon group member without a table serves its log to nobody: --peer would not help.
    await mkdir(join(open, 'beacon-group'))
    const groupOnly = await cliInProcess('log', 'show', '--data', open)
    expect([groupOnly.code, groupOnly.stderr]).toEqual([2, `fairdeal log show: ${open} is in use by its running beacon group member, which has no control endpoint to read the log through and serves it to nobody: stop that node, then run this again\n`])
    await rm(join(open, 'beacon-group'), { recursive: true })

    const stranger = await cliInProcess('verify', '--peer', closedAddr, '--chain-only', '--workers', '0')
    expect(stranger.code).toBe(2)
    expect(stranger.stderr).toMatch(/refused: not allowed: this node serves its log to its table members only/)
    // It says how a member reads it: dial as its own node.
    expect(stranger.stderr).toContain('dial as your node with --as DIR')
    const asMember = withLines(await cliInProcess('verify', '--peer', closedAddr, '--as', member, '--chain-only', '--workers', '0'))
    expect(asMember.lines).toEqual(['12 passed, 0 failed'])

    const forged = withLines(await cliInProcess('verify', '--peer', forgedAddr, '--chain-only', '--workers', '0'))
    expect(forged.code).toBe(1)
    expect(forged.lines).toEqual(['seq 7: owner signature does not verify', '11 passed, 1 failed'])
  })
})
