/**
 * A caller's record (a number it proved) makes its unverified ends evidence for the learned fallback
 * moment (FigureEvidence: `vouched`) for STATS_RETENTION_DAYS, not only for the day of the proof:
 * returning users who proved their number three days before and give up a reverse call teach the
 * moment as much as users who proved it the same day. Two hosts (accounts and stores of their own), the
 * same population on each (22 users: 12 complete at 25–36 s, 10 give up), only the age of the records
 * differing: the moment a new user gets is the same (28 889 ms on both; with records kept a day past
 * their session, the older host's give-ups were `unproven` and its moment 34 500 ms).
 */
import { describe, expect, it } from '@jest/globals';
import { call, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { EXPIRY_MS, from, LEARNING, momentFor, realUser, storeOf } from './figure-learning.js';
import {
  freshPhone,
  journeyFixture,
  journeyHost,
  sessionIds,
  start,
  type JourneyFixture,
} from './journey-host.js';

const DAY = 24 * 3_600_000;
const USERS = 22;
let population = 0;

/** Twenty-two users (an owner and an address each) who each prove a number of theirs by SMS. */
async function proveNumbers(fx: JourneyFixture, host: TestApp, net: number): Promise<void> {
  for (let i = 0; i < USERS; i++) {
    const owner = `returning-${net}-${i}`;
    const headers = { 'x-user': owner, ...from(`198.${net}.${i}.10`) };
    const phone = freshPhone();
    const res = await start(
      host,
      { phone_number: phone, method: 'sms', device: 'mobile' },
      owner,
      from(`198.${net}.${i}.10`),
    );
    expect(res.status).toBe(201);
    const [id] = sessionIds(fx.sb, phone);
    const code = String(fx.sb.getSession(id!)!.code);
    const proved = await call(
      host.url,
      'POST',
      '/verification/check',
      { verification_id: res.body.verification_id, code },
      headers,
    );
    expect(proved.body.status).toBe('verified');
  }
  await fx.sb.webhooksIdle();
}

/**
 * The same users come back for a reverse call: 12 complete it at 25–36 s, 10 give up (enough ended
 * sessions that those who give up bring the moment forward: `waitingShare`).
 */
async function comeBack(fx: JourneyFixture, host: TestApp, net: number): Promise<void> {
  for (let i = 0; i < USERS; i++)
    await realUser(
      fx,
      host,
      { owner: `returning-${net}-${i}`, ip: `198.${net}.${i}.10` },
      'reverse_flash_call',
      i < 12 ? 25_000 + i * 1_000 : null,
    );
  await fx.sb.advance(EXPIRY_MS);
  await fx.sb.webhooksIdle();
}

describe.each(PLATFORMS)('the fallback moment and the age of callers’ records (%s)', (platform) => {
  const fx = journeyFixture();

  it('users who proved their number 3 days before teach the moment as those who proved it that day', async () => {
    const boot = () =>
      journeyHost(fx, platform, { ...LEARNING, ...storeOf(platform) }, {}, { trustProxy: true });
    const older = await boot();
    const olderNet = 60 + population++;
    await proveNumbers(fx, older, olderNet);
    await fx.sb.advance(3 * DAY);
    await comeBack(fx, older, olderNet);
    const olderMoment = await momentFor(fx, older);

    const sameDay = await boot();
    const sameDayNet = 60 + population++;
    await proveNumbers(fx, sameDay, sameDayNet);
    await comeBack(fx, sameDay, sameDayNet);
    const sameDayMoment = await momentFor(fx, sameDay);

    expect(sameDayMoment).toBeGreaterThan(10_000);
    expect(olderMoment).toBe(sameDayMoment);
  });
});
