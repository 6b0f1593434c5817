/**
 * Attack (lane attack-p, b16b826e session records with one-letter names): a rolling deploy leaves
 * records an older instance wrote (long names, the end as a time, the cost as an object) in the store
 * beside the new ones. One such record of a pending SMS session, read by this version over HTTP: its
 * owner alone sees it (another owner gets 404), its expiry is the one the start answered, a wrong code
 * is refused and the right one verifies it, and the record written back reads the same. Held on
 * attack-base (e6f8de49) when written.
 */
import { describe, expect, it } from '@jest/globals';
import { restoredRecord } from '../../src/core/session-record.js';
import { SessionRecordRepository } from '../../src/sessions/session-record.repository.js';
import { VerificationStore } from '../../src/store/verification-store.interface.js';
import type { VerificationStore as Store } from '../../src/store/verification-store.interface.js';
import { PLATFORMS } from '../support/verification-app.js';
import { storeOf } from '../journeys/figure-learning.js';
import {
  check,
  freshPhone,
  journeyFixture,
  journeyHost,
  sessionIds,
  start,
  status,
} from '../journeys/journey-host.js';

describe.each(PLATFORMS)('a session record an older instance wrote (%s)', (platform) => {
  const fx = journeyFixture();

  it('reads as it was: owner, expiry, a wrong and a right code', async () => {
    const host = await journeyHost(fx, platform, storeOf(platform));
    const store = host.app.get<Store>(VerificationStore as never, { strict: false });
    const phone = freshPhone();
    const started = await start(host, { phone_number: phone, method: 'sms' }, 'alice');
    expect(started.status).toBe(201);
    const [id] = sessionIds(fx.sb, phone);
    const key = SessionRecordRepository.key(id!);
    const short = JSON.parse((await store.get(key))!) as Record<string, unknown>;
    expect('p' in short).toBe(true);
    // As the older version stored it: every field under its long name (sealed ones still sealed).
    const long = restoredRecord(short, id!) as unknown as Record<string, unknown>;
    expect(long.cost).toEqual({ amount: expect.any(Number), currency: 'RUB' });
    await store.set(key, JSON.stringify(long), 600_000);

    expect((await status(host, started.body.verification_id, 'mallory')).status).toBe(404);
    const seen = await status(host, started.body.verification_id, 'alice');
    expect(seen.status).toBe(200);
    expect(seen.body.expires_at).toBe(started.body.expires_at);
    await fx.sb.deliver(id!);
    const code = String(fx.sb.getSession(id!)!.code);
    const wrong = code === '000000' ? '111111' : '000000';
    const refused = await check(host, started.body.verification_id, wrong, 'alice');
    expect(refused.body.verified).not.toBe(true);
    const right = await check(host, started.body.verification_id, code, 'alice');
    expect(right.body.verified).toBe(true);
    const after = await status(host, started.body.verification_id, 'alice');
    expect(after.body).toMatchObject({ status: 'verified', expires_at: started.body.expires_at });
    expect((await status(host, started.body.verification_id, 'mallory')).status).toBe(404);
  }, 60_000);
});
