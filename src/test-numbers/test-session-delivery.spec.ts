/**
 * A test session's status follows a real one's of its method (read through the API's seam, as the
 * routes, the refresher and the reconciler read it): a code sent at the start (SMS, flash call, a
 * messenger's code, voice) reads `delivered` once its delivery delay has passed, a delay drawn per
 * session (TEST_DELIVERY_MIN_MS plus up to TEST_DELIVERY_SPREAD_MS); a reverse flash call and the
 * operator's push stay `sent` until their outcome; a bot session reads `delivered` once its code is
 * asked for (the user shared the number).
 */
import { describe, expect, it } from '@jest/globals';
import type { KnownVerificationMethod } from '../core/verification-method.js';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import { MemoryStore } from '../store/memory.store.js';
import { TEST_DELIVERY_MIN_MS, TEST_DELIVERY_SPREAD_MS, testDeliveryDelayMs } from './test-session-state.js';
import { TestNumberSessions } from './test-number-sessions.js';

const WAITS = '+79990000001';
const ASKS = '+79990000002';
const CODE = '123456';
const options = resolveVerificationOptions({
  api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
  methods: ['sms', 'flash_call', 'msgr1_otp', 'voice', 'msgr2_bot', 'reverse_flash_call', 'operator_id'],
  testNumbers: {
    numbers: [
      { phoneNumber: WAITS, code: CODE },
      { phoneNumber: ASKS, code: CODE, outcome: 'code_required' },
    ],
  },
});

function played(phoneNumber = WAITS) {
  const clock = { t: 1_800_000_000_000 };
  const sessions = new TestNumberSessions(options, new MemoryStore({ clock: () => clock.t }));
  const start = async (method: KnownVerificationMethod) => {
    const started = clock.t;
    const { requestId } = await sessions.initiate({ phoneNumber, method });
    return { requestId, due: started + testDeliveryDelayMs(options.dataKeys, requestId) };
  };
  const read = async (requestId: string, at: number) => {
    clock.t = at;
    return sessions.getSession(requestId);
  };
  return { sessions, start, read };
}

describe('a test session is delivered as a real one of its method', () => {
  it.each(['sms', 'flash_call', 'msgr1_otp', 'voice'] as const)(
    '%s: sent to one ms before its delay, delivered from it on; its code still verifies it',
    async (method) => {
      const { sessions, start, read } = played();
      const { requestId, due } = await start(method);
      expect((await read(requestId, due - 1)).status).toBe('sent');
      expect((await read(requestId, due)).status).toBe('delivered');
      expect((await read(requestId, due + 60_000)).status).toBe('delivered');
      expect(await sessions.check({ requestId, code: CODE })).toMatchObject({ status: 'verified' });
      expect((await read(requestId, due + 61_000)).status).toBe('verified');
    },
  );

  it.each(['reverse_flash_call', 'operator_id', 'msgr2_bot'] as const)(
    '%s: sent until its outcome, whatever the time',
    async (method) => {
      const { start, read } = played();
      const { requestId, due } = await start(method);
      const late = due + TEST_DELIVERY_MIN_MS + TEST_DELIVERY_SPREAD_MS;
      expect(await read(requestId, late)).toMatchObject({ status: 'sent', awaitingCode: false });
    },
  );

  it('msgr2_bot: delivered, awaiting its code, once its code is asked for (the user shared the number)', async () => {
    const { start, read } = played(ASKS);
    const { requestId, due } = await start('msgr2_bot');
    expect(await read(requestId, due - TEST_DELIVERY_MIN_MS)).toMatchObject({
      status: 'delivered',
      awaitingCode: true,
    });
  });

  it('operator_id: its SMS fallback asks for the code and stays sent, as the API says', async () => {
    const { start, read } = played(ASKS);
    const { requestId, due } = await start('operator_id');
    expect(await read(requestId, due + 60_000)).toMatchObject({ status: 'sent', awaitingCode: true });
  });

  it('an expired session is expired, never delivered', async () => {
    const { start, read } = played();
    const { requestId } = await start('sms');
    const session = await read(requestId, 1_800_000_000_000 + 300_000);
    expect(session.status).toBe('expired');
  });

  it('the delay is drawn per session within its bounds: the same at every read, not the same for every session', () => {
    const delays = Array.from({ length: 200 }, (_, i) => testDeliveryDelayMs(options.dataKeys, `test_${i}`));
    for (const delay of delays) {
      expect(delay).toBeGreaterThanOrEqual(TEST_DELIVERY_MIN_MS);
      expect(delay).toBeLessThan(TEST_DELIVERY_MIN_MS + TEST_DELIVERY_SPREAD_MS);
    }
    expect(testDeliveryDelayMs(options.dataKeys, 'test_7')).toBe(delays[7]);
    expect(new Set(delays).size).toBeGreaterThan(150);
    // Spread over its whole range: some in its first sixth, some in its last.
    expect(delays.some((d) => d < TEST_DELIVERY_MIN_MS + 1_000)).toBe(true);
    expect(delays.some((d) => d >= TEST_DELIVERY_MIN_MS + TEST_DELIVERY_SPREAD_MS - 1_000)).toBe(true);
  });
});

describe('a number taken out of testNumbers since its session began (a redeploy on the same store)', () => {
  it('its session still reads as it stands until it expires; a code for it is not found', async () => {
    const clock = { t: 1_800_000_000_000 };
    const store = new MemoryStore({ clock: () => clock.t });
    const { requestId } = await new TestNumberSessions(options, store).initiate({
      phoneNumber: ASKS,
      method: 'sms',
    });
    const without = resolveVerificationOptions({
      api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
      testNumbers: { numbers: [{ phoneNumber: WAITS, code: CODE }] },
    });
    const redeployed = new TestNumberSessions(without, store);
    expect(await redeployed.getSession(requestId)).toMatchObject({ status: 'sent', awaitingCode: false });
    await expect(redeployed.check({ requestId, code: CODE })).rejects.toMatchObject({ status: 404 });
    clock.t += 300_000;
    expect((await redeployed.getSession(requestId)).status).toBe('expired');
    await store.close();
  });
});
