import { randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { SessionRecordRepository } from '../../src/sessions/session-record.repository.js';
import { JourneyState } from '../../src/verification/journey-state.js';
import { StatusFlow } from '../../src/verification/status.flow.js';
import { JourneyHandles } from '../../src/verification/journey-handles.js';
import { VerificationStoreUnavailableError } from '../../src/store/store-unavailable.error.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { openSse, type SseStream } from '../support/sse-client.js';
import { call, type TestApp } from '../support/verification-app.js';
import { startHost, startSession, type StartedSession } from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { CapturingLogger } from '../support/log-capture.js';

/**
 * What a status stream makes up for, over real HTTP: a read the store failed, a new step listed late,
 * a read that began before a new stream's own first answer was saved, and announcements published while
 * an instance's Redis subscription was away. In each, the status route already says the outcome; the
 * page on the stream must come to show it, never an older answer after a newer one. The module's work
 * behind the route, the same on both platforms: one platform runs it.
 */
describe('status stream: what it makes up for', () => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  const hosts: TestApp[] = [];
  const open: SseStream[] = [];
  const closing: (() => void)[] = [];

  beforeAll(async () => {
    sb = suite.sb;
  });
  afterEach(async () => {
    sb.clearFaults();
    for (const stream of open.splice(0)) stream.close();
    for (const host of hosts.splice(0)) await host.close();
    for (const close of closing.splice(0)) close();
  });

  const boot = async (
    module: Partial<VerificationModuleOptions> = {},
    receiveWebhooks = true,
    logger?: CapturingLogger,
  ) => {
    const host = await startHost('express', sb, { module, receiveWebhooks, logger });
    hosts.push(host);
    return host;
  };
  const stream = async (host: TestApp, s: StartedSession): Promise<SseStream> => {
    const opened = await openSse(`${host.url}/verification/status/${s.verificationId}/events`, {
      'x-user': s.owner,
    });
    expect(opened.status).toBe(200);
    open.push(opened.stream!);
    return opened.stream!;
  };
  const routeStatus = async (host: TestApp, s: StartedSession) =>
    (
      await call(host.url, 'GET', `/verification/status/${s.verificationId}`, undefined, {
        'x-user': s.owner,
      })
    ).body as Record<string, unknown>;
  /** The next read of a journey fails as a store briefly away would; `calls()` counts the reads since. */
  const failNextRead = (host: TestApp) => {
    const journeys = host.app.get(JourneyState, { strict: false });
    const real = journeys.read.bind(journeys);
    let calls = 0;
    journeys.read = async (journeyId: string) => {
      if (++calls === 1) throw new VerificationStoreUnavailableError('get', 'blip');
      return real(journeyId);
    };
    return { calls: () => calls };
  };
  /** The stream's reads of the journey fail while `down` is set (as from the start); `reads` counts them all. */
  const storeDown = (host: TestApp) => {
    const flow = host.app.get(StatusFlow, { strict: false });
    const real = flow.stored.bind(flow);
    const store = { down: true, reads: 0 };
    flow.stored = async (journeyId: string) => {
      store.reads++;
      if (store.down) throw new VerificationStoreUnavailableError('get', 'down');
      return real(journeyId);
    };
    return store;
  };
  /** Past any read the open started (a stream's first look), real time: nothing else may be under way. */
  const settled = () => new Promise((resolve) => setTimeout(resolve, 200));
  /** A host, a reverse call started on it and its stream, past the stream's first answer and first look. */
  const watching = async (logger?: CapturingLogger) => {
    const host = await boot({}, true, logger);
    const s = await startSession(host, sb, 'reverse_flash_call');
    const events = await stream(host, s);
    await events.statusCount(1);
    await settled();
    return { host, s, events };
  };
  /** A call of one client route as the session's owner. */
  const post = (host: TestApp, s: StartedSession, route: string, body: Record<string, unknown>) =>
    call(
      host.url,
      'POST',
      `/verification/${route}`,
      { verification_id: s.verificationId, ...body },
      {
        'x-user': s.owner,
      },
    );

  it('a push whose read the store failed is logged and read again: the stream shows the outcome the webhook announced', async () => {
    const logger = new CapturingLogger();
    const { host, s, events } = await watching(logger);
    const { calls } = failNextRead(host);
    await sb.call(s.requestId, s.phone);
    await sb.webhooksIdle();
    await waitFor(() => calls() === 1);
    expect((await routeStatus(host, s)).status).toBe('verified');
    // Nothing else would read the journey again: no look (webhooks report this method), no next change.
    await events.ends(4000);
    expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
    expect(logger.lines.filter((l) => l.includes('status stream'))).toEqual([
      expect.stringMatching(/^warn status stream could not read a session: .*blip/),
    ]);
  });

  it('a store that stays down is read less and less often, however many changes are announced; once back, the outcome is shown', async () => {
    const { host, s, events } = await watching();
    const store = storeDown(host);
    const records = host.app.get(SessionRecordRepository, { strict: false });
    const started = Date.now();
    for (let i = 0; i < 10; i++) {
      await records.announce(s.requestId);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // 2.5 s in: the first read failed, its try 1 s later too; the next waits 2 s (then 4 s, 8 s at most).
    await new Promise((resolve) => setTimeout(resolve, 2500 - (Date.now() - started)));
    expect(store.reads).toBe(2);
    store.down = false;
    await sb.call(s.requestId, s.phone);
    await sb.webhooksIdle();
    await events.ends(6000);
    expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
  }, 15_000);

  it('a store back after an outage is retried 1 s into its next outage again, not at the last wait doubled', async () => {
    const { host, s } = await watching();
    const store = storeDown(host);
    const records = host.app.get(SessionRecordRepository, { strict: false });
    // The first outage: a read fails, its try 1 s later too; the next, 2 s after that, finds the store back.
    await records.announce(s.requestId);
    await waitFor(() => store.reads === 2);
    store.down = false;
    await waitFor(() => store.reads === 3, 4000);
    // The second outage: its first try comes 1 s after the failed read (4 s had the waits gone on doubling).
    store.down = true;
    const failedAt = Date.now();
    await records.announce(s.requestId);
    await waitFor(() => store.reads === 5, 6000);
    expect(Date.now() - failedAt).toBeLessThan(3000);
  }, 15_000);

  it('a push that fails past its store read is read again: the journey is not left unread', async () => {
    const { host, s, events } = await watching();
    // The first push after the user's call fails once past its store read (sealing the journey's token).
    const handles = host.app.get(JourneyHandles, { strict: false });
    const realToken = handles.token.bind(handles);
    let tokens = 0;
    handles.token = (...args: Parameters<JourneyHandles['token']>) => {
      if (++tokens === 1) throw new Error('fault');
      return realToken(...args);
    };
    await sb.call(s.requestId, s.phone);
    await sb.webhooksIdle();
    await events.ends(4000);
    expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
  });

  it('a stream opened after a switch whose first look the store failed hears the new step once a look lists it', async () => {
    const host = await boot();
    const s = await startSession(host, sb, 'sms');
    await sb.advance(61_000);
    expect((await post(host, s, 'switch', { method: 'msgr1_otp' })).status).toBe(201);
    const second = sb.sessionsFor(s.phone).find((x) => x.method === 'msgr1_otp')!.request_id;
    // A fresh read by the page: the stream's open then announces nothing.
    await routeStatus(host, s);
    const { calls } = failNextRead(host);
    const events = await stream(host, s);
    expect((await events.statusCount(1))[0]).toMatchObject({ status: 'sent', method: 'msgr1_otp' });
    await waitFor(() => calls() === 1);
    // The user enters the new step's code: announced under that step's id, not listed yet.
    await sb.deliver(second);
    const code = String(sb.getSession(second)!.code);
    expect((await post(host, s, 'check', { code })).body).toMatchObject({ verified: true });
    // The follower looks again a slowest poll interval later and lists the step: the journey is read again.
    await events.ends(10_000);
    expect(events.statuses().map((x) => [x.status, x.method])).toEqual([
      ['sent', 'msgr1_otp'],
      ['verified', 'msgr1_otp'],
    ]);
  }, 15_000);

  it('a read begun during a new stream’s first read, of the store before that read saved its answer, is not offered to it', async () => {
    // Webhooks not delivered: the store learns the operator's fallback only by asking the API.
    const host = await boot({}, false);
    const s = await startSession(host, sb, 'operator_id');
    const a = await stream(host, s);
    expect((await a.statusCount(1))[0]).toMatchObject({ status: 'sent', awaiting_code: false });
    await settled();
    await sb.operator(s.requestId, 'fallback');
    await sb.advance(3000);
    // The API answers slowly: a new stream's first read (which asks it) waits on it.
    sb.addFault({ route: 'GET /v1/verify/:id', kind: 'latency', latency_ms: 600 });
    // The hub's next push is held once made (its view of the journey as stored), until released.
    const journeys = host.app.get(JourneyState, { strict: false });
    const realView = journeys.view.bind(journeys);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let pushes = 0;
    journeys.view = async (verificationId, loaded) => {
      const view = await realView(verificationId, loaded);
      if (verificationId === '' && ++pushes === 1) await held;
      return view;
    };
    const opening = stream(host, s);
    await settled();
    // Meanwhile a change of the journey is announced (another instance saw one): the push reads the store,
    // which does not show the fallback yet.
    await host.app.get(SessionRecordRepository, { strict: false }).announce(s.requestId);
    await waitFor(() => pushes === 1);
    const b = await opening;
    expect((await b.statusCount(1))[0]).toMatchObject({ status: 'sent', awaiting_code: true });
    release();
    // The first tab is offered the newer answer; the second, shown it already, never goes back.
    expect((await a.statusCount(2))[1]).toMatchObject({ awaiting_code: true });
    // Both tabs were offered that push at once: past it, the second showed nothing older.
    await settled();
    expect(b.statuses().map((x) => x.awaiting_code)).toEqual([true]);
  });

  it('two instances on one Redis: an outcome announced while the stream’s instance was resubscribing reaches the stream', async () => {
    const name = `pv-gap-${randomUUID()}`;
    const keyPrefix = `pv-gap:${randomUUID()}:`;
    // The stream's instance: its subscriber is a copy of this client, so it carries the name.
    const streaming = new Redis('redis://127.0.0.1:6379', { connectionName: name, retryStrategy: () => 200 });
    const other = new Redis('redis://127.0.0.1:6379');
    const admin = new Redis('redis://127.0.0.1:6379');
    closing.push(() => [streaming, other, admin].forEach((client) => client.disconnect()));
    const host = await boot({ store: { redis: streaming, keyPrefix } }, false);
    const observer = await startHost('express', sb, { module: { store: { redis: other, keyPrefix } } });
    hosts.push(observer);
    const s = await startSession(observer, sb, 'reverse_flash_call');
    const events = await stream(host, s);
    await events.statusCount(1);
    await settled();
    // The stream instance's subscriber connection drops; it reconnects 200 ms later.
    const subscriber = String(await admin.call('CLIENT', 'LIST'))
      .split('\n')
      .filter((line) => line.includes(`name=${name} `) && /\bsub=[1-9]/.test(line))
      .map((line) => /\bid=(\d+)/.exec(line)![1]!);
    expect(subscriber).toHaveLength(1);
    await admin.call('CLIENT', 'KILL', 'ID', subscriber[0]!);
    // Meanwhile the user calls: the other instance takes the webhook, stores and announces the outcome.
    await sb.call(s.requestId, s.phone);
    await sb.webhooksIdle();
    expect((await routeStatus(host, s)).status).toBe('verified');
    await events.ends(4000);
    expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
  }, 15_000);
});

async function waitFor(condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
