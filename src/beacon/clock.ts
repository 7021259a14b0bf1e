import { setTimeout as delay } from 'node:timers/promises'

/**
 * Time as the beacon code sees it, injected so tests can bind hands to recorded rounds. Contract:
 * after `sleep(ms)` resolves, `now()` has advanced by at least `ms` (a fake clock advances itself).
 */
export interface Clock {
  /** Unix milliseconds. */
  now: () => number
  /** Resolves after `ms` (no-op for ms <= 0); rejects with the signal's reason when it aborts. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    signal?.throwIfAborted()
    if (ms <= 0) return
    await delay(ms, undefined, { signal })
  }
}

/**
 * A clock that starts at `startMs` and only moves when slept on (or by `advance`): a hand bound to
 * a recorded round runs instantly. Sleeping with an aborted signal rejects like the real one.
 */
export function manualClock (startMs: number): Clock & { advance: (ms: number) => void, set: (ms: number) => void } {
  let now = startMs
  return {
    now: () => now,
    sleep: async (ms, signal) => {
      signal?.throwIfAborted()
      if (ms > 0) now += ms
      // Yield to the event loop, so a sleeping loop cannot starve I/O.
      await delay(0)
      signal?.throwIfAborted()
    },
    advance: (ms) => { now += ms },
    set: (ms) => { now = ms }
  }
}
