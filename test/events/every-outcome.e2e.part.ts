import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import {
  apiStatus,
  drive,
  OUTCOMES,
  payloadFor,
  postWebhook,
  reconcilerOf,
  settle,
  signed,
  startHost,
  startSession,
  type Outcome,
  type StartedSession,
} from '../webhooks/harness.js';
import { WebhookRecorder } from '../webhooks/webhook-recorder.js';
import { FlakyListener } from './flaky-listener.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

interface Planned extends StartedSession {
  outcome: Outcome;
}

/** What a case does around the two phases (outcomes played, then the clock past every TTL). */
interface Case {
  name: string;
  /** Before a phase: faults on, early claims sent. `pending` are the sessions this phase settles. */
  before?(ctx: Ctx, pending: Planned[]): Promise<void>;
  /** After a phase's webhooks went out: faults off, the sender's retries due. */
  after?(ctx: Ctx, pending: Planned[]): Promise<void>;
  /** code_required may be moot when webhooks are reordered: verified can arrive first. */
  reordered?: boolean;
  /** The flaky listener throws on the first delivery of every event. */
  flaky?: boolean;
}

interface Ctx {
  sb: VerificationSandbox;
  host: TestApp;
  recorder?: WebhookRecorder;
}

const sandboxRetry = async (ctx: Ctx): Promise<void> => {
  // The sandbox retries a failed delivery after 1 s, then 4 s more (its clock).
  await ctx.sb.advance(1000);
  await settle(ctx.sb);
  await ctx.sb.advance(4000);
  await settle(ctx.sb);
};

const CASES: Case[] = [
  { name: 'webhooks delivered normally' },
  {
    name: 'every webhook duplicated x5, concurrently',
    before: async ({ sb }) => sb.addFault({ webhooks: { duplicate_rate: 1, duplicates: 5 } }),
    after: async ({ sb }) => sb.clearFaults(),
  },
  {
    name: 'webhooks reordered (held, then released newest first)',
    reordered: true,
    before: async ({ sb }) => sb.addFault({ webhooks: { reorder: true, reorder_window_ms: 1000 } }),
    after: async (ctx) => {
      await ctx.sb.advance(1000);
      await settle(ctx.sb);
      ctx.sb.clearFaults();
    },
  },
  {
    name: 'a webhook arriving before the API agrees (a signed claim of the outcome while the session is pending)',
    before: async ({ sb, host }, pending) => {
      for (const s of pending) {
        const claim = signed(
          sb.demoAccount.webhookSecret,
          payloadFor(`verification.${s.outcome}`, s.requestId),
          {
            timestampSeconds: Math.floor(sb.now() / 1000),
          },
        );
        const res = await postWebhook(`${host.url}/verification/webhooks`, claim);
        expect(res.body).toEqual({ received: true, result: 'deferred' });
      }
    },
  },
  {
    name: 'forged, stale and replayed deliveries next to the real ones',
    after: async ({ sb, host, recorder }, pending) => {
      const route = `${host.url}/verification/webhooks`;
      const ids = new Set(pending.map((s) => s.requestId));
      for (const delivery of recorder!.recorded.filter((d) =>
        ids.has(JSON.parse(d.body.toString()).data.request_id),
      )) {
        expect((await recorder!.replay(route, delivery)).status).toBe(200);
      }
      const forger = `whsec_${Buffer.from('an attacker guess').toString('base64')}`;
      for (const s of pending) {
        const ts = Math.floor(sb.now() / 1000);
        const forged = await postWebhook(
          route,
          signed(forger, payloadFor('verification.verified', s.requestId)),
        );
        expect(forged.status).toBe(401);
        const stale = await postWebhook(
          route,
          signed(sb.demoAccount.webhookSecret, payloadFor('verification.verified', s.requestId), {
            timestampSeconds: ts - 600,
          }),
        );
        expect(stale.status).toBe(401);
      }
    },
  },
  {
    name: 'a listener that throws once (the event arrives again, then not again)',
    flaky: true,
    after: sandboxRetry,
  },
  {
    name: 'the API down during the webhooks (5xx, then success on retry)',
    before: async ({ sb }) =>
      sb.addFault({ route: 'GET /v1/verify/:id', kind: 'status', status: 503, count: 0 }),
    after: async (ctx) => {
      ctx.sb.clearFaults();
      await sandboxRetry(ctx);
    },
  },
];

