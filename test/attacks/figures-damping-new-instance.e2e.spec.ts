/**
 * Attack (lane attack-n, issue 47: "a jump in a learned moment beyond its recent range is damped and
 * reported, not adopted at once"): the damping is each instance's memory (FallbackTiming's adopted
 * moments), and an instance younger than SETTLED_AFTER_MS adopts what the figures say. Two hosts on one
 * Redis: the first has followed the reverse call's moment (36 s) for a quarter of an hour when poisoned
 * figures (followed free starts from many networks, see figures-followed-botnet) say 10 s; it moves
 * toward it at its bounded pace. An instance booted then (a deploy, an autoscaled replica, a restart
 * after a crash) offers every user it serves the fallback at 10 s at once, and reports nothing.
 *
 * Expected: a new instance on the same store starts from the moment the deployment adopted (kept in
 * the store), so its users get what the running instance gives them, within its damping. Low (the
 * damping is a second line behind the evidence rules; steering of the fallback moment). Fails on main
 * (d9234d1c).
 */
import { describe, expect, it } from '@jest/globals';
import { FALLBACK_FIGURES_TTL_MS } from '../../src/verification/fallback-timing.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { createTestApp, PLATFORMS, type TestApp } from '../support/verification-app.js';
import {
  check,
  freshPhone,
  journeyFixture,
  journeyHost,
  sessionIds,
  start,
  status,
  type JourneyFixture,
} from '../journeys/journey-host.js';
import { moduleOptions } from '../webhooks/harness.js';

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

describe.each(PLATFORMS)('a new instance and a damped moment (%s)', (platform) => {
  const fx = journeyFixture();

  it('an instance booted on the same Redis gives the moment the running one adopted', async () => {
    const store = { url: sharedRedisUrl(), keyPrefix: `damp-${process.pid}-${Date.now()}:` };
    const first = await journeyHost(fx, platform, { ...LEARNING, store }, {}, { trustProxy: true });
    await realUsers(fx, first, 'reverse_flash_call', 51);
    // The first instance follows the moment for a quarter of an hour: its range is settled.
    for (let read = 0; read < 10; read++) {
      await momentFor(fx, first);
      await fx.sb.advance(60_000);
    }
    const before = await momentFor(fx, first);
    expect(before).toBeGreaterThan(20_000);

    await abandonedStarts(
      fx,
      first,
      150,
      (i) => `203.${Math.floor(i / 10)}.7.${Math.floor((i % 10) / 3) + 1}`,
      true,
    );
    await fx.sb.advance(EXPIRY_MS);
    await fx.sb.webhooksIdle();
    const running = await momentFor(fx, first);

    // A second instance of the same deployment: same account, keys and Redis.
    const base = moduleOptions(fx.sb, { ...LEARNING, store });
    const secrets = fx.sb.getAccount(fx.apiKey)! as { api_secret: string; webhook_secret: string };
    const second = await createTestApp({
      platform,
      trustProxy: true,
      module: {
        ...base,
        api: { ...base.api, apiKey: fx.apiKey, apiSecret: secrets.api_secret },
        webhooks: { secret: secrets.webhook_secret },
      },
    });
    fx.hosts.push(second);
    const fresh = await momentFor(fx, second);
    expect({ running, fresh, apart: Math.abs(fresh - running) <= running * 0.1 }).toEqual({
      running,
      fresh,
      apart: true,
    });
  }, 180_000);
});
