/**
 * Erasure against work already in flight: a check that reached the API before `forget` and answers
 * after it must not bring the subject back (no record, no status, no claim, no event for it).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { StoreOption } from '../../src/store/create-store.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { call, createTestApp, type TestApp } from '../support/verification-app.js';
import { eventsOf, moduleOptions } from '../webhooks/harness.js';

let serial = 0;
const phone = () =>
  `+7916${String((process.pid + 500) % 1000).padStart(3, '0')}${String(8000 + ++serial).padStart(4, '0')}`;

describe('erasure while a check is in flight', () => {
  const suite = sandboxSuite();
  const hosts: TestApp[] = [];
  afterEach(async () => {
    for (const h of hosts.splice(0)) await h.close();
  });

  async function proveNotRecreated(
    store: StoreOption,
    by: 'phoneNumber' | 'owner',
    typed: 'right' | 'wrong' = 'right',
    ledger = false,
  ): Promise<void> {
    const host = await createTestApp({
      platform: 'express',
      module: moduleOptions(suite.sb, {
        store,
        history: {},
        limits: { spendCap: false },
        ...(ledger ? { ledger: {} } : {}),
      }),
    });
    hosts.push(host);
    const [n, owner] = [phone(), `owner-${randomUUID()}`];
    const post = (path: string, body: unknown) =>
      call(host.url, 'POST', `/verification/${path}`, body, { 'x-user': owner });
    const started = await post('start', { phone_number: n, method: 'sms' });
    expect(started.status).toBe(201);
    const id = String(started.body.verification_id);
    const rid = suite.sb.sessionsFor(n).at(-1)!.request_id;
    await suite.sb.deliver(rid);
    const right = String(suite.sb.getSession(rid)!.code);
    const code = typed === 'right' ? right : right === '0000' ? '1111' : '0000';

    // The API answers the check late: the person is forgotten meanwhile.
    suite.sb.addFault({ route: 'POST /v1/verify/check', kind: 'latency', latency_ms: 600, count: 1 });
    const before = suite.sb.requestCount('POST /v1/verify/check');
    const checking = post('check', { verification_id: id, code });
    while (suite.sb.requestCount('POST /v1/verify/check') === before)
      await new Promise((r) => setTimeout(r, 10));
    await host.app
      .get(VerificationErasure, { strict: false })
      .forget(by === 'phoneNumber' ? { phoneNumber: n } : { owner });
    // The check is answered as its handle now is: not found.
    expect((await checking).status).toBe(404);

    const status = await call(host.url, 'GET', `/verification/status/${id}`, undefined, { 'x-user': owner });
    expect(status.status).toBe(404);
    // Dropped, as any pending session of a forgotten subject: no outcome event, no history of it.
    expect(eventsOf(host, rid)).toEqual([]);
    const history = host.app.get(VerificationHistory, { strict: false });
    expect(await history.list({ owner })).toEqual([]);
    // The number's history keeps what an owner's erasure leaves of it (its start, no owner): no check, no outcome.
    const numbers = await history.list({ phoneNumber: n });
    if (by === 'phoneNumber') expect(numbers).toEqual([]);
    expect(numbers.filter((e) => e.owner !== undefined || e.kind !== 'start')).toEqual([]);
  }

  it.each(['phoneNumber', 'owner'] as const)(
    'MemoryStore, by %s: the late answer recreates nothing',
    async (by) => {
      const store = new MemoryStore({ clock: () => suite.sb.now() });
      try {
        await proveNotRecreated(store, by);
      } finally {
        for (const h of hosts.splice(0)) await h.close();
        await store.close();
      }
    },
  );

  // A second shape: with the ledger on, the check's refusal counts no session (it paid for none).
  it.each(['phoneNumber', 'owner'] as const)(
    'MemoryStore with the ledger, by %s: the late answer recreates nothing',
    async (by) => {
      const store = new MemoryStore({ clock: () => suite.sb.now() });
      try {
        await proveNotRecreated(store, by, 'right', true);
      } finally {
        for (const h of hosts.splice(0)) await h.close();
        await store.close();
      }
    },
  );

  it.each(['phoneNumber', 'owner'] as const)(
    'MemoryStore, by %s: a wrong code answered late records nothing',
    async (by) => {
      const store = new MemoryStore({ clock: () => suite.sb.now() });
      try {
        await proveNotRecreated(store, by, 'wrong');
      } finally {
        for (const h of hosts.splice(0)) await h.close();
        await store.close();
      }
    },
  );

  it('RedisStore, by phoneNumber: the late answer recreates nothing', async () => {
    await proveNotRecreated(
      { url: sharedRedisUrl(), keyPrefix: `pv-erase-race-${randomUUID()}:` },
      'phoneNumber',
    );
  });
});
