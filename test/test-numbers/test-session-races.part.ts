/**
 * A test session under racing checks and reads (fix-44g; attack-k's suspected race): what the API's
 * seam answers (the routes, the refresher, the reconciler and recovery read a test session through it)
 * after the worst interleavings, forced by holding one store call of one check or read:
 * - a right and a wrong code checked together: the session stays verified (a wrong code's write of its
 *   state read before never overwrites the right code's end);
 * - the right code and the wrong code of the last attempt: verified stands, never failed after;
 * - the last wrong code: answered once its session reads failed;
 * - a read of a spare session while a new start takes its slot: the new session stays, the old one is
 *   gone (never written back over the new one); and a replaced session's entries go with it.
 * Two instances on one store (Memory: one store; Redis: a connection each), and one instance taking two
 * concurrent requests.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { KnownVerificationMethod } from '../../src/core/verification-method.js';
import { resolveVerificationOptions } from '../../src/options/verification-options.resolver.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { SPARE_TEST_SESSION_SLOTS } from '../../src/core/test-session.js';
import {
  KEPT_TEST_SESSIONS_PER_NETWORK_HOUR,
  TestNumberSessions,
} from '../../src/test-numbers/test-number-sessions.js';
import { TEST_DELIVERY_MIN_MS, TEST_DELIVERY_SPREAD_MS } from '../../src/test-numbers/test-session-state.js';
import { uniqueKeyPrefix } from '../multi-instance/deployment.js';
import { dumpMemoryStore } from '../support/store-dump.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { gatedStore, type GatedStore } from './gated-store.js';

const REVIEWER = '+79990000001';
/** A number whose outcome is verified: its session ends at its first read. */
const AUTO_VERIFIED = '+79990000002';
const CODE = '246810';
const WRONG = '000000';

type Kind = 'memory' | 'redis';
type Shape = 'two instances' | 'one instance';

const options = (maxAttempts = 3) =>
  resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
    testNumbers: {
      numbers: [
        { phoneNumber: REVIEWER, code: CODE },
        { phoneNumber: AUTO_VERIFIED, outcome: 'verified' },
      ],
      maxAttempts,
    },
  });

