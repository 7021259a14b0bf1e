import { spawnSync } from 'node:child_process'
import { describe, expect, test } from 'vitest'

describe('Node 20 polyfill', () => {
  test('provides Promise.withResolvers and a global WebSocket, and leaves existing ones alone', () => {
    // A fresh process, so vitest's own setup file has not loaded the polyfill already.
    const script = `
      const before = { withResolvers: Promise.withResolvers, WebSocket: globalThis.WebSocket }
      await import('./src/polyfill.ts').catch(async () => await import('./dist/src/polyfill.js'))
      const { promise, resolve } = Promise.withResolvers()
      resolve(42)
      const value = await promise
      const kept = (before.withResolvers === undefined || Promise.withResolvers === before.withResolvers) &&
        (before.WebSocket === undefined || globalThis.WebSocket === before.WebSocket)
      console.log(JSON.stringify({ value, ws: typeof globalThis.WebSocket, kept }))
    `
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
    expect(out.stderr).toBe('')
    expect(JSON.parse(out.stdout)).toEqual({ value: 42, ws: 'function', kept: true })
  })
})
