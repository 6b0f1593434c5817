import { describe, expect, it } from '@jest/globals';
import { WriteOrder } from './write-order.js';

/**
 * WriteOrder evicts exactly as one Map whose written keys are moved to its end (the order MemoryStore
 * kept before): the least recently written key first, through writes, rewrites, deletes and evictions,
 * whether a key is among the recent ones or has aged into the older map.
 */
describe('WriteOrder', () => {
  /** A deterministic stream of operations on `keys` distinct keys (a linear congruential generator). */
  function run(recentKeys: number, keys: number, steps: number) {
    const evicted: string[] = [];
    const order = new WriteOrder(recentKeys);
    const model = new Map<string, number>();
    const modelEvicted: string[] = [];
    let seed = 12345;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let step = 0; step < steps; step++) {
      const op = next(10);
      const key = `k${next(keys)}`;
      if (op < 7) {
        order.written(key, step);
        model.delete(key);
        model.set(key, step);
      } else if (op < 9) {
        expect(order.delete(key)).toBe(model.delete(key));
      } else {
        const gone = order.evictOldest();
        if (gone !== undefined) evicted.push(`${gone[0]}=${gone[1]}`);
        const oldest = model.keys().next();
        if (!oldest.done) {
          modelEvicted.push(`${oldest.value}=${model.get(oldest.value)}`);
          model.delete(oldest.value);
        }
      }
      expect(order.size).toBe(model.size);
    }
    return { order, model, evicted, modelEvicted };
  }

  it.each([
    [1, 10],
    [3, 10],
    [3, 50],
    [16, 40],
    [1024, 200],
  ])(
    'with %i recent keys among %i: the same evictions and order as moving each written key to the end',
    (recent, keys) => {
      const { order, model, evicted, modelEvicted } = run(recent, keys, 5000);
      expect(evicted).toStrictEqual(modelEvicted);
      expect([...order]).toStrictEqual([...model]);
      for (const [key, slot] of model) expect(order.get(key)).toBe(slot);
      expect(order.has('absent')).toBe(false);
    },
  );

  it('keeps at most its recent keys in the small map; the others aged into the older one, in write order', () => {
    const order = new WriteOrder(2);
    for (const key of ['a', 'b', 'c', 'd']) order.written(key, key.charCodeAt(0));
    order.written('a', 1);
    const [older, recent] = order.maps();
    expect({ older: [...older!.keys()], recent: [...recent!.keys()] }).toStrictEqual({
      older: ['b', 'c'],
      recent: ['d', 'a'],
    });
  });

  it('evicts from the recent keys once no older one is left, and nothing from an empty order', () => {
    const evicted: string[] = [];
    const order = new WriteOrder(2);
    for (const key of ['a', 'b', 'c']) order.written(key, 0);
    for (let i = 0; i < 4; i++) evicted.push(order.evictOldest()?.[0] ?? 'none');
    expect({ evicted, size: order.size }).toStrictEqual({ evicted: ['a', 'b', 'c', 'none'], size: 0 });
  });
});
