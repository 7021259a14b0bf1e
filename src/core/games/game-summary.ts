/**
 * A game: the played hands of one table, their scores added up until a side reaches the game's
 * target (docs/games.md "A game"). Pure; `fairdeal log show` prints it from the receipts of a log
 * that verify.
 */

/**
 * The score a game is played to, the first side to reach it winning: coinche 2000 (the usual club
 * rule: "la première équipe atteignant 2000 points ou plus gagne la partie"), belote and duo 1000.
 * Tarot has none: its deals sum to zero, and a game is the number of deals agreed at the table.
 */
export const GAME_TARGETS: Readonly<Record<string, number | null>> = Object.freeze({ coinche: 2000, belote: 1000, duo: 1000, tarot: null })

/** A played hand's score, as a verified receipt carries it (`play.score.points`, one per seat). */
export interface ScoredHand {
  table: string
  dealer: string
  game: string
  hand: number
  points: readonly number[]
}

export interface GameSummary {
  table: string
  dealer: string
  game: string
  /** The hands counted, in order. */
  hands: number[]
  /** Each seat's points, added up over those hands (partners at coinche and belote score alike). */
  totals: number[]
  target: number | null
  /** Once some seat reached the target: the hand at which, and the seats with the highest total then. */
  won: { hand: number, seats: number[] } | null
}

/**
 * The games of `hands`: per table (and its dealer), in hand order, the totals from the first hand
 * until one reaches the target; the next hand starts the next game. A hand counted twice (two logs
 * merged) counts once.
 */
export function summarizeGames (hands: readonly ScoredHand[]): GameSummary[] {
  const byTable = new Map<string, ScoredHand[]>()
  for (const h of hands) {
    const key = JSON.stringify([h.dealer, h.table])
    const list = byTable.get(key) ?? []
    if (!list.some(x => x.hand === h.hand)) list.push(h)
    byTable.set(key, list)
  }
  const games: GameSummary[] = []
  for (const list of byTable.values()) {
    list.sort((a, b) => a.hand - b.hand)
    let current: GameSummary | undefined
    for (const h of list) {
      if (current === undefined || current.won !== null) {
        current = { table: h.table, dealer: h.dealer, game: h.game, hands: [], totals: h.points.map(() => 0), target: GAME_TARGETS[h.game] ?? null, won: null }
        games.push(current)
      }
      const g = current
      g.hands.push(h.hand)
      g.totals = g.totals.map((t, i) => t + (h.points[i] ?? 0))
      if (g.target !== null && g.totals.some(t => t >= g.target!)) {
        const best = Math.max(...g.totals)
        g.won = { hand: h.hand, seats: g.totals.flatMap((t, i) => (t === best ? [i] : [])) }
      }
    }
  }
  return games
}

/** One line for a game, as `fairdeal log show` prints it. */
export function gameLine (g: GameSummary): string {
  const totals = g.totals.map((t, i) => `seat ${i} ${t}`).join(', ')
  const to = g.target === null ? 'no target (a number of deals)' : `to ${g.target}`
  const end = g.won !== null ? `won at hand ${g.won.hand} by seat ${g.won.seats.join(' and ')}` : g.target === null ? 'totals so far' : 'not reached yet'
  return `game at table ${g.table} (${g.game}, ${to}): ${g.hands.length} hand${g.hands.length === 1 ? '' : 's'} (${g.hands[0]}–${g.hands[g.hands.length - 1]}), ${totals}; ${end}`
}
