import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { OnVerificationEvent } from '../../src/module/on-verification-event.decorator.js';
import type { Observable } from 'rxjs';
import { StatusStreamHub } from '../../src/http/status-stream.hub.js';
import { JourneyState } from '../../src/verification/journey-state.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationStoreUnavailableError } from '../../src/store/store-unavailable.error.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { openSse, type SseStream } from '../support/sse-client.js';
import { call, ONE_PLATFORM, PLATFORMS, type TestApp } from '../support/verification-app.js';
import {
  apiCheck,
  drive,
  reconcilerOf,
  sendCode,
  startHost,
  startSession,
  type StartedSession,
} from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

/** A host listener of `verified` that holds until the test lets it finish (its database write, say). */
@Injectable()
class HeldListener {
  entered = false;
  finished = false;
  release!: () => void;
  private readonly held = new Promise<void>((resolve) => (this.release = resolve));

  @OnVerificationEvent('verified')
  async onVerified(): Promise<void> {
    this.entered = true;
    await this.held;
    this.finished = true;
  }
}

/**
 * The status stream as a browser sees it, over real HTTP on both platforms: the current answer at
 * once, the end at a terminal status, and the limits (owner binding, cap per client, heartbeats,
 * duration, shutdown); each change observed anywhere in the module (webhook, check, reconciler) on one.
 */
