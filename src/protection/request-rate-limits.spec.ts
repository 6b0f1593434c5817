import { afterEach, describe, expect, it } from '@jest/globals';
import { ProtectionRefusal } from '../core/refusal-reason.js';
import type { RateLimit } from '../options/verification.options.js';
import { MemoryStore } from '../store/memory.store.js';
import { RequestRateLimits } from './request-rate-limits.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';

const HOUR = 3_600_000;

interface Limits {
  startPerIp: RateLimit | false;
  startPerPhoneAndCaller: RateLimit | false;
  startPerPhone: RateLimit | false;
  checkPerIp: RateLimit | false;
}

async function refusalOf(promise: Promise<unknown>): Promise<ProtectionRefusal | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    if (error instanceof ProtectionRefusal) return error;
    throw error;
  }
}

describe('RequestRateLimits', () => {
  const clock = { now: 1_700_000_000_000 };
  const stores: MemoryStore[] = [];
  const limits = (overrides: Partial<Limits> = {}): RequestRateLimits => {
    const store = new MemoryStore({ clock: () => clock.now });
    stores.push(store);
    return new RequestRateLimits(
      store,
      {
        enabled: true,
        startPerIp: { points: 100, windowMs: HOUR },
        freeStartPerCaller: { points: 100, windowMs: HOUR },
        startPerPhoneAndCaller: { points: 100, windowMs: HOUR },
        startPerPhone: { points: 100, windowMs: HOUR },
        checkPerIp: { points: 100, windowMs: HOUR },
        ...overrides,
      },
      SPEC_DATA_KEYS,
    );
  };
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  it('limits counted together: the first refusal in order answers and keeps its point, every other is given back', async () => {
    const rl = limits({
      startPerIp: { points: 1, windowMs: HOUR },
      startPerPhoneAndCaller: { points: 1, windowMs: 2 * HOUR },
      startPerPhone: { points: 2, windowMs: 2 * HOUR },
    });
    const n = '+79160000009';
    const first = await rl.countStart('203.0.113.9', n, 'a');
    // The client and the (phone, caller) are both used up: the client's refusal answers, and the
    // (phone, caller) keeps no point of it.
    for (let i = 0; i < 3; i++)
      expect((await refusalOf(rl.countStart('203.0.113.9', n, 'a')))?.reason).toBe('start_ip_limit');
    clock.now += HOUR;
    await first.release();
    // Its one point given back, the (phone, caller) is free again.
    expect(await refusalOf(rl.countStart('203.0.113.10', n, 'a'))).toBeUndefined();
    // Refused by the (phone, caller): the client's and the phone's points of it are given back.
    expect((await refusalOf(rl.countStart('203.0.113.11', n, 'a')))?.reason).toBe('start_phone_caller_limit');
    expect(await refusalOf(rl.countStart('203.0.113.11', n, 'b'))).toBeUndefined();
    expect((await refusalOf(rl.countStart('203.0.113.12', n, 'c')))?.reason).toBe('start_phone_limit');
  });

  it("a client's starts are limited across numbers and callers, with the exact wait", async () => {
    const rl = limits({ startPerIp: { points: 2, windowMs: HOUR } });
    await rl.countStart('203.0.113.7', '+79160000001', 'a');
    await rl.countStart('203.0.113.7', '+79160000002', 'b');
    clock.now += 1000;
    const refused = await refusalOf(rl.countStart('203.0.113.7', '+79160000003', 'c'));
    expect(refused?.reason).toBe('start_ip_limit');
    expect(refused?.retryAfterSeconds).toBe(3599);
    // Another client, and a caller without a client key, are not held back.
    await rl.countStart('203.0.113.8', '+79160000003', 'c');
    await rl.countStart(undefined, '+79160000004', 'c');
    await rl.countStart(undefined, '+79160000005', 'c');
    await rl.countStart(undefined, '+79160000006', 'c');
  });

  it("a caller's starts to one number are limited; another caller to that number is not", async () => {
    const rl = limits({ startPerPhoneAndCaller: { points: 1, windowMs: HOUR } });
    await rl.countStart('198.51.100.1', '+79161234567', 'owner-1');
    const refused = await refusalOf(rl.countStart('198.51.100.2', '+79161234567', 'owner-1'));
    expect(refused?.reason).toBe('start_phone_caller_limit');
    expect(refused?.retryAfterSeconds).toBe(3600);
    await rl.countStart('198.51.100.1', '+79161234567', 'owner-2');
    await rl.countStart('198.51.100.1', '+79161234568', 'owner-1');
  });

  it("the number's ceiling bounds all callers together, with a coarse wait (caused by others)", async () => {
    const rl = limits({ startPerPhone: { points: 2, windowMs: HOUR } });
    await rl.countStart('198.51.100.1', '+79161234567', 'a');
    await rl.countStart('198.51.100.2', '+79161234567', 'b');
    clock.now += 1000;
    const refused = await refusalOf(rl.countStart('198.51.100.3', '+79161234567', 'c'));
    expect(refused?.reason).toBe('start_phone_limit');
    // 59:59 left, given as the whole hour in 5-minute steps.
    expect(refused?.retryAfterSeconds).toBe(3600);
  });

  it('a refused start gives back the points it already took from the earlier limits', async () => {
    const rl = limits({
      startPerIp: { points: 2, windowMs: HOUR },
      startPerPhoneAndCaller: { points: 1, windowMs: HOUR },
    });
    await rl.countStart('203.0.113.7', '+79161234567', 'a');
    expect((await refusalOf(rl.countStart('203.0.113.7', '+79161234567', 'a')))?.reason).toBe(
      'start_phone_caller_limit',
    );
    // The refused start's client point was given back: one start is still left to this client.
    await rl.countStart('203.0.113.7', '+79160000009', 'b');
    expect((await refusalOf(rl.countStart('203.0.113.7', '+79160000010', 'c')))?.reason).toBe(
      'start_ip_limit',
    );
  });

  it('releasing a start gives every point back', async () => {
    const rl = limits({
      startPerIp: { points: 1, windowMs: HOUR },
      startPerPhoneAndCaller: { points: 1, windowMs: HOUR },
      startPerPhone: { points: 1, windowMs: HOUR },
    });
    const hold = await rl.countStart('203.0.113.7', '+79161234567', 'a');
    await hold.release();
    await rl.countStart('203.0.113.7', '+79161234567', 'a');
    expect(await refusalOf(rl.countStart('203.0.113.7', '+79161234567', 'a'))).toBeDefined();
  });

  it('checks are limited per client key with their own reason; a caller without one is not', async () => {
    const rl = limits({ checkPerIp: { points: 2, windowMs: 60_000 } });
    await rl.countCheck('203.0.113.7');
    await rl.countCheck('203.0.113.7');
    const refused = await refusalOf(rl.countCheck('203.0.113.7'));
    expect(refused?.reason).toBe('check_limit');
    expect(refused?.retryAfterSeconds).toBe(60);
    await rl.countCheck('203.0.113.8');
    for (let i = 0; i < 5; i++) await rl.countCheck(undefined);
  });

  it('limits that are off refuse nothing', async () => {
    const off = limits({
      startPerIp: false,
      startPerPhoneAndCaller: false,
      startPerPhone: false,
      checkPerIp: false,
    });
    for (let i = 0; i < 150; i++) {
      await off.countStart('203.0.113.7', '+79161234567', 'a');
      await off.countCheck('203.0.113.7');
    }
  });
});

describe("the API's back-off (its 429)", () => {
  it('every instance waits it out, a shorter one never shortens it, and with limits off it is neither kept nor read', async () => {
    const clock = { now: 1_700_000_000_000 };
    const store = new MemoryStore({ clock: () => clock.now });
    const instance = (enabled: boolean) =>
      new RequestRateLimits(
        store,
        {
          enabled,
          startPerIp: false,
          freeStartPerCaller: false,
          startPerPhoneAndCaller: false,
          startPerPhone: false,
          checkPerIp: false,
        },
        SPEC_DATA_KEYS,
      );
    const [one, other, off] = [instance(true), instance(true), instance(false)];
    await off.holdUpstream(120_000);
    await expect(one.assertUpstreamOpen()).resolves.toBeUndefined();
    await one.holdUpstream(30_000);
    await other.holdUpstream(5_000);
    const refused = await refusalOf(other.assertUpstreamOpen());
    expect([refused?.reason, refused?.retryAfterSeconds]).toStrictEqual(['upstream_rate_limit', 30]);
    await expect(off.assertUpstreamOpen()).resolves.toBeUndefined();
    clock.now += 30_000;
    await expect(other.assertUpstreamOpen()).resolves.toBeUndefined();
    await store.close();
  });
});
