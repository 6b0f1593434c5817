import { describe, expect, it } from '@jest/globals';
import { VerificationApiError } from '../api/verification-api.error.js';
import { newSessionRecord, type SessionRecord } from '../core/session-record.js';
import type { VerificationStatus } from '../core/verification-status.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { checkRefusal } from './check-refusal.js';

/*
 * What the frontend is answered when the API did not accept a code: the API's invalid_code with the
 * attempts left, or, where the API answers an expired or spent session with 400 or 409 ("not shown"),
 * the session's truth as the API tells it now, on the module's clock (expiry at its bound).
 */

const NOW = Date.parse('2026-11-30T12:00:00Z');
const RECORD = newSessionRecord(
  { requestId: 'r-1', phoneNumber: '+79123456789', method: 'sms', status: 'sent' },
  { createdAt: NOW - 60_000, ttlMs: 300_000, as: 'answer' },
);

function apiError(status: number, problem?: Record<string, unknown>): VerificationApiError {
  return new VerificationApiError({ operation: 'check', status, ...(problem ? { problem } : {}) });
}
const wrong = (attempts?: number) =>
  apiError(400, {
    error_code: 'invalid_code',
    ...(attempts === undefined ? {} : { attempts_remaining: attempts }),
  });

/** The answer for `error` while the API says the session is `status`, expiring at `expiresAt`. */
async function answer(
  error: unknown,
  status: VerificationStatus = 'sent',
  expiresAt = NOW + 60_000,
): Promise<{ status: number; error_code: string; extra: Record<string, unknown>; asked: number }> {
  let asked = 0;
  const refusal = await checkRefusal(error, RECORD, {
    now: NOW,
    refresh: (record: SessionRecord) => {
      asked += 1;
      return Promise.resolve({ ...record, status, expiresAt });
    },
    upstreamFailure: () => Promise.resolve(new VerificationClientError('service_unavailable')),
  });
  return { status: refusal.getStatus(), error_code: refusal.errorCode, extra: refusal.extra, asked };
}

describe('checkRefusal: a wrong code', () => {
  it('attempts left: invalid_code with them, without asking the API again', async () => {
    expect(await answer(wrong(2), 'expired', NOW - 1)).toStrictEqual({
      status: 400,
      error_code: 'invalid_code',
      extra: { attempts_remaining: 2 },
      asked: 0,
    });
    expect((await answer(wrong(1))).extra).toStrictEqual({ attempts_remaining: 1 });
  });

  it('none left: the session’s truth decides (expired at its bound, else invalid_code with 0)', async () => {
    const zero = { status: 400, error_code: 'invalid_code', extra: { attempts_remaining: 0 }, asked: 1 };
    expect(await answer(wrong(0), 'sent', NOW + 1)).toStrictEqual(zero);
    const expired = {
      status: 409,
      error_code: 'not_pending',
      extra: { verification_status: 'expired' },
      asked: 1,
    };
    expect(await answer(wrong(0), 'sent', NOW)).toStrictEqual(expired);
    expect(await answer(wrong(0), 'expired', NOW + 60_000)).toStrictEqual(expired);
    expect(await answer(wrong(-1), 'sent', NOW - 1)).toStrictEqual(expired);
    // A failed session (its attempts spent) past its expiry is failed, not expired.
    expect(await answer(wrong(0), 'failed', NOW - 1)).toStrictEqual({
      ...zero,
      extra: { attempts_remaining: 0 },
    });
  });

  it('no attempts_remaining in the answer: the truth decides, and invalid_code carries no count', async () => {
    expect(await answer(wrong(), 'sent', NOW + 1)).toStrictEqual({
      status: 400,
      error_code: 'invalid_code',
      extra: {},
      asked: 1,
    });
  });

  it('a code the API finds malformed: validation_error on the code field', async () => {
    const refusal = await answer(apiError(400, { error_code: 'validation_error' }));
    expect(refusal).toMatchObject({ status: 400, error_code: 'validation_error', asked: 0 });
    expect(refusal.extra).toStrictEqual({
      errors: [{ field: 'code', message: 'code must be 4 to 8 digits' }],
    });
  });
});

describe('checkRefusal: 400 or 409 for a session that is not pending', () => {
  it('409: not_pending with the status the API tells now; expired at its bound, not a tick before', async () => {
    const conflict = apiError(409, { error_code: 'conflict' });
    const notPending = (status: string) => ({
      status: 409,
      error_code: 'not_pending',
      extra: { verification_status: status },
      asked: 1,
    });
    expect(await answer(conflict, 'verified', NOW - 1)).toStrictEqual(notPending('verified'));
    expect(await answer(conflict, 'sent', NOW)).toStrictEqual(notPending('expired'));
    expect(await answer(conflict, 'sent', NOW + 1)).toStrictEqual(notPending('sent'));
    expect(await answer(apiError(409), 'failed')).toStrictEqual(notPending('failed'));
  });

  it('400 with another code: invalid_code while the session is pending, else not_pending', async () => {
    const other = apiError(400, { error_code: 'bad_request' });
    expect(await answer(other, 'sent', NOW + 1)).toStrictEqual({
      status: 400,
      error_code: 'invalid_code',
      extra: {},
      asked: 1,
    });
    expect(await answer(other, 'sent', NOW)).toMatchObject({
      error_code: 'not_pending',
      extra: { verification_status: 'expired' },
    });
    expect(await answer(other, 'failed', NOW + 1)).toMatchObject({
      error_code: 'not_pending',
      extra: { verification_status: 'failed' },
    });
  });
});

describe('checkRefusal: the answer’s own words and the codes of other statuses', () => {
  it('invalid_code says the code is not correct, with or without a count', async () => {
    const detail = async (error: VerificationApiError) =>
      (
        await checkRefusal(error, RECORD, {
          now: NOW,
          refresh: (record) => Promise.resolve({ ...record, expiresAt: NOW + 1 }),
          upstreamFailure: () => Promise.resolve(new VerificationClientError('service_unavailable')),
        })
      ).detail;
    expect(await detail(wrong(2))).toBe('The code is not correct');
    expect(await detail(wrong())).toBe('The code is not correct');
  });

  it('invalid_code or validation_error named with another status than 400: the session’s truth decides', async () => {
    const conflict = await answer(
      apiError(409, { error_code: 'invalid_code', attempts_remaining: 2 }),
      'sent',
      NOW + 1,
    );
    expect(conflict).toStrictEqual({
      status: 409,
      error_code: 'not_pending',
      extra: { verification_status: 'sent' },
      asked: 1,
    });
    const invalid = await answer(apiError(409, { error_code: 'validation_error' }), 'verified', NOW - 1);
    expect(invalid).toMatchObject({ error_code: 'not_pending', extra: { verification_status: 'verified' } });
    // A 400 with a count but another code: no count is passed on.
    const other = await answer(
      apiError(400, { error_code: 'bad_request', attempts_remaining: 2 }),
      'sent',
      NOW + 1,
    );
    expect(other).toStrictEqual({ status: 400, error_code: 'invalid_code', extra: {}, asked: 1 });
  });
});

describe('checkRefusal: anything else', () => {
  it('other API statuses and other errors are the upstream failure’s answer, without asking the session', async () => {
    for (const error of [
      apiError(500),
      apiError(401),
      apiError(429, { error_code: 'invalid_code' }),
      new Error('x'),
    ])
      expect(await answer(error)).toMatchObject({ status: 503, error_code: 'service_unavailable', asked: 0 });
  });
});
