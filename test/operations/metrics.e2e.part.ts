import { beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Header, Module } from '@nestjs/common';
import { Registry } from 'prom-client';
import { VerificationBalanceWatch } from '../../src/account/balance-watch.service.js';
import { VerificationTelemetry } from '../../src/observability/verification-telemetry.js';
import { VerificationSandbox } from '../../src/testing/index.js';
import { call, type TestApp } from '../support/verification-app.js';
import { bootHost } from './support/ops-host.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const registry = new Registry();

/** The host's own `/metrics`, scraping the registry it gave the module. */
@Controller()
class MetricsController {
  @Get('metrics')
  @Header('content-type', registry.contentType)
  metrics(): Promise<string> {
    return registry.metrics();
  }
}
@Module({ controllers: [MetricsController] })
class MetricsModule {}

/** A metric as getMetricsAsJSON() returns it at runtime (its typings declare `type` as a numeric enum). */
interface MetricJson {
  name: string;
  type: string;
  values: { labels: Record<string, string | number>; value: number; metricName?: string }[];
}

/** Sum of a metric's samples whose labels include `labels` (histograms: their `_count`). */
async function value(name: string, labels: Record<string, string> = {}): Promise<number> {
  const metrics = (await registry.getMetricsAsJSON()) as unknown as MetricJson[];
  const metric = metrics.find((m) => m.name === name);
  if (!metric) throw new Error(`metric ${name} is not registered`);
  return metric.values
    .filter((v) => (metric.type === 'histogram' ? v.metricName === `${name}_count` : true))
    .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
    .reduce((sum, v) => sum + v.value, 0);
}

const P = 'shop_verification_';

