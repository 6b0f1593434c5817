import { randomBytes, randomUUID } from 'node:crypto';
import { afterEach, beforeAll } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { sandboxSuite, type SandboxSuite } from '../support/sandbox-suite.js';
import { toJustPast, WEEK_MS } from '../support/utc-bounds.js';
import type {
  LimitsOptions,
  PumpingOptions,
  VerificationModuleOptions,
} from '../../src/options/verification.options.js';
import {
  call,
  createTestApp,
  type CreateTestAppOptions,
  type Platform,
  type TestApp,
} from '../support/verification-app.js';

/**
 * The describe block's sandbox (100,000 RUB), started before its first test with its clock one second past
 * the start of a UTC week (a Thursday, 00:00:01), and the test's host app, if it made one: closed after each
 * test, and the sandbox's faults cleared.
 */
export type ProtectionFixture = SandboxSuite;

/** Registers the lifecycle every protection scenario shares; call it at the top of a describe block. */
export function protectionFixture(): ProtectionFixture {
  // Registered before the suite's hooks: the sandbox's faults are cleared before the test's host closes.
  afterEach(() => {
    suite.sb.clearFaults();
  });
  const suite = sandboxSuite({ freezeClock: false, demoAccount: { balance: 100_000 } });
  // The givers' shares and the day's counts turn at fixed UTC bounds (giver-shares.ts): a scenario of an
  // hour begun at Wednesday 23:30 UTC met a fresh week's share half-way (CI read a served start where a
  // held one was due). Every scenario starts at the same place in the week, whatever the time of the run.
  beforeAll(async () => {
    await suite.sb.advance(toJustPast(suite.sb.now(), WEEK_MS));
  });
  return suite;
}

/** Module options against the sandbox, on the sandbox's clock, with the given limits. */
export function moduleOptions(
  sb: VerificationSandbox,
  limits: LimitsOptions = {},
  extra: Partial<VerificationModuleOptions> = {},
): VerificationModuleOptions {
  return {
    api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
    clock: () => sb.now(),
    reconcile: { enabled: false },
    limits,
    ...extra,
  };
}

/** A host app (trust proxy on unless said otherwise, so tests pick the client IP with X-Forwarded-For). */
export function protectedHost(
  sb: VerificationSandbox,
  platform: Platform,
  limits: LimitsOptions = {},
  extra: Partial<VerificationModuleOptions> = {},
  app: Partial<CreateTestAppOptions> = {},
): Promise<TestApp> {
  return createTestApp({ platform, trustProxy: true, module: moduleOptions(sb, limits, extra), ...app });
}

let phoneSerial = 0;
/**
 * A fresh valid Russian mobile number for each call (per-phone state never leaks between tests), each
 * in a range of its own: a test's users are not a burst into one range (the pumping defence's
 * scenarios make their own ranges); of `prefix`, +7 916 unless said.
 */
export function freshPhone(prefix = '+7916'): string {
  phoneSerial += 1;
  const range = String(phoneSerial % 1000).padStart(3, '0');
  const rest = `${process.pid % 10}${String(Math.floor(phoneSerial / 1000) % 1000).padStart(3, '0')}`;
  return `${prefix}${range}${rest}`;
}

let ipSerial = 0;
/** A fresh client IP (sent as X-Forwarded-For). */
export function freshIp(): string {
  ipSerial += 1;
  return `198.51.${Math.floor(ipSerial / 250) % 250}.${(ipSerial % 250) + 1}`;
}

export function start(
  host: TestApp,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): ReturnType<typeof call> {
  return call(host.url, 'POST', '/verification/start', body, headers);
}

export function startFrom(
  host: TestApp,
  ip: string,
  phone: string,
  method = 'sms',
  headers: Record<string, string> = {},
): ReturnType<typeof call> {
  return start(host, { phone_number: phone, method }, { 'x-forwarded-for': ip, ...headers });
}

