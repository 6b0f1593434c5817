import { beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { CapturingLogger } from '../support/log-capture.js';
import { ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import {
  drive,
  eventsOf,
  lastEventOf,
  reconcilerOf,
  startHost,
  startSession,
  type StartedSession,
} from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const GET_SESSION = 'GET /v1/verify/:id';

describe.each(ONE_PLATFORM)('reconciler without webhooks: the spec pace (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;
  const logger = new CapturingLogger();
  const warnings = (text: string) => logger.lines.filter((l) => l.startsWith('warn') && l.includes(text));

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot(() =>
      startHost(platform, sb, {
        module: { webhooks: undefined, reconcile: { tickMs: 3_600_000, graceMs: 60_000 } },
        receiveWebhooks: false,
        logger,
      }),
    );
  });

  const status = (s: StartedSession) =>
    fetch(`${host.url}/verification/status/${s.verificationId}`, { headers: { 'x-user': s.owner } }).then(
      async (r) => ((await r.json()) as { status: string }).status,
    );

  it('a session the API answers 404 for is no longer polled: one warning, and it leaves the queue', async () => {
    // Nest's logger is one per process: every host of this file writes to `logger`.
    const from = logger.lines.length;
    const own = await suite.boot(() =>
      startHost(platform, sb, {
        module: { webhooks: undefined, reconcile: { tickMs: 3_600_000 } },
        receiveWebhooks: false,
        logger,
      }),
    );
    await startSession(own, sb, 'sms');
    const reconciler = reconcilerOf(own);
    sb.resetRequestCounts();
    sb.addFault({ route: GET_SESSION, kind: 'status', status: 404 });
    await sb.advance(2500);
    expect(await reconciler.runOnce()).toBe(1);
    expect(sb.requestCount(GET_SESSION)).toBe(1);
    expect(await reconciler.pending()).toBe(0);
    for (let i = 0; i < 3; i++) {
      await sb.advance(2500);
      await reconciler.runOnce();
    }
    expect(sb.requestCount(GET_SESSION)).toBe(1);
    expect(
      logger.lines.slice(from).filter((l) => l.includes('the API no longer knows a session')),
    ).toHaveLength(1);
  });

  it('a poll the API fails is tried again one poll interval later, not when its lease ends, with one warning', async () => {
    const from = logger.lines.length;
    const own = await suite.boot(() =>
      startHost(platform, sb, {
        module: { webhooks: undefined, reconcile: { tickMs: 3_600_000 } },
        receiveWebhooks: false,
        logger,
      }),
    );
    await startSession(own, sb, 'reverse_flash_call');
    const reconciler = reconcilerOf(own);
    sb.resetRequestCounts();
    sb.addFault({ route: GET_SESSION, kind: 'status', status: 503, count: 1 });
    try {
      await sb.advance(1500);
      await reconciler.runOnce();
      expect(sb.requestCount(GET_SESSION)).toBe(1);
      await sb.advance(1499);
      await reconciler.runOnce();
      expect(sb.requestCount(GET_SESSION)).toBe(1);
      await sb.advance(1); // 1.5 s after the failed poll (its lease: the slowest method's 2.5 s)
      await reconciler.runOnce();
      expect(sb.requestCount(GET_SESSION)).toBe(2);
      expect(logger.lines.slice(from).filter((l) => l.startsWith('warn reconcile'))).toEqual([
        expect.stringMatching(/^warn reconcile of a session failed, retried later: .*503/),
      ]);
    } finally {
      sb.clearFaults();
    }
  });

  it('polls reverse flash call every 1.5 s and other methods every 2.5 s, and stops at the outcome', async () => {
    const call = await startSession(host, sb, 'reverse_flash_call');
    const sms = await startSession(host, sb, 'sms');
    const reconciler = reconcilerOf(host);
    const gets = () => sb.requestCount(GET_SESSION);
    sb.resetRequestCounts();
    await sb.advance(1499);
    await reconciler.runOnce();
    expect(gets()).toBe(0);
    await sb.advance(1); // 1.5 s
    await reconciler.runOnce();
    expect(gets()).toBe(1);
    await sb.advance(1000); // 2.5 s
    await reconciler.runOnce();
    expect(gets()).toBe(2);
    await drive(sb, call, 'verified');
    await sb.advance(500); // 3.0 s: the call's second poll finds it verified
    await reconciler.runOnce();
    expect(gets()).toBe(3);
    expect(eventsOf(host, call.requestId)).toEqual(['verification.verified']);
    expect(lastEventOf(host, call.requestId)?.source).toBe('poll');
    await drive(sb, sms, 'verified');
    await sb.advance(2000); // 5.0 s: the sms's second poll
    await reconciler.runOnce();
    expect(gets()).toBe(4);
    expect(eventsOf(host, sms.requestId)).toEqual(['verification.verified']);
    // Both settled: nothing is asked any more.
    for (let i = 0; i < 4; i++) {
      await sb.advance(2500);
      await reconciler.runOnce();
    }
    expect(gets()).toBe(4);
  });

  it('status polls and the reconciler together stay at one GET per session per interval', async () => {
    const s = await startSession(host, sb, 'flash_call');
    const reconciler = reconcilerOf(host);
    sb.resetRequestCounts();
    // A browser polls far too often; the reconciler's turn comes in the middle.
    for (let t = 0; t < 10_000; t += 500) {
      await sb.advance(500);
      await status(s);
      await reconciler.runOnce();
    }
    // 10 s at 2.5 s per interval: at most 4 GETs, however the two interleave.
    expect(sb.requestCount(GET_SESSION)).toBeLessThanOrEqual(4);
    expect(sb.requestCount(GET_SESSION)).toBeGreaterThanOrEqual(3);
    await drive(sb, s, 'verified');
    await sb.advance(2500);
    expect(await status(s)).toBe('verified');
    expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
  });

  it('gives up a session the API never settles, grace after expiry, and asks nothing more', async () => {
    const s = await startSession(host, sb, 'msgr2_bot');
    const reconciler = reconcilerOf(host);
    const expiresAt = Date.parse(sb.getSession(s.requestId)!.expires_at);
    sb.addFault({ route: GET_SESSION, kind: 'status', status: 503, count: 0 });
    try {
      await sb.advance(expiresAt - sb.now() + 30_000);
      sb.resetRequestCounts();
      await reconciler.runOnce();
      expect(sb.requestCount(GET_SESSION)).toBe(1); // within grace: still tried
      expect(await reconciler.pending()).toBe(1);
      sb.resetRequestCounts();
      const before = warnings('gave up').length;
      await sb.advance(31_000); // past expires_at + 60 s
      await reconciler.runOnce();
      expect(sb.requestCount(GET_SESSION)).toBe(1); // the last try
      expect(await reconciler.pending()).toBe(0);
      // The operator is told once, with the method and the API's failure, never the number.
      expect(warnings('gave up').slice(before)).toEqual([
        expect.stringMatching(/^warn gave up on a msgr2_bot session after expiry: .*503/),
      ]);
      expect(logger.lines.join('\n')).not.toContain(s.phone.slice(2));
    } finally {
      sb.clearFaults();
    }
    sb.resetRequestCounts();
    await sb.advance(10_000);
    await reconciler.runOnce();
    expect(sb.requestCount(GET_SESSION)).toBe(0);
    expect(eventsOf(host, s.requestId)).toEqual([]);
  });

  it('a session the API still shows pending is polled for the last time at expiry + grace exactly, then given up; a tick before, it is still followed', async () => {
    const s = await startSession(host, sb, 'msgr2_bot');
    const reconciler = reconcilerOf(host);
    const giveUpAt = Date.parse(sb.getSession(s.requestId)!.expires_at) + 60_000;
    // The API answers every read as still sent, past the session's expiry too.
    sb.addFault({ route: GET_SESSION, kind: 'field', field: 'status', value: 'sent', count: 0 });
    try {
      await sb.advance(giveUpAt - 1 - sb.now());
      await reconciler.runOnce();
      expect(await reconciler.pending()).toBe(1);
      // At the bound: its last look (the read a tick ago, shared within the poll interval), then given up.
      const before = warnings('gave up').length;
      await sb.advance(1);
      await reconciler.runOnce();
      expect(await reconciler.pending()).toBe(0);
      expect(warnings('gave up').slice(before)).toEqual([
        'warn gave up on a msgr2_bot session still sent 60000 ms after expiry PhoneVerification',
      ]);
      sb.resetRequestCounts();
      await reconciler.runOnce();
      await sb.advance(10_000);
      await reconciler.runOnce();
      expect(sb.requestCount(GET_SESSION)).toBe(0);
    } finally {
      sb.clearFaults();
    }
    expect(eventsOf(host, s.requestId)).toEqual([]);
  });

  it('one pass asks every due session, past its batches of 50: 51 due at once are each read once, and all their outcomes are found', async () => {
    const reconciler = reconcilerOf(host);
    expect(await reconciler.pending()).toBe(0);
    const sessions: StartedSession[] = [];
    for (let i = 0; i < 51; i++) sessions.push(await startSession(host, sb, 'sms'));
    for (const s of sessions) await drive(sb, s, 'verified');
    await sb.advance(2500);
    sb.resetRequestCounts();
    expect(await reconciler.runOnce()).toBe(51);
    expect(sb.requestCount(GET_SESSION)).toBe(51);
    expect(sessions.map((s) => eventsOf(host, s.requestId))).toEqual(
      sessions.map(() => ['verification.verified']),
    );
    expect(await reconciler.pending()).toBe(0);
  });
});
