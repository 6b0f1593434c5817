/**
 * Erasure of a test number (a reviewer's, played by the module): its played session's entries go with its
 * record, as a real session's do; the store keeps nothing of the session but bare marks.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { dumpMemoryStore } from '../support/store-dump.js';
import { call, createTestApp, type TestApp } from '../support/verification-app.js';
import { moduleOptions, startAccountHost } from '../webhooks/harness.js';
import { KEPT_TEST_SESSIONS_PER_NETWORK_HOUR as KEPT } from '../../src/test-numbers/test-number-sessions.js';

const REVIEWER = '+79990000001';

/** The sandbox, and the host and store a test makes (closed after each). */
function hostFixture() {
  const fx = {
    suite: sandboxSuite(),
    host: undefined as TestApp | undefined,
    store: undefined as MemoryStore | undefined,
  };
  afterEach(async () => {
    await fx.host?.close();
    await fx.store?.close();
  });
  return fx;
}

describe('erasure of a test number', () => {
  const fx = hostFixture();

  it.each(['phoneNumber', 'owner'] as const)(
    'forget({ %s }): the played session’s entries are gone with its record, its handle 404',
    async (by) => {
      fx.store = new MemoryStore({ clock: () => fx.suite.sb.now() });
      fx.host = await startAccountHost('express', fx.suite.sb, {
        module: { store: fx.store, testNumbers: { numbers: [{ phoneNumber: REVIEWER, code: '246810' }] } },
      });
      const owner = `reviewer-${by}`;
      const started = await call(
        fx.host.url,
        'POST',
        '/verification/start',
        { phone_number: REVIEWER, method: 'sms' },
        { 'x-user': owner },
      );
      expect(started.status).toBe(201);
      // A wrong code: the session keeps its attempts used beside its start.
      const wrong = await call(
        fx.host.url,
        'POST',
        '/verification/check',
        { verification_id: started.body.verification_id, code: '000000' },
        { 'x-user': owner },
      );
      expect(wrong.body).toMatchObject({ error_code: 'invalid_code' });
      const played = () =>
        dumpMemoryStore(fx.store!).filter((line) => /^test-number:(session|attempts|end):/.test(line));
      expect(played().map((line) => line.split(':')[1])).toEqual(['session', 'attempts']);

      const report = await fx.host.app
        .get(VerificationErasure, { strict: false })
        .forget(by === 'owner' ? { owner } : { phoneNumber: REVIEWER });
      expect(report).toMatchObject({ sessions: 1, liveSessions: 1 });
      expect(played()).toEqual([]);
      const status = await call(
        fx.host.url,
        'GET',
        `/verification/status/${String(started.body.verification_id)}`,
        undefined,
        { 'x-user': owner },
      );
      expect(status.status).toBe(404);
    },
  );

  it('forget({ phoneNumber }) of a verified played session: its start, its attempts used and its end are all gone', async () => {
    fx.store = new MemoryStore({ clock: () => fx.suite.sb.now() });
    fx.host = await startAccountHost('express', fx.suite.sb, {
      module: { store: fx.store, testNumbers: { numbers: [{ phoneNumber: REVIEWER, code: '246810' }] } },
    });
    const owner = 'reviewer-verified';
    const send = (path: string, body: unknown) =>
      call(fx.host!.url, 'POST', `/verification/${path}`, body, { 'x-user': owner });
    const started = await send('start', { phone_number: REVIEWER, method: 'sms' });
    const id = started.body.verification_id;
    expect((await send('check', { verification_id: id, code: '000000' })).body).toMatchObject({
      error_code: 'invalid_code',
    });
    expect((await send('check', { verification_id: id, code: '246810' })).body).toMatchObject({
      verified: true,
    });
    const played = () =>
      dumpMemoryStore(fx.store!).filter((line) => /^test-number:(session|attempts|end):/.test(line));
    expect(played().map((line) => line.split(':')[1])).toEqual(['session', 'attempts', 'end']);

    const report = await fx.host.app
      .get(VerificationErasure, { strict: false })
      .forget({ phoneNumber: REVIEWER });
    expect(report).toMatchObject({ sessions: 1 });
    expect(played()).toEqual([]);
  });
});

/**
 * An anonymous browser's test number start is coalesced under its browser key, as a real number's is: the
 * erasure of the number forgets that claim too (the browser is kept sealed among its session's callers).
 */
