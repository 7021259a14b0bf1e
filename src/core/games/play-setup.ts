/**
 * From a scheme's deal to a game's hand (docs/games.md, "Playing a dealt hand"): the setup an
 * engine starts from, the cards of a stage the engine asks for, and the robots' randomness drawn
 * from the hand's key. The dealer's node, every seat's node and the verifier build a hand from the
 * same deal with these functions, so they reach the same states. Pure.
 */
import { sha256, utf8 } from '../bytes.js'
import type { Delivery } from '../schemes/types.js'
import type { GameSetup, StageRequest } from './types.js'

/** The games a table plays card by card (their engines run on a card deal). */
export const PLAYED_CARD_GAMES: ReadonlySet<string> = new Set(['coinche', 'belote', 'duo', 'tarot'])

/**
 * The setup of a hand from the deliveries of the deal's first stages: `hands[s]` is seat s's
 * private `deal` delivery (an empty list where it is not known, a seat's view), `table` the public
 * cards of those stages by stage name (belote's `turnUp`).
 */
export function setupFromDeliveries (game: string, seats: number, dealer: number, deliveries: readonly Delivery[]): GameSetup {
  const hands: string[][] = Array.from({ length: seats }, () => [])
  const table: Record<string, string[]> = {}
  for (const d of deliveries) {
    if (d.stage !== 'deal' && d.stage !== 'turnUp') continue
    if (!d.public && d.seat !== null) hands[d.seat] = [...d.cards]
    else table[d.stage] = [...(table[d.stage] ?? []), ...d.cards]
  }
  return { game, seats, dealer, hands, ...(Object.keys(table).length > 0 ? { table } : {}) }
}

/**
 * The cards of `request.stage` as an engine's `deliver` takes them: each seat's delivery under its
 * seat number (`"0"`, `"1"`, …), a public delivery with no seat under the stage's name (tarot's
 * `dog`). Null when the deal holds no delivery of that stage.
 */
export function stageCards (deliveries: readonly Delivery[], request: StageRequest): Record<string, string[]> | null {
  const out: Record<string, string[]> = {}
  for (const d of deliveries) {
    if (d.stage !== request.stage) continue
    const k = d.seat === null ? d.stage : String(d.seat)
    out[k] = [...(out[k] ?? []), ...d.cards]
  }
  return Object.keys(out).length === 0 ? null : out
}

/**
 * A robot's randomness for action `n` of a hand: `random(k)` returns, for its i-th call (i = 0, 1,
 * …), the first 6 bytes of SHA-256 over the ASCII text `fairdeal/v1/robot|<key>|<n>|<i>`, read as a
 * big-endian integer, modulo k. Anyone holding the revealed key replays a robot's choice.
 */
export function robotRandom (key: string, n: number): (k: number) => number {
  let i = 0
  return (k: number) => {
    if (!Number.isSafeInteger(k) || k < 1) throw new RangeError(`robot randomness over ${k} choices`)
    const d = sha256(utf8(`fairdeal/v1/robot|${key}|${n}|${i++}`))
    let v = 0
    for (let j = 0; j < 6; j++) v = v * 256 + d[j]
    return v % k
  }
}
