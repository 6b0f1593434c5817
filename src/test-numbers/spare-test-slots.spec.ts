/**
 * A spare test session's slot, read by the played session itself (as the reconciler's reads are, with
 * no record in between): the session a newer one replaced in its slot is not found, nor checked; the
 * newer one and the slot's neighbours are theirs.
 */
import { describe, expect, it } from '@jest/globals';
import { SPARE_TEST_SESSION_SLOTS, isSpareTestSession } from '../core/test-session.js';
import { DEFAULT_SESSION_TTL_MS } from '../core/session-record.js';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import { MemoryStore } from '../store/memory.store.js';
import { OVERFLOW_TEST_SESSION_SLOT } from './spare-test-slots.js';
import { storedSessionId } from '../core/test-session.js';
import {
  KEPT_TEST_SESSIONS_PER_NETWORK_HOUR,
  KEPT_TEST_SESSIONS_PER_NUMBER_HOUR,
  TestNumberSessions,
} from './test-number-sessions.js';

const REVIEWER = '+79990000001';
/** A session still holding its slot reads pending: sent, or delivered once its delivery delay has passed. */
const PENDING = /^(sent|delivered)$/;
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
    expect((await sessions.getSession(first.requestId)).status).toMatch(PENDING);

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
    // The slots and the overflow.
    expect(slots.size).toBe(SPARE_TEST_SESSION_SLOTS + 1);
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

