import { afterAll, describe, expect, it } from '@jest/globals';
import { API_CLIENT_DEFAULTS, resolveApiClientOptions } from '../api/api-client.options.js';
import { MemoryStore } from '../store/memory.store.js';
import {
  DEFAULT_METHODS,
  DEFAULT_SPEND_CAP,
  VERIFICATION_DEFAULTS as D,
} from './verification-options.defaults.js';
import { declaredRoutes, resolveVerificationOptions } from './verification-options.resolver.js';
import type { VerificationModuleOptions } from './verification.options.js';

const api = { baseUrl: 'http://127.0.0.1:1/', apiKey: 'k', apiSecret: 's' };
const resolve = (extra: Partial<VerificationModuleOptions> = {}) =>
  resolveVerificationOptions({ api, ...extra });

describe('orchestration: what the host gives over the defaults, copied', () => {
  it('keeps the defaults of the timeouts it does not name, and copies every list', () => {
    const methods: ('sms' | 'flash_call')[] = ['sms', 'flash_call', 'sms'];
    const mobile: 'msgr2_bot'[] = ['msgr2_bot'];
    const resolved = resolve({
      orchestration: { methods, skippable: ['sms'], timeoutSeconds: { sms: 20 }, exclude: { mobile } },
    }).orchestration;
    expect(resolved).toStrictEqual({
      ...D.orchestration,
      methods: ['sms', 'flash_call'],
      skippable: ['sms'],
      timeoutSeconds: { ...D.orchestration.timeoutSeconds, sms: 20 },
      exclude: { mobile: ['msgr2_bot'], desktop: [] },
    });
    mobile.push('msgr2_bot');
    expect(resolved.exclude.mobile).toStrictEqual(['msgr2_bot']);
    expect(
      resolve({ orchestration: { skippable: 'all', maxSteps: 5, maxCost: 2.5 } }).orchestration,
    ).toMatchObject({
      skippable: 'all',
      maxSteps: 5,
      maxCost: 2.5,
    });
  });
});

describe('defaults come from VERIFICATION_DEFAULTS, the one defaults object', () => {
  it('every section of options left out resolves to its defaults', () => {
    const resolved = resolve();
    expect(resolved.api).toStrictEqual({
      ...D.api,
      baseUrl: 'http://127.0.0.1:1',
      apiKey: 'k',
      apiSecret: 's',
    });
    // The path resolves to the route served: the default path under the default prefix.
    expect(resolved.webhooks).toStrictEqual({
      ...D.webhooks,
      path: `${D.routes.prefix}/${D.webhooks.path}`,
      secrets: [],
      verifier: undefined,
      enabled: false,
    });
    expect(resolved.routes).toStrictEqual(D.routes);
    expect(resolved.methods).toStrictEqual(D.methods);
    expect(resolved.phone).toStrictEqual(D.phone);
    expect(resolved.reconcile).toStrictEqual(D.reconcile);
    expect(resolved.statusCache).toStrictEqual(D.statusCache);
    expect(resolved.statusStream).toStrictEqual(D.statusStream);
    expect(resolved.orchestration).toStrictEqual({ ...D.orchestration, methods: undefined });
    expect(resolved).toMatchObject({
      pricesTtlMs: D.pricesTtlMs,
      logLevels: D.logLevels,
      maskPhoneNumbers: D.maskPhoneNumbers,
    });
    const { spendCap, pumping, ...limits } = resolved.limits;
    const { spendCap: capDefault, pumping: pumpingDefault, ...limitDefaults } = D.limits;
    expect(limits).toEqual({
      ...limitDefaults,
      coalesceStarts: true,
      worstCaseMinor: 300,
      key: undefined,
      beforeStart: undefined,
    });
    expect(spendCap).toStrictEqual(capDefault);
    expect(pumping).toStrictEqual(pumpingDefault);
    expect(resolve({ metrics: { enabled: true } }).metrics).toStrictEqual({
      enabled: true,
      prefix: D.metrics.prefix,
    });
  });

  it('one set of API defaults: the client alone resolves to the same ones as the module', () => {
    expect(D.api).toBe(API_CLIENT_DEFAULTS);
    expect(resolveApiClientOptions(api)).toStrictEqual(resolve().api);
    expect(DEFAULT_METHODS).toBe(D.methods);
    expect(DEFAULT_SPEND_CAP).toBe(D.limits.spendCap);
  });

  it('the defaults are frozen, and what the resolver hands out is a copy of its own', () => {
    expect(Object.isFrozen(D.limits.pumping.safeList.numbers)).toBe(true);
    const first = resolve();
    first.limits.pumping.safeList.numbers.push('+79161234567');
    first.methods.push('voice');
    (first.reconcile as { tickMs: number }).tickMs = 1;
    const second = resolve();
    expect(second.limits.pumping.safeList.numbers).toStrictEqual([]);
    expect(second.methods).toStrictEqual(D.methods);
    expect(second.reconcile.tickMs).toBe(D.reconcile.tickMs);
  });

  it('a given field replaces its default, the others stay', () => {
    expect(resolve({ reconcile: { graceMs: 0 } }).reconcile).toStrictEqual({ ...D.reconcile, graceMs: 0 });
    expect(resolve({ limits: { spendCap: { amount: 50, windowMs: 1000 } } }).limits.spendCap).toStrictEqual({
      ...D.limits.spendCap,
      amount: 50,
      windowMs: 1000,
    });
    expect(resolve({ methods: ['sms', 'sms', 'flash_call'] })).toMatchObject({
      methods: ['sms', 'flash_call'],
      methodsFromAccount: false,
    });
  });
});

