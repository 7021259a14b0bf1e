import type { Chain, ChainClient, ChainOptions, RandomnessBeacon } from 'drand-client'
import {
  BeaconInvalidError, BeaconTimeoutError, BeaconUnavailableError, checkRound, firstRoundAfter, parseBeaconEntry,
  parseChainInfo, roundAt, roundTime, sameChain, verifyBeaconEntry,
  type BeaconEntry, type BeaconError, type ChainInfo, type RelayFailure
} from '../core/beacon/index.js'
import { CoreInputError } from '../core/errors.js'
import { systemClock, type Clock } from './clock.js'

export interface BeaconClientInit {
  /** The pinned chain: every relay must serve exactly this info, every entry must verify under it. */
  chain: ChainInfo
  /** v1 HTTP relay base URLs, tried in order (fail-over); each ends in /<chain hash> for non-default chains. */
  relays: string[]
  /** Round arithmetic and waiting; the system clock by default. */
  clock?: Clock
  /** Upper bound on each HTTP request, body included (default 5000 ms). */
  requestTimeoutMs?: number
  /** Pause between passes over the relays while the round is not there yet (default: a third of the period, at most 1000 ms). */
  retryIntervalMs?: number
  /** waitAndFetchRound's deadline when none is given: the round's time plus this (default 30 000 ms). */
  graceMs?: number
  /** Called for each failed relay request (for logs); the fetch goes on with the next relay. */
  onRelayFailure?: (failure: RelayFailure & { round: number }) => void
}

export interface FetchOptions {
  /** Cancels the fetch; the promise then rejects with the signal's reason (not a BeaconError). */
  signal?: AbortSignal
}

export interface WaitOptions extends FetchOptions {
  /** Clock time (Unix ms) after which the round is given up: BeaconTimeoutError, or the cause found. */
  deadline?: number
}

export interface BeaconClient {
  readonly chain: ChainInfo
  readonly relays: readonly string[]
  /** The round current at `ms`. */
  roundAt: (ms: number) => number
  /** When `round` is due (Unix ms). */
  roundTime: (round: number) => number
  /** The first round due strictly after `ms + marginMs`: the round a COMMIT names. */
  firstRoundAfter: (ms: number, marginMs?: number) => number
  /** The round current on the client's clock; 0 before the chain's genesis (no round is out yet). */
  currentRound: () => number
  /** One pass over the relays for `round`, no waiting. Throws a BeaconError if none serves a valid entry. */
  fetchRound: (round: number, options?: FetchOptions) => Promise<BeaconEntry>
  /**
   * Waits (on the client's clock) until `round` is due, then asks the relays in order, again every
   * retry interval, until one serves an entry that verifies or the deadline passes. Never returns an
   * unverified entry. Throws BeaconTimeoutError (not in hand by the deadline, or due after it),
   * BeaconUnavailableError (every relay down, erroring, off-chain or serving garbage) or
   * BeaconInvalidError (a relay served an entry that fails verification and none served a valid one).
   */
  waitAndFetchRound: (round: number, options?: WaitOptions) => Promise<BeaconEntry>
}

/**
 * drand-client, loaded on the first fetch: its bundle builds its own BLS12-381 tower when imported
 * (~70-100 ms of CPU here), which every `fairdeal` process that merely could fetch a round (a node
 * with no drand table, `table`, `hand`) paid at start-up.
 */
let drandClient: Promise<typeof import('drand-client')> | undefined
function loadDrandClient (): Promise<typeof import('drand-client')> {
  return (drandClient ??= import('drand-client'))
}

/** Largest response we read from a relay: an entry or an info document is well under 1 KiB. */
export const MAX_RELAY_RESPONSE_BYTES = 16 * 1024
export const DEFAULT_REQUEST_TIMEOUT_MS = 5000

/** A failed request to one relay; `kind` decides how the whole fetch is classified. */
class RelayProblem extends Error {
  constructor (readonly kind: RelayFailure['kind'], message: string) { super(message) }
}

