// Worker thread of the check pool: runs the core's checkLine on batches posted by check-pool.ts,
// with Node's native Ed25519 (same signatures as the pure one, several times faster).
import { parentPort, workerData } from 'node:worker_threads'
import { checkLine, type LogLine, type PayloadVerifier } from '../core/log/check.js'
import { nativeVerifyDocument } from '../daemon/native-crypto.js'

interface Init { payloadModule: string | null, payloadExport: string }

const port = parentPort
if (port === null) throw new Error('check-worker.js runs as a worker thread only')

const init = workerData as Init
let verifyPayload: PayloadVerifier | null = null
try {
  if (init.payloadModule !== null) {
    const mod = await import(init.payloadModule) as Record<string, unknown>
    const fn = mod[init.payloadExport]
    if (typeof fn !== 'function') throw new Error(`${init.payloadModule} has no function export ${init.payloadExport}`)
    verifyPayload = fn as PayloadVerifier
  }
  port.on('message', (msg: { id: number, lines: LogLine[] }) => {
    port.postMessage({ id: msg.id, results: msg.lines.map(line => checkLine(line, verifyPayload, nativeVerifyDocument)) })
  })
  port.postMessage({ ready: true })
} catch (err) {
  port.postMessage({ failed: (err as Error).message })
}
