// Blame records of the old group during a reshare (docs/beacon-group.md "The DKG in the log": they
// stay in records.jsonl). A 2/2 group on loopback, on a stepped clock, reshared to 3/2; once the
// reshare is done and before its transition, the old group still signs, and a rogue node holding
// member 2's key sends member 1 a wrong partial of the old group.
import { afterAll, expect, it } from 'vitest'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { prepareLocalReshare } from '../src/beacon/group/local-group.js'
import { startGroupNode } from '../src/beacon/group/node.js'
import { GROUP_MAX_FRAME_BYTES, GROUP_PROTOCOL, RECORDS_FILE } from '../src/beacon/group/member.js'
import { GROUP_PARTIAL, roundTime, type BlameBody, type PartialBody } from '../src/core/beacon/index.js'
import { hashRound, partialSign, pointHex, scalarFromHex } from '../src/core/beacon/threshold.js'
import { loadOrCreateIdentity } from '../src/net/identity.js'
import { createNode } from '../src/net/node.js'
import { createMessenger } from '../src/net/messenger.js'
import { nativeSigner, nativeVerifyDocument } from '../src/crypto/native-crypto.js'
import { canonicalBytes } from '../src/core/canonical.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import { steppedClock } from './helpers/beacon-group.js'
import { until } from './helpers/until.js'
import { groupOfTwo } from './helpers/group-of-two.js'
import { reservePort } from './helpers/table-nodes.js'

const silent = pino({ level: process.env.GROUP_TEST_LOG ?? 'silent' })
const clock = steppedClock()
let root: string

afterAll(async () => { await rm(root, { recursive: true, force: true }) })


it('a wrong partial of the old group, after the reshare is done and before its transition, is named in a blame record kept in records.jsonl', async () => {
  root = await mkdtemp(join(tmpdir(), 'fairdeal-reshare-blame-'))
  const { group: g, dirs, chain, shares, old } = await groupOfTwo(root, clock, silent)
  const oldShare2 = shares[1]
  const start = roundTime(chain, 5)
  const T = 20
  const reshare = await prepareLocalReshare({ freePort: reservePort, root, group: g, old, newcomers: 1, threshold: 2, start, phaseMs: 1000, transition: T })
  const nodes = await Promise.all([0, 1, 2].map(async i => await startGroupNode({ config: reshare.configs[i], dataDir: reshare.dataDirs[i], logger: silent, clock, tickMs: 20 })))
  const stopped = new Set<number>()
  try {
    clock.set(start)
    await until(() => nodes.every(n => n.status().reshare?.state === 'done'), 'the reshare done everywhere', 20_000)
    // Member 2 is replaced by a rogue node holding its key: for a round the old group still signs,
    // it sends member 1 a valid G1 point that is not its partial, signed as old member 2.
    await nodes[1].stop()
    stopped.add(1)
    const id = await loadOrCreateIdentity(g.dataDirs[1])
    const rogueNode = await createNode({ privateKey: id.privateKey, listen: [], members: new Set(reshare.peerIds), logger: silent })
    const rogue = await createMessenger(rogueNode, { protocol: GROUP_PROTOCOL, maxFrameBytes: GROUP_MAX_FRAME_BYTES, logger: silent, addressBook: reshare.configs[1].addresses })
    const round = 12
    try {
      const wrong = pointHex(partialSign(scalarFromHex(oldShare2, 'share'), hashRound(round + 1000)))
      const doc = signDocument<PartialBody>(GROUP_PARTIAL, { chain: chain.hash, round, index: 2, partial: wrong }, nativeSigner(id.seed, id.peerId))
      clock.set(roundTime(chain, round) + 1)
      await rogue.send(reshare.peerIds[0], canonicalBytes(doc))
      const records = async (): Promise<Array<Signed<BlameBody>>> => (await readFile(join(dirs[0], RECORDS_FILE), 'utf8').catch(() => '')).trim().split('\n').filter(l => l !== '').map(l => JSON.parse(l) as Signed<BlameBody>)
      await until(async () => (await records()).some(r => r.body.round === round), 'a blame record of the round in records.jsonl', 5000)
      const blame = (await records()).find(r => r.body.round === round) as Signed<BlameBody>
      expect(blame.body.bad.map(b => b.index)).toEqual([2])
      expect(nativeVerifyDocument(blame)).toBe(true)
      expect(nativeVerifyDocument(blame.body.bad[0].partial)).toBe(true)
    } finally {
      await rogue.close()
      await rogueNode.stop()
    }
  } finally {
    for (const [i, n] of nodes.entries()) if (!stopped.has(i)) await n.stop()
  }
})
