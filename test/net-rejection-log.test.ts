import { describe, expect, it } from 'vitest'
import { createRejectionLog, REJECTION_KEYS, REJECTION_LINES_PER_KIND, REJECTION_LINES_PER_WINDOW, REJECTION_SUMMARIES_PER_WINDOW, reasonKind } from '../src/net/rejection-log.js'

// Issue 18: rejected input is logged in rate-limited summaries, per peer and reason kind, with
// bounded memory and a bounded number of lines per window, on an injected clock.
function capture (): { lines: Array<{ fields: Record<string, unknown>, msg: string }>, logger: { warn: (f: object, m: string) => void } } {
  const lines: Array<{ fields: Record<string, unknown>, msg: string }> = []
  return { lines, logger: { warn: (fields, msg) => { lines.push({ fields: fields as Record<string, unknown>, msg }) } } }
}

describe('rejection log', () => {
  it('logs the first few of a kind, counts the rest, and summarises them when the window ends', () => {
    const { lines, logger } = capture()
    let now = 0
    const log = createRejectionLog(logger, { now: () => now, windowMs: 10_000 })
    for (let i = 0; i < 1_000; i++) log({ peer: 'A', reason: `frame ${i} is not JSON` }, 'message rejected')
    log({ peer: 'B', reason: 'frame is not JSON' }, 'message rejected')
    expect(lines).toHaveLength(REJECTION_LINES_PER_KIND + 1)
    now = 10_000
    log({ peer: 'A', reason: 'frame 1 is not JSON' }, 'message rejected') // next window: its summary first
    expect(lines.slice(REJECTION_LINES_PER_KIND + 1).map(l => [l.msg, l.fields.peer, l.fields.count])).toEqual([
      ['message rejected: 995 more like it in 10 s (not logged one by one)', 'A', 995],
      ['message rejected', 'A', undefined]
    ])
    expect(reasonKind('pledge of seat 3 for hand "x" 12ab34cd56ef7890')).toBe('pledge of seat … for hand … …')
  })

  it('bounds the lines and the kinds kept whatever the flood', () => {
    const { lines, logger } = capture()
    const log = createRejectionLog(logger, { now: () => 0 })
    for (let p = 0; p < 5_000; p++) for (let k = 0; k < 3; k++) log({ peer: `peer-${p}`, reason: `reason ${'abc'[k]}` }, 'refused')
    expect(lines).toHaveLength(REJECTION_LINES_PER_WINDOW)
    log.flush()
    expect(lines.length).toBe(REJECTION_LINES_PER_WINDOW + REJECTION_SUMMARIES_PER_WINDOW + 1)
    // Every rejection is either said or counted once; at most REJECTION_KEYS kinds were kept apart.
    expect(lines.slice(REJECTION_LINES_PER_WINDOW).reduce((n, l) => n + (l.fields.count as number), 0)).toBe(15_000 - REJECTION_LINES_PER_WINDOW)
    expect(lines.at(-1)?.fields.count).toBe(15_000 - REJECTION_KEYS + (REJECTION_KEYS - REJECTION_LINES_PER_WINDOW - REJECTION_SUMMARIES_PER_WINDOW))
  })
})
