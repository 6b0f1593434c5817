/**
 * Attack (lane attack-44d): the fix of test-numbers-wrong-code-lockout gave each starter its own
 * wrong-code budget (`wrongCodesPerNumber`, 10 an hour) but added a ceiling per number and day across
 * every caller (TEST_WRONG_CODES_DAY_FACTOR x points = 100). That ceiling is one for everybody and a
 * stranger fills it alone: staying within its own budget (10 wrong codes an hour, 4 starts an hour)
 * for ten hours, one signed-in stranger spends the number's day. For the rest of that day no code of
 * the reviewer's number is compared: the reviewer, another owner on another network, with the right
 * code, is refused. Repeated daily (or with a few accounts in parallel, in one hour), the app-store
 * reviewer or the demo account is kept out, at no cost (test numbers are never billed).
 *
 * Expected: a stranger's wrong codes never decide whether the reviewer's right code is compared (the
 * ceiling bounds guessing without refusing a starter whose own budget is whole, e.g. the day ceiling
 * counted per starter, or the number's session ended instead of every caller refused).
 * Medium (denies a real user of the host: the reviewer). FAILS ON PURPOSE on the current code.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, type Platform, type TestApp } from '../support/verification-app.js';
import { as, bootGuardHost, storeFor, type StoreKind } from '../verified-phone/guard-host.js';

/** The default resend cooldown and a tick: a caller's next start of the number by the method is accepted. */
const RESEND_COOLDOWN_MS = 60_001;

const CODE = '246810';
const HOUR = 3_600_000;
const CASES: [Platform, StoreKind, string][] = [
  ['express', 'memory', '+79990004411'],
  ['fastify', 'redis', '+79990004412'],
];

describe.each(CASES)(
  'a stranger and the test number day ceiling (%s, %s store)',
  (platform, storeKind, reviewer) => {
    const suite = sandboxSuite();
    let app: TestApp | undefined;
    let store: ReturnType<typeof storeFor> | undefined;
    afterEach(async () => {
      await app?.close();
      app = undefined;
      if (store !== undefined && 'close' in store) await (store as VerificationStore).close();
      store = undefined;
    });

    it("a stranger within its own hourly budget spends the reviewer's day", async () => {
      store = storeFor(storeKind, suite.sb);
      const account = await suite.sb.createAccount({ balance: 100 });
      app = await bootGuardHost(platform, suite.sb, account, {
        store,
        limits: {},
        testNumbers: { numbers: [{ phoneNumber: reviewer, code: CODE }] },
      });
      const post = (path: string, body: unknown, headers: Record<string, string>) =>
        call(app!.url, 'POST', path, body, headers);
      const start = async (headers: Record<string, string>) => {
        const started = await post('/verification/start', { phone_number: reviewer, method: 'sms' }, headers);
        expect(started.status).toBe(201);
        return String(started.body.verification_id);
      };
      const mallory = as('mallory');

      // Ten hours, each within mallory's own budget: 4 starts, 10 wrong codes.
      for (let hour = 0; hour < 10; hour++) {
        let wrong = 0;
        while (wrong < 10) {
          // A restart waits out the resend cooldown, as a real number's does (fix-44e).
          if (wrong > 0) await suite.sb.advance(RESEND_COOLDOWN_MS);
          const id = await start(mallory);
          for (let attempt = 0; attempt < 3 && wrong < 10; attempt++, wrong++) {
            const checked = await post(
              '/verification/check',
              { verification_id: id, code: '000000' },
              mallory,
            );
            expect(checked.body).toMatchObject({ error_code: 'invalid_code' });
          }
        }
        await suite.sb.advance(HOUR + 1_000);
      }

      // The reviewer, another owner, signs in with the number and code the host gave them.
      const reviewerHeaders = as('apple-review');
      const id = await start(reviewerHeaders);
      const checked = await post('/verification/check', { verification_id: id, code: CODE }, reviewerHeaders);
      expect(checked.body).toMatchObject({ verified: true });
    });
  },
);
