// Known-answer hands (test/fixtures/games/*.json, worked out by hand from the rules in docs/games.md)
// replayed through the engines: every action accepted, every trick's winner and points, the side
// totals and the final score as written; the illegal actions listed refused with their codes.
import { readFileSync, readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { engines } from '../src/core/games/index.js'
import type { GameEngine, GameSetup } from '../src/core/games/types.js'

interface Fixture {
  game: string
  setup: GameSetup
  steps: ({ seat: number, action: unknown } | { deliver: string, expectInputs?: Record<string, number>, cards: Record<string, string[]> })[]
  tricks: { winner: number, points: number }[]
  cardPoints: number[]
  score: number[]
  made: boolean
  /** The side credited with belote-rebelote, or null. */
  belote: number | null
  illegal?: { after: number, seat: number, action: unknown, code: string }[]
}

const dir = new URL('./fixtures/games/', import.meta.url)
const files = readdirSync(dir).filter((f) => /^(coinche|belote|duo)-.*\.json$/.test(f))

describe('known-answer games', () => {
  it('has at least two fixtures for each game', () => {
    expect(files.filter((f) => f.startsWith('coinche-')).length).toBeGreaterThanOrEqual(2)
    expect(files.filter((f) => f.startsWith('belote-')).length).toBeGreaterThanOrEqual(2)
    expect(files.filter((f) => f.startsWith('duo-')).length).toBeGreaterThanOrEqual(2)
  })
  for (const file of files) {
    it(file, () => {
      const fx = JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as Fixture
      const engine = engines[fx.game] as GameEngine<any, any>
      let state = engine.start(fx.setup)
      const states = [state]
      for (const step of fx.steps) {
        if ('deliver' in step) {
          expect(engine.pendingStage(state)).toEqual({ stage: step.deliver, inputs: step.expectInputs })
          const r = engine.deliver(state, step.deliver, step.cards)
          if (!r.ok) throw new Error(`${file}: delivery refused: ${r.code} ${r.message}`)
          state = r.state
        } else {
          expect(engine.toAct(state)).toBe(step.seat)
          expect(engine.legal(state, step.seat)).toContainEqual(step.action)
          const r = engine.apply(state, step.seat, step.action)
          if (!r.ok) throw new Error(`${file}: step ${states.length - 1} refused: ${r.code} ${r.message}`)
          state = r.state
        }
        states.push(state)
      }
      expect(engine.isOver(state)).toBe(true)
      expect(engine.toAct(state)).toBe(null)
      const score = engine.score(state)
      expect(score.points).toEqual(fx.score)
      expect((score.detail as { made: boolean }).made).toBe(fx.made)
      expect((score.detail as { cardPoints: number[] }).cardPoints).toEqual(fx.cardPoints)
      expect(score.detail.beloteSide).toBe(fx.belote)
      const tricks = (state.play.tricks as { winner: number, points: number }[]).map((t) => ({ winner: t.winner, points: t.points }))
      expect(tricks).toEqual(fx.tricks)
      for (const bad of fx.illegal ?? []) {
        const r = engine.apply(states[bad.after], bad.seat, bad.action)
        expect(r.ok ? 'accepted' : r.code).toBe(bad.code)
      }
    })
  }
})
