/**
 * Strangers and an unrestricted reviewer number (no `testNumbers.owners`), issue 44's rule "a non-owner
 * gets exactly what a real number would" (fix-44g):
 * - a stranger cannot read, check or advance another caller's test session: its status and check answer
 *   404 `not_found` exactly as for a real session of another caller, its outcome plays at its own
 *   caller's first read (not at a stranger's), and a stranger's codes spend none of its attempts;
 * - strangers' starts never lock the reviewer out (docs/test-numbers.md, "Limits of the design"): past
 *   the per-number start limit a real number's start is 429 `start_phone_limit`, the reviewer's is 201
 *   and its code verifies it (the tell this leaves is documented; attack-k's test of it is not landed).
 */
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, PLATFORMS, type Platform, type TestApp } from '../support/verification-app.js';
import { startAccountHost } from '../webhooks/harness.js';

const REVIEWER = '+79990000001';
const AUTO_VERIFIED = '+79990000002';
const REAL = '+79161234567';
const CODE = '246810';
const TEST_NUMBERS = {
  numbers: [
    { phoneNumber: REVIEWER, code: CODE },
    { phoneNumber: AUTO_VERIFIED, outcome: 'verified' as const },
  ],
};
/** The default per-number start limit: 15 starts an hour from all callers. */
const START_PER_PHONE = 15;

type Headers = Record<string, string>;
const reviewer: Headers = { 'x-user': 'reviewer', 'x-forwarded-for': '203.0.113.10' };
const strangers: [string, Headers][] = [
  ['a signed-in stranger', { 'x-user': 'stranger', 'x-forwarded-for': '198.51.100.7' }],
  ['an anonymous stranger', { 'x-forwarded-for': '198.51.100.8' }],
];

describe.each(PLATFORMS)('an unrestricted test number and strangers (%s)', (platform: Platform) => {
  const suite = sandboxSuite();

  async function boot(limits: object | undefined = undefined): Promise<TestApp> {
    suite.host = await startAccountHost(platform, suite.sb, {
      trustProxy: true,
      module: { testNumbers: TEST_NUMBERS, ...(limits === undefined ? {} : { limits }) },
    });
    return suite.host;
  }
  const start = (app: TestApp, phone_number: string, method: string, headers: Headers) =>
    call(app.url, 'POST', '/verification/start', { phone_number, method }, headers);
  const status = (app: TestApp, id: unknown, headers: Headers) =>
    call(app.url, 'GET', `/verification/status/${String(id)}`, undefined, headers);
  const check = (app: TestApp, id: unknown, code: string, headers: Headers) =>
    call(app.url, 'POST', '/verification/check', { verification_id: id, code }, headers);

  it.each(strangers)(
    '%s reads a reviewer’s session as another caller’s real one (404) and advances nothing: its outcome plays at the reviewer’s first read',
    async (_who, stranger) => {
      const app = await boot();
      const test = await start(app, AUTO_VERIFIED, 'reverse_flash_call', reviewer);
      const real = await start(app, REAL, 'reverse_flash_call', reviewer);
      expect([test.status, real.status]).toEqual([201, 201]);
      await suite.sb.advance(1_000);
      const seen = await status(app, test.body.verification_id, stranger);
      expect(seen.status).toBe(404);
      expect(seen.body).toEqual((await status(app, real.body.verification_id, stranger)).body);
      expect(seen.body).toMatchObject({ status: 404, error_code: 'not_found' });
      expect(app.events).toEqual([]);

      await suite.sb.advance(4_000);
      const readAt = suite.sb.now();
      expect((await status(app, test.body.verification_id, reviewer)).body.status).toBe('verified');
      const verified = app.events.filter((e) => e.event === 'verification.verified');
      expect(verified.map((e) => [e.phoneNumber, e.verifiedAt?.getTime()])).toEqual([
        [AUTO_VERIFIED, readAt],
      ]);
    },
  );

  it.each(strangers)(
    '%s checking codes with a reviewer’s session is refused as for a real one (404) and spends none of its attempts',
    async (_who, stranger) => {
      const app = await boot();
      const test = await start(app, REVIEWER, 'sms', reviewer);
      const real = await start(app, REAL, 'sms', reviewer);
      for (let i = 0; i < 4; i++) {
        const refused = await check(app, test.body.verification_id, '000000', stranger);
        expect(refused.status).toBe(404);
        expect(refused.body).toEqual((await check(app, real.body.verification_id, '000000', stranger)).body);
      }
      // Its attempts (3) are all the reviewer's: a wrong code leaves 2, the right one verifies.
      expect((await check(app, test.body.verification_id, '111111', reviewer)).body).toMatchObject({
        error_code: 'invalid_code',
        attempts_remaining: 2,
      });
      expect((await check(app, test.body.verification_id, CODE, reviewer)).body.verified).toBe(true);
    },
  );

  it(`strangers' starts from ${START_PER_PHONE + 1} addresses in an hour never lock the reviewer out (a real number's next start is 429)`, async () => {
    const app = await boot({});
    const from = (net: number, i: number): Headers => ({ 'x-forwarded-for': `198.${net}.${i}.7` });
    for (const [phone, net] of [
      [REVIEWER, 52],
      [REAL, 51],
    ] as const)
      for (let i = 1; i <= START_PER_PHONE; i++)
        expect((await start(app, phone, 'sms', from(net, i))).status).toBe(201);
    // The documented difference: the per-number limit holds for the real number only.
    expect((await start(app, REAL, 'sms', from(51, 99))).body).toMatchObject({
      status: 429,
      reason: 'start_phone_limit',
    });
    expect((await start(app, REVIEWER, 'sms', from(52, 99))).status).toBe(201);
    const own = await start(app, REVIEWER, 'sms', reviewer);
    expect(own.status).toBe(201);
    expect((await check(app, own.body.verification_id, CODE, reviewer)).body.verified).toBe(true);
  });
});