describe('options that follow from other options', () => {
  it("worstCaseMinor: the spend cap's worstCasePrice in kopecks, its default when the cap is off", () => {
    const cap = { amount: 50, windowMs: 1000, worstCasePrice: 7.5 };
    expect(resolve().limits.worstCaseMinor).toBe(300);
    expect(resolve({ limits: { spendCap: cap } }).limits.worstCaseMinor).toBe(750);
    expect(resolve({ limits: { spendCap: false } }).limits.worstCaseMinor).toBe(300);
    expect(resolve({ limits: { enabled: false, spendCap: cap } }).limits.worstCaseMinor).toBe(300);
  });

  it("sessionTtlMs: expirySeconds in milliseconds, else the API's default of 5 minutes", () => {
    expect(resolve().sessionTtlMs).toBe(300_000);
    expect(resolve({ expirySeconds: 120 })).toMatchObject({ expirySeconds: 120, sessionTtlMs: 120_000 });
  });

  it('limits.enabled: false switches every protection off, coalescing and pumping included', () => {
    const limits = resolve({ limits: { enabled: false } }).limits;
    expect(limits).toMatchObject({
      startPerIp: false,
      startPerPhone: false,
      startPerPhoneAndCaller: false,
      resendCooldownMs: false,
      checkPerIp: false,
      wrongCodesPerPhone: false,
      wrongCodesPerOwner: false,
      coalesceStarts: false,
      spendCap: false,
    });
    expect(limits.pumping.mode).toBe('off');
    // The prior: a country's own over the default, each just inside its bounds accepted.
    expect(
      resolve({ limits: { pumping: { expectedConversion: { RU: 0.999, KZ: 0.001 } } } }).limits.pumping
        .expectedConversion,
    ).toStrictEqual({ default: 0.8, RU: 0.999, KZ: 0.001 });
    expect(resolve({ limits: { enabled: false, coalesceStarts: true } }).limits.coalesceStarts).toBe(true);
  });

  it('limits.pumping: on by default, off with false, a given mode kept', () => {
    expect(resolve().limits.pumping.mode).toBe('enforce');
    expect(resolve({ limits: { pumping: false } }).limits.pumping).toStrictEqual({
      ...D.limits.pumping,
      mode: 'off',
    });
    expect(
      resolve({ limits: { pumping: { mode: 'monitor', holdMs: 60_000 } } }).limits.pumping,
    ).toMatchObject({
      mode: 'monitor',
      holdMs: 60_000,
      maxHoldMs: D.limits.pumping.maxHoldMs,
    });
  });

  it('webhooks are enabled by a secret, a verifier or signature: "none", unless switched off', () => {
    const secret = 'whsec_c2VjcmV0';
    expect(resolve({ webhooks: { secret } }).webhooks).toMatchObject({ enabled: true, secrets: [secret] });
    expect(resolve({ webhooks: { signature: 'none' } }).webhooks.enabled).toBe(true);
    expect(resolve({ webhooks: { verifier: { verify: () => true } } }).webhooks.enabled).toBe(true);
    expect(resolve({ webhooks: { secret, enabled: false } }).webhooks.enabled).toBe(false);
  });
});

