/**
 * Reads shared by their callers for `lifeMs` (module clock): one read per key in flight or fresh,
 * whoever asks; a read that failed is not kept, so the next caller reads again.
 */
export class SharedReads<T> {
  readonly #entries = new Map<string, { until: number; value: Promise<T> }>();

  constructor(private readonly lifeMs: number) {}

  get(key: string, now: number, read: () => Promise<T>): Promise<T> {
    const known = this.#entries.get(key);
    if (known !== undefined && now < known.until) return known.value;
    const entry = { until: now + this.lifeMs, value: read() };
    entry.value.catch(() => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    });
    this.#entries.set(key, entry);
    return entry.value;
  }
}
