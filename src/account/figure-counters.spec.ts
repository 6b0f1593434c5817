import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { counterKey, dayCounters } from './figure-counters.js';
import { CHARGED_FIELD } from './method-figures.js';

/*
 * dayCounters over a store whose counters another writer damaged: a counter that is not a whole number of 0 or
 * more is read as none, and a day whose starts read so is read as empty.
 */

let store = new MemoryStore({ clock: () => Date.UTC(2026, 2, 16, 12) });
afterEach(async () => {
  await store.close();
  store = new MemoryStore({ clock: () => Date.UTC(2026, 2, 16, 12) });
});
afterAll(() => store.close());
const DAY = '2026-03-16';
const set = (field: string, value: string) =>
  store.set(counterKey(DAY, 'flash_call', '7~985', field), value, 60_000);
const read = async () => (await dayCounters(store, 'flash_call', '7~985', [DAY]))[0]!;

describe('dayCounters: damaged counters', () => {
  it('a negative, fractional, unsafe or unparsable counter is read as 0; the sound ones as they are', async () => {
    await set('started', '9');
    await set('delivered', '8');
    await set('verified', '-5');
    await set('expired', '1.5');
    await set('failed', 'abc');
    await set(CHARGED_FIELD, '9007199254740993');
    await set('rescued', '1e400');
    expect(await read()).toMatchObject({
      started: 9,
      delivered: 8,
      verified: 0,
      expired: 0,
      failed: 0,
      chargedMinor: 0,
      rescued: 0,
    });
  });

  it('a day whose starts are negative or missing is read as empty, its ends with it', async () => {
    await set('verified', '4');
    expect(await read()).toMatchObject({ started: 0, verified: 0 });
    await set('started', '-3');
    expect(await read()).toMatchObject({ started: 0, verified: 0 });
  });
});
