import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { VerificationSandbox, type RouteFaultInput } from '../../src/testing/index.js';
import { CapturingLogger } from '../support/log-capture.js';
import { call, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { send, type Answer } from './support/responses.js';
import { signWebhook, webhookBody } from './support/webhook-signer.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const API_SECRET = 'sk_faults_0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const WEBHOOK_SECRET = `whsec_${Buffer.from('faults-webhook-secret-abcdef0123').toString('base64')}`;
/**
 * Long enough that an answer the sandbox gives at once never times out on a loaded CI machine (the
 * counts below allow no extra attempt); the latency fault answers well past it.
 */
const TIMEOUT_MS = 1000;
const RETRY_DEADLINE_MS = 2000;
/** Scheduling slack on a loaded CI machine. */
const SLACK_MS = 1500;

type Fault = Omit<RouteFaultInput, 'route' | 'count'>;
const FAULTS: [string, Fault][] = [
  ['latency past the time-out', { kind: 'latency', latency_ms: 3000 }],
  ['500', { kind: 'status', status: 500 }],
  ['502', { kind: 'status', status: 502 }],
  ['503', { kind: 'status', status: 503 }],
  ['connection reset', { kind: 'reset' }],
  ['garbage body', { kind: 'garbage' }],
  ['HTML error page', { kind: 'html' }],
  ['empty body', { kind: 'empty' }],
  ['429 storm', { kind: 'status', status: 429, retry_after_s: 1 }],
];

/**
 * Upstream faults (the sandbox's fault API, on every API route until cleared) against every route:
 * answers come within the time-out budget, carry the documented error code (upstream 429 →
 * `rate_limit_exceeded` with Retry-After; anything else the frontend cannot act on → 503
 * `service_unavailable`; status polls keep the page alive with the last known state; the webhook
 * route answers 503 so the sender retries, and emits once the API answers again), a POST is never
 * repeated, and no secret appears in any answer or log line.
 */
describe.each(ONE_PLATFORM)('hardening: upstream faults on every route (%s)', (platform) => {
  const suite = sandboxSuite({
    freezeClock: false,
    demoAccount: { apiSecret: API_SECRET, webhookSecret: WEBHOOK_SECRET },
  });
  let sb: VerificationSandbox;
  let host: TestApp;
  const logger = new CapturingLogger();
  const answers: string[] = [];
  let phone = 0;
  const nextPhone = (): string => `+7912350${String(phone++).padStart(4, '0')}`;

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot({
      platform,
      logger,
      module: {
        api: {
          baseUrl: sb.url,
          apiKey: sb.demoAccount.apiKey,
          apiSecret: API_SECRET,
          timeoutMs: TIMEOUT_MS,
          maxRetries: 2,
          retryDeadlineMs: RETRY_DEADLINE_MS,
          maxRetryAfterMs: 1000,
        },
        webhooks: { secret: WEBHOOK_SECRET },
        clock: () => sb.now(),
        // Upstream calls come from the routes only (no reconciler, no status cache), and the
        // module's own limits stay out of the way of the upstream 429s.
        limits: { enabled: false },
        reconcile: { enabled: false },
        statusCache: { enabled: false },
      },
    });
  });
  afterAll(async () => {
    const basic = Buffer.from(`demo_key:${API_SECRET}`).toString('base64');
    for (const text of [...answers, ...logger.lines]) {
      expect(text).not.toContain(API_SECRET);
      expect(text).not.toContain(basic);
      expect(text).not.toContain(WEBHOOK_SECRET.slice('whsec_'.length));
    }
  });

  const timed = async (request: () => Promise<Answer>): Promise<Answer & { ms: number }> => {
    const started = performance.now();
    const res = await request();
    answers.push(`${res.status} ${JSON.stringify([...res.headers])} ${res.text}`);
    return { ...res, ms: performance.now() - started };
  };
  const post = (path: string, body: unknown) =>
    timed(() => send(`${host.url}${path}`, 'POST', JSON.stringify(body)));
  const get = (path: string) => timed(() => send(`${host.url}${path}`, 'GET'));

  const expectRefusal = (res: Answer, fault: Fault): void => {
    const body = JSON.parse(res.text) as Record<string, unknown>;
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    if (fault.status === 429) {
      expect({ status: res.status, code: body.error_code }).toEqual({
        status: 429,
        code: 'rate_limit_exceeded',
      });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } else {
      expect({ status: res.status, code: body.error_code }).toEqual({
        status: 503,
        code: 'service_unavailable',
      });
    }
  };

  it.each(FAULTS)(
    '%s: bounded answers with the documented codes, no POST repeated',
    async (_name, fault) => {
      // Sessions to check, poll and confirm by webhook, made before the API turns faulty.
      const checked = await call(host.url, 'POST', '/verification/start', {
        phone_number: nextPhone(),
        method: 'sms',
      });
      const polled = await call(host.url, 'POST', '/verification/start', {
        phone_number: nextPhone(),
        method: 'sms',
      });
      const calledPhone = nextPhone();
      const called = await call(host.url, 'POST', '/verification/start', {
        phone_number: calledPhone,
        method: 'reverse_flash_call',
      });
      for (const started of [checked, polled, called]) expect(started.status).toBe(201);
      const calledId = sb.sessionsFor(calledPhone)[0]!.request_id;
      await sb.call(calledId, calledPhone);
      host.events.length = 0;
      sb.resetRequestCounts();
      sb.addFault({ route: '*', count: 0, ...fault });
      try {
        const start = await post('/verification/start', { phone_number: nextPhone(), method: 'sms' });
        expectRefusal(start, fault);
        expect(start.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
        expect(sb.requestCount('POST /v1/verify')).toBe(1);

        const check = await post('/verification/check', {
          verification_id: checked.body.verification_id,
          code: '123456',
        });
        expectRefusal(check, fault);
        expect(check.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
        expect(sb.requestCount('POST /v1/verify/check')).toBe(1);

        // A status poll keeps the page alive: the last known state, within the GET's retry deadline.
        const status = await get(`/verification/status/${polled.body.verification_id}`);
        expect(status.status).toBe(200);
        expect(JSON.parse(status.text)).toMatchObject({ status: 'sent', method: 'sms' });
        expect(status.ms).toBeLessThan(RETRY_DEADLINE_MS + SLACK_MS);
        expect(sb.requestCount('GET /v1/verify/:id')).toBeGreaterThanOrEqual(1);
        expect(sb.requestCount('GET /v1/verify/:id')).toBeLessThanOrEqual(3);

        const methods = await get('/verification/methods');
        expect(methods.status).toBe(200);

        // The webhook route cannot confirm: 503, so that the sender retries; nothing is emitted.
        const session = sb.getSession(calledId)!;
        const message = signWebhook(
          WEBHOOK_SECRET,
          webhookBody('verification.verified', {
            request_id: session.request_id,
            phone_number: session.phone_number,
            method: session.method,
            status: session.status,
            verified_at: session.verified_at,
            expires_at: session.expires_at,
          }),
          `msg_${randomBytes(8).toString('hex')}`,
          Math.floor(sb.now() / 1000),
        );
        const hook = await timed(() =>
          send(`${host.url}/verification/webhooks`, 'POST', message.body, message.headers),
        );
        expect(hook.status).toBe(503);
        expect(JSON.parse(hook.text).error_code).toBe('service_unavailable');
        expect(hook.ms).toBeLessThan(RETRY_DEADLINE_MS + SLACK_MS);
        expect(host.events).toEqual([]);

        sb.clearFaults();
        const redelivered = await timed(() =>
          send(`${host.url}/verification/webhooks`, 'POST', message.body, message.headers),
        );
        expect(redelivered.status).toBe(200);
        expect(host.events.map((e) => [e.requestId, e.event])).toEqual([[calledId, 'verification.verified']]);
      } finally {
        sb.clearFaults();
      }
    },
    30_000,
  );

  it('a 429 storm on 20 concurrent starts and polls: every answer bounded, one POST per start', async () => {
    const polled = await call(host.url, 'POST', '/verification/start', {
      phone_number: nextPhone(),
      method: 'sms',
    });
    sb.resetRequestCounts();
    sb.addFault({ route: '*', count: 0, kind: 'status', status: 429, retry_after_s: 2 });
    try {
      const started = performance.now();
      const [starts, polls] = await Promise.all([
        Promise.all(
          Array.from({ length: 20 }, () =>
            post('/verification/start', { phone_number: nextPhone(), method: 'sms' }),
          ),
        ),
        Promise.all(
          Array.from({ length: 20 }, () => get(`/verification/status/${polled.body.verification_id}`)),
        ),
      ]);
      for (const res of starts) expectRefusal(res, { kind: 'status', status: 429 });
      for (const res of polls) expect(res.status).toBe(200);
      expect(performance.now() - started).toBeLessThan(RETRY_DEADLINE_MS + SLACK_MS);
      expect(sb.requestCount('POST /v1/verify')).toBe(20);
      // Retry-After (2 s) is past what a GET waits (maxRetryAfterMs): each poll asked once and gave up at once.
      expect(sb.requestCount('GET /v1/verify/:id')).toBe(20);
    } finally {
      sb.clearFaults();
    }
  });
});
