/**
 * @packageDocumentation
 *
 * drand beacons, pure and browser-safe: chain info validation (with drand's chain-hash formula),
 * round arithmetic, and offline verification of beacon entries for every scheme drand uses
 * (BLS12-381 chained/unchained on G2, unchained on G1 with both hash-to-curve tags, BN254).
 * Fetching rounds over HTTP lives in `src/beacon/` (Node).
 *
 * @example
 * ```ts
 * import { parseChainInfo, firstRoundAfter, verifyBoundBeacon } from './core/beacon/index.js'
 *
 * const chain = parseChainInfo(infoJson)                  // throws CoreInputError if inconsistent
 * const round = firstRoundAfter(chain, deadlineMs, 2_000) // the round a COMMIT names
 * // ... later, with the entry from the receipt:
 * const verdict = verifyBoundBeacon(chain, { chainHash: chain.hash, round }, entry)
 * if (!verdict.ok) console.log(verdict.reason, verdict.message)
 * ```
 */
export { SCHEME_IDS, SCHEMES, isSchemeId, type SchemeId, type SchemeSpec } from './schemes.js'
export { parseChainInfo, computeChainHash, sameChain, MAX_PERIOD_SECONDS, type ChainInfo } from './chain-info.js'
export { parseBeaconEntry, type BeaconEntry } from './entry.js'
export { roundAt, roundTime, firstRoundAfter, checkRound } from './rounds.js'
export {
  verifyBeaconEntry, verifyBoundBeacon, beaconMessage, roundBytes, forgetVerifiedBeaconSignatures,
  type BeaconVerdict, type BeaconRejection, type BeaconBinding
} from './verify.js'
export {
  BeaconError, BeaconTimeoutError, BeaconUnavailableError, BeaconInvalidError,
  type BeaconFailureKind, type RelayFailure
} from './errors.js'
export { parseBeaconConfig, beaconConfigJson, MAX_RELAYS, type BeaconConfig, type DrandBeaconConfig, type NoBeacon } from './config.js'
export {
  LOCAL_BEACON_TRUST, LOCAL_BEACON_ID, localBeaconSecretKey, localChainInfo, signLocalRound, secretKeyFromHex,
  type LocalChainParams
} from './local-signer.js'
export {
  GROUP_SCHEME, MAX_GROUP_MEMBERS, hashRound, partialSign, verifyOnG1, recoverG1, lagrangeAtZero, entryFromSignature,
  g1FromHex, g2FromHex, pointHex, scalarFromHex, type G1Point, type G2Point
} from './threshold.js'
export { parseGroupParams, groupSession, memberIndex, defaultThreshold, dealersOf, participantsOf, reshareParams, type GroupParams, type ReshareFrom } from './group-params.js'
export {
  DkgMachine, qualify, publicShares, verifyDkgResult,
  type DkgEffect, type DkgPhase, type DkgResult, type DkgOutcome, type DkgTranscript, type DkgSnapshot, type Disqualification
} from './dkg.js'
export { parseDkgDocument, type DkgDocument, type DocumentVerifier } from './dkg-documents.js'
export { checkBlameRecord, groupRef, BLAME_RECORD_KIND, type BlameRecord } from './blame-record.js'
export { checkDkgRecord, makeDkgRecord, DKG_RECORD_KIND, type DkgRecord, type DkgRecordProblem } from './dkg-record.js'
export { checkRefusalRecord, makeRefusalRecord, assertRefusalRecord, RESHARE_REFUSED_KIND, type RefusalRecord } from './refusal-record.js'
export { checkDkgAgreement, type AgreementInput, type AgreementOutcome, type Disagreement } from './dkg-agreement.js'
export {
  RoundMachine, GROUP_PARTIAL, GROUP_BLAME, SIGN_BACKLOG, PENDING_ROUNDS, MAX_SYNC_ENTRIES,
  type RoundEffect, type RoundInit, type RoundStatus, type PartialBody, type BlameBody, type SyncRequest, type SyncReply
} from './group-rounds.js'
export { runDkgInMemory, type DkgEnvelope, type InMemoryDkg } from './dkg-in-memory.js'
export {
  reshareDeal, checkReshareDeal, completeReshare, ReshareRefusedError, RESHARE_REFUSED,
  type OldGroup, type ReshareDeal, type ReshareResult, type RefusalBody
} from './reshare.js'