describe("spare test sessions: another starter's session keeps its slot while it is held", () => {
  /** A number whose kept sessions of the hour are taken (one from each of 10 networks): further starts are spare. */
  async function spareNumber() {
    const now = { t: 1_800_000_000_000 };
    const sessions = new TestNumberSessions(options, new MemoryStore({ clock: () => now.t }));
    const start = (network: string, owner?: string) =>
      sessions.initiate(
        { phoneNumber: REVIEWER, method: 'sms' },
        { network, ...(owner === undefined ? {} : { owner }) },
      );
    for (let n = 0; n < KEPT_TEST_SESSIONS_PER_NUMBER_HOUR; n++) await start(`net:kept-${n}`);
    const spare = async (network: string, owner?: string) => {
      const { requestId } = await start(network, owner);
      expect(isSpareTestSession(requestId)).toBe(true);
      return requestId;
    };
    const slotOf = (requestId: string) => Number(storedSessionId(requestId).slice(-1));
    return { now, sessions, spare, slotOf };
  }

  it("strangers' starts from many networks take the free slots, then the newest strangers' once each, then the overflow: the reviewer's session, a code checked for it, verifies", async () => {
    const { now, sessions, spare, slotOf } = await spareNumber();
    const reviewer = await spare('net:reviewer');
    await expect(sessions.check({ requestId: reviewer, code: '000000' })).rejects.toMatchObject({
      status: 400,
    });
    const slots = [slotOf(reviewer)];
    for (let n = 0; n < 2 * (SPARE_TEST_SESSION_SLOTS - 1); n++) {
      now.t += 1_000;
      slots.push(slotOf(await spare(`net:stranger-${n}`)));
    }
    // Free slots in order, then each stranger's slot once, newest first; never the reviewer's.
    expect(slots).toStrictEqual([0, 1, 2, 3, 4, 4, 3, 2, 1]);
    for (let n = 0; n < 3; n++) expect(slotOf(await spare(`net:late-${n}`))).toBe(OVERFLOW_TEST_SESSION_SLOT);
    expect(await sessions.check({ requestId: reviewer, code: '123456' })).toMatchObject({
      status: 'verified',
    });
  });

  it('a session that took a held slot is never the next one replaced, nor an older one first', async () => {
    const { now, sessions, spare } = await spareNumber();
    const strangers: string[] = [];
    for (let n = 0; n < SPARE_TEST_SESSION_SLOTS; n++) {
      strangers.push(await spare(`net:stranger-${n}`));
      now.t += 1_000;
    }
    const reviewer = await spare('net:reviewer');
    now.t += 1_000;
    await spare('net:late');
    const last = SPARE_TEST_SESSION_SLOTS - 1;
    await expect(sessions.getSession(strangers[last]!)).rejects.toMatchObject({ status: 404 });
    await expect(sessions.getSession(strangers[last - 1]!)).rejects.toMatchObject({ status: 404 });
    expect((await sessions.getSession(strangers[0]!)).status).toMatch(PENDING);
    expect((await sessions.getSession(reviewer)).status).toMatch(PENDING);
  });

  it("the newest stranger's session is replaced wherever its slot stands: a lower slot freed and taken again, or a starter's own session renewed", async () => {
    const { now, sessions, spare, slotOf } = await spareNumber();
    const began = now.t;
    const strangers: string[] = [];
    for (let n = 0; n < SPARE_TEST_SESSION_SLOTS; n++) {
      strangers.push(await spare(`net:stranger-${n}`));
      now.t += 1_000;
    }
    // The first slot's session ends; a new stranger takes it, the newest in the lowest slot.
    now.t = began + DEFAULT_SESSION_TTL_MS;
    const lowest = await spare('net:lowest');
    expect(slotOf(lowest)).toBe(0);
    now.t += 1;
    await spare('net:next');
    await expect(sessions.getSession(lowest)).rejects.toMatchObject({ status: 404 });
    for (const id of strangers.slice(1)) expect((await sessions.getSession(id)).status).toMatch(PENDING);
    // A starter renewing its own session (net:stranger-1's oldest) replaced nobody else: its new one is the
    // newest session any other starter may take.
    now.t += 1;
    const renewed = await spare('net:stranger-1');
    expect(slotOf(renewed)).toBe(1);
    now.t += 1;
    await spare('net:later');
    await expect(sessions.getSession(renewed)).rejects.toMatchObject({ status: 404 });
    for (const id of strangers.slice(2)) expect((await sessions.getSession(id)).status).toMatch(PENDING);
  });

  it('every slot held by a session a code was checked for: a start takes the overflow, nothing else replaced', async () => {
    const { sessions, spare, slotOf } = await spareNumber();
    const held: string[] = [];
    for (let n = 0; n < SPARE_TEST_SESSION_SLOTS; n++) {
      const id = await spare(`net:holder-${n}`);
      await expect(sessions.check({ requestId: id, code: '000000' })).rejects.toMatchObject({ status: 400 });
      held.push(id);
    }
    expect(slotOf(await spare('net:late'))).toBe(OVERFLOW_TEST_SESSION_SLOT);
    for (const id of held) expect((await sessions.getSession(id)).status).toMatch(PENDING);
  });

  it("a starter's new start replaces its own oldest session, never a stranger's", async () => {
    const { now, sessions, spare } = await spareNumber();
    const mine: string[] = [];
    for (let i = 0; i < 2; i++) {
      mine.push(await spare('net:a'));
      now.t += 1_000;
    }
    const theirs = [await spare('net:b'), await spare('net:c'), await spare('net:d')];
    const next = await spare('net:a');
    await expect(sessions.getSession(mine[0]!)).rejects.toMatchObject({ status: 404 });
    expect((await sessions.getSession(mine[1]!)).status).toMatch(PENDING);
    for (const id of theirs) expect((await sessions.getSession(id)).status).toMatch(PENDING);
    expect((await sessions.getSession(next)).status).toMatch(PENDING);
    // An owner is its own starter whatever its network: another owner of net:a has no session of its
    // own here, so it takes the newest other one (d's), as any other starter would.
    await spare('net:a', 'demo');
    await expect(sessions.getSession(theirs[2]!)).rejects.toMatchObject({ status: 404 });
    for (const id of [mine[1]!, theirs[0]!, theirs[1]!, next])
      expect((await sessions.getSession(id)).status).toMatch(PENDING);
  });

  it('a starter whose sessions hold every slot replaces them oldest first, never the one it just started', async () => {
    const { now, sessions, spare } = await spareNumber();
    const mine: string[] = [];
    for (let i = 0; i < SPARE_TEST_SESSION_SLOTS; i++) {
      mine.push(await spare('net:a'));
      now.t += 1_000;
    }
    const first = await spare('net:a');
    now.t += 1_000;
    const second = await spare('net:a');
    for (const id of mine.slice(0, 2))
      await expect(sessions.getSession(id)).rejects.toMatchObject({ status: 404 });
    for (const id of [...mine.slice(2), first, second])
      expect((await sessions.getSession(id)).status).toMatch(PENDING);
  });

  it('a checked session keeps its slot to its end: one tick before, a stranger takes another; at its end, its slot', async () => {
    const { now, sessions, spare, slotOf } = await spareNumber();
    const began = now.t;
    const reviewer = await spare('net:reviewer');
    await expect(sessions.check({ requestId: reviewer, code: '000000' })).rejects.toMatchObject({
      status: 400,
    });
    now.t += 1_000;
    for (let n = 1; n < SPARE_TEST_SESSION_SLOTS; n++) await spare(`net:stranger-${n}`);
    now.t = began + DEFAULT_SESSION_TTL_MS - 1;
    expect(slotOf(await spare('net:late-1'))).not.toBe(slotOf(reviewer));
    expect((await sessions.getSession(reviewer)).status).toMatch(PENDING);
    now.t = began + DEFAULT_SESSION_TTL_MS;
    expect(slotOf(await spare('net:late-2'))).toBe(slotOf(reviewer));
  });

  it("a failed session's slot is free at once; a verified one is held", async () => {
    const { sessions, spare, slotOf } = await spareNumber();
    const reviewer = await spare('net:reviewer');
    expect(await sessions.check({ requestId: reviewer, code: '123456' })).toMatchObject({
      status: 'verified',
    });
    const guesser = await spare('net:guesser');
    for (let i = 0; i < options.testNumbers.maxAttempts; i++)
      await expect(sessions.check({ requestId: guesser, code: '000000' })).rejects.toMatchObject({
        status: 400,
      });
    expect((await sessions.getSession(guesser)).status).toBe('failed');
    expect(slotOf(await spare('net:next'))).toBe(slotOf(guesser));
    // Three free slots, then the four others' once each; then the overflow.
    for (let n = 0; n < 7; n++) await spare(`net:flood-${n}`);
    expect(slotOf(await spare('net:flood-late'))).toBe(OVERFLOW_TEST_SESSION_SLOT);
    expect((await sessions.getSession(reviewer)).status).toBe('verified');
  });
});
