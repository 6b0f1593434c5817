import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { call, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import {
  check,
  cookieFrom,
  freshBrowser,
  freshIp,
  freshPhone,
  protectedHost,
  startFrom,
  protectionFixture,
  refusal,
} from './protection-host.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

type Response = Awaited<ReturnType<typeof call>>;

/** The upstream request id behind a handle, through the status route and the sandbox. */
function sessionsOf(sb: VerificationSandbox, phone: string): string[] {
  return sb.sessionsFor(phone).map((s) => s.request_id);
}

describe.each(ONE_PLATFORM)('duplicate-start coalescing (%s)', (platform) => {
  const fx = protectionFixture();

  it('20 concurrent identical starts of one browser make one POST /v1/verify and all get that session', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const phone = freshPhone();
    const ip = freshIp();
    const browser = freshBrowser();
    const before = fx.sb.requestCount('POST /v1/verify');
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => startFrom(fx.host!, ip, phone, 'reverse_flash_call', browser)),
    );
    expect(fx.sb.requestCount('POST /v1/verify') - before).toBe(1);
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(responses.filter((r) => r.body.resumed === false)).toHaveLength(1);
    expect(responses.filter((r) => r.body.resumed === true)).toHaveLength(19);
    // One verification, one verification_id string: every resumed start hands back the same text.
    expect(new Set(responses.map((r) => r.body.verification_id)).size).toBe(1);
    // Same display data everywhere: the number to call of the one session.
    const [session] = fx.sb.sessionsFor(phone);
    expect(new Set(responses.map((r) => r.body.number_to_call))).toEqual(new Set([session.number_to_call]));
    expect(new Set(responses.map((r) => r.body.resend_available_at)).size).toBe(1);
    // Every handle opens the one session.
    for (const r of responses.slice(0, 3)) {
      const status = await call(fx.host.url, 'GET', `/verification/status/${String(r.body.verification_id)}`);
      expect(status.body).toMatchObject({ status: 'sent', number_to_call: session.number_to_call });
    }
    // Coalesced starts count nowhere (and a reverse flash call, charged on proof, is not counted
    // per address under grading): the IP still has its 10 starts; the 11th SMS is graded.
    for (let i = 0; i < 10; i++) expect((await startFrom(fx.host, ip, freshPhone())).status).toBe(201);
    expect((await startFrom(fx.host, ip, freshPhone())).body.held).toBe('start_ip_limit');
  });

  it('the same caller is the owner when one is configured: other IPs of the user coalesce, other users do not', async () => {
    fx.host = await protectedHost(
      fx.sb,
      platform,
      { resendCooldownMs: false },
      {
        owner: (req) => (req as { headers: Record<string, string | undefined> }).headers['x-user-id'],
      },
    );
    const phone = freshPhone();
    const as = (user: string) => ({ 'x-user-id': user });
    const a1 = await startFrom(fx.host, freshIp(), phone, 'sms', as('alice'));
    const a2 = await startFrom(fx.host, freshIp(), phone, 'sms', as('alice'));
    expect([a1.body.resumed, a2.body.resumed]).toEqual([false, true]);
    expect(sessionsOf(fx.sb, phone)).toHaveLength(1);
    const sharedIp = freshIp();
    const b = await startFrom(fx.host, sharedIp, phone, 'sms', as('bob'));
    expect(b.body.resumed).toBe(false);
    expect(sessionsOf(fx.sb, phone)).toHaveLength(2);
    // A handle handed back is bound to its owner like any other.
    const foreign = await call(
      fx.host.url,
      'GET',
      `/verification/status/${String(a2.body.verification_id)}`,
      undefined,
      as('bob'),
    );
    expect(foreign.status).toBe(404);
  });

  it('without an owner, a pending session is handed back only to the browser that started it (its cookie), never to another browser behind the same IP', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const phone = freshPhone();
    const natIp = freshIp();
    const first = await startFrom(fx.host, natIp, phone);
    expect(first.body.resumed).toBe(false);
    const setCookie = first.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^pv_browser=[A-Za-z0-9_-]{22}; /);
    expect(setCookie.split('; ').slice(1).sort()).toEqual([
      'HttpOnly',
      'Path=/verification',
      'SameSite=Strict',
    ]);

    // A second person behind the same NAT, same number and method: no handle to the first session, nor to
    // one whose page set a cookie of its own whose name ends like the key's (the key is read by its name alone).
    const lookalike = { cookie: `theme=dark; my${cookieFrom(first).cookie!}` };
    for (const neighbour of [{}, freshBrowser(), lookalike]) {
      const other = await startFrom(fx.host, natIp, phone, 'sms', neighbour);
      expect(other.status).toBe(429);
      expect(other.body.verification_id).toBeUndefined();
      expect(other.body.resumed).toBeUndefined();
    }
    // The first browser is handed its session back (a reload, a double-click).
    const again = await startFrom(fx.host, natIp, phone, 'sms', cookieFrom(first));
    expect(again.body).toMatchObject({ resumed: true, expires_at: first.body.expires_at });
    expect(again.headers.get('set-cookie')).toBeNull();
    expect(sessionsOf(fx.sb, phone)).toHaveLength(1);

    // With the cooldown off the neighbour gets a session of its own, not the first one.
    await fx.host.close();
    fx.host = await protectedHost(fx.sb, platform, { resendCooldownMs: false });
    const mine = await startFrom(fx.host, natIp, phone, 'sms', cookieFrom(first));
    const theirs = await startFrom(fx.host, natIp, phone, 'sms', freshBrowser());
    expect([mine.body.resumed, theirs.body.resumed]).toEqual([false, false]);
    expect(sessionsOf(fx.sb, phone)).toHaveLength(3);
  });

  it('the browser cookie is Secure when the request came over https, and never set when an owner is known', async () => {
    fx.host = await protectedHost(
      fx.sb,
      platform,
      {},
      { owner: (req) => (req as { headers: Record<string, string | undefined> }).headers['x-user-id'] },
    );
    const https = await startFrom(fx.host, freshIp(), freshPhone(), 'sms', { 'x-forwarded-proto': 'https' });
    expect(https.headers.get('set-cookie')).toMatch(/; Secure$/);
    const owned = await startFrom(fx.host, freshIp(), freshPhone(), 'sms', { 'x-user-id': 'alice' });
    expect(owned.status).toBe(201);
    expect(owned.headers.get('set-cookie')).toBeNull();
  });

  it('a browser is given its key only while something reads it: coalescing or the resend cooldown; with both off, none', async () => {
    const cookieWith = async (limits: Record<string, unknown>, browser: Record<string, string> = {}) => {
      fx.host = await protectedHost(fx.sb, platform, limits);
      const answer = await startFrom(fx.host, freshIp(), freshPhone(), 'sms', browser);
      await fx.host.close();
      fx.host = undefined;
      return [answer.status, answer.headers.get('set-cookie')];
    };
    const keyed = [201, expect.stringMatching(/^pv_browser=[A-Za-z0-9_-]{22}; /)];
    expect(await cookieWith({ coalesceStarts: false })).toStrictEqual(keyed);
    expect(await cookieWith({ resendCooldownMs: false })).toStrictEqual(keyed);
    const off = { coalesceStarts: false, resendCooldownMs: false };
    expect(await cookieWith(off)).toStrictEqual([201, null]);
    // A browser keeping the key of an earlier boot is neither sent it again nor sent an empty one.
    expect(await cookieWith(off, freshBrowser())).toStrictEqual([201, null]);
    expect(await cookieWith({}, freshBrowser())).toStrictEqual([201, null]);
  });

  it('a different method or phone is a different start', async () => {
    fx.host = await protectedHost(fx.sb, platform, { resendCooldownMs: false });
    const phone = freshPhone();
    const ip = freshIp();
    const browser = cookieFrom(await startFrom(fx.host, ip, phone, 'sms'));
    expect((await startFrom(fx.host, ip, phone, 'flash_call', browser)).body.resumed).toBe(false);
    expect((await startFrom(fx.host, ip, freshPhone(), 'sms', browser)).body.resumed).toBe(false);
    expect((await startFrom(fx.host, ip, phone, 'sms', browser)).body.resumed).toBe(true);
  });

  it('a session that ended is not handed back: the next start is a new one', async () => {
    fx.host = await protectedHost(fx.sb, platform, { resendCooldownMs: false });
    const phone = freshPhone();
    const ip = freshIp();
    // One browser (its cookie): the caller a pending session would be handed back to.
    const browser = freshBrowser();
    const first = await startFrom(fx.host, ip, phone, 'sms', browser);
    expect((await startFrom(fx.host, ip, phone, 'sms', browser)).body.resumed).toBe(true);
    const [session] = fx.sb.sessionsFor(phone);
    await fx.sb.deliver(session.request_id);
    const code = String(fx.sb.getSession(session.request_id)!.code);
    expect((await check(fx.host, ip, first.body.verification_id, code)).body.verified).toBe(true);
    const next = await startFrom(fx.host, ip, phone, 'sms', browser);
    expect(next.body).toMatchObject({ resumed: false, status: 'sent' });
    expect(next.body.verification_id).not.toBe(first.body.verification_id);
    expect(sessionsOf(fx.sb, phone)).toHaveLength(2);
  });

  it('when the first start fails, its concurrent duplicates share the failure and the next start tries again', async () => {
    // The first start times out (an unknown outcome), long enough for the duplicates to join it.
    fx.host = await protectedHost(
      fx.sb,
      platform,
      { resendCooldownMs: false },
      {
        api: {
          baseUrl: fx.sb.url,
          apiKey: fx.sb.demoAccount.apiKey,
          apiSecret: fx.sb.demoAccount.apiSecret,
          timeoutMs: 400,
        },
      },
    );
    const phone = freshPhone();
    const ip = freshIp();
    const browser = freshBrowser();
    fx.sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 600 });
    const before = fx.sb.requestCount('POST /v1/verify');
    const failed = await Promise.all(
      Array.from({ length: 5 }, () => startFrom(fx.host!, ip, phone, 'sms', browser)),
    );
    expect(failed.map((r) => r.status)).toEqual(Array(5).fill(503));
    expect(fx.sb.requestCount('POST /v1/verify') - before).toBe(1);
    const retried = await startFrom(fx.host, ip, phone, 'sms', browser);
    expect(retried.body).toMatchObject({ resumed: false, status: 'sent' });
    expect(fx.sb.requestCount('POST /v1/verify') - before).toBe(2);
  });

  it('coalesceStarts: false makes every start a new one', async () => {
    fx.host = await protectedHost(fx.sb, platform, { coalesceStarts: false, resendCooldownMs: false });
    const phone = freshPhone();
    const ip = freshIp();
    const responses = await Promise.all(Array.from({ length: 3 }, () => startFrom(fx.host!, ip, phone)));
    expect(responses.map((r) => r.body.resumed)).toEqual([false, false, false]);
    expect(sessionsOf(fx.sb, phone)).toHaveLength(3);
  });

  it('coalesceStarts: false hands nothing back to the browser that started it either: its cooldown answers', async () => {
    fx.host = await protectedHost(fx.sb, platform, { coalesceStarts: false });
    const phone = freshPhone();
    const ip = freshIp();
    const browser = freshBrowser();
    const first = await startFrom(fx.host, ip, phone, 'sms', browser);
    expect({ status: first.status, resumed: first.body.resumed }).toEqual({ status: 201, resumed: false });
    const again = await startFrom(fx.host, ip, phone, 'sms', browser);
    expect(refusal(again)).toMatchObject({ status: 429, reason: 'resend_cooldown' });
    expect(sessionsOf(fx.sb, phone)).toHaveLength(1);
  });
});

