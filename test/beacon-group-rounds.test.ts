import { beforeAll, describe, expect, it } from 'vitest'
import { signDocument } from '../src/core/signed.js'
import { roundTime, verifyBeaconEntry, type BeaconEntry, type ChainInfo } from '../src/core/beacon/index.js'
import type { DkgResult } from '../src/core/beacon/dkg.js'
import { GROUP_PARTIAL, RoundMachine, type PartialBody, type RoundEffect } from '../src/core/beacon/group-rounds.js'
import { hashRound, partialSign, pointHex } from '../src/core/beacon/threshold.js'
import { nativeVerifyDocument } from '../src/crypto/native-crypto.js'
import { drandClientVerifies, groupParams, memberSigners, runDkg } from './helpers/beacon-group.js'


const signers = memberSigners(5, 'rounds')
const params = groupParams(signers, 3)
let results: DkgResult[]
let chain: ChainInfo

beforeAll(() => {
  results = runDkg(params, signers, { seed: 'rounds' }).results as DkgResult[]
  chain = results[0].chainInfo
})

interface Net {
  machines: Array<RoundMachine | undefined>
  produced: Array<Map<number, BeaconEntry>>
  effects: RoundEffect[][]
  /** Member i's clock is offset by skew[i] ms. */
  skew: number[]
  up: boolean[]
  tamper?: (from: number, msg: unknown) => unknown
  step: (now: number) => void
  restart: (i: number) => void
}

function network (): Net {
  const make = (i: number, stored: BeaconEntry[] = []): RoundMachine => new RoundMachine({
    chain, members: params.members, threshold: 3, commitments: results[i].commitments, index: i + 1,
    share: results[i].share, signer: signers[i], verify: nativeVerifyDocument, stored
  })
  const net: Net = {
    machines: signers.map((_, i) => make(i)),
    produced: signers.map(() => new Map()),
    effects: signers.map(() => []),
    skew: signers.map(() => 0),
    up: signers.map(() => true),
    step: (now) => {
      const queue: Array<{ from: number, to: number, msg: unknown }> = []
      const handle = (i: number, out: RoundEffect[]): void => {
        for (const e of out) {
          net.effects[i].push(e)
          if (e.kind === 'produced') net.produced[i].set(e.entry.round, e.entry)
          if (e.kind === 'broadcast') signers.forEach((_, j) => { if (j !== i) queue.push({ from: i, to: j, msg: e.msg }) })
          if (e.kind === 'send') queue.push({ from: i, to: params.members.indexOf(e.to), msg: e.msg })
        }
      }
      net.machines.forEach((m, i) => { if (m !== undefined && net.up[i]) handle(i, m.tick(now + net.skew[i])) })
      while (queue.length > 0) {
        const { from, to, msg } = queue.shift() as { from: number, to: number, msg: unknown }
        const m = net.machines[to]
        if (m === undefined || !net.up[to]) continue
        const wire = JSON.parse(JSON.stringify(net.tamper !== undefined ? net.tamper(from, msg) : msg))
        handle(to, m.receive(signers[from].peerId, wire, now + net.skew[to]))
      }
    },
    restart: (i) => { net.machines[i] = make(i, []); net.up[i] = true }
  }
  return net
}

const at = (round: number, plusMs = 10): number => roundTime(chain, round) + plusMs

