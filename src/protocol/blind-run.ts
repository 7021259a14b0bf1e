/**
 * A whole blind-v1 hand played by every party in one process, step by step as the table does it
 * (keys, shuffles in seat order each checked before the next, decryption shares for each delivery
 * checked by the receiver, hand keys, reveal, countersignatures). Used by tests and benchmarks as the
 * reference run; the networked machines follow the same steps with the same functions.
 */
import { type Ciphertext, type Point, randomScalar, type RandomBytes } from '../core/blind/index.js'
import {
  BLIND_COMMITMENT, beaconPermutation, blindJointKey, blindLayout, blindStartingDeck, checkBkey, checkBshares,
  checkBshuffle, dealtDeck, openPosition
} from '../core/hand/blind.js'
import type { BlindReceipt, SignedBkey, SignedBshuffle } from '../core/hand/blind-messages.js'
import { docDigest, seatCardsDigest } from '../core/hand/digest.js'
import { ROBOT, type BeaconBinding, type BeaconEntry, type CommitBody, type DealParams } from '../core/hand/messages.js'
import type { Signer } from '../core/identity.js'
import type { Delivery } from '../core/schemes/types.js'
import { signDocument } from '../core/signed.js'
import { makeBkey, makeBsecret, makeBshares, makeBshuffle } from './blind-docs.js'

export interface BlindRunInit {
  table: string
  hand: number
  game: string
  dealer: Signer
  /** One per seat: the seat's signer, or 'robot' (played by the dealer). */
  seats: ReadonlyArray<Signer | typeof ROBOT>
  params: DealParams
  random: RandomBytes
  beacon?: { binding: BeaconBinding, entry: BeaconEntry }
  deadline?: number
  /** Stages to deal (default: every stage of the game that the params allow). */
  stages?: string[]
}

export interface BlindRun {
  receipt: BlindReceipt
  /** What each seat opened, delivery by delivery. */
  deliveries: Delivery[]
  /** Scalar multiplications are not counted here; see scripts/bench/blind.ts. */
  timings: { keys: number, shuffles: number[], deal: number, reveal: number }
}

export function playBlindHand (init: BlindRunInit): BlindRun {
  const signerOf = (seat: number): Signer => { const s = init.seats[seat]; return s === ROBOT ? init.dealer : s }
  const body: CommitBody = {
    table: init.table,
    hand: init.hand,
    prev: '0'.repeat(64),
    scheme: 'blind-v1',
    game: init.game,
    seats: init.seats.map(s => s === ROBOT ? ROBOT : s.peerId),
    dealer: init.dealer.peerId,
    params: { dealer: init.params.dealer },
    commitment: BLIND_COMMITMENT,
    beacon: init.beacon?.binding ?? null,
    deadline: init.deadline ?? 4_000_000_000_000
  }
  const commitDoc = signDocument('commit', body, init.dealer)
  const h = { commit: body, digest: docDigest(commitDoc) }
  const n = body.seats.length
  const now = (): number => performance.now()

  let t = now()
  const xs = body.seats.map(() => randomScalar(init.random))
  const keys: SignedBkey[] = xs.map((x, seat) => makeBkey(h, seat, signerOf(seat), x, init.random))
  const pubs: Point[] = keys.map(k => {
    const r = checkBkey(body, h.digest, k)
    if ('problem' in r) throw new Error(r.problem)
    return r.pub
  })
  const pk = blindJointKey(pubs)
  const keysMs = now() - t

  const shuffles: SignedBshuffle[] = []
  const shuffleMs: number[] = []
  let deck: Ciphertext[] = blindStartingDeck(body.game)
  for (let seat = 0; seat < n; seat++) {
    t = now()
    const { doc } = makeBshuffle(h, seat, signerOf(seat), pk, deck, init.random)
    const r = checkBshuffle(body, h.digest, doc, pk, deck)
    if ('problem' in r) throw new Error(r.problem)
    shuffles.push(doc)
    deck = r.deck
    shuffleMs.push(now() - t)
  }

  t = now()
  const sigma = beaconPermutation(init.beacon?.entry.randomness ?? null, docDigest(shuffles[n - 1]), deck.length)
  const dealt = dealtDeck(deck, sigma)
  const layout = blindLayout(body, init.params)
  const stages = init.stages ?? [...new Set(layout.map(d => d.stage))]
  const deliveries: Delivery[] = []
  for (const d of layout.filter(l => stages.includes(l.stage))) {
    // Every seat but the owner sends its shares (all seats for public cards); the owner adds its own.
    const shares = new Map<number, Point[]>(d.positions.map(p => [p, []]))
    for (let seat = 0; seat < n; seat++) {
      if (!d.public && seat === d.seat) continue
      const doc = makeBshares(h, seat, signerOf(seat), xs[seat], dealt, d.positions, d.stage, d.seat, init.random)
      const r = checkBshares(body, h.digest, doc, pubs[seat], dealt, d.positions)
      if ('problem' in r) throw new Error(r.problem)
      for (const [p, point] of r.shares) shares.get(p)?.push(point)
    }
    if (!d.public && d.seat !== null) for (const p of d.positions) shares.get(p)?.push(dealt[p].b.multiply(xs[d.seat]))
    deliveries.push({ stage: d.stage, seat: d.seat, public: d.public, cards: d.positions.map(p => openPosition(body.game, dealt[p], shares.get(p) ?? [])) })
  }
  const dealMs = now() - t

  t = now()
  const secrets = xs.map((x, seat) => makeBsecret(h, seat, signerOf(seat), x))
  const reveal = signDocument('breveal', {
    table: body.table, hand: body.hand, commit: h.digest, beacon: init.beacon?.entry ?? null, params: init.params, stages, secrets
  }, init.dealer)
  const revealDigest = docDigest(reveal)
  const acks = body.seats.flatMap((s, seat) => s === ROBOT
    ? []
    : [signDocument('ack', { table: body.table, hand: body.hand, commit: h.digest, reveal: revealDigest, seat, cards: seatCardsDigest(deliveries, seat, stages) }, signerOf(seat))])
  const revealMs = now() - t
  return {
    receipt: { v: 2, commit: commitDoc, keys, shuffles, reveal, acks },
    deliveries,
    timings: { keys: keysMs, shuffles: shuffleMs, deal: dealMs, reveal: revealMs }
  }
}