describe.each([
  ['memory', 'two instances'],
  ['redis', 'two instances'],
  ['memory', 'one instance'],
  ['redis', 'one instance'],
] as [Kind, Shape][])('a test session under racing checks and reads (%s store, %s)', (kind, shape) => {
  const clock = { t: 1_800_000_000_000 };
  const opened: VerificationStore[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  /**
   * Two instances' sessions (the same one twice for one instance), each with its store gated, and what
   * a written value says (opened when sealed).
   */
  function deployment(maxAttempts?: number): [Instance, Instance, (value: string) => string] {
    const resolved = options(maxAttempts);
    const keyPrefix = uniqueKeyPrefix('test-session-races');
    const memory = new MemoryStore({ clock: () => clock.t });
    const open = (): VerificationStore => {
      const store =
        kind === 'memory'
          ? memory
          : new RedisStore({ url: sharedRedisUrl(), keyPrefix, clock: () => clock.t });
      if (!opened.includes(store)) opened.push(store);
      return store;
    };
    const instance = (): Instance => {
      const gate = gatedStore(open());
      return { gate, sessions: new TestNumberSessions(resolved, gate.store) };
    };
    const first = instance();
    const says = (value: string) => resolved.dataKeys.open(value) ?? value;
    return [first, shape === 'one instance' ? first : instance(), says];
  }

  const start = (instance: Instance, method: KnownVerificationMethod = 'sms', network?: string) =>
    instance.sessions.initiate({ phoneNumber: REVIEWER, method }, network === undefined ? {} : { network });
  const answer = <T>(promise: Promise<T>) =>
    promise.then(
      (value) => ({ ok: value as unknown }),
      (error: { status?: number; problem?: { error_code?: string; attempts_remaining?: number } }) => ({
        refused: { status: error.status, ...error.problem },
      }),
    );

  it('a wrong code read before the right one verified the session, written after it: the session stays verified', async () => {
    const [wrongs, rights] = deployment();
    const { requestId } = await start(wrongs);
    // The wrong code's check has read the session; its attempt waits until the right code is through.
    const held = wrongs.gate.hold('increment', (key) => key.includes('test-number:attempts'));
    const wrong = answer(wrongs.sessions.check({ requestId, code: WRONG }));
    await held.reached;
    expect(await rights.sessions.check({ requestId, code: CODE })).toMatchObject({ status: 'verified' });
    held.release();
    expect(await wrong).toMatchObject({ refused: { status: 400, error_code: 'invalid_code' } });
    for (const instance of [wrongs, rights])
      expect(await instance.sessions.getSession(requestId)).toMatchObject({ status: 'verified' });
  });

  it('the last attempt’s wrong code racing the right one: verified stands, never failed after it', async () => {
    const [wrongs, rights, says] = deployment(2);
    const { requestId } = await start(rights);
    // The right code has taken its attempt (1 of 2) and waits before its wrong-code points.
    const rightHeld = rights.gate.hold('increment', (key) => key.includes('test-number:wrong'));
    const right = answer(rights.sessions.check({ requestId, code: CODE }));
    await rightHeld.reached;
    // The wrong code takes the last attempt (2 of 2) and has read the session pending: its failing write waits.
    const wrongHeld = wrongs.gate.hold('write', (_key, value) => says(value).includes('"failed"'));
    const wrong = answer(wrongs.sessions.check({ requestId, code: WRONG }));
    await wrongHeld.reached;
    rightHeld.release();
    expect(await right).toMatchObject({ ok: { status: 'verified' } });
    wrongHeld.release();
    expect(await wrong).toMatchObject({ refused: { error_code: 'invalid_code', attempts_remaining: 0 } });
    for (const instance of [wrongs, rights])
      expect(await instance.sessions.getSession(requestId)).toMatchObject({ status: 'verified' });
  });

  it('the right code whose attempt came before the last wrong code, compared after it failed the session: refused (409), never verified', async () => {
    const [rights, wrongs] = deployment(2);
    const { requestId } = await start(rights);
    // The right code has taken its attempt (1 of 2) and waits before its wrong-code points.
    const rightHeld = rights.gate.hold('increment', (key) => key.includes('test-number:wrong'));
    const right = answer(rights.sessions.check({ requestId, code: CODE }));
    await rightHeld.reached;
    // The wrong code takes the last attempt (2 of 2) and fails the session.
    expect(await answer(wrongs.sessions.check({ requestId, code: WRONG }))).toMatchObject({
      refused: { error_code: 'invalid_code', attempts_remaining: 0 },
    });
    rightHeld.release();
    expect(await right).toMatchObject({ refused: { status: 409, error_code: 'not_pending' } });
    for (const instance of [wrongs, rights])
      expect(await instance.sessions.getSession(requestId)).toMatchObject({ status: 'failed' });
  });

  it('two first reads of a number verified at its first read, racing: both answer the end recorded first', async () => {
    const [early, late] = deployment();
    const { requestId } = await early.sessions.initiate({ phoneNumber: AUTO_VERIFIED, method: 'sms' });
    // The early read has played the outcome (verified now) and waits before recording it.
    const held = early.gate.hold('write', (key) => key.includes('test-number:end'));
    const first = early.sessions.getSession(requestId);
    await held.reached;
    clock.t += 1000;
    // The late read, a second on, records its end first.
    const second = await late.sessions.getSession(requestId);
    expect(second).toMatchObject({ status: 'verified' });
    held.release();
    expect(await first).toEqual(second);
    for (const instance of [early, late])
      expect(await instance.sessions.getSession(requestId)).toEqual(second);
  });

  it('the last wrong code is answered only once its session reads failed', async () => {
    const [wrongs, readers, says] = deployment(1);
    const { requestId } = await start(wrongs);
    const held = wrongs.gate.hold('write', (_key, value) => says(value).includes('"failed"'));
    let answered = false;
    const wrong = answer(wrongs.sessions.check({ requestId, code: WRONG })).finally(() => (answered = true));
    await held.reached;
    // Read meanwhile: still pending, and the caller has no answer yet.
    expect((await readers.sessions.getSession(requestId)).status).toBe('sent');
    expect(answered).toBe(false);
    held.release();
    expect(await wrong).toMatchObject({ refused: { error_code: 'invalid_code', attempts_remaining: 0 } });
    expect((await readers.sessions.getSession(requestId)).status).toBe('failed');
  });

  it('a read of a spare session while a new start takes its slot: the new one stays, the old one is gone', async () => {
    const [readers, starters] = deployment();
    const network = '198.51.100.0/24';
    for (let i = 0; i < KEPT_TEST_SESSIONS_PER_NETWORK_HOUR; i++) await start(starters, 'sms', network);
    const spare: string[] = [];
    for (let slot = 0; slot < SPARE_TEST_SESSION_SLOTS; slot++)
      spare.push((await start(starters, 'sms', network)).requestId);
    const oldest = spare[0]!;
    expect(oldest.startsWith('test_x')).toBe(true);
    // Past its delivery: a read finds it delivered (its status changed since the start).
    clock.t += TEST_DELIVERY_MIN_MS + TEST_DELIVERY_SPREAD_MS;
    // The read has the old session in hand; the network's next start takes its slot (its starter's oldest).
    const held = readers.gate.holdResult('get', (key) => key.includes('test-number:session:'));
    const read = readers.sessions.getSession(oldest);
    await held.reached;
    const newer = await start(starters, 'sms', network);
    expect(newer.requestId.slice(0, 29)).toBe(oldest.slice(0, 29));
    held.release();
    expect(await read).toMatchObject({ requestId: oldest, status: 'delivered' });
    for (const instance of [readers, starters]) {
      expect(await instance.sessions.getSession(newer.requestId)).toMatchObject({ status: 'sent' });
      expect(await answer(instance.sessions.getSession(oldest))).toMatchObject({
        refused: { status: 404, error_code: 'not_found' },
      });
    }
  });
});

interface Instance {
  gate: GatedStore;
  sessions: TestNumberSessions;
}

describe('spare sessions replaced in their slots (memory store)', () => {
  it('a network checking a code in each of 30 spare sessions keeps the entries of its slots only: a replaced session’s go', async () => {
    const clock = { t: 1_800_000_000_000 };
    const store = new MemoryStore({ clock: () => clock.t });
    const sessions = new TestNumberSessions(options(), store);
    const network = '198.51.100.0/24';
    for (let i = 0; i < KEPT_TEST_SESSIONS_PER_NETWORK_HOUR + 30; i++) {
      const { requestId } = await sessions.initiate({ phoneNumber: REVIEWER, method: 'sms' }, { network });
      // Its holder shows up: a wrong code (an attempt; past the network's budget, its end).
      await sessions.check({ requestId, code: WRONG }).catch(() => undefined);
    }
    const entries = dumpMemoryStore(store).filter((line) =>
      /^test-number:(session|attempts|end):/.test(line),
    );
    // Each kept session's and each slot's (its start, attempts and end), the overflow's included.
    expect(entries.length).toBeLessThanOrEqual(
      3 * (KEPT_TEST_SESSIONS_PER_NETWORK_HOUR + SPARE_TEST_SESSION_SLOTS + 1),
    );
  });
});
