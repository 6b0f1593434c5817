/**
 * The values and expiry times of MemoryStore's entries, in two arrays addressed by a slot number
 * that the store's maps hold for each key. An object per entry (a value, an expiry) costs 40 B
 * and its expiry time, beyond a small integer, 16 B more as a boxed number; here a slot is one
 * array element and one unboxed double. A released slot is reused by the next entry; once most
 * slots are free, `compact` moves the live ones to the front and renumbers them in the maps.
 */
export class EntrySlab {
  private values: string[] = [];
  /** Only numbers ever: V8 keeps them unboxed (a double array), 8 B each. */
  private expiries: number[] = [];
  private free: number[] = [];

  /** Slots in use. */
  get size(): number {
    return this.values.length - this.free.length;
  }

  /** Slots allocated, in use or free. */
  get capacity(): number {
    return this.values.length;
  }

  /** A slot holding `value` until `expiresAt`. */
  add(value: string, expiresAt: number): number {
    const slot = this.free.pop();
    if (slot === undefined) {
      this.expiries.push(expiresAt);
      return this.values.push(value) - 1;
    }
    this.put(slot, value, expiresAt);
    return slot;
  }

  put(slot: number, value: string, expiresAt: number): void {
    this.values[slot] = value;
    this.expiries[slot] = expiresAt;
  }

  value(slot: number): string {
    return this.values[slot]!;
  }

  expiresAt(slot: number): number {
    return this.expiries[slot]!;
  }

  /** Frees the slot (its value is let go at once). */
  release(slot: number): void {
    this.values[slot] = '';
    this.free.push(slot);
  }

  /** Moves every slot the maps name to the front, in the maps' order, and frees the arrays' tail. */
  compact(maps: readonly Map<string, number>[]): void {
    const values: string[] = [];
    const expiries: number[] = [];
    for (const map of maps)
      for (const [key, slot] of map) {
        expiries.push(this.expiries[slot]!);
        // Setting a present key keeps its place in the map's order (the eviction order).
        map.set(key, values.push(this.values[slot]!) - 1);
      }
    this.values = values;
    this.expiries = expiries;
    this.free = [];
  }

  clear(): void {
    this.values = [];
    this.expiries = [];
    this.free = [];
  }
}
