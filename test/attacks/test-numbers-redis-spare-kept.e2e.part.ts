/**
 * Attack (lane attack-44b, re-attack of attack-44's test-numbers-open-flood fix): the fix keeps 10 test
 * sessions of a number per client network and hour, and writes the rest as "spare" sessions whose
 * entries are `evictable`. Only MemoryStore honours that flag; RedisStore ignores it (docs/operations.md
 * recommends `maxmemory-policy noeviction`). So on Redis every spare test session is kept like a real
 * one: 300 free test starts of the reviewer's number from 300 /64s of one IPv6 /48 (each /64 is its own
 * client: 5 starts of one number an hour by `startPerPhoneAndCaller`) left 903 keys (~570 KB): per
 * start a session record kept 24 h (RECORD_RETENTION_MS), a subject-index slot and a test-number
 * session kept an hour, besides the two small per-client counters that any request leaves. Nothing is
 * paid, so nothing bounds it: a /48 holds 65,536 /64s, i.e. ~327,000 kept spare sessions an hour, held
 * for a day (~10 GB); under the recommended `noeviction` with a `maxmemory`, Redis then refuses writes
 * and every user's start fails. docs/protection.md says growth of the kept entries "needs paid starts".
 *
 * Expected: what a flood of free test starts keeps on Redis is bounded per network as on a MemoryStore
 * (spare sessions not kept, kept only briefly, or carried in their handle), not one session per start.
 * Medium (a bound exceeded; High once Redis is full). Failed on the code it was written against; passes since its fix.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { uniqueKeyPrefix } from '../multi-instance/deployment.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call } from '../support/verification-app.js';
import { startAccountHost } from '../webhooks/harness.js';

const REVIEWER = '+79990000001';

describe('open reviewer numbers flooded from one /48 (fastify, Redis store)', () => {
  const suite = sandboxSuite();
  const client = new Redis(sharedRedisUrl());
  const keyPrefix = uniqueKeyPrefix('test-numbers-redis-spare-kept');
  afterAll(async () => {
    const left = await client.keys(`${keyPrefix}*`);
    if (left.length > 0) await client.del(...left);
    await client.quit();
  });

  it('300 free test starts from 300 /64s keep a bounded number of entries on Redis', async () => {
    suite.host = await startAccountHost('fastify', suite.sb, {
      trustProxy: true,
      module: {
        limits: {},
        owner: undefined,
        store: { url: sharedRedisUrl(), keyPrefix },
        testNumbers: { numbers: [{ phoneNumber: REVIEWER, code: '123456' }] },
      },
    });
    const start = (headers: Record<string, string>) =>
      call(
        suite.host!.url,
        'POST',
        '/verification/start',
        { phone_number: REVIEWER, method: 'sms' },
        headers,
      );

    let admitted = 0;
    for (let i = 0; i < 300; i++) {
      const ip = `2001:db8:42:${i.toString(16)}::1`;
      if ((await start({ 'x-forwarded-for': ip })).status === 201) admitted += 1;
    }
    expect(admitted).toBe(300);

    const keys = (await client.keys(`${keyPrefix}*`)).map((k) => k.slice(keyPrefix.length));
    // The per-client counters (`protect:…`, two small ones per address) are the documented residual.
    const kept = keys.filter((k) => !k.startsWith('protect:'));
    // The network's 10 kept sessions (3 entries each) and a few shared keys; not 3 per start.
    expect(kept.length).toBeLessThanOrEqual(50);
  }, 120_000);
});
