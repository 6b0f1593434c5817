/**
 * A test number's start is coalesced as a real number's is: the same caller's second start within the
 * resend cooldown (an anonymous browser by its `pv_browser` cookie, a signed-in owner by its owner) is
 * handed its pending session back, with the same fields (201, `resumed: true`, the first answer's
 * `resend_available_at`), and that session is the one its code verifies. Once it ended, the next start
 * within the cooldown is refused as a real number's (429 `resend_cooldown`); past the cooldown a start is
 * a new session. Another browser's start is its own.
 */
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, PLATFORMS, type Platform } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

const CODE = '246810';

describe.each(PLATFORMS)(
  'a test number’s start is handed back as a real one’s (%s)',
  (platform: Platform) => {
    const suite = sandboxSuite();
    const reviewer = platform === 'express' ? '+79990004641' : '+79990004642';
    const real = platform === 'express' ? '+79161234641' : '+79161234642';

    async function boot(owner?: (req: unknown) => string | undefined): Promise<void> {
      const account = await suite.sb.createAccount({ balance: 100 });
      suite.host = await createTestApp({
        platform,
        trustProxy: true,
        module: moduleOptions(
          suite.sb,
          {
            limits: { spendCap: false, pumping: false },
            owner,
            testNumbers: { numbers: [{ phoneNumber: reviewer, code: CODE }] },
          },
          account,
        ),
      });
    }
    const post = (path: string, body: unknown, ip: string, headers: Record<string, string> = {}) =>
      call(suite.host!.url, 'POST', `/verification/${path}`, body, { 'x-forwarded-for': ip, ...headers });
    const cookieOf = (answer: Awaited<ReturnType<typeof post>>) =>
      `pv_browser=${/pv_browser=([^;,\s]+)/.exec(answer.headers.get('set-cookie') ?? '')?.[1]}`;
    /** What a caller sees of its start and of its second one within the cooldown. */
    const twice = async (phone: string, ip: string, headers: Record<string, string> = {}) => {
      const first = await post('start', { phone_number: phone, method: 'sms' }, ip, headers);
      expect(first.status).toBe(201);
      const cookie: Record<string, string> =
        headers['x-user'] === undefined ? { cookie: cookieOf(first) } : {};
      const second = await post('start', { phone_number: phone, method: 'sms' }, ip, {
        ...headers,
        ...cookie,
      });
      return { first, second, cookie };
    };
    const shape = ({ first, second }: Awaited<ReturnType<typeof twice>>) => ({
      status: second.status,
      resumed: second.body.resumed,
      sameEnd: second.body.resend_available_at === first.body.resend_available_at,
      fields: Object.keys(second.body).sort(),
    });

    it('an anonymous browser: handed back with the fields a real number’s is; its code verifies it; ended, refused', async () => {
      await boot();
      const test = await twice(reviewer, '77.1.1.7');
      expect(shape(test)).toEqual(shape(await twice(real, '77.2.1.7')));
      expect(shape(test)).toMatchObject({ status: 201, resumed: true, sameEnd: true });
      // Another browser on the same address is not handed it.
      const other = await post('start', { phone_number: reviewer, method: 'sms' }, '77.1.1.7');
      expect(other.body).toMatchObject({ status: 429, reason: 'resend_cooldown' });
      const checked = await post(
        'check',
        { verification_id: test.second.body.verification_id, code: CODE },
        '77.1.1.7',
        test.cookie,
      );
      expect(checked.body).toMatchObject({ verified: true });
      // Verified: nothing pending to hand back, and the cooldown still runs.
      const after = await post('start', { phone_number: reviewer, method: 'sms' }, '77.1.1.7', test.cookie);
      expect(after.body).toMatchObject({ status: 429, reason: 'resend_cooldown' });
      await suite.sb.advance(60_000);
      const later = await post('start', { phone_number: reviewer, method: 'sms' }, '77.1.1.7', test.cookie);
      expect(later.body).toMatchObject({ resumed: false });
    });

    it('a signed-in owner: handed back as a real number’s second start is', async () => {
      await boot((req) => (req as { headers: Record<string, string | undefined> }).headers['x-user']);
      const test = await twice(reviewer, '77.3.1.7', { 'x-user': 'stranger' });
      expect(shape(test)).toEqual(shape(await twice(real, '77.4.1.7', { 'x-user': 'stranger-2' })));
      expect(shape(test)).toMatchObject({ status: 201, resumed: true, sameEnd: true });
    });
  },
);
