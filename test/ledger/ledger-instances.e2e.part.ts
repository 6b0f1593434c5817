/**
 * Several instances on one Redis, each with its own connection: concurrent counts of the same
 * sessions and of new rows lose nothing and count nothing twice (atomic increments and claims).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { openStore } from '../../src/store/create-store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { FakeUsage, ledgerOn } from '../support/ledger.fixture.js';
import { methodStatsFixture, NOON, rub } from '../support/method-stats.fixture.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { dumpRedisPrefix } from '../support/store-dump.js';

const now = NOON;
const { session } = methodStatsFixture(() => now);

describe('the ledger on one Redis shared by three instances', () => {
  let stores: VerificationStore[] = [];
  const keyPrefix = `pv-ledger-instances:${randomUUID()}:`;

  beforeAll(async () => {
    stores = await Promise.all(
      [0, 1, 2].map(() => openStore({ url: sharedRedisUrl(), keyPrefix }, () => now)),
    );
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
  });

  it('every instance sees every session at once: each counted once, none lost, on a day of many new rows', async () => {
    const usage = new FakeUsage();
    const ledgers = stores.map((store) => ledgerOn(store, usage, () => now, { maxRowsPerDay: 40 }).ledger);
    // 300 sessions on 60 prefixes, 120 rows (80 past the cap): each one started, delivered and ended.
    const sessions = Array.from({ length: 300 }, (_, i) =>
      session({
        method: i % 2 === 0 ? 'sms' : 'msgr1_otp',
        cost: i % 2 === 0 ? rub(3) : rub(0.9),
        phoneNumber: `+79${String(i % 60).padStart(2, '0')}${String(1_234_567 + i)}`,
      }),
    );
    // Ten sessions at a time, each seen by every instance at once (more at once only times out a loaded machine's Redis).
    for (let i = 0; i < sessions.length; i += 10)
      await Promise.all(
        sessions
          .slice(i, i + 10)
          .flatMap((s) =>
            ledgers.flatMap((ledger) => [
              ledger.count(s),
              ledger.count({ ...s, status: 'delivered', delivered: true }),
              ledger.count({ ...s, status: 'verified', delivered: true, verifiedAt: now }),
            ]),
          ),
      );
    const [a, b] = await Promise.all([ledgers[0]!.report('2026-03-15'), ledgers[2]!.report('2026-03-15')]);
    expect([b.rows, b.totals]).toEqual([a.rows, a.totals]);
    expect(a.totals).toMatchObject({
      started: 300,
      delivered: 300,
      verified: 300,
      expected: 150 * 3 + 150 * 0.9,
    });
    const names = a.rows.map((r) => `${r.method} ${r.prefix}`);
    expect(new Set(names).size).toBe(names.length);
    // 40 rows had room (and at most one more per instance racing for the last one); the rest went to `other`.
    const named = a.rows.filter((r) => r.prefix !== 'other');
    expect(named.length).toBeGreaterThanOrEqual(40);
    expect(named.length).toBeLessThanOrEqual(42);
    const other = a.rows.filter((r) => r.prefix === 'other');
    expect(other.reduce((n, r) => n + r.started, 0)).toBe(300 - named.reduce((n, r) => n + r.started, 0));
    expect(
      a.rows
        .filter((r) => r.prefix === 'other')
        .map((r) => r.method)
        .sort(),
    ).toEqual(['msgr1_otp', 'sms']);

    // A dump of what the ledger keeps names operator prefixes only, no number (with or without its +).
    const dump = (await dumpRedisPrefix(sharedRedisUrl(), keyPrefix)).join('\n');
    expect(dump).toContain('ledger:2026-03-15');
    const leaked = sessions.filter(
      (s) => dump.includes(s.phoneNumber.slice(1)) || dump.includes(s.phoneNumber.slice(-8)),
    );
    expect(leaked).toEqual([]);
  });
});
