import { describe, expect, it } from '@jest/globals';
import { SharedReads } from './shared-reads.js';

describe('SharedReads', () => {
  it('serves one read per key to every caller for lifeMs, reads again at lifeMs, keeps keys apart', async () => {
    const reads = new SharedReads<number>(1_000);
    let n = 0;
    const read = () => Promise.resolve(++n);
    const [a, b] = await Promise.all([reads.get('k', 0, read), reads.get('k', 0, read)]);
    expect([a, b, await reads.get('k', 999, read)]).toStrictEqual([1, 1, 1]);
    expect(await reads.get('other', 999, read)).toBe(2);
    expect(await reads.get('k', 1_000, read)).toBe(3);
    expect(await reads.get('k', 1_999, read)).toBe(3);
  });

  it('does not keep a read that failed: the next caller reads again, a later good read stays', async () => {
    const reads = new SharedReads<number>(1_000);
    await expect(reads.get('k', 0, () => Promise.reject(new Error('store down')))).rejects.toThrow(
      'store down',
    );
    expect(await reads.get('k', 1, () => Promise.resolve(7))).toBe(7);
    expect(await reads.get('k', 2, () => Promise.resolve(8))).toBe(7);
  });

  it('a failed read does not remove the read that replaced it', async () => {
    const reads = new SharedReads<number>(1_000);
    let fail!: (error: Error) => void;
    const failing = reads.get('k', 0, () => new Promise<number>((_, reject) => (fail = reject)));
    // Past its life, a new read replaces it before it fails.
    expect(await reads.get('k', 1_000, () => Promise.resolve(5))).toBe(5);
    fail(new Error('late'));
    await expect(failing).rejects.toThrow('late');
    expect(await reads.get('k', 1_001, () => Promise.resolve(6))).toBe(5);
  });
});

describe('SharedReads: keys of past days', () => {
  it('drops reads past their life when another key is read: one key a day for a year keeps one or two', async () => {
    const day = 86_400_000;
    const reads = new SharedReads<number>(60_000);
    for (let d = 0; d < 365; d++) await reads.get(`sms:7:day-${d}`, d * day, () => Promise.resolve(d));
    expect(reads.size).toBeLessThanOrEqual(2);
  });

  it('keeps every read within its life, however many keys: a read at its last tick is still served', async () => {
    const reads = new SharedReads<number>(1_000);
    for (let k = 0; k < 50; k++) await reads.get(`k${k}`, k * 10, () => Promise.resolve(k));
    expect(reads.size).toBe(50);
    // k0 was read at 0: served from the cache at 999, read again at 1,000.
    expect(await reads.get('k0', 999, () => Promise.resolve(-1))).toBe(0);
    expect(await reads.get('new', 1_000, () => Promise.resolve(-2))).toBe(-2);
    // The sweep at 1,000 dropped k0 (read at 0) only: k1 (read at 10) is served until 1,010.
    expect(reads.size).toBe(50);
    expect(await reads.get('k1', 1_009, () => Promise.resolve(-3))).toBe(1);
  });
});
