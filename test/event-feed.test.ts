import { describe, expect, test } from 'vitest'
import { EventFeed } from '../src/daemon/events.js'

const seqs = (feed: EventFeed, after: number, limit?: number): number[] => feed.after(after, limit).map(e => e.seq)

describe('the event feed', () => {
  test('after(seq) returns the retained events numbered above seq, up to the limit', () => {
    const feed = new EventFeed(5)
    expect(feed.after(0)).toEqual([])
    for (let i = 0; i < 8; i++) feed.push('seat', i, { type: 'contributed' }, 1000 + i)
    // Capacity 5: events 4 to 8 are kept.
    expect(feed.last).toBe(8)
    expect(seqs(feed, 0)).toEqual([4, 5, 6, 7, 8])
    expect(seqs(feed, -3)).toEqual([4, 5, 6, 7, 8])
    expect(seqs(feed, 5)).toEqual([6, 7, 8])
    expect(seqs(feed, 5.5)).toEqual([6, 7, 8])
    expect(seqs(feed, 5, 2)).toEqual([6, 7])
    expect(seqs(feed, 8)).toEqual([])
    expect(seqs(feed, 100)).toEqual([])
    expect(seqs(feed, Number.NaN)).toEqual([])
    expect(feed.after(6)[0]).toMatchObject({ seq: 7, hand: 6, role: 'seat', time: 1006 })
  })

  test('wait resolves on the next push', async () => {
    const feed = new EventFeed()
    const waiting = feed.wait(0, 5_000)
    feed.push('dealer', 1, { type: 'revealed' }, 1)
    expect((await waiting).map(e => e.event.type)).toEqual(['revealed'])
  })
})
