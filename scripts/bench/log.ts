// Receipt logs: verification speed of a 100,000-entry log of synthetic entries against the Ed25519
// bound, with memory before/after; durable (synced) appends per second against the disk's own fsync
// rate; then a LevelDB log of real receipts (hands played by the state machines in memory), checked
// as 'fairdeal verify' checks them, against the same bound divided by the signatures a real entry
// carries; and a few beacon-bound receipts, where one BLS check outweighs all the Ed25519 ones.
// FAIRDEAL_BENCH_LOG_ENTRIES changes the synthetic log's length, FAIRDEAL_BENCH_LOG_RECEIPTS the
// number of real receipts.
import { createWriteStream } from 'node:fs'
import { mkdtemp, open, readFile, rm, stat } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { signerFromSeed } from '../../src/core/identity.js'
import { forgetVerifiedBeaconSignatures, parseChainInfo, roundTime, verifyBoundBeacon, type BeaconEntry } from '../../src/core/beacon/index.js'
import type { Receipt } from '../../src/core/hand/messages.js'
import { verifyLogPayload } from '../../src/core/receipt.js'
import { signDocument, verifyDocument, type Signed } from '../../src/core/signed.js'
import { GENESIS_PREV, makeEntry, makeHead } from '../../src/core/log/format.js'
import { verifyLog, inThreadChecker, type LineChecker, type LogVerdict } from '../../src/core/log/index.js'
import { nativeSigner, nativeVerifyDocument } from '../../src/crypto/native-crypto.js'
import { createCheckPool, defaultWorkerCount } from '../../src/store/check-pool.js'
import { readJsonLines } from '../../src/store/jsonl.js'
import { openLog } from '../../src/store/log.js'
import { countSignatures, generateReceipts, memoryHands } from './lib/memory-hands.js'

/** Signatures one bench entry carries: the owner's on the entry, the seat's on its payload. */
const SIGNATURES_PER_ENTRY = 2

/** The payload check the bench's workers import from this module: one signed document. */
export function verifyBenchPayload (_kind: string, payload: unknown, options?: { verifyDoc?: (doc: Signed<unknown>) => boolean }): string[] {
  return (options?.verifyDoc ?? verifyDocument)(payload as Signed<unknown>) ? [] : ['payload signature does not verify']
}

