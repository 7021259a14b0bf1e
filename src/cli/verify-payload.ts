// The payload verifier `verify`'s worker threads import (src/store/check-pool.ts). A worker thread
// starts without the process entry (src/polyfill.ts), so it awaits blind-v1's engine here: without
// this, the blind proofs a worker checks ran on noble, several times slower than libsodium.
import { blindEngineReady } from '../core/blind/group.js'
export { verifyLogPayload } from '../core/receipt.js'

await blindEngineReady()
