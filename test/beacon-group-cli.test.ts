import { describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { fetchBeacon, HttpCachingChain, HttpChainClient } from 'drand-client'
import { requireBuild } from './helpers/node-process.js'

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'fairdeal.js')

interface Info { hash: string, public_key: string, schemeID: string }

// Both spawn whole demos: seconds on an idle machine, minutes when every core is busy (process
// start-up alone then takes tens of seconds), hence the long timeouts.
describe('fairdeal beacon demo and demo --beacon group (OS processes, loopback)', () => {
  it('beacon demo --members 3 --threshold 2 --processes --json: an independent drand-client verifies rounds from every member\'s URL', async () => {
    requireBuild()
    const child = spawn(process.execPath, [BIN, 'beacon', 'demo', '--members', '3', '--threshold', '2', '--processes', '--period', '1', '--duration', '4', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stderr.setEncoding('utf8').on('data', (c: string) => { err += c })
    const exited = new Promise<number | null>(resolve => child.once('exit', resolve))
    const firstLine = await new Promise<string>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        out += c
        if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')))
      })
      void exited.then(code => { reject(new Error(`demo exited (${String(code)}) before its first line: ${err}`)) })
    })
    const { info, relays } = JSON.parse(firstLine) as { info: Info, relays: string[] }
    expect(info.schemeID).toBe('bls-unchained-g1-rfc9380')
    expect(relays).toHaveLength(3)
    const round = await (await fetch(`${relays[0]}/public/latest`)).json() as { round: number }
    const opts = { disableBeaconVerification: false, noCache: true, chainVerificationParams: { chainHash: info.hash, publicKey: info.public_key } }
    const signatures = await Promise.all(relays.map(async relay => {
      expect(relay.endsWith(`/${info.hash}`)).toBe(true)
      const beacon = await fetchBeacon(new HttpChainClient(new HttpCachingChain(relay, opts), opts), round.round)
      return beacon.signature
    }))
    expect(new Set(signatures).size).toBe(1)
    expect(await exited).toBe(0)
    const last = JSON.parse(out.trim().split('\n').at(-1) as string)
    expect(last).toMatchObject({ members: 3, threshold: 2 })
    expect(Object.keys(last).sort()).toEqual(['dkgMs', 'members', 'missed', 'roundLatencyMs', 'rounds', 'threshold'])
    expect(last.rounds).toBeGreaterThan(0)
    expect(last.roundLatencyMs.p50).toBeGreaterThanOrEqual(0)
  }, 420_000)

  // duo: the table's two nodes are the group (2 of 2); a larger group's thresholds are proven in
  // test/beacon-group-net.test.ts. Half the nodes, a quarter of the DKG's dealings.
  it('demo --beacon group --game duo: the table\'s nodes run a 2-of-2 group and play a hand bound to its round, whose receipts verify', async () => {
    requireBuild()
    const child = spawn(process.execPath, [BIN, 'demo', '--beacon', 'group', '--game', 'duo', '--hands', '1', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c })
    child.stderr.setEncoding('utf8').on('data', (c: string) => { err += c })
    const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
    expect(code, err).toBe(0)
    const result = JSON.parse(out.trim()) as { hands: number, aborts: number, seats: Array<{ verified: number }>, failures: string[] }
    expect(result).toMatchObject({ hands: 1, aborts: 0, failures: [] })
    expect(result.seats.every(s => s.verified === 1)).toBe(true)
  }, 420_000)
})
