import { parseRoll } from '../schemes/dice.js'
import { checkSeries, seriesRoll } from './dice-series.js'
import type { GameEngine, GameScore, GameSetup, GameStep, StageRequest } from './types.js'

/**
 * A dice table (docs/games.md "## Dice"): seats ask for numbered rolls of `NdS` expressions under
 * the hand's one dice-v1 key; the dealer, who alone knows the key until the reveal, delivers each
 * roll's dice (stage `roll`); the series ends when its length is reached or a seat ends it, and the
 * key is then revealed (stage `reveal`), which checks every roll (dice-series.ts).
 *
 * Options: `rule` 'any' (default: any seat may roll at any time) or 'turns' (seats roll in seat
 * order 0, 1, 2, … and only the seat whose turn it is may roll or end the series); `rolls`, the
 * series' length, 1 to 1,000 (default 20).
 */

export type DiceAction = { type: 'roll', n: number, expression: string } | { type: 'end' }

export interface DiceRollRecord { n: number, seat: number, expression: string, rolls: number[], total: number }

export interface DiceState {
  seats: number
  rule: 'any' | 'turns'
  length: number
  rolls: DiceRollRecord[]
  /** A roll asked for and not yet delivered. */
  asked: { n: number, seat: number, expression: string } | null
  /** The seat whose turn it is under 'turns'; under 'any', the seat after the last roller. */
  turn: number
  phase: 'rolling' | 'reveal' | 'over'
  key: string | null
}

export const MAX_SERIES = 1000

function refuse (code: string, message: string): GameStep<DiceState> {
  return { ok: false, code, message }
}

function start (setup: GameSetup): DiceState {
  if (setup.game !== 'dice') throw new Error(`dice engine: game ${setup.game}`)
  if (!Number.isInteger(setup.seats) || setup.seats < 1 || setup.seats > 16) throw new Error(`dice: 1 to 16 seats, not ${setup.seats}`)
  const rule = setup.options?.rule ?? 'any'
  if (rule !== 'any' && rule !== 'turns') throw new Error(`dice: the rule is 'any' or 'turns', not ${String(rule)}`)
  const length = setup.options?.rolls ?? 20
  if (!Number.isInteger(length) || (length as number) < 1 || (length as number) > MAX_SERIES) throw new Error(`dice: a series of 1 to ${MAX_SERIES} rolls`)
  return { seats: setup.seats, rule, length: length as number, rolls: [], asked: null, turn: 0, phase: 'rolling', key: null }
}

function apply (state: DiceState, seat: number, action: DiceAction): GameStep<DiceState> {
  if (typeof action !== 'object' || action === null) return refuse('bad-action', 'an action is an object with a type')
  if (state.phase !== 'rolling') return refuse('hand-over', 'the series is over')
  if (!Number.isInteger(seat) || seat < 0 || seat >= state.seats) return refuse('bad-seat', `no seat ${seat}`)
  if (state.asked !== null) return refuse('awaiting-stage', `roll ${state.asked.n} is not delivered yet`)
  if (state.rule === 'turns' && seat !== state.turn) return refuse('not-your-turn', `seat ${state.turn} rolls now, not seat ${seat}`)
  if (action.type === 'end') {
    return { ok: true, state: { ...state, phase: 'reveal' } }
  }
  if (action.type !== 'roll') return refuse('bad-action', `no dice action ${String((action as { type: unknown }).type)}`)
  const expected = state.rolls.length
  if (action.n !== expected) {
    const repeated = Number.isSafeInteger(action.n) && action.n < expected
    return refuse(repeated ? 'roll-repeated' : 'roll-skipped', `the next roll is number ${expected}, not ${String(action.n)}`)
  }
  let expression: string
  try { expression = parseRoll(action.expression).text } catch (e) { return refuse('bad-expression', (e as Error).message) }
  if (expression !== action.expression) return refuse('bad-expression', `write ${expression}`)
  return { ok: true, state: { ...state, asked: { n: expected, seat, expression } } }
}

function deliver (state: DiceState, stage: string, cards: Record<string, string[]>): GameStep<DiceState> {
  if (stage === 'roll') {
    const asked = state.asked
    if (asked === null) return refuse('stage-not-asked', 'no roll is asked for')
    const { count, sides } = parseRoll(asked.expression)
    const values = (cards.dice ?? []).map(Number)
    if ((cards.n ?? []).join() !== String(asked.n)) return refuse('bad-stage', `the delivery must name roll ${asked.n}`)
    if (values.length !== count || values.some(v => !Number.isSafeInteger(v) || v < 1 || v > sides)) {
      return refuse('bad-stage', `roll ${asked.n} is ${count} dice of 1 to ${sides}`)
    }
    const rolls = [...state.rolls, { ...asked, rolls: values, total: values.reduce((a, b) => a + b, 0) }]
    const done = rolls.length >= state.length
    return { ok: true, state: { ...state, rolls, asked: null, turn: (asked.seat + 1) % state.seats, phase: done ? 'reveal' : 'rolling' } }
  }
  if (stage === 'reveal') {
    if (state.phase !== 'reveal') return refuse('stage-not-asked', 'the key is revealed when the series ends')
    const key = (cards.key ?? [])[0]
    let problem
    try { problem = checkSeries(key, state.rolls) } catch (e) { return refuse('bad-stage', (e as Error).message) }
    if (problem !== null) return refuse(problem.code, problem.message)
    return { ok: true, state: { ...state, key, phase: 'over' } }
  }
  return refuse('bad-stage', `dice has no stage ${stage}`)
}

function pendingStage (s: DiceState): StageRequest | null {
  if (s.asked !== null) return { stage: 'roll', inputs: { n: s.asked.n, seat: s.asked.seat } }
  if (s.phase === 'reveal') return { stage: 'reveal' }
  return null
}

function toAct (s: DiceState): number | null {
  return s.phase === 'rolling' && s.asked === null ? s.turn : null
}

function legal (s: DiceState, seat: number): DiceAction[] {
  if (s.phase !== 'rolling' || s.asked !== null) return []
  if (s.rule === 'turns' && seat !== s.turn) return []
  // Any NdS may be rolled: the list holds the usual ones, the robot's choices.
  return [...['1d6', '2d6', '1d20', '1d100'].map(expression => ({ type: 'roll' as const, n: s.rolls.length, expression })), { type: 'end' }]
}

function score (s: DiceState): GameScore {
  if (s.phase !== 'over') throw new Error('the dice series is not over')
  const points = Array(s.seats).fill(0) as number[]
  for (const r of s.rolls) points[r.seat] += r.total
  return {
    points,
    summary: `${s.rolls.length} roll${s.rolls.length === 1 ? '' : 's'}: ` + s.rolls.map(r => `#${r.n} seat ${r.seat} ${r.expression} = ${r.total}`).join(', '),
    detail: { key: s.key, rolls: s.rolls }
  }
}

function robot (s: DiceState, seat: number, random: (n: number) => number): DiceAction {
  const moves = legal(s, seat).filter(m => m.type === 'roll')
  if (moves.length === 0) throw new Error(`seat ${seat} may not roll now`)
  return moves[random(moves.length)]
}

export const dice: GameEngine<DiceState, DiceAction> = { id: 'dice', start, apply, deliver, toAct, pendingStage, legal, isOver: s => s.phase === 'over', score, robot }

/** The delivery of roll `n` as the dealer computes it from the key: `{ n: [n], dice: [...] }`. */
export function rollDelivery (key: string, n: number, expression: string): Record<string, string[]> {
  return { n: [String(n)], dice: seriesRoll(key, n, expression).rolls.map(String) }
}
