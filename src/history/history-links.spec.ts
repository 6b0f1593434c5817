import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { linkRing, readLinks, unlinkRing } from './history-links.js';

const [N, O, P] = ['history:{n:number}', 'history:{o:owner}', 'history:{o:other}'];

describe("history links: the other side's rings a ring leads an erasure to", () => {
  let now = 1_000_000;
  const store = new MemoryStore({ clock: () => now });
  afterAll(() => store.close());
  afterEach(async () => {
    for (const ring of [N, O, P])
      for (const key of (await readLinks(store, ring)).keys) await store.delete(key);
  });

  it('one slot per linked ring however often linked, concurrently too; each listed once', async () => {
    await Promise.all([linkRing(store, N, O, 1000), linkRing(store, N, O, 1000)]);
    await linkRing(store, N, P, 1000);
    await linkRing(store, N, O, 1000);
    expect((await readLinks(store, N)).rings.sort()).toEqual([O, P].sort());
    expect(await store.get(`${N}:links`)).toBe('2');
  });

  it('a link lives ttlMs past its last renewal: listed a tick before, not at it', async () => {
    await linkRing(store, N, O, 1000);
    now += 600;
    await linkRing(store, N, O, 1000);
    now += 999;
    expect((await readLinks(store, N)).rings).toEqual([O]);
    now += 1;
    expect((await readLinks(store, N)).rings).toEqual([]);
  });

  it('unlinked: the slot and its pair go, the ring its other links keep; a new link takes a new slot', async () => {
    await linkRing(store, N, O, 1000);
    await linkRing(store, N, P, 1000);
    await unlinkRing(store, N, O);
    expect((await readLinks(store, N)).rings).toEqual([P]);
    await linkRing(store, N, O, 1000);
    expect((await readLinks(store, N)).rings).toEqual([P, O]);
    await unlinkRing(store, P, N);
    expect((await readLinks(store, N)).keys).toEqual([
      `${N}:links`,
      `${N}:links:0`,
      `${N}:links:1`,
      `${N}:links:2`,
      `${N}:link:o:other`,
      `${N}:link:o:owner`,
    ]);
  });

  it('a link written for longer than the count lives (ttl lowered since) keeps its slot: the next links take others', async () => {
    await linkRing(store, N, O, 5000);
    await linkRing(store, N, P, 1000);
    now += 1000;
    // The count ended with the shorter link; the longer one lives on.
    expect(await store.get(`${N}:links`)).toBeNull();
    await linkRing(store, N, 'history:{o:third}', 1000);
    expect((await readLinks(store, N)).rings).toStrictEqual([O, 'history:{o:third}']);
    // Renewed, the longer link's slot (0) stays its own and within what is read.
    await linkRing(store, 'history:{n:fresh}', P, 1000);
    now += 1000;
    await linkRing(store, N, O, 1000);
    expect((await readLinks(store, N)).rings).toStrictEqual([O]);
    for (const key of (await readLinks(store, 'history:{n:fresh}')).keys) await store.delete(key);
  });

  it('a pair renewed after the count restarted below its slot raises the count to it', async () => {
    await linkRing(store, N, P, 5000);
    await linkRing(store, N, O, 5000);
    await linkRing(store, N, 'history:{o:third}', 1000);
    now += 1000;
    await linkRing(store, N, O, 1000);
    expect(await store.get(`${N}:links`)).toBe('2');
    expect((await readLinks(store, N)).rings).toStrictEqual([P, O]);
  });

  it('a pair renewed above a count restarted and taken since raises the count to its slot, not past it', async () => {
    for (const ring of ['history:{o:a}', 'history:{o:b}']) await linkRing(store, N, ring, 1000);
    await linkRing(store, N, O, 5000);
    await linkRing(store, N, 'history:{o:c}', 1000);
    now += 1000;
    // The count ended with the shorter links; O lives on in slot 2, and a new link takes the free slot 0.
    await linkRing(store, N, P, 1000);
    await linkRing(store, N, O, 1000);
    expect(await store.get(`${N}:links`)).toBe('3');
    expect((await readLinks(store, N)).rings).toStrictEqual([P, O]);
  });

  it('a ring whose slots are all held: a new link gives up at the most an erasure reads, the count at it', async () => {
    const full = 'history:{n:full}';
    const held = new Proxy(store, {
      get: (target, property) =>
        property === 'setIfAbsent'
          ? (key: string, value: string, ttlMs: number) =>
              key.startsWith(`${full}:links:`)
                ? Promise.resolve(false)
                : target.setIfAbsent(key, value, ttlMs)
          : (Reflect.get(target, property, target) as (...args: unknown[]) => unknown).bind(target),
    });
    await linkRing(held, full, O, 1000);
    expect(await store.get(`${full}:links`)).toBe('100000');
    expect((await readLinks(store, full)).rings).toStrictEqual([]);
    for (const key of [`${full}:links`, `${full}:link:o:owner`]) await store.delete(key);
  }, 20_000);

  it("a first link that failed after claiming its pair holds the pair's links back a minute, not the link's life", async () => {
    const failing = new Proxy(store, {
      get: (target, property) =>
        property === 'increment'
          ? () => Promise.reject(new Error('command timed out'))
          : (Reflect.get(target, property, target) as (...args: unknown[]) => unknown).bind(target),
    });
    await expect(linkRing(failing, N, O, 100_000)).rejects.toThrow('command timed out');
    now += 59_999;
    await linkRing(store, N, O, 100_000);
    expect((await readLinks(store, N)).rings).toStrictEqual([]);
    now += 1;
    await linkRing(store, N, O, 100_000);
    expect((await readLinks(store, N)).rings).toStrictEqual([O]);
  });
});
