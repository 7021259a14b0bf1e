import { defineConfig } from 'vite'

// The web pages, built by `npm run build` into dist/web: plain static files (relative URLs, no CDN),
// served by `fairdeal web` / `fairdeal node`, or by any static file server.
export default defineConfig({
  base: './',
  logLevel: 'warn',
  build: {
    outDir: '../../dist/web',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    chunkSizeWarningLimit: 2000,
    // scripts/bundle-hash.mjs reads which files the seat page loads from it.
    manifest: true,
    rolldownOptions: { input: { verify: 'verify.html', table: 'table.html', seat: 'seat.html' }, checks: { pluginTimings: false } }
  }
})
