import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import type { LineCheck, LogLine } from '../core/log/check.js'
import type { LineChecker } from '../core/log/verify.js'
import { distModuleUrl } from './package-files.js'

export interface CheckPoolOptions {
  /** Worker threads; default the number of cores, at most 8. */
  workers?: number
  /**
   * `file:` URL of an ES module exporting the payload verifier (a function cannot be posted to a
   * thread, so each worker imports it); null checks only the log itself.
   */
  payloadModule: string | null
  /** Name of that export. Default `verifyLogPayload`. */
  payloadExport?: string
  /**
   * `file:` URL of an ES module exporting the signature check the workers use (a `DocVerifier`,
   * such as Node's native Ed25519 in src/crypto/native-crypto.ts); absent: the core's pure one.
   */
  verifyDocModule?: string
  /** Name of that export. Default `nativeVerifyDocument`. */
  verifyDocExport?: string
}

export interface CheckPool extends LineChecker {
  close: () => Promise<void>
}

/** Old-generation heap cap of each worker thread. */
export const WORKER_HEAP_MB = 64

export function defaultWorkerCount (): number {
  return Math.min(8, availableParallelism())
}

interface Slot {
  worker: Worker
  pending: Map<number, { resolve: (r: LineCheck[]) => void, reject: (e: Error) => void }>
}

/**
 * Checks lines on worker threads: entries are independent until the chain check, and their
 * signatures are where verification spends its time, so they spread across cores.
 */
export async function createCheckPool (options: CheckPoolOptions): Promise<CheckPool> {
  const count = Math.max(1, options.workers ?? defaultWorkerCount())
  const url = distModuleUrl('store/check-worker.js')
  const slots: Slot[] = []
  let nextId = 0
  let failure: Error | null = null

  const fail = (slot: Slot, err: Error): void => {
    failure ??= err
    for (const { reject } of slot.pending.values()) reject(err)
    slot.pending.clear()
  }

  try {
    await Promise.all(Array.from({ length: count }, async () => {
      const worker = new Worker(url, {
        workerData: {
          payloadModule: options.payloadModule,
          payloadExport: options.payloadExport ?? 'verifyLogPayload',
          verifyDocModule: options.verifyDocModule ?? null,
          verifyDocExport: options.verifyDocExport ?? 'nativeVerifyDocument'
        },
        // A worker holds a few batches of at most ~1 MiB each; left alone V8 grows each worker's
        // heap long after that is needed, and memory looks as if it grew with the log.
        resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, maxYoungGenerationSizeMb: 8 }
      })
      const slot: Slot = { worker, pending: new Map() }
      slots.push(slot)
      await new Promise<void>((resolve, reject) => {
        worker.on('message', (msg: { ready?: true, failed?: string, id?: number, results?: LineCheck[] }) => {
          if (msg.ready === true) { resolve(); return }
          if (msg.failed !== undefined) { reject(new Error(`cannot load a verification module: ${msg.failed}`)); return }
          const waiting = slot.pending.get(msg.id as number)
          slot.pending.delete(msg.id as number)
          waiting?.resolve(msg.results as LineCheck[])
        })
        worker.on('error', (err) => { reject(err); fail(slot, err) })
        worker.on('exit', (code) => {
          const err = new Error(`a verification worker exited (code ${code})`)
          reject(err)
          if (slot.pending.size > 0) fail(slot, err)
        })
      })
    }))
  } catch (err) {
    await Promise.all(slots.map(async s => await s.worker.terminate()))
    throw err
  }

  return {
    concurrency: count,
    check: async (lines: LogLine[]) => {
      if (failure !== null) throw failure
      let slot = slots[0]
      for (const s of slots) if (s.pending.size < slot.pending.size) slot = s
      const id = nextId++
      const done = new Promise<LineCheck[]>((resolve, reject) => { slot.pending.set(id, { resolve, reject }) })
      slot.worker.postMessage({ id, lines })
      return await done
    },
    close: async () => {
      await Promise.all(slots.map(async s => await s.worker.terminate()))
    }
  }
}
