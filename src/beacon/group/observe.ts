import { roundTime, type ChainInfo } from '../../core/beacon/index.js'
import type { GroupMemberStatus } from './member.js'
import { STATUS_PATH } from './member.js'

/** A member's status from its HTTP API (`/fairdeal/group/status`), or undefined if it does not answer. */
export async function fetchMemberStatus (url: string, timeoutMs = 2000): Promise<GroupMemberStatus | undefined> {
  try {
    const res = await fetch(url + STATUS_PATH, { signal: AbortSignal.timeout(timeoutMs) })
    if (!res.ok) return undefined
    return await res.json() as GroupMemberStatus
  } catch {
    return undefined
  }
}

export interface RunSummary {
  members: number
  threshold: number
  rounds: number
  missed: number
  dkgMs: number
  roundLatencyMs: { p50: number, p99: number }
}

function percentile (sorted: number[], p: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

/**
 * The demo's closing figures from every member's status: rounds due in [first, last] that every
 * answering member produced, those some member lacks (missed), the DKG time (the slowest member),
 * and each round's latency: from its due time to the moment the last member had it verified.
 */
export function summarize (chain: ChainInfo, statuses: Array<GroupMemberStatus | undefined>, first: number, last: number, members: number, threshold: number): RunSummary {
  const live = statuses.filter((s): s is GroupMemberStatus => s !== undefined)
  let rounds = 0
  let missed = 0
  const latencies: number[] = []
  const produced = live.map(s => new Map((s.recent ?? []).map(([r, at]) => [r, at])))
  for (let r = first; r <= last; r++) {
    const times = produced.map(p => p.get(r))
    if (live.length > 0 && times.every(t => t !== undefined)) {
      rounds++
      latencies.push(Math.max(...(times as number[])) - roundTime(chain, r))
    } else {
      missed++
    }
  }
  latencies.sort((a, b) => a - b)
  return {
    members,
    threshold,
    rounds,
    missed,
    dkgMs: Math.max(0, ...live.map(s => s.dkgMs ?? 0)),
    roundLatencyMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
  }
}
