// The bounded set and map the verifiers remember passed checks in: at most `capacity` items, the oldest
// forgotten first, whatever order items come in and however often they repeat.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { BoundedMap, BoundedSet } from '../src/core/bounded-set.js'

describe('BoundedSet', () => {
  it('forgets the oldest first; adding an item it holds changes nothing', () => {
    const s = new BoundedSet(3)
    for (const x of ['a', 'b', 'c', 'd']) s.add(x)
    expect(['a', 'b', 'c', 'd'].map(x => s.has(x))).toEqual([false, true, true, true])
    s.add('b')
    s.add('e')
    expect(['b', 'c', 'd', 'e'].map(x => s.has(x))).toEqual([false, true, true, true])
    expect(s.size).toBe(3)
    s.clear()
    expect(s.size).toBe(0)
    for (const x of ['f', 'g', 'h', 'i']) s.add(x)
    expect(['f', 'g', 'h', 'i'].map(x => s.has(x))).toEqual([false, true, true, true])
  })

  it('holds exactly what a first-in first-out list of `capacity` distinct items would (fast-check, fixed seed)', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 8 }), fc.array(fc.oneof(fc.constantFrom('clear'), fc.integer({ min: 0, max: 20 }).map(String)), { maxLength: 200 }), (capacity, ops) => {
      const s = new BoundedSet(capacity)
      let model: string[] = []
      for (const op of ops) {
        if (op === 'clear') { s.clear(); model = []; continue }
        s.add(op)
        if (!model.includes(op)) model = [...model, op].slice(-capacity)
        expect(s.size).toBe(model.length)
      }
      for (let i = 0; i <= 20; i++) expect(s.has(String(i))).toBe(model.includes(String(i)))
    }), { seed: 24, numRuns: 300 })
  })

  it('BoundedMap: setting a key it holds changes its value, not its age', () => {
    const m = new BoundedMap<string, number>(2)
    m.set('a', 1)
    m.set('b', 2)
    m.set('a', 3)
    expect(m.get('a')).toBe(3)
    m.set('c', 4)
    expect([m.has('a'), m.get('b'), m.get('c'), m.size]).toEqual([false, 2, 4, 2])
  })
})
