/**
 * Least-recently-used entries bounded both by count and by the bytes they hold: the memory kept for answers stays
 * under a known figure however many accounts are served, and however large one account's answer is.
 */
export class AnswerLru<V> {
  private readonly entries = new Map<string, { readonly value: V; readonly bytes: number }>()
  private held = 0

  constructor(readonly maxEntries: number, readonly maxBytes: number) {}

  get size(): number {
    return this.entries.size
  }

  get bytes(): number {
    return this.held
  }

  /** The value kept under `key`, which becomes the most recently used. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    this.entries.delete(key)
    this.entries.set(key, entry)
    return entry.value
  }

  /** Keeps `value` (of `bytes`), dropping the least recently used until both bounds hold; one larger than the byte bound is not kept. */
  set(key: string, value: V, bytes: number): void {
    this.delete(key)
    if (bytes > this.maxBytes) return
    while (this.entries.size >= this.maxEntries || this.held + bytes > this.maxBytes) {
      this.delete(this.entries.keys().next().value!)
    }
    this.entries.set(key, { value, bytes })
    this.held += bytes
  }

  delete(key: string): void {
    const entry = this.entries.get(key)
    if (entry === undefined) return
    this.entries.delete(key)
    this.held -= entry.bytes
  }
}