describe.each(ONE_PLATFORM)(
  'every outcome of every method reaches listeners exactly once (%s)',
  (platform) => {
    const suite = sandboxSuite();
    let sb: VerificationSandbox;
    let host: TestApp;
    let recorder: WebhookRecorder;

    beforeAll(async () => {
      sb = suite.sb;
      host = await suite.boot(() => startHost(platform, sb, { providers: [FlakyListener] }));
      recorder = await WebhookRecorder.start(host.url);
    });
    afterAll(async () => {
      await recorder?.close();
    });

    it.each(CASES)('$name', async (c) => {
      const listener = host.app.get(FlakyListener);
      listener.failFirst = c.flaky === true;
      const ctx: Ctx = { sb, host, recorder };
      const webhookUrl = c.name.startsWith('forged') ? recorder.url : host.url;
      await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: `${webhookUrl}/verification/webhooks` });
      try {
        const sessions: Planned[] = [];
        for (const { method, outcome } of OUTCOMES)
          sessions.push({ ...(await startSession(host, sb, method, `owner-${method}-${outcome}`)), outcome });

        // Phase 1: the end users verify or fail. Phase 2: the clock passes every TTL.
        const played = sessions.filter((s) => s.outcome !== 'expired');
        await c.before?.(ctx, played);
        for (const s of played) await drive(sb, s, s.outcome, { viaFallback: s.method === 'operator_id' });
        await settle(sb);
        await c.after?.(ctx, played);

        const expiring = sessions.filter((s) => s.outcome === 'expired');
        await c.before?.(ctx, expiring);
        await sb.advance(301_000);
        await settle(sb);
        await c.after?.(ctx, expiring);

        // Whatever is still owed, the reconciler delivers; then nothing more ever comes.
        for (let i = 0; i < 3; i++) {
          await sb.advance(15_000);
          await reconcilerOf(host).runOnce();
          await settle(sb);
        }

        for (const s of sessions) {
          const truth = await apiStatus(sb, s.requestId);
          expect({ method: s.method, truth }).toEqual({ method: s.method, truth: s.outcome });
          const terminal = `verification.${truth}`;
          const received = listener.of(s.requestId);
          const fallback = s.method === 'operator_id' && s.outcome !== 'expired';
          if (c.flaky) {
            const perEvent = (name: string) => received.filter((e) => e.replace('!', '') === name);
            expect({ method: s.method, got: perEvent(terminal) }).toEqual({
              method: s.method,
              got: [`${terminal}!`, terminal],
            });
            if (fallback)
              expect(perEvent('verification.code_required')).toEqual([
                'verification.code_required!',
                'verification.code_required',
              ]);
          } else if (fallback && c.reordered) {
            // The verified webhook may overtake code_required, which is then moot and not emitted after it.
            expect(received.filter((e) => e === terminal)).toEqual([terminal]);
            expect(received.indexOf('verification.code_required')).toBeLessThan(
              received.indexOf(terminal) + 1,
            );
            expect(received.filter((e) => e === 'verification.code_required').length).toBeLessThanOrEqual(1);
            expect(received.at(-1)).toBe(terminal);
          } else {
            expect({ method: s.method, outcome: s.outcome, received }).toEqual({
              method: s.method,
              outcome: s.outcome,
              received: fallback ? ['verification.code_required', terminal] : [terminal],
            });
          }
          const delivered = listener.deliveries.filter(
            (d) => d.requestId === s.requestId && d.event === terminal,
          );
          expect(delivered.at(-1)!.payload).toMatchObject({
            requestId: s.requestId,
            phoneNumber: s.phone,
            method: s.method,
            status: truth,
            owner: s.owner,
            // Every outcome came by webhook: the reconciler's passes at the end found nothing left to do.
            source: 'webhook',
            expiresAt: expect.any(Date),
            verifiedAt: truth === 'verified' ? expect.any(Date) : null,
          });
        }
      } finally {
        listener.failFirst = false;
        sb.clearFaults();
      }
    });
  },
);
