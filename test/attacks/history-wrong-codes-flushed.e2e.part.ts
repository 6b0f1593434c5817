/**
 * Attack (lane attack-44): history's shelves keep outcomes and right codes from strangers' refusals,
 * but a wrong code shares the `other` shelf with every refusal, and a refusal is folded only with the
 * same one of the same owner. 120 accounts of one attacker (from one address: the host's client IP is the same here), each asking a start of the
 * victim's number once, are refused for free (409 `method_held`) and each write an entry of their own:
 * the number's `other` shelf (100 slots) turns over and the wrong codes entered for the number (the
 * trail of a guessing attack, the one support reads after a takeover) are gone from its history.
 *
 * Expected: free refusals from strangers do not evict a number's check entries (wrong codes kept on
 * a shelf of their own, or refusals of many owners folded per number and hour).
 *
 * Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { startAccountHost } from '../webhooks/harness.js';

describe.each(PLATFORMS)(
  'history: a number’s wrong codes under strangers’ free refusals (%s)',
  (platform: Platform) => {
    const suite = sandboxSuite();

    it("120 strangers' refused starts leave the number's wrong-code entry in its history", async () => {
      suite.host = await startAccountHost(platform, suite.sb, {
        module: { history: {}, limits: {} },
        trustProxy: true,
      } as never);
      const history = suite.host.app.get(VerificationHistory);
      const phone = platform === 'express' ? '+79164440101' : '+79164440102';
      const post = (path: string, body: unknown, user: string, ip: string) =>
        call(suite.host!.url, 'POST', `/verification/${path}`, body, {
          'x-user': user,
          'x-forwarded-for': ip,
        });

      const started = await post('start', { phone_number: phone, method: 'sms' }, 'alice', '198.51.100.1');
      expect(started.status).toBe(201);
      const [session] = suite.sb.sessionsFor(phone);
      await suite.sb.deliver(session!.request_id);
      const code = String(suite.sb.getSession(session!.request_id)!.code);
      const wrong = code === '0000' ? '1111' : '0000';
      const check = { verification_id: started.body.verification_id, code: wrong };
      expect((await post('check', check, 'alice', '198.51.100.1')).status).toBe(400);
      expect((await history.list({ phoneNumber: phone })).some((e) => e.check === 'wrong')).toBe(true);

      const statuses: number[] = [];
      for (let i = 0; i < 120; i++) {
        const method = ['sms', 'flash_call', 'msgr1_otp'][i % 3]!;
        const answer = await post(
          'start',
          { phone_number: phone, method },
          `stranger-${i}`,
          `203.0.113.${i % 250}`,
        );
        statuses.push(answer.status);
      }
      // Nearly all of them free: refused before any upstream call.
      expect(statuses.filter((s) => s >= 400).length).toBeGreaterThan(100);

      const entries = await history.list({ phoneNumber: phone });
      expect(entries.filter((e) => e.owner === 'alice').map((e) => [e.kind, e.check ?? e.status])).toEqual([
        ['start', 'sent'],
        ['check', 'wrong'],
      ]);
    });
  },
);
