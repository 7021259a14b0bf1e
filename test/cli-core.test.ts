// The CLI of the deterministic core, run as users run it: `node bin/fairdeal.js …` on the build.
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cliInProcess } from './helpers/cli-in-process.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const VECTORS = join(ROOT, 'test/fixtures/vectors')
const FILES = ['atout-v1.json', 'bitjack21.json', 'php-xoshiro256starstar.json'].map(f => join(VECTORS, f))
let dir = ''

interface Run { code: number, stdout: string, stderr: string }

async function fairdeal (...args: string[]): Promise<Run> {
  return await new Promise(resolve => {
    execFile(process.execPath, [join(ROOT, 'bin/fairdeal.js'), ...args], { cwd: ROOT, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1
      resolve({ code, stdout, stderr })
    })
  })
}

/** The build is what users run; rebuild it when one of this area's sources is newer. */
async function ensureBuilt (): Promise<void> {
  const sources = ['src/cli/commands/deal.ts', 'src/cli/commands/vectors-check.ts', 'src/core/vectors.ts',
    'src/core/schemes/atout.ts', 'src/core/schemes/tarot.ts', 'src/core/schemes/dice.ts', 'src/core/schemes/bitjack21.ts',
    'src/core/schemes/streams.ts', 'src/core/schemes/inputs.ts', 'src/core/schemes/labels.ts', 'src/core/schemes/registry.ts']
  let stale = false
  for (const src of sources) {
    const out = join(ROOT, 'dist', src.replace(/\.ts$/, '.js'))
    const [s, o] = await Promise.all([stat(join(ROOT, src)), stat(out).catch(() => undefined)])
    if (o === undefined || o.mtimeMs < s.mtimeMs) stale = true
  }
  if (!stale) return
  // type errors elsewhere in a tree under construction do not stop tsc from emitting
  await new Promise<void>(resolve => execFile(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: ROOT }, () => resolve()))
}

/**
 * The first of a table of cases runs the real binary (the wiring around main: exit code, streams,
 * no stack trace); the rest run main in this process, the same code without a process start each.
 */
const spawnFirst = (i: number) => async (...args: string[]): Promise<Run> => (i === 0 ? await fairdeal(...args) : await cliInProcess(...args))

function expectOneLineError (r: Run, command: string, message: RegExp): void {
  expect(r.code).toBe(2)
  expect(r.stdout).toBe('')
  const lines = r.stderr.trimEnd().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0].startsWith(`fairdeal ${command}: `)).toBe(true)
  expect(lines[0]).toMatch(message)
  expect(r.stderr).not.toMatch(/\n\s+at /) // no stack trace
}

beforeAll(async () => {
  await ensureBuilt()
  dir = await mkdtemp(join(tmpdir(), 'fairdeal-cli-core-'))
})
afterAll(async () => { if (dir !== '') await rm(dir, { recursive: true, force: true }) })

