import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { toHex } from '../src/core/bytes.js'
import type { Receipt } from '../src/core/hand/messages.js'
import { verifyReceipt } from '../src/core/hand/verify.js'
import { createLogger, REDACTED_FIELDS } from '../src/daemon/logger.js'
import { IDENTITY_FILE } from '../src/net/identity.js'
import { CapturedLogger } from './helpers/captured-logger.js'
import { memoryTable } from './helpers/memory-table.js'
import { logEntries, playHand, TestTable } from './helpers/table-nodes.js'

// Secrets stay secret (issue 9): no dealer secret, no nonce, no private card and no key in any
// log line a played table writes, at the most verbose level; no secret and no other seat's nonce in
// any message before the reveal; the redaction catches such fields wherever code would log them.

let table: TestTable | undefined
afterEach(async () => { await table?.cleanup(); table = undefined })

/** What must never be logged, taken from the finished receipts: each hand's secret and nonces. */
function secretsOf (receipts: Receipt[]): string[] {
  return receipts.flatMap(r => [r.reveal.body.secret, ...r.reveal.body.nonces.map(n => n.body.nonce)]).filter(s => s.length >= 8)
}

describe('secrets stay out of the logs', () => {
  it('a played table at trace level: no secret, nonce, private card or key seed in any line of any node', async () => {
    const t = table = await TestTable.prepare({ game: 'belote', scheme: 'atout-v1', seats: 4, transport: 'tcp' })
    const logs = t.peerIds.map(() => new CapturedLogger('trace'))
    const nodes = []
    for (let i = 0; i < t.peerIds.length; i++) nodes.push(await t.start(i, logs[i]))
    for (let h = 0; h < 2; h++) await playHand(nodes[0], nodes, { dealerSeat: h, stages: [{ stage: 'take', taker: h + 1 }] })
    await t.stopAll()
    const receipts = (await logEntries(t.dataDir(0))).map(e => e.body.payload as Receipt)
    expect(receipts).toHaveLength(2)
    const secrets = secretsOf(receipts)
    expect(secrets.length).toBe(2 * 5)
    // Each node's key seed (bytes 4..36 of its identity file), in hex.
    for (let i = 0; i < t.peerIds.length; i++) secrets.push(toHex((await readFile(join(t.dataDir(i), IDENTITY_FILE))).subarray(4, 36)))
    // Private cards, as they are written in a JSON array: "AS","KH",… (the whole hand of a seat).
    const hands = receipts.flatMap(r => Object.values(verifyReceipt(r).summary?.hands ?? {}).map(cards => cards.map(c => `"${c}"`).join(',')))
    const raw = logs.flatMap(l => l.raw)
    expect(raw.length).toBeGreaterThan(50)
    for (const line of raw) {
      for (const s of secrets) expect(line.includes(s), `a secret in: ${line.slice(0, 300)}`).toBe(false)
      for (const h of hands) expect(line.includes(h), `a seat's cards in: ${line.slice(0, 300)}`).toBe(false)
    }
    // The cards events are logged, their cards redacted.
    const cardsLines = logs.flatMap(l => l.lines).filter(l => l.msg === 'hand cards')
    expect(cardsLines.length).toBeGreaterThan(0)
    for (const l of cardsLines) expect(l.cards).toBe('[redacted]')
  })

  it('the redaction catches each secret field at the top level and two objects deep, in every logger the node makes', () => {
    const lines: string[] = []
    const logger = createLogger({ level: 'trace', stream: { write: (s: string) => { lines.push(s) } } }).child({ component: 'x' })
    for (const f of REDACTED_FIELDS) {
      logger.info({ [f]: 'LEAK-top' }, 'top')
      logger.info({ event: { [f]: 'LEAK-one' } }, 'one')
      logger.info({ doc: { body: { [f]: 'LEAK-two' } } }, 'two')
    }
    expect(lines).toHaveLength(3 * REDACTED_FIELDS.length)
    for (const line of lines) {
      expect(line).not.toMatch(/LEAK/)
      expect(line).toMatch(/\[redacted\]/)
    }
  })
})

describe('secrets stay out of messages before the reveal', () => {
  it('in memory, 6 hands: no frame before a hand\'s REVEAL holds its secret, and only a seat\'s own NONCE holds its nonce', () => {
    const t = memoryTable({ game: 'coinche' })
    for (let h = 0; h < 6; h++) {
      const { hand, effects } = t.dealer.startHand({ dealer: h % 4 })
      t.run(t.table.dealer, effects)
      t.run(t.table.dealer, t.dealer.end(hand))
    }
    const receipts = (t.appended.get(t.table.dealer) ?? []).filter((e, i) => e.entry === 'receipt' && i % 2 === 0).map(e => e.payload as Receipt)
    expect(receipts).toHaveLength(6)
    let checked = 0
    for (const [to, frames] of t.frames) {
      const docs = frames.map(f => ({ text: new TextDecoder().decode(f), doc: JSON.parse(new TextDecoder().decode(f)) as { type: string, signer: string, body: { hand: number } } }))
      for (const r of receipts) {
        const hand = r.commit.body.hand
        const ofHand = docs.filter(d => d.doc.body.hand === hand)
        const reveal = ofHand.findIndex(d => d.doc.type === 'reveal')
        // The dealer's own node gets no REVEAL frame (it made it): all its frames come before.
        const before = reveal < 0 ? ofHand : ofHand.slice(0, reveal)
        for (const d of before) {
          expect(d.text.includes(r.reveal.body.secret), `${d.doc.type} to ${to} holds the secret of hand ${hand}`).toBe(false)
          for (const n of r.reveal.body.nonces) {
            if (n.body.nonce === '') continue
            const carries = d.text.includes(JSON.stringify(n.body.nonce))
            // A nonce travels before the reveal only in its own seat's NONCE message (to the dealer and,
            // once every seat's view agreed and so every pledge is in, to the other seats).
            expect(carries && !(d.doc.type === 'nonce' && d.doc.signer === n.signer),
              `${d.doc.type} from ${d.doc.signer} to ${to} holds seat ${n.body.seat}'s nonce of hand ${hand}`).toBe(false)
          }
          checked++
        }
      }
    }
    expect(checked).toBeGreaterThan(6 * 10)
  })
})