describe('metrics after a scripted flow, read from a real prom-client registry', () => {
  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  let host: TestApp;
  // One browser (its cookie): its double click is handed back its pending session.
  const start = (phone_number: string, method: string, browser = 'metricsBrowserKey0000w') =>
    call(
      host.url,
      'POST',
      '/verification/start',
      { phone_number, method },
      { cookie: `pv_browser=${browser}` },
    );

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot(() =>
      bootHost({
        sb,
        imports: [MetricsModule],
        module: {
          metrics: { enabled: true, registry, prefix: P },
          // Only this script talks to the API: upstream counts are exact.
          reconcile: { enabled: false },
          limits: {
            startPerIp: false,
            startPerPhone: { points: 1, windowMs: 3_600_000 },
            resendCooldownMs: 5_000,
            spendCap: { amount: 7, windowMs: 86_400_000 },
            // The cap to the kopeck (its last share would be kept for methods charged on proof).
            pumping: false,
            beforeStart: ({ phoneNumber }) =>
              phoneNumber === '+79123450309' ? { allow: false, reason: 'captcha_required' } : undefined,
          },
        },
      }),
    );

    // Two paid starts, and a double click that is handed back (not a new start, no spend).
    const sms = await start('+79123450301', 'sms');
    expect(sms.status).toBe(201);
    expect((await start('+79123450301', 'sms')).status).toBe(201);
    expect(sb.sessionsFor('+79123450301')).toHaveLength(1);
    const rfc = await start('+79123450302', 'reverse_flash_call');
    expect(rfc.status).toBe(201);

    // Refusals, one per reason.
    // Another browser of the same caller (its IP), not handed the session back: a resend of the SMS.
    expect((await start('+79123450301', 'sms', 'metricsOtherBrowser00w')).body.reason).toBe(
      'resend_cooldown',
    );
    expect((await start('+79123450304', 'voice')).body.error_code).toBe('method_not_available');
    expect((await start('+12025550123', 'sms')).body.error_code).toBe('phone_not_allowed');
    expect((await start('+79123450309', 'sms')).body.error_code).toBe('start_refused');
    sb.addFault({ route: 'POST /v1/verify', kind: 'status', status: 429, retry_after_s: 1 });
    expect((await start('+79123450305', 'sms')).status).toBe(429);
    // The API's Retry-After (1 s) holds every start of the deployment; then they go through again.
    await sb.advance(1_000);
    expect((await start('+79123450307', 'sms')).status).toBe(201);
    await sb.advance(5_001);
    expect((await start('+79123450307', 'flash_call')).body.reason).toBe('start_phone_limit');
    expect((await start('+79123450306', 'sms')).body.reason).toBe('spend_cap');

    // Outcomes: the sms is verified after a wrong code; the reverse flash call expires.
    const requestId = sb.sessionsFor('+79123450301')[0].request_id as string;
    await sb.deliver(requestId);
    const check = (code: string) =>
      call(host.url, 'POST', '/verification/check', { verification_id: sms.body.verification_id, code });
    expect((await check('000000')).status).toBe(400);
    expect((await check(sb.getSession(requestId)!.code as string)).body.verified).toBe(true);
    await sb.advance(301_000);
    sb.addFault({ route: 'GET /v1/verify/:id', kind: 'status', status: 500, count: 3 });
    const stale = await call(host.url, 'GET', `/verification/status/${rfc.body.verification_id}`);
    expect(stale.body.status).toBe('sent');
    await sb.advance(2_000);
    expect(
      (await call(host.url, 'GET', `/verification/status/${rfc.body.verification_id}`)).body.status,
    ).toBe('expired');
  });

  it('counts paid starts by method (a coalesced double click is not one)', async () => {
    expect(await value(`${P}starts_total`, { method: 'sms' })).toBe(2);
    expect(await value(`${P}starts_total`, { method: 'reverse_flash_call' })).toBe(1);
    expect(await value(`${P}starts_total`)).toBe(3);
  });

  it('counts outcomes by method and status, once per session', async () => {
    expect(await value(`${P}outcomes_total`, { method: 'sms', status: 'verified' })).toBe(1);
    expect(await value(`${P}outcomes_total`, { method: 'reverse_flash_call', status: 'expired' })).toBe(1);
    expect(await value(`${P}outcomes_total`)).toBe(2);
  });

  it('counts refusals on the start route by reason', async () => {
    const reasons = ['cooldown', 'allowlist', 'hook', 'upstream_rate_limit', 'rate_limit', 'spend_cap'];
    const counts = Object.fromEntries(
      await Promise.all(
        reasons.map(async (reason) => [reason, await value(`${P}refusals_total`, { reason })]),
      ),
    );
    expect(counts).toEqual({
      cooldown: 1,
      allowlist: 2,
      hook: 1,
      upstream_rate_limit: 1,
      rate_limit: 1,
      spend_cap: 1,
    });
  });

  it('measures upstream latency and counts upstream errors by operation', async () => {
    // Four initiations reached the API (three created, one 429); nothing refused before did.
    expect(await value(`${P}upstream_request_duration_seconds`, { operation: 'initiate' })).toBe(4);
    expect(sb.requestCount('POST /v1/verify')).toBe(4);
    expect(
      await value(`${P}upstream_errors_total`, { operation: 'initiate', error: 'rate_limit_exceeded' }),
    ).toBe(1);
    // One status poll met three 500s (the first attempt and two retries).
    expect(await value(`${P}upstream_errors_total`, { operation: 'getSession' })).toBe(3);
    // A wrong code is an answer, not an upstream error.
    expect(await value(`${P}upstream_request_duration_seconds`, { operation: 'check' })).toBe(2);
    expect(await value(`${P}upstream_errors_total`, { operation: 'check' })).toBe(0);
  });

  it('sums spend by method from the cost fixed at initiation', async () => {
    expect(await value(`${P}spend_total`, { method: 'sms', currency: 'RUB' })).toBe(6);
    expect(await value(`${P}spend_total`, { method: 'reverse_flash_call', currency: 'RUB' })).toBe(0.25);
  });

  it('sets the balance gauge on each read', async () => {
    // 1000 less the delivered sms (3); the expired reverse flash call is not charged.
    expect(sb.getAccount(sb.demoAccount.apiKey)!.balance.amount).toBe(997);
    await host.app.get(VerificationBalanceWatch).checkNow();
    expect(await value(`${P}balance`, { currency: 'RUB' })).toBe(997);
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 12.5 });
    await host.app.get(VerificationBalanceWatch).checkNow();
    expect(await value(`${P}balance`, { currency: 'RUB' })).toBe(12.5);
    // An empty account is a reading too: the gauge says 0, not the last amount.
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 0 });
    await host.app.get(VerificationBalanceWatch).checkNow();
    expect(await value(`${P}balance`, { currency: 'RUB' })).toBe(0);
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 12.5 });
  });

  it('measures upstream latency in seconds: a balance read the API answers 300 ms late adds 0.3 s or more, not 300', async () => {
    const sum = async () => {
      const metrics = (await registry.getMetricsAsJSON()) as unknown as MetricJson[];
      const name = `${P}upstream_request_duration_seconds`;
      return metrics
        .find((m) => m.name === name)!
        .values.filter((v) => v.metricName === `${name}_sum` && v.labels.operation === 'getBalance')
        .reduce((total, v) => total + v.value, 0);
    };
    const before = await sum();
    sb.addFault({ route: 'GET /v1/balance', kind: 'latency', latency_ms: 300 });
    await host.app.get(VerificationBalanceWatch).checkNow();
    const seconds = (await sum()) - before;
    expect(seconds).toBeGreaterThanOrEqual(0.3);
    expect(seconds).toBeLessThan(30);
  });

  it('counts an upstream answer of 200 without a usable body as an upstream error, as a 5xx is', async () => {
    const before = sb.requestCount('GET /v1/balance');
    sb.addFault({ route: 'GET /v1/balance', kind: 'garbage' });
    await host.app
      .get(VerificationBalanceWatch)
      .checkNow()
      .catch(() => undefined);
    // One attempt: an answer that is no answer is not retried.
    expect(sb.requestCount('GET /v1/balance')).toBe(before + 1);
    expect(await value(`${P}upstream_errors_total`, { operation: 'getBalance', error: 'bad_response' })).toBe(
      1,
    );
    const res = await call(host.url, 'GET', '/metrics');
    expect(res.text).toContain(`${P}upstream_errors_total{operation="getBalance",error="bad_response"} 1`);
  });

  it('counts webhook requests by result, as the webhook route reports them', async () => {
    const telemetry = host.app.get(VerificationTelemetry);
    telemetry.webhookHandled('processed', { event: 'verification.verified' });
    telemetry.webhookHandled('duplicate');
    telemetry.webhookHandled('Invalid Signature!');
    expect(await value(`${P}webhook_events_total`, { result: 'processed' })).toBeGreaterThanOrEqual(1);
    expect(await value(`${P}webhook_events_total`, { result: 'duplicate' })).toBeGreaterThanOrEqual(1);
    // Label values are bounded to word characters.
    expect(await value(`${P}webhook_events_total`, { result: 'Invalid_Signature_' })).toBe(1);
  });

  it('is what the host serves on its own /metrics', async () => {
    const res = await call(host.url, 'GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.text).toContain(`${P}starts_total{method="sms"} 2`);
    expect(res.text).toContain(`${P}outcomes_total{method="sms",status="verified"} 1`);
    expect(res.text).toContain(`${P}refusals_total{reason="spend_cap"} 1`);
    expect(res.text).toMatch(
      new RegExp(`${P}upstream_request_duration_seconds_bucket\\{le="\\+Inf",operation="initiate"\\} 4`),
    );
    // In seconds: the sandbox on this machine answers each of the four within a second (none in a millisecond).
    expect(res.text).toMatch(
      new RegExp(`${P}upstream_request_duration_seconds_bucket\\{le="1",operation="initiate"\\} 4`),
    );
    expect(res.text).not.toMatch(/\+7\d{10}|request_id|verification_id/);
  });
});

