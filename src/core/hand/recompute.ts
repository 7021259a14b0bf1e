import { getScheme } from '../schemes/registry.js'
import type { CardScheme, Deal, DiceScheme } from '../schemes/types.js'
import { CoreInputError } from '../errors.js'
import { ROBOT, type BeaconEntry, type CommitBody, type DealParams, type SignedNonce } from './messages.js'

/** The card scheme a COMMIT names, or a CoreInputError saying why it cannot deal that table. */
export function cardSchemeFor (commit: CommitBody): CardScheme {
  const found = getScheme(commit.scheme)
  // A dice scheme deals nothing: its hand is a series of rolls drawn during play (docs/games.md "Draws on the chain").
  const scheme = found.kind === 'dice' ? seriesScheme(found) : found
  if (!scheme.games.includes(commit.game)) throw new CoreInputError(`scheme ${commit.scheme} has no game ${commit.game}`)
  if (!scheme.seatsFor(commit.game).includes(commit.seats.length)) {
    throw new CoreInputError(`${commit.game} is not played by ${commit.seats.length} seats`)
  }
  if (scheme.beacon !== (commit.beacon !== null)) {
    throw new CoreInputError(scheme.beacon ? `scheme ${commit.scheme} needs a beacon round` : `scheme ${commit.scheme} takes no beacon`)
  }
  return scheme
}

/** A dice scheme as a hand sees it: the key, and a deal with no cards (every roll is drawn in play). */
function seriesScheme (dice: DiceScheme): CardScheme {
  return {
    ...dice,
    kind: 'cards',
    stagesFor: (game: string) => { dice.seatsFor(game); return [] },
    deck: () => [],
    deal: (game: string, _key: string, options = {}) => ({ scheme: dice.id, game, seats: options.seats ?? 1, dealer: options.dealer ?? 0, deck: [], deliveries: [], hands: undefined })
  }
}

/** Nonces in seat order, the empty string for robots, from the seats' signed NONCE documents. */
export function noncesBySeat (commit: CommitBody, nonces: readonly SignedNonce[]): string[] {
  const out = commit.seats.map(() => '')
  for (const doc of nonces) out[doc.body.seat] = doc.body.nonce
  return out
}

/** Key → deck → deal, exactly as the verifier and every seat recompute it. */
export function recomputeDeal (commit: CommitBody, secret: string, nonces: readonly string[], beacon: BeaconEntry | null, params: DealParams): { key: string, deal: Deal } {
  const scheme = cardSchemeFor(commit)
  const key = scheme.key({
    secret,
    nonces,
    beacon: commit.beacon === null || beacon === null
      ? undefined
      : { chainHash: commit.beacon.chainHash, round: beacon.round, randomness: beacon.randomness }
  })
  const deal = scheme.deal(commit.game, key, { seats: commit.seats.length, dealer: params.dealer, taker: params.taker })
  return { key, deal }
}

export function humanSeats (seats: readonly string[]): number[] {
  const out: number[] = []
  seats.forEach((s, i) => { if (s !== ROBOT) out.push(i) })
  return out
}
