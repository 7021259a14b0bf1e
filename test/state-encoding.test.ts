import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import { expect, test } from 'vitest'
import { freezeDeep } from '../src/core/frozen.js'
import { stateValueEncoding } from '../src/store/state-encoding.js'
import type { StateStore } from '../src/daemon/table-host.js'
import { decodeFrame, encodeFrame } from '../src/protocol/wire.js'
import { memoryHands } from '../scripts/bench/lib/memory-hands.js'

// A node's saved hands (src/daemon/daemon.ts's `state` sublevel): written with the canonical
// encoder, read back with JSON.parse, the same value as before, in stores old and new.
test('a saved hand reads back as the same value, its documents canonical; a value with no canonical form is kept too; values written as plain JSON read the same', async () => {
  const receipt = memoryHands({ seats: 4 }).play()
  const off = <T>(doc: T): T => decodeFrame(encodeFrame(doc as never)) as T
  const commit = off(receipt.commit)
  const saved = { hand: 3, commit, nonce: 'ab'.repeat(32), phase: 'acked', pledges: receipt.pledges.map(off), reveal: off(receipt.reveal), ack: receipt.acks[0], note: undefined }
  const dir = await mkdtemp(join(tmpdir(), 'fairdeal-state-'))
  const db = new Level<string, unknown>(dir)
  try {
    // As the daemon holds it (table-host's StateStore: puts are synced).
    const state = db.sublevel<string, unknown>('state', { valueEncoding: stateValueEncoding }) as unknown as StateStore
    const plain = db.sublevel<string, unknown>('state', { valueEncoding: 'json' })
    const odd = { at: 1.5, list: [1, undefined, 2], when: -0 }
    await state.put('hand/3', saved, { sync: true })
    await state.put('odd', odd, { sync: true })
    await plain.put('old', freezeDeep(structuredClone(saved)))
    const expected = JSON.parse(JSON.stringify(saved))
    expect(await state.get('hand/3')).toEqual(expected)
    expect(await plain.get('hand/3')).toEqual(expected)
    expect(await state.get('old')).toEqual(expected)
    expect(await state.get('odd')).toEqual(JSON.parse(JSON.stringify(odd)))
    // The documents are stored in their canonical bytes (keys sorted), exactly as signed.
    const text = await db.sublevel<string, string>('state', { valueEncoding: 'utf8' }).get('hand/3')
    expect(text).toContain(new TextDecoder().decode(encodeFrame(commit)))
    expect(stateValueEncoding.encode(saved)).toBe(text)
  } finally {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  }
})
