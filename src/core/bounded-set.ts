/**
 * A set of strings that keeps at most `capacity` of them, forgetting the oldest first. What the
 * verifiers remember of checks that passed (a shuffle proof, a drand signature, a node's signed
 * documents) and a page's login sessions: memory stays bounded whatever a peer sends.
 */
export class BoundedSet {
  readonly #items = new Set<string>()

  constructor (readonly capacity: number) {}

  get size (): number {
    return this.#items.size
  }

  has (item: string): boolean {
    return this.#items.has(item)
  }

  add (item: string): void {
    if (this.#items.has(item)) return
    if (this.#items.size >= this.capacity) this.#items.delete(this.#items.values().next().value as string)
    this.#items.add(item)
  }

  clear (): void {
    this.#items.clear()
  }
}
