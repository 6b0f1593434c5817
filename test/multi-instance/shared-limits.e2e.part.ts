/**
 * Starts spread over three instances on one Redis: the per-phone limits, the resend cooldown and
 * the spend cap hold for the deployment as a whole, at their exact boundaries (the sandbox clock is
 * frozen, so every window ends on a known millisecond). Per-IP limits and coalescing across
 * instances are proven in test/protection/coalescing.e2e.part.ts.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { SpendCapReachedEvent } from '../../src/core/verification-events.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import type { LimitsOptions } from '../../src/options/verification.options.js';
import { freshBrowser, freshIp, freshPhone, refusal, startFrom } from '../protection/protection-host.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { ONE_PLATFORM, type Platform } from '../support/verification-app.js';
import { startInstance, uniqueKeyPrefix, type Instance, type StoreWiring } from './deployment.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;
const POSTS = 'POST /v1/verify';
const WIRINGS: StoreWiring[] = ['store-ioredis-url', 'host-node-redis', 'store-node-redis-url'];

type Response = Awaited<ReturnType<typeof startFrom>>;

const statuses = (responses: Response[]): number[] => responses.map((r) => r.status).sort();

describe.each(ONE_PLATFORM)('limits shared by three instances (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let instances: Instance[] = [];

  /** A fresh deployment (own key prefix: windows of earlier tests do not leak in) with these limits. */
  async function deploy(limits: LimitsOptions): Promise<Instance[]> {
    const keyPrefix = uniqueKeyPrefix('shared-limits');
    for (const [i, wiring] of WIRINGS.entries())
      instances.push(
        await startInstance(sb, 'ABC'[i], {
          platform,
          wiring,
          redisUrl: sharedRedisUrl(),
          keyPrefix,
          trustProxy: true,
          module: { limits, webhooks: undefined },
        }),
      );
    return instances;
  }

  /** `count` starts at once, the i-th through instance i mod 3, each from its own IP. */
  function concurrentStarts(count: number, phone: () => string, method = 'sms'): Promise<Response[]> {
    return Promise.all(
      Array.from({ length: count }, (_, i) =>
        startFrom(instances[i % instances.length], freshIp(), phone(), method),
      ),
    );
  }

  /**
   * `count` starts at once of one browser behind one IP (a fresh one unless given), the i-th through
   * instance i mod 3, by the i-th of `methods` (by default each its own, so that none is the same
   * start handed back).
   */
  function oneCallersStarts(
    count: number,
    phone: string,
    { ip, browser } = { ip: freshIp(), browser: freshBrowser() },
    methods = ['sms', 'flash_call', 'reverse_flash_call', 'msgr1_otp', 'msgr2_bot', 'operator_id'],
  ): Promise<Response[]> {
    return Promise.all(
      Array.from({ length: count }, (_, i) =>
        startFrom(instances[i % instances.length], ip, phone, methods[i % methods.length], browser),
      ),
    );
  }

  beforeAll(async () => {
    sb = suite.sb;
  });
  afterEach(async () => {
    for (const instance of instances) await instance.shutdown();
    instances = [];
  });

  it('per phone and caller (5 per hour): 12 concurrent starts of one caller to one number over three instances make exactly 5; other callers still start it', async () => {
    await deploy({ startPerIp: false, resendCooldownMs: false });
    const phone = freshPhone();
    // No cookie: no start is handed back, each is counted.
    const burst = await oneCallersStarts(12, phone, { ip: freshIp(), browser: {} });
    expect(statuses(burst)).toEqual([...Array(5).fill(201), ...Array(7).fill(429)]);
    for (const refused of burst.filter((r) => r.status === 429))
      expect(refusal(refused)).toEqual({
        status: 429,
        errorCode: 'rate_limit_exceeded',
        reason: 'start_phone_caller_limit',
        retryAfter: String(HOUR / 1000),
      });
    expect(sb.sessionsFor(phone)).toHaveLength(5);
    expect(statuses(await concurrentStarts(3, () => phone))).toEqual([201, 201, 201]);
  });

  it('per phone from all callers (a ceiling of 5 per hour): 12 concurrent starts to one number over three instances make exactly 5; the window ends on the millisecond for all', async () => {
    await deploy({
      startPerIp: false,
      resendCooldownMs: false,
      startPerPhone: { points: 5, windowMs: HOUR },
    });
    const phone = freshPhone();
    const posts = sb.requestCount(POSTS);
    const opened = sb.now();
    const burst = await concurrentStarts(12, () => phone);
    expect(statuses(burst)).toEqual([...Array(5).fill(201), ...Array(7).fill(429)]);
    for (const refused of burst.filter((r) => r.status === 429))
      expect(refusal(refused)).toEqual({
        status: 429,
        errorCode: 'rate_limit_exceeded',
        reason: 'start_phone_limit',
        retryAfter: String(HOUR / 1000),
      });
    expect(sb.sessionsFor(phone)).toHaveLength(5);
    expect(sb.requestCount(POSTS) - posts).toBe(5);

    // One millisecond before the window ends, every instance still refuses (with a coarse wait: the
    // refusal is caused by other callers); at its end each may start again.
    await sb.advance(opened + HOUR - 1 - sb.now());
    for (const instance of instances)
      expect(refusal(await startFrom(instance, freshIp(), phone))).toMatchObject({
        reason: 'start_phone_limit',
        retryAfter: '300',
      });
    expect(sb.requestCount(POSTS) - posts).toBe(5);
    await sb.advance(1);
    const next = await concurrentStarts(7, () => phone);
    expect(statuses(next)).toEqual([...Array(5).fill(201), 429, 429]);
    expect(sb.sessionsFor(phone)).toHaveLength(10);
    expect(sb.requestCount(POSTS) - posts).toBe(10);
  });

  it("resend cooldown (60 s): of one caller's 6 concurrent starts to one number by one method over three instances one goes out; the next one exactly at resend_available_at", async () => {
    // Nothing handed back (coalescing off): every start of the caller meets the cooldown of its method.
    await deploy({ startPerIp: false, coalesceStarts: false });
    const phone = freshPhone();
    const caller = { ip: freshIp(), browser: freshBrowser() };
    const posts = sb.requestCount(POSTS);
    const burst = await oneCallersStarts(6, phone, caller, ['sms']);
    const [sent] = burst.filter((r) => r.status === 201);
    expect(statuses(burst)).toEqual([201, 429, 429, 429, 429, 429]);
    const availableAt = Date.parse(String(sent.body.resend_available_at));
    expect(availableAt).toBe(sb.now() + 60_000);
    for (const refused of burst.filter((r) => r.status === 429)) {
      expect(refusal(refused)).toMatchObject({ reason: 'resend_cooldown', retryAfter: '60' });
      expect(refused.body.resend_available_at).toBe(sent.body.resend_available_at);
    }

    await sb.advance(availableAt - 1 - sb.now());
    for (const instance of instances)
      expect(refusal(await startFrom(instance, caller.ip, phone, 'sms', caller.browser))).toMatchObject({
        reason: 'resend_cooldown',
        retryAfter: '1',
      });
    expect(sb.requestCount(POSTS) - posts).toBe(1);
    await sb.advance(1);
    const resend = await oneCallersStarts(3, phone, caller, ['sms']);
    expect(statuses(resend)).toEqual([201, 429, 429]);
    const [second] = resend.filter((r) => r.status === 201);
    expect(second.body.resumed).toBe(false);
    expect(Date.parse(String(second.body.resend_available_at))).toBe(availableAt + 60_000);
    expect(sb.sessionsFor(phone)).toHaveLength(2);
    expect(sb.requestCount(POSTS) - posts).toBe(2);
  });

  it('spend cap (10.00 RUB a day): 12 concurrent sms over three instances make exactly 3; one alert per window for the deployment; the next window opens on the millisecond', async () => {
    await deploy({
      startPerIp: false,
      startPerPhone: false,
      resendCooldownMs: false,
      spendCap: { amount: 10, windowMs: DAY },
      // The cap alone, to the kopeck: the pumping defence keeps its last share for methods charged
      // on proof (graded-answers.e2e.part.ts).
      pumping: false,
    });
    // In window order, whichever instance announced each.
    const capEvents = () =>
      instances
        .flatMap((i) =>
          i.opsEvents
            .filter((e) => e.name === 'verification.spend_cap_reached')
            .map((e) => e.payload as SpendCapReachedEvent),
        )
        .sort((a, b) => a.windowEndsAt.getTime() - b.windowEndsAt.getTime());
    const posts = sb.requestCount(POSTS);
    const windowEnd = (Math.floor(sb.now() / DAY) + 1) * DAY;
    const burst = await concurrentStarts(12, freshPhone);
    expect(statuses(burst)).toEqual([201, 201, 201, ...Array(9).fill(503)]);
    const retryAfter = String(Math.ceil((windowEnd - sb.now()) / 1000));
    for (const refused of burst.filter((r) => r.status === 503))
      expect(refusal(refused)).toEqual({
        status: 503,
        errorCode: 'service_unavailable',
        reason: 'spend_cap',
        retryAfter,
      });
    expect(sb.requestCount(POSTS) - posts).toBe(3);
    expect(capEvents()).toHaveLength(1);
    expect(capEvents()[0]).toMatchObject({ cap: 10, currency: 'RUB', windowEndsAt: new Date(windowEnd) });

    // 9.00 spent: a 0.80 flash call still fits (9.80), the next one would pass 10.00, on any instance.
    expect((await startFrom(instances[1], freshIp(), freshPhone(), 'flash_call')).status).toBe(201);
    expect(refusal(await startFrom(instances[2], freshIp(), freshPhone(), 'flash_call')).reason).toBe(
      'spend_cap',
    );
    expect(refusal(await startFrom(instances[0], freshIp(), freshPhone(), 'flash_call')).reason).toBe(
      'spend_cap',
    );
    expect(sb.requestCount(POSTS) - posts).toBe(4);
    expect(capEvents()).toHaveLength(1);

    await sb.advance(windowEnd - 1 - sb.now());
    for (const instance of instances)
      expect(refusal(await startFrom(instance, freshIp(), freshPhone()))).toMatchObject({
        reason: 'spend_cap',
        retryAfter: '1',
      });
    await sb.advance(1);
    const next = await concurrentStarts(4, freshPhone);
    expect(statuses(next)).toEqual([201, 201, 201, 503]);
    expect(sb.requestCount(POSTS) - posts).toBe(7);
    expect(capEvents()).toHaveLength(2);
    expect(capEvents()[1]).toMatchObject({ spent: 9, windowEndsAt: new Date(windowEnd + DAY) });
  });
});
