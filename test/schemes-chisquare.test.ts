// Card positions over many shuffles must look uniform: a chi-square test on the card × position
// table. Keys are derived from fixed labels, so the statistic is the same on every run (no flakes);
// the bounds are the 0.1% and 99.9% quantiles, and a deliberately biased shuffle on the same
// number stream must fail them — proof that the test can see a bias of this kind.
import { describe, expect, it } from 'vitest'
import { AtoutStream, atoutPermutation, bitjackShoe, TarotStream, type U32Source } from '../src/core/schemes/index.js'
import { tarotDeck, TAROT_CARDS } from '../src/core/schemes/index.js'
import { sha256Hex } from '../src/core/bytes.js'

/** Wilson–Hilferty: the p-quantile of chi-square with k degrees of freedom, from the normal z_p. */
function chiSquareQuantile (k: number, z: number): number {
  const a = 2 / (9 * k)
  return k * (1 - a + z * Math.sqrt(a)) ** 3
}
const Z_999 = 3.0902

/** Σ (observed − expected)² / expected over a table whose rows each sum to `total`. */
function chiSquare (counts: Float64Array, rows: number, cols: number, expectedOf: (row: number) => number): number {
  let x = 0
  for (let r = 0; r < rows; r++) {
    const e = expectedOf(r)
    for (let c = 0; c < cols; c++) {
      const d = counts[r * cols + c] - e
      x += d * d / e
    }
  }
  return x
}

function positionTable (n: number, samples: number, shuffle: (i: number) => ArrayLike<number>): Float64Array {
  const counts = new Float64Array(n * n)
  for (let i = 0; i < samples; i++) {
    const perm = shuffle(i)
    for (let pos = 0; pos < n; pos++) counts[perm[pos] * n + pos]++
  }
  return counts
}

/** The classic mistake: swap every position with any position. Biased for n > 2. */
function naiveShuffle (n: number, source: U32Source): Uint16Array {
  const a = new Uint16Array(n)
  for (let i = 0; i < n; i++) a[i] = i
  for (let i = 0; i < n; i++) {
    const j = source.next() % n
    const t = a[i]; a[i] = a[j]; a[j] = t
  }
  return a
}

/**
 * Bounds for the card × position statistic over shuffles of n positions. Each shuffle fills a whole
 * row and column, so cells are correlated: the statistic tends to (n/(n−1))·χ² with (n−1)² degrees
 * of freedom (the covariance of a random permutation matrix, restricted to tables whose rows and
 * columns sum to zero, is (1/(n−1))·I against an expected count of 1/n per shuffle). `rows` differs
 * from n when a shoe holds each value several times; the factor stays n/(n−1).
 */
function bounds (n: number, rows = n): { low: number, high: number } {
  const k = (rows - 1) * (n - 1)
  const scale = n / (n - 1)
  return { low: scale * chiSquareQuantile(k, -Z_999), high: scale * chiSquareQuantile(k, Z_999) }
}

describe('chi-square of card positions', () => {
  it('atout-v1: 32 cards, 6400 shuffles', () => {
    const n = 32
    const samples = 6400
    const { low, high } = bounds(n)
    const good = chiSquare(positionTable(n, samples, i => atoutPermutation(sha256Hex(`chi-atout:${i}`))), n, n, () => samples / n)
    expect(good).toBeGreaterThan(low)
    expect(good).toBeLessThan(high)
    const bad = chiSquare(positionTable(n, samples, i => naiveShuffle(n, new AtoutStream(sha256Hex(`chi-atout:${i}`)))), n, n, () => samples / n)
    expect(bad).toBeGreaterThan(high)
  })

  it('tarot-v1: 78 cards, 2000 shuffles', () => {
    const n = 78
    const samples = 2000
    const { low, high } = bounds(n)
    const index = new Map(TAROT_CARDS.map((c, i) => [c, i]))
    const good = chiSquare(positionTable(n, samples, i => tarotDeck(String(i)).map(c => index.get(c)!)), n, n, () => samples / n)
    expect(good).toBeGreaterThan(low)
    expect(good).toBeLessThan(high)
    const bad = chiSquare(positionTable(n, samples, i => naiveShuffle(n, new TarotStream(String(i)))), n, n, () => samples / n)
    expect(bad).toBeGreaterThan(high)
  })

  it('bitjack21: a 52-card shoe, 5200 shuffles, and value × position in an 8-deck shoe', () => {
    const n = 52
    const samples = 5200
    const { low, high } = bounds(n)
    const good = chiSquare(positionTable(n, samples, i => bitjackShoe(`chi-${i}`, 'r2', n)), n, n, () => samples / n)
    expect(good).toBeGreaterThan(low)
    expect(good).toBeLessThan(high)

    // 416 cards, each value 8 times: 52 values × 416 positions
    const shoes = 600
    const counts = new Float64Array(52 * 416)
    for (let i = 0; i < shoes; i++) {
      const shoe = bitjackShoe(`chi8-${i}`, 'r2', 416)
      for (let pos = 0; pos < 416; pos++) counts[shoe[pos] * 416 + pos]++
    }
    const x = chiSquare(counts, 52, 416, () => shoes * 8 / 416)
    const shoeBounds = bounds(416, 52)
    expect(x).toBeGreaterThan(shoeBounds.low)
    expect(x).toBeLessThan(shoeBounds.high)
  })

  it('the quantile approximation is sane (chi-square with 100 d.f.: 99.9% ≈ 149.45)', () => {
    expect(chiSquareQuantile(100, Z_999)).toBeCloseTo(149.45, 0)
  })
})
