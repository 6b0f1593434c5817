/**
 * `method: "auto"` (or no method) on start: the orchestration policy picks the method, by the
 * account's current prices (cheapest first), or by the host's fixed order, less what the device
 * hint excludes.
 */
import { describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { CapturingLogger } from '../support/log-capture.js';
import { REMOTE, slowWritesStore } from '../support/round-trip-store.js';
import { PLATFORMS } from '../support/verification-app.js';
import {
  freshPhone,
  journeyFixture,
  journeyHost,
  problem,
  start,
  status,
  switchMethod,
} from './journey-host.js';

/** A MemoryStore whose operations `fails` picks reject, as a store that lost its connection would. */
function failingStore(
  clock: () => number,
  fails: (method: string, args: unknown[]) => boolean,
): { store: MemoryStore; failed: () => number } {
  const inner = new MemoryStore({ clock });
  let failed = 0;
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function' || !REMOTE.has(String(property))) return value;
      return (...args: unknown[]) => {
        if (!fails(String(property), args))
          return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        failed += 1;
        return Promise.reject(new Error('store connection lost'));
      };
    },
  });
  return { store, failed: () => failed };
}

describe.each(PLATFORMS)('journeys: automatic start (%s)', (platform) => {
  const fx = journeyFixture();

  it("auto, and a start without a method, take the cheapest method the account offers at today's prices", async () => {
    const host = await journeyHost(fx, platform, { pricesTtlMs: 60_000 });
    const auto = await start(host, { phone_number: freshPhone(), method: 'auto' });
    expect(auto.status).toBe(201);
    // The sandbox's price list: reverse flash call 0.25, flash call 0.80, ..., SMS 3.00.
    expect(auto.body).toMatchObject({ method: 'reverse_flash_call', status: 'sent', resumed: false });
    expect(String(auto.body.number_to_call)).toMatch(/^\+7\d{10}$/);
    const none = await start(host, { phone_number: freshPhone() });
    expect(none.body.method).toBe('reverse_flash_call');

    // Prices change upstream: once the module's price cache is stale, auto follows them.
    await fx.sb.updateAccount(fx.apiKey, { prices: { reverse_flash_call: 2.5, flash_call: 0.5, sms: 0.4 } });
    expect((await start(host, { phone_number: freshPhone() })).body.method).toBe('reverse_flash_call');
    await fx.sb.advance(60_000);
    const phone = freshPhone();
    const cheaper = await start(host, { phone_number: phone, method: 'auto' });
    expect(cheaper.body.method).toBe('sms');
    // The journey's other methods follow the same order.
    expect((await status(host, cheaper.body.verification_id)).body.switch_methods).toEqual([
      'flash_call',
      'msgr1_otp',
      'msgr2_bot',
      'operator_id',
      'reverse_flash_call',
    ]);
    expect(fx.sb.sessionsFor(phone).map((s) => s.method)).toEqual(['sms']);
  });

  it('orchestration.methods fixes the order: the first of them the deployment offers, and only them', async () => {
    const host = await journeyHost(fx, platform, {
      methods: ['flash_call', 'sms', 'reverse_flash_call'],
      orchestration: { methods: ['operator_id', 'sms', 'flash_call'] },
    });
    const first = await start(host, { phone_number: freshPhone(), method: 'auto' });
    // operator_id is not offered here: sms is the first of the fixed order that is.
    expect(first.body.method).toBe('sms');
    const journey = await status(host, first.body.verification_id);
    expect(journey.body).toMatchObject({ methods_tried: ['sms'], switch_methods: ['flash_call'] });
    expect((await switchMethod(host, first.body.verification_id)).body.method).toBe('flash_call');
    // reverse_flash_call is offered, but not in the policy's list: never switched to.
    const last = await status(host, first.body.verification_id);
    expect(last.body).toMatchObject({ methods_tried: ['sms', 'flash_call'], switch_methods: [] });
    expect(last.body).not.toHaveProperty('fallback_available_at');
    expect(problem(await switchMethod(host, first.body.verification_id))).toMatchObject({
      status: 409,
      error_code: 'journey_limit_reached',
    });
  });

  it('the device hint leaves out what the policy excludes for that device, for the start and its switches', async () => {
    const host = await journeyHost(fx, platform, {
      orchestration: { exclude: { desktop: ['reverse_flash_call', 'flash_call'], mobile: ['msgr2_bot'] } },
    });
    const desktop = await start(host, { phone_number: freshPhone(), device: 'desktop' });
    expect(desktop.body.method).toBe('msgr1_otp');
    expect((await status(host, desktop.body.verification_id)).body.switch_methods).toEqual([
      'msgr2_bot',
      'operator_id',
      'sms',
    ]);
    // A desktop user cannot tap a tel: link: naming the call is refused for this journey.
    const named = await switchMethod(host, desktop.body.verification_id, 'reverse_flash_call');
    expect(problem(named)).toMatchObject({ status: 400, error_code: 'method_not_available' });
    expect(named.body.available_methods).toEqual(['msgr2_bot', 'operator_id', 'sms']);
    expect((await switchMethod(host, desktop.body.verification_id)).body.method).toBe('msgr2_bot');

    const mobile = await start(host, { phone_number: freshPhone(), method: 'auto', device: 'mobile' });
    expect(mobile.body.method).toBe('reverse_flash_call');
    expect((await status(host, mobile.body.verification_id)).body.switch_methods).toEqual([
      'flash_call',
      'msgr1_otp',
      'operator_id',
      'sms',
    ]);
    // A named method at start is the host's frontend's choice: the hint does not overrule it.
    expect(
      (await start(host, { phone_number: freshPhone(), method: 'flash_call', device: 'desktop' })).status,
    ).toBe(201);
  });

  it('a device other than mobile or desktop is 400, as is a device whose every method is excluded; nothing is sent', async () => {
    const host = await journeyHost(fx, platform, {
      methods: ['sms', 'flash_call'],
      orchestration: { exclude: { desktop: ['sms', 'flash_call'] } },
    });
    fx.sb.resetRequestCounts();
    for (const device of ['tablet', 'MOBILE', '']) {
      const res = await start(host, { phone_number: freshPhone(), device });
      expect(problem(res)).toMatchObject({ status: 400, error_code: 'validation_error' });
    }
    const none = await start(host, { phone_number: freshPhone(), device: 'desktop' });
    expect(problem(none)).toMatchObject({ status: 400, error_code: 'method_not_available' });
    // The refusal names what the account offers, and why none of it is offered here.
    expect(none.body).toMatchObject({
      available_methods: ['sms', 'flash_call'],
      detail: 'No method is offered here for this device',
    });
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(0);
    expect((await start(host, { phone_number: freshPhone(), device: 'mobile' })).body.method).toBe(
      'flash_call',
    );
  });

  it('the start answers once its device hint is kept: a switch right after it, on a slow store, still leaves out what the hint excludes', async () => {
    const slow = slowWritesStore(
      () => fx.sb.now(),
      (method, [key]) => method === 'set' && String(key).startsWith('journey:'),
      { once: true },
    );
    try {
      const host = await journeyHost(fx, platform, {
        store: slow.store,
        orchestration: { exclude: { desktop: ['reverse_flash_call', 'flash_call'] } },
      });
      const first = await start(host, { phone_number: freshPhone(), method: 'sms', device: 'desktop' });
      expect(first.status).toBe(201);
      expect(slow.held()).toBe(1);
      const moved = await switchMethod(host, first.body.verification_id);
      slow.land();
      expect(moved.body).toMatchObject({ status: 'sent', method: 'msgr1_otp' });
      expect((await status(host, first.body.verification_id)).body.switch_methods).toEqual([
        'msgr2_bot',
        'operator_id',
      ]);
    } finally {
      slow.land();
      await Promise.all(fx.hosts.splice(0).map((host) => host.close()));
      await slow.inner.close();
    }
  });

  it('a purpose whose methods the account does not offer now: auto is 400 method_not_available naming the purpose, nothing sent', async () => {
    const host = await journeyHost(
      fx,
      platform,
      { purposes: { login: { methods: ['sms', 'flash_call'] } } },
      { enabledMethods: ['reverse_flash_call', 'msgr1_otp'] },
    );
    fx.sb.resetRequestCounts();
    const refused = await start(host, { phone_number: freshPhone(), purpose: 'login' });
    expect(problem(refused)).toMatchObject({ status: 400, error_code: 'method_not_available' });
    expect(refused.body).toMatchObject({
      available_methods: [],
      purpose: 'login',
      detail: 'No method is offered here for purpose "login"',
    });
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(0);
  });

  it("a device hint the store fails to keep loses only the hint: the start answers 201, the operator's log says why", async () => {
    const broken = failingStore(
      () => fx.sb.now(),
      (method, [key]) => method === 'set' && String(key).startsWith('journey:'),
    );
    const logger = new CapturingLogger();
    const host = await journeyHost(
      fx,
      platform,
      { store: broken.store, logLevels: ['error'] },
      {},
      { logger },
    );
    const started = await start(host, { phone_number: freshPhone(), method: 'sms', device: 'desktop' });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ method: 'sms', status: 'sent' });
    expect(broken.failed()).toBeGreaterThan(0);
    const lines = logger.lines.filter((line) => line.includes('store connection lost'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error start failed\b/);
    expect(lines[0]).toContain('route=start');
  });

  it("an auto start whose admission the store fails is 503, and the operator's log names the store's failure", async () => {
    let down = false;
    const broken = failingStore(
      () => fx.sb.now(),
      () => down,
    );
    const logger = new CapturingLogger();
    const host = await journeyHost(
      fx,
      platform,
      { store: broken.store, limits: { enabled: true }, logLevels: ['error'] },
      {},
      { logger },
    );
    expect((await start(host, { phone_number: freshPhone() })).status).toBe(201);
    down = true;
    fx.sb.resetRequestCounts();
    const failed = await start(host, { phone_number: freshPhone(), method: 'auto' });
    down = false;
    expect(problem(failed)).toMatchObject({ status: 503, error_code: 'service_unavailable' });
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(0);
    // The store's own failure, as the method chosen met it; not one of the module's own making.
    const lines = logger.lines.filter((line) => line.startsWith('error start failed'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('method=reverse_flash_call');
    expect(lines[0]).toContain('error="Error: store connection lost"');
  });
});
