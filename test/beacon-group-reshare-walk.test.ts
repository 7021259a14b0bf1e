// The CLI walk of a beacon group in OS processes (docs/beacon-group.md "A group by invites",
// "Resharing"): a group of five made by invites (`beacon group new`, four `join`s, five `fairdeal
// node`s, separate data directories) makes rounds, which drand-client verifies from each member's
// URL, and a member joining again once the group is complete gets it; then member 1 runs `beacon group reshare --members 7 --threshold 4` and
// restarts its node, which gathers; the four other members join with their invites (keeping their
// settings), two newcomers join, member 3 loses its share, and every node restarts on its new
// node.json. The public key and the chain hash are the same after, the real drand-client verifies a
// round of the old group and one of the new from each of the seven members' URLs (under
// /{chainhash}/), and a tlock ciphertext sealed to the chain before the reshare opens after it.
import { afterAll, expect, it } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { openSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { fetchBeacon, HttpCachingChain, HttpChainClient } from 'drand-client'
import { parseChainInfo, type ChainInfo } from '../src/core/beacon/index.js'
import { STATUS_PATH, SHARE_FILE, type GroupMemberStatus } from '../src/beacon/group/member.js'
import { timelockDecryptWithTlockJs, timelockEncryptText } from '../src/beacon/tlock.js'
import { requireBuild } from './helpers/node-process.js'
import { reservePort } from './helpers/table-nodes.js'
import { untilValue } from './helpers/beacon-group.js'

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'fairdeal.js')
const roots: string[] = []
afterAll(async () => { for (const r of roots) await rm(r, { recursive: true, force: true }) })


