/**
 * What an operator reads of each answer the module gives, by the call that reports it: the log line
 * (level, message, fields: the module's logger drops the undefined ones) and the metric it moves in a
 * host's prom-client registry. A coalesced start spends nothing, a refusal is counted by its reason, an
 * outcome is counted once it ends a session, and another registration's event is its own telemetry's.
 */
import { describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { Registry } from 'prom-client';
import { VerificationApiError } from '../api/verification-api.error.js';
import { VerificationClientError, VerificationError } from '../core/verification.errors.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationMetrics } from './verification-metrics.js';
import { VerificationTelemetry } from './verification-telemetry.js';
import { recordingLogger, type LoggerLine } from '../../test/support/log-capture.js';

type Line = LoggerLine;

async function telemetry(
  opts: { debug?: boolean; emitter?: EventEmitter2; name?: string } = {},
): Promise<{ lines: Line[]; t: VerificationTelemetry; registry: Registry }> {
  const { lines, logger } = recordingLogger(opts.debug === true);
  const registry = new Registry();
  const metrics = await VerificationMetrics.create({ enabled: true, registry, prefix: 'verification_' });
  const options = { name: opts.name } as ResolvedVerificationOptions;
  return { lines, t: new VerificationTelemetry(logger, metrics, opts.emitter, options), registry };
}

/** The samples of one metric, as `{labels} value` strings. */
async function samples(registry: Registry, name: string): Promise<string[]> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return [];
  const { values } = await metric.get();
  return values.map((v) => `${JSON.stringify(v.labels)} ${String(v.value)}`);
}

/** The line without its undefined fields, as the logger writes it. */
function written([level, message, fields]: Line): Line {
  const kept = Object.fromEntries(Object.entries(fields ?? {}).filter(([, v]) => v !== undefined));
  return [level, message, kept];
}

/** The fields every line of the session below names. */
const sms = { method: 'sms', request_id: 'req-1' };

const session = {
  requestId: 'req-1',
  phoneNumber: '+79161234567',
  method: 'sms',
  status: 'sent',
  cost: { amount: 3, currency: 'RUB' },
};

describe('VerificationTelemetry: a start and a switch', () => {
  it('a new start is counted and its price spent; a start handed back (coalesced) is logged only', async () => {
    const { lines, t, registry } = await telemetry();
    t.started(session, false, 12);
    t.started(session, true, 4);
    const line = (coalesced: boolean, latency: number): Line => [
      'log',
      'start',
      { route: 'start', ...sms, phone: '+79161234567', status: 'sent', coalesced, latency_ms: latency },
    ];
    expect(lines.map(written)).toEqual([line(false, 12), line(true, 4)]);
    expect(await samples(registry, 'verification_starts_total')).toEqual(['{"method":"sms"} 1']);
    expect(await samples(registry, 'verification_spend_total')).toEqual([
      '{"method":"sms","currency":"RUB"} 3',
    ]);
  });

  it("a switch is a start of its own, written under the switch's route", async () => {
    const { lines, t } = await telemetry();
    t.started(session, false, 7, 'switch');
    t.startFailed(new VerificationClientError('fallback_not_available'), { latencyMs: 2 }, 'switch');
    expect(lines.map(([level, message, fields]) => [level, message, fields?.route])).toEqual([
      ['log', 'switch', 'switch'],
      ['log', 'switch refused', 'switch'],
    ]);
  });

  it('a refusal the caller can act on is a `refused` line with its code, status and cause, counted by its reason', async () => {
    const { lines, t, registry } = await telemetry();
    const refused = new VerificationClientError('method_not_available', 'Not offered', {
      reason: 'not offered',
    });
    t.startFailed(refused, { method: 'voice', phoneNumber: '+79161234567', latencyMs: 5 });
    expect(lines.map(written)).toEqual([
      [
        'log',
        'start refused',
        {
          route: 'start',
          method: 'voice',
          phone: '+79161234567',
          reason: 'allowlist',
          latency_ms: 5,
          error_code: 'method_not_available',
          http_status: 400,
          cause: 'not offered',
        },
      ],
    ]);
    expect(await samples(registry, 'verification_refusals_total')).toEqual(['{"reason":"allowlist"} 1']);
  });

  it('bad input is a debug line; an upstream outage with no reason is a warning; anything else is an error with its text', async () => {
    const { lines, t, registry } = await telemetry({ debug: true });
    t.startFailed(new VerificationClientError('validation_error'), { latencyMs: 1 });
    t.startFailed(new VerificationClientError('service_unavailable'), { latencyMs: 1 });
    t.startFailed(new Error('store down'), { method: 'sms', latencyMs: 1 });
    expect(lines.map(([level, message, fields]) => [level, message, fields?.error])).toEqual([
      ['debug', 'start refused', undefined],
      ['warn', 'start failed', undefined],
      ['error', 'start failed', 'Error: store down'],
    ]);
    // None of the three is a refusal by a reason protection or the allowlists give.
    expect(await samples(registry, 'verification_refusals_total')).toEqual([]);
  });
});

