import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fetchBeacon, HttpCachingChain, HttpChainClient } from 'drand-client'
import { timelockDecrypt, timelockEncrypt, Buffer as TlockBuffer } from 'tlock-js'
import { pino } from 'pino'
import { steppedClock } from './helpers/beacon-group.js'
import { roundAt, roundTime, verifyBeaconEntry, type BeaconEntry, type ChainInfo } from '../src/core/beacon/index.js'
import { prepareLocalGroup, type LocalGroup } from '../src/beacon/group/local-group.js'
import { startGroupNode } from '../src/beacon/group/node.js'
import { GROUP_MAX_FRAME_BYTES, GROUP_PROTOCOL, RECORDS_FILE, ROUNDS_FILE, SHARE_FILE } from '../src/beacon/group/member.js'
import { GROUP_BLAME, GROUP_PARTIAL, hashRound, partialSign, pointHex, scalarFromHex, type BlameBody, type PartialBody } from '../src/core/beacon/index.js'
import { canonicalBytes } from '../src/core/canonical.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import { loadOrCreateIdentity } from '../src/net/identity.js'
import { createNode } from '../src/net/node.js'
import { createMessenger } from '../src/net/messenger.js'
import { nativeSigner, nativeVerifyDocument } from '../src/crypto/native-crypto.js'
import { BEACON_CONFIG_FILE, groupDir } from '../src/beacon/group/node.js'
import { resolveBeaconConfig } from '../src/beacon/presets.js'
import { parseBeaconConfig } from '../src/core/beacon/index.js'
import { checkDkgAgreement } from '../src/core/beacon/dkg-agreement.js'
import { RESULTS_FILE, TRANSCRIPT_FILE } from '../src/beacon/group/member.js'
import { verifyDataDir } from '../src/daemon/verify-data.js'
import { verifyLogPayload } from '../src/core/receipt.js'
import { logEntries } from './helpers/table-nodes.js'
import { reservePort } from './helpers/table-nodes.js'


type Member = Awaited<ReturnType<typeof startGroupNode>>
const silent = pino({ level: process.env.GROUP_TEST_LOG ?? 'silent' })

function client (relay: string, chain: ChainInfo): HttpChainClient {
  const opts = { disableBeaconVerification: false, noCache: true, chainVerificationParams: { chainHash: chain.hash, publicKey: chain.public_key } }
  return new HttpChainClient(new HttpCachingChain(relay, opts), opts)
}