describe.each(PLATFORMS)('status stream (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp | undefined;
  const open: SseStream[] = [];

  beforeAll(async () => {
    sb = suite.sb;
  });
  afterEach(async () => {
    for (const stream of open.splice(0)) stream.close();
    await host?.close();
    host = undefined;
  });

  const boot = async (
    module: Partial<VerificationModuleOptions> = {},
    receiveWebhooks = true,
  ): Promise<TestApp> => {
    host = await startHost(platform, sb, { module, receiveWebhooks });
    return host;
  };
  const hub = (): StatusStreamHub => host!.app.get(StatusStreamHub, { strict: false });
  const eventsUrl = (s: StartedSession): string =>
    `${host!.url}/verification/status/${s.verificationId}/events`;
  const stream = async (s: StartedSession, owner = s.owner): Promise<SseStream> => {
    const opened = await openSse(eventsUrl(s), { 'x-user': owner });
    expect(opened.status).toBe(200);
    open.push(opened.stream!);
    return opened.stream!;
  };
  /**
   * Holds the next call of JourneyState's `read` or `view` once it has its result, until released;
   * `calls()` counts the calls made since.
   */
  const holdNext = (method: 'read' | 'view') => {
    const journeys = host!.app.get(JourneyState, { strict: false });
    const real = journeys[method].bind(journeys) as (...args: unknown[]) => Promise<unknown>;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    (journeys as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      const result = await real(...args);
      if (++calls === 1) await held;
      return result;
    };
    return { release, calls: () => calls };
  };
  /**
   * An operator_id session streamed; its operator falls back to an SMS code (a webhook), and the hub's
   * read of that change is held after it read the store, until `release()`.
   */
  const heldAtFallback = async () => {
    await boot();
    const s = await startSession(host!, sb, 'operator_id');
    const events = await stream(s);
    await events.statusCount(1);
    const { release, calls: reads } = holdNext('read');
    await sb.operator(s.requestId, 'fallback');
    await sb.webhooksIdle();
    await waitFor(() => reads() === 1);
    return { s, events, release };
  };
  const statusBody = async (s: StartedSession) =>
    (
      await call(host!.url, 'GET', `/verification/status/${s.verificationId}`, undefined, {
        'x-user': s.owner,
      })
    ).body;

  it('answers text/event-stream and sends the status answer at once, after a retry line', async () => {
    await boot();
    const s = await startSession(host!, sb, 'sms');
    const opened = await openSse(eventsUrl(s), { 'x-user': s.owner });
    open.push(opened.stream!);
    expect(opened.status).toBe(200);
    expect(opened.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(opened.headers.get('cache-control')).toBe('no-store');
    expect(opened.headers.get('x-accel-buffering')).toBe('no');
    const messages = await opened.stream!.until((m) => m.some((x) => x.event === 'status'));
    expect(messages[0]).toEqual({ retry: 2500 });
    expect(messages[1]).toMatchObject({ event: 'status', id: '1' });
    expect(JSON.parse(messages[1]!.data!)).toEqual(await statusBody(s));
    expect(opened.stream!.statuses()[0]).toMatchObject({
      status: 'sent',
      phone_number: expect.stringMatching(/\*/),
    });
  });

  // What the stream follows (a webhook, a check, the reconciler, its own polls) is the module's work
  // behind the route, the same on both platforms: one platform runs it.
  if (ONE_PLATFORM.includes(platform))
    describe('what it follows', () => {
      it('pushes a change that arrives by webhook, then ends at the terminal status', async () => {
        await boot();
        const s = await startSession(host!, sb, 'reverse_flash_call');
        const events = await stream(s);
        await events.statusCount(1);
        const gets = sb.requestCount('GET /v1/verify/:id');
        await drive(sb, s, 'verified');
        await events.ends();
        expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
        expect(events.statuses()[1]).toEqual(await statusBody(s));
        // The webhook's own confirmation aside, the stream asked the API nothing.
        expect(sb.requestCount('GET /v1/verify/:id') - gets).toBeLessThanOrEqual(1);
        expect(hub().size).toBe(0);
      });

      it("pushes a webhook's outcome only once the host's listeners finished with it", async () => {
        host = await startHost(platform, sb, { providers: [HeldListener] });
        const listener = host.app.get(HeldListener);
        const s = await startSession(host, sb, 'reverse_flash_call');
        const events = await stream(s);
        await events.statusCount(1);
        await sb.call(s.requestId, s.phone);
        while (!listener.entered) await new Promise((resolve) => setTimeout(resolve, 5));
        // The host is still handling the outcome: the route already answers verified, the page is not told.
        expect((await statusBody(s)).status).toBe('verified');
        const seenWhileHeld = events.statuses().map((x) => x.status);
        listener.release();
        await events.ends();
        expect(seenWhileHeld).toEqual(['sent']);
        expect(listener.finished).toBe(true);
        expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
      });

      it('with webhooks on, follows the session for what no webhook announces (the bot sends its code)', async () => {
        await boot();
        const s = await startSession(host!, sb, 'msgr2_bot');
        const events = await stream(s);
        expect((await events.statusCount(1))[0]).toMatchObject({ status: 'sent', awaiting_code: false });
        // The user shares the number in the bot: the bot sends a code, which no webhook reports. The page
        // on the stream does not poll, so the module looks for it at the method's poll pace.
        await sb.share(s.requestId, s.phone);
        await sb.advance(3000);
        const seen = await events.statusCount(2, 6000);
        expect(seen[1]).toMatchObject({ awaiting_code: true });
        expect(seen[1]).toEqual(await statusBody(s));
      });

      it('with webhooks on, a switch to a method whose change no webhook announces is followed from the switch on', async () => {
        await boot();
        // A reverse call's outcome comes by webhook: nothing of it is looked for.
        const s = await startSession(host!, sb, 'reverse_flash_call');
        const events = await stream(s);
        await events.statusCount(1);
        await sb.advance(61_000);
        const moved = await call(
          host!.url,
          'POST',
          '/verification/switch',
          { verification_id: s.verificationId, method: 'msgr2_bot' },
          { 'x-user': s.owner },
        );
        expect(moved.status).toBe(201);
        const [, switched] = await events.statusCount(2);
        expect(switched).toMatchObject({ method: 'msgr2_bot', awaiting_code: false });
        // The bot sends its code once the user shares the number: no webhook says so.
        const bot = sb.sessionsFor(s.phone).find((x) => x.method === 'msgr2_bot')!;
        await sb.share(bot.request_id, s.phone);
        await sb.advance(3000);
        const seen = await events.statusCount(3, 6000);
        expect(seen[2]).toMatchObject({ method: 'msgr2_bot', awaiting_code: true });
        expect(seen[2]).toEqual(await statusBody(s));
      });

      /** The code the sandbox sent, checked on the check route by the session's owner. */
      async function checkRightCode(s: Awaited<ReturnType<typeof startSession>>): Promise<void> {
        await sendCode(sb, s);
        const code = sb.getSession(s.requestId)!.code as string;
        const check = await call(
          host!.url,
          'POST',
          '/verification/check',
          { verification_id: s.verificationId, code },
          { 'x-user': s.owner },
        );
        expect(check.body).toMatchObject({ verified: true });
      }

      it('pushes the outcome of a check made on the check route', async () => {
        await boot({ webhooks: undefined }, false);
        const s = await startSession(host!, sb, 'sms');
        const events = await stream(s);
        await events.statusCount(1);
        await checkRightCode(s);
        await events.ends();
        expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
      });

      it('asks the API only for its first answer while the reconciler follows the session, even with the status cache off', async () => {
        await boot({ webhooks: undefined, statusCache: { enabled: false } }, false);
        const s = await startSession(host!, sb, 'sms');
        const gets = sb.requestCount('GET /v1/verify/:id');
        const events = await stream(s);
        await events.statusCount(1);
        await checkRightCode(s);
        await events.ends();
        expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
        // The first answer is the status route's read (the cache off: its own); the follower asked nothing.
        expect(sb.requestCount('GET /v1/verify/:id') - gets).toBe(1);
      });

      it('without webhooks, pushes what the reconciler polls', async () => {
        await boot({ webhooks: undefined }, false);
        const s = await startSession(host!, sb, 'reverse_flash_call');
        const events = await stream(s);
        await events.statusCount(1);
        await sb.call(s.requestId, s.phone);
        await sb.advance(1500);
        await reconcilerOf(host!).runOnce();
        await events.ends();
        expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
      });

      it('without webhooks or reconciler, follows the session itself at the poll pace', async () => {
        await boot({ webhooks: undefined, reconcile: { enabled: false } }, false);
        const s = await startSession(host!, sb, 'reverse_flash_call');
        const events = await stream(s);
        await events.statusCount(1);
        await sb.call(s.requestId, s.phone);
        // The stream's own look runs on real time; the poll claim of the first answer ends on the sandbox's clock.
        await sb.advance(1500);
        await events.ends(4000);
        expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
      });

      it('while the API is down keeps the last known state, as the status route does, and pushes the outcome once it is back', async () => {
        await boot({ webhooks: undefined, reconcile: { enabled: false } }, false);
        const s = await startSession(host!, sb, 'reverse_flash_call');
        const events = await stream(s);
        await events.statusCount(1);
        sb.addFault({ route: 'GET /v1/verify/:id', kind: 'status', status: 503, count: 0 });
        await sb.call(s.requestId, s.phone);
        await sb.advance(1500);
        // The route's read fails: it answers the last known state.
        expect(await statusBody(s)).toMatchObject({ status: 'sent' });
        // One poll interval on: the stream's own look fails too (a GET more), and the stream stays as it was.
        const failed = sb.requestCount('GET /v1/verify/:id');
        await sb.advance(1500);
        const until = Date.now() + 4000;
        while (sb.requestCount('GET /v1/verify/:id') === failed && Date.now() < until)
          await new Promise((r) => setTimeout(r, 20));
        expect(sb.requestCount('GET /v1/verify/:id')).toBeGreaterThan(failed);
        sb.clearFaults();
        await sb.advance(1500);
        await events.ends(6000);
        expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
        expect(events.statuses()[1]).toEqual(await statusBody(s));
      });

      it('a look the store fails is tried again: the stream still pushes the outcome', async () => {
        let down = false;
        let refused = 0;
        const store = new (class extends MemoryStore {
          override get(key: string): Promise<string | null> {
            if (!down) return super.get(key);
            refused++;
            return Promise.reject(new VerificationStoreUnavailableError('get', 'down'));
          }
        })({ clock: () => sb.now() });
        try {
          await boot({ store, webhooks: undefined, reconcile: { enabled: false } }, false);
          const s = await startSession(host!, sb, 'reverse_flash_call');
          const events = await stream(s);
          await events.statusCount(1);
          down = true;
          const until = Date.now() + 4000;
          while (refused === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
          expect(refused).toBeGreaterThan(0);
          down = false;
          await sb.call(s.requestId, s.phone);
          await sb.advance(1500);
          await events.ends(8000);
          expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
        } finally {
          await host?.close();
          host = undefined;
          await store.close();
        }
      });

      it('pushes expiry (the clock passes expires_at) and ends', async () => {
        await boot({ webhooks: undefined }, false);
        const s = await startSession(host!, sb, 'sms');
        const events = await stream(s);
        await events.statusCount(1);
        await drive(sb, s, 'expired');
        await sb.advance(1000);
        await reconcilerOf(host!).runOnce();
        await events.ends();
        expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'expired']);
      });
    });

  it('sends a terminal status once and ends at once when the session is already over', async () => {
    await boot();
    const s = await startSession(host!, sb, 'reverse_flash_call');
    await drive(sb, s, 'verified');
    await sb.webhooksIdle();
    const events = await stream(s);
    await events.ends();
    expect(events.statuses().map((x) => x.status)).toEqual(['verified']);
  });

  it('refuses a forged handle and another owner’s handle with the status route’s 404', async () => {
    await boot();
    const s = await startSession(host!, sb, 'sms');
    const forged = `${s.verificationId.slice(0, -2)}${s.verificationId.endsWith('A') ? 'BB' : 'AA'}`;
    for (const [id, owner] of [
      [forged, s.owner],
      [s.verificationId, 'someone-else'],
      ['x'.repeat(600), s.owner],
    ] as const) {
      const res = await openSse(`${host!.url}/verification/status/${encodeURIComponent(id)}/events`, {
        'x-user': owner,
      });
      const status = await call(
        host!.url,
        'GET',
        `/verification/status/${encodeURIComponent(id)}`,
        undefined,
        {
          'x-user': owner,
        },
      );
      // As the status route answers it (Fastify refuses an over-long parameter itself with 414).
      expect(res.status).toBe(status.status);
      if (id.length < 100) {
        expect(res.body).toEqual(status.body);
        expect(res.status).toBe(404);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      }
    }
    expect(hub().size).toBe(0);
  });

  it('caps open streams per client with 429 and Retry-After; a closed stream frees its slot', async () => {
    await boot({ statusStream: { maxPerClient: 2 } });
    const s = await startSession(host!, sb, 'sms');
    const first = await stream(s);
    await stream(s);
    await first.statusCount(1);
    const refused = await openSse(eventsUrl(s), { 'x-user': s.owner });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.body).toMatchObject({
      status: 429,
      error_code: 'rate_limit_exceeded',
      reason: 'stream_limit',
    });
    first.close();
    await waitFor(() => hub().size === 1);
    const again = await stream(s);
    await again.statusCount(1);
  });

  it('caps open streams per verification too: one handle streamed from many clients gets 429 past maxPerVerification', async () => {
    // Each request is its own client (its `x-client`): only the per-verification cap can refuse.
    await boot({
      statusStream: { maxPerClient: 5, maxPerVerification: 3 },
      limits: {
        enabled: false,
        key: (req) => (req as { headers: Record<string, string> }).headers['x-client'],
      },
    });
    const s = await startSession(host!, sb, 'sms');
    const clients = ['a', 'b', 'c', 'd', 'e'];
    const opened = [];
    for (const client of clients.slice(0, 3)) {
      const res = await openSse(eventsUrl(s), { 'x-user': s.owner, 'x-client': client });
      expect(res.status).toBe(200);
      open.push(res.stream!);
      opened.push(res.stream!);
    }
    for (const client of clients.slice(3)) {
      const refused = await openSse(eventsUrl(s), { 'x-user': s.owner, 'x-client': client });
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({
        status: 429,
        error_code: 'rate_limit_exceeded',
        reason: 'stream_limit',
      });
    }
    // Another verification of the same owner is not held back by it.
    const other = await startSession(host!, sb, 'sms');
    await stream(other);
    // A closed stream frees its slot.
    opened[0]!.close();
    await waitFor(() => hub().size === 3);
    const again = await openSse(eventsUrl(s), { 'x-user': s.owner, 'x-client': 'f' });
    expect(again.status).toBe(200);
    open.push(again.stream!);
  });

  it('a change announced while the hub is reading the journey is not dropped: the stream reads once more and ends at the outcome', async () => {
    // Change 1: the operator falls back to an SMS code (a webhook); the hub reads it and is held there.
    const { s, events, release } = await heldAtFallback();
    // Change 2, announced during that read: the user enters the code elsewhere.
    await apiCheck(sb, s.requestId, sb.getSession(s.requestId)!.code!);
    await sb.advance(1000);
    await sb.webhooksIdle();
    release();
    await events.ends();
    expect(events.statuses().map((x) => [x.status, x.awaiting_code])).toEqual([
      ['sent', false],
      ['sent', true],
      ['verified', false],
    ]);
  });

  it('a change announced before the first look of a new stream listed the journey under its steps is pushed: the journey is listed under its own id at once', async () => {
    await boot();
    const s = await startSession(host!, sb, 'reverse_flash_call');
    // The stream's first look at the journey (its follower's) is held after it read the store, until released.
    const { release, calls: reads } = holdNext('read');
    const events = await stream(s);
    await events.statusCount(1);
    await waitFor(() => reads() === 1);
    // Meanwhile the user calls: the webhook announces the outcome under the session's (the journey's) id.
    await sb.call(s.requestId, s.phone);
    await sb.webhooksIdle();
    try {
      await events.ends(3000);
    } finally {
      release();
    }
    expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
  });

  /** Switches `s` (past the first step's switch delay) to `method`; the new step's session. */
  const switchTo = async (s: StartedSession, method: 'msgr1_otp' | 'sms') => {
    await sb.advance(61_000);
    const moved = await call(
      host!.url,
      'POST',
      '/verification/switch',
      { verification_id: s.verificationId, method },
      { 'x-user': s.owner },
    );
    expect(moved.status).toBe(201);
    return sb.sessionsFor(s.phone).find((x) => x.method === method)!.request_id;
  };
  /** The user enters the code of step `requestId` on the check route. */
  const checkStep = async (s: StartedSession, requestId: string) => {
    await sb.deliver(requestId);
    const code = String(sb.getSession(requestId)!.code);
    const checked = await call(
      host!.url,
      'POST',
      '/verification/check',
      { verification_id: s.verificationId, code },
      { 'x-user': s.owner },
    );
    expect(checked.body).toMatchObject({ verified: true });
  };

  it.each([
    ['the first look of a stream opened after the switch', false],
    ['the read of the switch, the stream open before it', true],
  ] as const)(
    'a change to a switched journey’s new step announced during %s (before the step was listed) is pushed',
    async (_, openFirst) => {
      await boot();
      const s = await startSession(host!, sb, 'sms');
      const early = openFirst ? await stream(s) : undefined;
      await early?.statusCount(1);
      // The next read of the journey (the new stream's first look, or the hub's read after the switch) is held.
      const held = openFirst ? holdNext('read') : undefined;
      const second = await switchTo(s, 'msgr1_otp');
      // The page reads the status once (a fresh read): the stream's open then announces nothing.
      await statusBody(s);
      const { release, calls: reads } = held ?? holdNext('read');
      const events = early ?? (await stream(s));
      await events.statusCount(1);
      await waitFor(() => reads() === 1);
      // Meanwhile the user enters the new step's code: announced under that step's id, not listed yet.
      await checkStep(s, second);
      release();
      await events.ends(3000);
      expect(events.statuses().map((x) => [x.status, x.method])).toEqual([
        ...(openFirst ? [['sent', 'sms']] : []),
        ['sent', 'msgr1_otp'],
        ['verified', 'msgr1_otp'],
      ]);
    },
  );

  it('an answer read before a new stream opened is not pushed to it after its newer first answer', async () => {
    // The operator falls back to an SMS code: the hub reads that answer and is held there.
    const { s, events: a, release } = await heldAtFallback();
    // Then the user switches to SMS, and opens a second tab: its first answer is the SMS.
    const sms = await switchTo(s, 'sms');
    const b = await stream(s);
    expect((await b.statusCount(1))[0]).toMatchObject({ method: 'sms' });
    release();
    await a.until(() => a.statuses().some((x) => x.method === 'sms'));
    await checkStep(s, sms);
    await Promise.all([a.ends(3000), b.ends(3000)]);
    expect(b.statuses().map((x) => [x.status, x.method])).toEqual([
      ['sent', 'sms'],
      ['verified', 'sms'],
    ]);
    expect(a.statuses().map((x) => [x.status, x.method, x.awaiting_code])).toEqual([
      ['sent', 'operator_id', false],
      ['sent', 'operator_id', true],
      ['sent', 'sms', true],
      ['verified', 'sms', false],
    ]);
  });

  it.each([
    ['its first stream', false],
    ['a second tab, the first streaming already', true],
  ] as const)(
    'a change announced while a new stream reads its first answer is pushed (%s): the stream ends at the outcome',
    async (_, secondTab) => {
      await boot();
      const s = await startSession(host!, sb, 'reverse_flash_call');
      const first = secondTab ? await stream(s) : undefined;
      await first?.statusCount(1);
      // The new stream's first answer is held once made, until released.
      const { release, calls: views } = holdNext('view');
      const opening = stream(s);
      await waitFor(() => views() === 1);
      // Meanwhile the user calls: the webhook announces the outcome before the stream is listed.
      await sb.call(s.requestId, s.phone);
      await sb.webhooksIdle();
      await first?.ends(3000);
      release();
      const events = await opening;
      await events.ends(3000);
      expect(events.statuses().map((x) => x.status)).toEqual(['sent', 'verified']);
    },
  );

  it('sends a heartbeat comment every heartbeatMs', async () => {
    await boot({ statusStream: { heartbeatMs: 30 } });
    const s = await startSession(host!, sb, 'sms');
    const events = await stream(s);
    await events.until((m) => m.filter((x) => x.comment === 'ping').length >= 2);
  });

  it('a stream opened after the last one closed gets one heartbeat, not two: its pings come heartbeatMs apart', async () => {
    await boot({ statusStream: { heartbeatMs: 100 } });
    const s = await startSession(host!, sb, 'sms');
    const first = await stream(s);
    await first.statusCount(1);
    first.close();
    await waitFor(() => hub().size === 0);
    // Taken before the open: the stream's heartbeat starts after it, so its fourth ping is 400 ms or more later.
    const opening = Date.now();
    const second = await stream(s);
    await second.until((m) => m.filter((x) => x.comment === 'ping').length >= 4);
    // The closed stream's timer left running beside the new one would ping about twice as often.
    expect(Date.now() - opening).toBeGreaterThanOrEqual(390);
  });

  it('ends a stream after maxDurationMs', async () => {
    await boot({ statusStream: { heartbeatMs: 20, maxDurationMs: 60 } });
    const s = await startSession(host!, sb, 'sms');
    const events = await stream(s);
    await events.ends();
    expect(events.statuses().map((x) => x.status)).toEqual(['sent']);
    expect(hub().size).toBe(0);
  });

  it('ends a stream at the first heartbeat at or past maxDurationMs, not one heartbeat later', async () => {
    // Its longest life is one heartbeat: that heartbeat (200 ms or more after the open) ends it, unpinged.
    await boot({ statusStream: { heartbeatMs: 200, maxDurationMs: 200 } });
    const s = await startSession(host!, sb, 'sms');
    const events = await stream(s);
    await events.ends();
    expect(events.statuses().map((x) => x.status)).toEqual(['sent']);
    expect(events.messages.filter((x) => x.comment === 'ping')).toEqual([]);
  });

  it('frees everything when the client leaves', async () => {
    await boot({ statusStream: { heartbeatMs: 20 } });
    const s = await startSession(host!, sb, 'sms');
    const events = await stream(s);
    await events.statusCount(1);
    expect(hub().size).toBe(1);
    events.close();
    await waitFor(() => hub().size === 0);
    // Nothing of the stream holds the server: it closes at once.
    const closing = Date.now();
    await host!.close();
    host = undefined;
    expect(Date.now() - closing).toBeLessThan(1000);
  });

  it('ends every stream on shutdown, and the app closes', async () => {
    await boot();
    const s = await startSession(host!, sb, 'sms');
    const events = await stream(s);
    await events.statusCount(1);
    const closing = host!.close();
    host = undefined;
    await events.ends();
    await closing;
  });

  it('answers 503 service_unavailable, holding nothing, when the store cannot subscribe', async () => {
    const store = new (class extends MemoryStore {
      override subscribe(): Promise<() => void> {
        return Promise.reject(new VerificationStoreUnavailableError('subscribe', 'down'));
      }
    })({ clock: () => sb.now() });
    try {
      await boot({ store });
      const s = await startSession(host!, sb, 'sms');
      const res = await openSse(eventsUrl(s), { 'x-user': s.owner });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ status: 503, error_code: 'service_unavailable' });
      expect(hub().size).toBe(0);
    } finally {
      await host?.close();
      host = undefined;
      await store.close();
    }
  });

  it('keeps the headers the host set on the response before the stream (CORS from an interceptor)', async () => {
    host = await startHost(platform, sb, { providers: [{ provide: APP_INTERCEPTOR, useClass: CorsHeader }] });
    const s = await startSession(host, sb, 'sms');
    const opened = await openSse(eventsUrl(s), { 'x-user': s.owner });
    open.push(opened.stream!);
    expect(opened.status).toBe(200);
    expect(opened.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    expect(opened.headers.get('content-type')).toMatch(/^text\/event-stream/);
  });

  it('is a 404 when statusStream.enabled is false', async () => {
    await boot({ statusStream: { enabled: false } });
    const s = await startSession(host!, sb, 'sms');
    const res = await openSse(eventsUrl(s), { 'x-user': s.owner });
    expect(res.status).toBe(404);
  });
});

/** A host's interceptor that sets a header on every response, as CORS would (Fastify: on the reply). */
@Injectable()
class CorsHeader implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const response = context.switchToHttp().getResponse<{
      header?: (name: string, value: string) => unknown;
      setHeader?: (name: string, value: string) => unknown;
    }>();
    if (typeof response.header === 'function' && !response.setHeader)
      response.header('access-control-allow-origin', 'https://shop.example');
    else response.setHeader!('access-control-allow-origin', 'https://shop.example');
    return next.handle();
  }
}

async function waitFor(condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
