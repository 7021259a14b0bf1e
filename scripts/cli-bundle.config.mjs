// `npm run build` bundles the command line (after tsc) into dist/cli/: the polyfill and the CLI as
// two entries of one build (they share the blind engine's module), every dependency inlined except
// native and worker-spawning ones. Node resolves and reads one file where it read ~1,500 (libp2p's
// many small modules): a process starts on about half the CPU (0.95 → 0.45 s for `fairdeal node`),
// which every node, demo member and test process pays. Paths to the package's own files are found
// from its root (src/store/package-files.ts), never relative to a module inside the bundle.
import { defineConfig } from 'vite'

export default defineConfig({
  logLevel: 'warn',
  // The CLI runs in Node: resolve packages' node entry points, inline them (noExternal).
  ssr: { target: 'node', noExternal: true, external: ['classic-level', 'pino', 'pino-pretty', 'thread-stream'] },
  build: {
    ssr: true,
    outDir: 'dist/cli',
    emptyOutDir: true,
    target: 'node20',
    minify: false,
    sourcemap: true,
    rolldownOptions: {
      input: { polyfill: 'dist/src/polyfill.js', main: 'dist/src/cli/main.js' },
      output: { format: 'esm', entryFileNames: '[name].js', chunkFileNames: 'chunks/[name]-[hash].js' },
      checks: { pluginTimings: false }
    }
  }
})
