/**
 * OpenTelemetry spans with `@opentelemetry/api` and an SDK (the in-memory exporter): one span per
 * start, check, switch, cancel, status refresh, webhook and reconcile, with method, outcome, refusal
 * reason and cost class and never a phone number; a webhook's span is the active one while the host's
 * listeners run. Without a registered SDK the spans are no-ops.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { Registry } from 'prom-client';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { VerificationSandbox } from '../../src/testing/index.js';
// Internal (not a package export): the span of a method no test upstream answers with.
import { VerificationTracing } from '../../src/observability/verification-tracing.js';
import { apiCheck, reconciler } from '../journeys/journey-host.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { moduleOptions } from '../webhooks/harness.js';
import { call, createTestApp, PLATFORMS, type Platform, type TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const exporter = new InMemorySpanExporter();
let serial = 0;
const phoneNumber = () =>
  `+7916333${String(process.pid % 100).padStart(2, '0')}${String(++serial).padStart(2, '0')}`;

function spans(name: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((span) => span.name === name);
}

describe.each(PLATFORMS)('OpenTelemetry spans (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp | undefined;
  let apiKey: string;
  const contextManager = new AsyncLocalStorageContextManager();

  beforeAll(async () => {
    sb = suite.sb;
    context.setGlobalContextManager(contextManager.enable());
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
  });
  afterEach(async () => {
    await host?.close();
    host = undefined;
    exporter.reset();
  });
  afterAll(async () => {
    trace.disable();
    context.disable();
  });

  async function boot(extra: Partial<VerificationModuleOptions> = {}): Promise<TestApp> {
    const account = await sb.createAccount({ balance: 100 });
    apiKey = account.apiKey;
    const base = moduleOptions(sb, {
      limits: { startPerPhoneAndCaller: { points: 2, windowMs: 60_000 }, resendCooldownMs: false },
      ...extra,
    });
    host = await createTestApp({
      platform,
      module: {
        ...base,
        api: { ...base.api, apiKey, apiSecret: account.apiSecret },
        webhooks: { secret: account.webhookSecret },
      },
    });
    await sb.updateAccount(apiKey, { webhookUrl: `${host.url}/verification/webhooks` });
    return host;
  }
  const post = (path: string, body: unknown) =>
    call(host!.url, 'POST', `/verification/${path}`, body, { 'x-user': 'u1' });

  it("spans for start, check, switch, status refresh, cancel and reconcile, with method, outcome, refusal reason and cost class, from the module's own tracer", async () => {
    await boot();
    const phone = phoneNumber();
    const started = await post('start', { phone_number: phone, method: 'sms' });
    const id = started.body.verification_id;
    expect((await post('check', { verification_id: id, code: '0000' })).status).toBe(400);
    await sb.advance(3000);
    expect(
      (await call(host!.url, 'GET', `/verification/status/${String(id)}`, undefined, { 'x-user': 'u1' }))
        .status,
    ).toBe(200);
    expect((await post('switch', { verification_id: id, method: 'reverse_flash_call' })).status).toBe(201);
    expect((await post('start', { phone_number: phone, method: 'msgr1_otp' })).status).toBe(429);
    expect((await post('cancel', { verification_id: id })).status).toBe(200);
    const other = await post('start', { phone_number: phoneNumber(), method: 'flash_call' });
    expect(other.status).toBe(201);
    await sb.advance(16_000);
    await reconciler(host!).runOnce();

    const [start, refused] = spans('verification.start');
    // The module's own operations are INTERNAL spans; one that did its work ends OK.
    expect([start!.kind, start!.status.code]).toEqual([SpanKind.INTERNAL, SpanStatusCode.OK]);
    expect(start!.attributes).toMatchObject({
      'verification.method': 'sms',
      'verification.outcome': 'sent',
      'verification.cost_class': 'on_delivery',
    });
    expect(refused!.attributes).toMatchObject({
      'verification.outcome': 'refused',
      'verification.refusal_reason': expect.any(String),
    });
    expect(spans('verification.check')[0]!.attributes).toMatchObject({
      'verification.method': 'sms',
      'verification.outcome': 'refused',
      'verification.refusal_reason': 'invalid_code',
    });
    expect(spans('verification.switch')[0]!.attributes).toMatchObject({
      'verification.method': 'reverse_flash_call',
      'verification.cost_class': 'on_verified',
      'verification.outcome': 'sent',
    });
    expect(spans('verification.cancel')[0]!.attributes).toMatchObject({ 'verification.outcome': 'canceled' });
    // The status route's refresh of the SMS says its method and what the API charges it on.
    expect(spans('verification.status_refresh')[0]!.attributes).toMatchObject({
      'verification.method': 'sms',
      'verification.cost_class': 'on_delivery',
    });
    expect(spans('verification.reconcile').length).toBeGreaterThan(0);
    // A look says the method and the status it found (the flash call's, still followed), never the number.
    expect(spans('verification.reconcile').map((look) => look.attributes)).toContainEqual(
      expect.objectContaining({
        'verification.method': 'flash_call',
        'verification.outcome': expect.any(String),
      }),
    );
    // A status refresh under the reconciler is its child.
    const reconcile = spans('verification.reconcile')[0]!;
    expect(
      spans('verification.status_refresh').some(
        (span) => span.parentSpanContext?.spanId === reconcile.spanContext().spanId,
      ),
    ).toBe(true);
    // No span says the number, whole or in part.
    const everything = JSON.stringify(
      exporter.getFinishedSpans().map((span) => [span.name, span.attributes]),
    );
    expect(everything).not.toContain(phone.slice(2));
    expect(everything).not.toContain(phone.slice(-7));
    // Every span comes from the module's own tracer: a host's sampler or processor picks them by its name.
    expect(new Set(exporter.getFinishedSpans().map((span) => span.instrumentationScope.name))).toEqual(
      new Set(['nestjs-phone-verification']),
    );
  });

  it('a method this version does not know (an API newer than the module) is named on its span, with no cost class', async () => {
    const tracing = new VerificationTracing();
    await tracing.load();
    await tracing.span('check', () => Promise.resolve(), { method: 'carrier_pigeon' });
    expect(spans('verification.check').map((span) => span.attributes)).toEqual([
      { 'verification.method': 'carrier_pigeon' },
    ]);
  });

  it('a switch refused after its method was chosen says that method; a cancel repeated says canceled again', async () => {
    await boot();
    const id = (await post('start', { phone_number: phoneNumber(), method: 'sms' })).body.verification_id;
    expect((await post('switch', { verification_id: id, method: 'reverse_flash_call' })).status).toBe(201);
    // The number's two starts are spent: the third step is refused by the limits, its method chosen.
    expect((await post('switch', { verification_id: id, method: 'flash_call' })).status).toBe(429);
    expect((await post('cancel', { verification_id: id })).status).toBe(200);
    expect((await post('cancel', { verification_id: id })).status).toBe(200);
    expect(spans('verification.switch')[1]!.attributes).toMatchObject({
      'verification.method': 'flash_call',
      'verification.outcome': 'refused',
    });
    expect(spans('verification.cancel').map((span) => span.attributes['verification.outcome'])).toEqual([
      'canceled',
      'canceled',
    ]);
  });

  it('a refusal and an upstream outage, twins apart: refused with its reason and no error status, against error with ERROR; each metered as what it was', async () => {
    const registry = new Registry();
    await boot({ metrics: { enabled: true, registry } });
    const counted = async (name: string) =>
      ((await registry.getSingleMetric(`verification_${name}`)?.get())?.values ?? []).reduce(
        (sum, v) => sum + v.value,
        0,
      );
    const phone = phoneNumber();
    for (const method of ['sms', 'flash_call'])
      expect((await post('start', { phone_number: phone, method })).status).toBe(201);
    expect((await post('start', { phone_number: phone, method: 'msgr1_otp' })).status).toBe(429);
    sb.addFault({ route: 'POST /v1/verify', kind: 'status', status: 503, count: 1 });
    const outage = await post('start', { phone_number: phoneNumber(), method: 'sms' });
    expect(outage.status).toBe(503);
    const [, , refused, failed] = spans('verification.start');
    expect({ attributes: refused!.attributes, status: refused!.status.code }).toEqual({
      attributes: expect.objectContaining({
        'verification.outcome': 'refused',
        'verification.refusal_reason': expect.any(String),
      }),
      status: SpanStatusCode.UNSET,
    });
    // What an error's span says, and nothing more: no message (one may name a number or quote the API).
    expect(failed!.attributes).toEqual({
      'verification.method': 'sms',
      'verification.cost_class': expect.any(String),
      'verification.outcome': 'error',
      'verification.refusal_reason': 'service_unavailable',
    });
    expect(failed!.status.code).toBe(SpanStatusCode.ERROR);
    expect(await counted('refusals_total')).toBe(1);
    expect(await counted('upstream_errors_total')).toBeGreaterThanOrEqual(1);
    expect(await counted('starts_total')).toBe(2);
  });

  it("the spend cap's 503 is a refusal (status unset, reason spend_cap); a failing beforeStart or assessStart hook's 503 is an error", async () => {
    await boot({
      methods: ['sms', 'flash_call'],
      limits: {
        startPerPhoneAndCaller: false,
        resendCooldownMs: false,
        spendCap: { amount: 1, windowMs: 86_400_000 },
        beforeStart: (ctx) => {
          if (ctx.phoneNumber.endsWith('0000')) throw new Error('hook down');
        },
        assessStart: (ctx) => {
          if (ctx.phoneNumber.endsWith('1111')) throw new Error('risk service down');
          return { decision: 'allow' };
        },
      },
    });
    let capped: { status: number } | undefined;
    for (let i = 0; i < 10 && capped?.status !== 503; i++)
      capped = await post('start', { phone_number: phoneNumber(), method: 'sms' });
    expect(capped).toMatchObject({ status: 503 });
    const hookFailed = await post('start', { phone_number: '+79120000000', method: 'sms' });
    expect(hookFailed.status).toBe(503);
    const all = spans('verification.start');
    const [cap, hook] = all.slice(-2);
    expect([cap!.attributes['verification.outcome'], cap!.attributes['verification.refusal_reason']]).toEqual(
      ['refused', 'spend_cap'],
    );
    expect(cap!.status.code).toBe(SpanStatusCode.UNSET);
    expect(hook!.attributes['verification.outcome']).toBe('error');
    expect(hook!.status.code).toBe(SpanStatusCode.ERROR);
    const assessFailed = await post('start', { phone_number: '+79121111111', method: 'sms' });
    expect(assessFailed).toMatchObject({ status: 503, body: { reason: 'assess_start_failed' } });
    const assess = spans('verification.start').at(-1)!;
    expect([assess.attributes['verification.outcome'], assess.status.code]).toEqual([
      'error',
      SpanStatusCode.ERROR,
    ]);
  });

  it("a test number's spans say verification.test; a real number's do not", async () => {
    const reviewer = '+79990000001';
    await boot({ testNumbers: { numbers: [{ phoneNumber: reviewer, code: '246810' }] } });
    const test = await post('start', { phone_number: reviewer, method: 'sms' });
    const wrong = await post('check', { verification_id: test.body.verification_id, code: '135791' });
    expect(wrong.status).toBe(400);
    expect((await post('check', { verification_id: test.body.verification_id, code: '246810' })).status).toBe(
      200,
    );
    const real = await post('start', { phone_number: phoneNumber(), method: 'sms' });
    expect(real.status).toBe(201);
    expect((await post('check', { verification_id: real.body.verification_id, code: '0000' })).status).toBe(
      400,
    );
    const [testStart, realStart] = spans('verification.start');
    expect(testStart!.attributes['verification.test']).toBe(true);
    expect(realStart!.attributes).not.toHaveProperty(['verification.test']);
    // A refused check of a test number says so too (an operator filters reviewers' traffic out of alerts).
    const [refused, verified, realRefused] = spans('verification.check');
    expect(refused!.attributes).toMatchObject({
      'verification.outcome': 'refused',
      'verification.test': true,
    });
    expect(verified!.attributes['verification.test']).toBe(true);
    expect(realRefused!.attributes['verification.outcome']).toBe('refused');
    expect(realRefused!.attributes).not.toHaveProperty(['verification.test']);
  });

  it("a start's purpose and its assessStart answer and reason are span attributes, refused or not; none without them", async () => {
    const risky = phoneNumber();
    await boot({
      limits: {
        resendCooldownMs: false,
        assessStart: ({ phoneNumber: number, method }) =>
          number === risky && method === 'sms'
            ? { decision: 'step_up', reason: 'sim_changed', challenge: 'captcha' }
            : { decision: 'allow', reason: 'clean' },
      },
    });
    expect(
      (await post('start', { phone_number: phoneNumber(), method: 'sms', purpose: 'login' })).status,
    ).toBe(201);
    expect((await post('start', { phone_number: risky, method: 'sms', purpose: 'step_up' })).status).toBe(
      403,
    );
    const [allowed, refused] = spans('verification.start');
    expect(allowed!.attributes).toMatchObject({
      'verification.purpose': 'login',
      'verification.assessment': 'allow',
      'verification.assessment_reason': 'clean',
    });
    expect(refused!.attributes).toMatchObject({
      'verification.purpose': 'step_up',
      'verification.assessment': 'step_up',
      'verification.assessment_reason': 'sim_changed',
      'verification.outcome': 'refused',
    });
    exporter.reset();
    await host!.close();
    await boot();
    expect((await post('start', { phone_number: phoneNumber(), method: 'sms' })).status).toBe(201);
    const [plain] = spans('verification.start');
    expect(plain!.attributes).not.toHaveProperty(['verification.purpose']);
    expect(plain!.attributes).not.toHaveProperty(['verification.assessment']);
  });

  it('a start handed back its pending session says so: outcome resumed, its method, no second session', async () => {
    await boot();
    const phone = phoneNumber();
    const first = await post('start', { phone_number: phone, method: 'sms' });
    const again = await post('start', { phone_number: phone, method: 'sms' });
    expect(again.body).toMatchObject({ verification_id: first.body.verification_id, resumed: true });
    expect(sb.sessionsFor(phone)).toHaveLength(1);
    const [paid, resumed] = spans('verification.start');
    expect(paid!.attributes).toMatchObject({ 'verification.outcome': 'sent' });
    expect([resumed!.status.code, resumed!.attributes]).toEqual([
      SpanStatusCode.OK,
      expect.objectContaining({ 'verification.method': 'sms', 'verification.outcome': 'resumed' }),
    ]);
  });

  it("every span of a test number's journey says verification.test: status refresh, switch, cancel, reconcile", async () => {
    const reviewer = '+79990000001';
    await boot({
      testNumbers: { numbers: [{ phoneNumber: reviewer, code: '246810' }] },
      limits: { resendCooldownMs: false },
    });
    const test = await post('start', { phone_number: reviewer, method: 'sms' });
    const id = String(test.body.verification_id);
    const status = await call(host!.url, 'GET', `/verification/status/${id}`, undefined, { 'x-user': 'u1' });
    expect(status.status).toBe(200);
    expect((await post('switch', { verification_id: id, method: 'flash_call' })).status).toBe(201);
    const second = await post('start', { phone_number: reviewer, method: 'msgr1_otp' });
    // A repeat cancel (the journey already canceled) is its own path, and its own span.
    for (let i = 0; i < 2; i++) expect((await post('cancel', { verification_id: id })).status).toBe(200);
    await sb.advance(16_000);
    await reconciler(host!).runOnce();
    expect(spans('verification.cancel')).toHaveLength(2);
    // As text: an unset attribute must show (toEqual would read [undefined] as []).
    const flags = (name: string) => spans(name).map((span) => String(span.attributes['verification.test']));
    expect(second.status).toBe(201);
    // Each span name met at least once, every one of them flagged (the refresh also under the reconciler).
    for (const name of [
      'verification.status_refresh',
      'verification.switch',
      'verification.cancel',
      'verification.reconcile',
    ]) {
      expect({ name, met: flags(name).length > 0 }).toEqual({ name, met: true });
      expect({ name, flags: flags(name).filter((flag) => flag !== 'true') }).toEqual({ name, flags: [] });
    }
  });

  it("a webhook's span is active while the host's listeners run: their spans join its trace", async () => {
    await boot();
    const seen: { active: Span | undefined; child: ReadableSpan | undefined }[] = [];
    host!.app.get(EventEmitter2).on('verification.verified', async () => {
      const active = trace.getActiveSpan();
      trace.getTracer('host').startActiveSpan('host.listener', (span) => span.end());
      seen.push({ active, child: undefined });
    });
    const phone = phoneNumber();
    await post('start', { phone_number: phone, method: 'sms' });
    const [session] = sb.sessionsFor(phone);
    await sb.deliver(session!.request_id);
    await apiCheck(sb, apiKey, session!.request_id, String(sb.getSession(session!.request_id)!.code));
    await sb.webhooksIdle();

    const webhook = spans('verification.webhook').find(
      (span) => span.attributes['verification.outcome'] === 'processed',
    );
    expect(webhook).toBeDefined();
    // A delivery consumed from the API, handled: a CONSUMER span with status OK.
    expect([webhook!.kind, webhook!.status.code]).toEqual([SpanKind.CONSUMER, SpanStatusCode.OK]);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.active?.spanContext().spanId).toBe(webhook!.spanContext().spanId);
    const listener = spans('host.listener')[0]!;
    expect(listener.spanContext().traceId).toBe(webhook!.spanContext().traceId);
    expect(listener.parentSpanContext?.spanId).toBe(webhook!.spanContext().spanId);
  });
});

describe('OpenTelemetry without an SDK', () => {
  it('the module works and nothing is exported: the API alone is a no-op', async () => {
    trace.disable();
    exporter.reset();
    const sb = await VerificationSandbox.start({ port: 0, freezeClock: true });
    const host = await createTestApp({ platform: 'express', module: moduleOptions(sb) });
    try {
      const started = await call(host.url, 'POST', '/verification/start', {
        phone_number: phoneNumber(),
        method: 'sms',
      });
      expect(started.status).toBe(201);
      expect(exporter.getFinishedSpans()).toEqual([]);
    } finally {
      await host.close();
      await sb.close();
    }
  });
});
