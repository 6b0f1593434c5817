/**
 * Attack (lane attack-44c): reviewer numbers open to every caller (no `testNumbers.owners`: the only
 * choice of a host that verifies before sign-in) take no per-number start limit, "so that a stranger
 * cannot lock the reviewer out". But the number's wrong-code budget (`wrongCodesPerNumber`, 10 an hour
 * by default) is one for everybody: a stranger who knows (or guesses from the app-store listing) the
 * reviewer's number starts it four times within the default per-client limits and enters ten wrong
 * codes. For the rest of the hour no code of that number is compared: the reviewer, with the right
 * code, from another owner, is answered `invalid_code` with no attempt left and the session fails. A
 * stranger repeating that hourly keeps the app-store reviewer (or the demo account) out for good,
 * at no cost (test numbers are never billed).
 *
 * Expected: a stranger's wrong codes do not decide whether the reviewer's right code is compared (the
 * budget per caller as well, or a right code from another caller compared first).
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
const CASES: [Platform, StoreKind, string][] = [
  ['express', 'memory', '+79990004401'],
  ['fastify', 'redis', '+79990004402'],
];

describe.each(CASES)('a stranger and the reviewer number (%s, %s store)', (platform, storeKind, reviewer) => {
  const suite = sandboxSuite();
  let app: TestApp | undefined;
  let store: ReturnType<typeof storeFor> | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    if (store !== undefined && 'close' in store) await (store as VerificationStore).close();
    store = undefined;
  });

  it("ten wrong codes of a stranger do not refuse the reviewer's right code", async () => {
    store = storeFor(storeKind, suite.sb);
    const account = await suite.sb.createAccount({ balance: 100 });
    // The default limits and test-number budgets; the number open to every caller.
    app = await bootGuardHost(platform, suite.sb, account, {
      store,
      limits: {},
      testNumbers: { numbers: [{ phoneNumber: reviewer, code: CODE }] },
    });
    const post = (path: string, body: unknown, user: string) => call(app!.url, 'POST', path, body, as(user));
    const start = async (user: string) => {
      const started = await post('/verification/start', { phone_number: reviewer, method: 'sms' }, user);
      expect(started.status).toBe(201);
      return String(started.body.verification_id);
    };

    // The stranger: 4 sessions (within its 5 starts of a number an hour), 10 wrong codes.
    let wrong = 0;
    while (wrong < 10) {
      // A restart waits out the resend cooldown, as a real number's does (fix-44e).
      if (wrong > 0) await suite.sb.advance(RESEND_COOLDOWN_MS);
      const id = await start('mallory');
      for (let attempt = 0; attempt < 3 && wrong < 10; attempt++, wrong++) {
        const checked = await post('/verification/check', { verification_id: id, code: '000000' }, 'mallory');
        expect(checked.body).toMatchObject({ error_code: 'invalid_code' });
      }
    }

    // A minute later the reviewer signs in with the number and code the host gave them.
    await suite.sb.advance(60_000);
    const id = await start('apple-review');
    const checked = await post('/verification/check', { verification_id: id, code: CODE }, 'apple-review');
    expect(checked.body).toMatchObject({ verified: true });
  });
});
