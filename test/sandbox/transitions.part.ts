import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationSandbox } from '../../src/testing/index.js';
import { api, control, initiate, type Creds } from './sandbox-client.js';

/** One test (or more) per row of the spec's state table. */
describe('sandbox state table', () => {
  let sb: VerificationSandbox;

  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0 });
  });
  afterAll(async () => {
    await sb.close();
  });

  const get = async (id: string) => (await api(sb, 'GET', `/v1/verify/${id}`)).body;
  const check = (id: string, code: string) =>
    api(sb, 'POST', '/v1/verify/check', { body: { request_id: id, code } });
  const wrongCode = (id: string): string => (sb.getSession(id)!.code === '000000' ? '111111' : '000000');

  it('(none) → sent on POST /v1/verify: 201, cost fixed, expires_at from the TTL', async () => {
    const s = await initiate(sb, '+79992220001', 'sms', undefined, { expiry_seconds: 120 });
    expect(s.status).toBe('sent');
    const polled = await get(s.request_id);
    expect(polled.cost).toEqual({ amount: 3, currency: 'RUB' });
    expect(Date.parse(polled.expires_at) - Date.parse(polled.created_at)).toBe(120_000);
    expect(polled.expires_at).toBe(s.expires_at);
  });

  it.each(['sms', 'flash_call', 'msgr1_otp'])(
    'sent → delivered when the %s channel delivers',
    async (method) => {
      const s = await initiate(sb, '+79992220002', method);
      await sb.deliver(s.request_id);
      expect((await get(s.request_id)).status).toBe('delivered');
    },
  );

  it('sent → delivered for msgr2_bot after the share, with awaiting_code true', async () => {
    const s = await initiate(sb, '+79992220003', 'msgr2_bot');
    await sb.share(s.request_id, '+79992220003');
    expect(await get(s.request_id)).toMatchObject({ status: 'delivered', awaiting_code: true });
  });

  it('sent → verified by a matching caller ID (reverse_flash_call)', async () => {
    const s = await initiate(sb, '+79992220004', 'reverse_flash_call');
    await sb.call(s.request_id, '+79992220004');
    const polled = await get(s.request_id);
    expect(polled.status).toBe('verified');
    expect(polled.verified_at).not.toBeNull();
  });

  it('sent → verified by a correct code (no delivery report needed)', async () => {
    const s = await initiate(sb, '+79992220005', 'sms');
    const res = await check(s.request_id, sb.getSession(s.request_id)!.code!);
    expect(res.body.status).toBe('verified');
  });

  it('delivered → verified by a correct code, verified_at set', async () => {
    const s = await initiate(sb, '+79992220006', 'flash_call');
    await sb.deliver(s.request_id);
    const res = await check(s.request_id, sb.getSession(s.request_id)!.code!);
    expect(res.status).toBe(200);
    const polled = await get(s.request_id);
    expect(polled.status).toBe('verified');
    expect(Date.parse(polled.verified_at)).toBeGreaterThanOrEqual(Date.parse(polled.created_at));
  });

  it('sent → expired and delivered → expired when the TTL elapses', async () => {
    const a = await initiate(sb, '+79992220007', 'sms', undefined, { expiry_seconds: 30 });
    const b = await initiate(sb, '+79992220008', 'sms', undefined, { expiry_seconds: 30 });
    await sb.deliver(b.request_id);
    await sb.advance(30_000);
    expect((await get(a.request_id)).status).toBe('expired');
    expect((await get(b.request_id)).status).toBe('expired');
  });

  it('an operator-consent timeout arrives as expired', async () => {
    const s = await initiate(sb, '+79992220009', 'operator_id');
    await sb.operator(s.request_id, 'timeout');
    expect((await get(s.request_id)).status).toBe('expired');
  });

  it('sent → failed when wrong codes exhaust the attempts', async () => {
    const s = await initiate(sb, '+79992220010', 'sms');
    for (const remaining of [2, 1, 0]) {
      const res = await check(s.request_id, wrongCode(s.request_id));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error_code: 'invalid_code', attempts_remaining: remaining });
    }
    expect((await get(s.request_id)).status).toBe('failed');
    const late = await check(s.request_id, sb.getSession(s.request_id)!.code!);
    expect(late.status).toBe(409);
  });

  it('delivered → failed when wrong codes exhaust the attempts', async () => {
    const s = await initiate(sb, '+79992220011', 'msgr1');
    await sb.deliver(s.request_id);
    for (let i = 0; i < 3; i++) await check(s.request_id, wrongCode(s.request_id));
    expect((await get(s.request_id)).status).toBe('failed');
  });

  it('sent or delivered → failed on a terminal error (control /fail)', async () => {
    const a = await initiate(sb, '+79992220012', 'sms');
    const b = await initiate(sb, '+79992220013', 'sms');
    await sb.deliver(b.request_id);
    expect((await control(sb, 'POST', `/sessions/${a.request_id}/fail`)).body.status).toBe('failed');
    expect((await control(sb, 'POST', `/sessions/${b.request_id}/fail`)).body.status).toBe('failed');
    expect((await get(a.request_id)).status).toBe('failed');
    expect((await get(b.request_id)).status).toBe('failed');
  });

  it('operator_id sent → sent on an accepted SMS-leg code; the outcome follows', async () => {
    const s = await initiate(sb, '+79992220014', 'operator_id');
    await sb.operator(s.request_id, 'fallback');
    const res = await check(s.request_id, sb.getSession(s.request_id)!.code!);
    expect(res.body.status).toBe('sent');
    await sb.advance(500);
    expect((await get(s.request_id)).status).toBe('verified');
  });

  it('operator_id sent → sent with awaiting_code true when the push cannot complete', async () => {
    const s = await initiate(sb, '+79992220015', 'operator_id');
    expect((await get(s.request_id)).awaiting_code).toBe(false);
    await sb.operator(s.request_id, 'fallback');
    expect(await get(s.request_id)).toMatchObject({ status: 'sent', awaiting_code: true });
  });

  it('terminal statuses stay terminal: no expiry after verified, no action after expired', async () => {
    const s = await initiate(sb, '+79992220016', 'reverse_flash_call', undefined, { expiry_seconds: 30 });
    await sb.call(s.request_id, '+79992220016');
    await sb.advance(31_000);
    expect((await get(s.request_id)).status).toBe('verified');

    const e = await initiate(sb, '+79992220017', 'reverse_flash_call', undefined, { expiry_seconds: 30 });
    await sb.advance(30_000);
    const call = await control(sb, 'POST', `/sessions/${e.request_id}/call`, { from: '+79992220017' });
    expect(call.status).toBe(409);
    expect(call.body.error_code).toBe('not_pending');
    expect((await get(e.request_id)).status).toBe('expired');
  });

  describe('auto-delivery', () => {
    let auto: Creds;
    beforeAll(async () => {
      auto = await sb.createAccount({ autoDeliver: true });
    });
    const statusOf = async (id: string) =>
      (await api(sb, 'GET', `/v1/verify/${id}`, { creds: auto })).body.status;

    it.each(['sms', 'flash_call', 'msgr1_otp'])(
      'delivers %s by itself about a second after initiation',
      async (method) => {
        const s = await initiate(sb, '+79992220020', method, auto);
        expect(sb.getSession(s.request_id)!.status).toBe('sent');
        await sb.advance(1_000);
        expect(await statusOf(s.request_id)).toBe('delivered');
      },
    );

    it.each(['msgr2_bot', 'operator_id', 'reverse_flash_call'])(
      'leaves %s waiting for the user',
      async (method) => {
        const s = await initiate(sb, '+79992220021', method, auto);
        await sb.advance(5_000);
        expect(await statusOf(s.request_id)).toBe('sent');
      },
    );

    it('does not deliver for an account without auto-delivery', async () => {
      const s = await initiate(sb, '+79992220022', 'sms');
      await sb.advance(5_000);
      expect((await get(s.request_id)).status).toBe('sent');
    });
  });
});
