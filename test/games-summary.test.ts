// A game (issue 21, docs/games.md "A game"): the played hands of a table added up until a side
// reaches the game's target; the next hand starts a new game; tarot has no target.
import { describe, expect, it } from 'vitest'
import { gameLine, summarizeGames } from '../src/core/games/game-summary.js'

const coinche = (hand: number, a: number, b: number) => ({ table: 't', dealer: 'D', game: 'coinche', hand, points: [a, b, a, b] })

describe('games', () => {
  it("adds each seat's points up to the target, names the winners, then starts the next game", () => {
    const games = summarizeGames([coinche(2, 900, 100), coinche(1, 500, 160), coinche(3, 700, 0), coinche(4, 10, 20), coinche(3, 700, 0)])
    expect(games).toHaveLength(2)
    expect(games[0]).toMatchObject({ hands: [1, 2, 3], totals: [2100, 260, 2100, 260], target: 2000, won: { hand: 3, seats: [0, 2] } })
    expect(games[1]).toMatchObject({ hands: [4], totals: [10, 20, 10, 20], won: null })
    expect(gameLine(games[1])).toBe('game at table t (coinche, to 2000): 1 hand (4–4), seat 0 10, seat 1 20, seat 2 10, seat 3 20; not reached yet')
  })

  it("keeps tables apart, and tarot's totals run on without a target", () => {
    const games = summarizeGames([
      { table: 'a', dealer: 'D', game: 'tarot', hand: 1, points: [150, -50, -50, -50] },
      { table: 'b', dealer: 'D', game: 'belote', hand: 1, points: [1000, 0, 1000, 0] },
      { table: 'a', dealer: 'D', game: 'tarot', hand: 2, points: [-30, 90, -30, -30] }
    ])
    expect(games.map(g => [g.table, g.totals, g.won])).toEqual([['a', [120, 40, -80, -80], null], ['b', [1000, 0, 1000, 0], { hand: 1, seats: [0, 2] }]])
    expect(gameLine(games[0])).toMatch(/no target \(a number of deals\).*totals so far$/)
  })
})
