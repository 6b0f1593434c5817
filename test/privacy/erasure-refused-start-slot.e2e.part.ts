/**
 * Attack (lane attack-r, the erasure index after f9fcc9fb/46310f8e: src/sessions/subject-index.ts). A start
 * reserves its slot 0 of the day (the gap '') before paying; a start the API refuses (a 503: nothing sent,
 * everything given back) never writes it, nor removes it: the gap stays for the longest session plus the
 * retention (24 h 10 min). An erasure of the number or the owner in that time reads the gap as a start in
 * flight (`take`: "the start in flight removes its own slot") and leaves it, and the day's counter with it.
 * After the host answered the deletion request, the store still holds `subject:{n:<digest>}:<day>:0` and
 * `…:<day>:n` (how many sessions the number started that day), named by the subject's keyed digest: with
 * the host's data key, whoever holds a dump learns that the erased number (or owner) tried to verify that
 * day, and how often. test/privacy/erasure's contract: "the subject's digest names the erasure mark and,
 * for a number, its own limits, nothing else". Measured: Memory and Redis, by number and by owner.
 *
 * Expected: after an erasure, nothing named by the subject's digest but its erasure mark and a number's
 * limits (a refused start's reservation is removed when it is refused, or the erasure removes a gap no
 * start holds). Low (keyed digests only, a day at most; no clear data). Fails on main (43fb9bf2).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { DataKeys } from '../../src/core/data-keys.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../../src/options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../../src/options/verification.options.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { StoreOption } from '../../src/store/create-store.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { dumpMemoryStore, dumpRedisPrefix } from '../support/store-dump.js';
import { call, createTestApp, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

let serial = 0;
const phone = () =>
  `+7916${String((process.pid + 300) % 1000).padStart(3, '0')}${String(3000 + ++serial).padStart(4, '0')}`;

describe('erasure after a refused start', () => {
  const suite = sandboxSuite();
  const hosts: TestApp[] = [];
  afterEach(async () => {
    for (const h of hosts.splice(0)) await h.close();
  });

  async function forgottenAfterRefusal(
    store: StoreOption,
    dump: () => Promise<string[]>,
    by: 'phoneNumber' | 'owner',
    refusedBy: 'the API' | 'the spend cap' = 'the API',
  ): Promise<void> {
    // Under a cap below an SMS's price, protection refuses the start after it reserved the slots.
    const spendCap = refusedBy === 'the API' ? false : { amount: 0.5, windowMs: 86_400_000 };
    const host = await createTestApp({
      platform: 'express',
      module: moduleOptions(suite.sb, { store, history: {}, limits: { spendCap } }),
    });
    hosts.push(host);
    const keys = host.app.get<ResolvedVerificationOptions>(RESOLVED_VERIFICATION_OPTIONS, { strict: false })
      .dataKeys as DataKeys;
    const [n, owner] = [phone(), `owner-${randomUUID()}`];
    const start = () =>
      call(host.url, 'POST', '/verification/start', { phone_number: n, method: 'sms' }, { 'x-user': owner });
    // The day's first start is refused (nothing sent); under the API's refusal, the next one is answered.
    if (refusedBy === 'the API')
      suite.sb.addFault({ route: 'POST /v1/verify', kind: 'status', status: 503, count: 1 });
    // (The cap's refusal of a start without a record is graded: 409 `method_held`, SMS held.)
    expect((await start()).status).toBe(refusedBy === 'the API' ? 503 : 409);
    if (refusedBy === 'the API') expect((await start()).status).toBe(201);

    const report = await host.app
      .get(VerificationErasure, { strict: false })
      .forget(by === 'phoneNumber' ? { phoneNumber: n } : { owner });
    expect(report.sessions).toBe(refusedBy === 'the API' ? 1 : 0);

    const digest = keys.digest(by === 'phoneNumber' ? n : owner);
    const naming = (await dump()).filter((line) => line.includes(digest));
    const erasureMark = (line: string) => line.split(' ')[0]!.endsWith(':forgotten') && / [\d:]+$/.test(line);
    const limit = (line: string) => by === 'phoneNumber' && /(^|:)protect:[\w:-]+ [\d:]+$/.test(line);
    expect(naming.filter((line) => !erasureMark(line) && !limit(line))).toEqual([]);
  }

  it.each(['phoneNumber', 'owner'] as const)(
    'MemoryStore, by %s, the start refused by the spend cap',
    async (by) => {
      const store = new MemoryStore({ clock: () => suite.sb.now() });
      try {
        await forgottenAfterRefusal(store, async () => dumpMemoryStore(store), by, 'the spend cap');
      } finally {
        for (const h of hosts.splice(0)) await h.close();
        await store.close();
      }
    },
  );

  it.each(['phoneNumber', 'owner'] as const)('MemoryStore, by %s', async (by) => {
    const store = new MemoryStore({ clock: () => suite.sb.now() });
    try {
      await forgottenAfterRefusal(store, async () => dumpMemoryStore(store), by);
    } finally {
      for (const h of hosts.splice(0)) await h.close();
      await store.close();
    }
  });

  it.each(['phoneNumber', 'owner'] as const)('RedisStore, by %s', async (by) => {
    const keyPrefix = `attack-r-${randomUUID()}:`;
    try {
      await forgottenAfterRefusal(
        { url: sharedRedisUrl(), keyPrefix },
        () => dumpRedisPrefix(sharedRedisUrl(), keyPrefix),
        by,
      );
    } finally {
      for (const h of hosts.splice(0)) await h.close();
      const admin = new Redis(sharedRedisUrl());
      const left = await admin.keys(`${keyPrefix}*`);
      if (left.length > 0) await admin.del(...left);
      admin.disconnect();
    }
  });
});
