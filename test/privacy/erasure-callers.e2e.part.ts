/**
 * Erasure and what the subject's callers left: after every kind of journey (verified with a wrong code
 * first, a switch, a pending session, a start handed back to the browser that made it, a resend refused
 * by the cooldown), forget() of a number or an owner leaves, of the keys its journeys created, the
 * erasure mark and the limits of the givers that protect the host's money (the client key's, the
 * browser key's, the number's: an erasure buys no fresh budget, a refused resend stays refused); no key
 * named by a forgotten owner, no coalescing claim. A second caller's identical journeys, run first,
 * made every shared (range, prefix, country, method) counter already.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { DataKeys } from '../../src/core/data-keys.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../../src/options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../../src/options/verification.options.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { StoreOption } from '../../src/store/create-store.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { dumpMemoryStore, dumpRedisPrefix, isErasureIndexCounter } from '../support/store-dump.js';
import { call, createTestApp, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

/** Numbers of one range (the last three digits differ): the shared counters are the range's. */
let serial = 0;
const phone = () =>
  `+7916${String(process.pid % 1000).padStart(3, '0')}1${String(++serial).padStart(3, '0')}`;

interface Caller {
  owner?: string;
  client: string;
  cookie?: string;
}

describe('erasure of the callers’ counters', () => {
  const suite = sandboxSuite();
  const hosts: TestApp[] = [];
  afterEach(async () => {
    for (const h of hosts.splice(0)) await h.close();
  });

  async function boot(store: StoreOption): Promise<TestApp> {
    const host = await createTestApp({
      platform: 'express',
      module: moduleOptions(suite.sb, {
        store,
        history: {},
        limits: {
          spendCap: false,
          resendCooldownMs: 60_000,
          key: (req) => (req as { headers: Record<string, string | undefined> }).headers['x-client'],
        },
      }),
    });
    hosts.push(host);
    return host;
  }

  /** Every kind of journey of one caller and number: wrong then right code, a switch (from another network), a hand-back, a refused resend; answers its handles. */
  async function journeys(host: TestApp, who: Caller, n: string): Promise<string[]> {
    const headers = (): Record<string, string> => ({
      'x-client': who.client,
      ...(who.owner === undefined ? {} : { 'x-user': who.owner }),
      ...(who.cookie === undefined ? {} : { cookie: who.cookie }),
    });
    const post = async (path: string, body: unknown, network = '') => {
      const as = { ...headers(), 'x-client': `${who.client}${network}` };
      const answer = await call(host.url, 'POST', `/verification/${path}`, body, as);
      const cookie = answer.headers.get('set-cookie');
      if (cookie !== null) who.cookie = cookie.split(';')[0];
      return answer;
    };
    const started = await post('start', { phone_number: n, method: 'sms' });
    expect(started.status).toBe(201);
    const again = await post('start', { phone_number: n, method: 'sms' });
    expect(again.body.resumed).toBe(true);
    const rid = suite.sb.sessionsFor(n).at(-1)!.request_id;
    await suite.sb.deliver(rid);
    const code = String(suite.sb.getSession(rid)!.code);
    const id = started.body.verification_id;
    const wrong = await post('check', { verification_id: id, code: code === '0000' ? '1111' : '0000' });
    expect(wrong.status).toBe(400);
    expect((await post('check', { verification_id: id, code })).body.verified).toBe(true);
    const pending = await post('start', { phone_number: n, method: 'flash_call' });
    expect(pending.status).toBe(201);
    // The switch comes from another network (a client key of its own): the switch's twin path.
    const switched = await post(
      'switch',
      { verification_id: pending.body.verification_id, method: 'msgr1_otp' },
      '-mobile',
    );
    expect(switched.status).toBe(201);
    expect((await post('start', { phone_number: n, method: 'sms' })).status).toBe(429);
    expect(
      (await call(host.url, 'GET', `/verification/status/${String(id)}`, undefined, headers())).status,
    ).toBe(200);
    return [String(id), String(pending.body.verification_id)];
  }

  async function proveCallersForgotten(
    stores: { store: StoreOption; keys: () => Promise<string[]> },
    by: 'phoneNumber' | 'owner',
  ): Promise<void> {
    const host = await boot(stores.store);
    const anonymous = by === 'phoneNumber';
    const newCaller = (): Caller => ({
      client: `client-${randomUUID()}`,
      ...(anonymous ? {} : { owner: `owner-${randomUUID()}` }),
    });
    // Another caller's identical journeys first: every shared counter exists before the subject's.
    await journeys(host, newCaller(), phone());
    const before = new Set(await stores.keys());
    const [subject, n] = [newCaller(), phone()];
    const handles = await journeys(host, subject, n);
    if (anonymous) expect(subject.cookie).toMatch(/^pv_browser=/);
    const created = (await stores.keys()).filter((key) => !before.has(key));
    expect(created.length).toBeGreaterThan(20);

    const ids = suite.sb.sessionsFor(n).map((s) => s.request_id);
    const report = await host.app
      .get(VerificationErasure, { strict: false })
      .forget(anonymous ? { phoneNumber: n } : { owner: subject.owner! });
    expect(report.sessions).toBe(3);
    // What the store keeps once the erasure answered (read before the caller's next requests, whose own
    // short-lived meters are new facts, not kept ones).
    const left = (await stores.keys()).filter((key) => !before.has(key));
    // Its handles open nothing, and its browser is handed back no session.
    const as = {
      'x-client': subject.client,
      ...(subject.owner === undefined ? {} : { 'x-user': subject.owner }),
      ...(subject.cookie === undefined ? {} : { cookie: subject.cookie }),
    };
    for (const id of handles)
      expect((await call(host.url, 'GET', `/verification/status/${id}`, undefined, as)).status).toBe(404);
    const keys: DataKeys = host.app.get<ResolvedVerificationOptions>(RESOLVED_VERIFICATION_OPTIONS, {
      strict: false,
    }).dataKeys;
    const mark = `:{${anonymous ? 'n' : 'o'}:${keys.digest(anonymous ? n : subject.owner!)}}:forgotten`;
    // What remains, but what is named by its sessions' request ids (no one) or by its number when the
    // owner was forgotten (a subject of its own): the erasure mark, and the limits and figures of the
    // givers that protect the host's money (the client key's, the browser key's, the number's own),
    // counts under keyed digests that expire; the methods' figures (named by a method and a calling code,
    // written after the answer, so the other caller's may land late under load). None is named by a
    // forgotten owner.
    const named = left
      .filter((key) => !ids.some((id) => key.includes(`{${id}}`)))
      .filter((key) => anonymous || !key.includes(keys.digest(n)));
    expect(named.filter((key) => key.endsWith(mark))).toHaveLength(1);
    // No coalescing claim of its journeys is left (one named by its browser key among them).
    const claims = created.filter((key) => key.includes('protect:coalesce:'));
    expect(claims.length).toBeGreaterThan(0);
    expect(left.filter((key) => claims.includes(key))).toEqual([]);
    expect(
      named.filter(
        (key) =>
          !key.endsWith(mark) &&
          !isErasureIndexCounter(key) &&
          !/(^|:)(protect|history:refusals|stats(-(giver|caller|record))?):/.test(key),
      ),
    ).toEqual([]);
    if (!anonymous) {
      const owner = [keys.digest(subject.owner!), keys.digest(`owner:${subject.owner!}`)];
      expect(
        left.filter(
          (key) => !key.endsWith(mark) && !isErasureIndexCounter(key) && owner.some((d) => key.includes(d)),
        ),
      ).toEqual([]);
    }
    // The limits hold after the erasure: the caller's refused resend is refused still.
    const resend = await call(
      host.url,
      'POST',
      '/verification/start',
      { phone_number: n, method: 'sms' },
      as,
    );
    expect(resend.status).toBe(anonymous ? 429 : 201);
  }

  it.each(['phoneNumber', 'owner'] as const)('MemoryStore, by %s', async (by) => {
    const store = new MemoryStore({ clock: () => suite.sb.now() });
    try {
      await proveCallersForgotten(
        { store, keys: async () => dumpMemoryStore(store).map((line) => line.split(' ')[0]!) },
        by,
      );
    } finally {
      for (const h of hosts.splice(0)) await h.close();
      await store.close();
    }
  });

  it.each(['phoneNumber', 'owner'] as const)('RedisStore, by %s', async (by) => {
    const keyPrefix = `pv-erase-callers-${randomUUID()}:`;
    await proveCallersForgotten(
      {
        store: { url: sharedRedisUrl(), keyPrefix },
        keys: async () =>
          (await dumpRedisPrefix(sharedRedisUrl(), keyPrefix)).map((line) => line.split(' ')[0]!),
      },
      by,
    );
  });
});
