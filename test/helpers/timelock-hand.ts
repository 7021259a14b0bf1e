// A time-locked coinche hand built document by document with real signatures and real tlock-js
// ciphertexts, bound to a recorded quicknet round: the raw material of the timelock verifier tests.
import { readFileSync } from 'node:fs'
import { signDocument, type Signed } from '../../src/core/signed.js'
import { sha256Hex } from '../../src/core/bytes.js'
import { docDigest } from '../../src/core/hand/digest.js'
import { getScheme } from '../../src/core/schemes/registry.js'
import { cardSchemeFor, recomputeDeal } from '../../src/core/hand/recompute.js'
import { roundTime, parseChainInfo, type ChainInfo } from '../../src/core/beacon/index.js'
import { timelockEncryptText } from '../../src/beacon/tlock.js'
import type {
  BeaconEntry, CardsBody, CommitBody, PledgeBody, Receipt, SignedCommit, SignedNonce, SignedPledge
} from '../../src/core/hand/messages.js'
import { seededSigner } from './log-fixtures.js'

export const QUICKNET = JSON.parse(readFileSync(new URL('../fixtures/drand/quicknet.json', import.meta.url), 'utf8')) as { info: ChainInfo, entries: BeaconEntry[] }
export const CHAIN = parseChainInfo(QUICKNET.info)
/** A recorded quicknet round well past genesis. */
export const ENTRY = QUICKNET.entries.find(e => e.round === 657413)!
export const OTHER_ENTRY = QUICKNET.entries.find(e => e.round === 1000)!

export const DEALER = seededSigner(11)
export const SEAT1 = seededSigner(12)
export const SEAT2 = seededSigner(13)
export const SEATS = [DEALER.peerId, SEAT1.peerId, 'robot', SEAT2.peerId]
export const SECRET = 'a1'.repeat(32)
export const NONCES = ['d0'.repeat(32), 'b1'.repeat(32), '', 'c3'.repeat(32)]
const humanSigners = new Map([[0, DEALER], [1, SEAT1], [3, SEAT2]])

export interface Hand {
  commit: SignedCommit
  pledges: SignedPledge[]
  nonces: SignedNonce[]
  cards: Array<Signed<CardsBody>>
  receipt: Receipt
}

export interface HandOptions {
  /** What the dealer's ciphertext holds (default: the secret). */
  lockedSecret?: string
  /** What each seat's ciphertext holds, by seat (default: its nonce). */
  lockedNonce?: Record<number, string>
  /** Round the ciphertexts are locked to (default: the bound round). */
  lockRound?: number
}

const ciphertexts = new Map<string, Promise<string>>()
/** tlock-js encryption is ~40 ms; the tests reuse ciphertexts of the same value and round. */
export async function lock (text: string, round = ENTRY.round, chain: ChainInfo = CHAIN): Promise<string> {
  const k = `${chain.hash}|${round}|${text}`
  if (!ciphertexts.has(k)) ciphertexts.set(k, timelockEncryptText(text, chain, round))
  return await ciphertexts.get(k)!
}

export async function timelockedHand (options: HandOptions = {}): Promise<Hand> {
  const round = options.lockRound ?? ENTRY.round
  const scheme = getScheme('atout-drand-v1')
  if (scheme.kind !== 'cards') throw new Error('card scheme expected')
  const commitBody: CommitBody = {
    table: 'tl-test',
    hand: 1,
    prev: '0'.repeat(64),
    scheme: 'atout-drand-v1',
    game: 'coinche',
    seats: SEATS,
    dealer: DEALER.peerId,
    params: { dealer: 0 },
    commitment: scheme.commitment(SECRET),
    beacon: { chainHash: CHAIN.hash, round: ENTRY.round, info: QUICKNET.info as unknown as Record<string, unknown> },
    deadline: roundTime(CHAIN, ENTRY.round) - 10_000,
    timelock: await lock(options.lockedSecret ?? SECRET, round)
  }
  const commit = signDocument('commit', commitBody, DEALER)
  const digest = docDigest(commit)
  const pledges: SignedPledge[] = []
  const nonces: SignedNonce[] = []
  for (const [seat, signer] of humanSigners) {
    const body: PledgeBody = {
      table: 'tl-test', hand: 1, commit: digest, seat, nonceHash: sha256Hex(NONCES[seat]),
      timelock: await lock(options.lockedNonce?.[seat] ?? NONCES[seat], round)
    }
    pledges.push(signDocument('pledge', body, signer))
    nonces.push(signDocument('nonce', { table: 'tl-test', hand: 1, commit: digest, seat, nonce: NONCES[seat] }, signer))
  }
  cardSchemeFor(commitBody)
  const { deal } = recomputeDeal(commitBody, SECRET, NONCES, ENTRY, commitBody.params)
  const cards = deal.deliveries.filter(d => d.stage === 'deal' && d.seat === 1).map(d => signDocument('cards', {
    table: 'tl-test', hand: 1, commit: digest, stage: d.stage, seat: d.seat, public: d.public, cards: d.cards, params: { dealer: 0 }
  }, DEALER))
  const reveal = signDocument('reveal', {
    table: 'tl-test', hand: 1, commit: digest, secret: SECRET, nonces, beacon: ENTRY, params: { dealer: 0 }, stages: ['deal']
  }, DEALER)
  return { commit, pledges, nonces, cards, receipt: { v: 1, commit, pledges, reveal, acks: [] } }
}
