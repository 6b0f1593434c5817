/**
 * Attack (lane attack-44c, re-attack of the spare test-session slots): what a flood of free test
 * starts keeps is bounded per client network (an IPv4 /24, an IPv6 /48: 10 kept sessions and 5 spare
 * slots an hour), not per number. An attacker with addresses in many networks (a residential proxy
 * pool; an IPv6 /32 is 65,536 /48s) starts the reviewer's number once from each: every start is a
 * network's first, so every one is kept as a real session is (its played session, its record, its
 * index slot, the network's counter), on Redis a day for the record. 300 networks, 300 anonymous
 * starts, within every per-client limit: ~1,200 keys kept, where the same 300 callers asking a real
 * number are held by its per-number limit and keep a handful. Nothing is billed, so nothing else
 * bounds it: 3,000 networks an hour keep ~12,000 keys; under the recommended `noeviction` with a
 * `maxmemory`, Redis then refuses writes and every user's start fails.
 *
 * Expected: free test starts of one number keep no more state than paid starts of a real number by the
 * same callers (a per-number bound on kept test sessions, the rest spare).
 * Medium (store growth from free requests; High once Redis is full). Failed on the code it was written against; passes since its fix.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { VerificationStore } from '../../src/store/verification-store.interface.js';
import { uniqueKeyPrefix } from '../multi-instance/deployment.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { startAccountHost } from '../webhooks/harness.js';

const NETWORKS = 300;

describe.each(PLATFORMS)('test starts from many networks (%s, Redis)', (platform: Platform) => {
  const suite = sandboxSuite();
  const reviewer = platform === 'express' ? '+79990004411' : '+79990004412';
  const real = platform === 'express' ? '+79164404411' : '+79164404412';
  const client = new Redis(sharedRedisUrl());
  afterAll(async () => {
    await client.quit();
  });

  it('300 networks keep no more for a test number than for a real one', async () => {
    const keyPrefix = uniqueKeyPrefix(`many-networks-${platform}`);
    suite.host = await startAccountHost(platform, suite.sb, {
      balance: 10_000,
      trustProxy: true,
      module: {
        limits: {},
        owner: undefined,
        store: { redis: client, keyPrefix },
        testNumbers: { numbers: [{ phoneNumber: reviewer, code: '246810' }] },
      },
    });
    const store = suite.host.app.get<VerificationStore>(VerificationStore);
    // Live string keys, the per-client counters (`protect:…`, the documented residual) apart. The method
    // figures a flood's starts count after their answers are written first (else, on a loaded machine,
    // the real flood's land while the test flood is counted).
    const kept = async () => {
      await suite.host!.app.get(MethodStats).flush();
      const keys = await client.keys(`${keyPrefix}*`);
      const values = (
        await Promise.all(keys.map(async (k) => ((await client.type(k)) === 'string' ? [k] : [])))
      ).flat();
      const own = values.map((k) => k.slice(keyPrefix.length)).filter((k) => !k.startsWith('protect:'));
      return (
        await Promise.all(own.map(async (k) => ((await store.get(k)) === null ? 0 : 1)))
      ).reduce<number>((a, b) => a + b, 0);
    };
    // One address in each of `NETWORKS` /24s (base: which block of addresses).
    const flood = async (phone_number: string, base: number) => {
      const statuses: number[] = [];
      for (let net = 0; net < NETWORKS; net++) {
        const ip = `${base + Math.floor(net / 256)}.${net % 256}.${platform === 'express' ? 1 : 2}.7`;
        const answer = await call(
          suite.host!.url,
          'POST',
          '/verification/start',
          { phone_number, method: 'sms' },
          { 'x-forwarded-for': ip },
        );
        statuses.push(answer.status);
      }
      return statuses;
    };

    const before = await kept();
    await flood(real, 11);
    const byReal = (await kept()) - before;
    const statuses = await flood(reviewer, 61);
    const byTest = (await kept()) - before - byReal;
    expect(statuses.filter((s) => s === 201)).toHaveLength(NETWORKS);
    expect(byTest).toBeLessThanOrEqual(byReal);
  }, 180_000);
});
