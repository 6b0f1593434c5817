import { OldestFirst } from '../core/oldest-first.js';

/** Keys written this recently stay in the small map: a counter written again and again moves there only. */
const RECENT_KEYS = 1024;

/**
 * MemoryStore's keys of one class (kept or evictable) and their slots, in the order they were last
 * written: the least recently written is evicted first.
 *
 * A Map keeps insertion order, so a key written again is deleted and set again to move it to the end;
 * each move leaves a hole in V8's hash table until the table is rebuilt, and a table rebuilt with holes
 * of half its size or more is rebuilt at the same size: under counters rewritten by every request (a
 * range's, a country's), a big table stayed a quarter to half full. Here the last RECENT_KEYS keys
 * written are in a small map, where such moves happen; a key leaves it, unmoved, for the map of older
 * keys once RECENT_KEYS newer ones were written. Every older key was written before every recent one,
 * so the oldest of the older map (else of the recent one) is the least recently written.
 */
export class WriteOrder {
  readonly #recent = new Map<string, number>();
  readonly #older = new Map<string, number>();
  /** Moves the recent map's oldest key to the older map. */
  readonly #aged = new OldestFirst(this.#recent, (key: string, slot: number) => this.#older.set(key, slot));
  readonly #olderFirst = new OldestFirst(this.#older);
  readonly #recentFirst = new OldestFirst(this.#recent);

  constructor(private readonly recentKeys = RECENT_KEYS) {}

  get size(): number {
    return this.#recent.size + this.#older.size;
  }

  get(key: string): number | undefined {
    return this.#recent.get(key) ?? this.#older.get(key);
  }

  has(key: string): boolean {
    return this.#recent.has(key) || this.#older.has(key);
  }

  /** Records a write of `key` (held at `slot`): it is the most recently written now. */
  written(key: string, slot: number): void {
    if (!this.#recent.delete(key)) this.#older.delete(key);
    this.#recent.set(key, slot);
    if (this.#recent.size > this.recentKeys) this.#aged.evict();
  }

  /** Removes the key; whether it was there. */
  delete(key: string): boolean {
    return this.#recent.delete(key) || this.#older.delete(key);
  }

  /** Evicts the least recently written key (see the class): it and its slot; undefined when empty. */
  evictOldest(): [key: string, slot: number] | undefined {
    return this.#olderFirst.evictEntry() ?? this.#recentFirst.evictEntry();
  }

  /** The maps the keys are in (older first, each in write order): sweeps and compaction go through them. */
  maps(): readonly Map<string, number>[] {
    return [this.#older, this.#recent];
  }

  /** Every key and its slot, least recently written first. */
  *[Symbol.iterator](): IterableIterator<[string, number]> {
    for (const map of this.maps()) yield* map;
  }

  clear(): void {
    this.#recent.clear();
    this.#older.clear();
  }
}
