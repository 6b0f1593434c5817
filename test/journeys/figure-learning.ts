/**
 * A host that learns `auto`'s figures, and the users who teach it: real users who follow the status
 * and complete (or give up), bots whose free starts nobody completes, and the learned moment a new
 * user is offered. Shared by the steering suites (test/journeys/learning-steering, the figure
 * attacks in test/attacks).
 */
import { expect } from '@jest/globals';
import { FALLBACK_FIGURES_TTL_MS } from '../../src/verification/fallback-timing.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import type { Platform, TestApp } from '../support/verification-app.js';
import { FOLLOWED_AFTER_MS } from '../../src/account/figure-evidence.js';
import type { MethodStats } from '../../src/account/method-stats.service.js';
import type { DeviceHint } from '../../src/core/journey.js';
import type { SessionRecord } from '../../src/core/session-record.js';
import {
  check,
  freshPhone,
  journeyHost,
  sessionIds,
  start,
  status,
  type JourneyFixture,
} from './journey-host.js';

export const HOUR = 3_600_000;
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
 * `n` ended sessions of `method` on +7 915 from `device` users whose page followed the status, `verified`
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
): Promise<void> {
  const now = fx.sb.now();
  for (let i = 0; i < n; i++) {
    const record = {
      requestId: `seed-${process.pid}-${++seeded}`,
      phoneNumber: freshPhone(),
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
}
