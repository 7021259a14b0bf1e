// Heads on one long-lived witness stream per peer (`/fairdeal/witness/1.1.0`), real libp2p on
// 127.0.0.1 and real LevelDB: every head is cosigned and checked as before, on one stream; a witness
// that speaks only 1.0.0 still witnesses every head; a kept stream that died is replaced; heads
// appended within a member's interval go as one, the newest, and closing sends what still waits.
import { afterEach, describe, expect, it } from 'vitest'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { Level } from 'level'
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys'
import type { Libp2p } from '@libp2p/interface'
import { createNode } from '../src/net/node.js'
import { createHeadAnnouncer, registerWitness, WITNESS_PROTOCOL, WITNESS_STREAM_PROTOCOL } from '../src/net/witness.js'
import { WitnessStore } from '../src/store/witness-store.js'
import { checkWitnessLine } from '../src/core/log/witness.js'
import { buildLog, OWNER, SEAT } from './helpers/log-fixtures.js'

const logger = pino({ level: 'silent' })
const cleanup: Array<() => Promise<void>> = []
afterEach(async () => { for (const c of cleanup.splice(0).reverse()) await c().catch(() => {}) })

/** The node of a fixture signer (seed n: log-fixtures' seededSigner). */
async function nodeOf (seed: number, members: Set<string>): Promise<Libp2p> {
  const node = await createNode({ privateKey: await generateKeyPairFromSeed('Ed25519', new Uint8Array(32).fill(seed)), listen: ['/ip4/127.0.0.1/tcp/0'], members, logger })
  cleanup.push(async () => { await node.stop() })
  return node
}

/** OWNER's node announcing to SEAT's node, which witnesses on real LevelDB. */
async function pair (intervalMs = 0): Promise<{ owner: Libp2p, witness: Libp2p, announce: (headLine: string) => Promise<string>, announcer: ReturnType<typeof createHeadAnnouncer>, cosigned: string[], store: WitnessStore }> {
  const members = new Set([OWNER.peerId, SEAT.peerId])
  const owner = await nodeOf(1, members)
  const witness = await nodeOf(2, members)
  expect(owner.peerId.toString()).toBe(OWNER.peerId)
  const dir = await mkdtemp(join(tmpdir(), 'fairdeal-witness-stream-'))
  const db = new Level<string, any>(dir)
  cleanup.push(async () => { await rm(dir, { recursive: true, force: true }) }, async () => { await db.close() })
  const store = new WitnessStore(db, SEAT)
  cleanup.push(await registerWitness(witness, store, { members }))
  await owner.dial(witness.getMultiaddrs()[0])
  const waiting = new Map<string, (line: string) => void>()
  const cosigned: string[] = []
  const announcer = createHeadAnnouncer(owner, {
    self: OWNER.peerId,
    members,
    addressBook: new Map(),
    intervalMs,
    onCosigned: (_peer, line) => { const c = checkWitnessLine(line); if (c.ok) { cosigned.push(c.statement.headLine); waiting.get(c.statement.headLine)?.(line) } }
  })
  cleanup.push(announcer.close)
  const announce = async (headLine: string): Promise<string> => await new Promise(resolve => {
    waiting.set(headLine, resolve)
    announcer.announce(headLine)
  })
  return { owner, witness, announce, announcer, cosigned, store }
}

const streamsTo = (from: Libp2p, to: Libp2p, protocol: string): number =>
  from.getConnections(to.peerId).flatMap(c => c.streams).filter(s => s.protocol === protocol).length

describe('heads on a long-lived witness stream', () => {
  it('cosigns each head, checked, on one stream that stays open', async () => {
    const { owner, witness, announce } = await pair()
    for (let n = 1; n <= 3; n++) {
      const headLine = buildLog(n)[0]
      const c = checkWitnessLine(await announce(headLine))
      expect(c.ok && c.statement.witness === SEAT.peerId && c.statement.headLine === headLine && c.statement.seq === n - 1).toBe(true)
      expect(streamsTo(owner, witness, WITNESS_STREAM_PROTOCOL)).toBe(1)
    }
    expect(streamsTo(owner, witness, WITNESS_PROTOCOL)).toBe(0)
  })

  it('a witness that speaks only 1.0.0 is sent every head, one stream each', async () => {
    const { owner, witness, announce } = await pair()
    await witness.unhandle(WITNESS_STREAM_PROTOCOL)
    for (let n = 1; n <= 2; n++) {
      const headLine = buildLog(n)[0]
      const c = checkWitnessLine(await announce(headLine))
      expect(c.ok && c.statement.headLine === headLine).toBe(true)
    }
    expect(streamsTo(owner, witness, WITNESS_STREAM_PROTOCOL)).toBe(0)
  })

  it('a kept stream the witness closed is replaced, and the head still witnessed', async () => {
    const { owner, witness, announce } = await pair()
    await announce(buildLog(1)[0])
    const [inbound] = witness.getConnections(owner.peerId).flatMap(c => c.streams).filter(s => s.protocol === WITNESS_STREAM_PROTOCOL)
    inbound.abort(new Error('test: the witness drops the stream'))
    const headLine = buildLog(2)[0]
    const c = checkWitnessLine(await announce(headLine))
    expect(c.ok && c.statement.headLine === headLine).toBe(true)
    expect(streamsTo(owner, witness, WITNESS_STREAM_PROTOCOL)).toBe(1)
  })

  it('heads appended within the interval go as one, the newest, once it is over; closing sends the one still waiting', async () => {
    const { announce, announcer, cosigned, store } = await pair(300)
    const heads = [1, 2, 3, 4, 5].map(n => buildLog(n)[0])
    const t0 = performance.now()
    await announce(heads[0]) // the first goes at once
    const last = announce(heads[3])
    announcer.announce(heads[1])
    announcer.announce(heads[2])
    announcer.announce(heads[3])
    await last
    expect(performance.now() - t0).toBeGreaterThanOrEqual(300)
    expect(cosigned).toEqual([heads[0], heads[3]])
    // Within the next interval: waiting, until the announcer closes.
    announcer.announce(heads[4])
    await announcer.close()
    expect(cosigned).toEqual([heads[0], heads[3], heads[4]])
    expect(checkWitnessLine((await store.heldFor(OWNER.peerId))[0])).toMatchObject({ ok: true, statement: { headLine: heads[4] } })
  })
})
