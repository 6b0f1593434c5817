/**
 * Attack (attack-228): the coalescing claim's lease (longestCallMs(POST) + 10 s) is taken before the start's
 * admission, and the admission may itself ask the API before the POST: the spend cap's estimate reads the
 * price list (a GET, up to `api.retryDeadlineMs`) when the book is due and the host names its `methods`
 * (the start route then reads no prices before the claim). A GET at its longest and a POST at its longest
 * together outlast the lease: a duplicate of the same browser on another instance then takes a fresh claim and
 * pays a second session.
 *
 * Expected: however long the admission's reads took, a duplicate during the first start's POST gets its
 * session back (`resumed: true`), and one POST /v1/verify is made.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import type { TestApp } from '../support/verification-app.js';
import {
  freshBrowser,
  freshIp,
  freshPhone,
  protectedHost,
  startFrom,
} from '../protection/protection-host.js';

const stores: [string, (sb: VerificationSandbox) => VerificationStore][] = [
  ['one MemoryStore', (sb) => new MemoryStore({ clock: () => sb.now() })],
  [
    'Redis',
    (sb) =>
      new RedisStore({ url: sharedRedisUrl(), keyPrefix: `pv-test:${randomUUID()}:`, clock: () => sb.now() }),
  ],
];

/** Waits (real time) until the sandbox has received one more request of `route` than `before`. */
async function received(sb: VerificationSandbox, route: string, before: number): Promise<void> {
  const until = Date.now() + 5000;
  while (sb.requestCount(route) === before && Date.now() < until)
    await new Promise((resolve) => setTimeout(resolve, 5));
}

describe.each(stores)(
  'coalescing: a start whose admission read the prices before its POST (%s)',
  (_, storeOf) => {
    afterAll(async () => {
      await store?.close();
    });
    const suite = sandboxSuite({ freezeClock: false, demoAccount: { balance: 100_000 } });
    let store: VerificationStore;

    beforeAll(() => {
      store = storeOf(suite.sb);
    });

    it.each([
      // Without a cooldown, a pending session is handed back until it expires: the duplicate paid a second one.
      ['no resend cooldown', false as const],
      // A cooldown of 2 min: a start 65 s after the first is a duplicate (it was refused 429 resend_cooldown).
      ['a resend cooldown of 2 min', 120_000],
    ])(
      '%s: a price read 25 s long and a POST 40 s long (each within its bound): a duplicate on the other instance joins the start, one POST',
      async (_name, resendCooldownMs) => {
        const sb = suite.sb;
        // timeoutMs 20 s within a 30 s deadline: the claim is 30 + 20 + 10 = 60 s.
        const api = {
          baseUrl: sb.url,
          apiKey: sb.demoAccount.apiKey,
          apiSecret: sb.demoAccount.apiSecret,
          timeoutMs: 20_000,
          retryDeadlineMs: 30_000,
        };
        // The host names its methods: the start route reads no prices; the spend cap's estimate does, under the claim.
        const extra = { store, api, methods: ['sms' as const, 'voice' as const] };
        const hosts: TestApp[] = [];
        try {
          hosts.push(await protectedHost(sb, 'express', { resendCooldownMs }, extra));
          hosts.push(await protectedHost(sb, 'fastify', { resendCooldownMs }, extra));
          const phone = freshPhone();
          const ip = freshIp();
          const browser = freshBrowser();
          const prices = sb.requestCount('GET /v1/prices');
          const posts = sb.requestCount('POST /v1/verify');
          sb.addFault({ route: 'GET /v1/prices', kind: 'latency', latency_ms: 1_500, count: 1 });
          sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 1_500, count: 1 });
          const first = startFrom(hosts[0]!, ip, phone, 'sms', browser);
          await received(sb, 'GET /v1/prices', prices);
          expect(sb.requestCount('GET /v1/prices') - prices).toBe(1);
          // The GET within its 30 s deadline.
          await sb.advance(25_000);
          await received(sb, 'POST /v1/verify', posts);
          // The POST within retryDeadlineMs + timeoutMs (50 s) of its own start: 65 s since the claim.
          await sb.advance(40_000);
          const duplicate = await startFrom(hosts[1]!, ip, phone, 'sms', browser);
          const answer = await first;
          expect(answer.status).toBe(201);
          expect(duplicate.body).toMatchObject({
            resumed: true,
            verification_id: answer.body.verification_id,
          });
          expect(sb.requestCount('POST /v1/verify') - posts).toBe(1);
          expect(sb.sessionsFor(phone)).toHaveLength(1);
        } finally {
          sb.clearFaults();
          for (const host of hosts) await host.close();
        }
      },
    );

    it('a host hook slower than the claim: the duplicate that took the lapsed claim pays; the first start, its hook back, does not pay too (503 start_in_progress)', async () => {
      const sb = suite.sb;
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let called!: () => void;
      const calledOnce = new Promise<void>((resolve) => (called = resolve));
      let calls = 0;
      // The first start's check hangs; the duplicate's answers at once.
      const beforeStart = async (): Promise<boolean> => {
        calls += 1;
        if (calls === 1) {
          called();
          await held;
        }
        return true;
      };
      const hosts: TestApp[] = [];
      try {
        hosts.push(await protectedHost(sb, 'express', { resendCooldownMs: false, beforeStart }, { store }));
        hosts.push(await protectedHost(sb, 'fastify', { resendCooldownMs: false, beforeStart }, { store }));
        const phone = freshPhone();
        const ip = freshIp();
        const browser = freshBrowser();
        const posts = sb.requestCount('POST /v1/verify');
        const first = startFrom(hosts[0]!, ip, phone, 'sms', browser);
        await calledOnce;
        // Past the claim's life (the defaults: 10 + 5 + 10 = 25 s): as a crashed holder's, the claim has ended.
        await sb.advance(30_000);
        const duplicate = await startFrom(hosts[1]!, ip, phone, 'sms', browser);
        expect(duplicate.body).toMatchObject({ resumed: false });
        release();
        const late = await first;
        expect({ status: late.status, reason: late.body.reason }).toStrictEqual({
          status: 503,
          reason: 'start_in_progress',
        });
        expect(sb.requestCount('POST /v1/verify') - posts).toBe(1);
        expect(sb.sessionsFor(phone)).toHaveLength(1);
        // Asked again, the first browser gets the duplicate's session.
        const again = await startFrom(hosts[0]!, ip, phone, 'sms', browser);
        expect(again.body).toMatchObject({ resumed: true, verification_id: duplicate.body.verification_id });
      } finally {
        release();
        for (const host of hosts) await host.close();
      }
    });
  },
);
