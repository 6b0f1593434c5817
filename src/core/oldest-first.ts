/**
 * Evicts a Map's least recently inserted key (a key set again after a delete counts as inserted
 * then), for the bounded maps that drop their oldest entry when full.
 *
 * `map.keys().next()` is not that: a deleted entry stays a hole at the front of V8's hash table
 * until the table is rebuilt, and every new iterator walks over all of them. A full map evicting one
 * key per write thus walked up to its whole size per write (a full MemoryStore of a million entries
 * took up to a millisecond per write, so a stream of new keys from many addresses could stall the
 * process). The cursor here stays where the last eviction left it: every key before it was
 * evicted, re-inserted behind it, or deleted, so its next key is the oldest.
 */
export class OldestFirst<K, V = unknown> {
  #cursor: Iterator<[K, V]> | undefined;

  constructor(
    private readonly map: Map<K, V>,
    /** Told of each evicted key and the value it held (after it left the map). */
    private readonly dropped?: (key: K, value: V) => void,
  ) {}

  /** Deletes the oldest key and returns it; undefined when the map is empty. */
  evict(): K | undefined {
    const entry = this.evictEntry();
    if (entry === undefined) return undefined;
    if (this.dropped) this.dropped(entry[0], entry[1]);
    return entry[0];
  }

  /** Deletes the oldest key and returns it with the value it held; undefined when the map is empty. */
  evictEntry(): [K, V] | undefined {
    for (let fresh = false; ; fresh = true) {
      this.#cursor ??= this.map.entries();
      const next = this.#cursor.next();
      if (!next.done) {
        this.map.delete(next.value[0]);
        return next.value;
      }
      // An iterator that reached the end stays there, whatever is inserted later: start again.
      this.#cursor = undefined;
      if (fresh) return undefined;
    }
  }
}
