#!/usr/bin/env node
// The polyfill must run before libp2p is loaded, so main is imported dynamically after it. Both come
// from the bundle `npm run build` makes (dist/cli/, scripts/cli-bundle.config.mjs): one file to load
// where dist/src/ and node_modules hold ~1,500, so every command starts on about half the CPU.
await import('../dist/cli/polyfill.js')
const { main } = await import('../dist/cli/main.js')
process.exitCode = await main(process.argv.slice(2))
