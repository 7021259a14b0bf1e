import { hmac } from '@noble/hashes/hmac.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { fromHex, toHex, utf8 } from '../bytes.js'
import { checkKey } from '../schemes/inputs.js'
import { parseRoll, rollWithEngineSeed } from '../schemes/dice.js'

/**
 * Numbered rolls under one dice-v1 key (docs/games.md "## Dice"). Roll n (n = 0, 1, 2, …) of the
 * expression `NdS` takes its engine seed from HMAC-SHA256 keyed with the 32 key bytes over the
 * ASCII text `NdS:n` (n in decimal, no leading zeros), then rolls exactly as dice-v1 does on that
 * seed: N calls of PHP's Randomizer::getInt(1, S) on Xoshiro256**. This is the "server seed,
 * client seed : nonce" shape of the verifiable dice sites (FairRoller::roll($pool, $seed,
 * $clientSeed, $nonce)) with the expression in the client seed's place; their exact message is not
 * published (see /work/shared/vectors/README.md), so only the engine is pinned to theirs.
 */

export interface SeriesRoll {
  n: number
  expression: string
  engineSeed: string
  rolls: number[]
  total: number
}

export function checkRollNumber (n: unknown): number {
  if (!Number.isSafeInteger(n) || (n as number) < 0) throw new RangeError(`a roll number is a non-negative integer, got ${String(n)}`)
  return n as number
}

export function seriesEngineSeed (key: string, n: number, expression: string): Uint8Array {
  const text = `${parseRoll(expression).text}:${checkRollNumber(n)}`
  return hmac(sha256, fromHex(checkKey(key), 'dice-v1 key', 32), utf8(text))
}

/** Roll n of `expression` under `key`. */
export function seriesRoll (key: string, n: number, expression: string): SeriesRoll {
  const seed = seriesEngineSeed(key, n, expression)
  const { rolls, total, roll } = rollWithEngineSeed(seed, expression)
  return { n, expression: roll.text, engineSeed: toHex(seed), rolls, total }
}

export interface SeriesProblem { index: number, code: 'roll-skipped' | 'roll-repeated' | 'roll-mismatch' | 'bad-roll', message: string }

/**
 * Checks a series against its revealed key: the numbers run 0, 1, 2, … with none skipped or
 * repeated, and every roll's dice are the ones its key, number and expression give. Returns the
 * first problem, or null.
 */
export function checkSeries (key: string, series: ReadonlyArray<{ n: number, expression: string, rolls: readonly number[] }>): SeriesProblem | null {
  for (const [index, r] of series.entries()) {
    if (r.n !== index) {
      const code = Number.isSafeInteger(r.n) && r.n < index ? 'roll-repeated' : 'roll-skipped'
      return { index, code, message: `roll ${index} is numbered ${String(r.n)}` }
    }
    let expected: SeriesRoll
    try { expected = seriesRoll(key, r.n, r.expression) } catch (e) { return { index, code: 'bad-roll', message: (e as Error).message } }
    if (expected.rolls.length !== r.rolls.length || expected.rolls.some((v, i) => v !== r.rolls[i])) {
      return { index, code: 'roll-mismatch', message: `roll ${index} (${expected.expression}) is ${expected.rolls.join(' ')} under the key, not ${r.rolls.join(' ')}` }
    }
  }
  return null
}
