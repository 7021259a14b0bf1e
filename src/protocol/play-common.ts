/** What the dealer's and the seats' play share: the PLAY message, its check, and the limits (src/protocol/play.ts). */
import { signDocument, type Signed } from '../core/signed.js'
import type { ActionDoc } from '../core/games/action-chain.js'
import type { PlayRefusal } from '../core/games/play-hand.js'
import { Rejection, type MachineInit } from './types.js'
import type { PlayBody } from './wire.js'

/** PLAY actions kept ahead of their time: a seat's out of order, per hand; the dealer's for hands not dealt yet, in all. */
export const EARLY_KEPT = 64

export const refusalText = (r: PlayRefusal): string => `${r.code}${r.rule === undefined ? '' : ` (${r.rule})`}: ${r.reason}`

export function playDoc (signer: MachineInit['signer'], table: string, hand: number, commit: string, actions: ActionDoc[]): Signed<PlayBody> {
  return signDocument('play', { table, hand, commit, actions: actions as PlayBody['actions'] }, signer)
}

export function checkEnvelope (doc: Signed<unknown>, table: string, verify: (doc: Signed<unknown>) => boolean): PlayBody {
  const body = doc.body as PlayBody
  if (body.table !== table) throw new Rejection(`play for table ${body.table}`)
  if (!verify(doc)) throw new Rejection('play: bad signature')
  return body
}

/** An integer in 0…n−1 from the node's randomness (a human seat's robot: no need to replay it). */
export function randomBelow (random: (bytes: number) => Uint8Array, n: number): number {
  const b = random(6)
  let v = 0
  for (const x of b) v = v * 256 + x
  return v % n
}