async function readLimited (response: Response): Promise<string> {
  const reader = response.body?.getReader()
  if (reader === undefined) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.length
    if (size > MAX_RELAY_RESPONSE_BYTES) {
      await reader.cancel().catch(() => {})
      throw new RelayProblem('down', `response larger than ${MAX_RELAY_RESPONSE_BYTES} bytes`)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** GET a JSON document with a hard time limit; every failure becomes a RelayProblem, except the caller's abort. */
async function getJson (url: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<unknown> {
  const timeout = AbortSignal.timeout(Math.max(1, timeoutMs))
  const combined = signal === undefined ? timeout : AbortSignal.any([signal, timeout])
  try {
    const response = await fetch(url, { signal: combined, redirect: 'error', headers: { accept: 'application/json' } })
    if (response.status === 404) {
      await response.body?.cancel().catch(() => {})
      throw new RelayProblem('not-yet', 'not available yet (404)')
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => {})
      throw new RelayProblem('down', `HTTP ${response.status}`)
    }
    const text = await readLimited(response)
    try {
      return JSON.parse(text)
    } catch {
      throw new RelayProblem('down', `not JSON: ${JSON.stringify(text.slice(0, 40))}`)
    }
  } catch (err) {
    if (signal?.aborted === true) throw signal.reason
    if (err instanceof RelayProblem) throw err
    if (timeout.aborted) throw new RelayProblem('slow', `no answer within ${timeoutMs} ms`)
    const cause = (err as { cause?: { code?: string, message?: string } }).cause
    throw new RelayProblem('down', cause?.code ?? cause?.message ?? (err as Error).message)
  }
}

/** One relay: checks once that it serves the pinned chain, then fetches entries. */
class Relay {
  private infoChecked = false
  constructor (readonly url: string, private readonly chain: ChainInfo) {}

  async checkInfo (timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.infoChecked) return
    let body: unknown
    try {
      body = await getJson(`${this.url}/info`, timeoutMs, signal)
    } catch (err) {
      // A chain's info always exists: a 404 means this URL does not serve the chain at all.
      if (err instanceof RelayProblem && err.kind === 'not-yet') throw new RelayProblem('down', `no chain info here (404): not a relay of ${this.chain.hash}`)
      throw err
    }
    let served: ChainInfo
    try {
      served = parseChainInfo(body, 'relay chain info')
    } catch (err) {
      throw new RelayProblem('down', (err as Error).message)
    }
    if (!sameChain(served, this.chain)) {
      throw new RelayProblem('down', `serves chain ${served.hash} (${served.metadata.beaconID}), not the pinned ${this.chain.hash}`)
    }
    this.infoChecked = true
  }

  /**
   * drand-client's own ChainClient interface, bound to one request's signal, so its fetchBeacon
   * does the verification it always does (round, randomness, BLS signature) on what we fetched.
   */
  chainClient (round: number, timeoutMs: number, signal: AbortSignal | undefined, fetched: { entry?: BeaconEntry }): ChainClient {
    const chain = this.chain
    const options: ChainOptions = {
      disableBeaconVerification: false,
      noCache: false,
      chainVerificationParams: { chainHash: chain.hash, publicKey: chain.public_key }
    }
    const pinnedChain: Chain = { baseUrl: this.url, info: async () => chain }
    const url = this.url
    return {
      options,
      chain: () => pinnedChain,
      latest: async () => { throw new Error('fairdeal never asks for the latest round: rounds are named explicitly') },
      get: async (requested: number): Promise<RandomnessBeacon> => {
        const body = await getJson(`${url}/public/${requested}`, timeoutMs, signal)
        let entry: BeaconEntry
        try {
          entry = parseBeaconEntry(body, 'relay entry')
        } catch (err) {
          throw new RelayProblem('down', (err as Error).message)
        }
        // Our own verifier first: it names the reason, and keeps drand-client's console noise for real disagreements.
        const verdict = verifyBeaconEntry(chain, entry, round)
        if (!verdict.ok) throw new RelayProblem('invalid', `${verdict.reason}: ${verdict.message}`)
        fetched.entry = verdict.entry
        return verdict.entry as RandomnessBeacon
      }
    }
  }

  async fetch (round: number, timeoutMs: number, signal?: AbortSignal): Promise<BeaconEntry> {
    await this.checkInfo(timeoutMs, signal)
    const { fetchBeacon } = await loadDrandClient()
    const fetched: { entry?: BeaconEntry } = {}
    try {
      await fetchBeacon(this.chainClient(round, timeoutMs, signal, fetched), round)
    } catch (err) {
      if (signal?.aborted === true) throw signal.reason
      if (err instanceof RelayProblem) throw err
      throw new RelayProblem('invalid', `drand-client rejected the entry: ${(err as Error).message}`)
    }
    if (fetched.entry === undefined) throw new RelayProblem('invalid', 'drand-client returned no entry')
    return fetched.entry
  }
}

function describe (failures: RelayFailure[]): string {
  return failures.map(f => `${f.url}: ${f.message}`).join('; ')
}

export function createBeaconClient (init: BeaconClientInit): BeaconClient {
  const chain = parseChainInfo(init.chain)
  if (!Array.isArray(init.relays) || init.relays.length === 0) throw new CoreInputError('a beacon client needs at least one relay URL')
  const relays = init.relays.map(url => new Relay(url.replace(/\/+$/, ''), chain))
  const clock = init.clock ?? systemClock
  const requestTimeoutMs = init.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  const retryIntervalMs = init.retryIntervalMs ?? Math.min(1000, Math.ceil(chain.period * 1000 / 3))
  const graceMs = init.graceMs ?? 30_000
  const label = `round %R of chain ${chain.metadata.beaconID} (${chain.hash.slice(0, 16)}…)`

  /** One pass: the first relay with a valid entry wins; the others are only asked when it fails. */
  async function pass (round: number, active: Relay[], last: Map<Relay, RelayFailure>, remainingMs: () => number, signal?: AbortSignal): Promise<BeaconEntry | undefined> {
    for (const relay of active) {
      const remaining = remainingMs()
      if (remaining <= 0) return undefined
      try {
        return await relay.fetch(round, Math.min(requestTimeoutMs, remaining), signal)
      } catch (err) {
        if (!(err instanceof RelayProblem)) throw err
        const failure: RelayFailure = { url: relay.url, kind: err.kind, message: err.message }
        last.set(relay, failure)
        init.onRelayFailure?.({ ...failure, round })
      }
    }
    return undefined
  }

  function classify (round: number, last: Map<Relay, RelayFailure>, why: string): BeaconError {
    const failures = [...last.values()]
    const text = `${label.replace('%R', String(round))}: ${why}${failures.length > 0 ? ` (${describe(failures)})` : ''}`
    if (failures.some(f => f.kind === 'invalid')) return new BeaconInvalidError(text, round, chain.hash, failures)
    if (failures.length === relays.length && failures.every(f => f.kind === 'down')) return new BeaconUnavailableError(text, round, chain.hash, failures)
    return new BeaconTimeoutError(text, round, chain.hash, failures)
  }

  return {
    chain,
    relays: relays.map(r => r.url),
    roundAt: (ms) => roundAt(chain, ms),
    roundTime: (round) => roundTime(chain, round),
    firstRoundAfter: (ms, marginMs) => firstRoundAfter(chain, ms, marginMs),
    currentRound: () => {
      const now = clock.now()
      return now < chain.genesis_time * 1000 ? 0 : roundAt(chain, now)
    },

    async fetchRound (round, options = {}) {
      checkRound(round)
      const last = new Map<Relay, RelayFailure>()
      const entry = await pass(round, relays, last, () => requestTimeoutMs, options.signal)
      if (entry !== undefined) return entry
      throw classify(round, last, 'no relay served a valid entry')
    },

    async waitAndFetchRound (round, options = {}) {
      checkRound(round)
      const { signal } = options
      const due = roundTime(chain, round)
      const deadline = options.deadline ?? due + graceMs
      if (due > deadline) {
        throw new BeaconTimeoutError(`${label.replace('%R', String(round))}: due at ${new Date(due).toISOString()}, after the deadline ${new Date(deadline).toISOString()}`, round, chain.hash, [])
      }
      // Latest answer per relay; a relay that served an invalid entry is not asked again.
      const last = new Map<Relay, RelayFailure>()
      for (;;) {
        signal?.throwIfAborted()
        const now = clock.now()
        if (now >= deadline) throw classify(round, last, 'not obtained before the deadline')
        if (now < due) {
          await clock.sleep(due - now, signal)
          continue
        }
        const active = relays.filter(r => last.get(r)?.kind !== 'invalid')
        if (active.length === 0) throw classify(round, last, 'every relay served an invalid entry')
        const entry = await pass(round, active, last, () => deadline - clock.now(), signal)
        if (entry !== undefined) return entry
        if (relays.every(r => last.get(r)?.kind === 'invalid')) throw classify(round, last, 'every relay served an invalid entry')
        await clock.sleep(Math.min(retryIntervalMs, Math.max(0, deadline - clock.now())), signal)
      }
    }
  }
}
