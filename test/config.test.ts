// Node config files: the shipped examples, and the one-line error a wrong or missing field gives.
import { execFile } from 'node:child_process'
import { access, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { loadNodeConfig, parseNodeConfig } from '../src/daemon/config.js'
import { loadBeaconPreset } from '../src/beacon/presets.js'
import { isPeerId } from '../src/core/identity.js'
import { ROBOT } from '../src/core/hand/messages.js'
import { NodeInputError } from '../src/daemon/errors.js'
import { cliInProcess } from './helpers/cli-in-process.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const DEALER_EXAMPLE = join(ROOT, 'config/dealer.example.json')
const SEAT_EXAMPLE = join(ROOT, 'config/seat.example.json')
let dir = ''

beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'fairdeal-config-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

async function readJson (path: string): Promise<Record<string, any>> {
  return JSON.parse(await readFile(path, 'utf8'))
}

describe('the example configs', () => {
  test('both parse, with real Ed25519 peer ids and the quicknet preset', async () => {
    const quicknet = await loadBeaconPreset('quicknet')
    for (const [file, data] of [[DEALER_EXAMPLE, 'dealer-data'], [SEAT_EXAMPLE, 'seat-data']]) {
      const config = await loadNodeConfig(file)
      // The data directory is relative to the config file, not to the working directory.
      expect(config.dataDir).toBe(join(ROOT, 'config', data))
      const ids = [config.table.dealer, ...config.table.seats.filter(s => s !== ROBOT), ...Object.keys(config.peers)]
      for (const id of ids) expect(isPeerId(id), id).toBe(true)
      expect(config.beacon.kind).toBe('drand')
      if (config.beacon.kind === 'drand' && quicknet.kind === 'drand') expect(config.beacon.chain.hash).toBe(quicknet.chain.hash)
    }
  })

  test('they describe one table: every node must agree on all of it but the peers', async () => {
    const dealer = await loadNodeConfig(DEALER_EXAMPLE)
    const seat = await loadNodeConfig(SEAT_EXAMPLE)
    expect(seat.table).toEqual(dealer.table)
    expect(seat.timeouts).toEqual(dealer.timeouts)
    expect(seat.beaconMarginMs).toBe(dealer.beaconMarginMs)
    expect(seat.beacon).toEqual(dealer.beacon)
    // The dealer node holds seat 0 and speaks first: it must know how to reach every other seat.
    expect(dealer.table.seats[0]).toBe(dealer.table.dealer)
    const others = dealer.table.seats.filter(s => s !== ROBOT && s !== dealer.table.dealer)
    expect(Object.keys(dealer.peers).sort()).toEqual([...others].sort())
    expect(Object.keys(seat.peers)).toEqual([dealer.table.dealer])
  })

  test('a beacon file named in the config is read next to the config, whatever the working directory', async () => {
    const quicknet = await readJson(join(ROOT, 'config/beacons/quicknet.json'))
    await writeFile(join(dir, 'beacon.json'), JSON.stringify(quicknet))
    const value = await readJson(DEALER_EXAMPLE)
    value.table.beacon = 'beacon.json'
    const config = await parseNodeConfig(value, join(dir, 'node.json'))
    expect(config.beacon.kind === 'drand' ? config.beacon.chain.hash : null).toBe(quicknet.info?.hash ?? quicknet.hash)
  })

  test('a config in a container volume (/data/node.json, "data": ".") keeps its node\'s data in /data', async () => {
    const value = await readJson(SEAT_EXAMPLE)
    const config = await parseNodeConfig({ ...value, data: '.' }, '/data/node.json')
    expect(config.dataDir).toBe('/data')
  })
})

describe('a wrong or missing field is a one-line error naming it', () => {
  type Mutation = (c: Record<string, any>) => void
  const cases: Array<[string, string, RegExp, Mutation]> = [
    ['table.seats missing', 'table.seats', /is missing/, c => { delete c.table.seats }],
    ['data missing', 'data', /is missing/, c => { delete c.data }],
    ['table missing', 'table', /is missing/, c => { delete c.table }],
    ['a seat that is not a peer id', 'table.seats.2', /Ed25519 libp2p peer id/, c => { c.table.seats[2] = '12D3KooWnotapeerid' }],
    ['a dealer that is an RSA-style peer id', 'table.dealer', /Ed25519 libp2p peer id/, c => { c.table.dealer = 'QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N' }],
    ['an unknown game', 'table.game', /has no game poker/, c => { c.table.game = 'poker' }],
    ['an unknown scheme', 'table.scheme', /unknown scheme "atout-v9"/, c => { c.table.scheme = 'atout-v9' }],
    ['a wrong seat count', 'table.seats', /coinche is played by 4 seats, not 3/, c => { c.table.seats = c.table.seats.slice(0, 3) }],
    ['two seats for one peer id', 'table.seats', /a peer id holds two seats/, c => { c.table.seats[3] = c.table.seats[1] }],
    ['a UDP listen address', 'listen.0', /must be a listen multiaddr/, c => { c.listen = ['/ip4/0.0.0.0/udp/7400'] }],
    ['a DNS listen address (listening needs an IP)', 'listen.0', /must be a listen multiaddr/, c => { c.listen = ['/dns4/example.org/tcp/7400'] }],
    ['a host:port peer address', `table.peers.${'12D3KooWS7tzXhC3NPEjp7fmvuHbRgdXicv63L6G68dvbM6932fP'}.0`, /must be a multiaddr/,
      c => { c.table.peers[c.table.dealer] = ['dealer.example.net:7400'] }],
    ['a peer keyed by a name', 'table.peers.alice', /key/i, c => { c.table.peers.alice = ['/ip4/192.0.2.1/tcp/7400'] }],
    ['a misspelt field', 'table', /"timeout"/, c => { c.table.timeout = { contributeMs: 1000 } }],
    ['a contribution timeout under 100 ms', 'table.timeouts.contributeMs', />=100/, c => { c.table.timeouts.contributeMs = 5 }],
    ['a table id with a space', 'table.id', /letters, digits/, c => { c.table.id = 'friday coinche' }],
    ['a beacon scheme without a beacon', 'table.scheme', /needs a beacon/, c => { c.table.beacon = 'none' }],
    ['a beacon with a scheme that binds none', 'table.scheme', /cannot bind a beacon round/, c => { c.table.scheme = 'atout-v1' }],
    ['an unknown beacon preset', 'table.beacon', /unknown beacon preset "moonnet"/, c => { c.table.beacon = 'moonnet' }]
  ]

  test.each(cases)('%s', async (_what, field, reason, mutate) => {
    const value = await readJson(SEAT_EXAMPLE)
    mutate(value)
    const source = join(dir, 'node.json')
    const err = await parseNodeConfig(value, source).then(() => undefined, (e: unknown) => e)
    expect(err).toBeInstanceOf(NodeInputError)
    const message = (err as Error).message
    expect(message).not.toContain('\n')
    expect(message.startsWith(`${source}: field ${field}: `), message).toBe(true)
    expect(message).toMatch(reason)
  })

  test('a file that is not JSON, or not there, is named in one line', async () => {
    const broken = join(dir, 'broken.json')
    await writeFile(broken, '{ "data": "x", ')
    await expect(loadNodeConfig(broken)).rejects.toThrow(new RegExp(`^${broken}: not JSON \\(.*\\)$`))
    await expect(loadNodeConfig(join(dir, 'absent.json'))).rejects.toThrow(/^cannot read config .*absent\.json: ENOENT$/)
  })
})

describe('fairdeal node with a bad config', () => {
  interface Run { code: number, stdout: string, stderr: string }
  async function fairdeal (...args: string[]): Promise<Run> {
    return await new Promise(resolve => {
      execFile(process.execPath, [join(ROOT, 'bin/fairdeal.js'), ...args], { cwd: dir, timeout: 30_000 }, (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1
        resolve({ code, stdout, stderr })
      })
    })
  }

  beforeAll(async () => {
    // The CLI runs the build: rebuild when a source this file exercises is newer than its output.
    const sources = ['src/daemon/config.ts', 'src/daemon/daemon.ts', 'src/cli/commands/node.ts', 'src/cli/main.ts']
    let stale = false
    for (const src of sources) {
      const [s, o] = await Promise.all([stat(join(ROOT, src)), stat(join(ROOT, 'dist', src.replace(/\.ts$/, '.js'))).catch(() => undefined)])
      if (o === undefined || o.mtimeMs < s.mtimeMs) stale = true
    }
    // Type errors elsewhere in a tree under construction do not stop tsc from emitting.
    if (stale) await new Promise<void>(resolve => execFile(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: ROOT }, () => resolve()))
  })

  test('a missing field: exit 2, one line naming the file and the field', async () => {
    const value = await readJson(SEAT_EXAMPLE)
    delete value.table.seats
    const file = join(dir, 'missing-seats.json')
    await writeFile(file, JSON.stringify(value))
    const run = await fairdeal('node', '--config', file)
    expect(run.code).toBe(2)
    expect(run.stderr).toBe(`fairdeal node: ${file}: field table.seats: is missing\n`)
  })

  test('the example as shipped, on a fresh data directory: exit 2, and no identity is made behind the user\'s back', async () => {
    // Only `fairdeal init` (and the table set-up commands) create a key: a config pointing at a
    // directory without one (a typo in its path, a forgotten init) is refused in one line.
    const value = await readJson(SEAT_EXAMPLE)
    const file = join(dir, 'as-shipped.json')
    await writeFile(file, JSON.stringify({ ...value, data: 'fresh', listen: ['/ip4/127.0.0.1/tcp/0'] }))
    const run = await cliInProcess('node', '--config', file)
    expect(run.code).toBe(2)
    const lines = run.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^fairdeal node: no identity in .*fresh \(.*identity\.key does not exist\): create one with 'fairdeal init --data .*fresh', or check the path$/)
    await expect(access(join(dir, 'fresh', 'identity.key'))).rejects.toThrow()
  })

  test('the example with the identity init made: the node names its own peer id, not in the table', async () => {
    const value = await readJson(SEAT_EXAMPLE)
    const file = join(dir, 'as-shipped-init.json')
    await writeFile(file, JSON.stringify({ ...value, data: 'inited', listen: ['/ip4/127.0.0.1/tcp/0'] }))
    expect((await cliInProcess('init', '--data', join(dir, 'inited'))).code).toBe(0)
    const run = await cliInProcess('node', '--config', file)
    expect(run.code).toBe(2)
    const lines = run.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^fairdeal node: this node \(12D3KooW\w{44}, the key in .*inited\) is neither the dealer nor a seat of table friday-coinche: /)
    const created = /\((12D3KooW\w{44}),/.exec(lines[0])?.[1]
    expect(value.table.seats).not.toContain(created)
  })
})
