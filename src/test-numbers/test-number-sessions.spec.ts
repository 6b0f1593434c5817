/**
 * A test number's sessions as a caller of the module's API client sees them (the exported
 * VerificationApiClient is a TestNumberApiClient when `testNumbers` are set: a host injecting it, and the
 * module's flows, read these answers): the number a reverse call shows, the API's errors (status,
 * `error_code`, title and operation, which decides whether a 404 reads as `not_found`), a check racing past
 * its session's attempts, an ended session read back, which starts are kept and which spare, the bot link's
 * shape, and a bounded MemoryStore whose sessions the starts' counters never evict.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it, jest } from '@jest/globals';
import { sharedRedisUrl } from '../../test/support/redis-server.js';
import { VerificationApiClient } from '../api/verification-api.client.js';
import { VerificationApiError } from '../api/verification-api.error.js';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import { MemoryStore } from '../store/memory.store.js';
import { RedisStore } from '../store/redis.store.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { toClientError } from '../verification/upstream-error.mapper.js';
import { TestNumberApiClient } from './test-number-api.client.js';
import { TestNumberSessions, testNumberToCall, testRequestId } from './test-number-sessions.js';

const CODE = '123456';
const NUMBER = '+79990000011';
const OTHER = '+79990000012';
const ASKS = '+79990000013';
const config = (numbers: string[], maxAttempts = 3) =>
  resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
    methods: ['sms', 'msgr2_bot'],
    testNumbers: {
      numbers: numbers.map((phoneNumber) =>
        phoneNumber === ASKS
          ? { phoneNumber, code: CODE, outcome: 'code_required' as const }
          : { phoneNumber, code: CODE },
      ),
      maxAttempts,
    },
  });
const options = config([NUMBER, OTHER, ASKS]);

/** The module's API client over `store`, as a host injects it. */
function client(store: VerificationStore = new MemoryStore(), resolved = options): TestNumberApiClient {
  return new TestNumberApiClient(resolved.api as never, new TestNumberSessions(resolved, store));
}

/** The error a call rejects with. */
async function failure(call: Promise<unknown>): Promise<VerificationApiError> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(VerificationApiError);
  return error as VerificationApiError;
}

/** A refusal as the API's problem reads to its caller. */
const refusal = (operation: string, status: number, errorCode: string, title: string) => ({
  operation,
  status,
  errorCode,
  title,
  message: `Verification API ${operation} failed: HTTP ${status} ${errorCode}`,
});

/** Whether each session still reads (a spare one whose slot a newer start took reads 404). */
async function readable(api: TestNumberApiClient, ids: string[]): Promise<boolean[]> {
  return Promise.all(
    ids.map((id) =>
      api.getSession(id).then(
        () => true,
        () => false,
      ),
    ),
  );
}

describe('a test session as the API client answers it', () => {
  it("a reverse call's number to call is always +7800 and seven digits, small draws zero-padded", () => {
    for (let n = 0; n < 500; n++) expect(testNumberToCall()).toMatch(/^\+7800\d{7}$/);
  });

  it('an unknown test session: 404 not_found to a read and to a check, the check answered not_found', async () => {
    const api = client();
    const id = testRequestId();
    expect(await failure(api.getSession(id))).toMatchObject(
      refusal('getSession', 404, 'not_found', 'Verification not found'),
    );
    const checked = await failure(api.check({ requestId: id, code: CODE }));
    expect(checked).toMatchObject(refusal('check', 404, 'not_found', 'Verification not found'));
    expect(toClientError(checked).errorCode).toBe('not_found');
  });

  it('a number taken out of testNumbers since its session began: its check is 404 not_found', async () => {
    const store = new MemoryStore();
    const { requestId } = await client(store).play({ phoneNumber: OTHER, method: 'sms' });
    const checked = await failure(client(store, config([NUMBER])).check({ requestId, code: CODE }));
    expect(checked).toMatchObject(refusal('check', 404, 'not_found', 'Verification not found'));
    expect(toClientError(checked).errorCode).toBe('not_found');
  });

  it("a bot session's code before it is asked for: 409 not_pending", async () => {
    const api = client();
    const { requestId } = await api.play({ phoneNumber: NUMBER, method: 'msgr2_bot' });
    expect(await failure(api.check({ requestId, code: CODE }))).toMatchObject(
      refusal('check', 409, 'not_pending', 'No code was asked for yet'),
    );
  });

  it('a wrong code: 400 invalid_code with the attempts left; past the last one 409 not_pending', async () => {
    const api = client();
    const { requestId } = await api.play({ phoneNumber: NUMBER, method: 'sms' });
    for (const left of [2, 1, 0])
      expect(await failure(api.check({ requestId, code: '000000' }))).toMatchObject({
        ...refusal('check', 400, 'invalid_code', 'The code is not correct'),
        attemptsRemaining: left,
      });
    expect(await failure(api.check({ requestId, code: CODE }))).toMatchObject(
      refusal('check', 409, 'not_pending', 'The verification is no longer pending'),
    );
  });

  it("two wrong codes at once on a session's last attempt: one is compared, the other is not_pending", async () => {
    const api = client(new MemoryStore(), config([NUMBER], 1));
    const { requestId } = await api.play({ phoneNumber: NUMBER, method: 'sms' });
    const answers = await Promise.all([
      failure(api.check({ requestId, code: '000000' })),
      failure(api.check({ requestId, code: '000001' })),
    ]);
    expect(answers.map((error) => [error.status, error.errorCode, error.attemptsRemaining]).sort()).toEqual([
      [400, 'invalid_code', 0],
      [409, 'not_pending', undefined],
    ]);
  });

  it('a verified bot session of a code_required number reads verified, not asked for its code again', async () => {
    const api = client();
    const { requestId } = await api.play({ phoneNumber: ASKS, method: 'msgr2_bot' });
    expect(await api.getSession(requestId)).toMatchObject({ status: 'delivered', awaitingCode: true });
    expect(await api.check({ requestId, code: CODE })).toMatchObject({ status: 'verified' });
    expect(await api.getSession(requestId)).toMatchObject({ status: 'verified' });
  });
});

