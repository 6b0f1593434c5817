import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { call, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import {
  freshIp,
  freshPhone,
  protectedHost,
  protectionFixture,
  refusal,
  startFrom,
  timed,
} from './protection-host.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const HOUR = 3_600_000;
const CHECKS = 'POST /v1/verify/check';
type Response = Awaited<ReturnType<typeof call>>;

/** The code of the newest session of the number, and a code that is surely not it. */
function codesOf(sb: VerificationSandbox, phone: string): { right: string; wrong: string } {
  const [newest] = sb.sessionsFor(phone);
  const right = String(newest.code);
  const wrong = right.replace(/^./, (d) => String((Number(d) + 1) % 10));
  return { right, wrong };
}

function checkAs(
  host: TestApp,
  ip: string,
  verificationId: unknown,
  code: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return call(
    host.url,
    'POST',
    '/verification/check',
    { verification_id: verificationId, code },
    { 'x-forwarded-for': ip, ...headers },
  );
}

describe.each(ONE_PLATFORM)('wrong codes across sessions (%s)', (platform) => {
  const fx = protectionFixture();

  it('10 wrong codes an hour per number, across sessions and callers; then checks (even the right code) and starts of the number are 429 too_many_wrong_codes with a coarse Retry-After, until the window ends', async () => {
    fx.host = await protectedHost(fx.sb, platform, { resendCooldownMs: false });
    const phone = freshPhone();
    // The owner's session, started before anyone guessed.
    const ownerIp = freshIp();
    const owners = await startFrom(fx.host, ownerIp, phone);
    const ownersCode = codesOf(fx.sb, phone).right;

    let wrong = 0;
    let openedBy = 0;
    for (const ip of [freshIp(), freshIp()])
      for (let session = 0; session < 2 && wrong < 10; session++) {
        const started = await startFrom(fx.host, ip, phone);
        expect(started.status).toBe(201);
        const { wrong: code } = codesOf(fx.sb, phone);
        for (let attempt = 0; attempt < 3 && wrong < 10; attempt++) {
          const [res, , receivedAt] = await timed(fx.sb, () =>
            checkAs(fx.host!, ip, started.body.verification_id, code),
          );
          expect(res.body.error_code).toBe('invalid_code');
          if (wrong === 0) openedBy = receivedAt;
          wrong += 1;
          // Across more than the minutes of one session, never past the owner's (5 min).
          await fx.sb.advance(20_000);
        }
      }
    expect(wrong).toBe(10);

    const checks = fx.sb.requestCount(CHECKS);
    const posts = fx.sb.requestCount('POST /v1/verify');
    const [refused, , receivedAt] = await timed(fx.sb, () =>
      checkAs(fx.host!, ownerIp, owners.body.verification_id, ownersCode),
    );
    expect(refusal(refused)).toMatchObject({ status: 429, errorCode: 'too_many_wrong_codes' });
    expect(refused.body.reason).toBe('wrong_codes_phone');
    expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter % 300).toBe(0);
    expect(receivedAt + retryAfter * 1000).toBeGreaterThanOrEqual(openedBy + HOUR);
    expect(refusal(await startFrom(fx.host, freshIp(), phone, 'flash_call'))).toMatchObject({
      status: 429,
      errorCode: 'too_many_wrong_codes',
    });
    expect(fx.sb.requestCount(CHECKS)).toBe(checks);
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(posts);

    // Once the window has passed, the number verifies again.
    await fx.sb.advance(openedBy + HOUR - fx.sb.now());
    const next = await startFrom(fx.host, freshIp(), phone);
    expect(next.status).toBe(201);
    const verified = await checkAs(
      fx.host,
      freshIp(),
      next.body.verification_id,
      codesOf(fx.sb, phone).right,
    );
    expect(verified.body).toMatchObject({ verified: true });
  });

  it('only a code the API answered invalid_code counts: malformed codes, checks of an ended or expired session and right codes do not', async () => {
    fx.host = await protectedHost(fx.sb, platform, {
      resendCooldownMs: false,
      wrongCodesPerPhone: { points: 2, windowMs: HOUR },
    });
    const phone = freshPhone();
    const ip = freshIp();
    const expiring = await startFrom(fx.host, ip, phone);
    for (let i = 0; i < 3; i++)
      expect((await checkAs(fx.host, ip, expiring.body.verification_id, '12ab')).body.error_code).toBe(
        'validation_error',
      );
    await fx.sb.advance(301_000);
    for (let i = 0; i < 3; i++)
      expect(
        (await checkAs(fx.host, ip, expiring.body.verification_id, codesOf(fx.sb, phone).wrong)).body
          .error_code,
      ).toBe('not_pending');
    const verified = await startFrom(fx.host, ip, phone);
    const { right } = codesOf(fx.sb, phone);
    expect((await checkAs(fx.host, ip, verified.body.verification_id, right)).body.verified).toBe(true);
    expect((await checkAs(fx.host, ip, verified.body.verification_id, right)).body.error_code).toBe(
      'not_pending',
    );

    const guessed = await startFrom(fx.host, ip, phone);
    const { wrong } = codesOf(fx.sb, phone);
    for (let i = 0; i < 2; i++)
      expect((await checkAs(fx.host, ip, guessed.body.verification_id, wrong)).body.error_code).toBe(
        'invalid_code',
      );
    expect((await checkAs(fx.host, ip, guessed.body.verification_id, wrong)).body.error_code).toBe(
      'too_many_wrong_codes',
    );
  });

  it('concurrent guesses cannot overshoot the budget: of 6 at once with 2 left, 2 reach the API', async () => {
    fx.host = await protectedHost(fx.sb, platform, {
      resendCooldownMs: false,
      wrongCodesPerPhone: { points: 2, windowMs: HOUR },
    });
    const phone = freshPhone();
    const ip = freshIp();
    const handles: unknown[] = [];
    const wrongCodes: string[] = [];
    for (let i = 0; i < 2; i++) {
      handles.push((await startFrom(fx.host, ip, phone, i === 0 ? 'sms' : 'msgr1_otp')).body.verification_id);
      wrongCodes.push(codesOf(fx.sb, phone).wrong);
    }
    const checks = fx.sb.requestCount(CHECKS);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => checkAs(fx.host!, ip, handles[i % 2], wrongCodes[i % 2])),
    );
    expect(answers.map((r) => r.body.error_code).sort()).toEqual([
      'invalid_code',
      'invalid_code',
      ...Array(4).fill('too_many_wrong_codes'),
    ]);
    expect(fx.sb.requestCount(CHECKS) - checks).toBe(2);
  });

  it("per owner (when owner() answers): the owner's wrong codes across numbers are budgeted too, with an exact Retry-After; other owners are not affected", async () => {
    fx.host = await protectedHost(
      fx.sb,
      platform,
      {
        resendCooldownMs: false,
        wrongCodesPerPhone: false,
        wrongCodesPerOwner: { points: 3, windowMs: HOUR },
      },
      { owner: (req) => (req as { headers: Record<string, string | undefined> }).headers['x-user-id'] },
    );
    const alice = { 'x-user-id': 'alice' };
    const ip = freshIp();
    const [phone1, phone2] = [freshPhone(), freshPhone()];
    const s1 = await startFrom(fx.host, ip, phone1, 'sms', alice);
    const wrong1 = codesOf(fx.sb, phone1).wrong;
    const s2 = await startFrom(fx.host, ip, phone2, 'sms', alice);
    const wrong2 = codesOf(fx.sb, phone2).wrong;
    const [, , openedBy] = await timed(fx.sb, () =>
      checkAs(fx.host!, ip, s1.body.verification_id, wrong1, alice),
    );
    expect((await checkAs(fx.host, ip, s1.body.verification_id, wrong1, alice)).status).toBe(400);
    expect((await checkAs(fx.host, ip, s2.body.verification_id, wrong2, alice)).status).toBe(400);
    await fx.sb.advance(2 * 60_000);
    const refused = await checkAs(fx.host, ip, s2.body.verification_id, wrong2, alice);
    expect(refusal(refused)).toMatchObject({ status: 429, errorCode: 'too_many_wrong_codes' });
    expect(refused.body.reason).toBe('wrong_codes_owner');
    expect(Number(refused.headers.get('retry-after'))).toBe(
      Math.ceil((openedBy + HOUR - fx.sb.now()) / 1000),
    );
    expect(refusal(await startFrom(fx.host, ip, freshPhone(), 'sms', alice)).errorCode).toBe(
      'too_many_wrong_codes',
    );
    // Bob, on the same number from the same IP: his own budget.
    const bob = { 'x-user-id': 'bob' };
    const s3 = await startFrom(fx.host, ip, phone2, 'flash_call', bob);
    expect(s3.status).toBe(201);
    expect(
      (await checkAs(fx.host, ip, s3.body.verification_id, codesOf(fx.sb, phone2).wrong, bob)).body
        .error_code,
    ).toBe('invalid_code');
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

describe.each(sharedStores)(
  'the wrong-code budget across two module instances on %s',
  (_name, createStore) => {
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
      const limits = { resendCooldownMs: false as const, wrongCodesPerPhone: { points: 2, windowMs: HOUR } };
      hosts = [
        await protectedHost(sb, 'express', limits, { store }),
        await protectedHost(sb, 'fastify', limits, { store }),
      ];
    });

    it('wrong codes through either instance count against one budget for the number', async () => {
      const phone = freshPhone();
      const ip = freshIp();
      const first = await startFrom(hosts[0], ip, phone);
      const { wrong } = codesOf(sb, phone);
      for (let i = 0; i < 2; i++)
        expect((await checkAs(hosts[i % 2], ip, first.body.verification_id, wrong)).body.error_code).toBe(
          'invalid_code',
        );
      const second = await startFrom(hosts[1], freshIp(), phone);
      expect(second.body.error_code).toBe('too_many_wrong_codes');
      for (const host of hosts)
        expect((await checkAs(host, ip, first.body.verification_id, wrong)).body.error_code).toBe(
          'too_many_wrong_codes',
        );
    });
  },
);