it('five processes by invites, reshared to seven (threshold 4) through the CLI: same key and chain hash, drand-client verifies rounds before and after from all seven URLs, a tlock sealed before opens after', async () => {
  requireBuild()
  const root = await mkdtemp(join(tmpdir(), 'fairdeal-reshare-walk-'))
  roots.push(root)
  // This worker's own ports, one at a time: libp2p and HTTP for each of the seven.
  const ports: number[] = []
  for (let i = 0; i < 14; i++) ports.push(await reservePort())
  const p2p = (m: number): number => ports[2 * (m - 1)]
  const http = (m: number): number => ports[2 * (m - 1) + 1]
  const urls = [1, 2, 3, 4, 5, 6, 7].map(m => `http://127.0.0.1:${http(m)}`)
  const nodes = new Map<number, ChildProcess>()
  const run = async (args: string[]): Promise<{ code: number | null, out: string, err: string }> => await new Promise(resolve => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c })
    child.stderr.setEncoding('utf8').on('data', (c: string) => { err += c })
    child.once('exit', code => { resolve({ code, out, err }) })
  })
  const start = (m: number): void => {
    const debug = process.env.RESHARE_WALK_LOGS
    const out = debug !== undefined ? openSync(join(debug, `m${m}.log`), 'a') : 'ignore'
    nodes.set(m, spawn(process.execPath, [BIN, 'node', '--config', join(root, `m${m}`, 'node.json')], { cwd: root, stdio: ['ignore', out, out], env: { ...process.env, FAIRDEAL_LOG_LEVEL: debug !== undefined ? 'debug' : 'warn' } }))
  }
  const stop = async (m: number): Promise<void> => {
    const c = nodes.get(m)
    nodes.delete(m)
    if (c === undefined || c.exitCode !== null) return
    const exited = new Promise(resolve => c.once('exit', resolve))
    c.kill('SIGTERM')
    await exited
  }
  const invitesOf = (out: string, n: number): string[] => Array.from({ length: n - 1 }, (_, k) => (out.split('\n').find(l => l.startsWith(`member ${k + 2}: `)) as string).slice(`member ${k + 2}: `.length))
  const status = async (m: number): Promise<GroupMemberStatus | undefined> => await fetch(`${urls[m - 1]}${STATUS_PATH}`).then(async r => r.ok ? await r.json() as GroupMemberStatus : undefined, () => undefined)
  const client = (url: string, chain: ChainInfo): HttpChainClient => {
    const opts = { disableBeaconVerification: false, noCache: true, chainVerificationParams: { chainHash: chain.hash, publicKey: chain.public_key } }
    return new HttpChainClient(new HttpCachingChain(`${url}/${chain.hash}`, opts), opts)
  }
  try {
    // 1. A group of five by invites.
    const made = await run(['beacon', 'group', 'new', '--members', '5', '--data', 'm1', '--listen', `/ip4/127.0.0.1/tcp/${p2p(1)}`, '--http-port', String(http(1)), '--start-in', '15', '--period', '2', '--phase-ms', '5000', '--id', 'friends'])
    expect(made.code, made.err).toBe(0)
    start(1)
    const joins = await Promise.all(invitesOf(made.out, 5).map(async (inv, k) => await run(['beacon', 'group', 'join', inv, '--data', `m${k + 2}`, '--listen', `/ip4/127.0.0.1/tcp/${p2p(k + 2)}`, '--http-port', String(http(k + 2))])))
    for (const j of joins) expect(j.code, j.err).toBe(0)
    for (const m of [2, 3, 4, 5]) start(m)
    // (The DKG starts 10 s after the last join: time enough for five nodes to start on a loaded machine.)
    let firstSeen: Array<GroupMemberStatus | undefined> = []
    const before = await untilValue('the first group\'s rounds at all five', async () => {
      const s = firstSeen = await Promise.all([1, 2, 3, 4, 5].map(status))
      return s.every(x => x !== undefined && x.latestRound > 0) ? s as GroupMemberStatus[] : undefined
    }, 60_000, 200).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(firstSeen.map(x => x === undefined ? 'down' : { phase: x.phase, dkg: x.dkgPhase, held: x.dkgHeld, latest: x.latestRound, waiting: x.waiting, failure: x.failure }))}`)
    })
    const chain = parseChainInfo(before[0].chain)
    for (const s of before) expect(s.chain).toEqual(chain)
    // drand-client verifies the first group's rounds from each member's URL.
    const first = Math.min(...before.map(s => s.latestRound))
    expect(new Set(await Promise.all(urls.slice(0, 5).map(async u => (await fetchBeacon(client(u, chain), first)).signature))).size).toBe(1)
    // A member that lost its answer (it hung up, its node.json was lost) asks again: the creator's
    // member node, past gathering, still gives it the final group.
    const again = await run(['beacon', 'group', 'join', invitesOf(made.out, 5)[0], '--data', 'm2', '--listen', `/ip4/127.0.0.1/tcp/${p2p(2)}`, '--http-port', String(http(2))])
    expect(again.code, again.err).toBe(0)
    expect(again.out).toMatch(/^member 2 of beacon group friends \(5 members, threshold 3\): wrote /)

    // 2. The reshare: member 1 prints six invites and restarts its node, which gathers them. It starts
    // in 30 s: the six joins, two new nodes and five restarts must all be up before its deal phase
    // ends, and with the whole suite beside them 12 s was missed (a member left out). Its
    // phases are 8 s: seven nodes starting together on a loaded machine (the whole suite beside)
    // deliver their first documents seconds late, and the deal phase waits for its deadline anyway
    // (member 3, its share lost, deals nothing).
    const reshare = await run(['beacon', 'group', 'reshare', '--config', join('m1', 'node.json'), '--members', '7', '--threshold', '4', '--start-in', '30', '--phase-ms', '8000'])
    expect(reshare.code, reshare.err).toBe(0)
    expect(reshare.out).toMatch(/^reshare of beacon group friends \(chain [0-9a-f]{16}…, 5 members, threshold 3\) to 7 members, threshold 4; this node is member 1/)
    await stop(1)
    start(1)
    const invites = invitesOf(reshare.out, 7)
    // The old members join with their current settings; the newcomers give theirs.
    const rejoins = await Promise.all(invites.map(async (inv, k) => {
      const m = k + 2
      return await run(['beacon', 'group', 'join', inv, '--data', `m${m}`, ...(m <= 5 ? [] : ['--listen', `/ip4/127.0.0.1/tcp/${p2p(m)}`, '--http-port', String(http(m))])])
    }))
    for (const j of rejoins) {
      expect(j.code, j.err).toBe(0)
      expect(j.out).toMatch(/the new group signs from round \d+/)
    }
    const transition = Number(/signs from round (\d+)/.exec(rejoins[0].out)?.[1])
    // Sealed to the chain before the reshare runs, to a round the new group will sign.
    const sealed = await timelockEncryptText('sealed before the reshare', chain, transition + 1)
    // Member 3 loses its share (a wiped disk): it comes back through the reshare only.
    await stop(3)
    await rm(join(root, 'm3', 'beacon-group', 'friends', SHARE_FILE))
    // The newcomers and the old members restarted together, well before the reshare deals
    // (--start-in after the last join) however loaded the machine: the rounds due meanwhile are
    // made once they are back (docs/beacon-group.md "Rounds").
    start(6)
    start(7)
    await Promise.all([2, 3, 4, 5].map(stop))
    for (const m of [2, 3, 4, 5]) start(m)

    // 3. Every member done, the new group signing: a round after the transition at all seven.
    let last: Array<GroupMemberStatus | undefined> = []
    const after = await untilValue('the new group\'s rounds at all seven', async () => {
      const s = last = await Promise.all([1, 2, 3, 4, 5, 6, 7].map(status))
      return s.every(x => x !== undefined && x.reshare?.state === 'done' && x.latestRound >= transition + 1) ? s as GroupMemberStatus[] : undefined
    }, 90_000, 200).catch((err: Error) => {
      // Which member is behind, and why (its status says).
      throw new Error(`${err.message}: ${JSON.stringify(last.map(x => x === undefined ? 'down' : { reshare: x.reshare, dkg: x.dkgPhase, latest: x.latestRound, waiting: x.waiting, failure: x.failure }))}`)
    })
    for (const [k, s] of after.entries()) {
      expect(s.chain).toEqual(chain)
      expect(s).toMatchObject({ index: k + 1, members: 7, threshold: 4 })
    }
    // drand-client, unmodified, from every member's URL: the old group's last round and the new group's first.
    for (const url of urls) {
      const c = client(url, chain)
      const old = await untilValue(`round ${transition - 1} at ${url}`, async () => await fetchBeacon(c, transition - 1).catch(() => undefined), 20_000, 200)
      const next = await fetchBeacon(c, transition + 1)
      expect(old.round).toBe(transition - 1)
      expect(next.round).toBe(transition + 1)
      expect(await (await fetch(`${url}/${chain.hash}/info`)).json()).toEqual(chain)
    }
    const opening = await fetchBeacon(client(urls[6], chain), transition + 1)
    expect(new TextDecoder().decode(await timelockDecryptWithTlockJs(sealed, chain, opening))).toBe('sealed before the reshare')
  } finally {
    await Promise.all([...nodes.keys()].map(stop))
  }
}, 180_000)
