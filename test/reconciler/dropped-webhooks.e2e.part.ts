import { beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { FlakyListener } from '../events/flaky-listener.js';
import {
  apiStatus,
  drive,
  eventsOf,
  lastEventOf,
  OUTCOMES,
  reconcilerOf,
  settle,
  startHost,
  startSession,
  type Outcome,
  type StartedSession,
} from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const GET_SESSION = 'GET /v1/verify/:id';

describe.each(ONE_PLATFORM)('reconciler with webhooks configured: the safety net (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot(() => startHost(platform, sb, { providers: [FlakyListener] }));
  });

  it('every webhook dropped: each outcome of each method is found lazily (15 s), once, with the API truth', async () => {
    sb.addFault({ webhooks: { drop_rate: 1 } });
    try {
      const sessions: (StartedSession & { outcome: Outcome })[] = [];
      for (const { method, outcome } of OUTCOMES)
        sessions.push({ ...(await startSession(host, sb, method, `o-${method}`)), outcome });
      const reconciler = reconcilerOf(host);
      expect(await reconciler.pending()).toBeGreaterThanOrEqual(sessions.length);
      for (const s of sessions.filter((x) => x.outcome !== 'expired'))
        await drive(sb, s, s.outcome, { viaFallback: s.method === 'operator_id' });
      await settle(sb);
      expect(sb.webhookLog().every((d) => d.status === 'dropped')).toBe(true);
      expect(sessions.flatMap((s) => eventsOf(host, s.requestId))).toEqual([]);

      // Lazy: nothing is polled before the interval is over.
      sb.resetRequestCounts();
      await sb.advance(10_000);
      expect(await reconciler.runOnce()).toBe(0);
      expect(sb.requestCount(GET_SESSION)).toBe(0);
      await sb.advance(5_000);
      await reconciler.runOnce();
      expect(sb.requestCount(GET_SESSION)).toBe(sessions.length);
      for (const s of sessions.filter((x) => x.outcome !== 'expired')) {
        expect({ method: s.method, events: eventsOf(host, s.requestId).at(-1) }).toEqual({
          method: s.method,
          events: `verification.${s.outcome}`,
        });
        expect(lastEventOf(host, s.requestId)).toMatchObject({ source: 'poll', owner: `o-${s.method}` });
      }

      // The rest expire; the clock jumps past every TTL at once and one pass finds each, one GET each.
      const expiring = sessions.filter((s) => s.outcome === 'expired');
      sb.resetRequestCounts();
      await sb.advance(300_000);
      await reconciler.runOnce();
      expect(sb.requestCount(GET_SESSION)).toBe(expiring.length);
      for (const s of sessions) {
        const events = eventsOf(host, s.requestId).filter((e) => e !== 'verification.code_required');
        expect({ method: s.method, events }).toEqual({
          method: s.method,
          events: [`verification.${await apiStatus(sb, s.requestId)}`],
        });
      }
      // Settled sessions leave the queue: later passes ask the API nothing.
      sb.resetRequestCounts();
      await sb.advance(60_000);
      await reconciler.runOnce();
      expect(sb.requestCount(GET_SESSION)).toBe(0);
    } finally {
      sb.clearFaults();
    }
  });

  it('polls once just after expiry even when the lazy interval is longer than what is left', async () => {
    const slowHost = await startHost(platform, sb, {
      module: { reconcile: { lazyIntervalMs: 250_000, tickMs: 3_600_000 } },
    });
    try {
      sb.addFault({ webhooks: { drop_rate: 1 } });
      const s = await startSession(slowHost, sb, 'sms');
      const reconciler = reconcilerOf(slowHost);
      sb.resetRequestCounts();
      await sb.advance(250_000);
      await reconciler.runOnce();
      expect(sb.requestCount(GET_SESSION)).toBe(1); // still pending
      await sb.advance(50_000); // at expires_at: not yet due (the API needs a moment)
      await reconciler.runOnce();
      expect(sb.requestCount(GET_SESSION)).toBe(1);
      await sb.advance(1000); // expires_at + 1 s
      await reconciler.runOnce();
      expect(sb.requestCount(GET_SESSION)).toBe(2);
      expect(eventsOf(slowHost, s.requestId)).toEqual(['verification.expired']);
    } finally {
      sb.clearFaults();
      await slowHost.close();
      await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: `${host.url}/verification/webhooks` });
    }
  });

  it('a listener failing on a terminal session: the session stays queued and the event comes again, then never again', async () => {
    const listener = host.app.get(FlakyListener);
    listener.failFirst = true;
    sb.addFault({ webhooks: { drop_rate: 1 } });
    try {
      const s = await startSession(host, sb, 'reverse_flash_call');
      await drive(sb, s, 'verified');
      const reconciler = reconcilerOf(host);
      await sb.advance(15_000);
      await reconciler.runOnce();
      expect(listener.of(s.requestId)).toEqual(['verification.verified!']);
      // Terminal, but its event is still owed: it stays in the queue, retried one interval later.
      sb.resetRequestCounts();
      await sb.advance(15_000);
      await reconciler.runOnce();
      expect(listener.of(s.requestId)).toEqual(['verification.verified!', 'verification.verified']);
      expect(lastEventOf(host, s.requestId)?.source).toBe('poll');
      expect(sb.requestCount(GET_SESSION)).toBe(0); // a terminal truth is final: no need to ask again
      await sb.advance(15_000);
      await reconciler.runOnce();
      await sb.advance(15_000);
      await reconciler.runOnce();
      expect(listener.of(s.requestId)).toEqual(['verification.verified!', 'verification.verified']);
    } finally {
      listener.failFirst = false;
      sb.clearFaults();
    }
  });

  it('stops polling as soon as a terminal status is known from another source (a status poll)', async () => {
    sb.addFault({ webhooks: { drop_rate: 1 } });
    try {
      const s = await startSession(host, sb, 'msgr1_otp');
      await drive(sb, s, 'failed');
      const status = await fetch(`${host.url}/verification/status/${s.verificationId}`, {
        headers: { 'x-user': s.owner },
      });
      expect(((await status.json()) as { status: string }).status).toBe('failed');
      expect(eventsOf(host, s.requestId)).toEqual(['verification.failed']);
      sb.resetRequestCounts();
      await sb.advance(15_000);
      await reconcilerOf(host).runOnce();
      expect(sb.requestCount(GET_SESSION)).toBe(0);
      expect(eventsOf(host, s.requestId)).toEqual(['verification.failed']);
    } finally {
      sb.clearFaults();
    }
  });
});
