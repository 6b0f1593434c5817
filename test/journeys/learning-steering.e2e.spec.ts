/**
 * What `auto` learns cannot be steered from outside (issue 47; issue 43, finding 6): free
 * reverse-call starts nobody completes, from many addresses, move neither the learned fallback
 * moment of legitimate users nor the method order of `cost_per_success`. The figures learn from
 * evidence of real users (a page that followed the status, a caller with a record, a verified
 * journey), each caller, address and network counting a bounded share of a day. Express on a
 * MemoryStore, Fastify on Redis.
 */
import { describe, expect, it } from '@jest/globals';
import { FALLBACK_FIGURES_TTL_MS } from '../../src/verification/fallback-timing.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { PLATFORMS, type TestApp } from '../support/verification-app.js';
import {
  check,
  freshPhone,
  journeyFixture,
  journeyHost,
  sessionIds,
  start,
  status,
  type JourneyFixture,
} from './journey-host.js';

const HOUR = 3_600_000;
const LEARNING = { orchestration: { fallback: { minSamples: 10 } } };
/** Sessions expire (the sandbox's TTL) and their webhooks arrive within this. */
const EXPIRY_MS = 300_000;

interface User {
  owner: string | null;
  ip: string;
}

const from = (ip: string) => ({ 'x-forwarded-for': ip });

/**
 * A legitimate user on the page: starts `method` (mobile), follows the status, and completes it
 * after `afterMs` (a reverse call placed, a flash call's code typed), or never (`null`).
 */
async function realUser(
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
async function realUsers(
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

/** Free reverse-call starts, each from its own address (`ipOf`), none completed; `follow`: the bot polls the status too. */
async function abandonedStarts(
  fx: JourneyFixture,
  host: TestApp,
  count: number,
  ipOf: (i: number) => string,
  follow = false,
): Promise<void> {
  const ids: unknown[] = [];
  // In batches, as a bot would send them.
  for (let batch = 0; batch < count; batch += 25) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(25, count - batch) }, (_, j) =>
        start(
          host,
          { phone_number: freshPhone(), method: 'reverse_flash_call', device: 'mobile' },
          null,
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
    for (const id of ids) await status(host, id, null);
  }
}

/** The learned moment a new legitimate user's reverse call gets, ms after its start (read once the figures are re-read). */
async function momentFor(fx: JourneyFixture, host: TestApp): Promise<number> {
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

/** Express keeps its figures in a MemoryStore, Fastify in Redis: the rules are the store's operations. */
const storeOf = (platform: string) =>
  platform === 'fastify'
    ? { store: { url: sharedRedisUrl(), keyPrefix: `steer-${process.pid}-${Date.now()}:` } }
    : {};

describe.each(PLATFORMS)('learning nobody can steer (%s)', (platform) => {
  const fx = journeyFixture();

  it('150 free reverse-call starts nobody completes leave the legitimate users’ fallback moment where it was', async () => {
    const host = await journeyHost(
      fx,
      platform,
      { ...LEARNING, ...storeOf(platform) },
      {},
      { trustProxy: true },
    );
    await realUsers(fx, host, 'reverse_flash_call', 51);
    // The instance reads a moment's figures a ceiling apart (matureFigures): twice, then it stands.
    await momentFor(fx, host);
    await fx.sb.advance(90_000);
    const before = await momentFor(fx, host);
    expect(before).toBeGreaterThan(20_000);

    // 150 addresses in 150 networks, one abandoned start each; they expire unverified.
    await abandonedStarts(fx, host, 150, (i) => `203.${i}.7.1`);
    await fx.sb.advance(EXPIRY_MS);
    await fx.sb.webhooksIdle();
    // Past any damping: what the figures say now.
    await fx.sb.advance(2 * HOUR);
    await momentFor(fx, host);
    await fx.sb.advance(90_000);
    const after = await momentFor(fx, host);
    expect(Math.abs(after - before)).toBeLessThanOrEqual(before * 0.25);

    // The same bot polling the status, from one network: that network counts ten starts a day.
    await abandonedStarts(fx, host, 150, (i) => `203.0.113.${i}`, true);
    await fx.sb.advance(EXPIRY_MS);
    await fx.sb.webhooksIdle();
    await fx.sb.advance(2 * HOUR);
    await momentFor(fx, host);
    await fx.sb.advance(90_000);
    const polled = await momentFor(fx, host);
    expect(Math.abs(polled - before)).toBeLessThanOrEqual(before * 0.25);
  }, 120_000);

  it('600 addresses of abandoned free starts do not move the method order of cost_per_success', async () => {
    const host = await journeyHost(
      fx,
      platform,
      {
        orchestration: { mode: 'cost_per_success', minSamples: 10, minCallers: 5, fallback: false },
        ...storeOf(platform),
      },
      {},
      { trustProxy: true },
    );
    // Reverse call 0.25 RUB, 15 of 20 verified; flash call 0.80 RUB, 15 of 20: the reverse call first.
    await realUsers(fx, host, 'reverse_flash_call', 61);
    await realUsers(fx, host, 'flash_call', 62);
    const auto = async () => {
      await fx.sb.advance(10 * 60_000); // pricesTtlMs: the figures are read again
      const res = await start(host, { phone_number: freshPhone() }, 'someone', from('192.0.2.2'));
      expect(res.status).toBe(201);
      return res.body.method;
    };
    expect(await auto()).toBe('reverse_flash_call');

    await abandonedStarts(fx, host, 600, (i) => `100.${64 + (i >> 8)}.${i & 255}.9`);
    // While they are pending, and once they have expired.
    expect(await auto()).toBe('reverse_flash_call');
    await fx.sb.advance(EXPIRY_MS);
    await fx.sb.webhooksIdle();
    expect(await auto()).toBe('reverse_flash_call');

    // The same botnet with a page following each status (a poll costs nothing): 600 more, in 600
    // other networks. A free method's unverified end from a giver who proved no number teaches nothing.
    await abandonedStarts(fx, host, 600, (i) => `100.${80 + (i >> 8)}.${i & 255}.9`, true);
    expect(await auto()).toBe('reverse_flash_call');
    await fx.sb.advance(EXPIRY_MS);
    await fx.sb.webhooksIdle();
    expect(await auto()).toBe('reverse_flash_call');
  }, 180_000);
});