export function check(
  host: TestApp,
  ip: string,
  verificationId: unknown,
  code: string,
): ReturnType<typeof call> {
  return call(
    host.url,
    'POST',
    '/verification/check',
    { verification_id: verificationId, code },
    { 'x-forwarded-for': ip },
  );
}

/** Reads the problem's reason and Retry-After of a refusal. */
export function refusal(res: Awaited<ReturnType<typeof call>>): {
  status: number;
  errorCode: unknown;
  reason: unknown;
  /** What graded the start (409 `method_held`): the limit or rule that would have refused it. */
  held: unknown;
  retryAfter: string | null;
} {
  return {
    status: res.status,
    errorCode: res.body.error_code,
    reason: res.body.reason,
    held: res.body.held,
    retryAfter: res.headers.get('retry-after'),
  };
}

/**
 * The Retry-After a refusal must carry when its window ends somewhere in [endMin, endMax] and the
 * server answered somewhere in [sentAt, receivedAt] (the sandbox clock moves with real time too):
 * whole seconds to the window end, rounded up.
 */
export function retryAfterRange(
  endMin: number,
  endMax: number,
  sentAt: number,
  receivedAt: number,
): number[] {
  const low = Math.max(1, Math.ceil((endMin - receivedAt) / 1000));
  const high = Math.max(1, Math.ceil((endMax - sentAt) / 1000));
  const range: number[] = [];
  for (let s = low; s <= high; s++) range.push(s);
  return range;
}

/** Runs a request and returns it with the sandbox-clock times around it. */
export async function timed<T>(
  sb: { now(): number },
  request: () => Promise<T>,
): Promise<[T, number, number]> {
  const sentAt = sb.now();
  const res = await request();
  return [res, sentAt, sb.now()];
}

/** A browser's `pv_browser` cookie, as the Cookie header it sends back (a fresh, well-formed key). */
export function freshBrowser(): Record<string, string> {
  return { cookie: `pv_browser=${randomBytes(16).toString('base64url')}` };
}

/** The Cookie header a browser sends after this answer (its `pv_browser` Set-Cookie), or none. */
export function cookieFrom(res: Awaited<ReturnType<typeof call>>): Record<string, string> {
  const match = /pv_browser=([^;,\s]+)/.exec(res.headers.get('set-cookie') ?? '');
  return match ? { cookie: `pv_browser=${match[1]}` } : {};
}

/** Only the pumping defence (and a cap out of the way): the other limits would get in the way of many starts. */
export const pumpingOnly = (pumping: PumpingOptions, extra: LimitsOptions = {}): LimitsOptions => ({
  startPerIp: false,
  startPerPhone: false,
  startPerPhoneAndCaller: false,
  resendCooldownMs: false,
  spendCap: { amount: 100_000, windowMs: 86_400_000 },
  // The fresh-range and prefix rules have their own scenarios (pumping-attacks.e2e.part.ts), and so
  // have graded answers (graded-answers.e2e.part.ts): these are the holds' refusals.
  pumping: {
    grading: false,
    rangeMinStarts: 5,
    freshRangeMinStarts: 100,
    prefixMinStarts: 100,
    freshPrefixMinStarts: 100,
    callerMinStarts: 50,
    countryMinStarts: 100,
    ...pumping,
  },
  ...extra,
});

/** A store rule's two shapes: a MemoryStore, and a RedisStore under a prefix of its own (`name`), on `clock`. */
export const memoryAndRedis = (name: string): [string, (clock: () => number) => VerificationStore][] => [
  ['MemoryStore', (clock) => new MemoryStore({ clock })],
  [
    'RedisStore',
    (clock) => new RedisStore({ url: sharedRedisUrl(), keyPrefix: `${name}:${randomUUID()}:`, clock }),
  ],
];

/** `inner` with its method `name` made by `replace` (the others bound to it): a store failing at one moment. */
export function withStoreMethod<K extends keyof VerificationStore>(
  inner: VerificationStore,
  name: K,
  replace: (target: VerificationStore) => VerificationStore[K],
): VerificationStore {
  return new Proxy(inner, {
    get(target, property) {
      if (property === name) return replace(target);
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
