import { hmac } from '@noble/hashes/hmac.js'
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js'
import { fromHex, sha256Hex, toHex, utf8 } from '../bytes.js'
import { CoreInputError } from '../errors.js'
import { checkKey, plainKeyText, preview, secretCommitment } from './inputs.js'
import { getInt, Xoshiro256StarStar } from './xoshiro256starstar.js'
import type { DiceRoll, DiceScheme, KeyInputs } from './types.js'

export const MAX_DICE = 1000
/** 10^12 sides at most, so that 1000 dice still sum to a safe integer. */
export const MAX_SIDES = 1_000_000_000_000

export interface RollExpression {
  count: number
  sides: number
  /** Canonical spelling, e.g. '3d20': what the engine seed is derived from. */
  text: string
}

/** `NdS`: N dice (1..1000) of S sides (2..10^12), decimal without leading zeros, lowercase d. */
export function parseRoll (expression: unknown): RollExpression {
  const m = typeof expression === 'string' ? /^([1-9][0-9]*)d([1-9][0-9]*)$/.exec(expression) : null
  if (m === null) throw new CoreInputError(`a roll is written NdS, e.g. 3d20 (N dice of S sides), got ${preview(expression)}`)
  const count = Number(m[1])
  const sides = Number(m[2])
  if (count > MAX_DICE) throw new CoreInputError(`a roll has at most ${MAX_DICE} dice, got ${m[1]}`)
  if (sides < 2 || sides > MAX_SIDES) throw new CoreInputError(`a die has 2 to ${MAX_SIDES} sides, got ${m[2]}`)
  return { count, sides, text: `${count}d${sides}` }
}

/** Rolls on an engine seeded with exactly these 32 bytes: getInt(1, S) N times, in order. */
export function rollWithEngineSeed (engineSeed: Uint8Array, expression: string): { rolls: number[], total: number, roll: RollExpression } {
  const roll = parseRoll(expression)
  const engine = new Xoshiro256StarStar(engineSeed)
  const rolls: number[] = []
  let total = 0
  for (let i = 0; i < roll.count; i++) {
    const v = getInt(engine, 1, roll.sides)
    rolls.push(v)
    total += v
  }
  return { rolls, total, roll }
}

/** dice-v1's engine seed: HMAC-SHA256 keyed with the 32 key bytes over the canonical expression. */
export function diceEngineSeed (key: string, expression: string): Uint8Array {
  const keyBytes = fromHex(key, 'dice-v1 key', 32)
  return hmac(nobleSha256, keyBytes, utf8(parseRoll(expression).text))
}

export function diceKeyText (inputs: KeyInputs): string {
  return plainKeyText('dice-v1', inputs)
}

/** Anyone at the table may contribute; 1 to 16 seats. */
const SEAT_COUNTS: readonly number[] = Object.freeze(Array.from({ length: 16 }, (_, i) => i + 1))

export const diceV1: DiceScheme = Object.freeze({
  kind: 'dice' as const,
  id: 'dice-v1',
  version: 1,
  title: 'dice-v1: NdS dice rolled with PHP\'s Xoshiro256** and Randomizer::getInt from a commit-reveal key',
  beacon: false,
  family: 'commit-reveal',
  games: Object.freeze(['dice']),
  seatsFor: (game: string) => {
    if (game !== 'dice') throw new CoreInputError(`dice-v1 has no game ${preview(game)} (it has dice)`)
    return SEAT_COUNTS
  },
  commitment: (secret: string, salt?: string) => secretCommitment('dice-v1', secret, salt),
  keyText: diceKeyText,
  key: (inputs: KeyInputs) => sha256Hex(diceKeyText(inputs)),
  roll: (key: string, expression: string): DiceRoll => {
    const seed = diceEngineSeed(checkKey(key), expression)
    const { rolls, total, roll } = rollWithEngineSeed(seed, expression)
    return { scheme: 'dice-v1', expression: roll.text, count: roll.count, sides: roll.sides, engineSeed: toHex(seed), rolls, total }
  }
})