describe('one clock', () => {
  const store = new MemoryStore({ clock: () => 42 });
  afterAll(() => store.close());

  it("is the clock option when given, else the given store instance's clock, else Date.now", () => {
    const clock = () => 7;
    expect(resolve({ clock }).clock).toBe(clock);
    expect(resolve({ store }).clock()).toBe(42);
    expect(resolve().clock).toBe(Date.now);
    expect(resolve({ store, clock: () => 42 }).clock()).toBe(42);
  });
});

describe('the routes declared at import', () => {
  it('the prefix is resolved once, and the resolved options carry it', () => {
    const options = { api, routes: { prefix: '/shop/verify/' }, webhooks: { secret: 'whsec_c2VjcmV0' } };
    expect(declaredRoutes(options)).toStrictEqual({
      routes: { prefix: 'shop/verify', enabled: true },
      webhooks: { enabled: true, path: 'shop/verify/webhooks', decorators: [] },
    });
    expect(resolveVerificationOptions(options).routes.prefix).toBe('shop/verify');
    expect(resolveVerificationOptions(options).webhooks.path).toBe('shop/verify/webhooks');
  });

  it('the webhook path resolves to the one declared at import, when a forRootAsync factory leaves it out', () => {
    const declared = declaredRoutes({ api, webhooks: { secret: 'whsec_c2VjcmV0', path: '/hooks/in' } });
    const fromFactory = { api, webhooks: { secret: 'whsec_c2VjcmV0' } };
    expect(resolveVerificationOptions(fromFactory, declared).webhooks.path).toBe('hooks/in');
    expect(resolveVerificationOptions(fromFactory).webhooks.path).toBe('verification/webhooks');
  });

  it('an absolute webhook path stands alone; an empty prefix leaves the path as given', () => {
    expect(declaredRoutes({ api, webhooks: { signature: 'none', path: '/hooks/in/' } }).webhooks.path).toBe(
      'hooks/in',
    );
    expect(declaredRoutes({ api, routes: { prefix: '' } }).webhooks).toStrictEqual({
      enabled: false,
      path: 'webhooks',
      decorators: [],
    });
  });

  it('at import, options not checked yet fall back to the defaults (the boot then names the field)', () => {
    const garbage = { api, routes: { prefix: 5 } } as unknown as VerificationModuleOptions;
    expect(declaredRoutes(garbage).routes.prefix).toBe(D.routes.prefix);
    expect(() => resolveVerificationOptions(garbage)).toThrow(/"routes\.prefix" must be a URL path/);
  });
});

describe('orchestration.fallback: learned by default, each field over the defaults, or off', () => {
  it('resolves', () => {
    const O = D.orchestration;
    expect(resolve({}).orchestration.fallback).toStrictEqual(O.fallback);
    expect(
      resolve({ orchestration: { fallback: { stalledShare: 0.2 } } }).orchestration.fallback,
    ).toStrictEqual({
      ...(O.fallback as object),
      stalledShare: 0.2,
    });
    expect(resolve({ orchestration: { fallback: false } }).orchestration.fallback).toBe(false);
  });
});
