/**
 * @packageDocumentation
 *
 * Node adapters for drand beacons: a client wrapping the real `drand-client` (pinned chain,
 * per-request timeout, fail-over across relays, explicit rounds only, injected clock), an
 * embeddable local beacon, and the shipped presets. The pure parts are in `src/core/beacon/`.
 *
 * @example
 * ```ts
 * import { createBeaconClient, loadBeaconPreset, startLocalBeacon } from './beacon/index.js'
 *
 * const local = await startLocalBeacon({ period: 1 })           // labelled "local, trust = its operator"
 * const client = createBeaconClient({ chain: local.info, relays: [local.url] })
 * const round = client.firstRoundAfter(Date.now() + 5_000, 1_000) // name it in the COMMIT
 * const entry = await client.waitAndFetchRound(round, { deadline: client.roundTime(round) + 10_000 })
 * await local.close()
 * ```
 */
export { createBeaconClient, MAX_RELAY_RESPONSE_BYTES, DEFAULT_REQUEST_TIMEOUT_MS, type BeaconClient, type BeaconClientInit, type FetchOptions, type WaitOptions } from './client.js'
export { systemClock, manualClock, type Clock } from './clock.js'
export { startLocalBeacon, KEY_FILE, INFO_FILE, TRUST_HEADER, type LocalBeacon, type LocalBeaconInit } from './local-beacon.js'
export { drandV1Handler, type DrandSource } from './http-api.js'
export { loadBeaconPreset, listBeaconPresets, resolveBeaconConfig, presetDirectory, readJsonFile } from './presets.js'
export {
  BeaconError, BeaconTimeoutError, BeaconUnavailableError, BeaconInvalidError, LOCAL_BEACON_TRUST,
  type BeaconFailureKind, type RelayFailure
} from '../core/beacon/index.js'
