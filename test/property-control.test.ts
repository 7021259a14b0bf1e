import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { startControl } from '../src/daemon/control.js'
import { CapturedLogger } from './helpers/captured-logger.js'
import { fcParams, nastyValue } from './helpers/hostile.js'
import { TestTable } from './helpers/table-nodes.js'

// Hostile requests to a node's control endpoint, property-based (fast-check, fixed seed): random
// methods, routes, query strings, bodies (JSON of every shape, garbage bytes) and tokens (right,
// wrong, missing), to a real dealer node's endpoint on 127.0.0.1. Every answer is JSON; every
// refusal is a 4xx with an `error` saying why, never a 500, and changes nothing the node holds.

let table: TestTable | undefined
let close: (() => Promise<void>) | undefined
afterEach(async () => { await close?.(); close = undefined; await table?.cleanup(); table = undefined })

const ROUTES = ['/status', '/hand/deal', '/hand/stage', '/hand/end', '/hand/cards', '/events', '/', '/hand', '/hand/deal/', '/HAND/DEAL', '/status/../hand/deal', '//status']
const body = fc.oneof(
  fc.constant(undefined),
  nastyValue.map(v => JSON.stringify(v) ?? 'null'),
  fc.record({ dealer: nastyValue }, { requiredKeys: [] }).map(v => JSON.stringify(v)),
  fc.record({ hand: nastyValue, stage: nastyValue, taker: nastyValue }, { requiredKeys: [] }).map(v => JSON.stringify(v)),
  fc.uint8Array({ maxLength: 300 }).map(b => Buffer.from(b).toString('latin1')),
  fc.nat({ max: 40_000 }).map(n => `{"dealer":0,"x":"${'a'.repeat(n)}"}`),
  // Raw texts JSON.stringify cannot produce: negative zero, huge and fractional numbers, duplicates.
  fc.constantFrom('{"dealer":-0}', '{"dealer":1e400}', '{"dealer":0.0}', '{"dealer":1,"dealer":-1}', '{"hand":-0,"stage":"deal"}',
    '{"hand":1e2}', '{"dealer":0}garbage', '[]', '"x"', 'null', '{"__proto__":{"dealer":1}}', '{"dealer":"0"}', '{"taker":-0,"hand":1,"stage":"take"}')
)
const query = fc.oneof(fc.constant(''), fc.string({ maxLength: 30 }).map(s => `?${encodeURIComponent(s)}`),
  fc.constantFrom('?hand=', '?hand=-1', '?hand=1e3', '?hand=99999999999999999', '?after=x&wait=1', '?after=-1&wait=-5', '?wait=NaN', '?hand=0x10'))

describe('hostile requests to the control endpoint (fast-check, fixed seed)', () => {
  it('500 requests: JSON answers, refusals 4xx with a reason, never a 500, nothing changed by a refusal', async () => {
    const t = table = await TestTable.prepare({ game: 'duo', scheme: 'atout-v1', seats: 2, transport: 'tcp', timeouts: { contributeMs: 60_000 } })
    // The dealer's node alone: a hand it starts waits for the seat, so any hand started shows.
    const node = await t.start(0, new CapturedLogger())
    const control = await startControl(node.daemon, { port: 0, dataDir: t.dataDir(0), logger: node.logs.logger })
    close = control.close
    const { url, token } = control.info
    // The hands the node holds and its log; a hand started by an accepted request goes on by itself
    // (its own seat pledges a moment later), so only which hands exist is compared.
    const state = (): string => {
      const st = node.daemon.status() as { dealerHands: Array<{ hand: number }>, log: unknown }
      return JSON.stringify({ hands: st.dealerHands.map(h => h.hand), log: st.log })
    }
    const statuses = new Map<number, number>()
    await fc.assert(fc.asyncProperty(
      fc.oneof({ arbitrary: fc.constantFrom('GET', 'POST'), weight: 4 }, { arbitrary: fc.constantFrom('PUT', 'DELETE', 'PATCH'), weight: 1 }),
      fc.oneof({ arbitrary: fc.constantFrom(...ROUTES), weight: 4 }, { arbitrary: fc.string({ maxLength: 20 }).map(s => `/${encodeURIComponent(s)}`), weight: 1 }),
      query, body, fc.oneof(fc.constant(`Bearer ${token}`), fc.constant(`Bearer ${token}`), fc.constant(undefined), fc.string({ maxLength: 80 }).map(s => s.replace(/[^\x20-\x7e]/g, '')), fc.constant(`bearer ${token}`), fc.constant(`Bearer ${token} `)),
      async (method, route, q, payload, auth) => {
        const before = state()
        const headers: Record<string, string> = auth === undefined ? {} : { authorization: auth }
        const res = await fetch(`${url}${route}${q}`, { method, headers, body: method === 'GET' ? undefined : payload, signal: AbortSignal.timeout(10_000) })
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        const text = await res.text()
        expect(res.status, `${method} ${route}${q} ${String(payload).slice(0, 100)} → ${text}`).not.toBe(500)
        const answer = JSON.parse(text) as { error?: unknown }
        if (res.status >= 400) {
          expect(res.status).toBeLessThan(500)
          expect(typeof answer.error === 'string' && answer.error.length > 0).toBe(true)
          expect(state()).toBe(before)
        }
      }), { ...fcParams(500), interruptAfterTimeLimit: undefined })
    // The right token did reach the routes: some requests were served, most refused.
    expect(statuses.get(401) ?? 0).toBeGreaterThan(50)
    expect([...statuses.keys()].some(s => s === 400 || s === 404)).toBe(true)
    console.log(`control endpoint: 500 hostile requests, answers by status: ${JSON.stringify(Object.fromEntries(statuses))}`)
  })
})
