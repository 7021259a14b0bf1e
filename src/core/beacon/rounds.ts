import { CoreInputError } from '../errors.js'
import type { ChainInfo } from './chain-info.js'

// Round arithmetic, exactly drand-client's: round 1 is at genesis, one round per period.

type Timing = Pick<ChainInfo, 'genesis_time' | 'period'>

function checkMs (ms: number, what: string): void {
  if (!Number.isSafeInteger(ms)) throw new CoreInputError(`${what} must be an integer number of milliseconds, got ${String(ms)}`)
}

export function checkRound (round: unknown, what = 'round'): asserts round is number {
  if (typeof round !== 'number' || !Number.isSafeInteger(round) || round < 1) {
    throw new CoreInputError(`${what} must be an integer >= 1, got ${JSON.stringify(round)}`)
  }
}

/** The round current at `ms` (Unix milliseconds): the last one whose time is <= ms. */
export function roundAt (chain: Timing, ms: number): number {
  checkMs(ms, 'time')
  const genesisMs = chain.genesis_time * 1000
  if (ms < genesisMs) throw new CoreInputError(`time ${ms} is before the chain's genesis (${genesisMs})`)
  return Math.floor((ms - genesisMs) / (chain.period * 1000)) + 1
}

/** The time (Unix milliseconds) at which `round` is due. */
export function roundTime (chain: Timing, round: number): number {
  checkRound(round)
  return (chain.genesis_time + (round - 1) * chain.period) * 1000
}

/**
 * The round to name in a COMMIT: the first one due strictly after `ms + marginMs`, so nobody can
 * know its value when contributions are fixed (at `ms`, the contribution deadline). The margin
 * absorbs clock skew between the dealer, the seats and the beacon.
 */
export function firstRoundAfter (chain: Timing, ms: number, marginMs = 0): number {
  checkMs(ms, 'time')
  checkMs(marginMs, 'margin')
  if (marginMs < 0) throw new CoreInputError(`margin must not be negative, got ${marginMs}`)
  const t = ms + marginMs
  if (t < chain.genesis_time * 1000) return 1
  return roundAt(chain, t) + 1
}
