import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationSandbox } from '../../src/testing/index.js';
import { api, initiate, type Creds } from './sandbox-client.js';

const DAY = 86_400_000;
const dateOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * Usage aggregation. The clock starts at real time and only moves forward, so the scenario builds
 * activity on day 0, nothing on day 1, more on day 2, and queries around those days.
 */
describe('sandbox usage', () => {
  let sb: VerificationSandbox;
  let c: Creds;
  let day0: string;
  let day1: string;
  let day2: string;

  const usage = async (query = '', creds: Creds = c) => api(sb, 'GET', `/v1/usage${query}`, { creds });
  const codeOf = (id: string): string => sb.getSession(id)!.code!;
  const check = (id: string, code: string) =>
    api(sb, 'POST', '/v1/verify/check', { creds: c, body: { request_id: id, code } });

  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0 });
    c = await sb.createAccount({ balance: 100 });
    // Move to just after midnight UTC so that the day-0 activity cannot straddle a date change.
    await sb.advance(DAY - (sb.now() % DAY) + 60_000);
    day0 = dateOf(sb.now());
    // Day 0: sms verified (3.00 charged), msgr1 verified (0.90), sms expired undelivered (0), flash failed after delivery (0.80).
    const a = await initiate(sb, '+79996660001', 'sms', c);
    await check(a.request_id, codeOf(a.request_id));
    const b = await initiate(sb, '+79996660002', 'msgr1', c);
    await check(b.request_id, codeOf(b.request_id));
    await initiate(sb, '+79996660003', 'sms', c, { expiry_seconds: 30 });
    const d = await initiate(sb, '+79996660004', 'flash_call', c);
    await sb.deliver(d.request_id);
    for (let i = 0; i < 3; i++) await check(d.request_id, codeOf(d.request_id) === '0000' ? '1111' : '0000');
    await sb.advance(DAY);
    day1 = dateOf(sb.now());
    await sb.advance(DAY);
    day2 = dateOf(sb.now());
    // Day 2: reverse flash call verified (0.25), operator_id pending (2.00 at initiation), msgr2_bot never shared (0).
    const e = await initiate(sb, '+79996660005', 'reverse_flash_call', c);
    await sb.call(e.request_id, '+79996660005');
    await initiate(sb, '+79996660006', 'operator_id', c);
    await initiate(sb, '+79996660007', 'msgr2_bot', c);
    // Another account's activity never shows up.
    await initiate(sb, '+79996660008', 'sms');
  });
  afterAll(async () => {
    await sb.close();
  });

  it('aggregates an inclusive range: totals, success_rate to 4 places, total_cost = charged', async () => {
    const res = await usage(`?from=${day0}&to=${day2}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      from: day0,
      to: day2,
      total_verifications: 7,
      successful: 3,
      success_rate: 0.4286,
      total_cost: { amount: 6.95, currency: 'RUB' },
    });
  });

  it('keys by_method by the schema enumeration (msgr1) and counts every status', async () => {
    const res = await usage(`?from=${day0}&to=${day2}`);
    expect(res.body.by_method).toEqual({
      sms: 2,
      msgr1: 1,
      flash_call: 1,
      reverse_flash_call: 1,
      operator_id: 1,
      msgr2_bot: 1,
    });
    expect(res.body.by_status).toEqual({ sent: 2, delivered: 0, verified: 3, expired: 1, failed: 1 });
  });

  it('lists days in date order and omits days without activity', async () => {
    const res = await usage(`?from=${day0}&to=${day2}`);
    expect(res.body.daily).toEqual([
      { date: day0, total: 4, verified: 2 },
      { date: day2, total: 3, verified: 1 },
    ]);
    expect(res.body.daily.map((d: { date: string }) => d.date)).not.toContain(day1);
  });

  it('includes both ends of the range and nothing outside it', async () => {
    const first = await usage(`?from=${day0}&to=${day0}`);
    expect(first.body).toMatchObject({ total_verifications: 4, successful: 2, success_rate: 0.5 });
    expect(first.body.total_cost.amount).toBe(4.7);
    const last = await usage(`?from=${day2}&to=${day2}`);
    expect(last.body).toMatchObject({ total_verifications: 3, successful: 1, success_rate: 0.3333 });
    const empty = await usage(`?from=${day1}&to=${day1}`);
    expect(empty.body).toMatchObject({ total_verifications: 0, successful: 0, success_rate: 0, daily: [] });
    expect(empty.body.total_cost).toEqual({ amount: 0, currency: 'RUB' });
  });

  it('defaults to the last 30 days through today on the sandbox clock', async () => {
    const res = await usage();
    expect(res.body.to).toBe(day2);
    expect(res.body.from).toBe(dateOf(Date.parse(day2) - 29 * DAY));
    expect(res.body.total_verifications).toBe(7);
    await sb.advance(30 * DAY);
    const later = await usage();
    expect(later.body.from).toBe(dateOf(Date.parse(day2) + DAY));
    expect(later.body.total_verifications).toBe(0);
  });

  it('refuses malformed dates and a reversed range with validation_error', async () => {
    for (const query of [
      '?from=2026-13-01',
      '?to=2026-02-30',
      '?from=yesterday',
      `?from=${day2}&to=${day0}`,
    ]) {
      const res = await usage(query);
      expect(res.status).toBe(400);
      expect(res.body.error_code).toBe('validation_error');
    }
  });
});
