/**
 * A map that keeps at most `capacity` keys, forgetting the oldest first (setting a key it holds
 * changes its value, not its age). What a verifier remembers of checks that passed: memory stays
 * bounded whatever a peer sends.
 */
export class BoundedMap<K, V> {
  readonly #items = new Map<K, V>()
  // The keys in insertion order, as a ring: `#next` is the oldest once full. Asking the Map for
  // its first key instead walks past every slot deleted since V8 last compacted it (1.5 µs an add
  // at 4096 keys, against 0.25 µs with the ring).
  readonly #order: K[] = []
  #next = 0

  constructor (readonly capacity: number) {}

  get size (): number {
    return this.#items.size
  }

  has (key: K): boolean {
    return this.#items.has(key)
  }

  get (key: K): V | undefined {
    return this.#items.get(key)
  }

  /** The entries, oldest first. */
  entries (): IterableIterator<[K, V]> {
    return this.#items.entries()
  }

  set (key: K, value: V): void {
    if (this.capacity < 1) return
    if (!this.#items.has(key)) {
      if (this.#items.size >= this.capacity) this.#items.delete(this.#order[this.#next])
      this.#order[this.#next] = key
      this.#next = (this.#next + 1) % this.capacity
    }
    this.#items.set(key, value)
  }

  clear (): void {
    this.#items.clear()
    this.#order.length = 0
    this.#next = 0
  }
}

/**
 * A set of strings that keeps at most `capacity` of them, forgetting the oldest first. What the
 * verifiers remember of checks that passed (a shuffle proof, a drand signature, a node's signed
 * documents) and a page's login sessions.
 */
export class BoundedSet {
  readonly #items: BoundedMap<string, true>

  constructor (readonly capacity: number) {
    this.#items = new BoundedMap(capacity)
  }

  get size (): number {
    return this.#items.size
  }

  has (item: string): boolean {
    return this.#items.has(item)
  }

  add (item: string): void {
    if (!this.#items.has(item)) this.#items.set(item, true)
  }

  clear (): void {
    this.#items.clear()
  }
}
