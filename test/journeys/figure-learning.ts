/**
 * A host that learns `auto`'s figures, and the users who teach it: real users who follow the status
 * and complete (or give up), bots whose free starts nobody completes, and the learned moment a new
 * user is offered. Shared by the steering suites (test/journeys/learning-steering, the figure
 * attacks in test/attacks).
 */
import { expect } from '@jest/globals';
import { FALLBACK_FIGURES_TTL_MS } from '../../src/verification/fallback-timing.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { call, type Platform, type TestApp } from '../support/verification-app.js';
import { VerificationAccountService } from '../../src/account/verification-account.service.js';
import { FOLLOWED_AFTER_MS } from '../../src/account/figure-evidence.js';
import { MethodStats } from '../../src/account/method-stats.service.js';
import type { DeviceHint } from '../../src/core/journey.js';
import type { SessionRecord } from '../../src/core/session-record.js';
import {
  check,
  freshPhone,
  journeyHost,
  sessionIds,
  start,
  status,
  switchMethod,
  type JourneyFixture,
} from './journey-host.js';

export const HOUR = 3_600_000;
/**
 * Moves the sandbox's clock (which starts at wall time) to `before` ms ahead of a UTC midnight, so that a test's
 * windows cross it whatever the hour it runs at.
 */
export async function toBeforeMidnight(fx: JourneyFixture, before: number): Promise<number> {
  const day = 24 * HOUR;
  const midnight = (Math.floor((fx.sb.now() + before) / day) + 1) * day;
  await fx.sb.advance(midnight - before - fx.sb.now());
  return midnight;
}
export const LEARNING = { orchestration: { fallback: { minSamples: 10 } } };
/** Sessions expire (the sandbox's TTL) and their webhooks arrive within this. */
export const EXPIRY_MS = 300_000;

export interface User {
  owner: string | null;
  ip: string;
}

export const from = (ip: string) => ({ 'x-forwarded-for': ip });

/**
 * A legitimate user on the page: starts `method` (mobile), follows the status, and completes it
 * after `afterMs` (a reverse call placed, a flash call's code typed), or never (`null`).
 */
export async function realUser(
  fx: JourneyFixture,
  host: TestApp,
  user: User,
  method: 'reverse_flash_call' | 'flash_call',
  afterMs: number | null,
): Promise<void> {
  const phone = freshPhone();
  const started = await start(
    host,
    { phone_number: phone, method, device: 'mobile' },
    user.owner,
    from(user.ip),
  );
  expect(started.status).toBe(201);
  await fx.sb.advance(6_000);
  expect((await status(host, started.body.verification_id, user.owner)).status).toBe(200);
  if (afterMs === null) return;
  await fx.sb.advance(afterMs - 6_000);
  const [id] = sessionIds(fx.sb, phone);
  if (method === 'reverse_flash_call') await fx.sb.call(id!, phone);
  else await check(host, started.body.verification_id, String(fx.sb.getSession(id!)!.code), user.owner);
  await fx.sb.webhooksIdle();
}

/** Twenty real users of `method`, each from an address of its own: 15 complete it at 25–39 s, 5 give up. */
export async function realUsers(
  fx: JourneyFixture,
  host: TestApp,
  method: 'reverse_flash_call' | 'flash_call',
  net: number,
): Promise<void> {
  for (let i = 0; i < 20; i++)
    await realUser(
      fx,
      host,
      { owner: `real-${net}-${i}`, ip: `198.${net}.${i}.10` },
      method,
      i < 15 ? 25_000 + i * 1_000 : null,
    );
  await fx.sb.advance(EXPIRY_MS);
  await fx.sb.webhooksIdle();
}

/**
 * Free reverse-call starts, each from its own address (`ipOf`), none completed; `follow`: the bot polls
 * the status too; `owner`: the host's account signed in for all of them (anonymous unless said).
 */
export async function abandonedStarts(
  fx: JourneyFixture,
  host: TestApp,
  count: number,
  ipOf: (i: number) => string,
  follow = false,
  owner: string | null = null,
): Promise<void> {
  const ids: unknown[] = [];
  // In batches, as a bot would send them.
  for (let batch = 0; batch < count; batch += 25) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(25, count - batch) }, (_, j) =>
        start(
          host,
          { phone_number: freshPhone(), method: 'reverse_flash_call', device: 'mobile' },
          owner,
          from(ipOf(batch + j)),
        ),
      ),
    );
    for (const res of answers) {
      expect(res.status).toBe(201);
      ids.push(res.body.verification_id);
    }
  }
  if (follow) {
    await fx.sb.advance(6_000);
    for (const id of ids) await status(host, id, owner);
  }
}

