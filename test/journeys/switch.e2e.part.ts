/**
 * `POST /{prefix}/switch` and the status answer of a journey: the next (or a named) method for the
 * same number under the same verification_id, within the first method's resend cooldown, held by
 * the journey's ceilings and the policy's fallback timeouts.
 */
import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import type { VerificationClientError } from '../../src/core/verification.errors.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { gatedStore, type GatedStore, type Hold } from '../test-numbers/gated-store.js';
import { openSse } from '../support/sse-client.js';
import { call, PLATFORMS } from '../support/verification-app.js';
import {
  apiCheck,
  cancel,
  check,
  freshPhone,
  journeyFixture,
  journeyHost,
  OWNER,
  problem,
  sessionIds,
  start,
  status,
  switchMethod,
} from './journey-host.js';

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe.each(PLATFORMS)('journeys: switch (%s)', (platform) => {
  const fx = journeyFixture();

  it('the status answer tells the journey; a switch moves it to the next method under the same verification_id', async () => {
    const host = await journeyHost(fx, platform);
    const phone = freshPhone();
    const t0 = fx.sb.now();
    const first = await start(host, { phone_number: phone, method: 'sms' });
    const id = first.body.verification_id;
    expect((await status(host, id)).body).toMatchObject({
      verification_id: id,
      method: 'sms',
      status: 'sent',
      methods_tried: ['sms'],
      // By price, without the method tried; all fit under the 6 RUB ceiling with the SMS's 3.
      switch_methods: ['reverse_flash_call', 'flash_call', 'msgr1_otp', 'msgr2_bot', 'operator_id'],
      fallback_available_at: iso(t0 + 60_000),
    });

    await fx.sb.advance(10_000);
    const moved = await switchMethod(host, id);
    expect(moved.status).toBe(201);
    expect(moved.body).toMatchObject({
      verification_id: id,
      method: 'reverse_flash_call',
      status: 'sent',
      phone_number: phone,
      awaiting_code: false,
      resumed: false,
    });
    expect(moved.body).not.toHaveProperty('cost');
    const [smsId, callId] = sessionIds(fx.sb, phone);
    expect(JSON.stringify(moved.body)).not.toContain(callId);
    expect((await status(host, id)).body).toMatchObject({
      method: 'reverse_flash_call',
      status: 'sent',
      number_to_call: moved.body.number_to_call,
      awaiting_code: false,
      methods_tried: ['sms', 'reverse_flash_call'],
      switch_methods: ['flash_call', 'msgr1_otp', 'msgr2_bot', 'operator_id'],
      fallback_available_at: iso(t0 + 10_000 + 45_000),
    });

    // The user calls: the journey is verified, and over.
    await fx.sb.call(callId!, phone);
    await fx.sb.webhooksIdle();
    const done = await status(host, id);
    expect(done.body).toMatchObject({ status: 'verified', method: 'reverse_flash_call', switch_methods: [] });
    expect(done.body).not.toHaveProperty('fallback_available_at');
    expect(fx.sb.getSession(smsId!)!.status).toBe('sent');
  });

  it("a switch within the first method's resend cooldown goes out; the same method is still a resend; the per-number limits hold", async () => {
    const host = await journeyHost(fx, platform, {
      limits: { startPerPhoneAndCaller: { points: 3, windowMs: HOUR } },
      orchestration: { maxSteps: 5 },
    });
    const phone = freshPhone();
    // A caller without an owner (its IP is its caller key): nothing is handed back, everything is counted.
    const first = await start(host, { phone_number: phone, method: 'sms' }, null);
    expect(first.status).toBe(201);
    expect(first.body.resend_available_at).toBe(iso(fx.sb.now() + 60_000));
    await fx.sb.advance(5000);
    const moved = await switchMethod(host, first.body.verification_id, undefined, null);
    expect(moved.status).toBe(201);
    expect(moved.body.resend_available_at).toBe(iso(fx.sb.now() + 60_000));
    // Starting SMS again is a resend: it waits out the SMS's cooldown.
    const resend = await start(host, { phone_number: phone, method: 'sms' }, null);
    expect(problem(resend)).toMatchObject({ status: 429, error_code: 'rate_limit_exceeded' });
    expect(resend.body.reason).toBe('resend_cooldown');
    // The third start of the number by this caller in the hour is the last one the limit allows.
    expect((await switchMethod(host, first.body.verification_id, undefined, null)).status).toBe(201);
    const limited = await switchMethod(host, first.body.verification_id, undefined, null);
    expect(problem(limited)).toMatchObject({ status: 429, error_code: 'rate_limit_exceeded' });
    expect(limited.body.reason).toBe('start_phone_caller_limit');
    expect(fx.sb.sessionsFor(phone).map((s) => s.method)).toEqual([
      'flash_call',
      'reverse_flash_call',
      'sms',
    ]);
    // The refused switch gave its step back: the journey can still go on once the limit allows.
    expect((await status(host, first.body.verification_id, null)).body.methods_tried).toEqual([
      'sms',
      'reverse_flash_call',
      'flash_call',
    ]);
  });

  it("a switch's paid start and its refusal are counted as a start's are, on the host's /metrics", async () => {
    const registry = new Registry();
    const host = await journeyHost(fx, platform, {
      metrics: { enabled: true, registry },
      limits: { startPerPhoneAndCaller: { points: 2, windowMs: HOUR } },
    });
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'sms' }, null);
    expect(first.status).toBe(201);
    await fx.sb.advance(5000);
    expect((await switchMethod(host, first.body.verification_id, undefined, null)).status).toBe(201);
    // The third start of the number by this caller in the hour: past the limit, a refused switch.
    const limited = await switchMethod(host, first.body.verification_id, undefined, null);
    expect(limited.body.reason).toBe('start_phone_caller_limit');
    const scraped = await registry.metrics();
    expect(scraped).toContain('verification_starts_total{method="sms"} 1');
    expect(scraped).toContain('verification_starts_total{method="reverse_flash_call"} 1');
    expect(scraped).toContain('verification_refusals_total{reason="rate_limit"} 1');
  });

  it('past maxSteps or maxCost a switch is 409 journey_limit_reached, and nothing is sent', async () => {
    const host = await journeyHost(fx, platform, { orchestration: { maxSteps: 2, maxCost: 3.5 } });
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'sms' });
    const id = first.body.verification_id;
    // 3.00 is held by the pending SMS: only the 0.25 call fits under 3.50.
    expect((await status(host, id)).body.switch_methods).toEqual(['reverse_flash_call']);
    const dear = await switchMethod(host, id, 'flash_call');
    expect(problem(dear)).toMatchObject({ status: 409, error_code: 'journey_limit_reached' });
    expect(dear.body).toMatchObject({
      limit: 'max_cost',
      detail: 'Another method would cost this verification more than it may',
    });
    expect((await switchMethod(host, id)).body.method).toBe('reverse_flash_call');
    const posts = fx.sb.requestCount('POST /v1/verify');
    const third = await switchMethod(host, id);
    expect(problem(third)).toMatchObject({ status: 409, error_code: 'journey_limit_reached' });
    expect(third.body).toMatchObject({
      limit: 'max_steps',
      detail: 'This verification has tried as many methods as it may',
    });
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(posts);
    const last = await status(host, id);
    expect(last.body).toMatchObject({ methods_tried: ['sms', 'reverse_flash_call'], switch_methods: [] });
    expect(last.body).not.toHaveProperty('fallback_available_at');

    // An SMS that was never delivered is not charged: once it expired, it no longer counts.
    const other = await start(host, { phone_number: freshPhone(), method: 'sms' });
    await fx.sb.advance(300_000);
    const expired = await status(host, other.body.verification_id);
    expect(expired.body).toMatchObject({
      status: 'expired',
      fallback_available_at: iso(fx.sb.now() - 240_000),
    });
    expect(expired.body.switch_methods).toEqual([
      'reverse_flash_call',
      'flash_call',
      'msgr1_otp',
      'msgr2_bot',
      'operator_id',
    ]);
    expect((await switchMethod(host, other.body.verification_id, 'operator_id')).status).toBe(201);
  });

  it('a method that may not be skipped is held until its fallback time (409 fallback_not_available, Retry-After); a failed one is left at once', async () => {
    const host = await journeyHost(fx, platform, {
      orchestration: { skippable: ['reverse_flash_call'], timeoutSeconds: { sms: 40 } },
    });
    const t0 = fx.sb.now();
    const first = await start(host, { phone_number: freshPhone(), method: 'sms' });
    const id = first.body.verification_id;
    await fx.sb.advance(15_000);
    const early = await switchMethod(host, id);
    expect(problem(early)).toMatchObject({
      status: 409,
      error_code: 'fallback_not_available',
      retry_after: '25',
    });
    expect(early.body.fallback_available_at).toBe(iso(t0 + 40_000));
    expect(early.body.detail).toBe('Another method can be offered once this one had its time');
    expect((await status(host, id)).body.fallback_available_at).toBe(iso(t0 + 40_000));
    await fx.sb.advance(25_000);
    const moved = await switchMethod(host, id);
    expect(moved.status).toBe(201);
    expect(moved.body.method).toBe('reverse_flash_call');
    // The call is skippable: the next switch need not wait.
    expect((await switchMethod(host, id)).body.method).toBe('flash_call');

    // The SMS fails upstream before its time: the fallback is available at once.
    const phone = freshPhone();
    const failing = await start(host, { phone_number: phone, method: 'sms' });
    await fx.sb.advance(1000);
    await fx.sb.fail(sessionIds(fx.sb, phone)[0]!);
    await fx.sb.webhooksIdle();
    const failed = await status(host, failing.body.verification_id);
    expect(failed.body).toMatchObject({ status: 'failed', fallback_available_at: iso(fx.sb.now()) });
    expect((await switchMethod(host, failing.body.verification_id)).status).toBe(201);
  });

  it("fallback_not_available's Retry-After is never shorter than the real wait: part seconds round up, one tick before the time is 1 s, at the time the switch goes", async () => {
    const host = await journeyHost(fx, platform, {
      orchestration: { skippable: ['reverse_flash_call'], timeoutSeconds: { sms: 40 } },
    });
    const t0 = fx.sb.now();
    const id = (await start(host, { phone_number: freshPhone(), method: 'sms' })).body.verification_id;
    const retryAfter = async () => {
      const refused = await switchMethod(host, id);
      expect(problem(refused)).toMatchObject({ status: 409, error_code: 'fallback_not_available' });
      return problem(refused).retry_after;
    };
    // 24.5 s left: a page waiting 24 s would be refused again.
    await fx.sb.advance(15_500);
    expect(await retryAfter()).toBe('25');
    // One tick before the fallback time: 1 s, never 0.
    await fx.sb.advance(40_000 - 1 - (fx.sb.now() - t0));
    expect(await retryAfter()).toBe('1');
    await fx.sb.advance(1);
    expect((await switchMethod(host, id)).status).toBe(201);
  });

  it('with every method tried, a switch is 409 journey_limit_reached (methods), saying none is left; nothing is sent', async () => {
    const host = await journeyHost(fx, platform, { methods: ['sms', 'flash_call'] });
    const id = (await start(host, { phone_number: freshPhone(), method: 'sms' })).body.verification_id;
    expect((await switchMethod(host, id)).body.method).toBe('flash_call');
    const posts = fx.sb.requestCount('POST /v1/verify');
    const none = await switchMethod(host, id);
    expect(problem(none)).toMatchObject({ status: 409, error_code: 'journey_limit_reached' });
    expect(none.body).toMatchObject({
      limit: 'methods',
      detail: 'No other method is left for this verification',
    });
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(posts);
  });

  it('a second switch while the first waits for the API is 409 switch_in_progress (Retry-After: 1, saying why); the first lands', async () => {
    const host = await journeyHost(fx, platform);
    const id = (await start(host, { phone_number: freshPhone(), method: 'sms' })).body.verification_id;
    fx.sb.resetRequestCounts();
    fx.sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 600, count: 1 });
    const first = switchMethod(host, id);
    const until = Date.now() + 5000;
    while (fx.sb.requestCount('POST /v1/verify') === 0 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 10));
    const second = await switchMethod(host, id);
    expect(problem(second)).toEqual({ status: 409, error_code: 'switch_in_progress', retry_after: '1' });
    expect(second.body.detail).toBe('Another switch of this verification is under way');
    expect((await first).body.method).toBe('reverse_flash_call');
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(1);
  });

  it('a named method the journey may not switch to is 400 method_not_available, with the methods it may; msgr1 names msgr1_otp', async () => {
    const host = await journeyHost(fx, platform, { methods: ['sms', 'flash_call', 'msgr1_otp'] });
    const first = await start(host, { phone_number: freshPhone(), method: 'sms' });
    const id = first.body.verification_id;
    fx.sb.resetRequestCounts();
    for (const method of ['voice', 'reverse_flash_call', 'sms', 'carrier_pigeon', 'SMS']) {
      const res = await switchMethod(host, id, method);
      expect(problem(res)).toMatchObject({ status: 400, error_code: 'method_not_available' });
      expect(res.body.available_methods).toEqual(['flash_call', 'msgr1_otp']);
      expect(res.body.detail).toBe(`Method "${method}" cannot be switched to here`);
    }
    for (const body of [
      { verification_id: id, method: 7 },
      { verification_id: id, extra: 'x' },
      { method: 'sms' },
    ])
      expect(
        problem(await call(host.url, 'POST', '/verification/switch', body, { 'x-user': OWNER })),
      ).toMatchObject({ status: 400, error_code: 'validation_error' });
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(0);
    // The host's own call with a name the route's 40-character bound never lets through: 40 of it echoed.
    const long = `m${'x'.repeat(38)}z${'!'.repeat(500)}`;
    const refused = await host.app
      .get(VerificationService)
      .switchMethod({ verificationId: id as string, method: long, owner: OWNER })
      .then(
        () => undefined,
        (error: unknown) => error as VerificationClientError,
      );
    expect(refused?.toProblem()).toMatchObject({
      status: 400,
      error_code: 'method_not_available',
      detail: `Method "${long.slice(0, 40)}" cannot be switched to here`,
    });
    const named = await switchMethod(host, id, 'msgr1');
    expect(named.body).toMatchObject({ method: 'msgr1_otp', awaiting_code: true });
    expect((await switchMethod(host, id, 'auto')).body.method).toBe('flash_call');
  });

  it('a switched-away method that completes makes the journey verified: no switch, no cancel, no check, and the host reads the number', async () => {
    const host = await journeyHost(fx, platform);
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'sms' });
    const id = first.body.verification_id;
    const [smsId] = sessionIds(fx.sb, phone);
    await fx.sb.deliver(smsId!);
    expect((await switchMethod(host, id)).body.method).toBe('reverse_flash_call');
    // The SMS arrived after all, and the user typed it where the bank's app read it.
    await apiCheck(fx.sb, fx.apiKey, smsId!, String(fx.sb.getSession(smsId!)!.code));
    await fx.sb.webhooksIdle();
    const done = await status(host, id);
    expect(done.body).toMatchObject({
      status: 'verified',
      method: 'sms',
      methods_tried: ['sms', 'reverse_flash_call'],
      switch_methods: [],
    });
    for (const res of [await switchMethod(host, id), await cancel(host, id), await check(host, id, '1234')]) {
      expect(problem(res)).toMatchObject({ status: 409, error_code: 'not_pending' });
      expect(res.body.verification_status).toBe('verified');
    }
    const service = host.app.get(VerificationService);
    await expect(service.getVerifiedPhone(id as string, OWNER)).resolves.toBe(phone);
    await expect(service.getVerifiedPhone(id as string, 'someone-else')).resolves.toBeNull();
  });

  it('a handle of a journey of one step works as before: status, check; after a switch the code is the new method’s', async () => {
    const host = await journeyHost(fx, platform);
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'flash_call' });
    const id = first.body.verification_id;
    expect((await status(host, id)).body).toMatchObject({
      method: 'flash_call',
      methods_tried: ['flash_call'],
      awaiting_code: true,
    });
    const moved = await switchMethod(host, id, 'sms');
    expect(moved.body).toMatchObject({ method: 'sms', awaiting_code: true });
    const [flashId, smsId] = sessionIds(fx.sb, phone);
    await fx.sb.deliver(flashId!);
    await fx.sb.deliver(smsId!);
    const wrong = await check(host, id, String(fx.sb.getSession(flashId!)!.code));
    expect(problem(wrong)).toMatchObject({ status: 400, error_code: 'invalid_code' });
    const right = await check(host, id, String(fx.sb.getSession(smsId!)!.code));
    expect(right.body).toEqual({ verification_id: id, status: 'verified', verified: true });
    await expect(host.app.get(VerificationService).getVerifiedPhone(id as string, OWNER)).resolves.toBe(
      phone,
    );
  });

  it('a status stream follows the journey to its new method, and ends when it is verified', async () => {
    const host = await journeyHost(fx, platform);
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'sms' });
    const id = first.body.verification_id as string;
    const opened = await openSse(`${host.url}/verification/status/${id}/events`, { 'x-user': OWNER });
    expect(opened.status).toBe(200);
    const stream = opened.stream!;
    try {
      await stream.statusCount(1);
      const moved = await switchMethod(host, id);
      await stream.statusCount(2);
      const [, callId] = sessionIds(fx.sb, phone);
      await fx.sb.call(callId!, phone);
      await stream.ends();
      expect(
        stream.statuses().map((s) => [s.method, s.status, (s.methods_tried as string[]).length]),
      ).toEqual([
        ['sms', 'sent', 1],
        ['reverse_flash_call', 'sent', 2],
        ['reverse_flash_call', 'verified', 2],
      ]);
      expect(stream.statuses()[1]!.number_to_call).toBe(moved.body.number_to_call);
      // The stream hands the page the journey's token too (a switch made in another tab).
      expect(stream.statuses()[0]).not.toHaveProperty('journey_token');
      expect(stream.statuses()[1]!.journey_token).toBe(moved.body.journey_token);
    } finally {
      stream.close();
    }
  });

  it('the host reads a journey’s verified number from the step that verified it, newest first: the steps it left are not asked upstream', async () => {
    const host = await journeyHost(fx, platform);
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'sms' });
    const id = first.body.verification_id as string;
    await fx.sb.advance(10_000);
    expect((await switchMethod(host, id, 'reverse_flash_call')).status).toBe(201);
    const [, callId] = sessionIds(fx.sb, phone);
    await fx.sb.call(callId!, phone);
    await fx.sb.webhooksIdle();
    expect((await status(host, id)).body).toMatchObject({ status: 'verified', method: 'reverse_flash_call' });
    // Past the SMS's poll interval: were it asked, it would be read from the API.
    await fx.sb.advance(10_000);
    const before = fx.sb.requestCount('GET /v1/verify/:id');
    await expect(host.app.get(VerificationService).getVerifiedPhone(id, OWNER)).resolves.toBe(phone);
    expect(fx.sb.requestCount('GET /v1/verify/:id')).toBe(before);
  });

  it('a start resumed after a switch answers the journey’s current step, under the verification_id the frontend holds', async () => {
    // Protection on: an identical pending start of the same owner is handed back.
    const host = await journeyHost(fx, platform, { limits: { enabled: true } });
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'sms' });
    const id = first.body.verification_id;
    await fx.sb.advance(10_000);
    const moved = await switchMethod(host, id, 'flash_call');
    expect(moved.body).toMatchObject({ verification_id: id, method: 'flash_call' });
    // The page reloads and starts SMS again, without and then with its device hint: the SMS session is
    // pending, so it is resumed, and the journey keeps its steps (the hint does not make it one step again).
    const plain = await start(host, { phone_number: phone, method: 'sms' });
    expect(plain.body).toMatchObject({ verification_id: id, method: 'flash_call', resumed: true });
    const again = await start(host, { phone_number: phone, method: 'sms', device: 'mobile' });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ verification_id: id, method: 'flash_call', resumed: true });
    expect((await status(host, again.body.verification_id)).body).toMatchObject({ method: 'flash_call' });
    // The code the answer asks for is the flash call's, and it verifies.
    const [, callId] = sessionIds(fx.sb, phone);
    await fx.sb.deliver(callId!);
    const checked = await check(host, again.body.verification_id, fx.sb.getSession(callId!)!.code!);
    expect(checked.body).toMatchObject({ verification_id: id, verified: true });
    expect(fx.sb.sessionsFor(phone)).toHaveLength(2);
  });

  it('with a resend cooldown longer than the session, a reload resumes it a tick before its expiry, never at it', async () => {
    const host = await journeyHost(fx, platform, { limits: { enabled: true, resendCooldownMs: HOUR } });
    for (const at of [-1, 0]) {
      const phone = freshPhone();
      const first = await start(host, { phone_number: phone, method: 'sms' });
      const [smsId] = sessionIds(fx.sb, phone);
      await fx.sb.advance(Date.parse(fx.sb.getSession(smsId!)!.expires_at) + at - fx.sb.now());
      const again = await start(host, { phone_number: phone, method: 'sms' });
      if (at < 0)
        expect(again.body).toMatchObject({ verification_id: first.body.verification_id, resumed: true });
      // Expired: nothing to hand back, and the cooldown still holds the number for this caller.
      else
        expect({ status: again.status, reason: again.body.reason, resumed: again.body.resumed }).toEqual({
          status: 429,
          reason: 'resend_cooldown',
          resumed: undefined,
        });
    }
  });

  it('a reload that resumes with another device hint leaves the journey as it was: its steps and its first hint', async () => {
    const host = await journeyHost(fx, platform, {
      limits: { enabled: true },
      orchestration: { exclude: { desktop: ['msgr2_bot'] } },
    });
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'sms', device: 'mobile' });
    const id = first.body.verification_id;
    await fx.sb.advance(10_000);
    expect((await switchMethod(host, id, 'flash_call')).status).toBe(201);
    const before = (await status(host, id)).body;
    expect(before).toMatchObject({ method: 'flash_call', methods_tried: ['sms', 'flash_call'] });
    expect(before.switch_methods).toContain('msgr2_bot');
    // The page reloads on a desktop browser and starts SMS again: the pending SMS is handed back.
    const again = await start(host, { phone_number: phone, method: 'sms', device: 'desktop' });
    expect(again.body).toMatchObject({ verification_id: id, method: 'flash_call', resumed: true });
    const after = (await status(host, id)).body;
    expect(after).toMatchObject({ method: 'flash_call', methods_tried: ['sms', 'flash_call'] });
    // The mobile journey's switch methods, not a desktop one's.
    expect(after.switch_methods).toEqual(before.switch_methods);
  });

  describe('a move that lands between a switch’s read of the journey and its claim of the step', () => {
    /** A host whose store holds the switch at `where` until `release`; the rest passes through. */
    async function heldAt(where: (gated: GatedStore) => Hold) {
      const memory = new MemoryStore({ clock: () => fx.sb.now() });
      const gated = gatedStore(memory);
      const host = await journeyHost(fx, platform, { store: gated.store });
      const id = (await start(host, { phone_number: freshPhone(), method: 'sms' })).body.verification_id;
      await fx.sb.advance(5000);
      const held = where(gated);
      const switching = switchMethod(host, id);
      await held.reached;
      return { memory, host, id, held, switching };
    }

    it('a cancel: the switch is refused as the canceled journey’s, and nothing is paid', async () => {
      // Its claim's write held: the cancel claims the step, cancels and gives the step back.
      const { memory, host, id, held, switching } = await heldAt((gated) =>
        gated.hold('write', (key) => key.startsWith('journey-step:')),
      );
      try {
        expect((await cancel(host, id)).body).toEqual({ verification_id: id, status: 'canceled' });
        fx.sb.resetRequestCounts();
        held.release();
        const switched = await switching;
        expect(problem(switched)).toMatchObject({ status: 409, error_code: 'not_pending' });
        expect(switched.body.verification_status).toBe('canceled');
        expect(fx.sb.requestCount('POST /v1/verify')).toBe(0);
        expect((await status(host, id)).body.status).toBe('canceled');
      } finally {
        held.release();
        await Promise.all(fx.hosts.splice(0).map((h) => h.close()));
        await memory.close();
      }
    });

    it('another switch, whose claim has expired since: the held one is refused as in progress, nothing paid', async () => {
      // Its read of the journey held: the other switch takes the step, and its claim lapses.
      const { memory, host, id, held, switching } = await heldAt((gated) =>
        gated.holdResult('get', (key) => key.startsWith('journey:')),
      );
      try {
        const other = await switchMethod(host, id);
        expect(other.status).toBe(201);
        // Past the other switch's claim of the step (its POST's longest time and a margin).
        await fx.sb.advance(180_000);
        fx.sb.resetRequestCounts();
        held.release();
        expect(problem(await switching)).toMatchObject({ status: 409, error_code: 'switch_in_progress' });
        expect(fx.sb.requestCount('POST /v1/verify')).toBe(0);
        expect((await status(host, id)).body.methods_tried).toEqual(['sms', other.body.method]);
      } finally {
        held.release();
        await Promise.all(fx.hosts.splice(0).map((h) => h.close()));
        await memory.close();
      }
    });
  });
});