describe('fairdeal vectors check', () => {
  it('passes every shared vector', async () => {
    const docs = await Promise.all(FILES.map(async f => JSON.parse(await readFile(f, 'utf8'))))
    // each vector, plus atout-v1's starting deck and its forced-rejection stream
    const total = docs.reduce((n, d) => n + d.vectors.length + (d.scheme === 'atout-v1' ? 2 : 0), 0)
    const r = await fairdeal('vectors', 'check', ...FILES)
    expect(r.stderr).toBe('')
    expect(r.stdout).toBe(`${total} passed, 0 failed\n`)
    expect(r.code).toBe(0)
  })

  it('fails a vector whose expected value is wrong: one line naming file, vector and field; exit 1', async () => {
    const doc = JSON.parse(await readFile(FILES[0], 'utf8'))
    doc.vectors[3].belote.hands[2][0] = doc.vectors[3].belote.hands[2][1]
    doc.vectors[5].commitment = '00'.repeat(32)
    const bad = join(dir, 'bad-atout.json')
    await writeFile(bad, JSON.stringify(doc))
    const r = await fairdeal('vectors', 'check', bad, FILES[1])
    expect(r.code).toBe(1)
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(3)
    expect(lines[0]).toMatch(new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} vectors\\[3\\] differs in belote\\.hands \\(belote\\.hands: expected `))
    expect(lines[1]).toMatch(/ vectors\[5\] differs in commitment \(commitment: expected "0000/)
    const total = doc.vectors.length + 2 + JSON.parse(await readFile(FILES[1], 'utf8')).vectors.length
    expect(lines[2]).toBe(`${total - 2} passed, 2 failed`)
  })

  it('refuses what is not a vectors file, with one line and exit 2', async () => {
    const write = async (name: string, content: string): Promise<string> => { const p = join(dir, name); await writeFile(p, content); return p }
    const cases: Array<[string[], RegExp]> = [
      [[], /give at least one vectors file/],
      [[join(dir, 'missing.json')], /missing\.json: cannot read it \(ENOENT\)/],
      [[await write('text.json', 'hello')], /text\.json: not JSON/],
      [[await write('array.json', '[1]')], /array\.json: the file must be a JSON object/],
      [[await write('noscheme.json', '{"vectors":[]}')], /no "scheme" string/],
      [[await write('other.json', '{"scheme":"poker-v1","vectors":[]}')], /no checker for scheme "poker-v1"/],
      [[await write('big.json', '{"scheme":"bitjack21","vectors":[{"r1":"a","r2":"b","rx":"","n":417,"cards":[]}]}')], /vectors\[0\]: n must be a shoe size from 1 to 416, got 417/],
      [[await write('hex.json', '{"scheme":"php-xoshiro256starstar","vectors":[{"engineSeed":"xyz","values":[]}]}')], /engineSeed must be hex/],
      [['--frobnicate', FILES[0]], /unknown option --frobnicate$/]
    ]
    for (const [i, [args, message]] of cases.entries()) expectOneLineError(await spawnFirst(i)('vectors', 'check', ...args), 'vectors check', message)
  })
})

describe('fairdeal deal', () => {
  it('atout-v1 belote --json reproduces the shared vector', async () => {
    const v = JSON.parse(await readFile(FILES[0], 'utf8')).vectors[4]
    const r = await fairdeal('deal', '--scheme', 'atout-v1', '--game', 'belote', '--secret', v.secret,
      ...v.nonces.flatMap((n: string) => ['--nonce', n]), '--dealer', String(v.belote.dealer), '--taker', String(v.belote.taker), '--json')
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(out).toMatchObject({ scheme: 'atout-v1', game: 'belote', key: v.key, commitment: v.commitment, keyText: v.text, deck: v.deck, turnedUp: v.belote.turnedUp, hands: v.belote.hands })
    expect(out.deliveries.filter((d: any) => d.stage === 'deal').map((d: any) => d.cards)).toEqual(v.belote.firstFive)
  })

  it('prints a readable deal with suit symbols, and robots as empty nonces', async () => {
    const v = JSON.parse(await readFile(FILES[0], 'utf8')).vectors[2] // one human seat, three robots
    const r = await cliInProcess('deal', '--scheme', 'atout-v1', '--game', 'coinche', '--secret', v.secret, ...v.nonces.flatMap((n: string) => ['--nonce', n]))
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`key         ${v.key}`)
    expect(r.stdout).toContain(`commitment  ${v.commitment}`)
    const label = (c: string): string => (c[0] === 'T' ? '10' : c[0]) + ({ C: '♣', D: '♦', H: '♥', S: '♠' } as Record<string, string>)[c[1]]
    for (let s = 0; s < 4; s++) expect(r.stdout).toContain(`seat ${s}      dealt: ${v.coinche[s].map(label).join(' ')}`)
  })

  it('duo, atout-drand-v1, tarot, bitjack21 and dice each take their own inputs', async () => {
    const duo = JSON.parse(await readFile(FILES[0], 'utf8')).vectors[7]
    const d = JSON.parse((await cliInProcess('deal', '--scheme', 'atout-v1', '--game', 'duo', '--secret', duo.secret, '--nonce', duo.nonces[0], '--nonce', duo.nonces[1], '--dealer', String(duo.duo.dealer), '--json')).stdout)
    expect(d.receiver).toBe(duo.duo.receiver)
    expect(d.deliveries.filter((x: any) => x.stage === 'faceUp').map((x: any) => x.cards)).toEqual(duo.duo.faceUp)

    const chain = '52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971'
    const b = JSON.parse((await cliInProcess('deal', '--scheme', 'atout-drand-v1', '--game', 'coinche', '--secret', 's3cr3t', '--nonce', 'a', '--nonce', '', '--nonce', 'c', '--nonce', 'd',
      '--chain-hash', chain, '--round', '1000', '--randomness', 'ab'.repeat(32), '--json')).stdout)
    // independent Python value (see schemes-atout.test.ts)
    expect(b.key).toBe('3335d770fb07d9658739f366a6a011b452a95e2bf1996771ffdd513deded987d')

    const t = JSON.parse((await cliInProcess('deal', '--scheme', 'tarot', '--seed', '484', '--players', '4', '--dealer', '1', '--json')).stdout)
    expect(t.redeals).toEqual([{ seed: '484', dealer: 1, petitSec: 3 }])
    expect(t.dealer).toBe(2)
    expect(t.fingerprint).toBe('5ddf5eafab052056c92d9b7b58a1ad92b8e50931b6afbf1c8c207732697e1f8c')

    const bj = JSON.parse(await readFile(FILES[1], 'utf8')).vectors[0]
    const s = JSON.parse((await cliInProcess('deal', '--scheme', 'bitjack21', '--r1', bj.r1, '--r2', bj.r2, '--rx', bj.rx, '--cards', String(bj.n), '--json')).stdout)
    expect(s.commitment).toBe(bj.commitment)
    const ranks = '23456789TJQKA'
    expect(s.shoe).toEqual(bj.cards.map((v: number) => ranks[v % 13] + 'DHCS'[Math.floor(v / 13)]))

    const dice = JSON.parse((await cliInProcess('deal', '--scheme', 'dice', '--secret', 'secret', '--nonce', 'n1', '--nonce', 'n2', '--roll', '3d20', '--json')).stdout)
    expect(dice).toMatchObject({ scheme: 'dice-v1', rolls: [6, 1, 5], total: 12 }) // independent Python values
  })

  it('refuses bad input with one line and exit 2', async () => {
    const four = ['--nonce', '1', '--nonce', '2', '--nonce', '3', '--nonce', '4']
    const cases: Array<[string[], RegExp]> = [
      [[], /--scheme is required/],
      [['--scheme', 'poker'], /unknown scheme "poker"/],
      [['--scheme', 'atout-v1', '--game', 'bridge', '--secret', 's', ...four], /atout-v1 has no game 'bridge' \(it has coinche, belote, duo\)/],
      [['--scheme', 'atout-v1', '--secret', 's', ...four], /--game is required for atout-v1/],
      [['--scheme', 'atout-v1', '--game', 'coinche', '--secret', 's', '--nonce', '1', '--nonce', '2', '--nonce', '3'], /coinche is played by 4 seats: give one --nonce per seat \(got 3\)/],
      [['--scheme', 'atout-v1', '--game', 'duo', '--secret', 's', ...four], /duo is played by 2 seats/],
      [['--scheme', 'tarot-v1', '--secret', 's', ...four, '--nonce', '5', '--nonce', '6'], /tarot is played by 3, 4 or 5 seats/],
      [['--scheme', 'atout-v1', '--game', 'coinche', '--secret', 's', ...four, '--taker', '1'], /--taker applies only to belote/],
      [['--scheme', 'atout-v1', '--game', 'belote', '--secret', 's', ...four, '--dealer', '4'], /--dealer must be a seat from 0 to 3, got 4/],
      [['--scheme', 'atout-v1', '--game', 'belote', '--secret', 's', ...four, '--dealer', '-1'], /--dealer must be a non/],
      [['--scheme', 'atout-v1', '--game', 'coinche', '--secret', 's', ...four, '--round', '3'], /--round does not apply to atout-v1/],
      [['--scheme', 'atout-drand-v1', '--game', 'duo', '--secret', 's', '--nonce', '1', '--nonce', '2', '--chain-hash', 'zz', '--round', '1', '--randomness', 'ab'.repeat(32)], /chain hash must be 64 lowercase hex characters, got "zz"/],
      [['--scheme', 'atout-drand-v1', '--game', 'duo', '--secret', 's', '--nonce', '1', '--nonce', '2', '--round', '1'], /needs --chain-hash, --round and --randomness/],
      [['--scheme', 'bitjack21', '--r1', 'a', '--r2', 'b', '--cards', '417'], /a BitJack21 shoe holds 1 to 416 cards \(8 decks\), got 417/],
      [['--scheme', 'bitjack21', '--r1', 'a'], /needs --r1 \(the server seed\) and --r2/],
      [['--scheme', 'dice', '--engine-seed', '12zz', '--roll', '1d6'], /--engine-seed must be hex/],
      [['--scheme', 'dice', '--engine-seed', 'ab', '--roll', '1d6'], /--engine-seed must be 32 bytes/],
      [['--scheme', 'dice', '--secret', 's', '--nonce', '1', '--roll', '3x20'], /a roll is written NdS/],
      [['--scheme', 'dice', '--secret', 's', '--nonce', '1'], /--roll NdS is required/],
      [['--scheme', 'tarot', '--seed', '0042', '--players', '4'], /a tarot seed is a non-negative decimal integer without leading zeros/],
      [['--scheme', 'tarot', '--seed', '1', '--players', '6'], /tarot is for 3, 4 or 5 seats, got 6/]
    ]
    for (const [i, [args, message]] of cases.entries()) expectOneLineError(await spawnFirst(i)('deal', ...args), 'deal', message)
  })
})
