// Receipt logs: verification speed of a 100,000-entry log against the Ed25519 bound, with memory
// before/after, and durable (synced) appends per second against the disk's own fsync rate.
// FAIRDEAL_BENCH_LOG_ENTRIES changes the log's length.
import { createWriteStream } from 'node:fs'
import { mkdtemp, open, rm, stat } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { signerFromSeed } from '../../src/core/identity.js'
import { signDocument, verifyDocument, type Signed } from '../../src/core/signed.js'
import { GENESIS_PREV, makeEntry, makeHead } from '../../src/core/log/format.js'
import { verifyLog, inThreadChecker, type LineChecker, type LogVerdict } from '../../src/core/log/index.js'
import { nativeSigner, nativeVerifyDocument } from '../../src/daemon/native-crypto.js'
import { createCheckPool, defaultWorkerCount } from '../../src/store/check-pool.js'
import { readJsonLines } from '../../src/store/jsonl.js'
import { openLog } from '../../src/store/log.js'

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
      verifyDocModule: new URL('../../src/daemon/native-crypto.js', import.meta.url).href
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
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