async function until (what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

// Each round costs every member BLS partial signatures and pairings: a few rounds prove them
// byte-identical and drand-compatible as well as twenty did.
const ROUNDS = 6

describe('a beacon group of 5 on loopback (threshold 3): real libp2p, real HTTP, drand-client, tlock-js', () => {
  let root: string
  let group: LocalGroup
  let chain: ChainInfo
  const clock = steppedClock()
  const due = (round: number): void => { clock.set(roundTime(chain, round) + 1) }
  const members: Array<Member | undefined> = []
  const seen: Array<Map<number, number>> = []

  const start = async (i: number): Promise<Member> => {
    const m = await startGroupNode({ config: group.configs[i], dataDir: group.dataDirs[i], logger: silent, clock, tickMs: 50, ownLog: true })
    seen[i] = seen[i] ?? new Map()
    m.onRound((e, at) => { seen[i].set(e.round, at) })
    members[i] = m
    return m
  }
  const stop = async (i: number): Promise<void> => { await members[i]?.stop(); members[i] = undefined }
  const produced = (i: number, round: number): boolean => members[i]?.entry(round) !== undefined

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'fairdeal-group-'))
    group = await prepareLocalGroup({ root, freePort: reservePort, members: 5, threshold: 3, period: 1, now: clock.now(), startInMs: 1000, phaseMs: 60_000, genesisAfterMs: 1000 })
    await Promise.all([0, 1, 2, 3, 4].map(start))
    // Everyone is up: the DKG runs on its fast path (each phase ends once everything is in).
    clock.set(group.configs[0].params.dkg.start)
    const chains = await Promise.all(members.map(async m => await (m as Member).ready))
    expect(new Set(chains.map(c => c.hash)).size).toBe(1)
    chain = chains[0]
  })

  afterAll(async () => {
    for (let i = 0; i < 5; i++) await stop(i)
    await rm(root, { recursive: true, force: true })
  })

  it('the DKG gives every member the same group key; the share file is 0600; 6 rounds are byte-identical everywhere and verify with drand-client over HTTP and offline; none is served early', async () => {
    expect(chain.schemeID).toBe('bls-unchained-g1-rfc9380')
    expect(chain.metadata.beaconID).toBe('fairdeal-demo-group')
    expect(members.map(m => m?.status().chain?.public_key)).toEqual(Array(5).fill(chain.public_key))
    const mode = (await stat(join(groupDir(group.dataDirs[0], chain.metadata.beaconID), SHARE_FILE))).mode & 0o777
    expect(mode).toBe(0o600)
    for (let r = 1; r <= ROUNDS; r++) {
      due(r)
      await until(`round ${r} at every member`, () => [0, 1, 2, 3, 4].every(i => produced(i, r)))
    }
    const relays = group.urls.map(u => `${u}/${chain.hash}`)
    const info = await (await fetch(`${relays[2]}/info`)).json()
    expect(info).toEqual(chain)
    const bodies: string[][] = []
    for (const relay of relays) {
      const texts: string[] = []
      for (let r = 1; r <= ROUNDS; r++) {
        const res = await fetch(`${relay}/public/${r}`)
        expect(res.status).toBe(200)
        texts.push(await res.text())
      }
      bodies.push(texts)
    }
    for (const b of bodies) expect(b).toEqual(bodies[0])
    const entries = bodies[0].map(t => JSON.parse(t) as BeaconEntry)
    entries.forEach((e, i) => { expect(verifyBeaconEntry(chain, e, i + 1).ok).toBe(true) })
    // drand-client, unmodified, pinned to the chain: every round from one member, and one round from each of the others.
    const c0 = client(relays[0], chain)
    for (let r = 1; r <= ROUNDS; r++) expect((await fetchBeacon(c0, r)).signature).toBe(entries[r - 1].signature)
    for (const relay of relays.slice(1)) expect((await fetchBeacon(client(relay, chain), ROUNDS)).signature).toBe(entries[ROUNDS - 1].signature)
    // Never early: no member produced a round before its time, and the next round is a 404 everywhere.
    for (const s of seen) for (const [r, at] of s) expect(at).toBeGreaterThanOrEqual((chain.genesis_time + (r - 1) * chain.period) * 1000)
    const next = roundAt(chain, clock.now()) + 1
    for (const relay of relays) expect((await fetch(`${relay}/public/${next}`)).status).toBe(404)
    // Each member wrote the group as a table beacon config, which `table new --beacon FILE` parses.
    const beaconFile = join(groupDir(group.dataDirs[4], chain.metadata.beaconID), BEACON_CONFIG_FILE)
    await until('beacon.json', async () => await readFile(beaconFile, 'utf8').then(() => true, () => false))
    const beacon = parseBeaconConfig(JSON.parse(await readFile(beaconFile, 'utf8')), beaconFile)
    expect(beacon).toMatchObject({ kind: 'drand', name: chain.metadata.beaconID, chain, relays })
    expect(await resolveBeaconConfig(beaconFile)).toEqual(beacon)
    // Every member kept the others' signed results beside its transcript: all agree.
    const memberFiles = group.dataDirs.map(d => groupDir(d, chain.metadata.beaconID))
    await until('results.json with 5 results', async () => await readFile(join(memberFiles[0], RESULTS_FILE), 'utf8').then(t => JSON.parse(t).length === 5, () => false))
    const agreement = checkDkgAgreement(await Promise.all(memberFiles.map(async (d, i) => ({
      label: `member ${i + 1}`,
      result: JSON.parse(await readFile(join(d, TRANSCRIPT_FILE), 'utf8')),
      results: i === 0 ? JSON.parse(await readFile(join(d, RESULTS_FILE), 'utf8')) : undefined
    }))), nativeVerifyDocument)
    expect([agreement.agreeing, agreement.disagreements]).toEqual([[1, 2, 3, 4, 5], []])
    // drand's whole v1 API from a member, at its root and under /<chain hash>/, the same answers.
    for (const base of [group.urls[3], relays[3]]) {
      expect(await (await fetch(`${base}/info`)).json()).toEqual(chain)
      expect(await (await fetch(`${base}/chains`)).json()).toEqual([chain.hash])
      const health = await fetch(`${base}/health`)
      expect(health.status).toBe(200)
      expect(await health.json()).toEqual({ status: 200, current: ROUNDS, expected: roundAt(chain, clock.now()) })
      expect(((await (await fetch(`${base}/public/latest`)).json()) as BeaconEntry).round).toBe(ROUNDS)
      expect(await (await fetch(`${base}/public/2`)).text()).toBe(bodies[0][1])
    }
  })

  it('tlock-js encrypts to a future round of the group and decrypts once it is out', async () => {
    const relays = group.urls.map(u => `${u}/${chain.hash}`)
    const target = roundAt(chain, clock.now()) + 2
    const ciphertext = await timelockEncrypt(target, TlockBuffer.from('the river card'), client(relays[1], chain))
    // Not out yet: the relays answer 404, and tlock-js cannot decrypt.
    await expect(timelockDecrypt(ciphertext, client(relays[3], chain))).rejects.toThrow()
    due(target)
    await until(`round ${target}`, () => produced(3, target))
    expect((await timelockDecrypt(ciphertext, client(relays[3], chain))).toString()).toBe('the river card')
  })

  it('a member sending wrong partials over the network is named in a signed blame record, and the rounds still verify', async () => {
    // Member 2 is replaced by a rogue node holding its key: it sends, for the next round, a valid
    // G1 point that is not its partial (its share times another round's point), signed as member 2.
    await stop(1)
    const id = await loadOrCreateIdentity(group.dataDirs[1])
    const rogueNode = await createNode({ privateKey: id.privateKey, listen: [], members: new Set(group.peerIds), logger: silent })
    const rogue = await createMessenger(rogueNode, { protocol: GROUP_PROTOCOL, maxFrameBytes: GROUP_MAX_FRAME_BYTES, logger: silent, addressBook: group.configs[1].addresses })
    try {
      const round = roundAt(chain, clock.now()) + 1
      const share = JSON.parse(await readFile(join(groupDir(group.dataDirs[1], chain.metadata.beaconID), SHARE_FILE), 'utf8')) as { share: string }
      const wrong = pointHex(partialSign(scalarFromHex(share.share, 'share'), hashRound(round + 1000)))
      const doc = signDocument<PartialBody>(GROUP_PARTIAL, { chain: chain.hash, round, index: 2, partial: wrong }, nativeSigner(id.seed, id.peerId))
      for (const peer of group.peerIds) if (peer !== id.peerId) await rogue.send(peer, canonicalBytes(doc))
      due(round)
      await until(`round ${round} at members 1, 3, 4, 5`, () => [0, 2, 3, 4].every(i => produced(i, round)))
      for (const i of [0, 2, 3, 4]) expect(verifyBeaconEntry(chain, members[i]?.entry(round) as BeaconEntry, round).ok).toBe(true)
      // Members 1 and 3 took the three lowest indices (1, 2, 3): their recovery failed, they checked each partial and named 2.
      await until('blame records on disk', async () => {
        const text = await readFile(join(groupDir(group.dataDirs[0], chain.metadata.beaconID), RECORDS_FILE), 'utf8').catch(() => '')
        return text.includes(GROUP_BLAME)
      })
      const records = (await readFile(join(groupDir(group.dataDirs[0], chain.metadata.beaconID), RECORDS_FILE), 'utf8')).trim().split('\n').map(l => JSON.parse(l) as Signed<BlameBody>)
      const blame = records.find(r => r.body.round === round) as Signed<BlameBody>
      expect(blame.body.bad.map(b => b.index)).toEqual([2])
      expect(nativeVerifyDocument(blame)).toBe(true)
      expect(nativeVerifyDocument(blame.body.bad[0].partial)).toBe(true)
      expect(members[0]?.status().suspects).toEqual([2])
      // It goes on the next round: named again (a suspect's partials are checked on arrival), but
      // records.jsonl keeps one record of it an hour of rounds (it must not fill the disk).
      const next = round + 1
      const again = signDocument<PartialBody>(GROUP_PARTIAL, { chain: chain.hash, round: next, index: 2, partial: pointHex(partialSign(scalarFromHex(share.share, 'share'), hashRound(next + 1000))) }, nativeSigner(id.seed, id.peerId))
      for (const peer of group.peerIds) if (peer !== id.peerId) await rogue.send(peer, canonicalBytes(again))
      due(next)
      await until(`round ${next} at members 1, 3, 4, 5`, () => [0, 2, 3, 4].every(i => produced(i, next)))
      // rounds.jsonl is written after records.jsonl (one write queue): the round's line there means any record of it is on disk too.
      await until(`round ${next} on member 1's disk`, async () => (await readFile(join(groupDir(group.dataDirs[0], chain.metadata.beaconID), ROUNDS_FILE), 'utf8')).split('\n').some(l => l !== '' && (JSON.parse(l) as BeaconEntry).round === next))
      const kept = (await readFile(join(groupDir(group.dataDirs[0], chain.metadata.beaconID), RECORDS_FILE), 'utf8')).trim().split('\n').map(l => JSON.parse(l) as Signed<BlameBody>)
      expect(kept.filter(r => r.body.bad.some(b => b.index === 2)).map(r => r.body.round)).toEqual([round])
    } finally {
      await rogue.close()
      await rogueNode.stop()
    }
    await start(1)
  })

  it('two members stopped: rounds go on; three stopped: no round appears or is served, and the status says why; a restarted member catches up', async () => {
    await stop(3)
    await stop(4)
    const from = roundAt(chain, clock.now()) + 1
    for (const r of [from, from + 1]) {
      due(r)
      await until(`round ${r} at members 1-3`, () => [0, 1, 2].every(i => produced(i, r)))
    }
    await stop(2)
    const outage = from + 2
    due(outage)
    // Members 1 and 2 sign and wait: two partials of three, no round, a 404 and a status that says why.
    await until('members 1 and 2 to have signed', () => [0, 1].every(i => /2 of 3 partial signatures/.test(members[i]?.status().waiting ?? '')))
    await new Promise(resolve => setTimeout(resolve, 200))
    for (const i of [0, 1]) {
      expect(produced(i, outage)).toBe(false)
      expect((await fetch(`${group.urls[i]}/${chain.hash}/public/${outage}`)).status).toBe(404)
      expect((await fetch(`${group.urls[i]}/${chain.hash}/public/latest`)).status).toBe(200)
    }
    // Member 4, back from its data directory: it signs again, rounds resume (the one missed during
    // the outage too, late), and it fetches from its peers the rounds it missed while down.
    const back = await start(3)
    expect(back.status().latestRound).toBeLessThan(from)
    due(outage + 1)
    await until(`rounds ${outage} and ${outage + 1} at members 1 and 2, ${outage + 1} at member 4`, () =>
      [0, 1].every(i => produced(i, outage) && produced(i, outage + 1)) && produced(3, outage + 1))
    // It asks one peer per period for what it lacks (a stopped peer does not answer: it asks the next).
    const caughtUp = (): boolean => [from, from + 1, outage].every(r => produced(3, r))
    for (let r = outage + 2; r <= outage + 8 && !caughtUp(); r++) {
      due(r)
      await until(`round ${r} at members 1, 2, 4`, () => [0, 1, 3].every(i => produced(i, r)))
    }
    expect(caughtUp()).toBe(true)
    for (const r of [from, from + 1, outage, outage + 1]) expect(back.entry(r)).toEqual(members[0]?.entry(r))
    expect((await fetch(`${group.urls[3]}/${chain.hash}/public/${from}`)).status).toBe(200)
  })

  it('each member\'s DKG is one `dkg` entry of its own signed log, then its blame records; `verify --data` passes them; a member restarted after the DKG does not log it again', async () => {
    for (let i = 0; i < 5; i++) await stop(i)
    for (const [i, dir] of group.dataDirs.entries()) {
      const entries = await logEntries(dir)
      const kinds = entries.map(e => e.body.kind)
      // Members 2 and 4 (indices 1 and 3) were restarted above, from their data directories.
      expect(kinds[0], `member ${i + 1}`).toBe('dkg')
      expect(kinds.filter(k => k === 'dkg'), `member ${i + 1}`).toHaveLength(1)
      expect(kinds.slice(1).every(k => k === 'beacon-blame'), `member ${i + 1}: ${kinds.join(' ')}`).toBe(true)
      expect(entries[0].signer).toBe(group.configs[i].params.members[i])
      expect(entries[0].body.payload).toMatchObject({ member: i + 1, outcome: { groupKey: chain.public_key, groupHash: chain.groupHash } })
      expect(await verifyDataDir(dir, verifyLogPayload)).toEqual({ passed: kinds.length, failed: 0, incomplete: 0, failures: [] })
    }
    // Member 1 named the member that sent wrong partials (the blame test above), once in its log
    // (at most once a day of rounds per member named), as in records.jsonl.
    const blamed = (await logEntries(group.dataDirs[0])).filter(e => e.body.kind === 'beacon-blame')
    expect(blamed).toHaveLength(1)
    expect((blamed[0].body.payload as { record: Signed<BlameBody> }).record.body.bad.map(b => b.index)).toEqual([2])
  })
})
