import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationSandbox } from '../../src/testing/index.js';
import { api, balanceOf, control, initiate } from './sandbox-client.js';

/** Every method of the spec, end to end over HTTP, with the end user's side played by the control API. */
describe('sandbox methods', () => {
  let sb: VerificationSandbox;

  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0, freezeClock: true });
  });
  afterAll(async () => {
    await sb.close();
  });

  const get = async (id: string) => (await api(sb, 'GET', `/v1/verify/${id}`)).body;
  const check = (id: string, code: string) =>
    api(sb, 'POST', '/v1/verify/check', { body: { request_id: id, code } });

  describe('reverse_flash_call', () => {
    it('returns a +7 number to call and code_length, and has no code to check', async () => {
      const s = await initiate(sb, '+79991110001', 'reverse_flash_call');
      expect(s).toMatchObject({
        method: 'reverse_flash_call',
        status: 'sent',
        code_length: 4,
        cost: { amount: 0.25 },
      });
      expect(s.number_to_call).toMatch(/^\+7\d{10}$/);
      const res = await check(s.request_id, '1234');
      expect(res.status).toBe(409);
      expect(res.body.error_code).toBe('not_pending');
      expect(sb.getSession(s.request_id)!.attempts_remaining).toBe(3);
    });

    it('is confirmed only by a call from the number being verified', async () => {
      const s = await initiate(sb, '+79991110002', 'reverse_flash_call');
      const wrong = await control(sb, 'POST', `/sessions/${s.request_id}/call`, { from: '+79991110003' });
      expect(wrong.status).toBe(200);
      expect(wrong.body).toMatchObject({ result: 'ignored', status: 'sent', charged: false });
      expect(wrong.body.detail).toContain('no change');
      expect((await get(s.request_id)).status).toBe('sent');

      const right = await control(sb, 'POST', `/sessions/${s.request_id}/call`, { from: '+7 999 111-00-02' });
      expect(right.body).toMatchObject({ result: 'verified', status: 'verified', charged: true });
      const polled = await get(s.request_id);
      expect(polled.status).toBe('verified');
      expect(Date.parse(polled.verified_at)).toBeLessThanOrEqual(sb.now());
    });
  });

  describe('flash_call', () => {
    it('calls from a +7 number whose trailing code_length digits are the code', async () => {
      const s = await initiate(sb, '+79991110011', 'flash_call');
      expect(s).toMatchObject({ method: 'flash_call', code_length: 4, cost: { amount: 0.8 } });
      expect(sb.getSession(s.request_id)!.incoming_number).toBeNull();
      const delivered = await control(sb, 'POST', `/sessions/${s.request_id}/deliver`);
      expect(delivered.body.status).toBe('delivered');
      const incoming: string = delivered.body.incoming_number;
      expect(incoming).toMatch(/^\+7\d{10}$/);
      const code = incoming.slice(-4);
      expect(code).toBe(delivered.body.code);
      const res = await check(s.request_id, code);
      expect(res.body.status).toBe('verified');
    });
  });

  describe('msgr1_otp', () => {
    it.each(['msgr1_otp', 'msgr1'])(
      'accepts %s on input and answers with the schema discriminator msgr1',
      async (name) => {
        const s = await initiate(sb, '+79991110021', name);
        expect(s).toMatchObject({ method: 'msgr1', code_length: 6, cost: { amount: 0.9 } });
        expect((await get(s.request_id)).method).toBe('msgr1');
        expect(sb.getSession(s.request_id)!.method).toBe('msgr1_otp');
        await sb.deliver(s.request_id);
        const res = await check(s.request_id, sb.getSession(s.request_id)!.code!);
        expect(res.body.status).toBe('verified');
      },
    );
  });

  describe('msgr2_bot', () => {
    it('gives a deep link of the spec shape and sends nothing until the same number is shared', async () => {
      const s = await initiate(sb, '+79991110031', 'msgr2_bot');
      expect(s).toMatchObject({ method: 'msgr2_bot', status: 'sent', code_length: 6, cost: { amount: 1 } });
      expect(s.deep_link).toMatch(/^https:\/\/msgr2\.example\/[A-Za-z0-9_]+\?start=[A-Za-z0-9]+$/);
      expect((await get(s.request_id)).awaiting_code).toBe(false);
      const before = await balanceOf(sb);

      const other = await control(sb, 'POST', `/sessions/${s.request_id}/share`, {
        phone_number: '+79991110039',
      });
      expect(other.body).toMatchObject({ result: 'ignored', status: 'sent', charged: false, code: null });
      expect(other.body.shared_phone_number).toBe('+79991110039');
      expect(await balanceOf(sb)).toBe(before);
      const early = await check(s.request_id, '123456');
      expect(early.status).toBe(409);
      expect(sb.getSession(s.request_id)!.attempts_remaining).toBe(3);

      const same = await control(sb, 'POST', `/sessions/${s.request_id}/share`, {
        phone_number: '+79991110031',
      });
      expect(same.body).toMatchObject({
        result: 'delivered',
        status: 'delivered',
        awaiting_code: true,
        charged: true,
      });
      expect(await balanceOf(sb)).toBe(before - 1);
      const polled = await get(s.request_id);
      expect(polled).toMatchObject({ status: 'delivered', awaiting_code: true });
      const res = await check(s.request_id, same.body.code);
      expect(res.body.status).toBe('verified');
    });
  });

  describe('operator_id', () => {
    it('push approve verifies without a code', async () => {
      const s = await initiate(sb, '+79991110041', 'operator_id');
      expect(s).toMatchObject({
        method: 'operator_id',
        status: 'sent',
        awaiting_code: false,
        cost: { amount: 2 },
      });
      const tooEarly = await check(s.request_id, '123456');
      expect(tooEarly.status).toBe(409);
      expect(tooEarly.body.error_code).toBe('not_pending');
      expect(sb.getSession(s.request_id)!.attempts_remaining).toBe(3);
      const approved = await control(sb, 'POST', `/sessions/${s.request_id}/operator`, {
        outcome: 'approve',
      });
      expect(approved.body).toMatchObject({
        result: 'verified',
        status: 'verified',
        operator_state: 'approved',
      });
    });

    it('falls back to an SMS code; an accepted code answers 200 sent and the result follows', async () => {
      const s = await initiate(sb, '+79991110042', 'operator_id');
      const fb = await control(sb, 'POST', `/sessions/${s.request_id}/operator`, { outcome: 'fallback' });
      expect(fb.body).toMatchObject({ result: 'code_required', status: 'sent', awaiting_code: true });
      expect((await get(s.request_id)).awaiting_code).toBe(true);
      const code: string = fb.body.code;
      expect(code).toMatch(/^\d{6}$/);

      const accepted = await check(s.request_id, code);
      expect(accepted.status).toBe(200);
      expect(accepted.body).toEqual({
        request_id: s.request_id,
        status: 'sent',
        phone_number: '+79991110042',
      });
      expect((await get(s.request_id)).status).toBe('sent');

      const again = await check(s.request_id, code);
      expect(again.status).toBe(409);
      expect(again.body.error_code).toBe('not_pending');
      expect(sb.getSession(s.request_id)!.attempts_remaining).toBe(3);

      // The operator's result follows 500 ms later on the sandbox clock (frozen: only advance moves it).
      await sb.advance(499);
      expect((await get(s.request_id)).status).toBe('sent');
      await sb.advance(1);
      expect((await get(s.request_id)).status).toBe('verified');
    });

    it('consent timeout expires and a failed push fails', async () => {
      const a = await initiate(sb, '+79991110043', 'operator_id');
      expect(
        (await control(sb, 'POST', `/sessions/${a.request_id}/operator`, { outcome: 'timeout' })).body.status,
      ).toBe('expired');
      const b = await initiate(sb, '+79991110044', 'operator_id');
      expect(
        (await control(sb, 'POST', `/sessions/${b.request_id}/operator`, { outcome: 'fail' })).body.status,
      ).toBe('failed');
      expect((await get(b.request_id)).status).toBe('failed');
    });

    it('wrong codes on the SMS leg spend attempts, then fail', async () => {
      const s = await initiate(sb, '+79991110045', 'operator_id');
      await sb.operator(s.request_id, 'fallback');
      const wrong = sb.getSession(s.request_id)!.code === '000000' ? '111111' : '000000';
      for (const remaining of [2, 1, 0]) {
        const res = await check(s.request_id, wrong);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ error_code: 'invalid_code', attempts_remaining: remaining });
      }
      expect((await get(s.request_id)).status).toBe('failed');
    });

    it('refuses an unknown outcome and a second fallback', async () => {
      const s = await initiate(sb, '+79991110046', 'operator_id');
      const bad = await control(sb, 'POST', `/sessions/${s.request_id}/operator`, { outcome: 'maybe' });
      expect(bad.status).toBe(400);
      await sb.operator(s.request_id, 'fallback');
      const twice = await control(sb, 'POST', `/sessions/${s.request_id}/operator`, { outcome: 'fallback' });
      expect(twice.status).toBe(409);
    });
  });

  describe('voice', () => {
    it('is refused as coming soon, with nothing created or charged', async () => {
      const before = await balanceOf(sb);
      const res = await api(sb, 'POST', '/v1/verify', {
        body: { phone_number: '+79991110051', method: 'voice' },
      });
      expect(res.status).toBe(400);
      expect(res.body.error_code).toBe('method_not_available');
      expect(res.body.detail).toMatch(/coming soon/);
      expect(sb.sessionsFor('+79991110051')).toHaveLength(0);
      expect(await balanceOf(sb)).toBe(before);
    });
  });

  describe('control actions that do not fit the method', () => {
    it('answers 409 not_applicable and changes nothing', async () => {
      const rfc = await initiate(sb, '+79991110061', 'reverse_flash_call');
      const sms = await initiate(sb, '+79991110062', 'sms');
      expect((await control(sb, 'POST', `/sessions/${rfc.request_id}/deliver`)).body.error_code).toBe(
        'not_applicable',
      );
      expect(
        (await control(sb, 'POST', `/sessions/${sms.request_id}/call`, { from: '+79991110062' })).body
          .error_code,
      ).toBe('not_applicable');
      expect(
        (await control(sb, 'POST', `/sessions/${sms.request_id}/share`, { phone_number: '+79991110062' }))
          .body.error_code,
      ).toBe('not_applicable');
      expect(sb.getSession(sms.request_id)!.status).toBe('sent');
      expect(sb.getSession(rfc.request_id)!.status).toBe('sent');
    });
  });
});