describe('VerificationTelemetry: check, cancel and status', () => {
  it("a check answered says whether it verified; a wrong code's line carries the attempts left and the session's status", async () => {
    const { lines, t } = await telemetry();
    t.checked({ ...session, status: 'verified' }, 9);
    t.checked(session, 8);
    t.checkFailed(
      new VerificationClientError('invalid_code', 'Wrong code', {
        attempts_remaining: 2,
        verification_status: 'sent',
      }),
      { method: 'sms', requestId: 'req-1', latencyMs: 6 },
    );
    const check = { route: 'check', ...sms };
    expect(lines.map(written)).toEqual([
      ['log', 'check', { ...check, status: 'verified', verified: true, latency_ms: 9 }],
      ['log', 'check', { ...check, status: 'sent', verified: false, latency_ms: 8 }],
      [
        'log',
        'check refused',
        {
          ...check,
          latency_ms: 6,
          error_code: 'invalid_code',
          http_status: 400,
          attempts_remaining: 2,
          session_status: 'sent',
        },
      ],
    ]);
  });

  it("a refusal's extras that are not what they claim (a count that is no number, a status that is no string) are left out of its line", async () => {
    const { lines, t } = await telemetry();
    t.checkFailed(
      new VerificationClientError('invalid_code', 'Wrong code', {
        attempts_remaining: 'two',
        verification_status: 5,
      }),
      { latencyMs: 1 },
    );
    expect(written(lines[0]!)[2]).toEqual({
      route: 'check',
      latency_ms: 1,
      error_code: 'invalid_code',
      http_status: 400,
    });
  });

  it('a cancel names its current step and how many steps the journey had', async () => {
    const { lines, t } = await telemetry();
    t.canceled({ ...session, status: 'canceled' }, 2);
    expect(lines.map(written)).toEqual([
      ['log', 'cancel', { route: 'cancel', ...sms, status: 'canceled', steps: 2 }],
    ]);
  });

  it('a status poll is a debug line, written only when debug lines are', async () => {
    const quiet = await telemetry();
    quiet.t.statusServed(session, 3);
    expect(quiet.lines).toEqual([]);
    const { lines, t } = await telemetry({ debug: true });
    t.statusServed(session, 3);
    expect(lines.map(written)).toEqual([
      ['debug', 'status', { route: 'status', ...sms, status: 'sent', latency_ms: 3 }],
    ]);
  });

  it("a status served stale is a warning naming the API's answer: its status and code, else the error's message", async () => {
    const { lines, t } = await telemetry();
    const apiError = new VerificationApiError({
      operation: 'getSession',
      status: 502,
      problem: { error_code: 'upstream_down' },
    });
    t.statusServedStale(session, apiError);
    t.statusServedStale(session, new VerificationApiError({ operation: 'getSession', status: 504 }));
    t.statusServedStale(session, new Error('socket hang up'));
    t.statusServedStale(session, 'no error object');
    expect(lines.map(([level, , fields]) => [level, fields?.upstream_status, fields?.error])).toEqual([
      ['warn', 502, 'upstream_down'],
      ['warn', 504, 'http_504'],
      ['warn', undefined, 'socket hang up'],
      ['warn', undefined, 'unknown'],
    ]);
    expect(lines[0]![1]).toBe('status served from the last known state');
    expect(lines[0]![2]).toMatchObject({ route: 'status', method: 'sms', request_id: 'req-1' });
  });

  it("a failure that is not the package's is an error line; one of the package's errors is left to its route's line", async () => {
    const { lines, t } = await telemetry();
    t.unexpectedFailure('status', new VerificationError('a refusal'));
    t.unexpectedFailure('status', new TypeError('x is undefined'));
    expect(lines.map(written)).toEqual([
      ['error', 'status failed', { route: 'status', error: 'TypeError: x is undefined' }],
    ]);
  });
});

