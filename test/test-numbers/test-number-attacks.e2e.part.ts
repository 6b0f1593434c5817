/**
 * Reviewer numbers attacked: they take the caller's ordinary limits (thousands of anonymous starts
 * from one address are limited as a real number's), a stranger cannot tell one from a real number
 * by the answer, a guarded route refuses their verifications unless it opted in (the details and the
 * claim say `test`), and the number's wrong-code budget holds across instances racing on one Redis.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { SPARE_TEST_SESSION_SLOTS } from '../../src/core/test-session.js';
import { KEPT_TEST_SESSIONS_PER_NETWORK_HOUR } from '../../src/test-numbers/test-number-sessions.js';
import { TEST_DEEP_LINK } from '../../src/test-numbers/test-deep-link.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { uniqueKeyPrefix } from '../multi-instance/deployment.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, type Platform, type TestApp } from '../support/verification-app.js';
import { as, bootGuardHost, burst, storeFor, type StoreKind } from '../verified-phone/guard-host.js';

const REVIEWER = '+79990000001';
const AUTO_VERIFIED = '+79990000002';
const CODE = '246810';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NUMBERS = [
  { phoneNumber: REVIEWER, code: CODE },
  { phoneNumber: AUTO_VERIFIED, outcome: 'verified' as const },
];
const ALL_METHODS = ['sms', 'flash_call', 'reverse_flash_call', 'msgr1_otp', 'msgr2_bot', 'operator_id'];
const CASES: [Platform, StoreKind][] = [
  ['express', 'memory'],
  ['fastify', 'redis'],
];

describe.each(CASES)('test numbers under attack (%s, %s store)', (platform, storeKind) => {
  const suite = sandboxSuite();
  const apps: TestApp[] = [];
  let store: ReturnType<typeof storeFor> | undefined;
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    if (store !== undefined && 'close' in store) await (store as VerificationStore).close();
    store = undefined;
  });

  async function boot(options: Partial<VerificationModuleOptions>): Promise<TestApp> {
    store ??= storeFor(storeKind, suite.sb);
    const account = await suite.sb.createAccount({ balance: 100 });
    const app = await bootGuardHost(platform, suite.sb, account, { store, ...options });
    apps.push(app);
    return app;
  }
  const post = (app: TestApp, path: string, body: unknown, headers: Record<string, string> = {}) =>
    call(app.url, 'POST', path, body, headers);

  it('3,000 anonymous starts of one test number from one address are limited as a real number’s', async () => {
    const app = await boot({ limits: {}, testNumbers: { numbers: NUMBERS } });
    const url = `${app.url}/verification/start`;
    const body = JSON.stringify({ phone_number: REVIEWER, method: 'sms' });
    const statuses: number[] = [];
    while (statuses.length < 3000 && !statuses.includes(429))
      statuses.push(...(await burst(100, 25, url, {}, body)));
    // The first; the others within the resend cooldown are refused, as a real number's are.
    expect(statuses.filter((status) => status === 201).length).toBe(1);
    const refused = await post(app, '/verification/start', { phone_number: REVIEWER, method: 'sms' });
    expect(refused.body).toMatchObject({ status: 429, error_code: 'rate_limit_exceeded' });
  });

  it('a stranger gets what a real number gives: a session sent to the API, no reason, the same shapes', async () => {
    const app = await boot({ testNumbers: { numbers: NUMBERS, owners: ['reviewer'] } });
    const start = { phone_number: AUTO_VERIFIED, method: 'reverse_flash_call' };
    const stranger = await post(app, '/verification/start', start, as('someone-else'));
    expect(stranger.status).toBe(201);
    expect(suite.sb.sessionsFor(AUTO_VERIFIED)).toHaveLength(1);
    const reviewer = await post(app, '/verification/start', start, as('reviewer'));
    expect(reviewer.status).toBe(201);
    expect(suite.sb.sessionsFor(AUTO_VERIFIED)).toHaveLength(1);
    // The reviewer's played session answers with the fields and shapes of the real one.
    expect(Object.keys(reviewer.body).sort()).toEqual(Object.keys(stranger.body).sort());
    const shape = new RegExp(
      `^${String(stranger.body.number_to_call).replace(/\d/g, '\\d').replace('+', '\\+')}$`,
    );
    expect(String(reviewer.body.number_to_call)).toMatch(shape);
    expect(JSON.stringify(stranger.body)).not.toContain('test');
  });

  it.each(ALL_METHODS)(
    'a %s start of a test number answers what a real number’s would: the same fields, each of the same shape',
    async (method) => {
      const app = await boot({ testNumbers: { numbers: NUMBERS, owners: ['reviewer'] } });
      for (const phone_number of [REVIEWER, AUTO_VERIFIED]) {
        const start = { phone_number, method };
        const real = await post(app, '/verification/start', start, as('someone-else'));
        const test = await post(app, '/verification/start', start, as('reviewer'));
        expect({ method, status: test.status }).toEqual({ method, status: real.status });
        // Each field's shape: digits, hex and letters as classes (a fresh id, token or number per session).
        expect(shapeOf(test.body)).toEqual(shapeOf(real.body));
        const status = (body: Record<string, unknown>) =>
          call(app.url, 'GET', `/verification/status/${String(body.verification_id)}`, undefined, as('x'));
        // A stranger asking the status of either session is refused alike.
        expect(shapeOf((await status(test.body)).body)).toEqual(shapeOf((await status(real.body)).body));
        // Each caller's own status of a session that waits for its code (no outcome played) looks alike.
        if (phone_number === REVIEWER) {
          const own = async (body: Record<string, unknown>, user: string) =>
            shapeOf(
              (
                await call(
                  app.url,
                  'GET',
                  `/verification/status/${String(body.verification_id)}`,
                  undefined,
                  as(user),
                )
              ).body,
            );
          expect(await own(test.body, 'reviewer')).toEqual(await own(real.body, 'someone-else'));
        }
      }
    },
  );

  it('a start of a number without a code states the code length a real session of its method states, method by method', async () => {
    const app = await boot({ testNumbers: { numbers: NUMBERS, owners: ['reviewer'] } });
    const lengths = { real: {} as Record<string, unknown>, test: {} as Record<string, unknown> };
    for (const method of ALL_METHODS) {
      const start = { phone_number: AUTO_VERIFIED, method };
      lengths.real[method] = (
        await post(app, '/verification/start', start, as('someone-else'))
      ).body.code_length;
      lengths.test[method] = (await post(app, '/verification/start', start, as('reviewer'))).body.code_length;
    }
    expect(lengths.real.flash_call).toBe(4);
    expect(lengths.test).toEqual(lengths.real);
  });

  it('each test bot session has a start token of its own, shaped as the real bot link’s', async () => {
    const app = await boot({ testNumbers: { numbers: NUMBERS, owners: ['reviewer'] } });
    const link = async (phone_number: string, user: string) =>
      String(
        (await post(app, '/verification/start', { phone_number, method: 'msgr2_bot' }, as(user))).body
          .deep_link,
      );
    const real = await link(REVIEWER, 'someone-else');
    // Two test sessions after the one real session: neither repeats the other's token, nor the real one's.
    const tests = [await link(REVIEWER, 'reviewer'), await link(AUTO_VERIFIED, 'reviewer')];
    for (const test of tests) expect(shapeOf(test)).toEqual(shapeOf(real));
    expect(new Set([real, ...tests]).size).toBe(3);
  });

  it('the real bot link’s shape is kept 30 days from the last real bot session: a tick before, test links have it; at the end, the placeholder', async () => {
    const app = await boot({ testNumbers: { numbers: NUMBERS, owners: ['reviewer'] } });
    const link = async (phone_number: string, user: string) =>
      String(
        (await post(app, '/verification/start', { phone_number, method: 'msgr2_bot' }, as(user))).body
          .deep_link,
      );
    const real = await link(REVIEWER, 'someone-else');
    await suite.sb.advance(30 * DAY - 1);
    const kept = await link(AUTO_VERIFIED, 'reviewer');
    expect(shapeOf(kept)).toEqual(shapeOf(real));
    expect(kept).not.toBe(real);
    await suite.sb.advance(1);
    // No real bot session since: its shape is gone, and a test link opens nothing.
    expect(await link(REVIEWER, 'reviewer')).toBe(TEST_DEEP_LINK);
  });

  it("the right code costs the number's wrong-code budget nothing: a reviewer verifying often keeps it", async () => {
    const budget = { points: 2, windowMs: HOUR };
    const app = await boot({
      testNumbers: { numbers: NUMBERS, maxAttempts: 3, wrongCodesPerNumber: budget },
    });
    const check = async (code: string) => {
      const started = await post(
        app,
        '/verification/start',
        { phone_number: REVIEWER, method: 'sms' },
        as('reviewer'),
      );
      return post(
        app,
        '/verification/check',
        { verification_id: started.body.verification_id, code },
        as('reviewer'),
      );
    };
    for (let i = 0; i < 3; i++) expect((await check(CODE)).body.verified).toBe(true);
    // The budget is whole: a wrong code is compared (2 of 3 attempts left), not refused unread (0).
    expect((await check('000000')).body).toMatchObject({ error_code: 'invalid_code', attempts_remaining: 2 });
  });

  it('a code before the operator fallback is refused as the API refuses it (409 not_pending, no attempt spent)', async () => {
    const app = await boot({ testNumbers: { numbers: NUMBERS } });
    const answers = [];
    for (const phone_number of [REVIEWER, '+79161234567']) {
      const started = await post(
        app,
        '/verification/start',
        { phone_number, method: 'operator_id' },
        as('u'),
      );
      const check = { verification_id: started.body.verification_id, code: '000000' };
      answers.push((await post(app, '/verification/check', check, as('u'))).body);
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]).toMatchObject({ status: 409, error_code: 'not_pending' });
  });

  it('a bot session’s code before the bot asked for it is refused as the API refuses it (409 not_pending, no attempt spent)', async () => {
    // No `outcome`: the user never shares the number in the bot, so no code is ever asked for.
    const app = await boot({ testNumbers: { numbers: NUMBERS, maxAttempts: 3 } });
    const answers: unknown[][] = [[], []];
    const statuses: unknown[] = [];
    for (const [i, phone_number] of [REVIEWER, '+79161234567'].entries()) {
      const started = await post(app, '/verification/start', { phone_number, method: 'msgr2_bot' }, as('u'));
      const id = started.body.verification_id;
      // More codes than its attempts, the right one among them: each refused alike, none spent.
      for (const code of ['000000', '111111', '222222', CODE]) {
        const check = { verification_id: id, code };
        answers[i]!.push((await post(app, '/verification/check', check, as('u'))).body);
      }
      statuses.push(
        (await call(app.url, 'GET', `/verification/status/${String(id)}`, undefined, as('u'))).body,
      );
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]![3]).toMatchObject({ status: 409, error_code: 'not_pending' });
    expect(statuses[0]).toMatchObject({ status: 'sent', awaiting_code: false });
    expect(statuses[1]).toMatchObject({ status: 'sent', awaiting_code: false });
  });

  it('a guarded route refuses a test number unless it opted in; the details and the claim say test', async () => {
    const app = await boot({ testNumbers: { numbers: NUMBERS } });
    const started = await post(
      app,
      '/verification/start',
      { phone_number: AUTO_VERIFIED, method: 'reverse_flash_call' },
      as('reviewer'),
    );
    const id = String(started.body.verification_id);
    const status = await call(app.url, 'GET', `/verification/status/${id}`, undefined, as('reviewer'));
    expect(status.body.status).toBe('verified');

    const withId = as('reviewer', { 'x-verification-id': id });
    expect((await post(app, '/account/phone', {}, withId)).body).toMatchObject({
      status: 403,
      error_code: 'phone_verification_required',
      reason: 'test_number',
    });
    const demo = await post(app, '/account/demo', {}, withId);
    expect(demo.body).toMatchObject({ phone: AUTO_VERIFIED, test: true });

    const withClaim = as('reviewer', { 'x-verified-phone-claim': String(demo.body.claim) });
    expect((await post(app, '/account/phone', {}, withClaim)).body).toMatchObject({
      status: 403,
      reason: 'test_number',
    });
    expect((await post(app, '/account/demo', {}, withClaim)).body).toMatchObject({
      phone: AUTO_VERIFIED,
      test: true,
    });
  });
});

/**
 * A JSON answer with each string's characters replaced by their class (9: digit, f: hex letter, a: letter);
 * a verification id (sealed, random) by its length.
 */