/** The learned moment a new legitimate user's reverse call gets, ms after its start (read once the figures are re-read). */
export async function momentFor(fx: JourneyFixture, host: TestApp): Promise<number> {
  await fx.sb.advance(FALLBACK_FIGURES_TTL_MS);
  const res = await start(
    host,
    { phone_number: freshPhone(), method: 'reverse_flash_call', device: 'mobile' },
    'probe',
    from('192.0.2.1'),
  );
  const at = fx.sb.now();
  const body = (await status(host, res.body.verification_id, 'probe')).body;
  return Date.parse(String(body.fallback_available_at)) - at;
}

/**
 * A host on `platform` (its figures in storeOf's store, behind a trusted proxy) whose reverse-call
 * moment 20 real users taught, read twice a ceiling apart (matureFigures): the legitimate users' moment.
 */
export async function taughtHost(
  fx: JourneyFixture,
  platform: Platform,
): Promise<{ host: TestApp; before: number }> {
  const host = await journeyHost(
    fx,
    platform,
    { ...LEARNING, ...storeOf(platform) },
    {},
    { trustProxy: true },
  );
  await realUsers(fx, host, 'reverse_flash_call', 51);
  await momentFor(fx, host);
  await fx.sb.advance(90_000);
  const before = await momentFor(fx, host);
  expect(before).toBeGreaterThan(20_000);
  return { host, before };
}

/**
 * After an attack: the moment a user gets every 5 minutes for an hour, as the damping follows a lasting
 * change (a read after a quiet while moves at most 5 minutes of its pace), within 25 % of `before`
 * (issue 47's bound).
 */
export async function expectMomentHeld(fx: JourneyFixture, host: TestApp, before: number): Promise<void> {
  let after = before;
  for (let read = 0; read < 12; read++) {
    await fx.sb.advance(5 * 60_000 - FALLBACK_FIGURES_TTL_MS);
    after = await momentFor(fx, host);
  }
  expect({ before, after, moved: Math.abs(after - before) <= before * 0.25 }).toEqual({
    before,
    after,
    moved: true,
  });
}

/** Express keeps its figures in a MemoryStore, Fastify in Redis: the rules are the store's operations. */
export const storeOf = (platform: string) =>
  platform === 'fastify'
    ? { store: { url: sharedRedisUrl(), keyPrefix: `steer-${process.pid}-${Date.now()}:` } }
    : {};

let seeded = 0;

/**
 * `n` ended sessions of `method` on +7 915 (or `phone`'s numbers) from `device` users whose page followed the status, `verified`
 * of them `afterMs` after their start: a cell's figures as real users would make them.
 */
export async function seedFigures(
  fx: JourneyFixture,
  stats: MethodStats,
  method: string,
  device: DeviceHint,
  n: number,
  verified: number,
  afterMs: number,
  phone: () => string = freshPhone,
): Promise<void> {
  const now = fx.sb.now();
  for (let i = 0; i < n; i++) {
    const record = {
      requestId: `seed-${process.pid}-${++seeded}`,
      phoneNumber: phone(),
      method,
      status: 'sent',
      awaitingCode: method !== 'reverse_flash_call',
      createdAt: now - 60_000,
      expiresAt: now + 240_000,
      verifiedAt: null,
      cost: { amount: method === 'sms' ? 3 : 0.25, currency: 'RUB' },
    } as SessionRecord;
    await stats.tally(record, undefined, device);
    await stats.followed({ ...record, createdAt: now - FOLLOWED_AFTER_MS });
    const end: Partial<SessionRecord> =
      i < verified
        ? { status: 'verified', delivered: true, verifiedAt: record.createdAt + afterMs }
        : { status: 'expired' };
    await stats.tally({ ...record, ...end }, undefined, device);
  }
  // In the store now, not at the instance's next flush (a second of real time, later under load): another
  // instance's first read would otherwise find no figures.
  await stats.flush();
}

/** Numbers of another +7 operator (+7 926), each caller's block of its own (`block`: a thousand apart). */
export function otherOperatorPhones(block: number): () => string {
  let serial = block * 1_000;
  return () => `+7926${String(process.pid % 1000).padStart(3, '0')}${String(++serial).padStart(4, '0')}`;
}

/**
 * A host (storeOf's store, behind a trusted proxy) whose +7 915 mobile users' week is seeded: `n`
 * sessions of each method, the reverse call verifying as many as SMS (80 % against 85 %), sooner.
 */