describe('VerificationTelemetry: webhooks, outcomes and ops events', () => {
  it("a webhook's line carries its event, ids, HTTP status and latency, and its result is counted", async () => {
    const { lines, t, registry } = await telemetry();
    t.webhookHandled('processed', {
      event: 'verification.verified',
      requestId: 'req-1',
      webhookId: 'wh-1',
      status: 200,
      latencyMs: 11,
    });
    expect(lines.map(written)).toEqual([
      [
        'log',
        'webhook',
        {
          route: 'webhook',
          result: 'processed',
          event: 'verification.verified',
          request_id: 'req-1',
          webhook_id: 'wh-1',
          http_status: 200,
          latency_ms: 11,
        },
      ],
    ]);
    expect(await samples(registry, 'verification_webhook_events_total')).toEqual([
      '{"result":"processed"} 1',
    ]);
  });

  it("a session's end is counted as an outcome; a code asked for is logged, not counted; another registration's event is neither", async () => {
    const emitter = new EventEmitter2();
    const { lines, t, registry } = await telemetry({ emitter, name: 'shop' });
    await t.onModuleInit();
    const event = {
      requestId: 'req-1',
      method: 'sms',
      phoneNumber: '+79161234567',
      source: 'webhook',
      registration: 'shop',
    };
    emitter.emit('verification.code_required', {
      ...event,
      event: 'verification.code_required',
      status: 'sent',
    });
    emitter.emit('verification.failed', { ...event, event: 'verification.failed', status: 'failed' });
    emitter.emit('verification.expired', {
      ...event,
      event: 'verification.expired',
      status: 'expired',
      registration: 'other',
    });
    expect(lines.map(written)).toEqual([
      [
        'log',
        'verification.code_required',
        { ...sms, phone: '+79161234567', status: 'sent', source: 'webhook' },
      ],
      ['log', 'verification.failed', { ...sms, phone: '+79161234567', status: 'failed', source: 'webhook' }],
    ]);
    expect(await samples(registry, 'verification_outcomes_total')).toEqual([
      '{"method":"sms","status":"failed"} 1',
    ]);
    t.onModuleDestroy();
  });

  it("an ops event names its registration, and a listener that throws is logged by its error's name only, never rejected", async () => {
    const emitter = new EventEmitter2();
    const { lines, t } = await telemetry({ emitter, name: 'shop' });
    const heard: unknown[] = [];
    emitter.on('verification.balance_low', (payload: unknown) => void heard.push(payload));
    emitter.on('verification.balance_low', () => {
      throw new RangeError('the alerting host said +79161234567');
    });
    const event = { event: 'verification.balance_low' } as Parameters<VerificationTelemetry['announce']>[0];
    await expect(t.announce(event)).resolves.toBeUndefined();
    expect(heard).toEqual([{ event: 'verification.balance_low', registration: 'shop' }]);
    expect(lines.map(written)).toEqual([['error', 'a balance_low listener failed', { error: 'RangeError' }]]);
  });

  it('an unnamed registration adds no `registration` key; announce settles once the listeners have; a thrown non-error is logged as unknown', async () => {
    const emitter = new EventEmitter2();
    const { lines, t } = await telemetry({ emitter });
    const heard: unknown[] = [];
    emitter.on('verification.balance_low', async (payload: unknown) => {
      await new Promise((resolve) => setImmediate(resolve));
      heard.push(payload);
    });
    emitter.on('verification.ledger_drift', () => {
      throw 'a string';
    });
    const event = (name: string) => ({ event: name }) as Parameters<VerificationTelemetry['announce']>[0];
    await t.announce(event('verification.balance_low'));
    expect(heard).toHaveLength(1);
    expect(heard[0]).toStrictEqual({ event: 'verification.balance_low' });
    await t.announce(event('verification.ledger_drift'));
    expect(lines.map(written)).toEqual([['error', 'a ledger_drift listener failed', { error: 'unknown' }]]);
  });

  it('a host without an event emitter (no EventEmitterModule) boots, tears down and announces without one', async () => {
    const { lines, t } = await telemetry();
    await expect(t.onModuleInit()).resolves.toBeUndefined();
    await expect(t.announce({ event: 'verification.balance_low' } as never)).resolves.toBeUndefined();
    t.onModuleDestroy();
    expect(lines).toEqual([]);
  });
});