function shapeOf(body: unknown): unknown {
  return JSON.parse(
    JSON.stringify(body, (key, value: unknown) =>
      key === 'verification_id' && typeof value === 'string'
        ? `sealed token of ${value.length} characters`
        : typeof value === 'string'
          ? value.replace(/[0-9]/g, '9').replace(/[a-f]/gi, 'f').replace(/[g-z]/gi, 'a')
          : typeof value === 'number'
            ? 'n'
            : value,
    ),
  );
}

/**
 * A host's ioredis client whose reads of the number's wrong-code counter wait until `count` of them
 * are in flight (or a second has passed): every racing check reads the counter before any writes it,
 * the worst interleaving two instances can meet. Writes pass at once.
 */
function racingReads(client: Redis, count: number): Redis {
  const held: (() => void)[] = [];
  const releaseAll = () => {
    for (const release of held.splice(0)) release();
  };
  return new Proxy(client, {
    get(target, property) {
      if (property === 'call')
        return async (command: string, ...args: string[]) => {
          if (command.toUpperCase() === 'GET' && String(args[0]).includes('test-number:wrong')) {
            const wait = new Promise<void>((resolve) => held.push(resolve));
            if (held.length >= count) releaseAll();
            const timer = setTimeout(releaseAll, 1000);
            await wait;
            clearTimeout(timer);
          }
          return target.call(command, ...args);
        };
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('test numbers: the wrong-code budget across instances (express, redis store)', () => {
  const suite = sandboxSuite();
  const apps: TestApp[] = [];
  let client: Redis | undefined;
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    await client?.quit();
  });

  it('two instances on one Redis, a budget of 6: concurrent wrong codes of 10 sessions get at most 6 comparisons', async () => {
    // The network's kept test sessions and its 5 spare ones (more would take the spare ones' slots).
    const sessions = KEPT_TEST_SESSIONS_PER_NETWORK_HOUR + SPARE_TEST_SESSION_SLOTS;
    client = new Redis(sharedRedisUrl());
    const store = { redis: racingReads(client, sessions), keyPrefix: uniqueKeyPrefix('test-number-budget') };
    const account = await suite.sb.createAccount({ balance: 100 });
    const testNumbers = {
      numbers: NUMBERS,
      maxAttempts: 5,
      wrongCodesPerNumber: { points: 6, windowMs: HOUR },
    };
    for (let i = 0; i < 2; i++)
      apps.push(await bootGuardHost('express', suite.sb, account, { store, testNumbers }));
    const ids: string[] = [];
    for (let i = 0; i < sessions; i++) {
      const started = await post(
        apps[i % 2]!,
        '/verification/start',
        { phone_number: REVIEWER, method: 'sms' },
        as('reviewer'),
      );
      ids.push(String(started.body.verification_id));
    }
    const answers = await Promise.all(
      ids.map((id, i) =>
        post(apps[i % 2]!, '/verification/check', { verification_id: id, code: '000000' }, as('reviewer')),
      ),
    );
    expect(answers.every((a) => a.body.error_code === 'invalid_code')).toBe(true);
    // A compared code leaves the session 4 of its 5 attempts; one past the budget ends it (0).
    const compared = answers.filter((a) => a.body.attempts_remaining === 4).length;
    expect(compared).toBe(6);
  });

  function post(app: TestApp, path: string, body: unknown, headers: Record<string, string>) {
    return call(app.url, 'POST', path, body, headers);
  }
});
