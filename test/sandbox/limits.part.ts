import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationSandbox } from '../../src/testing/index.js';
import { api, initiate } from './sandbox-client.js';

/** The spec's limits table (the usage success-rate row is in usage.part.ts). */
describe('sandbox limits', () => {
  let sb: VerificationSandbox;

  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0, codeLengths: { sms: 8 } });
  });
  afterAll(async () => {
    await sb.close();
  });

  const ttlOf = (s: { expires_at: string; request_id: string }): number =>
    Date.parse(s.expires_at) - Date.parse(sb.getSession(s.request_id)!.created_at);

  it('TTL defaults to 300 seconds when expiry_seconds is omitted or null', async () => {
    expect(ttlOf(await initiate(sb, '+79995550001', 'msgr1'))).toBe(300_000);
    expect(ttlOf(await initiate(sb, '+79995550001', 'msgr1', undefined, { expiry_seconds: null }))).toBe(
      300_000,
    );
  });

  it('TTL accepts the maximum 600 and the default lower bound 30, and refuses 601 and 29', async () => {
    expect(ttlOf(await initiate(sb, '+79995550002', 'msgr1', undefined, { expiry_seconds: 600 }))).toBe(
      600_000,
    );
    expect(ttlOf(await initiate(sb, '+79995550002', 'msgr1', undefined, { expiry_seconds: 30 }))).toBe(
      30_000,
    );
    for (const expiry_seconds of [601, 29, 0, -5]) {
      const res = await api(sb, 'POST', '/v1/verify', {
        body: { phone_number: '+79995550002', method: 'msgr1', expiry_seconds },
      });
      expect(res.status).toBe(400);
    }
    expect(sb.sessionsFor('+79995550002')).toHaveLength(2);
  });

  it('a 600-second session is still pending at 599 s and expired at 600 s', async () => {
    const s = await initiate(sb, '+79995550003', 'msgr1', undefined, { expiry_seconds: 600 });
    await sb.advance(599_000);
    expect(sb.getSession(s.request_id)!.status).toBe('sent');
    await sb.advance(1_000);
    expect(sb.getSession(s.request_id)!.status).toBe('expired');
  });

  it('a check takes codes of 4 to 8 digits: both ends are checked as codes, not refused as format', async () => {
    const s = await initiate(sb, '+79995550004', 'msgr1');
    for (const [code, remaining] of [
      ['0000', 2],
      ['00000000', 1],
    ] as const) {
      const res = await api(sb, 'POST', '/v1/verify/check', { body: { request_id: s.request_id, code } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error_code: 'invalid_code', attempts_remaining: remaining });
    }
  });

  it('the issued code length is given per session in code_length and matches the code', async () => {
    const sms = await initiate(sb, '+79995550005', 'sms');
    expect(sms.code_length).toBe(8);
    expect(sb.getSession(sms.request_id)!.code).toMatch(/^\d{8}$/);
    const flash = await initiate(sb, '+79995550005', 'flash_call');
    expect(flash.code_length).toBe(4);
    expect(sb.getSession(flash.request_id)!.code).toMatch(/^\d{4}$/);
  });

  it('code attempts default to 3 and follow the account setting', async () => {
    const s = await initiate(sb, '+79995550006', 'msgr1');
    expect(sb.getSession(s.request_id)!.attempts_remaining).toBe(3);
    const c = await sb.createAccount({ codeAttempts: 5 });
    const t = await initiate(sb, '+79995550006', 'msgr1', c);
    expect(sb.getSession(t.request_id)!.attempts_remaining).toBe(5);
    for (let i = 0; i < 4; i++) {
      await api(sb, 'POST', '/v1/verify/check', {
        creds: c,
        body: { request_id: t.request_id, code: '0000' },
      });
    }
    expect(sb.getSession(t.request_id)).toMatchObject({ status: 'sent', attempts_remaining: 1 });
  });

  it('refuses start options outside their ranges', async () => {
    await expect(VerificationSandbox.start({ port: 0, codeLengths: { sms: 3 } })).rejects.toThrow(
      /codeLengths/,
    );
    await expect(VerificationSandbox.start({ port: 0, minExpirySeconds: 601 })).rejects.toThrow(
      /minExpirySeconds/,
    );
  });
});
