/**
 * A check in flight when its owner is erased: the API's late "wrong code" answer is the erased session's,
 * and the check is answered as its handle now is (404). It spends nothing of the number's wrong-code
 * budget: the number's next verification, by another owner, still has the whole budget (one wrong code
 * answered 400, the next 429 too_many_wrong_codes).
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

const HOUR = 3_600_000;
let serial = 0;
const phone = () =>
  `+7916${String((process.pid + 700) % 1000).padStart(3, '0')}${String(8500 + ++serial).padStart(4, '0')}`;

describe.each(PLATFORMS)('erasure during a wrong code’s check (%s)', (platform: Platform) => {
  const suite = sandboxSuite();

  it("spends nothing of the number's wrong-code budget", async () => {
    const { sb } = suite;
    const host = await suite.boot({
      platform,
      module: moduleOptions(sb, {
        limits: { spendCap: false, wrongCodesPerPhone: { points: 1, windowMs: HOUR } },
      }),
    });
    const n = phone();
    const as = (owner: string) => (path: string, body: unknown) =>
      call(host.url, 'POST', `/verification/${path}`, body, { 'x-user': owner });
    const wrongFor = (requestId: string) => {
      const right = String(sb.getSession(requestId)!.code);
      return right === '0'.repeat(right.length) ? '1'.repeat(right.length) : '0'.repeat(right.length);
    };

    const erased = as('owner-erased');
    const started = await erased('start', { phone_number: n, method: 'sms' });
    expect(started.status).toBe(201);
    const rid = sb.sessionsFor(n).at(-1)!.request_id;
    await sb.deliver(rid);
    // The API answers the wrong code late: its owner is forgotten meanwhile.
    sb.addFault({ route: 'POST /v1/verify/check', kind: 'latency', latency_ms: 600, count: 1 });
    const sent = sb.requestCount('POST /v1/verify/check');
    const checking = erased('check', { verification_id: started.body.verification_id, code: wrongFor(rid) });
    while (sb.requestCount('POST /v1/verify/check') === sent) await new Promise((r) => setTimeout(r, 10));
    await host.app.get(VerificationErasure, { strict: false }).forget({ owner: 'owner-erased' });
    expect((await checking).status).toBe(404);

    // The number's next verification, by another owner: the budget's one wrong code, then the refusal.
    const other = as('owner-next');
    const next = await other('start', { phone_number: n, method: 'sms' });
    expect(next.status).toBe(201);
    expect(sb.sessionsFor(n)).toHaveLength(2);
    const nextRid = sb.sessionsFor(n).find((s) => s.request_id !== rid)!.request_id;
    await sb.deliver(nextRid);
    const check = () =>
      other('check', { verification_id: next.body.verification_id, code: wrongFor(nextRid) });
    const first = await check();
    expect([first.status, first.body.error_code]).toEqual([400, 'invalid_code']);
    const second = await check();
    expect([second.status, second.body.error_code, second.body.reason]).toEqual([
      429,
      'too_many_wrong_codes',
      'wrong_codes_phone',
    ]);
  });
});
