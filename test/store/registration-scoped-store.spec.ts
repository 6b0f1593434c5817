/**
 * Two named registrations given one store (RegistrationScopedStore over it): a batch, the one round
 * trip a decision's reads and writes take together, keeps each registration's keys under its name and
 * pools protection's counters, as each single operation does, and stays one batch of the store.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RegistrationScopedStore } from '../../src/store/registration-scoped-store.js';

describe('RegistrationScopedStore batch', () => {
  it("keeps each registration's keys under its name and pools protect:*, in one batch of the store", async () => {
    const shared = new MemoryStore();
    const north = new RegistrationScopedStore(shared, 'north');
    const south = new RegistrationScopedStore(shared, 'south');
    const batches = jest.spyOn(shared, 'batch');
    await north.batch!([
      { op: 'set', key: 'ledger:day', value: 'north', ttlMs: 60_000 },
      { op: 'increment', key: 'ledger:count', by: 2, ttlMs: 60_000 },
      { op: 'increment', key: 'protect:spend:1', by: 5, ttlMs: 60_000 },
    ]);
    const answers = await south.batch!([
      { op: 'setIfAbsent', key: 'ledger:day', value: 'south', ttlMs: 60_000 },
      { op: 'increment', key: 'ledger:count', by: 1, ttlMs: 60_000 },
      { op: 'increment', key: 'protect:spend:1', by: 5, ttlMs: 60_000 },
      { op: 'get', key: 'ledger:day' },
    ]);
    expect(answers.map((a) => (typeof a === 'object' && a !== null ? a.value : a))).toEqual([
      true,
      1,
      10,
      'south',
    ]);
    expect(batches).toHaveBeenCalledTimes(2);
    await expect(north.get('ledger:day')).resolves.toBe('north');
    await expect(shared.get('north:ledger:count')).resolves.toBe('2');
    await expect(shared.get('south:ledger:count')).resolves.toBe('1');
    await expect(shared.get('ledger:day')).resolves.toBeNull();
    await expect(shared.get('protect:spend:1')).resolves.toBe('10');
    await north.close();
  });
});
