/**
 * `fallback_available_at` learned from the method figures (`orchestration.fallback`): the fixed
 * `timeoutSeconds` until the figures of the method (numbers of the same calling code) hold
 * `minSamples` verified sessions, then the time by which all but `stalledShare` of those verified
 * had (their median at 0.5), bounded by the host's floor and ceiling; the switch route holds to the same moment. A
 * user who completes the earlier method after the switch is verified once.
 */
import { describe, expect, it } from '@jest/globals';
import { FALLBACK_FIGURES_TTL_MS } from '../../src/verification/fallback-timing.js';
import { PLATFORMS } from '../support/verification-app.js';
import {
  check,
  freshPhone,
  journeyFixture,
  journeyHost,
  problem,
  sessionIds,
  start,
  status,
  switchMethod,
  type JourneyFixture,
} from './journey-host.js';
import type { TestApp } from '../support/verification-app.js';

const iso = (ms: number) => new Date(ms).toISOString();
/** Users come from addresses of their own (`x-forwarded-for`, trusted). */
const PROXIED = { trustProxy: true };
/** Reverse calls are held to their fallback moment; five verified ones are enough figures. */
const LEARNING = {
  orchestration: {
    skippable: ['sms' as const],
    fallback: { minSamples: 5, stalledShare: 0.5, floorMs: 5_000, ceilingMs: 40_000 },
  },
};

let users = 0;
/**
 * A reverse call started and completed by its user `afterMs` later (figures for the method). Each
 * user its own owner and address: the figures count a bounded share of each (FigureEvidence).
 */
async function verifiedCall(fx: JourneyFixture, host: TestApp, afterMs: number): Promise<void> {
  const phone = freshPhone();
  users += 1;
  const user = { owner: `user-${users}`, ip: `10.${users >> 8}.${users & 255}.1` };
  const started = await start(host, { phone_number: phone, method: 'reverse_flash_call' }, user.owner, {
    'x-forwarded-for': user.ip,
  });
  expect(started.status).toBe(201);
  await fx.sb.advance(afterMs);
  await fx.sb.call(sessionIds(fx.sb, phone)[0]!, phone);
  await fx.sb.webhooksIdle();
}

