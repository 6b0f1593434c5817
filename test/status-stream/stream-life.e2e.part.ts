import { get as httpGet, type Server } from 'node:http';
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { StatusStreamHub } from '../../src/http/status-stream.hub.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationStoreUnavailableError } from '../../src/store/store-unavailable.error.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { CapturingLogger } from '../support/log-capture.js';
import { openSse, type SseOpen, type SseStream } from '../support/sse-client.js';
import { call, ONE_PLATFORM, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { reconcilerOf, startHost, startSession, type StartedSession } from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

/**
 * How long a status stream lives and what it holds, over real HTTP: an open the module refuses after
 * it took its slots (the store or the API away) gives them back, so the client's next stream opens
 * once they are back; and a stream lives through `reconcile.graceMs` after `expires_at`, so an outcome
 * learnt then (a late webhook, the reconciler's last polls) still reaches the page.
 */
describe.each(PLATFORMS)('status stream: its slots and its end (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  const hosts: TestApp[] = [];
  const stores: MemoryStore[] = [];
  const open: SseStream[] = [];

  beforeAll(async () => {
    sb = suite.sb;
  });
  afterEach(async () => {
    sb.clearFaults();
    for (const stream of open.splice(0)) stream.close();
    for (const host of hosts.splice(0)) await host.close();
    for (const store of stores.splice(0)) await store.close();
  });

  const boot = async (module: Partial<VerificationModuleOptions>, receiveWebhooks = true) => {
    const host = await startHost(platform, sb, { module, receiveWebhooks });
    hosts.push(host);
    return host;
  };
  const hub = (host: TestApp): StatusStreamHub => host.app.get(StatusStreamHub, { strict: false });
  const openOn = async (host: TestApp, s: StartedSession): Promise<SseOpen> => {
    const opened = await openSse(`${host.url}/verification/status/${s.verificationId}/events`, {
      'x-user': s.owner,
    });
    if (opened.stream) open.push(opened.stream);
    return opened;
  };

  /** A host whose store refuses to subscribe while `down` (the store's pub/sub away, its keys not). */
  const subscribeFails = (state: { down: boolean }) => {
    const store = new (class extends MemoryStore {
      override subscribe(channel: string, onMessage: (message: string) => void): Promise<() => void> {
        if (state.down) return Promise.reject(new VerificationStoreUnavailableError('subscribe', 'down'));
        return super.subscribe(channel, onMessage);
      }
    })({ clock: () => sb.now() });
    stores.push(store);
    return store;
  };

  /** A store that counts the subscriptions it holds. */
  const countingSubscriptions = () => {
    const held = { subscriptions: 0 };
    const store = new (class extends MemoryStore {
      override async subscribe(channel: string, onMessage: (message: string) => void): Promise<() => void> {
        const unsubscribe = await super.subscribe(channel, onMessage);
        held.subscriptions += 1;
        let given = false;
        return () => {
          if (!given) held.subscriptions -= 1;
          given = true;
          unsubscribe();
        };
      }
    })({ clock: () => sb.now() });
    stores.push(store);
    return { store, held };
  };

  it('a store the host keeps past the app holds none of the module’s subscriptions once the app closed', async () => {
    const { store, held } = countingSubscriptions();
    const host = await startHost(platform, sb, { module: { store } });
    const s = await startSession(host, sb, 'sms');
    const opened = await openOn(host, s);
    expect(opened.status).toBe(200);
    expect(held.subscriptions).toBeGreaterThan(0);
    opened.stream!.close();
    await host.close();
    expect(held.subscriptions).toBe(0);
  });

  it.each([
    ['the store cannot subscribe', 'store'],
    ['the API is down while a record the store lost is rebuilt', 'api'],
  ] as const)(
    'an open refused with 503 (%s) gives its slots back: past maxPerClient such refusals, the client’s streams open once it is back',
    async (_, away) => {
      const MAX = 2;
      const state = { down: away === 'store' };
      const statusStream = { maxPerClient: MAX };
      let host: TestApp;
      let s: StartedSession;
      if (away === 'store') {
        host = await boot({ store: subscribeFails(state), statusStream });
        s = await startSession(host, sb, 'sms');
      } else {
        // Started before a restart: the new instance's MemoryStore has no record of it.
        s = await startSession(await boot({}), sb, 'sms');
        host = await boot({ statusStream });
        sb.addFault({ route: 'GET /v1/verify/:id', kind: 'status', status: 503, count: 0 });
      }
      // As many refusals as the client has slots: each one's slots were taken, and must be given back.
      for (let i = 0; i < MAX; i += 1) {
        const refused = await openOn(host, s);
        expect({ status: refused.status, error_code: refused.body?.error_code }).toEqual({
          status: 503,
          error_code: 'service_unavailable',
        });
      }
      expect(hub(host).size).toBe(0);
      state.down = false;
      sb.clearFaults();
      // Back: as many streams as the cap allows open, and they show the session.
      for (let i = 0; i < MAX; i += 1) {
        const opened = await openOn(host, s);
        const { status, body } = opened;
        expect({ status, error_code: body?.error_code, detail: body?.detail }).toEqual({
          status: 200,
          error_code: undefined,
          detail: undefined,
        });
        expect((await opened.stream!.statusCount(1))[0]).toMatchObject({ status: 'sent' });
      }
    },
  );

  it('an open the store cannot subscribe for is logged once, with why; a refusal of the status route’s own (503) is not', async () => {
    // A session whose record only another instance's store holds (that instance booted first: Nest's logger is
    // the last app's).
    const elsewhere = await startSession(await boot({}), sb, 'sms');
    const logger = new CapturingLogger();
    const state = { down: true };
    const host = await startHost(platform, sb, { module: { store: subscribeFails(state) }, logger });
    hosts.push(host);
    const s = await startSession(host, sb, 'sms');
    const refused = await openOn(host, s);
    expect(refused.status).toBe(503);
    // The store back and the API down: the status route's own 503 (the rebuild of the record this store lacks
    // failed), answered as the route answers it, without that line.
    state.down = false;
    sb.addFault({ route: 'GET /v1/verify/:id', kind: 'status', status: 503, count: 0 });
    const apiDown = await openOn(host, elsewhere);
    expect(apiDown.status).toBe(503);
    const lines = logger.lines.filter((l) => l.includes('status stream refused'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^warn status stream refused: .*down/);
  });

  it('a client that left while its open was still reading gives its slot back: its next stream opens', async () => {
    // The store's subscription (the open's first read) waits until the client has gone.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const waiting = new Promise<void>((r) => (reached = r));
    const store = new (class extends MemoryStore {
      override async subscribe(channel: string, onMessage: (message: string) => void): Promise<() => void> {
        reached();
        await gate;
        return super.subscribe(channel, onMessage);
      }
    })({ clock: () => sb.now() });
    stores.push(store);
    const host = await boot({ store, statusStream: { maxPerClient: 1 } });
    const s = await startSession(host, sb, 'sms');
    const server = host.app.getHttpServer() as Server;
    const connections = () =>
      new Promise<number>((r, j) => server.getConnections((e, n) => (e ? j(e) : r(n))));
    const url = `${host.url}/verification/status/${s.verificationId}/events`;
    const leaving = new AbortController();
    const left = new Promise<void>((resolve) => {
      const req = httpGet(url, { headers: { 'x-user': s.owner }, agent: false, signal: leaving.signal });
      req.once('error', () => resolve());
    });
    await waiting;
    const before = await connections();
    leaving.abort();
    await left;
    // The server saw the client go before the open's read ends.
    await waitUntil(async () => (await connections()) < before);
    release();
    // The slot the open took is given back once its read ends: the client's next stream opens and shows the session.
    let next: SseOpen | undefined;
    await waitUntil(async () => {
      next = await openOn(host, s);
      return next.status === 200;
    });
    expect((await next!.stream!.statusCount(1))[0]).toMatchObject({ status: 'sent' });
    expect(hub(host).size).toBe(1);
  });

  it('two tabs stream one verification: when one leaves, the other still gets the outcome', async () => {
    const host = await boot({ statusStream: { heartbeatMs: 20 } }, false);
    const s = await startSession(host, sb, 'sms');
    const left = (await openOn(host, s)).stream!;
    const stays = (await openOn(host, s)).stream!;
    await left.statusCount(1);
    await stays.statusCount(1);
    left.close();
    await stays.until(() => hub(host).size === 1);
    await sb.deliver(s.requestId);
    const code = String(sb.getSession(s.requestId)!.code);
    const checked = await call(
      host.url,
      'POST',
      '/verification/check',
      { verification_id: s.verificationId, code },
      { 'x-user': s.owner },
    );
    expect(checked.body).toMatchObject({ verified: true });
    await stays.ends();
    expect(stays.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
  });

  it('caps streams per client, not for every client together: past its one stream a client gets 429, another client opens', async () => {
    const host = await boot({
      statusStream: { maxPerClient: 1 },
      limits: {
        enabled: false,
        key: (req) => (req as { headers: Record<string, string> }).headers['x-client'],
      },
    });
    const s = await startSession(host, sb, 'sms');
    const url = `${host.url}/verification/status/${s.verificationId}/events`;
    const opened = async (client: string) => {
      const res = await openSse(url, { 'x-user': s.owner, 'x-client': client });
      if (res.stream) open.push(res.stream);
      return res;
    };
    expect((await opened('a')).status).toBe(200);
    expect((await opened('b')).status).toBe(200);
    const refused = await opened('a');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(refused.body).toMatchObject({
      error_code: 'rate_limit_exceeded',
      detail: 'Too many open status streams',
    });
  });

  it('once the shutdown began, a new stream is refused with 503 and Retry-After 1 (the page reconnects elsewhere), subscribing to nothing', async () => {
    const { store, held } = countingSubscriptions();
    const host = await boot({ store });
    const s = await startSession(host, sb, 'sms');
    // Nest's hook before the HTTP server closes: the server still takes requests.
    hub(host).beforeApplicationShutdown();
    const refused = await openOn(host, s);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body).toMatchObject({
      status: 503,
      error_code: 'service_unavailable',
      detail: 'The server is shutting down',
    });
    expect(hub(host).size).toBe(0);
    expect(held.subscriptions).toBe(0);
  });

  it('a stream whose open was still reading when the shutdown began is refused with 503, and the app closes', async () => {
    // The store's subscription (the open's first read) waits until the shutdown began.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const waiting = new Promise<void>((r) => (reached = r));
    const store = new (class extends MemoryStore {
      override async subscribe(channel: string, onMessage: (message: string) => void): Promise<() => void> {
        reached();
        await gate;
        return super.subscribe(channel, onMessage);
      }
    })({ clock: () => sb.now() });
    stores.push(store);
    const host = await boot({ store });
    const s = await startSession(host, sb, 'sms');
    const opening = openOn(host, s);
    await waiting;
    hub(host).beforeApplicationShutdown();
    release();
    const refused = await opening;
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({
      error_code: 'service_unavailable',
      detail: 'The server is shutting down',
    });
    expect(hub(host).size).toBe(0);
    // Nothing holds the server: it closes (an open stream would hold it forever).
    let timer: ReturnType<typeof setTimeout> | undefined;
    const closed = await Promise.race([
      host.close().then(() => 'closed'),
      new Promise((r) => (timer = setTimeout(() => r('still open after 5 s'), 5_000))),
    ]);
    clearTimeout(timer);
    expect(closed).toBe('closed');
  });

  // When a stream ends is the module's rule behind the route, the same on both platforms: one runs it.
  if (ONE_PLATFORM.includes(platform))
    it('a stream opened a moment before expires_at stays open through the grace, and pushes the outcome the reconciler finds then', async () => {
      // No webhooks: the outcome is learnt only when the reconciler polls (on demand here).
      const host = await boot({ webhooks: undefined, statusStream: { heartbeatMs: 20 } }, false);
      const s = await startSession(host, sb, 'reverse_flash_call');
      const expiresAt = Date.parse(sb.getSession(s.requestId)!.expires_at);
      await sb.advance(expiresAt - 1 - sb.now());
      const opened = await openOn(host, s);
      expect(opened.status).toBe(200);
      const events = opened.stream!;
      expect((await events.statusCount(1))[0]).toMatchObject({ status: 'sent' });
      // The user calls in the session's last millisecond; the clock goes on into the grace.
      await sb.call(s.requestId, s.phone);
      await sb.advance(10_000);
      // A heartbeat past expires_at: the stream is still open (it ends at expires_at + graceMs).
      await events.until((m) => m.some((x) => x.comment === 'ping'));
      await reconcilerOf(host).runOnce();
      await events.ends();
      expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
    });

  if (ONE_PLATFORM.includes(platform))
    it('a stream nobody hears the outcome of ends at expires_at + graceMs, its heartbeat going until then', async () => {
      // 100 ms of the session and 200 ms of grace left at the open: the stream lives about 300 ms of real time.
      const host = await boot({ reconcile: { graceMs: 200 }, statusStream: { heartbeatMs: 20 } }, false);
      const s = await startSession(host, sb, 'sms');
      const expiresAt = Date.parse(sb.getSession(s.requestId)!.expires_at);
      await sb.advance(expiresAt - 100 - sb.now());
      const opened = await openOn(host, s);
      const events = opened.stream!;
      const began = Date.now();
      await events.ends(3000);
      expect(Date.now() - began).toBeGreaterThanOrEqual(250);
      expect(events.messages.filter((x) => x.comment === 'ping').length).toBeGreaterThanOrEqual(5);
      expect(events.statuses().map((x) => x.status)).toEqual(['sent']);
    });

  if (ONE_PLATFORM.includes(platform))
    it('one of two streams closed by its client, the other keeps its heartbeat and still ends at expires_at + graceMs', async () => {
      const host = await boot({ reconcile: { graceMs: 200 }, statusStream: { heartbeatMs: 20 } }, false);
      // The stream that stays: its session is the older one, about 300 ms of real time from its end at the open.
      const staying = await startSession(host, sb, 'sms');
      await sb.advance(60_000);
      const leaving = await startSession(host, sb, 'sms');
      const expiresAt = Date.parse(sb.getSession(staying.requestId)!.expires_at);
      await sb.advance(expiresAt - 100 - sb.now());
      const first = (await openOn(host, leaving)).stream!;
      const second = (await openOn(host, staying)).stream!;
      await first.statusCount(1);
      await second.statusCount(1);
      first.close();
      const pingsBefore = second.messages.filter((x) => x.comment === 'ping').length;
      await second.ends(3000);
      expect(second.messages.filter((x) => x.comment === 'ping').length).toBeGreaterThan(pingsBefore);
      expect(second.statuses().map((x) => x.status)).toEqual(['sent']);
    });

  if (ONE_PLATFORM.includes(platform))
    it('a switch a moment before the first step’s end moves the stream’s end to the new step’s: it pushes that step’s outcome', async () => {
      // No grace: a stream showing the SMS alone would end at its expires_at, 300 ms of real time after the open.
      const host = await boot({ reconcile: { graceMs: 0 }, statusStream: { heartbeatMs: 20 } }, false);
      const s = await startSession(host, sb, 'sms');
      const expiresAt = Date.parse(sb.getSession(s.requestId)!.expires_at);
      await sb.advance(expiresAt - 300 - sb.now());
      const opened = await openOn(host, s);
      expect(opened.status).toBe(200);
      const events = opened.stream!;
      expect((await events.statusCount(1))[0]).toMatchObject({ status: 'sent', method: 'sms' });
      const headers = { 'x-user': s.owner };
      const moved = await call(
        host.url,
        'POST',
        '/verification/switch',
        { verification_id: s.verificationId, method: 'msgr1_otp' },
        headers,
      );
      expect(moved.status).toBe(201);
      expect((await events.statusCount(2))[1]).toMatchObject({ status: 'sent', method: 'msgr1_otp' });
      // Past the SMS's end (25 heartbeats, half a second): the stream is still open.
      await events.until((m) => m.filter((x) => x.comment === 'ping').length >= 25);
      expect(events.isEnded).toBe(false);
      const second = sb.sessionsFor(s.phone).find((x) => x.method === 'msgr1_otp')!;
      await sb.deliver(second.request_id);
      const code = String(sb.getSession(second.request_id)!.code);
      const checked = await call(
        host.url,
        'POST',
        '/verification/check',
        { verification_id: s.verificationId, code },
        headers,
      );
      expect(checked.body).toMatchObject({ verified: true });
      await events.ends();
      expect(events.statuses().map((x) => [x.status, x.method])).toEqual([
        ['sent', 'sms'],
        ['sent', 'msgr1_otp'],
        ['verified', 'msgr1_otp'],
      ]);
    });
});

/** Resolves once `done()` holds, checking every few ms of real time (a socket's close has no clock); fails after 3 s. */
async function waitUntil(done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 3000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