describe('erasure of a test number an anonymous browser started', () => {
  const fx = hostFixture();

  it('forget({ phoneNumber }) leaves no coalescing claim of it, the one named by its browser among them', async () => {
    fx.store = new MemoryStore({ clock: () => fx.suite.sb.now() });
    const account = await fx.suite.sb.createAccount({ balance: 100 });
    fx.host = await createTestApp({
      platform: 'express',
      trustProxy: true,
      module: moduleOptions(
        fx.suite.sb,
        {
          store: fx.store,
          limits: { spendCap: false, pumping: false },
          testNumbers: { numbers: [{ phoneNumber: REVIEWER, code: '246810' }] },
        },
        account,
      ),
    });
    const start = (headers: Record<string, string>) =>
      call(
        fx.host!.url,
        'POST',
        '/verification/start',
        { phone_number: REVIEWER, method: 'sms' },
        { 'x-forwarded-for': '77.3.1.7', ...headers },
      );
    const first = await start({});
    expect(first.status).toBe(201);
    const cookie = `pv_browser=${/pv_browser=([^;,\s]+)/.exec(first.headers.get('set-cookie') ?? '')?.[1]}`;
    // The same browser's second start is handed the session back: the claim is its browser's.
    const again = await start({ cookie });
    expect(again.body).toMatchObject({ resumed: true, verification_id: first.body.verification_id });
    const claims = () =>
      dumpMemoryStore(fx.store!)
        .map((line) => line.split(' ')[0]!)
        .filter((key) => key.includes('protect:coalesce:'));
    expect(claims().length).toBeGreaterThan(0);

    const report = await fx.host.app
      .get(VerificationErasure, { strict: false })
      .forget({ phoneNumber: REVIEWER });
    expect(report).toMatchObject({ sessions: 1 });
    expect(claims()).toEqual([]);
  });
});

/**
 * A spare test session (a network's starts of the number past the hour's kept ones, stored in one of the
 * network's slots): erased with its owner while it holds its slot; once another owner's newer session took
 * the slot, the slot's entries are that owner's, and the first owner's erasure leaves them working.
 */
describe('erasure of an owner’s spare test session', () => {
  const fx = hostFixture();
  const CODE = '246810';
  const NETWORK = '2001:db8:5a5a';

  /** A host whose reviewer number has been started KEPT times from NETWORK: its next start there is spare. */
  async function bootWithKeptSessions(): Promise<{
    start: (owner: string, i: number) => ReturnType<typeof call>;
    played: () => string[];
    send: (method: 'GET' | 'POST', path: string, owner: string, body?: unknown) => ReturnType<typeof call>;
  }> {
    fx.store = new MemoryStore({ clock: () => fx.suite.sb.now() });
    fx.host = await startAccountHost('express', fx.suite.sb, {
      trustProxy: true,
      module: {
        store: fx.store,
        limits: {},
        testNumbers: { numbers: [{ phoneNumber: REVIEWER, code: CODE }], maxAttempts: 2 },
      },
    });
    const url = fx.host.url;
    const send = (method: 'GET' | 'POST', path: string, owner: string, body?: unknown) =>
      call(url, method, `/verification/${path}`, body, {
        'x-user': owner,
        'x-forwarded-for': `${NETWORK}::9`,
      });
    const start = (owner: string, i: number) =>
      call(
        url,
        'POST',
        '/verification/start',
        { phone_number: REVIEWER, method: 'sms' },
        { 'x-user': owner, 'x-forwarded-for': `${NETWORK}:${i.toString(16)}::1` },
      );
    for (let i = 0; i < KEPT; i++) expect((await start(`kept-${i}`, i)).status).toBe(201);
    const played = () => dumpMemoryStore(fx.store!).filter((line) => line.includes('test-number:session:'));
    expect(played()).toHaveLength(KEPT);
    return { start, played, send };
  }

  it('forget({ owner }) while it holds its slot: the slot’s played session is gone, its handle 404', async () => {
    const { start, played, send } = await bootWithKeptSessions();
    const spare = await start('spare-owner', KEPT);
    expect(spare.status).toBe(201);
    expect(played()).toHaveLength(KEPT + 1);

    const report = await fx
      .host!.app.get(VerificationErasure, { strict: false })
      .forget({ owner: 'spare-owner' });
    expect(report).toMatchObject({ sessions: 1, liveSessions: 1 });
    expect(played()).toHaveLength(KEPT);
    const status = await send('GET', `status/${String(spare.body.verification_id)}`, 'spare-owner');
    expect(status.status).toBe(404);
  });

  it('forget({ owner }) after another owner’s session took its slot: that session still verifies', async () => {
    const { start, played, send } = await bootWithKeptSessions();
    const first = await start('first-owner', KEPT);
    expect(first.status).toBe(201);
    // Its wrong codes end it (failed): its slot is free for the network's next spare start.
    const id = String(first.body.verification_id);
    for (let i = 0; i < 2; i++)
      await send('POST', 'check', 'first-owner', { verification_id: id, code: '000000' });
    expect((await send('GET', `status/${id}`, 'first-owner')).body.status).toBe('failed');
    const second = await start('second-owner', KEPT + 1);
    expect(second.status).toBe(201);
    expect(played()).toHaveLength(KEPT + 1);

    const report = await fx
      .host!.app.get(VerificationErasure, { strict: false })
      .forget({ owner: 'first-owner' });
    expect(report).toMatchObject({ sessions: 0 });
    // The slot's entries are the second owner's: untouched.
    expect(played()).toHaveLength(KEPT + 1);
    const secondId = String(second.body.verification_id);
    expect((await send('GET', `status/${secondId}`, 'second-owner')).body.status).toBe('sent');
    const checked = await send('POST', 'check', 'second-owner', { verification_id: secondId, code: CODE });
    expect(checked.status).toBe(200);
    expect(checked.body.status).toBe('verified');
  });
});