describe('metrics registration', () => {
  it('registers nothing when metrics are off, and shares a registry between two apps when on', async () => {
    const sb = await VerificationSandbox.start({ port: 0 });
    const own = new Registry();
    const off = await bootHost({ sb, module: { metrics: { enabled: false, registry: own } } });
    expect(await own.getMetricsAsJSON()).toEqual([]);
    const a = await bootHost({ sb, module: { metrics: { enabled: true, registry: own } } });
    const b = await bootHost({ sb, module: { metrics: { enabled: true, registry: own } } });
    for (const [i, app] of [a, b].entries())
      expect(
        (
          await call(app.url, 'POST', '/verification/start', {
            phone_number: `+7912345039${i}`,
            method: 'sms',
          })
        ).status,
      ).toBe(201);
    const starts = (await own.getMetricsAsJSON()).find((m) => m.name === 'verification_starts_total');
    expect(starts?.values).toEqual([expect.objectContaining({ labels: { method: 'sms' }, value: 2 })]);
    for (const app of [off, a, b]) await app.close();
    await sb.close();
  });
});

describe('metric labels from the wire', () => {
  it('a currency of any length from the API is counted under its first 40 word characters', async () => {
    const sb = await VerificationSandbox.start({ port: 0 });
    const own = new Registry();
    const app = await bootHost({ sb, module: { metrics: { enabled: true, registry: own } } });
    try {
      // The cost the API fixed names a currency far longer than any real one.
      const currency = `rub-${'x'.repeat(80)}`;
      sb.addFault({ route: 'POST /v1/verify', kind: 'field', field: 'cost', value: { amount: 3, currency } });
      const res = await call(app.url, 'POST', '/verification/start', {
        phone_number: '+79123450399',
        method: 'sms',
      });
      expect(res.status).toBe(201);
      const spend = (await own.getMetricsAsJSON()).find((m) => m.name === 'verification_spend_total');
      expect(spend?.values).toEqual([
        expect.objectContaining({ labels: { method: 'sms', currency: `rub_${'x'.repeat(36)}` }, value: 3 }),
      ]);
    } finally {
      await app.close();
      await sb.close();
    }
  });
});
