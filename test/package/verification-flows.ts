import { expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call } from '../support/verification-app.js';
import type { HostApp } from './packed-app.js';

/**
 * Verifications completed through the four client routes of a host app alone, one per kind of method. The
 * phone numbers start with `prefix`, so that two hosts sharing a sandbox never share a number.
 */
export function itCompletesVerifications(
  context: () => { sb: VerificationSandbox; host: HostApp },
  prefix: string,
): void {
  const start = async (phone: string, method: string) => {
    const { sb, host } = context();
    const res = await call(host.url, 'POST', '/verification/start', { phone_number: phone, method });
    expect(res.status).toBe(201);
    return {
      id: res.body.verification_id as string,
      body: res.body,
      requestId: sb.sessionsFor(phone)[0].request_id as string,
    };
  };
  const status = async (id: string) =>
    (await call(context().host.url, 'GET', `/verification/status/${id}`)).body;
  const check = async (id: string, requestId: string) =>
    (
      await call(context().host.url, 'POST', '/verification/check', {
        verification_id: id,
        code: context().sb.getSession(requestId)!.code,
      })
    ).body;

  it('SMS', async () => {
    const { id, requestId } = await start(`${prefix}1`, 'sms');
    await context().sb.deliver(requestId);
    expect(await check(id, requestId)).toMatchObject({ verified: true });
  });

  it('reverse flash call', async () => {
    const { id, requestId } = await start(`${prefix}2`, 'reverse_flash_call');
    await context().sb.call(requestId, `${prefix}2`);
    expect((await status(id)).status).toBe('verified');
  });

  it('msgr2_bot', async () => {
    const { id, requestId, body } = await start(`${prefix}3`, 'msgr2_bot');
    expect(typeof body.deep_link).toBe('string');
    await context().sb.share(requestId, `${prefix}3`);
    expect((await status(id)).awaiting_code).toBe(true);
    expect(await check(id, requestId)).toMatchObject({ verified: true });
  });

  it('operator_id with the SMS fallback', async () => {
    const { id, requestId } = await start(`${prefix}4`, 'operator_id');
    await context().sb.operator(requestId, 'fallback');
    expect((await status(id)).awaiting_code).toBe(true);
    expect(await check(id, requestId)).toMatchObject({ status: 'sent', verified: false });
    await context().sb.advance(3000);
    expect((await status(id)).status).toBe('verified');
    expect(context().host.lines).toEqual(
      expect.arrayContaining([
        { event: 'verification.code_required', method: 'operator_id' },
        { event: 'verification.verified', method: 'operator_id' },
      ]),
    );
  });
}

/**
 * A user's number changed as docs/verified-phone-guard.md shows: a step-up of the current number in front of
 * the host's route, the new one verified for `change_phone`, the host's rebind and the event.
 */
export function itChangesAPhone(
  context: () => { sb: VerificationSandbox; host: HostApp },
  prefix: string,
): void {
  it('a change of phone behind a step-up', async () => {
    const { sb, host } = context();
    const user = { 'x-user': `u${prefix}` };
    const verified = async (phone: string, purpose: string) => {
      const started = await call(
        host.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method: 'reverse_flash_call', purpose },
        user,
      );
      expect(started.status).toBe(201);
      await sb.call(sb.sessionsFor(phone)[0].request_id as string, phone);
      return String(started.body.verification_id);
    };
    const [current, next] = [`${prefix}5`, `${prefix}6`];
    const stepUp = await verified(current, 'step_up');
    const toNext = await verified(next, 'change_phone');
    const headers = { ...user, 'x-phone': current };
    // Without the step-up the guard refuses; with it, the number changes.
    const refused = await call(host.url, 'POST', '/account/phone', { verification_id: toNext }, headers);
    expect(refused.body).toMatchObject({ status: 403, reason: 'purpose' });
    const changed = await call(
      host.url,
      'POST',
      '/account/phone',
      { verification_id: toNext },
      { ...headers, 'x-verification-id': stepUp },
    );
    expect(changed.status).toBe(200);
    expect(host.lines).toEqual(
      expect.arrayContaining([
        {
          rebind: expect.objectContaining({
            owner: `u${prefix}`,
            oldPhoneNumber: current,
            newPhoneNumber: next,
          }),
        },
        { event: 'verification.phone_changed', owner: `u${prefix}` },
      ]),
    );
  });
}

/** One SMS verification through the client routes: start, the code delivered, check. */
export function itCompletesAVerification(
  context: () => { sb: VerificationSandbox; host: HostApp },
  phone: string,
): void {
  it('SMS', async () => {
    const { sb, host } = context();
    const started = await call(host.url, 'POST', '/verification/start', {
      phone_number: phone,
      method: 'sms',
    });
    expect(started.status).toBe(201);
    const requestId = sb.sessionsFor(phone)[0].request_id as string;
    await sb.deliver(requestId);
    const checked = await call(host.url, 'POST', '/verification/check', {
      verification_id: started.body.verification_id,
      code: sb.getSession(requestId)!.code,
    });
    expect(checked.body).toMatchObject({ verified: true });
    expect(
      (await call(host.url, 'GET', `/verification/status/${started.body.verification_id as string}`)).body,
    ).toMatchObject({ status: 'verified' });
  });
}
