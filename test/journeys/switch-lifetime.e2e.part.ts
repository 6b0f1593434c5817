/**
 * How long a switched journey is kept: as long as its newest step's record (its session's end and the
 * retention after it), not its first's. A step started late in the first one's life ends after it, so
 * past the first step's retention the status and check routes and the host's read of the number still
 * answer for the journey's last step.
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationService } from '../../src/verification/verification.service.js';
import { PLATFORMS } from '../support/verification-app.js';
import {
  cancel,
  check,
  freshPhone,
  journeyFixture,
  journeyHost,
  OWNER,
  problem,
  sessionIds,
  start,
  status,
  switchMethod,
} from './journey-host.js';

/** How long a session's record is kept past its end (SessionRecordRepository's retention). */
const RETENTION_MS = 24 * 3_600_000;

describe.each(PLATFORMS)('journeys: a switched journey’s lifetime (%s)', (platform) => {
  const fx = journeyFixture();

  /** An SMS journey switched to a flash call ten seconds before the SMS expires. */
  async function switchedLate() {
    const host = await journeyHost(fx, platform);
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'sms' });
    const id = first.body.verification_id as string;
    const [smsId] = sessionIds(fx.sb, phone);
    const smsEnds = Date.parse(fx.sb.getSession(smsId!)!.expires_at);
    await fx.sb.advance(smsEnds - 10_000 - fx.sb.now());
    const moved = await switchMethod(host, id, 'flash_call');
    return { host, phone, id, smsEnds, moved };
  }

  it('switched in the first step’s last seconds and verified: past the first step’s retention, status, check and the host still read the second step', async () => {
    const { host, phone, id, smsEnds, moved } = await switchedLate();
    // Ten seconds before the SMS expired, the user switched to a flash call; now the code.
    expect(moved.body).toMatchObject({ verification_id: id, method: 'flash_call' });
    const [, callId] = sessionIds(fx.sb, phone);
    const callEnds = Date.parse(fx.sb.getSession(callId!)!.expires_at);
    expect(callEnds - smsEnds).toBeGreaterThan(60_000);
    await fx.sb.deliver(callId!);
    const right = await check(host, id, fx.sb.getSession(callId!)!.code!);
    expect(right.body).toEqual({ verification_id: id, status: 'verified', verified: true });
    const verified = {
      verification_id: id,
      method: 'flash_call',
      status: 'verified',
      methods_tried: ['sms', 'flash_call'],
    };
    expect((await status(host, id)).body).toMatchObject(verified);

    // A minute past the SMS's retention, well within the call's: the journey is the call's still.
    await fx.sb.advance(smsEnds + RETENTION_MS + 60_000 - fx.sb.now());
    const seen = await status(host, id);
    expect({ http: seen.status, ...seen.body }).toMatchObject({ http: 200, ...verified });
    const checked = await check(host, id, '1234');
    expect({ ...problem(checked), verification_status: checked.body.verification_status }).toEqual({
      status: 409,
      error_code: 'not_pending',
      retry_after: null,
      verification_status: 'verified',
    });
    await expect(host.app.get(VerificationService).getVerifiedPhone(id, OWNER)).resolves.toBe(phone);
  });

  it('switched in the first step’s last seconds and left to expire: past the first step’s retention a cancel still answers canceled', async () => {
    const { host, id, smsEnds, moved } = await switchedLate();
    expect(moved.status).toBe(201);

    // The SMS's record is gone, the call's (expired) is kept: the journey is still there to cancel.
    await fx.sb.advance(smsEnds + RETENTION_MS + 60_000 - fx.sb.now());
    expect((await status(host, id)).body).toMatchObject({ method: 'flash_call', status: 'expired' });
    const canceled = await cancel(host, id);
    expect({ http: canceled.status, ...canceled.body }).toEqual({
      http: 200,
      verification_id: id,
      status: 'canceled',
    });
    expect((await status(host, id)).body).toMatchObject({ method: 'flash_call', status: 'canceled' });
  });
});
