/**
 * What an operator's `/metrics` shows of the module: each instrument as prom-client exposes it from a
 * host's own registry (names, labels, values in seconds), the label values bounded, and the readings a
 * metric cannot hold (a price or balance that is no number, a negative duration) left out rather than
 * thrown at the caller.
 */
import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import type { ApiRequestInfo } from '../api/api-client.options.js';
import { isUpstreamFailure, VerificationMetrics } from './verification-metrics.js';

async function metricsIn(registry = new Registry(), prefix = 'verification_') {
  const metrics = await VerificationMetrics.create({ enabled: true, registry, prefix });
  return { metrics, registry };
}

/** The samples of one metric, as `{labels} value` strings (the exposition's lines, minus the name). */
async function samples(registry: Registry, name: string): Promise<string[]> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return [];
  const { values } = await metric.get();
  return values.map(
    (v) =>
      `${(v as { metricName?: string }).metricName ?? name}${JSON.stringify(v.labels)} ${String(v.value)}`,
  );
}

const attempt = (fields: Partial<ApiRequestInfo>): ApiRequestInfo => ({
  operation: 'initiate',
  method: 'POST',
  path: '/v1/verify',
  durationMs: 250,
  attempt: 1,
  willRetry: false,
  ...fields,
});

describe('VerificationMetrics in a host registry', () => {
  it('counts starts, outcomes, in-doubt starts, webhook results and pumping holds under their labels', async () => {
    const { metrics, registry } = await metricsIn();
    metrics.started('sms');
    metrics.started('sms');
    metrics.outcome('sms', 'verified');
    metrics.inDoubtStart('sms', 'remembered');
    metrics.inDoubtStart('sms', 'adopted');
    metrics.webhookEvent('duplicate');
    metrics.fraudSuspected('range_burst', 'monitor');
    metrics.pumpingRefusal('range_burst', 'enforce');
    metrics.methodTransition('sms', '7', 'delivered');
    expect(await samples(registry, 'verification_starts_total')).toEqual([
      'verification_starts_total{"method":"sms"} 2',
    ]);
    expect(await samples(registry, 'verification_outcomes_total')).toEqual([
      'verification_outcomes_total{"method":"sms","status":"verified"} 1',
    ]);
    expect(await samples(registry, 'verification_in_doubt_starts_total')).toEqual([
      'verification_in_doubt_starts_total{"method":"sms","result":"remembered"} 1',
      'verification_in_doubt_starts_total{"method":"sms","result":"adopted"} 1',
    ]);
    expect(await samples(registry, 'verification_webhook_events_total')).toEqual([
      'verification_webhook_events_total{"result":"duplicate"} 1',
    ]);
    expect(await samples(registry, 'verification_fraud_suspected_total')).toEqual([
      'verification_fraud_suspected_total{"reason":"range_burst","mode":"monitor"} 1',
    ]);
    expect(await samples(registry, 'verification_pumping_refusals_total')).toEqual([
      'verification_pumping_refusals_total{"reason":"range_burst","mode":"enforce"} 1',
    ]);
    expect(await samples(registry, 'verification_method_sessions_total')).toEqual([
      'verification_method_sessions_total{"method":"sms","country":"7","outcome":"delivered"} 1',
    ]);
  });

  it('label values from the wire are word characters, at most 40, and an empty one reads `unknown`', async () => {
    const { metrics, registry } = await metricsIn();
    metrics.outcome('', 'a status with spaces & "quotes"');
    metrics.webhookEvent('x'.repeat(41));
    expect(await samples(registry, 'verification_outcomes_total')).toEqual([
      'verification_outcomes_total{"method":"unknown","status":"a_status_with_spaces____quotes_"} 1',
    ]);
    expect(await samples(registry, 'verification_webhook_events_total')).toEqual([
      `verification_webhook_events_total{"result":"${'x'.repeat(40)}"} 1`,
    ]);
  });

  it('money: prices and charges add up by method and currency; the balance is the last read; a reading that is no number is left out', async () => {
    const { metrics, registry } = await metricsIn();
    metrics.spent('sms', { amount: 3.5, currency: 'RUB' });
    metrics.spent('sms', { amount: 0.5, currency: 'RUB' });
    metrics.spent('sms', undefined);
    expect(() => metrics.spent('sms', { amount: Number.NaN, currency: 'RUB' })).not.toThrow();
    metrics.methodCharged('sms', { amount: 2, currency: 'RUB' });
    expect(() =>
      metrics.methodCharged('sms', { amount: Number.POSITIVE_INFINITY, currency: 'RUB' }),
    ).not.toThrow();
    metrics.balance({ amount: 120.25, currency: 'RUB' });
    metrics.balance({ amount: 99, currency: 'RUB' });
    metrics.balance({ amount: Number.NaN, currency: 'RUB' });
    expect(await samples(registry, 'verification_spend_total')).toEqual([
      'verification_spend_total{"method":"sms","currency":"RUB"} 4',
    ]);
    expect(await samples(registry, 'verification_method_charged_total')).toEqual([
      'verification_method_charged_total{"method":"sms","currency":"RUB"} 2',
    ]);
    expect(await samples(registry, 'verification_balance')).toEqual([
      'verification_balance{"currency":"RUB"} 99',
    ]);
  });

  it('durations are seconds: an upstream attempt of 250 ms and a verification of 90 s land in their buckets', async () => {
    const { metrics, registry } = await metricsIn();
    metrics.upstreamRequest(attempt({ status: 200, durationMs: 250 }));
    metrics.timeToVerify('sms', 90_000);
    const upstream = await samples(registry, 'verification_upstream_request_duration_seconds');
    expect(upstream).toContain(
      'verification_upstream_request_duration_seconds_sum{"operation":"initiate"} 0.25',
    );
    expect(upstream).toContain(
      'verification_upstream_request_duration_seconds_bucket{"le":0.25,"operation":"initiate"} 1',
    );
    expect(upstream).toContain(
      'verification_upstream_request_duration_seconds_bucket{"le":0.1,"operation":"initiate"} 0',
    );
    const verify = await samples(registry, 'verification_method_time_to_verify_seconds');
    expect(verify).toContain('verification_method_time_to_verify_seconds_sum{"method":"sms"} 90');
    // The stored histogram's bounds, in seconds: 90 s is in the 90 s bucket, not the 60 s one.
    expect(verify).toContain('verification_method_time_to_verify_seconds_bucket{"le":60,"method":"sms"} 0');
    expect(verify).toContain('verification_method_time_to_verify_seconds_bucket{"le":90,"method":"sms"} 1');
  });

  it('a verification in the instant it started counts (0 s); a negative or unknown duration does not', async () => {
    const { metrics, registry } = await metricsIn();
    metrics.timeToVerify('sms', 0);
    metrics.timeToVerify('sms', -1);
    metrics.timeToVerify('sms', Number.NaN);
    expect(await samples(registry, 'verification_method_time_to_verify_seconds')).toContain(
      'verification_method_time_to_verify_seconds_count{"method":"sms"} 1',
    );
  });

  it('an upstream failure is counted by operation and error: its own error, else `http_<status>`, else `http_none`', async () => {
    const { metrics, registry } = await metricsIn();
    metrics.upstreamRequest(attempt({ status: 503 }));
    metrics.upstreamRequest(attempt({ status: undefined, error: 'timeout' }));
    metrics.upstreamRequest(attempt({ status: undefined }));
    // An unknown session is an answer; a start's 404 (a wrong api.baseUrl) is counted.
    metrics.upstreamRequest(attempt({ operation: 'getSession', status: 404 }));
    metrics.upstreamRequest(attempt({ status: 404 }));
    expect((await samples(registry, 'verification_upstream_errors_total')).sort()).toEqual([
      'verification_upstream_errors_total{"operation":"initiate","error":"http_404"} 1',
      'verification_upstream_errors_total{"operation":"initiate","error":"http_503"} 1',
      'verification_upstream_errors_total{"operation":"initiate","error":"http_none"} 1',
      'verification_upstream_errors_total{"operation":"initiate","error":"timeout"} 1',
    ]);
  });

  it('a second module in the process reuses the registered metrics (one series, both counting)', async () => {
    const registry = new Registry();
    const first = await metricsIn(registry, 'app_');
    const second = await metricsIn(registry, 'app_');
    first.metrics.started('sms');
    second.metrics.started('sms');
    expect(await samples(registry, 'app_starts_total')).toEqual(['app_starts_total{"method":"sms"} 2']);
  });

  it('counts refused starts by reason', async () => {
    const { metrics, registry } = await metricsIn();
    metrics.refused('rate_limit');
    expect(await samples(registry, 'verification_refusals_total')).toEqual([
      'verification_refusals_total{"reason":"rate_limit"} 1',
    ]);
  });

  it.each([
    ['off', { enabled: false, prefix: 'verification_' }],
    ['not configured', undefined],
  ])('metrics %s: nothing is loaded and every call is a no-op', async (_, options) => {
    const metrics = await VerificationMetrics.create(options);
    expect(metrics.enabled).toBe(false);
    const money = { amount: 1, currency: 'RUB' };
    expect(() => {
      metrics.started('sms');
      metrics.outcome('sms', 'verified');
      metrics.refused('rate_limit');
      metrics.upstreamRequest(attempt({ status: 503 }));
      metrics.webhookEvent('processed');
      metrics.inDoubtStart('sms', 'adopted');
      metrics.spent('sms', money);
      metrics.fraudSuspected('range_burst', 'enforce');
      metrics.pumpingRefusal('range_burst', 'enforce');
      metrics.methodTransition('sms', '7', 'started');
      metrics.methodCharged('sms', money);
      metrics.timeToVerify('sms', 1_000);
      metrics.balance(money);
    }).not.toThrow();
  });
});

describe('isUpstreamFailure: what the operator is paged for', () => {
  it.each([
    [undefined, undefined, true],
    [199, undefined, false],
    [199, 'invalid_response', false],
    [200, undefined, false],
    [200, 'invalid_response', true],
    [299, 'invalid_response', true],
    [300, 'invalid_response', false],
    [400, undefined, false],
    [401, undefined, true],
    [402, undefined, true],
    [403, undefined, true],
    // A start's 404: the module calls a route that is not there (a wrong api.baseUrl).
    [404, undefined, true],
    [409, undefined, false],
    [429, undefined, true],
    [499, undefined, false],
    [500, undefined, true],
    [503, undefined, true],
  ])('status %s with error %s: %s', (status, error, failure) => {
    expect(isUpstreamFailure(attempt({ status, error }))).toBe(failure);
  });

  it.each([
    ['getSession', false],
    ['check', false],
    ['initiate', true],
    ['getBalance', true],
    ['getUsage', true],
    ['getPrices', true],
  ] as const)(
    'a 404 to %s: %s (an unknown session is a normal answer, a missing route is not)',
    (operation, failure) => {
      expect(isUpstreamFailure(attempt({ operation, status: 404, error: 'not_found' }))).toBe(failure);
    },
  );
});