describe.each(PLATFORMS)('journeys: the fallback moment learned from the figures (%s)', (platform) => {
  const fx = journeyFixture();

  it('the fixed timeout until minSamples verified sessions; then the median of their time to verify, for status and switch alike', async () => {
    const host = await journeyHost(fx, platform, LEARNING, {}, PROXIED);
    for (let i = 0; i < 4; i++) await verifiedCall(fx, host, 12_000);
    // Four verified calls are not enough: the fixed 45 s.
    const t0 = fx.sb.now();
    const early = await start(host, { phone_number: freshPhone(), method: 'reverse_flash_call' });
    expect((await status(host, early.body.verification_id)).body.fallback_available_at).toBe(
      iso(t0 + 45_000),
    );

    await verifiedCall(fx, host, 12_000);
    await fx.sb.advance(FALLBACK_FIGURES_TTL_MS);
    // Five verified, but the fifth started after the instance's last read: a step counts once it
    // started a ceiling (40 s) before a read, so a young host's fast successes do not come first.
    expect((await status(host, early.body.verification_id)).body.fallback_available_at).toBe(
      iso(t0 + 45_000),
    );
    await fx.sb.advance(40_000);
    // Five verified 12 s after their start (the (10 s, 20 s] bucket): their median, 15 s, as the
    // histogram tells it. The early step, pending past the ceiling, counts as one that did not verify:
    // 5 of 6 (waitingShare 0.4: from 18.7 s, later).
    const phone = freshPhone();
    const t1 = fx.sb.now();
    const learned = await start(host, { phone_number: phone, method: 'reverse_flash_call' });
    const id = learned.body.verification_id;
    expect((await status(host, id)).body.fallback_available_at).toBe(iso(t1 + 15_000));
    await fx.sb.advance(10_000);
    const held = await switchMethod(host, id);
    expect(problem(held)).toMatchObject({
      status: 409,
      error_code: 'fallback_not_available',
      retry_after: '5',
    });
    expect(held.body.fallback_available_at).toBe(iso(t1 + 15_000));
    await fx.sb.advance(5_000);
    const moved = await switchMethod(host, id);
    expect(moved.status).toBe(201);
    expect(moved.body.method).not.toBe('reverse_flash_call');

    // The journey that started before the figures sufficed is held to the same learned moment now.
    expect((await status(host, early.body.verification_id)).body.fallback_available_at).toBe(
      iso(t0 + 15_000),
    );
  });

  it('bounded by the floor and the ceiling; another calling code keeps the fixed timeout; false turns learning off', async () => {
    const host = await journeyHost(fx, platform, LEARNING, {}, PROXIED);
    for (let i = 0; i < 5; i++) await verifiedCall(fx, host, 2_000);
    await fx.sb.advance(FALLBACK_FIGURES_TTL_MS);
    let t = fx.sb.now();
    let started = await start(host, { phone_number: freshPhone(), method: 'reverse_flash_call' });
    // Verified within 5 s: the floor.
    expect((await status(host, started.body.verification_id)).body.fallback_available_at).toBe(
      iso(t + 5_000),
    );

    const slow = await journeyHost(
      fx,
      platform,
      { ...LEARNING, phone: { allowedCountries: ['RU', 'UA'] } },
      {},
      PROXIED,
    );
    for (let i = 0; i < 5; i++) await verifiedCall(fx, slow, 100_000);
    await fx.sb.advance(FALLBACK_FIGURES_TTL_MS);
    t = fx.sb.now();
    started = await start(slow, { phone_number: freshPhone(), method: 'reverse_flash_call' });
    expect((await status(slow, started.body.verification_id)).body.fallback_available_at).toBe(
      iso(t + 40_000),
    );
    // Figures of +7 numbers say nothing of +380 ones.
    started = await start(slow, { phone_number: '+380501234567', method: 'reverse_flash_call' });
    expect(started.status).toBe(201);
    expect((await status(slow, started.body.verification_id)).body.fallback_available_at).toBe(
      iso(t + 45_000),
    );

    const fixed = await journeyHost(
      fx,
      platform,
      { orchestration: { ...LEARNING.orchestration, fallback: false } },
      {},
      PROXIED,
    );
    for (let i = 0; i < 5; i++) await verifiedCall(fx, fixed, 2_000);
    await fx.sb.advance(FALLBACK_FIGURES_TTL_MS);
    t = fx.sb.now();
    started = await start(fixed, { phone_number: freshPhone(), method: 'reverse_flash_call' });
    expect((await status(fixed, started.body.verification_id)).body.fallback_available_at).toBe(
      iso(t + 45_000),
    );
  });

  it('a user who completes the earlier method after the learned switch is verified once', async () => {
    const host = await journeyHost(fx, platform, LEARNING, {}, PROXIED);
    for (let i = 0; i < 5; i++) await verifiedCall(fx, host, 12_000);
    await fx.sb.advance(FALLBACK_FIGURES_TTL_MS);
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'reverse_flash_call' });
    const id = first.body.verification_id;
    // Five verified at 12 s: the moment is their median, 15 s.
    await fx.sb.advance(15_000);
    const moved = await switchMethod(host, id, 'sms');
    expect(moved.status).toBe(201);
    const [callId, smsId] = sessionIds(fx.sb, phone);
    const before = host.events.length;
    // The user dials the number after all, then types the SMS code too.
    await fx.sb.call(callId!, phone);
    await fx.sb.webhooksIdle();
    expect((await status(host, id)).body).toMatchObject({ status: 'verified', method: 'reverse_flash_call' });
    const late = await check(host, id, String(fx.sb.getSession(smsId!)!.code));
    expect(problem(late)).toMatchObject({ status: 409, error_code: 'not_pending' });
    await fx.sb.webhooksIdle();
    const verified = host.events.slice(before).filter((e) => e.event === 'verification.verified');
    expect(verified.map((e) => [e.phoneNumber, e.method])).toEqual([[phone, 'reverse_flash_call']]);
    expect(fx.sb.getSession(smsId!)!.status).not.toBe('verified');
  });
});
