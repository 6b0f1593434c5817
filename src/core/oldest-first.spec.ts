import { describe, expect, it } from '@jest/globals';
import { OldestFirst } from './oldest-first.js';

describe('OldestFirst', () => {
  it('evicts in insertion order; a key set again after a delete is the newest', () => {
    const map = new Map<string, number>([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
    const oldest = new OldestFirst(map);
    expect(oldest.evict()).toBe('a');
    map.delete('b');
    map.set('b', 4);
    map.set('d', 5);
    expect(oldest.evict()).toBe('c');
    expect(oldest.evict()).toBe('b');
    expect(oldest.evict()).toBe('d');
    expect([...map.keys()]).toStrictEqual([]);
  });

  it('skips keys deleted by others, and finds keys inserted after it reached the end', () => {
    const map = new Map<number, null>();
    const oldest = new OldestFirst(map);
    expect(oldest.evict()).toBeUndefined();
    map.set(1, null).set(2, null).set(3, null);
    map.delete(1);
    expect(oldest.evict()).toBe(2);
    expect(oldest.evict()).toBe(3);
    expect(oldest.evict()).toBeUndefined();
    map.set(7, null);
    expect(oldest.evict()).toBe(7);
    map.set(8, null);
    map.clear();
    map.set(9, null);
    expect(oldest.evict()).toBe(9);
  });

  it('matches a reference model over a long run of sets, deletes and evictions (the table rebuilt many times)', () => {
    const map = new Map<number, null>();
    const model: number[] = [];
    const oldest = new OldestFirst(map);
    let seed = 7;
    const random = (n: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n;
    for (let step = 0; step < 50_000; step++) {
      const key = random(2_000);
      const action = random(3);
      if (action === 0) {
        map.delete(key);
        map.set(key, null);
        const at = model.indexOf(key);
        if (at >= 0) model.splice(at, 1);
        model.push(key);
      } else if (action === 1) {
        map.delete(key);
        const at = model.indexOf(key);
        if (at >= 0) model.splice(at, 1);
      } else {
        expect(oldest.evict()).toBe(model.shift());
      }
    }
    expect([...map.keys()]).toStrictEqual(model);
  });

  it('tells its listener of each evicted key and the value it held, after the key left the map', () => {
    const map = new Map([
      ['a', 1],
      ['b', 2],
    ]);
    const told: [string, number, boolean][] = [];
    const oldest = new OldestFirst(map, (key, value) => told.push([key, value, map.has(key)]));
    expect(oldest.evict()).toBe('a');
    expect(oldest.evictEntry()).toStrictEqual(['b', 2]);
    expect(oldest.evict()).toBeUndefined();
    // evictEntry hands the entry back to its caller instead.
    expect(told).toStrictEqual([['a', 1, false]]);
  });
});
