/**
 * A spare test session's slot, read by the played session itself (as the reconciler's reads are, with
 * no record in between): the session a newer one replaced in its slot is not found, nor checked; the
 * newer one and the slot's neighbours are theirs.
 */
import { describe, expect, it } from '@jest/globals';
import { SPARE_TEST_SESSION_SLOTS, isSpareTestSession } from '../core/test-session.js';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import { MemoryStore } from '../store/memory.store.js';
import { storedSessionId } from '../core/test-session.js';
import {
  KEPT_TEST_SESSIONS_PER_NETWORK_HOUR,
  KEPT_TEST_SESSIONS_PER_NUMBER_HOUR,
  TestNumberSessions,
} from './test-number-sessions.js';

const REVIEWER = '+79990000001';
const options = resolveVerificationOptions({
  api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
  testNumbers: { numbers: [{ phoneNumber: REVIEWER, code: '123456' }] },
});

describe('spare test sessions: a slot is its newest session only', () => {
  it('the session a newer one replaced reads and checks as not found; the newer one verifies', async () => {
    const sessions = new TestNumberSessions(options, new MemoryStore());
    const start = () =>
      sessions.initiate({ phoneNumber: REVIEWER, method: 'sms' }, { network: 'net:2001:db8:1' });
    for (let i = 0; i < KEPT_TEST_SESSIONS_PER_NETWORK_HOUR; i++) await start();
    const first = await start();
    expect(isSpareTestSession(first.requestId)).toBe(true);
    for (let i = 1; i < SPARE_TEST_SESSION_SLOTS; i++) await start();
    expect((await sessions.getSession(first.requestId)).status).toBe('sent');

    const next = await start();
    await expect(sessions.getSession(first.requestId)).rejects.toMatchObject({ status: 404 });
    await expect(sessions.check({ requestId: first.requestId, code: '123456' })).rejects.toMatchObject({
      status: 404,
    });
    expect(await sessions.check({ requestId: next.requestId, code: '123456' })).toMatchObject({
      status: 'verified',
    });
  });

  it("the number's kept sessions are bounded across networks: past them every network's start is spare in the number's 5 slots", async () => {
    const sessions = new TestNumberSessions(options, new MemoryStore());
    const start = (network: string) =>
      sessions.initiate({ phoneNumber: REVIEWER, method: 'sms' }, { network });
    for (let n = 0; n < KEPT_TEST_SESSIONS_PER_NUMBER_HOUR; n++)
      expect(isSpareTestSession((await start(`net:${n}`)).requestId)).toBe(false);
    const slots = new Set<string>();
    for (let n = 0; n < 40; n++) {
      const { requestId } = await start(`net:flood-${n}`);
      expect(isSpareTestSession(requestId)).toBe(true);
      slots.add(storedSessionId(requestId));
    }
    expect(slots.size).toBe(SPARE_TEST_SESSION_SLOTS);
  });

  it("a network's start past its own kept ones gives the number's count back: another network is still kept", async () => {
    const sessions = new TestNumberSessions(options, new MemoryStore());
    const start = (network: string) =>
      sessions.initiate({ phoneNumber: REVIEWER, method: 'sms' }, { network });
    for (let i = 0; i < KEPT_TEST_SESSIONS_PER_NETWORK_HOUR + 30; i++) await start('net:flooder');
    for (let i = 0; i < KEPT_TEST_SESSIONS_PER_NUMBER_HOUR - KEPT_TEST_SESSIONS_PER_NETWORK_HOUR; i++)
      expect(isSpareTestSession((await start(`net:other-${i}`)).requestId)).toBe(false);
    expect(isSpareTestSession((await start('net:late')).requestId)).toBe(true);
  });
});