export async function healthHost(fx: JourneyFixture, platform: Platform, n = 40) {
  const host = await journeyHost(fx, platform, storeOf(platform), {}, { trustProxy: true });
  const stats = host.app.get(MethodStats, { strict: false });
  const account = host.app.get(VerificationAccountService, { strict: false });
  await seedFigures(fx, stats, 'sms', 'mobile', n, n * 0.85, 40_000);
  await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', n, n * 0.8, 25_000);
  /** The reverse call's health on +7 915 as the host's instance judged it (`state@level`). */
  const health = () =>
    account
      .methodHealth()
      .filter((h) => h.method === 'reverse_flash_call' && h.prefix === '+7915')
      .map((h) => `${h.state}@${h.level}`);
  return { host, stats, account, health };
}

/** A legitimate +7 915 mobile user of `auto`: the first method and its fallback moment (ms after the start). */
export async function probeUser(
  fx: JourneyFixture,
  host: TestApp,
): Promise<{ method: string; afterMs: number }> {
  const res = await start(
    host,
    { phone_number: freshPhone(), method: 'auto', device: 'mobile' },
    'probe',
    from('192.0.2.1'),
  );
  expect(res.status).toBe(201);
  const at = fx.sb.now();
  const body = (await status(host, res.body.verification_id, 'probe')).body;
  return { method: res.body.method as string, afterMs: Date.parse(String(body.fallback_available_at)) - at };
}

/** A farm's proof of one of its own numbers: a reverse call, switched to SMS, its code typed `afterMs` later. */
export async function farmProof(
  fx: JourneyFixture,
  host: TestApp,
  phone: string,
  owner: string,
  ip: Record<string, string>,
  afterMs = 5_000,
): Promise<void> {
  const id = await farmSwitch(host, phone, owner, ip);
  await fx.sb.advance(afterMs);
  await farmCheck(fx, host, phone, owner, ip, id);
  await fx.sb.webhooksIdle();
}

/** The first half of farmProof: the reverse call started and switched to SMS; its verification id. */
export async function farmSwitch(
  host: TestApp,
  phone: string,
  owner: string,
  ip: Record<string, string>,
): Promise<unknown> {
  const first = await start(
    host,
    { phone_number: phone, method: 'reverse_flash_call', device: 'mobile' },
    owner,
    ip,
  );
  expect(first.status).toBe(201);
  expect((await switchMethod(host, first.body.verification_id, 'sms', owner, ip)).status).toBe(201);
  return first.body.verification_id;
}

/** The second half of farmProof: the SMS code typed, verified. */
export async function farmCheck(
  fx: JourneyFixture,
  host: TestApp,
  phone: string,
  owner: string,
  ip: Record<string, string>,
  id: unknown,
): Promise<void> {
  const code = String(fx.sb.getSession(sessionIds(fx.sb, phone).at(-1)!)!.code);
  const check = { verification_id: id, code };
  const proved = await call(host.url, 'POST', '/verification/check', check, { 'x-user': owner, ...ip });
  expect(proved.body.status).toBe('verified');
}

/**
 * The `serial`th +7 915 mobile user of an outage of the reverse call (`user-<serial>`, from 198.18.<serial>.1): it
 * starts the reverse call, switches to SMS 5 s later and types that code, verified there (the call's step rescued).
 */
export async function outageUser(fx: JourneyFixture, host: TestApp, serial: number): Promise<void> {
  const owner = `user-${serial}`;
  const ip = from(`198.18.${serial}.1`);
  const phone = freshPhone();
  const res = await start(
    host,
    { phone_number: phone, method: 'reverse_flash_call', device: 'mobile' },
    owner,
    ip,
  );
  expect(res.status).toBe(201);
  await fx.sb.advance(5_000);
  expect((await switchMethod(host, res.body.verification_id, 'sms', owner, ip)).status).toBe(201);
  const code = String(fx.sb.getSession(sessionIds(fx.sb, phone).at(-1)!)!.code);
  const body = { verification_id: res.body.verification_id, code };
  const proved = await call(host.url, 'POST', '/verification/check', body, { 'x-user': owner, ...ip });
  expect(proved.body.status).toBe('verified');
  await fx.sb.webhooksIdle();
}

/** The reverse call's health on +7 915 as `host` judged it (none before its first read). */
export function reverseCallHealth(host: TestApp): string[] {
  return host.app
    .get(VerificationAccountService, { strict: false })
    .methodHealth()
    .filter((h) => h.method === 'reverse_flash_call' && h.prefix === '+7915')
    .map((h) => h.state);
}

/** The outage on `host`: two users a minute (outageUser), each minute probed, until it judges the reverse call `state`. */
export async function outageUntil(fx: JourneyFixture, host: TestApp, state: string): Promise<void> {
  let users = 0;
  while (reverseCallHealth(host)[0] !== state) {
    for (let i = 0; i < 2; i++) await outageUser(fx, host, ++users);
    await fx.sb.advance(60_000 - (fx.sb.now() % 60_000));
    await probeUser(fx, host);
    expect(users).toBeLessThan(200);
  }
}
