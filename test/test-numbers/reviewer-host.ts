/**
 * A host whose reviewer (an app-store reviewer, a demo account) signs in with a test number: the host of
 * the suites where strangers attack that number (its slots, its wrong-code budgets and ceilings). On an
 * API account of its own, the default limits, `x-forwarded-for` trusted (a caller is its address, an
 * owner too when it sends `x-user`), on a MemoryStore or under a Redis prefix of its own.
 */
import { afterEach, expect } from '@jest/globals';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import type { SandboxSuite } from '../support/sandbox-suite.js';
import { call, type Platform, type TestApp } from '../support/verification-app.js';
import { storeFor, type StoreKind } from '../verified-phone/guard-host.js';
import { startAccountHost } from '../webhooks/harness.js';

/** The code the host gave the reviewer for its test number. */
export const REVIEWER_CODE = '246810';
/** The default resend cooldown and a tick: a caller's next start of the number by the method is accepted. */
export const RESEND_COOLDOWN_MS = 60_001;
/** A session's attempts (the default `maxAttempts`): a stranger's next wrong code takes a new start. */
const ATTEMPTS_PER_SESSION = 3;

type Headers = Record<string, string>;
type Answer = Awaited<ReturnType<typeof call>>;

export interface ReviewerHost {
  readonly app: TestApp;
  /** A start of the reviewer's number by sms from `headers`' caller (201 expected): its verification id. */
  start(headers: Headers): Promise<string>;
  check(id: string, code: string, headers: Headers): Promise<Answer>;
  /**
   * `count` wrong codes of the number from `headers`' caller, `ATTEMPTS_PER_SESSION` a session, each
   * restart waiting out the resend cooldown as a real number's does (fix-44e); `each` asserts every answer.
   */
  wrongCodes(count: number, headers: Headers, each?: (answer: Answer) => void): Promise<void>;
}

/** Each answer a wrong code: `invalid_code`. */
export const refusedAsInvalid = (answer: Answer): void => {
  expect(answer.body).toMatchObject({ error_code: 'invalid_code' });
};

/**
 * Boots the reviewer's host of a test (closed after it, then its store) for `reviewer`'s number on
 * `platform` and `store`. `module` is merged over the defaults.
 */
export function reviewerHosts(
  suite: SandboxSuite,
): (
  platform: Platform,
  reviewer: string,
  store: StoreKind,
  module?: Partial<VerificationModuleOptions>,
) => Promise<ReviewerHost> {
  let store: ReturnType<typeof storeFor> | undefined;
  afterEach(async () => {
    if (store !== undefined && 'close' in store) await (store as VerificationStore).close();
    store = undefined;
  });
  return async (platform, reviewer, kind, module = {}) => {
    store = storeFor(kind, suite.sb);
    const app = await startAccountHost(platform, suite.sb, {
      trustProxy: true,
      module: {
        store,
        limits: {},
        testNumbers: { numbers: [{ phoneNumber: reviewer, code: REVIEWER_CODE }] },
        ...module,
      },
    });
    suite.host = app;
    const post = (path: string, body: unknown, headers: Headers) =>
      call(app.url, 'POST', path, body, headers);
    const start = async (headers: Headers) => {
      const started = await post('/verification/start', { phone_number: reviewer, method: 'sms' }, headers);
      expect(started.status).toBe(201);
      return String(started.body.verification_id);
    };
    const check = (id: string, code: string, headers: Headers) =>
      post('/verification/check', { verification_id: id, code }, headers);
    return {
      app,
      start,
      check,
      async wrongCodes(count, headers, each = refusedAsInvalid) {
        let wrong = 0;
        while (wrong < count) {
          if (wrong > 0) await suite.sb.advance(RESEND_COOLDOWN_MS);
          const id = await start(headers);
          for (let attempt = 0; attempt < ATTEMPTS_PER_SESSION && wrong < count; attempt++, wrong++)
            each(await check(id, '000000', headers));
        }
      },
    };
  };
}
