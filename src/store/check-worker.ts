// Worker thread of the check pool: runs the core's checkLine on batches posted by check-pool.ts,
// with the payload verifier and the signature check it was given (each imported by URL, since a
// function cannot be posted to a thread). The store knows neither: its caller chooses them.
import { parentPort, workerData } from 'node:worker_threads'
import { checkLine, type DocVerifier, type LogLine, type PayloadVerifier } from '../core/log/check.js'

interface Init { payloadModule: string | null, payloadExport: string, verifyDocModule: string | null, verifyDocExport: string }

const port = parentPort
if (port === null) throw new Error('check-worker.js runs as a worker thread only')

async function importFunction (url: string, name: string): Promise<unknown> {
  const mod = await import(url) as Record<string, unknown>
  const fn = mod[name]
  if (typeof fn !== 'function') throw new Error(`${url} has no function export ${name}`)
  return fn
}

const init = workerData as Init
try {
  const verifyPayload = init.payloadModule === null ? null : await importFunction(init.payloadModule, init.payloadExport) as PayloadVerifier
  const verifyDoc = init.verifyDocModule === null ? undefined : await importFunction(init.verifyDocModule, init.verifyDocExport) as DocVerifier
  port.on('message', (msg: { id: number, lines: LogLine[] }) => {
    port.postMessage({ id: msg.id, results: msg.lines.map(line => checkLine(line, verifyPayload, verifyDoc)) })
  })
  port.postMessage({ ready: true })
} catch (err) {
  port.postMessage({ failed: (err as Error).message })
}
