// libp2p 3 targets Node 22+. Node 20 lacks Promise.withResolvers and a global WebSocket;
// both shims are guarded so this module is a no-op where the platform already has them.
import { createRequire } from 'node:module'
import { blindEngineReady } from './core/blind/group.js'

interface PromiseWithResolversShape<T> {
  promise: Promise<T>
  resolve: (value: T | PromiseLike<T>) => void
  reject: (reason?: unknown) => void
}

const P = Promise as unknown as { withResolvers?: <T>() => PromiseWithResolversShape<T> }
if (typeof P.withResolvers !== 'function') {
  P.withResolvers = function withResolvers<T> (): PromiseWithResolversShape<T> {
    let resolve!: (value: T | PromiseLike<T>) => void
    let reject!: (reason?: unknown) => void
    const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej })
    return { promise, resolve, reject }
  }
}

// `ws` is loaded on first use of the global, not here: loading it takes as long as a whole
// blind receipt's check (~0.1-0.3 s), and `fairdeal verify` never opens a WebSocket.
const g = globalThis as unknown as { WebSocket?: unknown }
if (typeof g.WebSocket === 'undefined') {
  const require = createRequire(import.meta.url)
  let loaded: unknown
  Object.defineProperty(globalThis, 'WebSocket', {
    configurable: true,
    enumerable: false,
    get: () => (loaded ??= (require('ws') as { WebSocket: unknown }).WebSocket),
    set: (value: unknown) => { Object.defineProperty(globalThis, 'WebSocket', { value, writable: true, configurable: true, enumerable: false }) }
  })
}

// blind-v1's fast engine (libsodium's ristretto255, WebAssembly) loads asynchronously: every
// process entry (bin/fairdeal.js, the bench, the vitest setup) imports this module first, so one
// await here puts every later deal on it. src/core/blind/group.ts falls back to noble until then.
await blindEngineReady()