describe('which test starts are kept', () => {
  it("a host's own start (no client network) is never spare: twenty of one number all read", async () => {
    const api = client();
    const ids: string[] = [];
    for (let n = 0; n < 20; n++) ids.push((await api.play({ phoneNumber: NUMBER, method: 'sms' })).requestId);
    expect(await readable(api, ids)).toEqual(ids.map(() => true));
  });

  it("one number's kept starts are its own: another number's full hour leaves its starts kept", async () => {
    const api = client();
    const ids: string[] = [];
    const start = async (phoneNumber: string, network: string) =>
      ids.push((await api.play({ phoneNumber, method: 'sms' }, { network })).requestId);
    for (let n = 0; n < 10; n++) await start(NUMBER, `10.0.${n % 2}.0/24`);
    for (let n = 0; n < 7; n++) await start(OTHER, `10.1.${n}.0/24`);
    expect(await readable(api, ids)).toEqual(ids.map(() => true));
  });

  it("a MemoryStore with room for two sessions keeps two starts' sessions: their counters never evict one", async () => {
    const store = new MemoryStore({ maxEntries: 2, maxEvictableEntries: 100 });
    const api = client(store);
    const first = await api.play({ phoneNumber: NUMBER, method: 'sms' }, { network: '10.2.0.0/24' });
    const second = await api.play({ phoneNumber: NUMBER, method: 'sms' }, { network: '10.2.1.0/24' });
    expect(await readable(api, [first.requestId, second.requestId])).toEqual([true, true]);
    await store.close?.();
  });

  it("a MemoryStore with room for six sessions (and a spare slot's claim) keeps a network's six starts, its sixth spare", async () => {
    // The spare start's claim of its slot is an entry while it is taken.
    const store = new MemoryStore({ maxEntries: 7, maxEvictableEntries: 100 });
    const api = client(store);
    const ids: string[] = [];
    for (let n = 0; n < 6; n++)
      ids.push(
        (await api.play({ phoneNumber: NUMBER, method: 'sms' }, { network: '10.3.0.0/24' })).requestId,
      );
    expect(await readable(api, ids)).toEqual(ids.map(() => true));
    await store.close?.();
  });
});

/** The module's stores: a failed write of the shape keeps the last one, whichever store it is. */
const STORES: [string, () => VerificationStore][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ url: sharedRedisUrl(), keyPrefix: `test-link:${randomUUID()}:` })],
];

describe.each(STORES)("a test bot session's link (%s)", (_name, makeStore) => {
  it("keeps the last real link's shape when a later real link has no start token to copy", async () => {
    const initiate = jest.spyOn(VerificationApiClient.prototype, 'initiate');
    const store = makeStore();
    try {
      const api = client(store);
      const real = (deepLink: string) =>
        initiate.mockResolvedValueOnce({ requestId: 'real', method: 'msgr2_bot', deepLink } as never);
      real('https://msgr2.example/sandbox_verify_bot?start=0a9fB7Zq-x');
      await api.initiate({ phoneNumber: '+79123456789', method: 'msgr2_bot' });
      real('https://msgr2.example/sandbox_verify_bot');
      await api.initiate({ phoneNumber: '+79123456789', method: 'msgr2_bot' });
      const played = (await api.play({ phoneNumber: NUMBER, method: 'msgr2_bot' })) as { deepLink?: string };
      expect(played.deepLink).toMatch(/^https:\/\/msgr2\.example\/sandbox_verify_bot\?start=[\w-]{10}$/);
    } finally {
      initiate.mockRestore();
      await store.close?.();
    }
  });
});