describe('group rounds in memory (5 members, threshold 3)', () => {
  it('every member recovers the same rounds, which verify offline and with drand-client; none before its time', async () => {
    const net = network()
    net.step(roundTime(chain, 1) - 1)
    expect(net.produced.every(p => p.size === 0)).toBe(true)
    expect(net.machines[0]?.status(roundTime(chain, 1) - 1).waiting).toMatch(/before genesis/)
    for (let r = 1; r <= 4; r++) net.step(at(r))
    for (let r = 1; r <= 4; r++) {
      const hexes = net.produced.map(p => JSON.stringify(p.get(r)))
      expect(new Set(hexes).size).toBe(1)
      const entry = net.produced[0].get(r) as BeaconEntry
      expect(verifyBeaconEntry(chain, entry, r).ok).toBe(true)
      expect(await drandClientVerifies(chain, entry)).toBe(true)
    }
    expect(net.produced[0].has(5)).toBe(false)
    // Partials for round 5 sent a moment early (a fast clock) are buffered, not used before round 5 is due.
    net.skew[1] = 900
    net.skew[2] = 900
    net.step(roundTime(chain, 5) - 500)
    expect(net.produced[0].has(5)).toBe(false)
    expect(net.machines[0]?.status(roundTime(chain, 5) - 500).latestRound).toBe(4)
    net.step(at(5))
    expect(net.produced[0].has(5)).toBe(true)
  })

  it('two members down: rounds go on; three down: no round, and the status says why', () => {
    const net = network()
    net.up[3] = false
    net.up[4] = false
    net.step(at(1))
    net.step(at(2))
    expect(net.produced.slice(0, 3).every(p => p.has(1) && p.has(2))).toBe(true)
    net.up[2] = false
    net.step(at(3))
    expect(net.produced.every(p => !p.has(3))).toBe(true)
    expect(net.machines[0]?.status(at(3)).waiting).toMatch(/round 3: 2 of 3 partial signatures/)
    expect(net.machines[0]?.entry(3)).toBeUndefined()
  })

  it('a restarted member catches up on the rounds it missed, from its peers', () => {
    const net = network()
    net.up[4] = false
    for (let r = 1; r <= 5; r++) net.step(at(r))
    net.restart(4)
    net.step(at(6))
    net.step(at(7))
    const m = net.machines[4] as RoundMachine
    for (let r = 1; r <= 7; r++) expect(m.entry(r)).toEqual(net.produced[0].get(r))
    expect(net.effects[4].some(e => e.kind === 'produced' && e.via === 'catch-up')).toBe(true)
  })

  it('rounds missed while fewer than t were up are made afterwards, oldest first, one per catch-up period; every round of the chain is there in the end', async () => {
    const net = network()
    for (let r = 1; r <= 3; r++) net.step(at(r))
    // Three of five down for rounds 4 to 13 (more than the signing window of 8): no round is made.
    for (const i of [2, 3, 4]) net.up[i] = false
    for (let r = 4; r <= 13; r++) net.step(at(r))
    expect(net.produced[0].has(4)).toBe(false)
    // Back at round 14 (restarted from their stores): rounds 7 to 14, in the window, come at once;
    // 4 to 6 at the catch-up pace (half the 1 s period by default), oldest first; later rounds on time.
    for (const i of [2, 3, 4]) { net.machines[i] = new RoundMachine({ chain, members: params.members, threshold: 3, commitments: results[i].commitments, index: i + 1, share: results[i].share, signer: signers[i], verify: nativeVerifyDocument, stored: [...net.produced[i].values()] }); net.up[i] = true }
    const madeAt = new Map<number, number>()
    const current = 16
    for (let t = roundTime(chain, 14); t <= roundTime(chain, current); t += 250) {
      net.step(t)
      for (const r of net.produced[0].keys()) if (!madeAt.has(r)) madeAt.set(r, t)
    }
    for (let r = 1; r <= current; r++) {
      const entries = net.produced.map(p => JSON.stringify(p.get(r)))
      expect(new Set(entries).size, `round ${r}`).toBe(1)
      expect(verifyBeaconEntry(chain, net.produced[0].get(r) as BeaconEntry, r).ok, `round ${r}`).toBe(true)
    }
    expect(await drandClientVerifies(chain, net.produced[0].get(5) as BeaconEntry)).toBe(true)
    const gap = (a: number, b: number): number => (madeAt.get(b) as number) - (madeAt.get(a) as number)
    expect(gap(4, 5)).toBeGreaterThanOrEqual(500)
    expect(gap(5, 6)).toBeGreaterThanOrEqual(500)
    for (let r = 15; r <= current; r++) expect((madeAt.get(r) as number) - roundTime(chain, r), `round ${r}`).toBeLessThan(250)
  })

  it('a member sending wrong partials is named in a signed blame record, and rounds still verify', () => {
    const net = network()
    net.tamper = (from, msg) => {
      const m = msg as { type: string, body: PartialBody }
      if (from !== 1 || m.type !== GROUP_PARTIAL) return msg
      // Member 2 signs another round's point: a valid G1 point, a wrong partial.
      const wrong = pointHex(partialSign(BigInt('0x' + results[1].share), hashRound(m.body.round + 1000)))
      return signDocument<PartialBody>(GROUP_PARTIAL, { ...m.body, partial: wrong }, signers[1])
    }
    net.step(at(1))
    net.step(at(2))
    for (const i of [0, 2, 3, 4]) {
      expect(verifyBeaconEntry(chain, net.produced[i].get(1) as BeaconEntry, 1).ok).toBe(true)
      expect(net.produced[i].get(2)).toEqual(net.produced[0].get(2))
      const blames = net.effects[i].filter(e => e.kind === 'blame')
      expect(blames.length).toBeGreaterThan(0)
      for (const b of blames) {
        if (b.kind !== 'blame') continue
        expect(b.record.body.bad.map(x => x.index)).toEqual([2])
        expect(nativeVerifyDocument(b.record)).toBe(true)
        expect(nativeVerifyDocument(b.record.body.bad[0].partial)).toBe(true) // the evidence is member 2's own signature
      }
      expect(net.machines[i]?.status(at(2)).suspects).toEqual([2])
    }
    // Nobody honest is blamed.
    expect(net.effects.flat().filter(e => e.kind === 'blame').every(e => e.kind === 'blame' && e.record.body.bad.every(b => b.index === 2))).toBe(true)
  })

  it('a wrong partial under a bad signature: dropped, rounds still verify, and no blame record names it without its signature as evidence', () => {
    const net = network()
    net.tamper = (from, msg) => {
      const m = msg as { type: string, body: PartialBody, sig: string }
      if (from !== 1 || m.type !== GROUP_PARTIAL) return msg
      // Member 2 (the connection proves it) sends a wrong partial whose signature is not its own.
      const wrong = pointHex(partialSign(BigInt('0x' + results[1].share), hashRound(m.body.round + 1000)))
      return { ...m, body: { ...m.body, partial: wrong }, sig: '00'.repeat(64) }
    }
    net.step(at(1))
    net.step(at(2))
    for (const i of [0, 2, 3, 4]) {
      expect(verifyBeaconEntry(chain, net.produced[i].get(1) as BeaconEntry, 1).ok).toBe(true)
      expect(verifyBeaconEntry(chain, net.produced[i].get(2) as BeaconEntry, 2).ok).toBe(true)
    }
    // A blame record is signed by an honest member and logged: each partial in it must be its
    // sender's signature (docs/log.md, beacon-blame-partial), or the record fails its own log.
    for (const e of net.effects.flat()) {
      if (e.kind !== 'blame') continue
      for (const b of e.record.body.bad) expect(nativeVerifyDocument(b.partial)).toBe(true)
    }
  })

  it('a sync request over a huge range is answered from the rounds held, without walking the range (a member cannot stall another with one frame)', () => {
    const net = network()
    net.step(at(1))
    net.step(at(2))
    const m = net.machines[0] as RoundMachine
    const far = 50_000_000
    const t0 = performance.now()
    const out = m.receive(signers[1].peerId, { type: 'beacon-group/sync', chain: chain.hash, from: 1, to: Number.MAX_SAFE_INTEGER }, at(far))
    const ms = performance.now() - t0
    const reply = out.find(e => e.kind === 'send')
    expect(reply?.kind === 'send' && (reply.msg as { entries: BeaconEntry[] }).entries.map(e => e.round)).toEqual([1, 2])
    expect(ms).toBeLessThan(100)
  })

  it('a member whose clock is a period behind does not stop the group', () => {
    const net = network()
    net.skew[0] = -900
    net.skew[1] = -900
    net.step(at(1, 100))
    // Members 3, 4, 5 are on time: round 1 is out for them; 1 and 2 see it once their clocks reach it.
    expect(net.produced.slice(2).every(p => p.has(1))).toBe(true)
    expect(net.produced[0].has(1)).toBe(false)
    net.step(at(2, 100))
    expect(net.produced[0].has(1)).toBe(true)
    expect(net.produced[4].has(2)).toBe(true)
  })

  it('hostile frames are refused with a reason and change nothing', () => {
    const net = network()
    const m = net.machines[0] as RoundMachine
    const now = at(1)
    const doc = signDocument<PartialBody>(GROUP_PARTIAL, { chain: chain.hash, round: 1, index: 2, partial: pointHex(partialSign(3n, hashRound(1))) }, signers[1])
    const cases: Array<[string, unknown]> = [
      ['12D3KooWJWoaqZhDaoEFshF7Rh1bpY9ohihFhzcW6d69Lr2NASuq', doc],
      [signers[2].peerId, doc],
      [signers[1].peerId, { ...doc, body: { ...doc.body, round: 50 } }],
      [signers[1].peerId, { ...doc, body: { ...doc.body, chain: '00'.repeat(32) } }],
      [signers[1].peerId, { type: 'beacon-group/rounds', chain: chain.hash, entries: [{ round: 1, randomness: '00'.repeat(32), signature: '11'.repeat(48) }] }],
      [signers[1].peerId, 'garbage']
    ]
    const reasons = cases.map(([from, msg]) => m.receive(from, msg, now)).map(out => out.find(e => e.kind === 'rejected'))
    expect(reasons.map(r => r?.kind === 'rejected' ? r.reason : '')).toEqual([
      'not a member of the group',
      expect.stringMatching(/malformed or not signed by its sender/),
      expect.stringMatching(/outside the window/),
      'partial: another chain',
      expect.stringMatching(/^rounds: /),
      'not a JSON object'
    ])
    expect(m.latestRound).toBe(0)
  })
})
