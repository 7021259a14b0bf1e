#!/usr/bin/env node
// The polyfill must run before libp2p is loaded, so main is imported dynamically after it.
await import('../dist/src/polyfill.js')
const { main } = await import('../dist/src/cli/main.js')
process.exitCode = await main(process.argv.slice(2))
