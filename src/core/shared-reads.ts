/**
 * Reads shared by their callers for `lifeMs` (module clock): one read per key in flight or fresh,
 * whoever asks; a read that failed is not kept, so the next caller reads again. Keys that name a day
 * are asked no more once it is past: a read older than `lifeMs` is dropped when another key is read
 * (at most one sweep per `lifeMs`), so what is kept stays bounded by the keys of one life.
 */
export class SharedReads<T> {
  readonly #entries = new Map<string, { until: number; value: Promise<T> }>();
  #sweptAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly lifeMs: number) {}

  /** Reads held, fresh or not yet swept. */
  get size(): number {
    return this.#entries.size;
  }

  get(key: string, now: number, read: () => Promise<T>): Promise<T> {
    const known = this.#entries.get(key);
    if (known !== undefined && now < known.until) return known.value;
    if (now - this.#sweptAt >= this.lifeMs) this.#sweep(now);
    const entry = { until: now + this.lifeMs, value: read() };
    entry.value.catch(() => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    });
    this.#entries.set(key, entry);
    return entry.value;
  }

  #sweep(now: number): void {
    this.#sweptAt = now;
    for (const [key, entry] of this.#entries) if (now >= entry.until) this.#entries.delete(key);
  }
}
