import { getEventListeners } from 'node:events'
import { describe, expect, it } from 'vitest'
import { EventFeed } from '../src/daemon/events.js'

// Issue 23: the table page's event stream waits on the feed again and again with one signal per
// browser connection; each wait left its 'abort' listener behind, and past ten Node printed a
// MaxListenersExceededWarning into the dealer's log.
describe('EventFeed.wait', () => {
  it('leaves no listener on the signal when it ends', async () => {
    const feed = new EventFeed()
    const abort = new AbortController()
    for (let i = 0; i < 20; i++) await feed.wait(0, 1, abort.signal)
    expect(getEventListeners(abort.signal, 'abort')).toHaveLength(0)
  })
})
