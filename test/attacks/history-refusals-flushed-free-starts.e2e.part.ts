/**
 * Attack (lane attack-p, history shelves b48bf9fd): the sessions of a method charged on proof are
 * now filed with refusals (the `other` shelf) until one verifies. Refusals on that shelf are bounded
 * (each caller's, address's and network's hourly budget of new refusal entries, repeats folded), so
 * that a stranger cannot rotate them out; a free start and its failure are neither budgeted nor
 * folded. An attacker whose takeover attempts were refused (the trail support reads: who tried the
 * number, when, and what stopped them) covers them with other accounts' free reverse-call starts of
 * the number within the default limits (15 an hour, each from its own address), each failed: about
 * 100 entries later (7 hours, nothing paid by anyone) the refusals are gone from the number's
 * history (here the attempt's `start` refused `rate_limit_exceeded`). With history-shelves.ts and the
 * service as before b48bf9fd this test passes: those starts and failures went to the `start` and
 * `outcome` shelves and the refusals stayed.
 *
 * Expected: a number's refusals are not evicted by strangers' free sessions. Low (support's trail of
 * a takeover attempt; no money, no data). Fails on attack-base (e6f8de49).
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp } from '../support/verification-app.js';
import { moduleOptions, reconcilerOf } from '../webhooks/harness.js';

const HOUR = 3_600_000;

describe('history: a number’s refusals under strangers’ free sessions (express)', () => {
  const suite = sandboxSuite();

  it("~100 other owners' failed free sessions of the number leave the refusals of an attempt", async () => {
    const account = await suite.sb.createAccount({ balance: 10_000 });
    suite.host = await createTestApp({
      platform: 'express',
      trustProxy: true,
      module: moduleOptions(suite.sb, { history: {}, limits: {} }, account),
    });
    const history = suite.host.app.get(VerificationHistory);
    const phone = '+79164440301';
    const post = (path: string, body: unknown, user: string, ip: string) =>
      call(suite.host!.url, 'POST', `/verification/${path}`, body, { 'x-user': user, 'x-forwarded-for': ip });

    const freeFailed = async (owner: string, ip: string) => {
      const answer = await post('start', { phone_number: phone, method: 'reverse_flash_call' }, owner, ip);
      if (answer.status !== 201) return false;
      const pending = suite.sb.sessionsFor(phone).find((s) => s.status === 'sent');
      await suite.sb.fail(pending!.request_id);
      await reconcilerOf(suite.host!).runOnce();
      return true;
    };
    // The attempt: the attacker's accounts start the number up to its hourly limit, and the next is refused.
    for (let i = 0; i < 15; i++) expect(await freeFailed(`try-${i}`, `198.51.100.${i + 1}`)).toBe(true);
    const refused = await post('start', { phone_number: phone, method: 'sms' }, 'attacker', '198.51.100.99');
    expect(refused.status).toBeGreaterThanOrEqual(400);
    const refusals = async () =>
      (await history.list({ phoneNumber: phone }))
        .filter((e) => e.kind === 'refusal' && e.owner === 'attacker')
        .map((e) => [e.operation, e.errorCode]);
    const before = await refusals();
    expect(before.length).toBeGreaterThan(0);

    // Covering it: other accounts start the number within the limits, and their sessions fail.
    let admitted = 0;
    for (let hour = 0; hour < 10 && admitted < 120; hour++) {
      await suite.sb.advance(HOUR);
      await reconcilerOf(suite.host).runOnce();
      for (let i = 0; i < 15; i++) {
        const n = hour * 15 + i;
        if (await freeFailed(`sybil-${n}`, `203.0.${113 + (n >> 8)}.${n & 255}`)) admitted += 1;
      }
    }
    for (let i = 0; i < 3; i++) {
      await suite.sb.advance(HOUR);
      await reconcilerOf(suite.host).runOnce();
    }
    expect(admitted).toBeGreaterThanOrEqual(100);
    expect(await refusals()).toEqual(before);
  }, 120_000);
});
