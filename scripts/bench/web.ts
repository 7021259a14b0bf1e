// The verifier page in Chromium: entries verified per second on a 1,000-receipt log (real coinche
// receipts played by the state machines in memory), with WebCrypto's Ed25519 and with the pure
// fallback, beside the CLI's one-thread rate on the same file in the same run (`fairdeal verify
// FILE --workers 0`: the same core checks, Ed25519 on Node's OpenSSL). Goal: the page at least a
// third of the CLI's one-thread rate. Needs Debian's Chromium at /usr/bin/chromium (skipped without).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { signerFromSeed } from '../../src/core/identity.js'
import { GENESIS_PREV, makeEntry, makeHead, verifyLog, inThreadChecker } from '../../src/core/log/index.js'
import { verifyLogPayload } from '../../src/core/receipt.js'
import { nativeSigner, nativeVerifyDocument } from '../../src/crypto/native-crypto.js'
import { startWebServer } from '../../src/daemon/web-server.js'
import { generateReceipts } from './lib/memory-hands.js'
import { CHROMIUM, chromiumMissing, launchChromium, verifyOnPage } from './lib/chromium.js'

const COUNT = 1000
const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

const fmt = (n: number): string => Math.round(n).toLocaleString('en')

export async function run (): Promise<void> {
  if (chromiumMissing()) {
    console.log(`skipped: ${CHROMIUM} is absent (apt-get install -y chromium)`)
    return
  }
  const dir = await mkdtemp(join(tmpdir(), 'fairdeal-bench-web-'))
  try {
    const receipts = await generateReceipts(COUNT, 2)
    const seed = new Uint8Array(32).fill(7)
    const owner = nativeSigner(seed, signerFromSeed(seed).peerId)
    const lines: string[] = []
    let prev = GENESIS_PREV
    receipts.forEach((payload, seq) => {
      const made = makeEntry(owner, { seq, prev, kind: 'receipt', payload, time: 1_700_000_000_000 + seq })
      lines.push(made.line)
      prev = made.hash
    })
    const file = join(dir, 'log.jsonl')
    await writeFile(file, [makeHead(owner, COUNT - 1, prev).line, ...lines].join('\n') + '\n')
    const text = await readFile(file, 'utf8')
    console.log(`a log of ${COUNT} real coinche receipts (atout-v1, 4 seats), ${fmt(text.length / COUNT)} bytes per entry`)

    // The CLI's one-thread rate: the same checks as `fairdeal verify FILE --workers 0`, in this process…
    const cliRate = async (): Promise<number> => {
      const start = performance.now()
      const verdict = await verifyLog(text.trimEnd().split('\n'), { verifyPayload: verifyLogPayload, checker: inThreadChecker(verifyLogPayload, nativeVerifyDocument) })
      if (verdict.failed !== 0 || verdict.passed !== COUNT) throw new Error(`the CLI check failed ${verdict.failed}`)
      return COUNT / ((performance.now() - start) / 1000)
    }
    await cliRate() // warm-up
    const cli = Math.max(await cliRate(), await cliRate())
    // …and the command itself, start-up included.
    const started = performance.now()
    const out = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, [join(ROOT, 'bin/fairdeal.js'), 'verify', file, '--workers', '0'], (err, stdout) => { if (err !== null) reject(err); else resolve(stdout) })
    })
    const cliProcess = COUNT / ((performance.now() - started) / 1000)
    if (out.trim() !== `${COUNT} passed, 0 failed`) throw new Error(`fairdeal verify said: ${out}`)
    console.log(`CLI, one thread (Node OpenSSL Ed25519): ${fmt(cli)} entries/s; 'fairdeal verify FILE --workers 0' as a process, start-up included: ${fmt(cliProcess)}/s`)

    const server = await startWebServer({ port: 0, routes: { '/bench.jsonl': (_req, res) => { res.writeHead(200, { 'content-type': 'application/jsonl' }); res.end(text) } } })
    const browser = await launchChromium()
    const { context } = browser
    try {
      const page = await context.newPage()
      for (const engine of ['webcrypto', 'pure'] as const) {
        const rates: number[] = []
        for (let pass = 0; pass < 2; pass++) {
          const { summary, ...last } = await verifyOnPage(page, `${server.url}/verify?ed25519=${engine}`, file)
          if (summary !== `${COUNT} passed, 0 failed` || last.engine !== engine) throw new Error(`the page said ${summary} (engine ${last.engine})`)
          rates.push(last.entries / (last.ms / 1000))
        }
        const best = Math.max(...rates)
        console.log(`Chromium page, Ed25519 ${engine === 'webcrypto' ? 'on WebCrypto' : 'pure JavaScript (fallback)'}: ${fmt(best)} entries/s ` +
          `= ${(best / cli).toFixed(2)} × the CLI's one-thread rate (goal ≥ 0.33)`)
      }
      const version = context.browser()?.version() ?? 'Chromium'
      console.log(`  (${version}; best of 2 passes each, the page's own timing, from the file's text to the last verdict drawn)`)
    } finally {
      await browser.close()
      await server.close()
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