const sharedStores: [string, (sb: VerificationSandbox) => VerificationStore][] = [
  ['one MemoryStore', (sb) => new MemoryStore({ clock: () => sb.now() })],
  [
    'Redis',
    (sb) =>
      new RedisStore({ url: sharedRedisUrl(), keyPrefix: `pv-test:${randomUUID()}:`, clock: () => sb.now() }),
  ],
];

describe.each(sharedStores)('coalescing across two module instances on %s', (_name, createStore) => {
  // Registered before the suite's hooks: what it closes goes before the sandbox, as before.
  afterAll(async () => {
    for (const host of hosts) await host.close();
    await store?.close();
  });
  const suite = sandboxSuite({ freezeClock: false, demoAccount: { balance: 100_000 } });
  let sb: VerificationSandbox;
  let store: VerificationStore;
  let hosts: TestApp[] = [];

  beforeAll(async () => {
    sb = suite.sb;
    store = createStore(sb);
    hosts = [
      await protectedHost(sb, 'express', {}, { store }),
      await protectedHost(sb, 'fastify', {}, { store }),
    ];
  });

  it('20 concurrent identical starts spread over both instances make one POST /v1/verify', async () => {
    const phone = freshPhone();
    const ip = freshIp();
    const browser = freshBrowser();
    const before = sb.requestCount('POST /v1/verify');
    const responses: Response[] = await Promise.all(
      Array.from({ length: 20 }, (_, i) => startFrom(hosts[i % 2], ip, phone, 'sms', browser)),
    );
    expect(sb.requestCount('POST /v1/verify') - before).toBe(1);
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(responses.filter((r) => r.body.resumed === false)).toHaveLength(1);
    expect(new Set(responses.map((r) => r.body.expires_at)).size).toBe(1);
    // Limits are shared too: the caller's cooldown set by one instance holds on the other (another
    // browser of the same IP: not handed the session back).
    const other = await startFrom(hosts[1], ip, phone, 'sms', freshBrowser());
    expect(other.body.reason).toBe('resend_cooldown');
  });

  it("a duplicate that waited on the other instance's start reads again once it fails: the API's 429 back-off holds it, nothing more is sent", async () => {
    const phone = freshPhone();
    const ip = freshIp();
    const browser = freshBrowser();
    sb.addFault({
      route: 'POST /v1/verify',
      kind: 'status',
      status: 429,
      retry_after_s: 1,
      latency_ms: 400,
      count: 1,
    });
    try {
      const before = sb.requestCount('POST /v1/verify');
      const first = startFrom(hosts[0], ip, phone, 'sms', browser);
      // The duplicate arrives while the first start's call is under way, and waits on its claim.
      while (sb.requestCount('POST /v1/verify') === before) await new Promise((r) => setTimeout(r, 5));
      const duplicate = await startFrom(hosts[1], ip, phone, 'sms', browser);
      expect((await first).status).toBe(429);
      expect(refusal(duplicate)).toMatchObject({ status: 429, reason: 'upstream_rate_limit' });
      expect(sb.requestCount('POST /v1/verify') - before).toBe(1);
    } finally {
      sb.clearFaults();
      await sb.advance(1_000); // the back-off's end, for the tests after this one
    }
  });

  it.each([
    ['the resend cooldown on (the duplicate was refused resend_cooldown)', {}],
    ['the resend cooldown off (the duplicate paid again)', { resendCooldownMs: false as const }],
  ])(
    'the claim outlives a start whose POST may be retried after a refused connection (retryDeadlineMs + timeoutMs): a duplicate 40 s in joins it, %s',
    async (_, limits) => {
      // timeoutMs 20 s, retried within 30 s: the first start's POST may land up to 50 s in (the claim: 60 s).
      const api = {
        baseUrl: sb.url,
        apiKey: sb.demoAccount.apiKey,
        apiSecret: sb.demoAccount.apiSecret,
        timeoutMs: 20_000,
        retryDeadlineMs: 30_000,
      };
      const slow = [
        await protectedHost(sb, 'express', limits, { store, api }),
        await protectedHost(sb, 'fastify', limits, { store, api }),
      ];
      try {
        const phone = freshPhone();
        const ip = freshIp();
        const browser = freshBrowser();
        const before = sb.requestCount('POST /v1/verify');
        sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 1_500, count: 1 });
        const first = startFrom(slow[0]!, ip, phone, 'sms', browser);
        while (sb.requestCount('POST /v1/verify') === before) await new Promise((r) => setTimeout(r, 5));
        // 40 s in (store clock): past timeoutMs + 10 s, within the POST's whole life and the claim's slack.
        await sb.advance(40_000);
        const duplicate = await startFrom(slow[1]!, ip, phone, 'sms', browser);
        expect((await first).status).toBe(201);
        expect(duplicate.body).toMatchObject({ resumed: true });
        expect(sb.requestCount('POST /v1/verify') - before).toBe(1);
      } finally {
        sb.clearFaults();
        for (const host of slow) await host.close();
      }
    },
  );

  it('two browsers behind one IP are not one caller on either instance: only the cookie gets the session back', async () => {
    const phone = freshPhone();
    const natIp = freshIp();
    const first = await startFrom(hosts[0], natIp, phone);
    const neighbour = await startFrom(hosts[1], natIp, phone, 'sms', freshBrowser());
    expect(neighbour.status).toBe(429);
    expect(neighbour.body.verification_id).toBeUndefined();
    const again = await startFrom(hosts[1], natIp, phone, 'sms', cookieFrom(first));
    expect(again.body).toMatchObject({ resumed: true, expires_at: first.body.expires_at });
  });

  it('the per-IP limit holds across both instances', async () => {
    const ip = freshIp();
    for (let i = 0; i < 10; i++) expect((await startFrom(hosts[i % 2], ip, freshPhone())).status).toBe(201);
    expect((await startFrom(hosts[0], ip, freshPhone())).body.held).toBe('start_ip_limit');
    expect((await startFrom(hosts[1], ip, freshPhone())).body.held).toBe('start_ip_limit');
  });
});