const mb = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MB`
const fmt = (n: number): string => Math.round(n).toLocaleString('en')

function perSecond (fn: () => void, ms: number): number {
  const start = performance.now()
  let n = 0
  while (performance.now() - start < ms) { fn(); n++ }
  return n / ((performance.now() - start) / 1000)
}

async function writeLog (file: string, entries: number): Promise<void> {
  const ownerSeed = new Uint8Array(32).fill(11)
  const seatSeed = new Uint8Array(32).fill(12)
  const owner = nativeSigner(ownerSeed, signerFromSeed(ownerSeed).peerId)
  const seat = nativeSigner(seatSeed, signerFromSeed(seatSeed).peerId)
  // Entries are generated first to a scratch file (the head, which comes first, names the last one).
  const body = createWriteStream(file + '.entries')
  let prev = GENESIS_PREV
  for (let seq = 0; seq < entries; seq++) {
    const payload = signDocument('bench-receipt', { table: 'bench', hand: seq, game: 'coinche', seats: [seat.peerId, 'robot', 'robot', 'robot'], beacon: { round: 1_000_000 + seq } }, seat)
    const made = makeEntry(owner, { seq, prev, kind: 'receipt', payload, time: 1_700_000_000_000 + seq })
    prev = made.hash
    if (!body.write(made.line + '\n')) await new Promise<void>(resolve => { body.once('drain', () => { resolve() }) })
  }
  await new Promise<void>(resolve => { body.end(() => { resolve() }) })
  const out = createWriteStream(file)
  out.write(makeHead(owner, entries - 1, prev).line + '\n')
  for await (const chunk of (await open(file + '.entries')).createReadStream()) {
    if (!out.write(chunk)) await new Promise<void>(resolve => { out.once('drain', () => { resolve() }) })
  }
  await new Promise<void>(resolve => { out.end(() => { resolve() }) })
  await rm(file + '.entries')
}

async function timedVerify (file: string, checker: LineChecker): Promise<{ verdict: LogVerdict, seconds: number, peakRss: number, before: NodeJS.MemoryUsage, after: NodeJS.MemoryUsage }> {
  globalThis.gc?.()
  const before = process.memoryUsage()
  let peakRss = before.rss
  const sampler = setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage().rss) }, 100)
  const start = performance.now()
  const verdict = await verifyLog(readJsonLines(file), { verifyPayload: verifyBenchPayload, checker })
  const seconds = (performance.now() - start) / 1000
  clearInterval(sampler)
  globalThis.gc?.()
  const after = process.memoryUsage()
  return { verdict, seconds, peakRss: Math.max(peakRss, after.rss), before, after }
}

export async function run (): Promise<void> {
  const entries = Number(process.env.FAIRDEAL_BENCH_LOG_ENTRIES ?? 100_000)
  const dir = await mkdtemp(join(tmpdir(), 'fairdeal-bench-log-'))
  try {
    // The bound, measured now on this machine: how fast one core checks Ed25519 signatures.
    const seed = new Uint8Array(32).fill(13)
    const pure = signerFromSeed(seed)
    const doc = signDocument('bench', { text: 'x'.repeat(400), n: 1 }, pure)
    const nativeRate = perSecond(() => { nativeVerifyDocument(doc) }, 1500)
    const pureRate = perSecond(() => { verifyDocument(doc) }, 1500)
    const cores = availableParallelism()
    const bound = nativeRate / SIGNATURES_PER_ENTRY
    console.log(`Ed25519 verify, one thread: native (OpenSSL, what the verifier uses in Node) ${fmt(nativeRate)}/s, pure (noble, the browser path) ${fmt(pureRate)}/s`)
    console.log(`bound: ${fmt(nativeRate)} verifications/s / ${SIGNATURES_PER_ENTRY} signatures per entry = ${fmt(bound)} entries/s per core (${cores} cores)`)

    const file = join(dir, 'log.jsonl')
    let start = performance.now()
    await writeLog(file, entries)
    const size = (await stat(file)).size
    console.log(`wrote a ${fmt(entries)}-entry log (${mb(size)}) in ${((performance.now() - start) / 1000).toFixed(1)} s`)

    const workers = defaultWorkerCount()
    const pool = await createCheckPool({
      workers,
      payloadModule: import.meta.url,
      payloadExport: 'verifyBenchPayload',
      verifyDocModule: new URL('../../src/crypto/native-crypto.js', import.meta.url).href
    })
    const pooled = await timedVerify(file, pool)
    await pool.close()
    const pooledRate = entries / pooled.seconds
    console.log(`verify (${workers} worker threads, as 'fairdeal verify'): ${fmt(pooledRate)} entries/s, ${pooled.seconds.toFixed(1)} s, ` +
      `${pooled.verdict.passed} passed ${pooled.verdict.failed} failed; ${(100 * pooledRate / bound).toFixed(0)}% of the one-core bound, ` +
      `${(100 * pooledRate / (bound * Math.min(workers, cores))).toFixed(0)}% of ${Math.min(workers, cores)} cores' bound`)
    console.log(`  memory: heap ${mb(pooled.before.heapUsed)} → ${mb(pooled.after.heapUsed)}, RSS ${mb(pooled.before.rss)} → ${mb(pooled.after.rss)} (peak ${mb(pooled.peakRss)}) for a ${mb(size)} log`)

    const single = await timedVerify(file, inThreadChecker(verifyBenchPayload, nativeVerifyDocument))
    const singleRate = entries / single.seconds
    console.log(`verify (this thread only, --workers 0): ${fmt(singleRate)} entries/s, ${single.seconds.toFixed(1)} s, ` +
      `${single.verdict.passed} passed ${single.verdict.failed} failed; ${(100 * singleRate / bound).toFixed(0)}% of the one-core bound`)
    console.log(`  memory: heap ${mb(single.before.heapUsed)} → ${mb(single.after.heapUsed)}, RSS ${mb(single.before.rss)} → ${mb(single.after.rss)} (peak ${mb(single.peakRss)})`)
    // The machine may be shared: the bound measured again shows how much the load moved meanwhile.
    const nativeAfter = perSecond(() => { nativeVerifyDocument(doc) }, 1500)
    console.log(`bound measured again after verifying: ${fmt(nativeAfter / SIGNATURES_PER_ENTRY)} entries/s per core (was ${fmt(bound)})`)

    // Durable appends: each one a synced LevelDB batch (entry + signed head). The bound is the
    // disk's own rate of small write + fdatasync, measured here.
    const fsyncFile = await open(join(dir, 'fsync.bin'), 'w')
    const block = new Uint8Array(1024)
    let syncs = 0
    start = performance.now()
    while (performance.now() - start < 2000) { await fsyncFile.write(block, 0, block.length, 0); await fsyncFile.datasync(); syncs++ }
    const fsyncRate = syncs / ((performance.now() - start) / 1000)
    await fsyncFile.close()
    const ownerSeed = new Uint8Array(32).fill(14)
    const signers = [['native signer (daemon)', nativeSigner(ownerSeed, signerFromSeed(ownerSeed).peerId)], ['pure signer', signerFromSeed(ownerSeed)]] as const
    for (const [label, signer] of signers) {
      const log = await openLog(join(dir, `db-${label.split(' ')[0]}`), signer)
      const seat = signerFromSeed(new Uint8Array(32).fill(15))
      const payload = signDocument('bench-receipt', { table: 'bench', hand: 0, game: 'coinche', seats: [seat.peerId, 'robot', 'robot', 'robot'], beacon: null }, seat)
      let n = 0
      start = performance.now()
      while (performance.now() - start < 2500) { await log.append('receipt', payload); n++ }
      const rate = n / ((performance.now() - start) / 1000)
      await log.close()
      console.log(`durable appends (synced, ${label}): ${fmt(rate)}/s; disk write+fdatasync bound ${fmt(fsyncRate)}/s, ${(100 * rate / fsyncRate).toFixed(0)}% of it`)
    }

    await realReceipts(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** Appends receipts to a fresh LevelDB log of a native signer's, as a node does. */
async function receiptLog (path: string, receipts: Receipt[]): Promise<{ log: Awaited<ReturnType<typeof openLog>>, owner: string, appendRate: number }> {
  const seed = new Uint8Array(32).fill(16)
  const owner = signerFromSeed(seed).peerId
  const log = await openLog(path, nativeSigner(seed, owner))
  const start = performance.now()
  for (const receipt of receipts) await log.append('receipt', receipt)
  return { log, owner, appendRate: receipts.length / ((performance.now() - start) / 1000) }
}

/**
 * Verifies a LevelDB log as 'fairdeal verify --data' does: its copy, every receipt, on the worker
 * pool, or in this thread with `workers` 0; `passes` times over, with the same threads.
 */
async function verifyReceiptLog (log: Awaited<ReturnType<typeof openLog>>, owner: string, workers: number, passes = 1): Promise<Array<{ verdict: LogVerdict, seconds: number }>> {
  const checker = workers === 0
    ? inThreadChecker(verifyLogPayload, nativeVerifyDocument)
    : await createCheckPool({
      workers,
      payloadModule: new URL('../../src/core/receipt.js', import.meta.url).href,
      verifyDocModule: new URL('../../src/crypto/native-crypto.js', import.meta.url).href
    })
  try {
    const results = []
    for (let i = 0; i < passes; i++) {
      const start = performance.now()
      const verdict = await verifyLog(log.copy(), { verifyPayload: verifyLogPayload, checker, expectOwner: owner })
      results.push({ verdict, seconds: (performance.now() - start) / 1000 })
    }
    return results
  } finally {
    await (checker as { close?: () => Promise<void> }).close?.()
  }
}

async function realReceipts (dir: string): Promise<void> {
  const count = Number(process.env.FAIRDEAL_BENCH_LOG_RECEIPTS ?? 1_000)
  const cores = availableParallelism()
  const workers = defaultWorkerCount()
  let start = performance.now()
  const receipts = await generateReceipts(count, Math.max(1, Math.min(4, cores)))
  console.log(`\nreal receipts: played ${fmt(count)} coinche hands (atout-v1, 4 seats, no beacon) in memory in ${((performance.now() - start) / 1000).toFixed(1)} s`)
  // Every signed document the receipt holds (commit, pledges, reveal, the nonces inside it, acks),
  // plus the log entry's own signature.
  const signatures = countSignatures(receipts[0]) + 1
  const { log, owner, appendRate } = await receiptLog(join(dir, 'db-receipts'), receipts)
  const size = receipts.reduce((n, r) => n + JSON.stringify(r).length, 0) / receipts.length
  console.log(`  appended to a LevelDB log (synced, native signer): ${fmt(appendRate)}/s; ${fmt(size)} bytes of receipt per entry`)
  const seed = new Uint8Array(32).fill(13)
  const doc = signDocument('bench', { text: 'x'.repeat(400), n: 1 }, signerFromSeed(seed))
  const nativeRate = perSecond(() => { nativeVerifyDocument(doc) }, 1000)
  const bound = nativeRate / signatures
  let passes
  try {
    passes = await verifyReceiptLog(log, owner, workers, 2)
  } finally {
    await log.close()
  }
  const threads = Math.min(workers, cores)
  console.log(`bound: ${fmt(nativeRate)} verifications/s / ${signatures} signatures per real entry = ${fmt(bound)} entries/s per core (${cores} cores)`)
  // The first pass is what a fresh 'fairdeal verify' process sees, its threads' start and JIT
  // warm-up included (a large share over so few entries); the second, on the same threads, is the
  // steady rate that a long log runs at.
  for (const [i, pass] of passes.entries()) {
    const passRate = count / pass.seconds
    console.log(`verify real receipts (${workers} worker threads, as 'fairdeal verify', ${i === 0 ? 'first pass' : 'again, warm'}): ${fmt(passRate)} entries/s, ${pass.seconds.toFixed(1)} s, ` +
      `${pass.verdict.passed} passed ${pass.verdict.failed} failed; ${(100 * passRate / bound).toFixed(0)}% of the one-core bound, ` +
      `${(100 * passRate / (bound * threads)).toFixed(0)}% of ${threads} cores' bound`)
  }
  console.log('  (the main thread, reading the LevelDB copy, parsing lines and checking the chain, shares these cores)')
  const rate = count / passes[passes.length - 1].seconds

  // Beacon-bound receipts (atout-drand-v1) bound to the recorded quicknet rounds: the table's
  // clock is set just before each round so that the round the dealer binds is a recorded one.
  const fixture = JSON.parse(await readFile(new URL('../../../test/fixtures/drand/quicknet.json', import.meta.url), 'utf8')) as { info: unknown, entries: BeaconEntry[] }
  const chain = parseChainInfo(fixture.info)
  const marginMs = 1_000
  const entries = new Map(fixture.entries.map(e => [e.round, e]))
  const rounds = [...entries.keys()].sort((a, b) => a - b)
  const beaconCount = 20
  const beaconReceipts: Receipt[] = []
  start = performance.now()
  for (let i = 0; i < beaconCount; i++) {
    // A new table per pass over the rounds: its clock only moves forward.
    const table = memoryHands({ scheme: 'atout-drand-v1', beacon: { chain, marginMs }, now: 0 })
    for (const round of rounds) {
      if (beaconReceipts.length === beaconCount) break
      table.clock.now = roundTime(chain, round) - marginMs - table.timeouts.contributeMs - 1
      beaconReceipts.push(table.play(r => {
        const entry = entries.get(r)
        if (entry === undefined) throw new Error(`the dealer bound quicknet round ${r}, which is not recorded`)
        return entry
      }))
    }
    if (beaconReceipts.length === beaconCount) break
  }
  console.log(`beacon-bound receipts: played ${beaconCount} hands (atout-drand-v1, bound to ${rounds.length} recorded quicknet rounds) in ${((performance.now() - start) / 1000).toFixed(1)} s`)
  // BLS alone, in this thread: the one check a beacon-bound entry adds (warmed up first, as the
  // workers are by the time they reach most entries).
  const bls = (r: Receipt): void => {
    const commit = r.commit.body
    forgetVerifiedBeaconSignatures() // each check in full, not remembered from the previous pass
    if (commit.beacon === null || !verifyBoundBeacon(chain, commit.beacon, r.reveal.body.beacon).ok) throw new Error('a recorded quicknet entry does not verify')
  }
  const blsPass = (): number => {
    const begin = performance.now()
    for (const r of beaconReceipts) bls(r)
    return (performance.now() - begin) / beaconReceipts.length
  }
  bls(beaconReceipts[0])
  const blsBefore = blsPass()
  const beaconSignatures = countSignatures(beaconReceipts[0]) + 1
  const ed25519Ms = 1000 * beaconSignatures / nativeRate
  const beaconLog = await receiptLog(join(dir, 'db-beacon-receipts'), beaconReceipts)
  let beaconVerified
  try {
    // In this thread (--workers 0), already warmed up by the BLS checks above: with so few entries,
    // fresh worker threads would mostly measure their own first BLS check and JIT warm-up.
    forgetVerifiedBeaconSignatures() // the BLS passes above checked these very rounds
    beaconVerified = (await verifyReceiptLog(beaconLog.log, beaconLog.owner, 0))[0]
  } finally {
    await beaconLog.log.close()
  }
  // Once more after verifying; the quicker pass is the one less disturbed by other load.
  const blsMs = Math.min(blsBefore, blsPass())
  const perEntryMs = 1000 * beaconVerified.seconds / beaconCount
  // A verifier checks each round's signature once (src/core/beacon/verify.ts remembers it), and the
  // recorded rounds are fewer than the hands: the bound counts one BLS check per distinct round.
  const distinctRounds = new Set(beaconReceipts.map(r => r.commit.body.beacon?.round)).size
  const blsPerEntryMs = blsMs * distinctRounds / beaconCount
  const beaconBound = 1000 / (blsPerEntryMs + ed25519Ms)
  console.log(`verify beacon-bound receipts (this thread, --workers 0): ${fmt(beaconCount / beaconVerified.seconds)} entries/s, ` +
    `${beaconVerified.verdict.passed} passed ${beaconVerified.verdict.failed} failed; ${perEntryMs.toFixed(1)} ms per entry`)
  console.log(`  bound: one BLS check ${blsMs.toFixed(1)} ms (measured here) × ${distinctRounds} distinct rounds / ${beaconCount} entries + ${beaconSignatures} Ed25519 ${ed25519Ms.toFixed(1)} ms = ${fmt(beaconBound)} entries/s per core, ` +
    `${(100 * beaconCount / beaconVerified.seconds / beaconBound).toFixed(0)}% of it; the BLS pairing checks are ${(100 * blsPerEntryMs / perEntryMs).toFixed(0)}% of an entry's cost, ` +
    `all ${beaconSignatures} Ed25519 signatures ${(100 * ed25519Ms / perEntryMs).toFixed(0)}%: a beacon-bound log verifies about ${fmt(rate / (beaconCount / beaconVerified.seconds) / threads)}× slower per core than one without (warm rates)`)
}
